// EventExpression: CEL over an event and the record before and after the change (docs/cel.md
// "Conditions"), compiled once when its selector or subscription is parsed: a selector's `when`
// (a condition, Holds) and a trigger subscription's `input` (a value, Evaluate).
//
// Variables:
//   event   {type, seq, schema_name, path, tags, actor, timestamp (RFC 3339)}
//   record  the record after the change {id, schema_name, title, tags, path, version, context}
//           (for a delete: the record as it was)
//   before  the record before the change, the same shape; null for a create. For an update it is
//           the previous version (Event::before, filled by the store); for a delete the record
//           as deleted. An update whose previous version is gone (the record was deleted since)
//           has before == null.
// `before` is only looked at when the expression names it.
#pragma once

#include <atomic>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "cel/program.h"
#include "model/event.h"

namespace cairn::model {

class EventExpression {
 public:
  // kValidation naming `field` with the compiler's line and column for a bad expression (or one
  // longer than 4 KiB).
  static Result<std::shared_ptr<const EventExpression>> Compile(const std::string& source, const std::string& field);

  const std::string& source() const { return source_; }
  bool references_before() const { return program_.References("before"); }

  // Whether `event` satisfies it. An evaluation error or a result that is not a bool is no match:
  // it is counted (ExpressionErrors) and logged once per compiled expression.
  bool Holds(const Event& event) const;
  // Its value for `event` as JSON; an evaluation error is kInvalidArgument (counted the same way).
  Result<boost::json::value> Evaluate(const Event& event) const;

  EventExpression(std::string source, cel::Program program) : source_(std::move(source)), program_(std::move(program)) {}

 private:
  std::string source_;
  void BindVariables(cel::Activation& activation, const Event& event) const;
  void NoteError(const Event& event, const std::string& why) const;

  cel::Program program_;
  mutable std::atomic<bool> logged_{false};
};

// Evaluations that failed (or, for a condition, gave no bool), process-wide (a metric).
uint64_t ExpressionErrors();

}  // namespace cairn::model
