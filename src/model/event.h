// Event: one committed write, as read back from the store's event log (DESIGN.md §4).
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/breadcrumb.h"

namespace cairn::model {

struct Event {
  int64_t seq = 0;   // global, strictly increasing, gap-free
  std::string type;  // "breadcrumb.created" | "breadcrumb.updated" | "breadcrumb.deleted"
  std::string breadcrumb_id;
  int64_t version = 0;
  std::optional<std::string> schema_name;
  std::string title;
  std::vector<std::string> tags;
  std::optional<std::string> path;
  std::string owner_id;
  std::string created_by;  // the actor of the write
  Trace trace;
  int64_t at = 0;               // microseconds since the epoch
  boost::json::value context;   // the record's context after the write (before, for a delete)
  // The stored context (or tags) could not be decoded (a row written by an older version): the
  // event is delivered with what could be read, a null context and `context_unreadable: true`.
  bool context_unreadable = false;
  // For an update: the record before it, as a condition's `before` sees it (condition.h:
  // {id, schema_name, title, tags, path, version, context}), shared by every consumer of the
  // event. The store fills it from the write itself, or from the record's history when the event
  // is read back; null when that version is gone (the record was deleted since) and for other types.
  std::shared_ptr<const boost::json::value> before;
  // Who may read the record as this write left it (model/access.h): its visibility, sensitivity,
  // creator (not the actor of this write) and acl. Events logged before record access was
  // enforced read back as team/low with no creator.
  std::string visibility = "team";
  std::string sensitivity = "low";
  std::string record_creator = {};
  std::optional<RecordAcl> acl = std::nullopt;

  bool MayBeReadBy(const AccessScope& scope) const { return scope.MayRead(visibility, record_creator, acl); }
  // Whether the context must be left out for `scope`: a `secret` record's context goes out in
  // events only to those who read it explicitly (AccessScope::ReadsExplicitly).
  bool RedactsContextFor(const AccessScope& scope) const {
    return sensitivity == "secret" && !scope.ReadsExplicitly(record_creator, acl);
  }
};

// The event as clients see it (SSE `data:` and webhook bodies): type, seq, breadcrumb_id,
// version, schema_name, title, tags, path, owner_id, created_by, trace, at (RFC 3339), and
// `context` — or `context_omitted: true` when the serialised context is larger than
// `max_context_bytes`, and `context_omitted: true, context_unreadable: true` when it could not be
// read back from the store. With `redact_context` the context is left out, with
// `context_omitted: true, context_redacted: true` (Event::RedactsContextFor).
boost::json::object EventView(const Event& event, size_t max_context_bytes, bool redact_context = false);

}  // namespace cairn::model
