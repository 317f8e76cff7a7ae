// The breadcrumb record (DESIGN.md §2) and the inputs that create and change it.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/access.h"
#include "model/reserved.h"

namespace cairn::model {

// Which write caused this one: lets later layers build timelines and stop causal loops.
struct Trace {
  std::string trace_id;   // shared by every write in one causal chain
  std::string caused_by;  // id of the breadcrumb whose write caused this one; empty for a root
  int64_t depth = 0;      // 0 for a root write, parent depth + 1 otherwise
};

struct Breadcrumb {
  std::string id;  // UUIDv7
  std::optional<std::string> schema_name;
  std::string title;
  std::optional<std::string> description;
  std::vector<std::string> tags;
  boost::json::value context;  // any JSON; {} when the client sent none
  std::optional<std::string> path;
  boost::json::value llm_hints;  // null or an object (see llm_hints.h)
  int64_t version = 0;
  std::string checksum;  // "sha256:<hex>" of CanonicalJson(context)
  std::string visibility = "team";
  std::string sensitivity = "low";
  std::optional<RecordAcl> acl = std::nullopt;  // who else reads and writes it (model/access.h)
  std::optional<int64_t> ttl_micros;  // expiry, microseconds since the epoch
  std::string owner_id;
  std::string created_by;
  std::string updated_by;
  Trace trace;
  int64_t created_at = 0;  // microseconds since the epoch
  int64_t updated_at = 0;
  int64_t size_bytes = 0;  // bytes of the stored context JSON
};

// What a client supplies to create a breadcrumb; the server fills in the rest.
struct BreadcrumbDraft {
  std::optional<std::string> schema_name;
  std::string title;
  std::optional<std::string> description;
  std::vector<std::string> tags;
  boost::json::value context = boost::json::object();
  std::optional<std::string> path;
  boost::json::value llm_hints;
  std::string visibility = "team";
  std::string sensitivity = "low";
  std::optional<RecordAcl> acl = std::nullopt;
  std::optional<int64_t> ttl_micros;
  std::optional<Trace> trace;  // when absent the write is a root of a new trace
};

// A field of a patch: `set` says whether the client named it; `value` is the new value.
template <typename T>
struct PatchField {
  bool set = false;
  T value{};
  void Set(T v) {
    set = true;
    value = std::move(v);
  }
};

// A partial update: only the fields that are set change. Nullable fields use optional values,
// so "set to null" and "leave alone" are different.
struct BreadcrumbPatch {
  PatchField<std::optional<std::string>> schema_name;
  PatchField<std::string> title;
  PatchField<std::optional<std::string>> description;
  PatchField<std::vector<std::string>> tags;
  PatchField<boost::json::value> context;
  PatchField<std::optional<std::string>> path;
  PatchField<boost::json::value> llm_hints;
  PatchField<std::string> visibility;
  PatchField<std::string> sensitivity;
  PatchField<std::optional<RecordAcl>> acl;
  PatchField<std::optional<int64_t>> ttl_micros;

  bool empty() const {
    return !(schema_name.set || title.set || description.set || tags.set || context.set || path.set ||
             llm_hints.set || visibility.set || sensitivity.set || acl.set || ttl_micros.set);
  }
  // Whether it changes who may read or write the record (model/access.h: creator and admins only).
  bool changes_access() const { return visibility.set || sensitivity.set || acl.set; }
};

// Who is acting, for which tenant, and at what time: supplied by the server to every write.
struct WriteContext {
  std::string owner_id = kDefaultTenant;
  std::string actor = "anonymous";
  // Set only by cairn's own writers (executors, the sessions facade and worker), never from a
  // request: the records of runs and sessions (exec/reserved_schema_store.h) need it.
  bool system = false;
  // Whether the writer may write definitions (tool.v1, agent.def.v1, workflow.def.v1): false for an
  // authenticated principal below role developer (exec/reserved_schema_store.h refuses it).
  bool may_define = true;
  // Whose access rules an update or delete of an existing record must respect (model/access.h):
  // set by the server for a principal below admin; absent (cairn itself, --auth=none, admins):
  // no check. The store checks it in the write's transaction (kNotFound / kPermissionDenied).
  std::optional<AccessScope> access = std::nullopt;
};

// One version of a breadcrumb as kept in its history.
struct BreadcrumbVersion {
  int64_t version = 0;
  std::string title;
  std::vector<std::string> tags;
  boost::json::value context;
  std::string checksum;
  std::string updated_by;
  int64_t updated_at = 0;
};

}  // namespace cairn::model
