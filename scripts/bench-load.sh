#!/usr/bin/env bash
# Load benchmark on loopback: a fake OpenAI-compatible model, a wunder server
# using it (SQLite in a temp dir, or PostgreSQL when WUNDER_POSTGRES_DSN is
# set), and `wunder bench` comparing wunder with calling the model directly.
# USERS, RUNS, CHUNK_DELAY (per streamed chunk of the fake model, e.g. 5ms)
# and FIRST_DELAY (before its first chunk: the model's time to first token)
# shape the load.
# Everything it starts listens on 127.0.0.1 and stops when it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/wunder
users=${USERS:-8}
runs=${RUNS:-25}
model_port=${MODEL_PORT:-19100}
port=${PORT:-18100}
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

"$bin" fakellm --addr "127.0.0.1:$model_port" --chunk-delay "${CHUNK_DELAY:-0s}" --first-delay "${FIRST_DELAY:-0s}" 2>"$tmp/fake.log" & pids+=($!)
WUNDER_HOST=127.0.0.1 WUNDER_PORT=$port WUNDER_DATA_DIR="$tmp/data" WUNDER_LOG_LEVEL=warn \
  WUNDER_LLM_PROVIDER=local WUNDER_LLM_BASE_URL="http://127.0.0.1:$model_port/v1" WUNDER_LLM_MODEL=fake \
  "$bin" serve 2>"$tmp/serve.log" & pids+=($!)
for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
"$bin" bench --server "http://127.0.0.1:$port" --users "$users" --runs "$runs" \
  --direct-url "http://127.0.0.1:$model_port/v1" --direct-model fake "$@"
