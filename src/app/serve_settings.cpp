#include "app/serve_settings.h"

#include "exec/llm/provider_registry.h"

namespace cairn::app {

std::vector<SettingSpec> ServeSettingSpecs() {
  using K = SettingKind;
  constexpr int64_t kMaxInt = INT32_MAX;
  return {
      {"listen", K::kString, "127.0.0.1:8081", "Address and port to serve HTTP on (port 0 picks a free port)."},
      {"data_dir", K::kString, "./cairn-data", "Directory of the embedded database (created if missing)."},
      {"port_file", K::kString, "", "If set, the bound port is written to this file (atomically) once listening."},
      {"log_level", K::kString, "info", "Log level: trace, debug, info, warn, error or off."},
      {"io_threads", K::kInt, "0", "HTTP I/O threads; 0 uses one per hardware thread.", 0, 256},
      {"worker_threads", K::kInt, "32", "Threads for blocking handlers (writes wait for group commit there).", 1, 1024},
      {"sync", K::kString, "full", "SQLite durability: full (fsync every commit) or normal (survives process crashes only)."},
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
      {"webhook_max_per_tenant", K::kInt, "100", "Most webhooks one tenant may register (each has a delivery thread).", 1, 10000},
      {"builtin_tools", K::kBool, "true", "Register the built-in tools (echo, sleep, http_request, breadcrumb_*, wait_for) as tool.v1 records at the first start."},
      {"run_executors", K::kBool, "true", "Run tools (and later agents and workflows) on the event stream; false serves the API only, and triggers wait for a server that runs them."},
      {"executor_workers", K::kInt, "32", "Threads of the runtime's pool for runs that wait on no other run: tools (each executor is further bounded by its own concurrency).", 1, 1024},
      {"executor_max_depth", K::kInt, "16", "A trigger whose trace depth reaches this is answered with a depth_exceeded error instead of running (stops executor loops).", 1, 1000},
      {"agent_workers", K::kInt, "64", "Threads of the runtime's pool for runs that wait on others: agent and session runs (apart from executor_workers, so the tools they wait for always find a free worker).", 1, 1024},
      {"agent_workers_max", K::kInt, "1024", "Most threads the agent_workers pool grows to while every one of them waits (workflows waiting for agent steps and nested workflows on the same pool).", 1, 65536},
      {"session_workers", K::kInt, "16", "Sessions whose executions run at once, on the agent_workers pool (one execution per session at a time).", 1, 1024},
      {"default_agent", K::kBool, "true", "Install the default agent (default-chat-assistant, answering user.message.v1) as an agent.def.v1 record at the first start."},
      {"llm_providers", K::kString, exec::llm::DefaultProviderList(), "The LLM providers, a JSON array of {name, base_url, api_key_env, default_model}; an agent's model \"name/model\" picks one."},
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
      {"embedder", K::kString, "builtin", "What computes the vectors of vector and hybrid search: builtin (offline feature hashing: lexical, not semantic), none (vector search off), or provider/model for an OpenAI-compatible /embeddings endpoint of llm_providers (e.g. openai/text-embedding-3-small; custom/<model> for llm_base_url)."},
      {"embed_schemas", K::kString, "*", "Comma-separated schema names whose records get vectors ('*' matches any run of characters; \"*\" includes records without a schema). Reserved schemas (runs, sessions, definitions, ...) only when named exactly."},
      {"embed_batch_size", K::kInt, "32", "Records embedded per request to the embedder.", 1, 256},
      {"embed_timeout_ms", K::kInt, "60000", "Time limit of one request to a remote embedder.", 100, kMaxInt},
      {"vector_index", K::kString, "hnsw", "How vector search finds the nearest records: hnsw (an approximate index per tenant, built from the stored vectors and saved in the data dir) or exact (a scan of every vector)."},
      {"hnsw_min_vectors", K::kInt, "1000", "Tenants with fewer vectors than this are scanned exactly, without an index (vector_index=hnsw).", 1, kMaxInt},
      {"sweep_interval_ms", K::kInt, "60000", "How often expired (ttl) breadcrumbs, old idempotency keys and events past retention are removed.", 100, kMaxInt},
  };
}

}  // namespace cairn::app
