# bench/lib.sh — shell helpers shared by the bench/*/run.sh scripts. Source it after
# setting BENCH_NAME (for log lines), RESULTS (the run's output directory) and LOG (its log file).
# shellcheck shell=bash

log() { printf '[bench/%s %s] %s\n' "$BENCH_NAME" "$(date +%T)" "$*" | tee -a "$LOG" >&2; }
die() { log "error: $*"; exit 1; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# stop_pid PID NAME: SIGTERM, up to 10 s to exit, then SIGKILL; reaps it. No-op for an empty PID.
stop_pid() {
  local pid=$1
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    log "$2 ($pid) did not stop within 10 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# machine_info: the machine's key=value lines (CPU, kernel, memory, load) for machine.txt.
machine_info() {
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "nproc=$(nproc)"
  echo "cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "kernel=$(uname -sr)"
  echo "mem_total_mb=$(awk '/^MemTotal:/ {print int($2/1024)}' /proc/meminfo)"
  echo "loadavg_start=$(loadavg)"
}

# start_cairn CAIRN DATA_DIR [SERVE_FLAGS...]: starts `cairn serve` on 127.0.0.1:0 with its data in
# DATA_DIR/data and its log in $RESULTS/server.log, waits (30 s at most) for the port file, checks
# GET /health; sets SERVER_PID and PORT.
start_cairn() {
  local cairn=$1 dir=$2
  shift 2
  local port_file=$dir/port
  "$cairn" serve --listen 127.0.0.1:0 --data-dir "$dir/data" --port-file "$port_file" --log-level warn "$@" \
    >"$RESULTS/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 300); do  # the file appears atomically
    [[ -s $port_file ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$RESULTS/server.log" >&2; die "the server exited at start-up"; }
    sleep 0.1
  done
  [[ -s $port_file ]] || die "no port file after 30 s"
  PORT=$(grep -oE '[0-9]+' "$port_file" | tail -n 1)
  [[ $PORT =~ ^[0-9]+$ ]] || die "cannot read a port from the port file"
  curl -fsS --max-time 5 "http://127.0.0.1:$PORT/health" >"$RESULTS/health.json" || die "GET /health failed"
}

# start_fixture FIXTURE_JS SCRIPT: the project's scripted LLM server (tests/e2e/llm-node) on a free
# loopback port, not recording requests; sets FIXTURE_PID, FIXTURE_PORT and FIXTURE_URL (…/v1).
# Its output goes to $RESULTS/fixture.log.
start_fixture() {
  local port_file=$RESULTS/fixture.port
  node "$1" --script "$2" --port 0 --port-file "$port_file" --no-record >"$RESULTS/fixture.log" 2>&1 &
  FIXTURE_PID=$!
  for _ in $(seq 1 100); do
    [[ -s $port_file ]] && break
    kill -0 "$FIXTURE_PID" 2>/dev/null || { cat "$RESULTS/fixture.log" >&2; die "the fixture server exited at start-up"; }
    sleep 0.1
  done
  [[ -s $port_file ]] || die "no fixture port file after 10 s"
  FIXTURE_PORT=$(grep -oE '[0-9]+' "$port_file" | head -n 1)
  FIXTURE_URL=http://127.0.0.1:$FIXTURE_PORT/v1
  curl -fsS --max-time 5 "http://127.0.0.1:$FIXTURE_PORT/_health" >/dev/null || die "the fixture server does not answer"
  log "fixture server pid $FIXTURE_PID on $FIXTURE_URL"
}
