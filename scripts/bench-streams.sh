#!/usr/bin/env bash
# Memory per open SSE stream: a fake model that never finishes its answer
# (#hang), a wunder server using it, and STREAMS clients (curl) each holding
# a POST /wunder stream open on a run of its own. The server's heap and
# goroutine stacks (from /metrics, after a forced GC through /debug/pprof)
# are read before and with the streams open; the difference per stream is
# the memory of a streamed run: its live state, its model call and its SSE
# response. With FOLLOW=1 the clients instead follow one hanging run
# (GET /wunder/runs/{id}/events), so the difference is the stream's own:
# its connection, handler and follower. Run after `make build`; STREAMS
# defaults to 200 (at most 500, the monitor's page).
# Everything it starts listens on 127.0.0.1 and stops when it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/wunder
n=${STREAMS:-200}
model_port=${MODEL_PORT:-19200}
port=${PORT:-18200}
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

cat >"$tmp/wunder.yaml" <<EOF
concurrency:
  max_active_runs: $((n + 10))
  per_user: 0
observability:
  pprof: true
EOF
"$bin" fakellm --addr "127.0.0.1:$model_port" 2>"$tmp/fake.log" & pids+=($!)
WUNDER_CONFIG_PATH="$tmp/wunder.yaml" WUNDER_HOST=127.0.0.1 WUNDER_PORT=$port WUNDER_DATA_DIR="$tmp/data" \
  WUNDER_LOG_LEVEL=warn WUNDER_LLM_PROVIDER=local WUNDER_LLM_BASE_URL="http://127.0.0.1:$model_port/v1" \
  WUNDER_LLM_MODEL=fake "$bin" serve 2>"$tmp/serve.log" & pids+=($!)
base=http://127.0.0.1:$port
for _ in $(seq 100); do
  curl -fsS "$base/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done

# memory prints heap in use + stack in use, in bytes, after a GC.
memory() {
  curl -fsS -o /dev/null "$base/debug/pprof/heap?gc=1"
  curl -fsS "$base/metrics" | awk '/^go_memstats_heap_inuse_bytes /{h=$2} /^go_memstats_stack_inuse_bytes /{s=$2} END{printf "%.0f\n", h+s}'
}
# running prints the runs the monitor shows running.
running() {
  curl -fsS "$base/wunder/admin/monitor?state=running&limit=500" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))'
}

# One warm-up run, so what every first run loads is in the baseline.
curl -fsS -o /dev/null -X POST "$base/wunder" -H 'Content-Type: application/json' \
  -d '{"user_id":"warm","question":"hello","stream":false}'
if [ "${FOLLOW:-}" = 1 ]; then
  run=$(curl -fsS -X POST "$base/wunder/runs" -H 'Content-Type: application/json' \
    -d '{"user_id":"followed","question":"#hang"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
  for _ in $(seq 300); do
    [ "$(running)" -ge 1 ] && break
    sleep 0.1
  done
  before=$(memory)
  for i in $(seq "$n"); do
    curl -sN -H "X-Request-ID: f$i" "$base/wunder/runs/$run/events" >/dev/null 2>&1 & pids+=($!)
  done
  for _ in $(seq 300); do
    open=$(curl -fsS "$base/metrics" | awk '/^wunder_open_streams /{print int($2)}')
    [ "${open:-0}" -ge "$n" ] && break
    sleep 0.1
  done
  got=${open:-0}
else
  before=$(memory)
  for i in $(seq "$n"); do
    curl -sN -X POST "$base/wunder" -H 'Content-Type: application/json' \
      -d "{\"user_id\":\"s$i\",\"question\":\"#hang\",\"stream\":true}" >/dev/null 2>&1 & pids+=($!)
  done
  for _ in $(seq 300); do
    [ "$(running)" -ge "$n" ] && break
    sleep 0.1
  done
  got=$(running)
fi
after=$(memory)
echo "streams open: $got of $n"
echo "heap+stack in use: before $before B, with the streams $after B"
python3 -c "print('per stream: %.1f KiB' % (($after - $before) / 1024 / $got))"
if [ -n "${HEAP_PROFILE:-}" ]; then curl -fsS -o "$HEAP_PROFILE" "$base/debug/pprof/heap?gc=1"; fi
if [ -n "${GOROUTINES:-}" ]; then curl -fsS -o "$GOROUTINES" "$base/debug/pprof/goroutine?debug=1"; fi
