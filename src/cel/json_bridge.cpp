#include "cel/json_bridge.h"

#include <cmath>
#include <string>

#include "base/base64.h"
#include "cel/functions.h"
#include "cel/time_functions.h"

namespace cairn::cel {
namespace {

std::string KeyText(const Value& key) {
  switch (key.kind()) {
    case Kind::kString: return std::string(key.text());
    case Kind::kInt: return std::to_string(key.int_value());
    case Kind::kUint: return std::to_string(key.uint_value());
    case Kind::kBool: return key.bool_value() ? "true" : "false";
    default: return DebugString(key);
  }
}

}  // namespace

namespace {
Result<boost::json::value> ToJsonAt(const Value& value, int depth);
}  // namespace

Result<boost::json::value> ToJson(const Value& value) { return ToJsonAt(value, 0); }

namespace {

Result<boost::json::value> ToJsonAt(const Value& value, int depth) {
  if (depth >= kMaxValueNesting) return Status::InvalidArgument("value nested too deeply for JSON");
  switch (value.kind()) {
    case Kind::kNull: return boost::json::value(nullptr);
    case Kind::kBool: return boost::json::value(value.bool_value());
    case Kind::kInt: return boost::json::value(value.int_value());
    case Kind::kUint: return boost::json::value(value.uint_value());
    case Kind::kDouble:
      if (!std::isfinite(value.double_value())) {
        return Status::InvalidArgument("the double " + FormatDouble(value.double_value()) + " has no JSON form");
      }
      return boost::json::value(value.double_value());
    case Kind::kString: return boost::json::value(boost::json::string(value.text()));
    case Kind::kBytes: return boost::json::value(boost::json::string(Base64Encode(value.text())));
    case Kind::kList: {
      boost::json::array out;
      out.reserve(value.size());
      for (size_t i = 0; i < value.size(); ++i) {
        CAIRN_ASSIGN_OR_RETURN(auto item, ToJsonAt(value.ListAt(i), depth + 1));
        out.push_back(std::move(item));
      }
      return boost::json::value(std::move(out));
    }
    case Kind::kMap: {
      boost::json::object out;
      for (size_t i = 0; i < value.size(); ++i) {
        CAIRN_ASSIGN_OR_RETURN(auto item, ToJsonAt(value.MapValueAt(i), depth + 1));
        out[KeyText(value.MapKeyAt(i))] = std::move(item);
      }
      return boost::json::value(std::move(out));
    }
    case Kind::kTimestamp: return boost::json::value(boost::json::string(FormatTimestamp(value.timestamp_value())));
    case Kind::kDuration: return boost::json::value(boost::json::string(FormatDuration(value.duration_value())));
    case Kind::kType: return boost::json::value(boost::json::string(TypeNameString(value.type_value())));
    case Kind::kError: return Status::InvalidArgument("evaluation failed: " + value.error_message());
  }
  return Status::Internal("unknown CEL value kind");
}

}  // namespace

}  // namespace cairn::cel
