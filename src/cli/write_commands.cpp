// put, update, rm: the subcommands that change breadcrumbs.
#include <ostream>

#include "cli/breadcrumb_fields.h"
#include "cli/commands.h"

namespace cairn::cli {

namespace json = boost::json;

namespace {

// The API accepts `If-Match: 3` or `If-Match: "3"`; the client accepts the same and sends the
// bare number, refusing anything else before it reaches the server.
Result<std::string> IfMatchVersion(const std::string& text) {
  std::string_view digits = text;
  if (digits.size() >= 2 && digits.front() == '"' && digits.back() == '"') digits = digits.substr(1, digits.size() - 2);
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return Status::InvalidArgument("--if-match must be a version number, got '" + text + "'");
  }
  return std::string(digits);
}

}  // namespace

CommandSpec PutSpec() {
  return {"put", "create a breadcrumb and print it", "--title TEXT [fields]", BreadcrumbFieldOptions(false),
          "", 0, 0};
}

CommandSpec UpdateSpec() {
  return {"update", "change fields of a breadcrumb and print the new version", "ID [fields] [--if-match VERSION]",
          BreadcrumbFieldOptions(true), "ID", 1, 1};
}

CommandSpec RmSpec() {
  return {"rm",
          "delete breadcrumbs",
          "ID... [--if-match VERSION]",
          {{"if-match", "VERSION", "only delete if the current version is VERSION (one ID only)"}},
          "ID...",
          1,
          SIZE_MAX};
}

int RunPut(CommandRun& run) {
  auto body = BuildCreateBody(run.args(), run.context().in, run.context().now_micros());
  if (!body.ok()) return run.UsageError(body.status().message());
  std::vector<std::pair<std::string, std::string>> headers;
  if (auto key = run.args().Get("idempotency-key")) headers.emplace_back("Idempotency-Key", *key);

  auto reply = run.api().Call("POST", "/breadcrumbs", json::value(std::move(*body)), std::move(headers));
  if (!reply.ok()) return run.Failure(reply.status());
  if (reply->Header("idempotent-replayed") == "true") {
    run.context().err << "cairn put: this Idempotency-Key was used before; showing the record it created\n";
  }
  return run.PrintJson(reply->body);
}

int RunUpdate(CommandRun& run) {
  const std::string& id = run.args().positionals()[0];
  if (Status s = CheckId(id); !s.ok()) return run.UsageError(s.message());
  auto body = BuildUpdateBody(run.args(), run.context().in, run.context().now_micros());
  if (!body.ok()) return run.UsageError(body.status().message());
  std::vector<std::pair<std::string, std::string>> headers;
  if (auto if_match = run.args().Get("if-match")) {
    auto version = IfMatchVersion(*if_match);
    if (!version.ok()) return run.UsageError(version.status().message());
    headers.emplace_back("If-Match", *version);
  }

  auto reply = run.api().Call("PATCH", BreadcrumbPath(id), json::value(std::move(*body)), std::move(headers));
  if (!reply.ok()) return run.Failure(reply.status());
  return run.PrintJson(reply->body);
}

int RunRm(CommandRun& run) {
  const auto& ids = run.args().positionals();
  std::vector<std::pair<std::string, std::string>> headers;
  if (auto if_match = run.args().Get("if-match")) {
    if (ids.size() != 1) return run.UsageError("--if-match applies to a single ID");
    auto version = IfMatchVersion(*if_match);
    if (!version.ok()) return run.UsageError(version.status().message());
    headers.emplace_back("If-Match", *version);
  }
  for (const auto& id : ids) {
    if (Status s = CheckId(id); !s.ok()) return run.UsageError(s.message());
  }

  // Like rm(1): try every id, report each failure, and fail overall if any failed.
  int exit_code = kExitOk;
  for (const auto& id : ids) {
    auto reply = run.api().Call("DELETE", BreadcrumbPath(id), std::nullopt, headers);
    if (!reply.ok()) {
      exit_code = run.Failure(reply.status());
      continue;
    }
    run.context().out << "deleted " << id << "\n";
  }
  return exit_code;
}

}  // namespace cairn::cli
