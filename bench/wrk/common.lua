-- Shared by the bench/wrk scripts: numbers each wrk thread, and prints the results as key=value
-- lines (prefixed `bench_`) that bench/run.sh parses, next to wrk's usual human-readable report.
local threads_made = 0

function setup(thread)
  thread:set("tid", threads_made)
  threads_made = threads_made + 1
end

function done(summary, latency, requests)
  local e = summary.errors
  local seconds = summary.duration / 1e6
  local ok = summary.requests - e.status
  local out = {
    string.format("bench_requests=%d", summary.requests),
    string.format("bench_non2xx=%d", e.status),
    string.format("bench_socket_errors=%d", e.connect + e.read + e.write + e.timeout),
    string.format("bench_timeouts=%d", e.timeout),
    string.format("bench_seconds=%.3f", seconds),
    string.format("bench_ok_per_sec=%.1f", seconds > 0 and ok / seconds or 0),
    string.format("bench_bytes=%d", summary.bytes),
    string.format("bench_lat_mean_us=%.1f", latency.mean),
    string.format("bench_lat_p50_us=%d", latency:percentile(50)),
    string.format("bench_lat_p90_us=%d", latency:percentile(90)),
    string.format("bench_lat_p99_us=%d", latency:percentile(99)),
    string.format("bench_lat_p999_us=%d", latency:percentile(99.9)),
    string.format("bench_lat_max_us=%d", latency.max),
  }
  io.write(table.concat(out, "\n") .. "\n")
end
