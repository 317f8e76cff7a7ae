// SseParser: an incremental parser of a Server-Sent Events body (the WHATWG "event stream"
// format), fed with whatever chunks the network delivers.
//
//   SseParser parser;
//   CAIRN_RETURN_IF_ERROR(parser.Feed(chunk));   // any split: mid-line, mid-CRLF, mid-frame
//   while (auto event = parser.Next()) Use(*event);
//
// Lines end with LF, CRLF or CR (a CR at the end of one chunk and an LF at the start of the next
// are one line end). A line starting with ':' is a comment. "field: value" and "field:value" set a
// field (one leading space of the value is dropped); a line without ':' is a field with an empty
// value. Fields: `data` (several lines are joined with '\n'), `id` (ignored if it contains NUL),
// `event` and `retry`; others are ignored. A blank line ends a frame: it is dispatched if it had
// at least one `data` line; an `id` without data only moves last_event_id(), as in EventSource.
// A UTF-8 byte order mark at the very start of the stream is skipped.
//
// The one SSE parser of cairn: the CLI reads the server's event streams with it, and the LLM
// provider (exec/llm/stream_assembler.h) the streamed chat completions of an endpoint.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn::net {

struct SseEvent {
  std::string data;               // the data lines joined with '\n' (no trailing '\n')
  std::string event;              // the `event` field; empty if the frame had none ("message")
  std::optional<std::string> id;  // the `id` field of this very frame, if it had one
  std::string last_event_id;      // the stream's last event id when this frame was dispatched
};

class SseParser {
 public:
  // Frames (and lines) larger than this are refused: Feed returns kResourceExhausted.
  static constexpr size_t kDefaultMaxFrameBytes = 64 * 1024 * 1024;

  explicit SseParser(size_t max_frame_bytes = kDefaultMaxFrameBytes) : max_frame_bytes_(max_frame_bytes) {}

  // Consumes `chunk`; completed frames become available from Next(). After an error the parser
  // stays failed (every later Feed returns the same error) until Reset().
  Status Feed(std::string_view chunk);

  // Ends the body, for streams whose last frame may lack its line end or blank line (streamed chat
  // completions): a last unfinished line is processed and a frame in progress is dispatched as if
  // a blank line followed. An event stream reader that must drop a frame cut off by a lost
  // connection does not call it. Returns the error of a failed parser; later Feed calls go on
  // from a fresh line.
  Status End();

  // The oldest dispatched frame not yet taken, or nullopt.
  std::optional<SseEvent> Next();

  // The last `id` of a completed frame (it persists across frames, as EventSource's lastEventId
  // does; an `id` of a frame cut off by the end of a connection does not count).
  const std::string& last_event_id() const { return last_event_id_; }
  // The latest valid `retry` field (milliseconds), if any.
  std::optional<int64_t> retry_ms() const { return retry_ms_; }
  // How many comment lines were seen (':' lines: the server's "stream open" and keep-alives).
  size_t comment_count() const { return comment_count_; }

  // Forgets a partial frame and the pending frames, for a new connection. last_event_id() is kept
  // (a reconnecting client resumes from it).
  void Reset();

 private:
  void ProcessLine(std::string_view line);
  void Dispatch();

  size_t max_frame_bytes_;
  std::string line_;             // the current, incomplete line
  bool after_cr_ = false;        // the previous byte was a CR ending a line (an LF now is its pair)
  bool at_stream_start_ = true;  // the BOM check is still to be done
  std::string bom_prefix_;       // the first bytes, while they could still be a BOM
  std::string data_;
  bool has_data_ = false;
  std::string event_;
  std::optional<std::string> id_;
  std::string id_buffer_;      // the latest `id` field, committed to last_event_id_ at a blank line
  std::string last_event_id_;
  std::optional<int64_t> retry_ms_;
  size_t comment_count_ = 0;
  std::deque<SseEvent> ready_;
  Status error_;
};

}  // namespace cairn::net
