# scripts/lib/nats.sh — a throwaway nats-server with JetStream in a directory, for
# scripts/local-cluster and the benchmarks (bench/cluster/run.sh, bench/sse/run.sh); the tests have
# their own, tests/support/nats_server.h. Source it;
#   nats_start DIR PORT   starts `nats-server -js` on 127.0.0.1:PORT (0: a free one), its storage in
#                         DIR/nats and its log in DIR/nats.log; returns once it is ready (non-zero,
#                         with the log on stderr, when it does not start) and sets NATS_URL, NATS_PORT
#                         and NATS_PID (the server's own pid)
#   nats_stop             stops it
# shellcheck shell=bash

NATS_PID=""

nats_start() {
  local dir=$1 port=$2
  command -v nats-server >/dev/null || { echo "nats-server is not installed (scripts/install-deps test)" >&2; return 2; }
  local port_arg=$port
  ((port == 0)) && port_arg=-1  # nats-server's "any free port"
  nats-server -a 127.0.0.1 -p "$port_arg" -js -sd "$dir/nats" > "$dir/nats.log" 2>&1 &
  NATS_PID=$!
  for _ in $(seq 1 100); do  # at most 10 s
    if grep -q "Server is ready" "$dir/nats.log" 2>/dev/null; then
      NATS_PORT=$(grep -oE 'Listening for client connections on [0-9.]+:[0-9]+' "$dir/nats.log" | grep -oE '[0-9]+$')
      NATS_URL="nats://127.0.0.1:$NATS_PORT"
      return 0
    fi
    kill -0 "$NATS_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "nats-server did not start; its log:" >&2
  cat "$dir/nats.log" >&2
  return 1
}

nats_stop() {
  [[ -n $NATS_PID ]] || return 0
  kill "$NATS_PID" 2>/dev/null || true
  wait "$NATS_PID" 2>/dev/null || true
  NATS_PID=""
}
