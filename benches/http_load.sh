#!/usr/bin/env bash
# The HTTP load benchmark (benches/README.md, "HTTP load"): builds a demo server and the load
# generator (examples/load) in release mode, then for each store starts the demo on a free
# loopback port, runs every flow against it and stops it. Prints one Markdown table per store,
# with the machine and the date. Nothing to install beyond the Rust toolchain.
#
#   benches/http_load.sh
#   FLOWS=refresh,bearer CONNECTIONS=8 DURATION=3 benches/http_load.sh
#   SERVER=actix_server STORES=memory benches/http_load.sh
#   GRANTOR_BENCH_POSTGRES_URL="$(.ci/postgres start)" benches/http_load.sh
#
# Stores: memory, a fresh SQLite file, and PostgreSQL only when GRANTOR_BENCH_POSTGRES_URL is
# set (`.ci/postgres start` starts a throwaway cluster and prints its URL). The demo seeds the
# database it is given and adds tokens to it: point it at a database you can spare.
# Environment: SERVER (the demo: axum_server, the default, or actix_server), FLOWS
# (comma-separated, default all), STORES (comma-separated, default
# memory,sqlite,postgres), CONNECTIONS (32), DURATION (10 seconds),
# WARMUP (1 second), LOAD_ARGS (more flags for the load generator, e.g. "--codes 500"),
# RUST_LOG (the demo's log filter, default info: every request is logged, as the demo runs).
set -euo pipefail

cd "$(dirname "$0")/.."

FLOWS="${FLOWS:-all}"
CONNECTIONS="${CONNECTIONS:-32}"
DURATION="${DURATION:-10}"
WARMUP="${WARMUP:-1}"
LOAD_ARGS="${LOAD_ARGS:-}"
SERVER="${SERVER:-axum_server}"
case "$SERVER" in
  axum_server | actix_server) ;;
  *) echo "SERVER is axum_server or actix_server, not $SERVER" >&2; exit 2 ;;
esac

echo "building the demo and the load generator (release)..." >&2
cargo build --release --quiet --features sqlite,postgres,actix --example "$SERVER" --example load
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps \
  | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
DEMO="$TARGET_DIR/release/examples/$SERVER"
LOAD="$TARGET_DIR/release/examples/load"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/grantor-http-load.XXXXXX")"
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# A loopback port free at the time of asking (the demo may still lose it to someone else; the
# banner check below then fails loudly).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
    || echo $((20000 + RANDOM % 20000))
}

# Starts the demo with --store "$1" and waits for its "listening" line; sets BASE.
start_demo() {
  local store="$1" port
  port="$(free_port)"
  : >"$WORK/stdout"
  # Codes made before the code_exchange window must outlive their preparation (20 s at most),
  # the warm-up and the window: the default 60 s is too close.
  RUST_LOG="${RUST_LOG:-info}" "$DEMO" --addr "127.0.0.1:$port" --store "$store" --code-ttl 600 \
    >"$WORK/stdout" 2>"$WORK/stderr" </dev/null &
  SERVER_PID=$!
  for _ in $(seq 1 600); do
    if grep -q "listening on" "$WORK/stdout"; then
      BASE="http://127.0.0.1:$port"
      return 0
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      break
    fi
    sleep 0.1
  done
  echo "the demo did not start with --store ${store%%:*}:" >&2
  tail -n 20 "$WORK/stderr" >&2
  return 1
}

stop_demo() {
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}

ONLY="${STORES:-memory,sqlite,postgres}"
STORES=()
case ",$ONLY," in *,memory,*) STORES+=(memory) ;; esac
case ",$ONLY," in *,sqlite,*) STORES+=("sqlite:$WORK/bench.sqlite3") ;; esac
if [ -n "${GRANTOR_BENCH_POSTGRES_URL:-}" ]; then
  case ",$ONLY," in *,postgres,*) STORES+=("postgres:$GRANTOR_BENCH_POSTGRES_URL") ;; esac
fi

echo "## HTTP load: the ${SERVER%_server} demo (release), $CONNECTIONS connections, ${DURATION} s per flow"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), Linux $(uname -r)"
echo "- load average before: $(cut -d ' ' -f 1-3 /proc/loadavg)"
echo "- rustc: $(rustc --version)"

status=0
for store in "${STORES[@]}"; do
  # Never print a PostgreSQL URL: it may hold a password.
  name="${store%%:*}"
  echo
  echo "### store: $name"
  echo
  start_demo "$store"
  # shellcheck disable=SC2086 # LOAD_ARGS is a list of flags
  "$LOAD" --base "$BASE" --connections "$CONNECTIONS" --duration "$DURATION" \
    --warmup "$WARMUP" --flow "$FLOWS" $LOAD_ARGS || status=$?
  stop_demo
  echo
  echo "- load average after: $(cut -d ' ' -f 1-3 /proc/loadavg)"
done
exit "$status"
