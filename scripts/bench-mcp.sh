#!/usr/bin/env bash
# MCP pass-through on loopback: the go-sdk conformance server called
# directly, through a bare Go reverse proxy (scripts/bareproxy: the floor
# any HTTP pass-through pays here) and through wunder's /wunder/mcp/conf,
# in turn each round, with the load driver of ../shared/bench. Prints
# req/s, p50 and p99 per target and round, and each process's CPU per call
# (from /proc/PID/stat; the upstream's is its CPU while the target ran).
# With a second binary (an earlier build), it is measured in the same rounds
# as "base", so the two builds compare within one run.
#   scripts/bench-mcp.sh [WUNDER_BIN [BASE_BIN]]     C (8) D (4s) ROUNDS (3)
# Needs: the conformance server (CONF_SERVER, default /tmp/conf-server) and
# the driver (BENCH_LOAD, default /tmp/wunder-eval-bin/load);
# docs/benchmarks.md "MCP pass-through" builds both. PORT (18895) is the
# first of the four loopback ports it listens on.
set -euo pipefail
cd "$(dirname "$0")/.."
wunder=${1:-./bin/wunder}
base=${2:-}
c=${C:-8}; d=${D:-4s}; rounds=${ROUNDS:-3}
load=${BENCH_LOAD:-/tmp/wunder-eval-bin/load}
conf=${CONF_SERVER:-/tmp/conf-server}
port=${PORT:-18895}
p_up=$port; p_bare=$((port + 1)); p_w=$((port + 2)); p_base=$((port + 3))
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"; }
trap cleanup EXIT
go build -o "$tmp/bareproxy" ./scripts/bareproxy

"$conf" -http 127.0.0.1:$p_up -stateless="${UPSTREAM_STATELESS:-false}" >"$tmp/conf.log" 2>&1 & up=$!; pids+=($up)
"$tmp/bareproxy" -addr 127.0.0.1:$p_bare -upstream http://127.0.0.1:$p_up 2>"$tmp/bare.log" & bare=$!; pids+=($bare)
printf 'mcp:\n  servers:\n    - {name: conf, transport: streamable-http, url: http://127.0.0.1:%s/mcp}\n' "$p_up" >"$tmp/pt.yaml"
WUNDER_CONFIG_PATH="$tmp/pt.yaml" WUNDER_DATA_DIR="$tmp/data" WUNDER_HOST=127.0.0.1 WUNDER_PORT=$p_w \
  "$wunder" serve 2>"$tmp/serve.log" & w=$!; pids+=($w)
for _ in $(seq 100); do curl -fsS http://127.0.0.1:$p_w/readyz >/dev/null 2>&1 && break; sleep 0.1; done
if [ -n "$base" ]; then
  WUNDER_CONFIG_PATH="$tmp/pt.yaml" WUNDER_DATA_DIR="$tmp/data-base" WUNDER_HOST=127.0.0.1 WUNDER_PORT=$p_base \
    "$base" serve 2>"$tmp/serve-base.log" & b=$!; pids+=($b)
  for _ in $(seq 100); do curl -fsS http://127.0.0.1:$p_base/readyz >/dev/null 2>&1 && break; sleep 0.1; done
fi

ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
one() {  # one LABEL URL PID
  local t0 u0 t1 u1 out
  t0=$(ticks "$3"); u0=$(ticks "$up")
  out=$("$load" mcp -url "$2" -c "$c" -d "$d" -warmup 0s -tool test_simple_text -expect text -q)
  t1=$(ticks "$3"); u1=$(ticks "$up")
  python3 - "$1" "$out" $((t1 - t0)) $((u1 - u0)) "$3" "$up" <<'PY'
import json, sys
label, out, t, u, pid, up = sys.argv[1:]
d = json.loads(out)
n = d["ok"] + d["errors"] or 1
own = "" if pid == up else f"  {label} {int(t) * 10 / n:.3f} ms CPU/call"
print(f'{label:7} {d["rps"]:8.1f} req/s  p50 {d["p50_ms"]:6.2f}  p99 {d["p99_ms"]:6.2f}  errors {d["errors"]}'
      f'  upstream {int(u) * 10 / n:.3f} ms CPU/call{own}')
PY
}
for r in $(seq "$rounds"); do
  echo "round $r (c=$c, $d each)"
  one direct http://127.0.0.1:$p_up/mcp "$up"
  one bare http://127.0.0.1:$p_bare/mcp "$bare"
  # With a base, the two builds swap places every other round, so neither
  # always runs right after the bare proxy.
  if [ -n "$base" ] && [ $((r % 2)) -eq 0 ]; then
    one base http://127.0.0.1:$p_base/wunder/mcp/conf "$b"
    one wunder http://127.0.0.1:$p_w/wunder/mcp/conf "$w"
  else
    one wunder http://127.0.0.1:$p_w/wunder/mcp/conf "$w"
    if [ -n "$base" ]; then one base http://127.0.0.1:$p_base/wunder/mcp/conf "$b"; fi
  fi
done
