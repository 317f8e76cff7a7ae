# scripts/lib/postgres.sh — a throwaway PostgreSQL 15 server in a directory, for scripts/local-cluster
# and bench/cluster/run.sh (the tests have their own, tests/support/postgres_server.h). Source it;
#   pg_start DIR     initdb in DIR/pg and start the server on a Unix socket in DIR only (no TCP),
#                    as `nobody` when run as root (PostgreSQL refuses root); sets PG_SOCKET_DIR
#   pg_create_db DIR NAME   creates a database; prints its libpq URI
#   pg_stop DIR      stops the server (fast)
# PG_OPTIONS adds server options (e.g. "-c synchronous_commit=off").
# shellcheck shell=bash

PG_BIN=/usr/lib/postgresql/15/bin
[[ -x $PG_BIN/initdb ]] || PG_BIN="$(pg_config --bindir 2>/dev/null || true)"
PG_AS=()
PG_USER="$(id -un)"
if [[ $(id -u) -eq 0 ]]; then
  PG_AS=(runuser -u nobody --)
  PG_USER=nobody
fi

pg_start() {
  local dir=$1
  [[ -x $PG_BIN/initdb ]] || { echo "PostgreSQL 15 is not installed (scripts/install-deps test)" >&2; return 2; }
  [[ $(id -u) -eq 0 ]] && chown nobody "$dir"
  "${PG_AS[@]}" "$PG_BIN/initdb" -D "$dir/pg" -U "$PG_USER" --auth=trust -E UTF8 --no-instructions >/dev/null
  "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$dir/pg" -w -l "$dir/pg.log" \
    -o "-c listen_addresses='' -k $dir -p 5432 -c max_connections=300 ${PG_OPTIONS:-}" start >/dev/null
  PG_SOCKET_DIR=$dir
}

pg_create_db() {
  "${PG_AS[@]}" "$PG_BIN/createdb" -h "$1" -p 5432 -U "$PG_USER" "$2"
  echo "postgresql:///$2?host=$1&port=5432&user=$PG_USER"
}

pg_stop() {
  [[ -d $1/pg ]] || return 0
  "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$1/pg" -m fast stop >/dev/null 2>&1 || true
}
