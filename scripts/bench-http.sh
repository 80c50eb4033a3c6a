#!/usr/bin/env bash
# POST /wunder (JSON and SSE) beside A2A, on one wunder, with the shared
# harness's mock model and load driver (../shared/bench): each round runs
# A2A 1.0 SendMessage, POST /wunder with "stream": false (the driver's
# `wunder` mode) and with "stream": true (scripts/sseload), and A2A 1.0
# SendStreamingMessage (scripts/sseload -a2a), in turn, and prints req/s,
# p50, p99 and wunder's CPU per run (from /proc/PID/stat).
# With PEERS=1 each round also runs the same two calls against the
# harness's a2a-go peer (a2aecho) answering with one terminal Task
# (-events one, the least the SDK does) and with the SDK's documented
# sequence of submitted task, artifact and completed status (-events full).
#   scripts/bench-http.sh [WUNDER_BIN]     C (8) N (8000 runs per target) ROUNDS (3) PEERS (0)
# WORDS=N makes the answer N words (the mock streams it in N chunks of
# 8 characters) instead of "hello" (one chunk).
# Needs the harness binaries in BENCH_BIN (default /tmp/wunder-eval-bin;
# ../shared/bench/bench.sh builds them).
set -euo pipefail
cd "$(dirname "$0")/.."
wunder=${1:-./bin/wunder}
c=${C:-8}; n=${N:-8000}; rounds=${ROUNDS:-3}
text='#say hello'; expect=hello
if [ "${WORDS:-0}" -gt 0 ]; then
  text="#say $(seq -f 'word%03g' 0 $((WORDS - 1)) | tr '\n' ' ')"; expect=$(printf 'word%03d' $((WORDS - 1)))
fi
bin=${BENCH_BIN:-/tmp/wunder-eval-bin}
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
go build -o "$tmp/sseload" ./scripts/sseload

"$bin/mockllm" -addr 127.0.0.1:18180 >"$tmp/mock.log" 2>&1 & pids+=($!)
WUNDER_HOST=127.0.0.1 WUNDER_PORT=18207 WUNDER_DATA_DIR="$tmp/data" WUNDER_LLM_BASE_URL=http://127.0.0.1:18180/v1 \
  WUNDER_LLM_API_KEY=x WUNDER_LLM_MODEL=mock "$wunder" serve 2>"$tmp/serve.log" & w=$!; pids+=($w)
for _ in $(seq 100); do curl -fsS http://127.0.0.1:18207/readyz >/dev/null 2>&1 && break; sleep 0.1; done
if [ "${PEERS:-0}" = 1 ]; then
  [ -x "$bin/a2aecho" ] || { echo "PEERS=1 needs $bin/a2aecho (../shared/bench/bench.sh builds it)" >&2; exit 1; }
  "$bin/a2aecho" -addr 127.0.0.1:18291 -llm http://127.0.0.1:18180/v1 -events one >"$tmp/echo1.log" 2>&1 & pids+=($!)
  "$bin/a2aecho" -addr 127.0.0.1:18292 -llm http://127.0.0.1:18180/v1 -events full >"$tmp/echo2.log" 2>&1 & pids+=($!)
  for port in 18291 18292; do
    for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$port/.well-known/agent-card.json" >/dev/null 2>&1 && break; sleep 0.1; done
    curl -fsS "http://127.0.0.1:$port/.well-known/agent-card.json" >/dev/null || { echo "a2aecho on $port did not start" >&2; exit 1; }
  done
fi

one() {  # one LABEL COMMAND...  (wunder's CPU per run is shown for wunder's targets only)
  local label=$1 t0 t1 out; shift
  t0=$(awk '{print $14+$15}' "/proc/$w/stat")
  out=$("$@")
  t1=$(awk '{print $14+$15}' "/proc/$w/stat")
  python3 - "$label" "$out" $((t1 - t0)) <<'PY'
import json, sys
label, out, ticks = sys.argv[1:]
d = json.loads(out)
n = d["ok"] + d["errors"] or 1
cpu = "" if label.startswith("a2a-go") else f'  wunder {int(ticks) * 10 / n:.3f} ms CPU/run'
print(f'{label:19} {d["rps"]:8.1f} req/s  p50 {d["p50_ms"]:6.2f}  p99 {d["p99_ms"]:6.2f}  errors {d["errors"]}{cpu}')
PY
}
for r in $(seq "$rounds"); do
  echo "round $r (c=$c, $n runs each)"
  one a2a "$bin/load" a2a10 -url http://127.0.0.1:18207/a2a -c "$c" -n "$n" -warmup 0s -text "$text" -expect "$expect" -q
  one wunder-json "$bin/load" wunder -url http://127.0.0.1:18207 -c "$c" -n "$n" -warmup 0s -text "$text" -expect "$expect" -q
  one wunder-sse "$tmp/sseload" -url http://127.0.0.1:18207 -c "$c" -n "$n" -text "$text" -expect "$expect"
  one a2a-stream "$tmp/sseload" -a2a -url http://127.0.0.1:18207 -c "$c" -n "$n" -text "$text" -expect "$expect"
  if [ "${PEERS:-0}" = 1 ]; then
    for ev in one:18291 full:18292; do
      one "a2a-go-${ev%%:*}" "$bin/load" a2a10 -url "http://127.0.0.1:${ev##*:}/a2a" -c "$c" -n "$n" -warmup 0s -text "$text" -expect "$expect" -q
      one "a2a-go-${ev%%:*}-stream" "$tmp/sseload" -a2a -url "http://127.0.0.1:${ev##*:}" -c "$c" -n "$n" -text "$text" -expect "$expect"
    done
  fi
done
