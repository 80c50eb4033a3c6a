#!/usr/bin/env bash
# The A2A TCK (github.com/a2aproject/a2a-tck, branch 1.0-dev) run from its
# source against a wunder built from this tree (the scripted demo model
# playing scripts/a2a-tck-model.yaml, the TCK's scenarios with wunder's real
# tools; no API key, loopback), once per binding: JSON-RPC, HTTP+JSON, gRPC.
# Prints one line per binding: passed/failed/skipped/xfailed, and the
# failed tests. None of the TCK's code enters this repository.
#   SRC=/path/to/a2a-tck scripts/a2a-tck.sh        PORT (19301)  PYTHON (/usr/bin/python3)
# Skipped (exit 0, a SKIP line) when SRC is unset or not a TCK checkout, or
# when PYTHON lacks what the TCK imports; REQUIRE=1 makes both a failure.
# With SRC set, the 1.0 card is also validated against the TCK's copy of the
# A2A 1.0 JSON Schema (go test ./agentcard -run JSONSchema).
set -euo pipefail
cd "$(dirname "$0")/.."
src=${SRC:-}
port=${PORT:-19301}
py=${PYTHON:-/usr/bin/python3}
skip() { echo "SKIP: a2a-tck: $*"; [ -z "${REQUIRE:-}" ] && exit 0; exit 1; }
[ -n "$src" ] && [ -d "$src/tests/compatibility" ] || skip "set SRC to a checkout of github.com/a2aproject/a2a-tck (branch 1.0-dev)"

# What the TCK imports, by module: pytest >= 8 (its pyproject's minversion),
# the protobuf runtime its generated stubs need (runtime_version: protobuf
# >= 5.26), googleapis-common-protos (google.api, google.rpc), grpcio,
# httpx, jsonschema.
missing=$("$py" - <<'PY'
import importlib
need = ["pytest", "httpx", "grpc", "jsonschema", "google.protobuf.runtime_version",
        "google.api.annotations_pb2", "google.rpc.status_pb2", "google.rpc.error_details_pb2"]
out = []
for m in need:
    try:
        importlib.import_module(m)
    except Exception:
        out.append(m)
try:
    import pytest
    if int(pytest.__version__.split(".")[0]) < 8:
        out.append(f"pytest>=8 (have {pytest.__version__})")
except Exception:
    pass
print(" ".join(out))
PY
)
[ -z "$missing" ] || skip "$py lacks $missing"
echo "tck: $(cd "$src" && git log --oneline -1 2>/dev/null || echo "$src")"

A2A_TCK_SRC="$src" go test -count=1 -run 'TestCard10' ./agentcard/ | tail -1

tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"; }
trap cleanup EXIT
CGO_ENABLED=0 go build -o "$tmp/wunder" ./cmd/wunder
# The TCK's scenarios (message ids tck-artifact-*, tck-input-required, ...)
# are played by the scripted model with the tools they need.
cat >"$tmp/wunder.yaml" <<YAML
server: {public_url: "http://127.0.0.1:$port"}
llm:
  default: tck
  models:
    tck: {provider: scripted, model: tck, script: "$PWD/scripts/a2a-tck-model.yaml"}
a2a:
  server: {tool_names: [write_file, artifact, ask_user]}
YAML
(cd "$tmp" && WUNDER_CONFIG_PATH="$tmp/wunder.yaml" WUNDER_DATA_DIR="$tmp/data" WUNDER_HOST=127.0.0.1 WUNDER_PORT=$port \
  exec "$tmp/wunder" serve 2>"$tmp/serve.log") & pid=$!
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
url=http://127.0.0.1:$port

for t in jsonrpc http_json grpc; do
  (cd "$src" && "$py" -m pytest tests/compatibility/ --sut-host="$url" --transport="$t" -q -p no:cacheprovider \
    --compatibility-report="$tmp/compat-$t" --junitxml="$tmp/$t.xml" >"$tmp/$t.out" 2>&1) || true
  "$py" - "$t" "$tmp/$t.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
label, path = sys.argv[1:]
try:
    root = ET.parse(path).getroot()
except Exception as e:
    print(f"{label:10} no report ({e})"); sys.exit()
passed, failed, skipped = 0, [], 0
for tc in root.iter("testcase"):
    kinds = {c.tag for c in tc}
    if kinds & {"failure", "error"}:
        failed.append(tc.get("name"))
    elif "skipped" in kinds:
        skipped += 1
    else:
        passed += 1
print(f"{label:10} {passed:3} passed {len(failed):3} failed {skipped:3} skipped" + ("  failed: " + " ".join(failed) if failed else ""))
PY
done
