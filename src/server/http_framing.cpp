#include "server/http_framing.h"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

namespace cairn::server {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool IsChunked(std::string_view coding) {
  constexpr std::string_view kChunked = "chunked";
  if (coding.size() != kChunked.size()) return false;
  for (size_t i = 0; i < coding.size(); ++i) {
    char c = coding[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kChunked[i]) return false;
  }
  return true;
}

Status Refuse(const char* header, const std::string& problem) {
  return Status(StatusCode::kInvalidArgument, std::string(header) + ": " + problem, header);
}

}  // namespace

Status CheckRequestFraming(const RequestFraming& framing) {
  if (!framing.transfer_encoding.empty()) {
    if (framing.version < 11) return Refuse("Transfer-Encoding", "is not allowed in HTTP/1.0");
    if (framing.transfer_encoding.size() > 1) return Refuse("Transfer-Encoding", "given more than once");
    if (!IsChunked(Trim(framing.transfer_encoding.front()))) {
      return Refuse("Transfer-Encoding", "only chunked is supported, got '" +
                                             std::string(framing.transfer_encoding.front()) + "'");
    }
    if (!framing.content_length.empty()) return Refuse("Content-Length", "must not be sent with Transfer-Encoding");
    return Status::Ok();
  }
  std::optional<uint64_t> length;
  for (std::string_view field : framing.content_length) {
    while (true) {
      size_t comma = field.find(',');
      std::string_view item = Trim(field.substr(0, comma));
      uint64_t value = 0;
      auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
      // from_chars takes no '+' or space, but a '-': digits only is checked by the first character.
      if (item.empty() || item.front() < '0' || item.front() > '9' || ec != std::errc() ||
          ptr != item.data() + item.size()) {
        return Refuse("Content-Length", "must be a decimal number of bytes, got '" + std::string(field) + "'");
      }
      if (length && *length != value) return Refuse("Content-Length", "given twice with different values");
      length = value;
      if (comma == std::string_view::npos) break;
      field.remove_prefix(comma + 1);
    }
  }
  return Status::Ok();
}

}  // namespace cairn::server
