// The session records as breadcrumbs (internal to src/sessions): where each lives, what its
// context holds (the API shape of docs/sessions.md, so a view is the context plus the record's
// times), and the lifecycle rules of executions.
#pragma once

#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/breadcrumb.h"
#include "model/query.h"
#include "store/store.h"

namespace cairn::sessions {

std::string SessionPath(const std::string& session_id);     // sessions/<id>
std::string SessionTag(const std::string& session_id);      // session:<id>
// The tags that keep the per-message and per-run queries small (a tag query reads every record
// with the tag): turn:<sid> on user and assistant messages (the history), active:<sid> on
// executions while pending, running or paused.
std::string TurnTag(const std::string& session_id);
std::string ActiveTag(const std::string& session_id);

// The API views: the record's context with created_at / updated_at (RFC 3339, microseconds).
boost::json::object SessionView(const model::Breadcrumb& crumb);
boost::json::object MessageView(const model::Breadcrumb& crumb);
// Without state_json (listings); GetSnapshot adds it.
boost::json::object SnapshotView(const model::Breadcrumb& crumb);

// A session message: role user|assistant|info|notification. `event_type` (info/notification)
// goes into metadata.event_type; `extra` fields (metadata, related_type, ...) are merged.
model::BreadcrumbDraft MessageDraft(const std::string& session_id, const std::string& message_id,
                                    const std::string& role, const std::string& content,
                                    const std::string& execution_id, const std::string& event_type,
                                    boost::json::object metadata = {}, boost::json::object extra = {});

// A patch that sets execution context fields (merged into the current context) and retags the
// record (exec::ExecutionTags, plus session-execution and active:<sid> while active).
model::BreadcrumbPatch ExecutionPatch(const model::Breadcrumb& current, const boost::json::object& changes);

// The one record of `schema` at `path`, or kNotFound naming `what`.
Result<model::Breadcrumb> FindAt(store::Store& store, const std::string& owner_id, std::string_view schema,
                                 const std::string& path, const std::string& what);

// String members, "" when absent.
std::string Str(const boost::json::object& o, std::string_view key);

}  // namespace cairn::sessions
