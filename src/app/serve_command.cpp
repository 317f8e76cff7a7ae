#include "app/serve_command.h"

#include <malloc.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <algorithm>
#include <optional>
#include <random>
#include <mutex>
#include <thread>

#include "app/auth_setup.h"
#include "app/bus_setup.h"
#include "app/llm_setup.h"
#include "app/serve_settings.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/periodic_task.h"
#include "base/thread_name.h"
#include "bus/local_event_bus.h"
#include "bus/ephemeral_hub.h"
#include "exec/agents/agent_supervisor.h"
#include "exec/workflows/workflow_supervisor.h"
#include "model/event_expression.h"
#include "exec/execution_index.h"
#include "exec/execution_migration.h"
#include "exec/executor_host.h"
#include "exec/llm/provider_registry.h"
#include "exec/reserved_schema_store.h"
#include "sessions/session_feed.h"
#include "sessions/session_service.h"
#include "sessions/session_worker.h"
#include "exec/tools/process_sandbox.h"
#include "exec/tools/tool_supervisor.h"
#include "model/reserved.h"
#include "net/outbound_policy.h"
#include "server/auth_handlers.h"
#include "server/mcp_handlers.h"
#include "exec/mcp/mcp_manager.h"
#include "server/breadcrumb_handlers.h"
#include "server/event_handlers.h"
#include "server/selector_handlers.h"
#include "server/workflow_handlers.h"
#include "server/session_handlers.h"
#include "server/http_server.h"
#include "server/system_handlers.h"
#include "server/ui_handlers.h"
#include "server/webhooks/curl_webhook_sender.h"
#include "server/webhooks/webhook_deliverer.h"
#include "server/webhooks/webhook_handlers.h"
#include "store/cached_store.h"
#include "app/search_setup.h"
#include "app/store_setup.h"
#include "search/embedding_models.h"
#include "search/searcher.h"
#include "server/rcrt/rcrt_routes.h"
#include "server/search_handlers.h"

namespace cairn::app {
namespace {

constexpr const char* kVersion = "0.1.0";
// How soon the process delivering webhooks sees one created or changed through another process.
constexpr auto kWebhookRefreshInterval = std::chrono::seconds(2);

struct ListenAddress {
  std::string host;
  uint16_t port = 0;
};

Result<ListenAddress> ParseListen(const std::string& text) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return Status::InvalidArgument("--listen must be HOST:PORT, got '" + text + "'");
  ListenAddress out;
  out.host = text.substr(0, colon);
  if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']') out.host = out.host.substr(1, out.host.size() - 2);
  std::string port = text.substr(colon + 1);
  char* end = nullptr;
  long value = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || value < 0 || value > 65535) {
    return Status::InvalidArgument("--listen port must be 0-65535, got '" + port + "'");
  }
  out.port = static_cast<uint16_t>(value);
  return out;
}

// Written to a temporary name and renamed, so a reader never sees a partial file.
Status WritePortFile(const std::string& path, uint16_t port) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << port << "\n";
    if (!out.flush()) return Status::Internal("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Status::Internal("cannot rename " + tmp + " to " + path);
  return Status::Ok();
}

model::Limits LimitsFrom(const Settings& s) {
  model::Limits limits;
  limits.max_json_depth = static_cast<size_t>(s.GetInt("max_json_depth"));
  limits.max_title_bytes = static_cast<size_t>(s.GetInt("max_title_bytes"));
  limits.max_tags = static_cast<size_t>(s.GetInt("max_tags"));
  limits.max_tag_bytes = static_cast<size_t>(s.GetInt("max_tag_bytes"));
  // What process tools may see of the server's environment (checked when a tool.v1 is written
  // and again when it runs): the operator's allow-list; never the provider keys cairn reads. A
  // malformed provider list stops the start in MakeProviderRegistry.
  limits.tool_env.allow = SplitList(s.GetString("tool_env_allow"));
  if (auto providers = exec::llm::ParseProviderList(s.GetString("llm_providers")); providers.ok()) {
    for (const auto& provider : *providers) {
      if (!provider.api_key_env.empty()) limits.tool_env.secret_names.push_back(provider.api_key_env);
    }
  }
  return limits;
}

int Fail(const Status& status) {
  std::cerr << "cairn serve: " << status.message() << "\n";
  return 1;
}

// glibc gives each thread that allocates heavily an arena of its own and keeps its high-water mark
// resident; with 30-odd worker threads serving large list pages that alone broke the memory
// budget (docs/performance.md). Four arenas are enough for two to a few cores.
void LimitMallocArenas() { mallopt(M_ARENA_MAX, 4); }

// Event streams hold a socket each; lift the soft descriptor limit to the hard one.
void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// What the leases on a sharded part's shards tell the part (ExecutorHost, SessionWorker). A process
// whose leases' connection breaks ends at once, as a lease holder does.
template <typename Part>
store::postgres::PgShardLeases::Callbacks ShardCallbacks(Part& target, const std::string& part) {
  store::postgres::PgShardLeases::Callbacks callbacks;
  callbacks.take = [&target](int shard) { target.TakeShard(shard); };
  callbacks.release = [&target](int shard) { target.ReleaseShard(shard); };
  callbacks.released = [&target](int shard) { return target.ShardReleased(shard); };
  callbacks.tick = [&target] { target.Tick(); };
  callbacks.on_lost = [part] {
    CAIRN_LOG_ERROR("lost the leases on this process's shards of the {}: stopping at once so that no two processes "
                    "run the same",
                    part);
    std::_Exit(75);
  };
  return callbacks;
}

}  // namespace

int RunServe(const std::vector<std::string>& args) {
  Settings settings(ServeSettingSpecs());
  for (const auto& arg : args) {
    if (arg == "--help" || arg == "-h") {
      std::cout << "Usage: cairn serve [options]\n\nServes the cairn HTTP API. Every option can also be set "
                   "with its environment variable; flags win.\n\nOptions:\n"
                << settings.HelpText();
      return 0;
    }
  }
  if (Status parsed = settings.Parse(args, [](const char* name) { return std::getenv(name); }); !parsed.ok()) {
    std::cerr << "cairn serve: " << parsed.message() << "\n";
    return 2;
  }
  if (!InitLogging(settings.GetString("log_level"))) {
    std::cerr << "cairn serve: unknown --log-level '" << settings.GetString("log_level") << "'\n";
    return 2;
  }
  auto listen = ParseListen(settings.GetString("listen"));
  if (!listen.ok()) {
    std::cerr << "cairn serve: " << listen.status().message() << "\n";
    return 2;
  }
  // The one outbound policy of every client-defined destination (webhooks, http tools,
  // http_request): built here once and handed to each user, so they cannot disagree.
  auto parsed_policy = net::OutboundPolicy::Parse(settings.GetString("allow_private_network"));
  if (!parsed_policy.ok()) {
    std::cerr << "cairn serve: " << parsed_policy.status().message() << "\n";
    return 2;
  }
  auto outbound_policy = std::make_shared<const net::OutboundPolicy>(std::move(parsed_policy).value());
  const std::string& sync = settings.GetString("sync");
  if (sync != "full" && sync != "normal") {
    std::cerr << "cairn serve: --sync must be full or normal\n";
    return 2;
  }
  const std::string& wal_checkpoint = settings.GetString("wal_checkpoint");
  if (wal_checkpoint != "background" && wal_checkpoint != "commit") {
    std::cerr << "cairn serve: --wal-checkpoint must be background or commit\n";
    return 2;
  }
  const std::string& role = settings.GetString("role");
  if (role != "all" && role != "api" && role != "worker") {
    std::cerr << "cairn serve: --role must be all, api or worker\n";
    return 2;
  }
  // The executors, session workers, webhook delivery and the sweep: not on an API node.
  const bool background = role != "api";
  if (Status keys = CheckStoreSettings(settings); !keys.ok()) {
    std::cerr << "cairn serve: " << keys.message() << "\n";
    return 2;
  }
  if (Status bus_choice = CheckBusSettings(settings); !bus_choice.ok()) {
    std::cerr << "cairn serve: " << bus_choice.message() << "\n";
    return 2;
  }
  auto work_parts = WorkParts(settings);
  if (!work_parts.ok()) {
    std::cerr << "cairn serve: " << work_parts.status().message() << "\n";
    return 2;
  }
  std::optional<exec::RunAs> tool_user;  // process tools drop to it (docs/executors.md)
  if (const std::string& name = settings.GetString("tool_user"); !name.empty()) {
    auto resolved = exec::ResolveToolUser(name);
    if (!resolved.ok()) {
      std::cerr << "cairn serve: " << resolved.status().message() << "\n";
      return 2;
    }
    tool_user = std::move(resolved).value();
  }

  RaiseFileLimit();
  // Not dumpable: /proc/<pid>/environ and memory of cairn (and of each tool run's keeper, a fork
  // of it) are then closed to other processes of the same user, such as a process tool run
  // without --tool-user, which could otherwise read the provider keys there. No core dumps.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) CAIRN_LOG_WARN("cannot make the process non-dumpable");
  LimitMallocArenas();
  std::error_code fs_error;
  std::filesystem::create_directories(settings.GetString("data_dir"), fs_error);
  if (fs_error) return Fail(Status::Internal("cannot create data dir: " + fs_error.message()));
  // The database holds every record and the webhooks' secrets: only cairn's own user may enter the
  // data dir (a process tool under --tool-user must not read it).
  namespace fs = std::filesystem;
  fs::perms data_perms = fs::status(settings.GetString("data_dir"), fs_error).permissions();
  if (!fs_error && (data_perms & (fs::perms::group_all | fs::perms::others_all)) != fs::perms::none) {
    fs::permissions(settings.GetString("data_dir"), fs::perms::owner_all, fs::perm_options::replace, fs_error);
    if (fs_error) return Fail(Status::Internal("cannot make the data dir private (mode 0700): " + fs_error.message()));
    CAIRN_LOG_INFO("data dir {} made private to cairn's user (mode 0700)", settings.GetString("data_dir"));
  }

  MetricsRegistry metrics;
  const Clock& clock = SystemClock::Instance();
  auto backend = OpenStoreBackend(settings, clock, metrics);
  if (!backend.ok()) return Fail(backend.status());
  store::EventLog& event_log = *backend->event_log;
  store::WebhookStore& webhook_store = *backend->webhook_store;
  store::CursorStore& cursor_store = *backend->cursor_store;
  store::ClaimStore& claim_store = *backend->claim_store;
  store::TextIndex& text_index = *backend->text_index;
  store::VectorStore& vector_store = *backend->vector_store;
  std::unique_ptr<store::Store> records = std::move(backend->store);
  if (!backend->shared) {  // another process may change a shared database's records: no cache then
    records = std::make_unique<store::CachedStore>(std::move(records),
                                                   static_cast<size_t>(settings.GetInt("read_cache_entries")), clock,
                                                   &metrics);
  }
  std::unique_ptr<store::Store> store = std::make_unique<exec::ReservedSchemaStore>(
      std::move(records),
      exec::ReservedSchemaOptions{LimitsFrom(settings), settings.GetInt("executor_max_depth"), outbound_policy});
  // The bus's events: the store's commits, or the cluster's NATS stream in front of the store's log.
  auto bus_source = OpenBusSource(settings, event_log, metrics);
  if (!bus_source.ok()) return Fail(bus_source.status());
  auto started_bus = bus::LocalEventBus::Start((*bus_source)->log(), static_cast<size_t>(settings.GetInt("bus_window_events")),
                                               &metrics);
  if (!started_bus.ok()) return Fail(started_bus.status());
  std::unique_ptr<bus::LocalEventBus> event_bus = std::move(started_bus).value();
  metrics.AddGauge("cairn_store_records", "Breadcrumbs stored (including expired ones not yet swept)", [&store] {
    auto stats = store->Stats();
    return stats.ok() ? static_cast<double>(stats->records) : -1.0;
  });
  metrics.AddGauge("cairn_expression_errors", "Evaluations of selector conditions and input expressions that failed "
                   "(a condition counts them as no match; docs/cel.md)",
                   [] { return static_cast<double>(model::ExpressionErrors()); });

  // The tenants, their keys and secrets (auth's records), before anything that uses a secret.
  auto auth = MakeAuth(settings, listen->host, *store, clock);
  if (!auth.ok()) return Fail(auth.status());
  // With a shared store, keys and tenants another process creates or revokes reach this one's
  // registry through their events (from here on; docs/deploy.md).
  std::unique_ptr<bus::Subscription> auth_feed;
  if (backend->shared) {
    bus::InterestKeys auth_schemas;
    auth_schemas.every_event = false;
    auth_schemas.schemas = {std::string(auth::kTenantSchema), std::string(auth::kKeySchema)};
    auth_feed = event_bus->SubscribeWhen(
        [] {},
        [&keys = *auth->keys](const model::Event& event) {
          keys.Apply(event);
          return false;  // nothing to read afterwards: no wake-up
        },
        std::numeric_limits<int64_t>::max(), std::move(auth_schemas));
  }
  // Secret references (process tools' env, http tools' and webhooks' headers, webhooks' signing
  // secrets, LLM keys) are read through this at each use (docs/secrets.md).
  model::SecretResolver resolve_secret = [&auth](const std::string& tenant, const std::string& name) {
    return auth->secrets->Resolve(tenant, name);
  };
  // Webhook delivery starts after the bus and stops before it.
  server::webhooks::CurlWebhookSender webhook_sender(outbound_policy);
  server::webhooks::DelivererOptions delivery;
  delivery.retry.max_attempts = static_cast<int>(settings.GetInt("webhook_max_attempts"));
  delivery.retry.base_backoff = std::chrono::milliseconds(settings.GetInt("webhook_backoff_base_ms"));
  delivery.retry.max_backoff = std::chrono::milliseconds(settings.GetInt("webhook_backoff_max_ms"));
  delivery.attempt_timeout = std::chrono::milliseconds(settings.GetInt("webhook_timeout_ms"));
  delivery.attempt_threads = static_cast<int>(settings.GetInt("webhook_attempt_threads"));
  delivery.max_context_bytes = static_cast<size_t>(settings.GetInt("event_context_max_bytes"));
  delivery.resolve_secret = resolve_secret;
  auto jitter = [] {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  };
  // A webhook gets what its creator may read (model/access.h); known once auth is made, below,
  // before delivery starts.
  const auth::KeyRegistry* access_keys = nullptr;  // null: --auth=none, every event
  delivery.reader_for = [&access_keys](const std::string& tenant,
                                       const std::string& principal) -> std::optional<model::AccessScope> {
    if (access_keys == nullptr) return std::nullopt;
    return access_keys->AccessScopeFor(tenant, principal);
  };
  server::webhooks::WebhookDeliverer deliverer(webhook_store, *event_bus, webhook_sender, delivery, jitter, &metrics);

  // Executors start after the bus and stop before it (and before the store closes).
  auto providers = MakeProviderRegistry(settings);
  if (!providers.ok()) return Fail(providers.status());
  if ((*providers)->default_provider().empty()) {
    CAIRN_LOG_WARN("no LLM provider is configured: agents answer with an error until one is. Set CAIRN_LLM_BASE_URL "
                   "(and CAIRN_LLM_API_KEY, CAIRN_LLM_MODEL) for any OpenAI-compatible endpoint, or OPENAI_API_KEY / "
                   "OPENROUTER_API_KEY; see docs/agents.md");
  }
  CAIRN_LOG_INFO("{}", (*providers)->Describe());  // "LLM providers: ..., default: ..."
  CAIRN_LOG_INFO("webhooks, http tools and http_request may reach public addresses and {} (--allow-private-network)",
                 outbound_policy->Describe());
  if (auth->enabled) access_keys = auth->keys.get();
  const bool run_executors = background && settings.GetBool("run_executors");
  std::atomic<bool> sweeping{false};  // the sweep runs where webhook delivery does (--work)
  // Search: full text always; vectors with an embedder, computed after the writes by the worker.
  // Models: the configured one, and the previous one while it catches up (docs/search.md).
  auto vector_search = StartVectorSearch(settings, (*providers)->providers(), SplitList(settings.GetString("embed_schemas")),
                                         *store, vector_store, cursor_store, *event_bus, metrics);
  if (!vector_search.ok()) return Fail(vector_search.status());
  // Stopped before the bus (declared after it), then its indexes saved.
  std::unique_ptr<search::EmbeddingModels> embedding_models = std::move(vector_search).value();
  search::Searcher searcher(text_index, embedding_models.get());
  bus::EphemeralHub token_hub;
  // One runtime for every run: the pools, the watchdog and the registry of runs in flight. Each
  // part using it (host, session worker) stops its own runs before the runtime stops.
  exec::RuntimeOptions runtime_options;
  runtime_options.workers = static_cast<int>(settings.GetInt("executor_workers"));
  runtime_options.waiting_workers = static_cast<int>(settings.GetInt("agent_workers"));
  runtime_options.waiting_workers_max = static_cast<int>(settings.GetInt("agent_workers_max"));
  exec::Runtime runtime(runtime_options);
  exec::HostOptions host_options;
  host_options.max_depth = settings.GetInt("executor_max_depth");
  host_options.consumer_threads = static_cast<int>(settings.GetInt("executor_consumer_threads"));
  host_options.searcher = &searcher;
  host_options.reader_for = delivery.reader_for;  // a run reads what its trigger's writer may read
  auto does = [&](const std::string& part) {
    return std::find(work_parts->begin(), work_parts->end(), part) != work_parts->end();
  };
  const bool does_executors = does("executors");
  // With a shared store every worker doing a sharded part (executors, sessions) runs its share of
  // it (shard leases, taken once listening); the other parts have one process each, under a lease.
  auto sharded = [&](const std::string& part) {
    return backend->shared && run_executors && IsShardedWorkPart(part) && does(part);
  };
  const bool sharded_executors = sharded("executors");
  if (sharded_executors) host_options.shards = kWorkShards;
  exec::ExecutorHost executor_host(*store, cursor_store, claim_store, *event_bus, clock, runtime, host_options,
                                   &metrics);
  exec::BuiltinToolOptions builtin_options;
  builtin_options.http_allow_list = SplitList(settings.GetString("http_allow"));
  builtin_options.outbound_policy = outbound_policy;
  builtin_options.http_max_response_bytes = static_cast<size_t>(settings.GetInt("http_tool_max_response_bytes"));
  builtin_options.limits = LimitsFrom(settings);
  builtin_options.process.user = tool_user;
  builtin_options.searcher = &searcher;
  builtin_options.resolve_secret = resolve_secret;
  for (const std::string& warning : exec::ProcessSandboxWarnings(builtin_options.process)) CAIRN_LOG_WARN("{}", warning);
  // MCP servers' tools run where executors run: this process connects to the servers.
  std::shared_ptr<exec::mcp::McpManager> mcp_manager;
  if (run_executors) {
    exec::mcp::McpManagerOptions mcp_options;
    mcp_options.process = builtin_options.process;
    mcp_options.limits = LimitsFrom(settings);
    mcp_options.outbound_policy = outbound_policy;
    mcp_options.progress = &token_hub;
    mcp_options.resolve_secret = builtin_options.resolve_secret;
    mcp_manager = std::make_shared<exec::mcp::McpManager>(*store, *event_bus, mcp_options);
    builtin_options.mcp = mcp_manager;
  }
  exec::ToolSupervisor tools(cursor_store, executor_host, exec::BuiltinToolDeps{*store, *event_bus, clock, builtin_options},
                             LimitsFrom(settings));
  // Each tenant's LLM tokens a day (its own quota, else the setting), counted durably.
  exec::TokenQuota token_quota(cursor_store, clock, settings.GetInt("daily_token_quota"),
                               [&auth](const std::string& tenant) { return auth->keys->DailyTokenQuota(tenant); },
                               &metrics);
  exec::AgentDeps agent_deps{*store, *event_bus, &token_hub, ResolverFor(**providers), &searcher, &executor_host.runs(),
                             delivery.reader_for};
  agent_deps.resolve_secret = resolve_secret;
  agent_deps.quota = &token_quota;
  exec::AgentSupervisor agents(cursor_store, executor_host, agent_deps, LimitsFrom(settings));
  exec::WorkflowSupervisor workflows(cursor_store, executor_host, exec::WorkflowDeps{*store, *event_bus, runtime},
                                     LimitsFrom(settings));
  // Executors call back into the supervisors (definition followers) and use the providers and
  // the token hub: on every way out, the host stops first.
  struct StopExecutorsFirst {
    exec::ExecutorHost& host;
    exec::Runtime& runtime;
    ~StopExecutorsFirst() {
      host.Stop();
      runtime.Stop();  // the session worker, declared later, has stopped already
    }
  } stop_executors_first{executor_host, runtime};
  // At start, the process that does the background work writes the built-ins of every tenant lacking them.
  bool builtin_tools = background && settings.GetBool("builtin_tools");
  bool default_agent = background && settings.GetBool("default_agent");
  // A tenant created while the server runs gets the built-ins at once, from the process that
  // creates it, whatever its role: the tenant's first request may come at once, through any
  // process, and the background work follows the definitions like any other. (Two processes
  // installing at once is harmless: the definitions' paths are unique.) One created before a
  // crash gets them at the next start of the background work.
  auth->keys->OnTenantCreated([&tools, &agents, &settings](const std::string& tenant) {
    if (settings.GetBool("builtin_tools")) CAIRN_RETURN_IF_ERROR(tools.InstallBuiltins(tenant));
    if (settings.GetBool("default_agent")) CAIRN_RETURN_IF_ERROR(agents.InstallDefaultAgent(tenant));
    return Status::Ok();
  });
  // Sessions: the facade the routes call and the worker that runs their executions.
  sessions::SessionService session_service(*store, clock, LimitsFrom(settings));
  sessions::SessionWorker session_worker(*store, agent_deps,
                                         runtime, clock, LimitsFrom(settings),
                                         static_cast<int>(settings.GetInt("session_workers")));
  if (sharded("sessions")) {
    session_worker.EnableShards(kWorkShards, [&auth] { return auth->keys->TenantIds(); });
    metrics.AddGauge("cairn_session_shards_held",
                     "Shards of the sessions this process runs (of the cluster's; docs/deploy.md)",
                     [&session_worker] { return static_cast<double>(session_worker.ShardsHeld()); });
  }
  session_service.SetNotify([&session_worker](const std::string& owner, const std::string& session) {
    session_worker.Schedule(owner, session);
  });
  session_service.SetCancelRunning([&session_worker](const std::string& owner, const std::string& id) {
    return session_worker.Cancel(owner, id);
  });
  exec::ExecutionIndex execution_index(*store, executor_host.runs());
  std::unique_ptr<bus::Subscription> session_feed;  // sessions written through other processes
  // The background work (docs/deploy.md), in parts (--work) that start on their own: with a
  // shared store each under a lease of its own, so different processes may do different parts.
  auto migrate_executions = [&]() -> Status {
    // Execution records written before executions had one shape move to it before anything runs.
    CAIRN_ASSIGN_OR_RETURN(int64_t migrated, exec::MigrateExecutionRecords(*store, cursor_store, model::kDefaultTenant));
    if (migrated > 0) CAIRN_LOG_INFO("moved {} execution records to the current shape (docs/executions.md)", migrated);
    return Status::Ok();
  };
  // The tenants (auth's records) are read as a part starts (a standby taking over knows those
  // created meanwhile): each one's definitions run and its sessions resume.
  auto start_executors = [&]() -> Status {
    if (background) CAIRN_RETURN_IF_ERROR(migrate_executions());
    const std::vector<std::string> tenants = auth->keys->TenantIds();
    CAIRN_RETURN_IF_ERROR(tools.Start(run_executors, builtin_tools, tenants));
    CAIRN_RETURN_IF_ERROR(agents.Start(run_executors, default_agent, tenants));
    CAIRN_RETURN_IF_ERROR(workflows.Start(run_executors, tenants));
    if (mcp_manager) CAIRN_RETURN_IF_ERROR(mcp_manager->Start(tenants));
    return Status::Ok();
  };
  auto start_sessions = [&]() -> Status {
    if (!run_executors) return Status::Ok();
    if (!does_executors) CAIRN_RETURN_IF_ERROR(migrate_executions());  // else done as they start
    if (backend->shared) {
      // Before the worker's recovery scan: a session written through another process after the
      // scan is fed in by its events.
      session_feed = sessions::FollowSessionExecutions(
          *event_bus,
          [&session_worker](const std::string& owner, const std::string& session) {
            session_worker.Schedule(owner, session);
          },
          [&session_worker](const std::string& owner, const std::string& execution) {
            session_worker.CancelSoon(owner, execution);
          });
    }
    return session_worker.Start(auth->keys->TenantIds());
  };
  auto start_webhooks = [&]() -> Status {
    CAIRN_RETURN_IF_ERROR(deliverer.Start());
    sweeping = true;
    return Status::Ok();
  };
  auto start_part = [&](const std::string& part) -> Status {
    if (part == "executors") return start_executors();
    if (part == "sessions") return start_sessions();
    return start_webhooks();
  };
  // With a shared store each part starts once this process holds its lease; meanwhile the API is
  // served (below, after listening). An API process only follows the definitions.
  std::vector<std::pair<std::string, std::unique_ptr<store::postgres::PgLease>>> work_leases;
  if (!background) {
    if (Status started = start_executors(); !started.ok()) return Fail(started);
  } else if (!backend->shared) {
    for (const std::string& part : *work_parts) {
      if (Status started = start_part(part); !started.ok()) return Fail(started);
    }
    if (work_parts->size() < std::size(kWorkParts)) {
      CAIRN_LOG_WARN("--work {}: with a SQLite store no other process does the other parts: they do not run",
                     settings.GetString("work"));
    }
  } else {
    for (const std::string& part : *work_parts) {
      if (!sharded(part)) work_leases.emplace_back(part, MakeWorkLease(settings, part));
    }
  }
  // The sharded parts start at once: every definition is followed and every session's events
  // heard, and what belongs to a shard runs once the shard comes to this process.
  std::vector<std::pair<std::string, std::unique_ptr<store::postgres::PgShardLeases>>> shard_leases;
  std::unique_ptr<bus::Subscription> cancel_feed;  // session runs cancelled through any process
  if (sharded_executors) {
    // Definitions are followed at once; each executor starts when its shard comes to this process.
    if (Status started = start_executors(); !started.ok()) return Fail(started);
    // A session run's tools and sub-agents may run here while the run itself runs elsewhere: its
    // cancel reaches them through its record's event.
    cancel_feed = sessions::FollowSessionExecutions(
        *event_bus, [](const std::string&, const std::string&) {},
        [&executor_host](const std::string& owner, const std::string& execution) {
          executor_host.CancelTreeSoon(owner, execution);
        });
  }
  if (sharded("sessions")) {
    if (Status started = start_sessions(); !started.ok()) return Fail(started);
  }
  for (const char* part : kShardedWorkParts) {
    if (!sharded(part)) continue;
    shard_leases.emplace_back(part, MakeShardLeases(settings, part));
    CAIRN_LOG_INFO("this process does the background work: {}, sharing them with the other workers", part);
  }

  server::Router router;
  server::AddSystemRoutes(router, metrics, kVersion);
  server::AddAuthRoutes(router, *auth->authenticator, LimitsFrom(settings));
  server::AddSecretRoutes(router, *auth->secrets, LimitsFrom(settings));
  server::AddUsageRoutes(router, *auth->keys, token_quota);
  server::AddSearchRoutes(router, searcher, embedding_models.get(), LimitsFrom(settings));  // before /breadcrumbs/{id}
  server::AddBreadcrumbRoutes(router, *store, clock, LimitsFrom(settings));
  server::AddEventRoutes(router, *event_bus, *store, LimitsFrom(settings));
  server::WebhookRouteOptions webhook_routes;
  webhook_routes.limits = LimitsFrom(settings);
  webhook_routes.max_webhooks_per_tenant = static_cast<size_t>(settings.GetInt("webhook_max_per_tenant"));
  webhook_routes.attempt_timeout = delivery.attempt_timeout;
  webhook_routes.outbound_policy = outbound_policy;
  webhook_routes.resolve_secret = resolve_secret;
  server::AddWebhookRoutes(router, webhook_store, webhook_sender, [&deliverer] { return deliverer.Refresh(); },
                           webhook_routes);
  server::AddSelectorRoutes(router, *store, LimitsFrom(settings));
  server::AddWorkflowRoutes(router, *store, LimitsFrom(settings));
  server::AddSessionRoutes(router, session_service, execution_index, *event_bus, LimitsFrom(settings));
  server::AddUiRoutes(router);
  server::AddMcpRoutes(router, server::McpRouteDeps{mcp_manager.get(), store.get(), event_bus.get()});
  // After the native routes: the /rcrt ones call them.
  server::rcrt::RcrtServices rcrt_services{LimitsFrom(settings), webhook_store, [&deliverer] { return deliverer.Refresh(); },
                                          static_cast<size_t>(settings.GetInt("event_context_max_bytes"))};
  if (Status added = server::rcrt::AddRcrtRoutes(router, rcrt_services); !added.ok()) return Fail(added);

  server::HttpServerOptions http;
  http.host = listen->host;
  http.port = listen->port;
  http.io_threads = static_cast<int>(settings.GetInt("io_threads"));
  http.worker_threads = static_cast<int>(settings.GetInt("worker_threads"));
  http.max_body_bytes = static_cast<size_t>(settings.GetInt("max_body_bytes"));
  http.max_header_bytes = static_cast<size_t>(settings.GetInt("max_header_bytes"));
  http.max_connections = settings.GetInt("max_connections");
  http.idle_timeout_ms = settings.GetInt("idle_timeout_ms");
  http.shutdown_grace_ms = settings.GetInt("shutdown_grace_ms");
  http.sse_heartbeat_ms = settings.GetInt("sse_heartbeat_ms");
  http.sse_max_queued_frames = static_cast<size_t>(settings.GetInt("sse_max_queued_frames"));
  http.sse_stall_timeout_ms = settings.GetInt("sse_stall_timeout_ms");
  http.event_context_max_bytes = static_cast<size_t>(settings.GetInt("event_context_max_bytes"));
  if (auth->enabled) {
    http.guards.authenticator = auth->authenticator.get();
    if (auth->principal_rate->enabled()) http.guards.principal_rate = auth->principal_rate.get();
  }
  // Without auth every request is the default tenant's, and counts against its bucket.
  if (auth->tenant_rate->enabled()) http.guards.tenant_rate = auth->tenant_rate.get();
  server::HttpServer server(http, router, metrics, event_bus.get(), &token_hub);
  auto port = server.Listen();
  if (!port.ok()) return Fail(port.status());
  if (!settings.GetString("port_file").empty()) {
    if (Status written = WritePortFile(settings.GetString("port_file"), *port); !written.ok()) return Fail(written);
  }
  CAIRN_LOG_INFO("cairn {} listening on {}:{} (role {}, data in {}, events {}, files in {})", kVersion, listen->host,
                 *port, role, backend->description, (*bus_source)->description(), settings.GetString("data_dir"));
  std::vector<std::thread> lease_waiters;
  std::mutex part_start_mu;  // one part starts at a time, as without leases
  bool parts_closed = false;  // part_start_mu: the server stopped, no part starts any more
  std::atomic<bool> part_failed{false};
  for (auto& [part, lease] : work_leases) {
    lease_waiters.emplace_back([&, &part = part, &lease = lease] {
      NameThisThread("lease-wait");
      Status held = lease->Acquire([&part] {
        CAIRN_LOG_ERROR("lost the lease on the background work's {}: stopping at once so that no two processes do it",
                        part);
        std::_Exit(75);
      });
      if (!held.ok()) return;  // shutting down before this process got the lease
      std::lock_guard starting(part_start_mu);
      if (parts_closed) return;
      CAIRN_LOG_INFO("this process does the background work: {}", part);
      Status started = start_part(part);
      if (started.ok()) return;
      CAIRN_LOG_ERROR("cannot start the background work's {}: {}; shutting down", part, started.message());
      part_failed = true;
      server.Stop();
    });
  }

  for (auto& [part, leases] : shard_leases) {
    leases->Start(part == "executors" ? ShardCallbacks(executor_host, part) : ShardCallbacks(session_worker, part));
  }

  int64_t retention_micros = settings.GetInt("event_retention_ms") * 1000;
  PeriodicTask sweeper(std::chrono::milliseconds(settings.GetInt("sweep_interval_ms")), [&] {
    if (!sweeping) return;
    auto swept = store->SweepExpired();
    if (!swept.ok()) CAIRN_LOG_WARN("sweep failed: {}", swept.status().message());
    auto pruned = event_log.PruneEvents(clock.NowMicros() - retention_micros);
    if (!pruned.ok()) CAIRN_LOG_WARN("event pruning failed: {}", pruned.status().message());
  });
  // Webhooks created or changed through another process reach this one's deliverer here (they
  // have no events); Refresh does nothing where delivery did not start.
  std::optional<PeriodicTask> webhook_refresher;
  if (backend->shared) {
    webhook_refresher.emplace(kWebhookRefreshInterval, [&] {
      if (Status refreshed = deliverer.Refresh(); !refreshed.ok()) {
        CAIRN_LOG_WARN("webhooks: cannot read them again: {}", refreshed.message());
      }
    });
  }
  server.Run();
  if (webhook_refresher) webhook_refresher->Stop();
  {
    std::lock_guard closing(part_start_mu);
    parts_closed = true;
  }
  for (auto& [part, lease] : work_leases) lease->RequestStop();  // ends the waits for them
  for (std::thread& waiter : lease_waiters) waiter.join();
  for (auto& [part, leases] : shard_leases) leases->Halt();  // no shard taken or given up from here on
  session_feed.reset();
  cancel_feed.reset();
  auth_feed.reset();
  sweeper.Stop();
  session_worker.Stop();  // runs in flight stay running; they continue after the next start
  workflows.Stop();
  agents.Stop();
  tools.Stop();
  executor_host.Stop();  // runs in flight are cancelled; they run again after the next start
  // After the host: a call in flight was cancelled with its run (and runs again after the next
  // start) rather than answered "unavailable" by a connection closing under it.
  if (mcp_manager) mcp_manager->Stop();
  deliverer.Stop();   // before the bus: delivery threads hold bus subscriptions
  // Only now may another process take the work over: nothing of it runs here any more.
  for (auto& [part, leases] : shard_leases) leases->Stop();
  for (auto& [part, lease] : work_leases) lease->Stop();
  if (embedding_models) embedding_models->Stop();  // likewise; then the indexes are saved
  event_bus->Stop();  // no wake-ups into the stopped server's streams
  (*bus_source)->Stop();  // the relay reads the store: before it closes
  store->Close();
  CAIRN_LOG_INFO("cairn stopped");
  return part_failed ? 1 : 0;
}

}  // namespace cairn::app
