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

json::array Strings(const std::vector<std::string>& items) {
  json::array out;
  for (const auto& item : items) out.emplace_back(item);
  return out;
}

json::value OrNull(const std::optional<std::string>& text) { return text ? json::value(*text) : json::value(nullptr); }

}  // namespace

uint64_t ExpressionErrors() { return expression_errors.load(); }

json::object EventVariable(const Event& event) {
  return json::object{{"type", event.type},
                      {"seq", event.seq},
                      {"schema_name", OrNull(event.schema_name)},
                      {"path", OrNull(event.path)},
                      {"tags", Strings(event.tags)},
                      {"actor", event.created_by},
                      {"timestamp", FormatRfc3339Micros(event.at)}};
}

json::object RecordVariable(const Event& event) {
  return json::object{{"id", event.breadcrumb_id},
                      {"schema_name", OrNull(event.schema_name)},
                      {"title", event.title},
                      {"tags", Strings(event.tags)},
                      {"path", OrNull(event.path)},
                      {"version", event.version},
                      {"context", event.context}};
}

Result<std::shared_ptr<const EventExpression>> EventExpression::Compile(const std::string& source, const std::string& field) {
  if (source.size() > kMaxEventExpressionBytes) {
    return Status::Validation(field, "is longer than " + std::to_string(kMaxEventExpressionBytes) + " bytes");
  }
  auto program = cel::Program::Compile(source, EventVariables());
  if (!program.ok()) return Status::Validation(field, program.status().message());
  return std::make_shared<const EventExpression>(source, std::move(program).value());
}

void EventExpression::BindVariables(cel::Activation& activation, const Event& event) const {
  activation.BindLazy("event", [&]() -> Result<json::value> { return json::value(EventVariable(event)); });
  activation.BindLazy("record", [&]() -> Result<json::value> { return json::value(RecordVariable(event)); });
  activation.BindLazy("before", [&]() -> Result<json::value> {
    if (event.type == "breadcrumb.deleted") return json::value(RecordVariable(event));
    if (event.type == "breadcrumb.updated" && event.before) return *event.before;
    return json::value(nullptr);
  });
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
