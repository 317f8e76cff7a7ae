// GET /ui and GET /ui/{asset}: the dashboard (web/), served from the files embedded in the binary
// (web/web_assets.h). /ui is index.html; every other file is /ui/<name>. Each answer carries its
// ETag and `Cache-Control: no-cache` (the browser revalidates; an unchanged file is a 304 with no
// body), the gzip-compressed bytes when the request accepts gzip, and a Content-Security-Policy
// that lets the page load only its own files and talk only to this server. Unknown names are 404.
// The page uses only the public API and its event streams.
#pragma once

#include "server/router.h"

namespace cairn::server {

void AddUiRoutes(Router& router);

}  // namespace cairn::server
