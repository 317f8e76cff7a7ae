#include "net/sse_parser.h"

namespace cairn::net {

namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

bool AllDigits(std::string_view text) {
  return !text.empty() && text.size() <= 18 && text.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

Status SseParser::Feed(std::string_view chunk) {
  if (!error_.ok()) return error_;
  if (at_stream_start_) {
    // The BOM may itself be split across chunks: hold the first bytes until they decide.
    while (!chunk.empty() && bom_prefix_.size() < kBom.size() && kBom.starts_with(bom_prefix_)) {
      bom_prefix_ += chunk.front();
      chunk.remove_prefix(1);
    }
    if (bom_prefix_ == kBom) {
      at_stream_start_ = false;
      bom_prefix_.clear();
    } else if (!kBom.starts_with(bom_prefix_)) {
      at_stream_start_ = false;
      const std::string held = std::move(bom_prefix_);
      bom_prefix_.clear();
      if (Status s = Feed(held); !s.ok()) return s;
    } else {
      return Status::Ok();  // still a prefix of the BOM; the chunk is used up
    }
  }

  size_t i = 0;
  while (i < chunk.size()) {
    if (after_cr_) {
      after_cr_ = false;
      if (chunk[i] == '\n') {  // the LF of a CRLF whose CR ended the previous line
        ++i;
        continue;
      }
    }
    const size_t end = chunk.find_first_of("\r\n", i);
    const size_t stop = end == std::string_view::npos ? chunk.size() : end;
    line_.append(chunk.substr(i, stop - i));
    if (line_.size() + data_.size() > max_frame_bytes_) {
      error_ = Status::ResourceExhausted("an event stream frame is larger than " + std::to_string(max_frame_bytes_) +
                                         " bytes");
      return error_;
    }
    if (end == std::string_view::npos) break;
    after_cr_ = chunk[end] == '\r';
    ProcessLine(line_);
    line_.clear();
    i = end + 1;
  }
  return Status::Ok();
}

void SseParser::ProcessLine(std::string_view line) {
  if (line.empty()) return Dispatch();
  if (line.front() == ':') {
    ++comment_count_;
    return;
  }
  const size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
    if (value.starts_with(' ')) value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) data_ += '\n';
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_ = std::string(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) {
      id_ = std::string(value);
      id_buffer_ = std::string(value);
    }
  } else if (field == "retry") {
    if (AllDigits(value)) retry_ms_ = std::stoll(std::string(value));
  }
  // Any other field is ignored, as the format requires.
}

void SseParser::Dispatch() {
  last_event_id_ = id_buffer_;
  if (has_data_) ready_.push_back(SseEvent{std::move(data_), std::move(event_), std::move(id_), last_event_id_});
  data_.clear();
  has_data_ = false;
  event_.clear();
  id_.reset();
}

Status SseParser::End() {
  if (!error_.ok()) return error_;
  if (at_stream_start_ && !bom_prefix_.empty()) {  // a body shorter than a BOM: its bytes are a line
    at_stream_start_ = false;
    line_ = std::move(bom_prefix_);
    bom_prefix_.clear();
  }
  if (!line_.empty()) ProcessLine(line_);
  line_.clear();
  after_cr_ = false;
  Dispatch();
  return Status::Ok();
}

std::optional<SseEvent> SseParser::Next() {
  if (ready_.empty()) return std::nullopt;
  SseEvent event = std::move(ready_.front());
  ready_.pop_front();
  return event;
}

void SseParser::Reset() {
  line_.clear();
  after_cr_ = false;
  at_stream_start_ = true;
  bom_prefix_.clear();
  data_.clear();
  has_data_ = false;
  event_.clear();
  id_.reset();
  id_buffer_ = last_event_id_;
  ready_.clear();
  error_ = Status::Ok();
}

}  // namespace cairn::net
