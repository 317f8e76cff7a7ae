// Server-Sent Events clients for end-to-end tests of `GET /events/stream`.
//
//   SseClient stream(server.url() + "/events/stream?tag=a", {{"Last-Event-ID", "12"}});
//   stream.Start();
//   ASSERT_TRUE(stream.WaitForOpen(10s)) << stream.Describe();   // 200 and ": stream open" seen
//   ... write ...
//   ASSERT_TRUE(stream.WaitForEvents(3, 10s)) << stream.Describe();
//   for (const SseFrame& f : stream.Events()) f.Json() ...
//   stream.Stop();                                                // disconnect at will
//
// SseClient runs libcurl (a multi handle, so Stop() wakes it at once with curl_multi_wakeup) on its
// own thread, parses the body into frames as it streams in and keeps them under a mutex. Every
// WaitFor* blocks on a condition variable that is notified on each new frame and when the transfer
// ends, up to a timeout: nothing sleeps for a fixed time.
//
// RawSseStream is a plain blocking-free socket: it sends the GET by hand and reads only when told
// (ReadUntil / ReadToEnd with poll and a deadline), so a test can stop reading and let the kernel
// buffers fill (slow consumer), or hold a thousand of them in one thread (PollAll).
#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http_client.h"

namespace cairn::e2e {

// One SSE frame: the fields of one block ended by a blank line.
struct SseFrame {
  std::optional<std::string> id;      // the `id:` field, if the frame had one
  std::optional<std::string> data;    // `data:` lines joined with '\n', if any
  std::vector<std::string> comments;  // `: comment` lines, without the colon and one leading space

  // The data parsed as JSON (null if absent or not JSON).
  boost::json::value Json() const;
  // The "type" of the data JSON ("" if none).
  std::string Type() const;
  // The id as a number (-1 if none or not a number).
  int64_t Seq() const;
  bool IsEvent() const { return id.has_value(); }
  bool IsPing() const { return Type() == "ping"; }
  // A one-line form for assertion messages.
  std::string Describe() const;
};

// Incremental parser of an event-stream body (text/event-stream, lines ended by \n, \r\n or \r).
class SseParser {
 public:
  // Feeds bytes; returns the frames completed by them.
  std::vector<SseFrame> Feed(std::string_view bytes);
  // Bytes received that do not (yet) form a complete frame.
  const std::string& pending() const { return line_; }

 private:
  void Line(std::string_view line, std::vector<SseFrame>& out);
  std::string line_;
  bool last_was_cr_ = false;
  SseFrame current_;
  bool has_field_ = false;
};

// Frames with an id (events), in arrival order.
std::vector<SseFrame> EventsOf(const std::vector<SseFrame>& frames);
// The seqs of the frames with an id.
std::vector<int64_t> SeqsOf(const std::vector<SseFrame>& frames);

class SseClient {
 public:
  using Predicate = std::function<bool(const std::vector<SseFrame>&)>;

  explicit SseClient(std::string url, Headers headers = {});
  ~SseClient();  // Stop()
  SseClient(const SseClient&) = delete;
  SseClient& operator=(const SseClient&) = delete;

  void Start();
  // Disconnects (if still connected) and joins the thread. Idempotent.
  void Stop();

  // Waits until `predicate(frames)` holds (checked on every new frame), the transfer ends, or the
  // timeout passes. Returns whether the predicate held.
  bool WaitFor(const Predicate& predicate, std::chrono::milliseconds timeout);
  // Waits for at least `n` frames with an id.
  bool WaitForEvents(size_t n, std::chrono::milliseconds timeout);
  // Waits for the response status and the first ": stream open" comment.
  bool WaitForOpen(std::chrono::milliseconds timeout);
  // Waits for the transfer to end (server closed, error, or Stop()).
  bool WaitForEnd(std::chrono::milliseconds timeout);

  std::vector<SseFrame> Frames() const;
  std::vector<SseFrame> Events() const { return EventsOf(Frames()); }
  long status() const;                 // 0 until the response header arrived
  std::optional<std::string> Header(std::string_view name) const;  // a response header
  std::string body() const;            // every body byte received (for error responses)
  bool finished() const;
  std::string error() const;           // the transport error once finished ("" if none)
  std::string Describe() const;        // status, error, frame count, last frames

 private:
  static size_t OnData(char* ptr, size_t size, size_t nmemb, void* self);
  static size_t OnHeader(char* ptr, size_t size, size_t nmemb, void* self);
  void Run();

  std::string url_;
  Headers headers_;
  std::thread thread_;
  void* multi_ = nullptr;  // CURLM*
  void* easy_ = nullptr;   // CURL*

  mutable std::mutex mu_;
  std::condition_variable cv_;
  SseParser parser_;             // on the client thread only
  std::vector<SseFrame> frames_;
  Headers response_headers_;
  std::string body_;
  long status_ = 0;
  bool finished_ = false;
  bool stop_ = false;
  std::string error_;
};

class RawSseStream {
 public:
  RawSseStream() = default;
  ~RawSseStream();
  RawSseStream(RawSseStream&& other) noexcept;
  RawSseStream& operator=(RawSseStream&&) = delete;
  RawSseStream(const RawSseStream&) = delete;

  // Connects to 127.0.0.1:port (with SO_RCVBUF = `receive_buffer` if > 0, set before connecting so
  // the window stays small) and sends `GET target` with `headers`. False (with error()) on failure.
  bool Open(int port, const std::string& target, const Headers& headers = {}, int receive_buffer = 0);

  // Reads what is available without blocking; returns false on EOF or error (closed() then true).
  bool ReadAvailable();
  // Reads (poll with a deadline) until `done(*this)` holds, EOF, or the timeout. Returns done().
  bool ReadUntil(const std::function<bool(const RawSseStream&)>& done, std::chrono::milliseconds timeout);
  // Reads until the response header and the ": stream open" comment (or a complete non-200 response).
  bool ReadOpen(std::chrono::milliseconds timeout);
  // Reads until the server closes the connection.
  bool ReadToEnd(std::chrono::milliseconds timeout);
  void Close();

  int fd() const { return fd_; }
  bool closed() const { return eof_; }
  const std::string& error() const { return error_; }
  long status() const { return status_; }        // 0 until the status line arrived
  bool header_done() const { return header_done_; }
  const std::string& head() const { return head_; }  // status line and headers
  const std::string& body() const { return body_; }  // raw body bytes so far
  const std::vector<SseFrame>& frames() const { return frames_; }
  bool opened() const;                            // the ": stream open" comment was seen
  bool pending_empty() const { return parser_.pending().empty(); }  // no partial line left over
  std::string Describe() const;

  // Reads from every stream that is readable until `done(stream)` holds for all of them (or EOF),
  // with one poll() over all their sockets. Returns how many satisfy `done`.
  static size_t PollAll(std::vector<RawSseStream>& streams, const std::function<bool(const RawSseStream&)>& done,
                        std::chrono::milliseconds timeout);

 private:
  void Consume(std::string_view bytes);

  int fd_ = -1;
  bool eof_ = false;
  std::string error_;
  std::string head_;
  bool header_done_ = false;
  long status_ = 0;
  std::string body_;
  SseParser parser_;
  std::vector<SseFrame> frames_;
};

// Raises RLIMIT_NOFILE to its hard limit; returns the new soft limit.
long RaiseFileLimit();

}  // namespace cairn::e2e
