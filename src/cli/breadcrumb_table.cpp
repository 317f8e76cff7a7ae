#include "cli/breadcrumb_table.h"

#include <boost/json/serialize.hpp>

#include "cli/table_printer.h"

namespace cairn::cli {

namespace json = boost::json;

namespace {

constexpr size_t kSchemaWidth = 32;
constexpr size_t kTitleWidth = 48;
constexpr size_t kTagsWidth = 40;

std::string Text(const json::object* item, std::string_view key) {
  if (item == nullptr) return "-";
  const json::value* value = item->if_contains(key);
  if (value == nullptr || value->is_null()) return "-";
  if (value->is_string()) return std::string(value->get_string());
  return json::serialize(*value);  // a number (version) or something unexpected: show it as JSON
}

std::string Tags(const json::object* item) {
  if (item == nullptr) return "-";
  const json::value* value = item->if_contains("tags");
  if (value == nullptr || !value->is_array()) return Text(item, "tags");
  std::string out;
  for (const auto& tag : value->get_array()) {
    if (!out.empty()) out += ",";
    out += tag.is_string() ? std::string(tag.get_string()) : json::serialize(tag);
  }
  return out.empty() ? "-" : out;
}

}  // namespace

std::string RenderBreadcrumbTable(const json::array& items) {
  TablePrinter table({
      {"ID"},
      {"VERSION", 0, true},
      {"SCHEMA", kSchemaWidth},
      {"TITLE", kTitleWidth},
      {"TAGS", kTagsWidth},
      {"UPDATED_AT"},
  });
  for (const auto& value : items) {
    const json::object* item = value.if_object();
    table.AddRow({Text(item, "id"), Text(item, "version"), Text(item, "schema_name"), Text(item, "title"),
                  Tags(item), Text(item, "updated_at")});
  }
  return table.Render();
}

}  // namespace cairn::cli
