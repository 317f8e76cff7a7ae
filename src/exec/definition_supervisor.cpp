#include "exec/definition_supervisor.h"

#include "base/log.h"
#include "model/reserved.h"
#include "store/record_pages.h"

namespace cairn::exec {
namespace json = boost::json;

DefinitionSupervisor::DefinitionSupervisor(store::Store& store, bus::EventBus& bus, store::CursorStore& cursors,
                                           ExecutorHost& host, DefinitionKind kind)
    : store_(store), bus_(bus), cursors_(cursors), host_(host), kind_(std::move(kind)) {}

DefinitionSupervisor::~DefinitionSupervisor() { Stop(); }

std::string DefinitionConsumerId(const std::string& definition_id) { return "exec:" + definition_id; }

Status DefinitionSupervisor::EnsureCursor(const std::string& consumer, int64_t start_seq) {
  CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> stored, cursors_.LoadCursor(consumer));
  return stored ? Status::Ok() : cursors_.SaveCursor(consumer, start_seq);
}

bool DefinitionSupervisor::IsDefinition(const model::Event& event) const {
  return event.schema_name && *event.schema_name == kind_.schema_name && event.type != "breadcrumb.deleted";
}

std::string TenantMarker(const std::string& marker, const std::string& tenant) {
  return tenant == model::kDefaultTenant ? marker : marker + "@" + tenant;
}

Status DefinitionSupervisor::Start(bool run_executors, int64_t start_seq, const std::vector<std::string>& tenants) {
  run_executors_ = run_executors;
  // Woken by definitions of its kind and by changes of records it loaded as definitions.
  subscription_ = bus_.SubscribeWhen(
      [this] {
        std::lock_guard lock(mu_);
        woken_ = true;
        cv_.notify_all();
      },
      [this](const model::Event& event) { return Concerns(event); }, 1024);
  for (const std::string& tenant : tenants) {
    model::BreadcrumbQuery query;
    query.schema_name = kind_.schema_name;
    query.include_context = true;
    query.order = model::SortOrder::kOldestFirst;
    query.limit = 500;
    CAIRN_RETURN_IF_ERROR(store::ForEachRecord(store_, tenant, query, [&](const model::Breadcrumb& crumb) {
      ApplyDefinition(crumb.id, crumb.version, crumb.owner_id, crumb.context, start_seq);
    }));
  }
  thread_ = std::thread([this, start_seq] { Loop(start_seq); });
  return Status::Ok();
}

void DefinitionSupervisor::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  subscription_.reset();
}

Result<DefinitionKind::Built> DefinitionSupervisor::Build(const std::string& id, int64_t version,
                                                           const std::string& owner_id, const json::value& context) {
  auto made = kind_.build(owner_id, context);
  if (!made.ok()) {
    CAIRN_LOG_WARN("{} definition {} is not usable: {}", kind_.label, id, made.status().message());
    return made.status();
  }
  DefinitionKind::Built built = std::move(made).value();
  ExecutorSpec& spec = built.first;
  spec.consumer_id = DefinitionConsumerId(id);
  spec.owner_id = owner_id;
  spec.definition_id = id;
  spec.definition_version = version;
  return built;
}

Result<std::optional<DefinitionKind::Built>> DefinitionSupervisor::Reread(const std::string& id,
                                                                          const std::string& owner_id) {
  auto stored = store_.Get(owner_id, id);
  if (!stored.ok() && stored.status().code() == StatusCode::kNotFound) return std::optional<DefinitionKind::Built>();
  if (!stored.ok()) return stored.status();
  if (stored->schema_name != kind_.schema_name) return std::optional<DefinitionKind::Built>();
  auto built = Build(id, stored->version, owner_id, stored->context);
  if (!built.ok()) return std::optional<DefinitionKind::Built>();
  return std::optional<DefinitionKind::Built>(std::move(built).value());
}

bool DefinitionSupervisor::ApplyDefinition(const std::string& id, int64_t version, const std::string& owner_id,
                                           const json::value& context, int64_t start_seq) {
  std::lock_guard lock(apply_mu_);
  auto it = loaded_.find(id);
  if (it != loaded_.end() && it->second >= version) return true;
  std::string consumer = DefinitionConsumerId(id);
  if (!run_executors_) {
    if (Status ensured = EnsureCursor(consumer, start_seq); !ensured.ok()) {
      CAIRN_LOG_WARN("{} definition {}: saving its first cursor failed: {}", kind_.label, id, ensured.message());
      return true;
    }
    loaded_[id] = version;
    NoteKnown(id, true);
    return true;
  }
  auto built = Build(id, version, owner_id, context);
  if (!built.ok()) return false;
  auto& [spec, executor] = *built;
  std::string name = spec.name;
  // Sharded (ExecutorHost::TakeShard), a consumer that waited dormant starts from its definition
  // as stored then.
  Status started = host_.Upsert(std::move(spec), std::move(executor), start_seq,
                                [this](const model::Event& event) { return Follow(event); },
                                [this, id, owner_id] { return Reread(id, owner_id); });
  if (!started.ok()) {
    CAIRN_LOG_WARN("{} {}: starting its executor failed: {}", kind_.label, name, started.message());
    return true;
  }
  if (host_.Runs(consumer)) {
    CAIRN_LOG_INFO("{} {} {} (definition {} v{})", kind_.label, name, it == loaded_.end() ? "started" : "reloaded", id,
                   version);
  }
  loaded_[id] = version;
  NoteKnown(id, true);
  return true;
}

void DefinitionSupervisor::NoteKnown(const std::string& id, bool known) {
  std::lock_guard lock(known_mu_);
  if (known) {
    known_.insert(id);
  } else {
    known_.erase(id);
  }
}

bool DefinitionSupervisor::Concerns(const model::Event& event) {
  if (event.schema_name && *event.schema_name == kind_.schema_name) return true;
  if (event.type == "breadcrumb.created") return false;
  std::lock_guard lock(known_mu_);
  return known_.count(event.breadcrumb_id) > 0;
}

bool DefinitionSupervisor::Follow(const model::Event& event) {
  bool gone = !IsDefinition(event);
  // The consumer reached its definition's change in its own event order: everything before it was
  // handled with the old definition, everything after it is handled with the new one.
  if (!gone && ApplyDefinition(event.breadcrumb_id, event.version, event.owner_id, event.context, event.seq)) {
    return true;
  }
  {
    std::lock_guard lock(apply_mu_);
    retired_.emplace_back(event.breadcrumb_id, gone);
  }
  {
    std::lock_guard lock(mu_);
    woken_ = true;  // the loop removes the retired consumer (it cannot remove itself)
  }
  cv_.notify_all();
  return false;
}

void DefinitionSupervisor::Loop(int64_t after) {
  while (true) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stop_ || woken_; });
      if (stop_) return;
      woken_ = false;
    }
    while (true) {
      auto events = bus_.Read(after, 256);
      if (!events.ok()) {
        CAIRN_LOG_WARN("{} supervisor: reading events failed: {}", kind_.label, events.status().message());
        break;
      }
      if (events->empty()) break;
      for (const auto& event : *events) {
        after = event->seq;
        bool gone = !IsDefinition(*event);
        bool known;
        {
          std::lock_guard lock(apply_mu_);
          known = loaded_.count(event->breadcrumb_id) > 0;
        }
        // A running executor follows its own definition (Follow); the loop starts new ones, and
        // keeps those that do not run here (sharded, dormant) as their definitions change.
        bool dormant = known && run_executors_ && !host_.Runs(DefinitionConsumerId(event->breadcrumb_id));
        if (!gone && (!known || dormant)) {
          if (!ApplyDefinition(event->breadcrumb_id, event->version, event->owner_id, event->context, event->seq) &&
              dormant) {
            Forget(event->breadcrumb_id);  // not usable: a later usable version starts it anew
          }
        } else if (gone && dormant) {
          Forget(event->breadcrumb_id);
        } else if (gone && known && !run_executors_) {
          {
            std::lock_guard lock(apply_mu_);
            loaded_.erase(event->breadcrumb_id);
          }
          NoteKnown(event->breadcrumb_id, false);
          if (Status deleted = cursors_.DeleteCursor(DefinitionConsumerId(event->breadcrumb_id)); !deleted.ok()) {
            CAIRN_LOG_WARN("{} definition {}: deleting its cursor failed", kind_.label, event->breadcrumb_id);
          }
        }
      }
    }
    ReapRetired();
  }
}

void DefinitionSupervisor::Forget(const std::string& id) {
  {
    std::lock_guard lock(apply_mu_);
    loaded_.erase(id);
  }
  NoteKnown(id, false);
  // The host keeps the dormant executor as it was: where it ran, it may not have reached this
  // change yet; whoever takes its shard next lets it catch up and retire there (TakeShard).
}

void DefinitionSupervisor::ReapRetired() {
  std::vector<std::pair<std::string, bool>> retired;
  {
    std::lock_guard lock(apply_mu_);
    retired.swap(retired_);
    for (const auto& [id, gone] : retired) loaded_.erase(id);
  }
  for (const auto& [id, gone] : retired) NoteKnown(id, false);
  for (const auto& [id, gone] : retired) {
    host_.Remove(DefinitionConsumerId(id), /*forget_cursor=*/gone);
    CAIRN_LOG_INFO("{} definition {} {}", kind_.label, id, gone ? "removed" : "stopped (not usable)");
  }
}

}  // namespace cairn::exec
