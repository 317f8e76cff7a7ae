// Request framing (RFC 9112 §6): where a request's body ends. Checked once a request's header is
// read and before any body byte, so that a request whose length two parsers could read in two
// ways (request smuggling through a proxy in front of cairn) is refused instead of guessed at.
// The session answers a refusal with 400 and closes the connection: the bytes after such a
// header cannot be trusted to start the next request.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"

namespace cairn::server {

// The framing-relevant parts of a request header, as the parser gave them (obs-fold already
// replaced by a space, RFC 9112 §5.2).
struct RequestFraming {
  unsigned version = 11;                            // 10: HTTP/1.0, 11: HTTP/1.1
  std::vector<std::string_view> transfer_encoding;  // the value of each Transfer-Encoding field
  std::vector<std::string_view> content_length;     // the value of each Content-Length field
};

// Ok when the body is delimited in exactly one unambiguous way:
// - Transfer-Encoding, when present, is one field whose value is `chunked` (any case, optional
//   surrounding whitespace), in HTTP/1.1. Any other coding ("gzip", "identity", "gzip, chunked",
//   "chunked, chunked", or a second field) is refused: cairn decodes no coding but chunked, and a
//   parser that ignores an unknown coding would read the body as the next request.
// - Transfer-Encoding and Content-Length are never both present.
// - Every Content-Length (several fields, or a comma list in one) is a decimal number (digits
//   only) and they are all equal: identical duplicates are one length (RFC 9110 §8.6), different
//   ones are refused.
// Otherwise kInvalidArgument, with the offending header's name in `field`.
Status CheckRequestFraming(const RequestFraming& framing);

}  // namespace cairn::server
