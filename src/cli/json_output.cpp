#include "cli/json_output.h"

#include <boost/json/serialize.hpp>
#include <charconv>

namespace cairn::cli {

namespace json = boost::json;

namespace {

// `indent` < 0 means compact: no newlines and no spaces.
void NewLine(std::string& out, int indent, int depth) {
  if (indent < 0) return;
  out += '\n';
  out.append(static_cast<size_t>(indent) * static_cast<size_t>(depth), ' ');
}

// Boost.JSON writes 1.5 as "1.5E0"; people expect "1.5". std::to_chars gives the shortest text
// that reads back as the same double; ".0" keeps an integral double recognisably a double.
void AppendDouble(double d, std::string& out) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, d);
  std::string_view text(buffer, static_cast<size_t>(result.ptr - buffer));
  out += text;
  if (text.find_first_of(".eE") == std::string_view::npos) out += ".0";
}

void Append(const json::value& value, int indent, int depth, std::string& out) {
  const char* colon = indent < 0 ? ":" : ": ";
  switch (value.kind()) {
    case json::kind::object: {
      const json::object& obj = value.get_object();
      if (obj.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (const auto& member : obj) {
        if (!first) out += ',';
        first = false;
        NewLine(out, indent, depth + 1);
        out += json::serialize(json::string_view(member.key()));
        out += colon;
        Append(member.value(), indent, depth + 1, out);
      }
      NewLine(out, indent, depth);
      out += '}';
      return;
    }
    case json::kind::array: {
      const json::array& arr = value.get_array();
      if (arr.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      bool first = true;
      for (const auto& element : arr) {
        if (!first) out += ',';
        first = false;
        NewLine(out, indent, depth + 1);
        Append(element, indent, depth + 1, out);
      }
      NewLine(out, indent, depth);
      out += ']';
      return;
    }
    case json::kind::double_:
      AppendDouble(value.get_double(), out);
      return;
    default:
      out += json::serialize(value);  // strings (Boost.JSON's escaping), integers, booleans, null
      return;
  }
}

}  // namespace

std::string PrettyJson(const json::value& value) {
  std::string out;
  Append(value, 2, 0, out);
  return out;
}

std::string CompactJson(const json::value& value) {
  std::string out;
  Append(value, -1, 0, out);
  return out;
}

std::string FormatJson(const json::value& value, bool compact) {
  return compact ? CompactJson(value) : PrettyJson(value);
}

}  // namespace cairn::cli
