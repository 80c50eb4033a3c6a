#!/usr/bin/env bash
# A2A pass-through on loopback: the a2a-go echo peer of ../shared/bench
# (over the mock model) reached through a bare Go reverse proxy
# (scripts/bareproxy: the floor any HTTP pass-through pays here) and
# through wunder's /a2a/echo (publish: true), in turn each round, with the
# load driver of ../shared/bench (a2a10: SendMessage, a new task and context
# per call). Prints req/s per target and the wunder/bare ratio per round.
# With a second binary (an earlier build), it is measured in the same rounds
# as "base", so the two builds compare within one run.
#   scripts/bench-a2a-passthrough.sh [WUNDER_BIN [BASE_BIN]]   C (1 8) D (3s) ROUNDS (3)
# Needs the pieces of ../shared/bench built (BENCH_BIN, default
# /tmp/wunder-eval-bin: mockllm, a2aecho, load; its bench.sh builds them).
# PORT (18590) is the first of the five loopback ports it listens on;
# WUNDER_POSTGRES_DSN in the environment measures PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
wunder=${1:-./bin/wunder}
base=${2:-}
cs=${C:-1 8}; d=${D:-3s}; rounds=${ROUNDS:-3}
bin=${BENCH_BIN:-/tmp/wunder-eval-bin}
port=${PORT:-18590}
p_llm=$port; p_peer=$((port + 1)); p_bare=$((port + 2)); p_w=$((port + 3)); p_base=$((port + 4))
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"; }
trap cleanup EXIT
go build -o "$tmp/bareproxy" ./scripts/bareproxy

"$bin/mockllm" -addr 127.0.0.1:$p_llm -keep 0 >"$tmp/mock.log" 2>&1 & pids+=($!)
"$bin/a2aecho" -addr 127.0.0.1:$p_peer -llm http://127.0.0.1:$p_llm/v1 >"$tmp/peer.log" 2>&1 & pids+=($!)
"$tmp/bareproxy" -addr 127.0.0.1:$p_bare -upstream http://127.0.0.1:$p_peer 2>"$tmp/bare.log" & pids+=($!)
printf 'a2a:\n  services:\n    - {name: echo, endpoint: "http://127.0.0.1:%s", publish: true}\n' "$p_peer" >"$tmp/pt.yaml"
serve() { # serve BIN PORT DATA
  WUNDER_CONFIG_PATH="$tmp/pt.yaml" WUNDER_DATA_DIR="$3" WUNDER_HOST=127.0.0.1 WUNDER_PORT=$2 \
    WUNDER_LOG_LEVEL=warn "$1" serve 2>"$3.log" & pids+=($!)
  for _ in $(seq 100); do curl -fsS http://127.0.0.1:$2/readyz >/dev/null 2>&1 && break; sleep 0.1; done
}
serve "$wunder" $p_w "$tmp/data"
[ -z "$base" ] || serve "$base" $p_base "$tmp/data-base"

rps() { "$bin/load" a2a10 -url "$1" -c "$2" -d "$d" -expect hello -q | python3 -c 'import json,sys; j=json.load(sys.stdin); print(round(j["rps"]), j["errors"])'; }
for c in $cs; do
  for r in $(seq "$rounds"); do
    read -r b be < <(rps http://127.0.0.1:$p_bare/ "$c")
    read -r w we < <(rps http://127.0.0.1:$p_w/a2a/echo "$c")
    line="c=$c round $r: bare $b/s, wunder $w/s ($(python3 -c "print(f'{$w/$b:.2f}')")×)"
    if [ -n "$base" ]; then
      read -r x xe < <(rps http://127.0.0.1:$p_base/a2a/echo "$c")
      line="$line, base $x/s ($(python3 -c "print(f'{$x/$b:.2f}')")×)"
    fi
    echo "$line; errors $be/$we${base:+/$xe}"
  done
done
