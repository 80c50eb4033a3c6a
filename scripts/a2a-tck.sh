#!/usr/bin/env bash
# The A2A TCK (github.com/a2aproject/a2a-tck) run from its source against a
# wunder built from this tree (the scripted demo model playing
# scripts/a2a-tck-model.yaml, the TCK's scenarios with wunder's real tools;
# no API key, loopback): branch 1.0-dev once per binding (JSON-RPC,
# HTTP+JSON, gRPC), and, with SRC03, branch 0.3.x's mandatory suite. Prints
# one line per suite: passed/failed/skipped, and the failed tests. None of
# the TCK's code enters this repository.
#   SRC=/path/to/a2a-tck [SRC03=/path/to/a2a-tck@0.3.x] scripts/a2a-tck.sh
#   PORT (19301)  PYTHON (/usr/bin/python3)  KEEP=1 keeps the outputs
# Skipped (exit 0, a SKIP line) when SRC is unset or not a TCK checkout, or
# when PYTHON lacks what the TCK imports; REQUIRE=1 makes both a failure.
# With SRC set, the 1.0 card is also validated against the TCK's copy of the
# A2A 1.0 JSON Schema (go test ./agentcard -run TestCard10).
#
# Debian 12's Python is enough (apt: python3-pytest python3-pytest-asyncio
# python3-httpx python3-grpcio python3-protobuf python3-jsonschema
# python3-jinja2 protobuf-compiler protobuf-compiler-grpc; for 0.3 also
# python3-requests python3-deepdiff python3-openssl python3-yaml
# python3-dotenv python3-packaging python3-responses). Where it falls short
# of the TCK's pins, the script bridges, in a copy of the TCK:
#   - protobuf 3.21 lacks google.protobuf.runtime_version, which the TCK's
#     generated stubs call: they are generated again from the TCK's own
#     a2a.proto with protoc and grpc_python_plugin (and import their
#     a2a_pb2 as the tests do, one module, not two);
#   - googleapis-common-protos has no Debian package: google.api and
#     google.rpc are generated with protoc from the descriptors compiled
#     into wunder's Go dependencies (scripts/protoset);
#   - pytest 7.2 is below the TCK's minversion 8.0, which only guards: the
#     same settings are given in a pytest.ini without it.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${SRC:-}
src03=${SRC03:-}
port=${PORT:-19301}
py=${PYTHON:-/usr/bin/python3}
skip() { echo "SKIP: a2a-tck: $*"; [ -z "${REQUIRE:-}" ] && exit 0; exit 1; }
[ -n "$src" ] && [ -d "$src/tests/compatibility" ] || skip "set SRC to a checkout of github.com/a2aproject/a2a-tck (branch 1.0-dev)"
[ -z "$src03" ] || [ -d "$src03/tests/mandatory" ] || skip "SRC03 is not a checkout of a2a-tck's branch 0.3.x"

# What the TCK imports, by module, beyond what the bridges above supply.
missing=$("$py" - <<'PY'
import importlib
out = []
for m in ["pytest", "pytest_asyncio", "httpx", "grpc", "jsonschema", "jinja2", "google.protobuf"]:
    try:
        importlib.import_module(m)
    except Exception:
        out.append(m)
print(" ".join(out))
PY
)
[ -z "$missing" ] || skip "$py lacks $missing"
for tool in protoc grpc_python_plugin; do
  command -v $tool >/dev/null || skip "no $tool (apt: protobuf-compiler protobuf-compiler-grpc)"
done
echo "tck: $(cd "$src" && git log --oneline -1 2>/dev/null || echo "$src")"

A2A_TCK_SRC="$src" go test -count=1 -run 'TestCard10' ./agentcard/ | tail -1

tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"; }
trap cleanup EXIT

# The bridges: a copy of the TCK with stubs for this protobuf runtime, and
# the googleapis modules, on PYTHONPATH.
tar -C "$src" --exclude=.git -cf - . | (mkdir -p "$tmp/tck" && tar -C "$tmp/tck" -xf -)
mkdir -p "$tmp/py"
googleapis=$(go run ./scripts/protoset -o "$tmp/googleapis.pb")
protoc -I /usr/include --include_imports --descriptor_set_out="$tmp/wkt.pb" \
  google/protobuf/{descriptor,any,duration,empty,struct,timestamp}.proto
protoc --descriptor_set_in="$tmp/wkt.pb:$tmp/googleapis.pb" --python_out="$tmp/py" $googleapis
gen="$tmp/tck/specification/generated"
protoc --descriptor_set_in="$tmp/wkt.pb:$tmp/googleapis.pb" -I "$src/specification" \
  --python_out="$gen" --grpc_out="$gen" --plugin=protoc-gen-grpc="$(command -v grpc_python_plugin)" a2a.proto
sed -i 's/^import a2a_pb2 as a2a__pb2/from specification.generated import a2a_pb2 as a2a__pb2/' "$gen/a2a_pb2_grpc.py"
"$py" - "$src/pyproject.toml" "$tmp/pytest.ini" <<'PY'
import sys, tomllib
opts = tomllib.load(open(sys.argv[1], "rb"))["tool"]["pytest"]["ini_options"]
opts.pop("minversion", None)
with open(sys.argv[2], "w") as f:
    f.write("[pytest]\n")
    for k, v in opts.items():
        f.write(f"{k} =" + ("".join(f"\n    {x}" for x in v) if isinstance(v, list) else f" {v}") + "\n")
PY
export PYTHONPATH="$tmp/py${PYTHONPATH:+:$PYTHONPATH}"

CGO_ENABLED=0 go build -o "$tmp/wunder" ./cmd/wunder
# The TCK's scenarios (message ids tck-artifact-*, tck-input-required, ...)
# are played by the scripted model with the tools they need. The TCK's
# webhook receiver listens on loopback, which the SSRF guard refuses by
# default: a2a.push.allow_private lets push reach it.
cat >"$tmp/wunder.yaml" <<YAML
server: {public_url: "http://127.0.0.1:$port"}
llm:
  default: tck
  models:
    tck: {provider: scripted, model: tck, script: "$PWD/scripts/a2a-tck-model.yaml"}
a2a:
  server: {tool_names: [write_file, artifact, ask_user, reply]}
  push: {allow_private: true}
YAML
(cd "$tmp" && WUNDER_CONFIG_PATH="$tmp/wunder.yaml" WUNDER_DATA_DIR="$tmp/data" WUNDER_HOST=127.0.0.1 WUNDER_PORT=$port \
  exec "$tmp/wunder" serve 2>"$tmp/serve.log") & pid=$!
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
url=http://127.0.0.1:$port

report() {
  "$py" - "$1" "$2" <<'PY'
import sys, xml.etree.ElementTree as ET
label, path = sys.argv[1:]
try:
    root = ET.parse(path).getroot()
except Exception as e:
    print(f"{label:14} no report ({e})"); sys.exit()
passed, failed, skipped = 0, [], 0
for tc in root.iter("testcase"):
    kinds = {c.tag for c in tc}
    if kinds & {"failure", "error"}:
        failed.append(tc.get("name"))
    elif "skipped" in kinds:
        skipped += 1
    else:
        passed += 1
print(f"{label:14} {passed:3} passed {len(failed):3} failed {skipped:3} skipped" + ("  failed: " + " ".join(failed) if failed else ""))
PY
}

for t in jsonrpc http_json grpc; do
  (cd "$tmp/tck" && "$py" -m pytest tests/compatibility/ -c "$tmp/pytest.ini" --rootdir="$tmp/tck" \
    --sut-host="$url" --transport="$t" -q -p no:cacheprovider \
    --compatibility-report="$tmp/compat-$t" --junitxml="$tmp/$t.xml" >"$tmp/$t.out" 2>&1) || true
  report "$t" "$tmp/$t.xml"
done

if [ -n "$src03" ]; then
  echo "tck 0.3: $(cd "$src03" && git log --oneline -1 2>/dev/null || echo "$src03")"
  # run_tck.py --category mandatory, as its pytest command line: the
  # mandatory JSON-RPC and protocol tests with their markers.
  (cd "$src03" && "$py" -m pytest tests/mandatory/ --sut-url="$url/a2a" --test-scope=all -q -p no:cacheprovider \
    -m "mandatory_jsonrpc or mandatory_protocol" --junitxml="$tmp/mandatory03.xml" >"$tmp/mandatory03.out" 2>&1) || true
  report "0.3 mandatory" "$tmp/mandatory03.xml"
fi
