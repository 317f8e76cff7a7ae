#include "cli/breadcrumb_fields.h"

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "base/json_util.h"
#include "cli/ttl_arg.h"

namespace cairn::cli {

namespace json = boost::json;

namespace {

// The server enforces its own (smaller) depth limit and reports it; this bound only keeps the
// client itself safe from pathological input.
constexpr size_t kMaxInputDepth = 1024;
// Far above any server body limit; a file this large is a mistake, not a breadcrumb.
constexpr std::streamoff kMaxInputBytes = 256 * 1024 * 1024;

struct NullableField {
  std::string_view option;  // --clear value as documented
  std::string_view alias;   // also accepted
  std::string_view json_name;
  std::string_view set_option;  // the option that sets it
};

constexpr NullableField kClearable[] = {
    {"schema", "schema_name", "schema_name", "schema"},
    {"description", "description", "description", "description"},
    {"path", "path", "path", "path"},
    {"llm-hints", "llm_hints", "llm_hints", "llm-hints"},
    {"ttl", "ttl", "ttl", "ttl"},
    {"tags", "tag", "tags", "tag"},
};

Result<json::value> ParseInput(std::string_view option, std::string_view source, std::string_view text) {
  auto parsed = ParseJson(text, kMaxInputDepth);
  if (!parsed.ok()) {
    return Status::InvalidArgument(std::string(option) + " " + std::string(source) + ": " + parsed.status().message());
  }
  return parsed;
}

Result<std::string> ReadAll(std::istream& in, std::string_view what) {
  std::string text;
  char buffer[64 * 1024];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (static_cast<std::streamoff>(text.size()) > kMaxInputBytes) {
      return Status::InvalidArgument(std::string(what) + " is larger than " + std::to_string(kMaxInputBytes) + " bytes");
    }
  }
  if (in.bad()) return Status::InvalidArgument("cannot read " + std::string(what));
  return text;
}

// Sets the fields shared by create and update from the options present.
Status AddCommonFields(const ParsedArgs& args, std::istream& in, int64_t now_micros, json::object& body) {
  if (auto v = args.Get("title")) body["title"] = *v;
  if (auto v = args.Get("schema")) body["schema_name"] = *v;
  if (auto v = args.Get("description")) body["description"] = *v;
  if (auto v = args.Get("path")) body["path"] = *v;
  if (auto v = args.Get("visibility")) body["visibility"] = *v;
  if (auto v = args.Get("sensitivity")) body["sensitivity"] = *v;
  if (args.Has("tag")) {
    json::array tags;
    for (const auto& tag : args.GetAll("tag")) tags.emplace_back(tag);
    body["tags"] = std::move(tags);
  }

  const bool inline_context = args.Has("context");
  const bool file_context = args.Has("context-file");
  if (inline_context && file_context) {
    return Status::InvalidArgument("give either --context or --context-file, not both");
  }
  if (args.Get("llm-hints") == "-" && (args.Get("context") == "-" || args.Get("context-file") == "-")) {
    return Status::InvalidArgument("only one option can read standard input ('-')");
  }
  if (inline_context) {
    CAIRN_ASSIGN_OR_RETURN(body["context"], ReadJsonArgument("--context", *args.Get("context"), in));
  } else if (file_context) {
    CAIRN_ASSIGN_OR_RETURN(body["context"], ReadJsonFile("--context-file", *args.Get("context-file"), in));
  }
  if (auto v = args.Get("llm-hints")) {
    CAIRN_ASSIGN_OR_RETURN(body["llm_hints"], ReadJsonArgument("--llm-hints", *v, in));
  }
  if (auto v = args.Get("ttl")) {
    CAIRN_ASSIGN_OR_RETURN(body["ttl"], ResolveTtl(*v, now_micros));
  }
  return Status::Ok();
}

}  // namespace

std::vector<OptionSpec> BreadcrumbFieldOptions(bool for_update) {
  std::vector<OptionSpec> options = {
      {"title", "TEXT", for_update ? "new title" : "title (required)"},
      {"schema", "NAME", "schema name, e.g. note.v1"},
      {"description", "TEXT", "description"},
      {"tag", "TAG", for_update ? "tag; the given tags replace all current tags" : "tag", true},
      {"context", "JSON", "context (any JSON); '-' reads standard input"},
      {"context-file", "FILE", "read the context from a JSON file; '-' = standard input"},
      {"path", "PATH", "hierarchical key, unique (a/b/c)"},
      {"ttl", "TIME", "expiry: RFC 3339 time, or a duration from now (30m, 12h, 7d)"},
      {"visibility", "V", "public | team | private"},
      {"sensitivity", "S", "low | pii | secret"},
      {"llm-hints", "JSON", "how to render the context for an LLM ({include, exclude, template})"},
  };
  if (for_update) {
    options.push_back({"clear", "FIELD", "remove a field: schema, description, path, llm-hints, ttl, tags", true});
    options.push_back({"if-match", "VERSION", "only update if the current version is VERSION (else HTTP 412)"});
  } else {
    options.push_back({"idempotency-key", "KEY", "repeat-safe create: the same key returns the same record"});
  }
  return options;
}

Result<json::value> ReadJsonArgument(std::string_view option, const std::string& text, std::istream& in) {
  if (text == "-") {
    CAIRN_ASSIGN_OR_RETURN(std::string input, ReadAll(in, "standard input"));
    return ParseInput(option, "(standard input)", input);
  }
  return ParseInput(option, "value", text);
}

Result<json::value> ReadJsonFile(std::string_view option, const std::string& path, std::istream& in) {
  if (path == "-") return ReadJsonArgument(option, "-", in);
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return Status::InvalidArgument(std::string(option) + ": cannot open '" + path + "': " + std::strerror(errno));
  }
  CAIRN_ASSIGN_OR_RETURN(std::string text, ReadAll(file, "'" + path + "'"));
  return ParseInput(option, "'" + path + "'", text);
}

Result<json::object> BuildCreateBody(const ParsedArgs& args, std::istream& in, int64_t now_micros) {
  if (!args.Has("title")) return Status::InvalidArgument("--title is required");
  json::object body;
  CAIRN_RETURN_IF_ERROR(AddCommonFields(args, in, now_micros, body));
  return body;
}

Result<json::object> BuildUpdateBody(const ParsedArgs& args, std::istream& in, int64_t now_micros) {
  json::object body;
  CAIRN_RETURN_IF_ERROR(AddCommonFields(args, in, now_micros, body));
  for (const auto& name : args.GetAll("clear")) {
    const NullableField* field = nullptr;
    for (const auto& candidate : kClearable) {
      if (name == candidate.option || name == candidate.alias || name == candidate.json_name) field = &candidate;
    }
    if (field == nullptr) {
      return Status::InvalidArgument("--clear " + name +
                                     ": not a field that can be cleared (schema, description, path, llm-hints, "
                                     "ttl, tags)");
    }
    if (args.Has(field->set_option)) {
      return Status::InvalidArgument("--clear " + name + " contradicts --" + std::string(field->set_option));
    }
    if (field->json_name == "tags") {
      body["tags"] = json::array();  // tags is a list, never null: clearing empties it
    } else {
      body[field->json_name] = nullptr;
    }
  }
  if (body.empty()) {
    return Status::InvalidArgument("nothing to update: give at least one of --title, --tag, --context, ... or --clear");
  }
  return body;
}

Result<std::string> ContextMatchParameter(const ParsedArgs& args, std::istream& in) {
  json::array rules;
  for (const auto& text : args.GetAll("match")) {
    CAIRN_ASSIGN_OR_RETURN(json::value rule, ReadJsonArgument("--match", text, in));
    if (rule.is_array()) {
      for (auto& element : rule.get_array()) rules.push_back(std::move(element));
    } else {
      rules.push_back(std::move(rule));
    }
  }
  return rules.size() == 1 ? json::serialize(rules[0]) : json::serialize(rules);
}

}  // namespace cairn::cli
