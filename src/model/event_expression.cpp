#include "model/event_expression.h"

#include "base/log.h"
#include "base/time_format.h"

namespace cairn::model {
namespace json = boost::json;
namespace {

constexpr size_t kMaxEventExpressionBytes = 4096;

std::atomic<uint64_t> expression_errors{0};

const cel::Declarations& EventVariables() {
  static const cel::Declarations vars = {{"event"}, {"record"}, {"before"}};
  return vars;
}

}  // namespace

uint64_t ExpressionErrors() { return expression_errors.load(); }

Result<std::shared_ptr<const EventExpression>> EventExpression::Compile(const std::string& source, const std::string& field) {
  if (source.size() > kMaxEventExpressionBytes) {
    return Status::Validation(field, "is longer than " + std::to_string(kMaxEventExpressionBytes) + " bytes");
  }
  auto program = cel::Program::Compile(source, EventVariables());
  if (!program.ok()) return Status::Validation(field, program.status().message());
  return std::make_shared<const EventExpression>(source, std::move(program).value());
}

namespace {

// The variables as CEL values that borrow from the event (no copy of its context): the event
// outlives every evaluation over it.
cel::Value Text(const std::string& text) { return cel::Value::StringView(text); }
cel::Value OptionalText(const std::optional<std::string>& text) {
  return text ? cel::Value::StringView(*text) : cel::Value::Null();
}
cel::Value Tags(const std::vector<std::string>& tags) {
  cel::ValueList items;
  items.reserve(tags.size());
  for (const auto& tag : tags) items.push_back(cel::Value::StringView(tag));
  return cel::Value::List(std::move(items));
}

cel::Value EventValue(const Event& event) {
  cel::MapEntries entries;
  entries.reserve(7);
  entries.emplace_back(cel::Value::StringView("type"), Text(event.type));
  entries.emplace_back(cel::Value::StringView("seq"), cel::Value::Int(event.seq));
  entries.emplace_back(cel::Value::StringView("schema_name"), OptionalText(event.schema_name));
  entries.emplace_back(cel::Value::StringView("path"), OptionalText(event.path));
  entries.emplace_back(cel::Value::StringView("tags"), Tags(event.tags));
  entries.emplace_back(cel::Value::StringView("actor"), Text(event.created_by));
  entries.emplace_back(cel::Value::StringView("timestamp"), cel::Value::String(FormatRfc3339Micros(event.at)));
  return cel::Value::Map(std::move(entries));
}

cel::Value RecordValue(const Event& event) {
  cel::MapEntries entries;
  entries.reserve(7);
  entries.emplace_back(cel::Value::StringView("id"), Text(event.breadcrumb_id));
  entries.emplace_back(cel::Value::StringView("schema_name"), OptionalText(event.schema_name));
  entries.emplace_back(cel::Value::StringView("title"), Text(event.title));
  entries.emplace_back(cel::Value::StringView("tags"), Tags(event.tags));
  entries.emplace_back(cel::Value::StringView("path"), OptionalText(event.path));
  entries.emplace_back(cel::Value::StringView("version"), cel::Value::Int(event.version));
  entries.emplace_back(cel::Value::StringView("context"), cel::Value::FromJson(event.context));
  return cel::Value::Map(std::move(entries));
}

}  // namespace

void EventExpression::BindVariables(cel::Activation& activation, const Event& event) const {
  // Only what the expression reads is made.
  if (program_.References("event")) activation.BindValue("event", EventValue(event));
  if (program_.References("record")) activation.BindValue("record", RecordValue(event));
  if (program_.References("before")) {
    if (event.type == "breadcrumb.deleted") {
      activation.BindValue("before", RecordValue(event));
    } else if (event.type == "breadcrumb.updated" && event.before) {
      activation.Bind("before", event.before.get());
    } else {
      activation.BindValue("before", cel::Value::Null());
    }
  }
}

void EventExpression::NoteError(const Event& event, const std::string& why) const {
  ++expression_errors;
  if (!logged_.exchange(true)) {
    CAIRN_LOG_WARN("the expression `{}` failed for event {} ({}); a condition counts it as no match (logged once "
                   "per expression)", source_, event.seq, why);
  }
}

bool EventExpression::Holds(const Event& event) const {
  cel::Activation activation;
  BindVariables(activation, event);
  auto holds = program_.EvaluateBool(activation);
  if (holds.ok()) return *holds;
  NoteError(event, holds.status().message());
  return false;
}

Result<json::value> EventExpression::Evaluate(const Event& event) const {
  cel::Activation activation;
  BindVariables(activation, event);
  auto value = program_.EvaluateJson(activation);
  if (!value.ok()) NoteError(event, value.status().message());
  return value;
}

}  // namespace cairn::model
