#include "store/sqlite/event_rows.h"

#include <boost/json/serialize.hpp>

#include "store/record_rows.h"

namespace cairn::store::sqlite {
namespace json = boost::json;

Status AppendEvent(Connection& conn, std::string_view type, const model::Breadcrumb& c, const std::string& actor,
                   int64_t at, const std::string* context_json, model::Breadcrumb* previous,
                   json::value* read_back_context) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
      "INSERT INTO events(type, breadcrumb_id, version, schema_name, title, tags, path, owner_id, created_by, "
      "trace_id, caused_by, depth, at, context, access) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)"));
  std::string serialized = context_json ? std::string() : json::serialize(c.context);
  std::string_view context = context_json ? std::string_view(*context_json) : std::string_view(serialized);
  CAIRN_RETURN_IF_ERROR(
      stmt->Bind(1, type).Bind(2, std::string_view(c.id)).Bind(3, c.version).Bind(4, c.schema_name)
          .Bind(5, std::string_view(c.title)).Bind(6, std::string_view(TagsJson(c.tags))).Bind(7, c.path)
          .Bind(8, std::string_view(c.owner_id)).Bind(9, std::string_view(actor))
          .Bind(10, std::string_view(c.trace.trace_id))
          .Bind(11, c.trace.caused_by.empty() ? std::optional<std::string>() : std::optional<std::string>(c.trace.caused_by))
          .Bind(12, c.trace.depth).Bind(13, at).Bind(14, std::string_view(context)).Bind(15, AccessText(c)).Run());
  // The event as ReadEventRows will read it back (seq is the row id: INTEGER PRIMARY KEY).
  conn.staged_events().push_back(StagedEvent(conn.LastInsertRowId(), type, c, actor, at, previous, read_back_context));
  return Status::Ok();
}

Result<std::vector<model::Event>> ReadEventRows(Connection& conn, int64_t after_seq, size_t limit,
                                                std::vector<std::pair<int64_t, std::string>>* damaged) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("SELECT " + EventColumnsAndJoins() +
                                                 " WHERE e.seq > ?1 ORDER BY e.seq LIMIT ?2"));
  stmt->Bind(1, after_seq).Bind(2, static_cast<int64_t>(limit));
  std::vector<model::Event> events;
  while (true) {
    CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) break;
    std::string damage;
    model::Event e = ReadEventRow(*stmt, &damage);
    if (!damage.empty()) damaged->emplace_back(e.seq, std::move(damage));
    events.push_back(std::move(e));
  }
  return events;
}

}  // namespace cairn::store::sqlite
