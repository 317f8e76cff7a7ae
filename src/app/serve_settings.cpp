#include "app/serve_settings.h"

#include "exec/llm/provider_registry.h"

namespace cairn::app {

std::vector<SettingSpec> ServeSettingSpecs() {
  using K = SettingKind;
  constexpr int64_t kMaxInt = INT32_MAX;
  return {
      {"listen", K::kString, "127.0.0.1:8081", "Address and port to serve HTTP on (port 0 picks a free port)."},
      {"data_dir", K::kString, "./cairn-data", "Directory of the embedded database (created if missing); with a PostgreSQL store, of this process's own files (keys, vector indexes)."},
      {"store", K::kString, "sqlite", "Where records and events live: sqlite (embedded, in data_dir) or a PostgreSQL URI (postgresql://user:password@host:5432/db) shared by several cairn processes (docs/deploy.md)."},
      {"role", K::kString, "all", "What this process does: all (the API and the background work: executors, sessions, webhook delivery, the sweep), api (the API only), or worker (the background work, and the API). With a PostgreSQL store one process at a time does each part of the background work (--work); the others wait to take over (docs/deploy.md)."},
      {"bus", K::kString, "local", "How events reach every process: local (this process's store tells its bus) or a NATS URL (nats://host:4222) whose JetStream carries them to every process of a cluster sharing a PostgreSQL store (docs/deploy.md)."},
      {"nats_stream", K::kString, "cairn_events", "The JetStream stream of a NATS bus (subject <stream>.events); clusters sharing one NATS server need a stream each."},
      {"work", K::kString, "executors,sessions,webhooks", "The parts of the background work a process of role all or worker may do, comma-separated: executors (tools, agents, workflows, MCP servers), sessions (session runs), webhooks (webhook delivery and the sweep). With a PostgreSQL store each part is held by one process at a time, so different processes can do different parts (docs/deploy.md)."},
      {"port_file", K::kString, "", "If set, the bound port is written to this file (atomically) once listening."},
      {"log_level", K::kString, "info", "Log level: trace, debug, info, warn, error or off."},
      {"io_threads", K::kInt, "0", "HTTP I/O threads; 0 uses one per hardware thread.", 0, 256},
      {"worker_threads", K::kInt, "32", "Most threads for blocking handlers (writes wait for group commit there): started as requests need them; one idle for 10 s ends.", 1, 1024},
      {"sync", K::kString, "full", "SQLite durability: full (fsync every commit) or normal (survives process crashes only)."},
      {"wal_checkpoint", K::kString, "background", "Who copies SQLite's write-ahead log into the database: background (a thread of its own, off the commit path) or commit (SQLite's automatic checkpoint, in the writer's commits)."},
      {"write_queue_limit", K::kInt, "10000", "Writes waiting for commit beyond this are refused with 429.", 1, kMaxInt},
      {"read_cache_entries", K::kInt, "16384", "Recently read breadcrumbs kept in memory for point reads (0 disables); about 2 KiB each with 1 KiB contexts.", 0, 10'000'000},
      {"write_batch_max", K::kInt, "256", "Most writes committed in one transaction (group commit).", 1, 100000},
      {"max_body_bytes", K::kInt, "2097152", "Largest request body accepted (413 above).", 1024, 1LL << 30},
      {"max_header_bytes", K::kInt, "16384", "Largest request header block accepted (431 above).", 1024, 1 << 20},
      {"max_connections", K::kInt, "10000", "Open HTTP connections (event streams included) beyond which a new one is answered 503 and closed.", 1, kMaxInt},
      {"max_json_depth", K::kInt, "64", "Deepest JSON nesting accepted in bodies and query parameters.", 2, 1000},
      {"max_title_bytes", K::kInt, "1024", "Longest breadcrumb title.", 1, 1 << 20},
      {"max_tags", K::kInt, "64", "Most tags on one breadcrumb.", 0, 10000},
      {"max_tag_bytes", K::kInt, "256", "Longest tag.", 1, 1 << 16},
      {"idle_timeout_ms", K::kInt, "60000", "Idle keep-alive connections (and stalled reads/writes) are closed after this.", 100, kMaxInt},
      {"shutdown_grace_ms", K::kInt, "10000", "On SIGTERM/SIGINT, how long in-flight requests may take to finish.", 0, kMaxInt},
      {"sse_heartbeat_ms", K::kInt, "15000", "A ping frame is sent on every event stream this often.", 100, kMaxInt},
      {"sse_max_queued_frames", K::kInt, "1024", "Frames queued per event stream; while full, the stream reads no further events.", 1, 1'000'000},
      {"sse_stall_timeout_ms", K::kInt, "30000", "A stream whose full queue has not moved for this long is dropped (and told where to resume).", 100, kMaxInt},
      {"event_context_max_bytes", K::kInt, "65536", "Events whose context is larger carry context_omitted: true instead (fetch the breadcrumb).", 0, 1LL << 30},
      {"event_retention_ms", K::kInt, "604800000", "Events older than this are pruned; resuming from before them is 410 Gone.", 1000, INT64_MAX},
      {"bus_window_events", K::kInt, "8192", "Recent events the bus keeps in memory for live subscribers.", 1, 10'000'000},
      {"webhook_timeout_ms", K::kInt, "10000", "Time limit of one webhook delivery attempt (connect, send, receive).", 100, kMaxInt},
      {"webhook_max_attempts", K::kInt, "6", "Delivery attempts per event before it goes to the dead-letter queue.", 1, 1000},
      {"webhook_backoff_base_ms", K::kInt, "1000", "Wait after a webhook's first failed attempt; doubles per attempt, with jitter.", 1, kMaxInt},
      {"webhook_backoff_max_ms", K::kInt, "300000", "Longest wait between webhook attempts (caps Retry-After too).", 1, kMaxInt},
      {"webhook_max_per_tenant", K::kInt, "100", "Most webhooks one tenant may register.", 1, 10000},
      {"webhook_attempt_threads", K::kInt, "32", "Most webhook HTTP attempts in flight at once, over all webhooks: threads started as attempts need them (one idle for 10 s ends); a webhook's backoff between attempts holds none.", 1, 1024},
      {"builtin_tools", K::kBool, "true", "Register the built-in tools (echo, sleep, http_request, breadcrumb_*, wait_for) as tool.v1 records at the first start."},
      {"run_executors", K::kBool, "true", "Run tools (and later agents and workflows) on the event stream; false serves the API only, and triggers wait for a server that runs them."},
      {"executor_workers", K::kInt, "32", "Most threads of the runtime's pool for runs that wait on no other run: tools (each executor is further bounded by its own concurrency). Started as runs need them; one idle for 10 s ends.", 1, 1024},
      {"executor_consumer_threads", K::kInt, "2", "Threads that read the event stream for every executor (tools, agents, workflows) and hand their triggers to the worker pools: fixed, however many definitions there are.", 1, 64},
      {"executor_max_depth", K::kInt, "16", "A trigger whose trace depth reaches this is answered with a depth_exceeded error instead of running (stops executor loops).", 1, 1000},
      {"agent_workers", K::kInt, "2", "Threads kept ready in the runtime's pool for runs that wait on others: agent and session runs (apart from executor_workers, so the tools they wait for always find a free worker). The pool starts one more whenever a run finds none idle, up to agent_workers_max; one idle for 10 s beyond these ends.", 1, 1024},
      {"agent_workers_max", K::kInt, "1024", "Most threads the agent_workers pool grows to while every one of them waits (workflows waiting for agent steps and nested workflows on the same pool).", 1, 65536},
      {"session_workers", K::kInt, "16", "Sessions whose executions run at once, on the agent_workers pool (one execution per session at a time).", 1, 1024},
      {"default_agent", K::kBool, "true", "Install the default agent (default-chat-assistant, answering user.message.v1) as an agent.def.v1 record at the first start."},
      {"llm_providers", K::kString, exec::llm::DefaultProviderList(), "The LLM providers, a JSON array of {name, base_url, api_key_env, api_key_secret, default_model} (api_key_secret: the key is each tenant's secret of that name, docs/secrets.md); an agent's model \"name/model\" picks one."},
      {"llm_default_provider", K::kString, "", "The provider of models named without one; empty: the custom endpoint if set, else the first provider whose API key variable is set."},
      {"llm_base_url", K::kString, "", "An OpenAI-compatible endpoint (e.g. http://localhost:8000/v1); when set it is the provider \"custom\" and the default."},
      {"llm_api_key", K::kString, "", "The API key of the llm_base_url endpoint (sent as a Bearer token; never logged)."},
      {"llm_model", K::kString, "", "The model used on the llm_base_url endpoint when an agent names none."},
      {"llm_request_timeout_ms", K::kInt, "120000", "Time limit of one non-streaming model request.", 100, kMaxInt},
      {"llm_stream_idle_timeout_ms", K::kInt, "60000", "A streaming model reply that sends nothing for this long fails (and is retried if nothing was streamed yet).", 100, kMaxInt},
      {"llm_max_attempts", K::kInt, "4", "Attempts per model request on connection errors, 429 and 5xx (with backoff, jitter and Retry-After).", 1, 20},
      {"llm_backoff_base_ms", K::kInt, "500", "Wait after a model request's first failed attempt; doubles per attempt, with jitter.", 1, kMaxInt},
      {"allow_private_network", K::kString, "", "Comma-separated CIDRs (e.g. 127.0.0.0/8,10.0.0.0/8,fd00::/8) that client-defined destinations (webhooks, http tools, http_request) may reach although they are loopback, private, link-local or another special-purpose range; empty refuses them all. Checked on the resolved address of every connection. Operator URLs (LLM endpoints) are exempt."},
      {"http_allow", K::kString, "", "Comma-separated URL prefixes or host patterns the http_request tool may call ('*' allows all; empty allows none); --allow-private-network applies on top."},
      {"tool_user", K::kString, "", "When cairn runs as root, process tools run as this user (its uid, gid and groups); empty: as cairn's own user (a warning at start when that is root). Unknown users, or a user other than cairn's own when cairn is not root, stop the start."},
      {"tool_env_allow", K::kString, "", "Comma-separated names of server environment variables a process tool's env may pass through ('*' matches any run of characters); CAIRN_* and the LLM provider key variables never pass, whatever this says. Tools always get PATH, LANG, TZ and their own HOME."},
      {"http_tool_max_response_bytes", K::kInt, "1048576", "Largest response body the http_request tool accepts.", 1024, 1LL << 30},
      {"embedder", K::kString, "builtin", "What computes the vectors of vector and hybrid search: builtin (offline feature hashing: lexical, not semantic; builtin/hash-N for N dimensions, 8 to 4096), none (vector search off), or provider/model for an OpenAI-compatible /embeddings endpoint of llm_providers (e.g. openai/text-embedding-3-small; custom/<model> for llm_base_url)."},
      {"embed_schemas", K::kString, "*", "Comma-separated schema names whose records get vectors ('*' matches any run of characters; \"*\" includes records without a schema). Reserved schemas (runs, sessions, definitions, ...) only when named exactly."},
      {"embed_batch_size", K::kInt, "32", "Records embedded per request to the embedder.", 1, 256},
      {"embed_timeout_ms", K::kInt, "60000", "Time limit of one request to a remote embedder.", 100, kMaxInt},
      {"auth", K::kString, "none", "none: whoever reaches the port may do everything (allowed on loopback only, unless insecure_no_auth); on: every request needs an API key or token (docs/auth.md)."},
      {"insecure_no_auth", K::kBool, "false", "Allow auth=none on an address other than loopback (anyone who reaches it may read and write everything)."},
      {"bootstrap_admin_key", K::kString, "", "An API key (at least 32 characters) that is a system admin (creates tenants and their keys) and an admin of the default tenant; never stored."},
      {"jwt_secret", K::kString, "", "The HS256 secret of the tokens of POST /auth/token (at least 32 bytes); empty: a random one kept in <data_dir>/jwt.key."},
      {"jwt_private_key_file", K::kString, "", "A PEM private key (RSA of 2048+ bits: RS256; Ed25519: EdDSA) that signs the tokens instead of jwt_secret."},
      {"master_key", K::kString, "", "The key (64 hex characters: openssl rand -hex 32) that encrypts the secrets of POST /secrets; empty: a random one kept in <data_dir>/master.key (0600)."},
      {"token_ttl_s", K::kInt, "900", "Lifetime of a token from POST /auth/token, in seconds.", 1, 86400},
      {"rate_limit_principal_per_minute", K::kInt, "0", "Requests a minute each principal may make (token bucket; 429 with Retry-After beyond); 0: no limit. With auth=on only.", 0, kMaxInt},
      {"rate_limit_tenant_per_minute", K::kInt, "0", "Requests a minute all principals of one tenant may make together (with auth=none, every request, as the default tenant's); 0: no limit.", 0, kMaxInt},
      {"rate_limit_burst", K::kInt, "60", "Requests a principal (or tenant) may make at once before its per-minute rate applies.", 1, kMaxInt},
      {"daily_token_quota", K::kInt, "0", "LLM tokens the agents of each tenant may use per UTC day (counted from the usage the providers report; docs/auth.md); 0: unlimited. A tenant's own daily_token_quota (POST /tenants, PATCH /tenants/{tenant}) overrides it.", 0, kMaxInt},
      {"vector_index", K::kString, "hnsw", "How vector search finds the nearest records: hnsw (an approximate index per tenant, built from the stored vectors and saved in the data dir) or exact (a scan of every vector)."},
      {"hnsw_min_vectors", K::kInt, "1000", "Tenants with fewer vectors than this are scanned exactly, without an index (vector_index=hnsw).", 1, kMaxInt},
      {"sweep_interval_ms", K::kInt, "60000", "How often expired (ttl) breadcrumbs, old idempotency keys and events past retention are removed.", 100, kMaxInt},
  };
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) out.push_back(std::move(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace cairn::app
