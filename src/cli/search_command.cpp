// search: GET /breadcrumbs/search (docs/search.md) as a table, or the API's JSON with --json.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <ostream>

#include "cli/breadcrumb_table.h"
#include "cli/commands.h"
#include "cli/url_util.h"

namespace cairn::cli {

namespace json = boost::json;

CommandSpec SearchSpec() {
  return {"search",
          "search breadcrumbs by text (and by vector, where the server embeds), best first",
          "TEXT... [--mode text|vector|hybrid] [filters] [--json]",
          {
              {"mode", "MODE", "text (full-text, BM25), vector or hybrid (the server's default)"},
              {"schema", "NAME", "only this schema name"},
              {"tag", "TAG", "must carry TAG (all of the given tags)", true},
              {"path", "PREFIX", "path under PREFIX (whole segments)"},
              {"limit", "N", "at most N results (server default 20, at most 200)"},
              {"include-context", "", "include each item's context (JSON output)"},
              {"json", "", "print the API's JSON instead of a table"},
          },
          "TEXT",
          1,
          32};
}

int RunSearch(CommandRun& run) {
  const ParsedArgs& args = run.args();
  std::string text;
  for (const std::string& word : args.positionals()) text += (text.empty() ? "" : " ") + word;
  QueryString query;
  query.Add("q", text);
  if (auto v = args.Get("mode")) {
    if (*v != "text" && *v != "vector" && *v != "hybrid") {
      return run.UsageError("--mode must be text, vector or hybrid, got '" + *v + "'");
    }
    query.Add("mode", *v);
  }
  if (auto v = args.Get("schema")) query.Add("schema_name", *v);
  for (const auto& tag : args.GetAll("tag")) query.Add("tag", tag);
  if (auto v = args.Get("path")) query.Add("path", *v);
  if (auto v = args.Get("limit")) query.Add("limit", *v);  // the server checks the range and says why
  if (args.Has("include-context")) query.Add("include_context", "true");

  auto reply = run.api().Call("GET", "/breadcrumbs/search" + query.Build());
  if (!reply.ok()) return run.Failure(reply.status());
  if (args.Has("json")) return run.PrintJson(reply->body);
  const json::object* body = reply->body.if_object();
  const json::value* items = body ? body->if_contains("items") : nullptr;
  if (items == nullptr || !items->is_array()) {
    return run.Failure(Status::Internal("the server's search reply has no \"items\" array"));
  }
  if (items->get_array().empty()) {
    run.context().err << "nothing found\n";  // stdout stays empty for scripts
    return kExitOk;
  }
  run.context().out << RenderBreadcrumbTable(items->get_array());
  return kExitOk;
}

}  // namespace cairn::cli
