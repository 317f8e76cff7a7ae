// GET /breadcrumbs/search (docs/search.md): text, vector and hybrid search over the tenant's
// breadcrumbs; GET /search/status: the embedding backlog. Register it before the /breadcrumbs/{id} routes, which would take "search" as an id.
#pragma once

#include "model/limits.h"
#include "search/embedding_models.h"
#include "search/searcher.h"
#include "server/http_types.h"
#include "server/router.h"

namespace cairn::server {

// Most numbers a `qvec` may hold.
inline constexpr size_t kMaxQueryVectorDimension = 4096;

// The request's parameters (q, mode, schema_name, tag (repeatable), path, limit, include_context,
// qvec) as a search, `default_mode` when it names none. Any mistake is a 400 naming the parameter.
Result<search::SearchRequest> ParseSearchRequest(const HttpRequest& request, const model::Limits& limits,
                                                 search::Mode default_mode, bool* include_context);

// Registers GET /breadcrumbs/search and GET /search/status on `router`. `searcher` and `models`
// (null: vector search is off) must outlive it.
void AddSearchRoutes(Router& router, const search::Searcher& searcher, const search::EmbeddingModels* models,
                     const model::Limits& limits);

}  // namespace cairn::server
