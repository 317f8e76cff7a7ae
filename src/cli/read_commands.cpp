// get, list, history: the read-only subcommands.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <ostream>
#include <set>

#include "cli/breadcrumb_fields.h"
#include "cli/breadcrumb_table.h"
#include "cli/commands.h"
#include "cli/url_util.h"

namespace cairn::cli {

namespace json = boost::json;

namespace {

// Builds the GET /breadcrumbs query (without cursor) from the list options.
Result<QueryString> ListQuery(const ParsedArgs& args, std::istream& in) {
  QueryString query;
  if (auto v = args.Get("schema")) query.Add("schema_name", *v);
  for (const auto& tag : args.GetAll("tag")) query.Add("tag", tag);
  if (args.Has("any-tag")) {
    // any_tags is comma-separated on the wire, so a tag containing a comma cannot be expressed.
    std::string joined;
    for (const auto& tag : args.GetAll("any-tag")) {
      if (tag.find(',') != std::string::npos) {
        return Status::InvalidArgument("--any-tag '" + tag + "': the API cannot match a tag containing ','");
      }
      if (!joined.empty()) joined += ',';
      joined += tag;
    }
    query.Add("any_tags", joined);
  }
  if (auto v = args.Get("path")) query.Add("path", *v);
  if (auto v = args.Get("path-prefix")) query.Add("path_prefix", *v);
  if (args.Has("match")) {
    CAIRN_ASSIGN_OR_RETURN(std::string rules, ContextMatchParameter(args, in));
    query.Add("context_match", rules);
  }
  if (auto v = args.Get("limit")) {
    const bool digits = !v->empty() && v->size() <= 9 && v->find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stol(*v) < 1) {
      return Status::InvalidArgument("--limit must be a positive integer, got '" + *v + "'");
    }
    query.Add("limit", *v);
  }
  if (auto v = args.Get("order")) {
    if (*v != "asc" && *v != "desc") return Status::InvalidArgument("--order must be asc or desc, got '" + *v + "'");
    query.Add("order", *v);
  }
  if (args.Has("include-context")) query.Add("include_context", "true");
  return query;
}

// A list page as the API defines it: {"items": [...], "next_cursor": "..." | null}.
struct Page {
  json::array items;
  std::optional<std::string> next_cursor;
};

Result<Page> DecodePage(json::value body) {
  Page page;
  json::object* obj = body.if_object();
  json::value* items = obj == nullptr ? nullptr : obj->if_contains("items");
  if (items == nullptr || !items->is_array()) {
    return Status::Internal("the server's list reply has no \"items\" array: " + json::serialize(body));
  }
  page.items = std::move(items->get_array());
  if (const json::value* cursor = obj->if_contains("next_cursor"); cursor != nullptr && cursor->is_string() &&
                                                                    !cursor->get_string().empty()) {
    page.next_cursor = std::string(cursor->get_string());
  }
  return page;
}

}  // namespace

CommandSpec GetSpec() {
  return {"get",
          "show one breadcrumb (the context view, or every field with --full)",
          "ID [--full]",
          {{"full", "", "the whole record instead of the context view"}},
          "ID",
          1,
          1};
}

CommandSpec HistorySpec() {
  return {"history", "show every version of a breadcrumb, oldest first", "ID", {}, "ID", 1, 1};
}

CommandSpec ListSpec() {
  return {"list",
          "list breadcrumbs, newest first, as a table (or JSON with --json)",
          "[filters] [--all] [--json]",
          {
              {"schema", "NAME", "only this schema name"},
              {"tag", "TAG", "must carry TAG (all of the given tags)", true},
              {"any-tag", "TAG", "must carry at least one of the given tags", true},
              {"path", "PATH", "exact path"},
              {"path-prefix", "PREFIX", "path under PREFIX (whole segments)"},
              {"match", "JSON", "context rule {\"path\":\"$.a\",\"op\":\"eq\",\"value\":1}; all must hold", true},
              {"limit", "N", "items per page (server default 50, at most 1000)"},
              {"order", "ORDER", "desc (newest first, default) or asc"},
              {"cursor", "CURSOR", "continue from a previous page's next_cursor"},
              {"all", "", "follow next_cursor through every page"},
              {"include-context", "", "include each item's context (JSON output)"},
              {"json", "", "print the API's JSON instead of a table"},
          },
          "",
          0,
          0};
}

Status CheckId(std::string_view id) {
  if (id.empty()) return Status::InvalidArgument("the breadcrumb ID is empty");
  return Status::Ok();
}

int RunGet(CommandRun& run) {
  const std::string& id = run.args().positionals()[0];
  if (Status s = CheckId(id); !s.ok()) return run.UsageError(s.message());
  auto reply = run.api().Call("GET", BreadcrumbPath(id, run.args().Has("full") ? "/full" : ""));
  if (!reply.ok()) return run.Failure(reply.status());
  return run.PrintJson(reply->body);
}

int RunHistory(CommandRun& run) {
  const std::string& id = run.args().positionals()[0];
  if (Status s = CheckId(id); !s.ok()) return run.UsageError(s.message());
  auto reply = run.api().Call("GET", BreadcrumbPath(id, "/history"));
  if (!reply.ok()) return run.Failure(reply.status());
  return run.PrintJson(reply->body);
}

int RunList(CommandRun& run) {
  const ParsedArgs& args = run.args();
  auto query = ListQuery(args, run.context().in);
  if (!query.ok()) return run.UsageError(query.status().message());
  const bool all = args.Has("all");

  json::array items;
  std::optional<std::string> cursor = args.Get("cursor");
  std::set<std::string> seen_cursors;  // a server handing back a cursor twice would loop forever
  while (true) {
    QueryString page_query = *query;
    if (cursor.has_value()) page_query.Add("cursor", *cursor);
    auto reply = run.api().Call("GET", "/breadcrumbs" + page_query.Build());
    if (!reply.ok()) return run.Failure(reply.status());
    auto page = DecodePage(std::move(reply->body));
    if (!page.ok()) return run.Failure(page.status());
    for (auto& item : page->items) items.push_back(std::move(item));
    cursor = std::move(page->next_cursor);
    if (!all || !cursor.has_value()) break;
    if (!seen_cursors.insert(*cursor).second) {
      return run.Failure(Status::Internal("the server returned the same next_cursor twice; stopping"));
    }
  }

  if (args.Has("json")) {
    json::object out;
    out["items"] = std::move(items);
    out["next_cursor"] = cursor.has_value() ? json::value(*cursor) : json::value(nullptr);
    return run.PrintJson(out);
  }
  if (items.empty()) {
    run.context().err << "no breadcrumbs found\n";  // stdout stays empty for scripts
  } else {
    run.context().out << RenderBreadcrumbTable(items);
  }
  if (cursor.has_value()) {
    run.context().err << "more breadcrumbs: add --cursor " << *cursor << " for the next page, or --all\n";
  }
  return kExitOk;
}

}  // namespace cairn::cli
