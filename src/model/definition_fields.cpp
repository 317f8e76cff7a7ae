#include "model/definition_fields.h"

#include <boost/json/array.hpp>

namespace cairn::model {
namespace json = boost::json;

Result<std::string> RequireString(const json::value& value, const std::string& field, size_t max_bytes) {
  if (!value.is_string()) return Status::Validation(field, "must be a string");
  if (value.as_string().size() > max_bytes) {
    return Status::Validation(field, "must be at most " + std::to_string(max_bytes) + " bytes");
  }
  return std::string(value.as_string());
}

Result<int64_t> RequireInt(const json::value& value, const std::string& field, int64_t min, int64_t max) {
  if (!value.is_int64() && !value.is_uint64()) return Status::Validation(field, "must be an integer");
  int64_t n = value.is_int64() ? value.as_int64() : static_cast<int64_t>(value.as_uint64());
  if (n < min || n > max) {
    return Status::Validation(field, "must be " + std::to_string(min) + " to " + std::to_string(max));
  }
  return n;
}

Result<std::vector<std::string>> RequireStrings(const json::value& value, const std::string& field, bool non_empty) {
  if (!value.is_array()) return Status::Validation(field, "must be an array of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < value.as_array().size(); ++i) {
    CAIRN_ASSIGN_OR_RETURN(std::string item,
                           RequireString(value.as_array()[i], field + "[" + std::to_string(i) + "]", 4096));
    if (item.empty()) return Status::Validation(field + "[" + std::to_string(i) + "]", "must not be empty");
    out.push_back(std::move(item));
  }
  if (non_empty && out.empty()) return Status::Validation(field, "must not be empty");
  if (out.size() > 256) return Status::Validation(field, "at most 256 items");
  return out;
}

bool IsValidDefinitionName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Result<std::vector<Subscription>> DefinitionSubscriptions(std::vector<Subscription> given, bool had_selectors,
                                                          Subscription default_trigger) {
  if (!had_selectors) return std::vector<Subscription>{std::move(default_trigger)};
  for (const auto& sub : given) {
    if (sub.role == SubscriptionRole::kTrigger) return given;
  }
  return Status::Validation("context.subscriptions.selectors", "needs at least one selector with role trigger");
}

std::optional<Status> CheckRequestField(std::string_view key, const boost::json::value& value, const std::string& field) {
  if (key == "request_id" || key == "requested_by") {
    if (!value.is_string() || value.as_string().empty() || value.as_string().size() > 256) {
      return Status::Validation(field, "must be a string of 1 to 256 bytes");
    }
    return Status::Ok();
  }
  if (key == "execution_id" || key == "root_execution_id" || key == "session_id") {
    if (!value.is_string() || value.as_string().empty() || value.as_string().size() > 128) {
      return Status::Validation(field, "must be a string of 1 to 128 bytes");
    }
    return Status::Ok();
  }
  if (key == "execution_depth") {
    if (!value.is_int64() || value.as_int64() < 0 || value.as_int64() >= 1000) {
      return Status::Validation(field, "must be an integer from 0 to 999");
    }
    return Status::Ok();
  }
  return std::nullopt;
}

}  // namespace cairn::model
