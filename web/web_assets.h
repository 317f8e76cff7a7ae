// The dashboard's files (web/), embedded in the binary at build time by web/embed.cmake: each with
// its bytes, its gzip-compressed bytes, its content type and its ETag (a quoted hash of the bytes).
// The table is constant for the life of the process. Served under /ui by src/server/ui_handlers.
#pragma once

#include <span>
#include <string_view>

namespace cairn::web {

struct WebAsset {
  std::string_view name;          // "app.js": the file's name in web/ (served as /ui/<name>)
  std::string_view content_type;  // "text/javascript; charset=utf-8"
  std::string_view body;
  std::string_view gzip_body;  // the same bytes, gzip-compressed
  std::string_view etag;       // "\"<20 hex digits>\"", changes whenever the bytes do
};

// Every embedded file; index.html among them.
std::span<const WebAsset> WebAssets();

}  // namespace cairn::web
