#!/usr/bin/env bash
# Two builds of wunder, alternated on one mock model, by what each costs:
# wunder's CPU per run divided by the mock's in the same run. On a shared
# VM whose speed moves between minutes, throughput says more about the
# machine than about a change; the mock does the same work a run whatever
# wunder does, so wunder's CPU over the mock's is the steadier figure.
# Each pair runs A then B (SWAP=1: B then A), a server of its own each,
# on a fresh data directory, after a warm-up.
#   scripts/bench-ab.sh OLD_BIN NEW_BIN    MODE (tool|notool) N (6000) C (8) PAIRS (3)
# MODE=tool is the harness's one-tool row (A2A 0.3, list_files offered to
# A2A runs); notool is A2A 1.0 SendMessage. Prints, per run: req/s, p50,
# ms of CPU per run of wunder, the mock and the driver, and wunder/mock.
# Needs the harness binaries in BENCH_BIN (default /tmp/wunder-eval-bin;
# ../shared/bench/bench.sh builds them).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_BIN NEW_BIN" >&2; exit 2; }
bin=${BENCH_BIN:-/tmp/wunder-eval-bin}
mode=${MODE:-tool}; n=${N:-6000}; c=${C:-8}; pairs=${PAIRS:-3}
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
mkdir -p "$tmp/ws/benchuser" && echo hi >"$tmp/ws/benchuser/bench-listing-marker.txt"
printf 'workspace:\n  root: %s\na2a:\n  server:\n    user_id: benchuser\n    tool_names: [list_files]\n' "$tmp/ws" >"$tmp/wunder.yaml"
if [ "$mode" = tool ]; then sub=a2a03 text='#call list_files {}' expect=bench-listing-marker
else sub=a2a10 text='#say hello' expect=hello; fi
"$bin/mockllm" -addr 127.0.0.1:18680 -keep 0 >"$tmp/mock.log" 2>&1 & m=$!; pids+=($m)
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
one() {  # one BIN: a server, a warm-up, N runs; prints its figures
  rm -rf "$tmp/data"
  WUNDER_CONFIG_PATH="$tmp/wunder.yaml" WUNDER_HOST=127.0.0.1 WUNDER_PORT=18607 WUNDER_DATA_DIR="$tmp/data" \
    WUNDER_LLM_BASE_URL=http://127.0.0.1:18680/v1 WUNDER_LLM_API_KEY=x WUNDER_LLM_MODEL=mock "$1" serve 2>"$tmp/serve.log" & local w=$!
  for _ in $(seq 100); do curl -fsS http://127.0.0.1:18607/readyz >/dev/null 2>&1 && break; sleep 0.1; done
  "$bin/load" $sub -url http://127.0.0.1:18607/a2a -c "$c" -n 1000 -warmup 0s -text "$text" -expect "$expect" -q >/dev/null
  local w0 m0 w1 m1 out
  w0=$(ticks $w); m0=$(ticks $m)
  out=$( { /usr/bin/time -f '%U %S' "$bin/load" $sub -url http://127.0.0.1:18607/a2a -c "$c" -n "$n" -warmup 0s \
    -text "$text" -expect "$expect" -q 2>"$tmp/drv"; } )
  w1=$(ticks $w); m1=$(ticks $m)
  kill $w; wait $w 2>/dev/null || true
  python3 - "$(basename "$1")" "$out" $((w1 - w0)) $((m1 - m0)) "$(tail -1 "$tmp/drv")" <<'PY'
import json, sys
name, out, wt, mt, drv = sys.argv[1:]
d = json.loads(out); n = d["ok"] + d["errors"] or 1
u, s = map(float, drv.split())
w, m = int(wt) * 10 / n, int(mt) * 10 / n
print(f'{name:16} {d["rps"]:8.1f} req/s  p50 {d["p50_ms"]:6.2f}  errors {d["errors"]}  ms CPU/run: wunder {w:.3f}  mock {m:.3f}  driver {(u + s) * 1000 / n:.3f}  wunder/mock {w / m if m else 0:.2f}')
PY
}
for p in $(seq "$pairs"); do
  echo "pair $p ($mode, c=$c, $n runs each)"
  if [ "${SWAP:-0}" = 1 ]; then one "$2"; one "$1"; else one "$1"; one "$2"; fi
done
