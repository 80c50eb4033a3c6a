#!/usr/bin/env bash
# The stores end to end: A2A 1.0 SendMessage (no tool) at c=32 through a
# server on SQLite and one on PostgreSQL, each on an empty store and, with
# SEED=1, on one that already holds a history (`wunder bench seed`: 100,000
# sessions and 1,000,000 events unless SESSIONS / EVENTS say otherwise),
# with the shared harness's mock model and load driver. Every server runs at
# once and the targets take turns each round, each round starting one
# target later, so a machine whose speed drifts slows each alike. Prints req/s, p50, wunder's CPU per run and,
# for PostgreSQL, the database server's (every process of its user), then
# the medians' ratios: PostgreSQL / SQLite (issue 13's target: 0.7x at
# c=32, synchronous_commit on as shipped) and seeded / empty (within 10%).
#   scripts/bench-store.sh [WUNDER_BIN]   C (32) N (12000 runs a target) ROUNDS (4) SEED (0)
# PostgreSQL: DSN_BASE (postgres://postgres@127.0.0.1:5432) names a server
# on which the script may create and drop the databases wunder_bench_empty
# and wunder_bench_seeded. Needs the harness binaries in BENCH_BIN (default
# /tmp/wunder-eval-bin; ../shared/bench/bench.sh builds them) and psql.
set -euo pipefail
cd "$(dirname "$0")/.."
wunder=${1:-./bin/wunder}
c=${C:-32}; n=${N:-12000}; rounds=${ROUNDS:-4}; seed=${SEED:-0}
base=${DSN_BASE:-postgres://postgres@127.0.0.1:5432}
bin=${BENCH_BIN:-/tmp/wunder-eval-bin}
tmp=$(mktemp -d)
pids=()
dbs=(wunder_bench_empty)
[ "$seed" = 1 ] && dbs+=(wunder_bench_seeded)
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true
  for db in "${dbs[@]}"; do psql -q "$base/postgres?sslmode=disable" -c "drop database if exists $db" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
for db in "${dbs[@]}"; do
  psql -q "$base/postgres?sslmode=disable" -c "drop database if exists $db" -c "create database $db" >/dev/null
done

names=(sqlite postgres); dsns=("" "$base/wunder_bench_empty?sslmode=disable")
if [ "$seed" = 1 ]; then
  names+=(sqlite-seeded postgres-seeded); dsns+=("" "$base/wunder_bench_seeded?sslmode=disable")
  for i in 2 3; do
    echo "seeding ${names[$i]} ..."
    WUNDER_DATA_DIR="$tmp/${names[$i]}" WUNDER_POSTGRES_DSN="${dsns[$i]}" "$wunder" bench seed \
      --sessions "${SESSIONS:-100000}" --events "${EVENTS:-1000000}" 2>"$tmp/seed.log" | tail -1
  done
fi

"$bin/mockllm" -addr 127.0.0.1:18480 -keep 0 >"$tmp/mock.log" 2>&1 & pids+=($!)
spids=()
for i in "${!names[@]}"; do
  WUNDER_HOST=127.0.0.1 WUNDER_PORT=$((18481 + i)) WUNDER_DATA_DIR="$tmp/${names[$i]}" WUNDER_POSTGRES_DSN="${dsns[$i]}" \
    WUNDER_LLM_BASE_URL=http://127.0.0.1:18480/v1 WUNDER_LLM_API_KEY=x WUNDER_LLM_MODEL=mock \
    "$wunder" serve 2>"$tmp/${names[$i]}.log" & spids+=($!); pids+=($!)
done
for i in "${!names[@]}"; do  # ready, then a warm-up
  url=http://127.0.0.1:$((18481 + i))
  for _ in $(seq 200); do curl -fsS "$url/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -fsS "$url/readyz" >/dev/null || { echo "${names[$i]}: the server did not start (see its log)" >&2; cat "$tmp/${names[$i]}.log" >&2; exit 1; }
  "$bin/load" a2a10 -url "$url/a2a" -c "$c" -n 2000 -warmup 0s -text '#say hello' -expect hello -q >/dev/null
done

ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
pgticks() {  # the database server's CPU: every process of its user (PG_USER, postgres)
  for p in $(pgrep -u "${PG_USER:-postgres}"); do awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null; done | awk '{s+=$1} END{print s+0}'
}
: >"$tmp/results"
for r in $(seq "$rounds"); do
  echo "round $r (A2A 1.0 no tool, c=$c, $n runs each)"
  # Each round starts one target later: a database server's background
  # writes after a target's runs (checkpoints, vacuum) slow the target
  # that follows, and so no target always follows the same one.
  for k in "${!names[@]}"; do
    i=$(( (k + r - 1) % ${#names[@]} )); name=${names[$i]}
    w0=$(ticks "${spids[$i]}"); p0=$(pgticks)
    out=$("$bin/load" a2a10 -url "http://127.0.0.1:$((18481 + i))/a2a" -c "$c" -n "$n" -warmup 0s -text '#say hello' -expect hello -q)
    w1=$(ticks "${spids[$i]}"); p1=$(pgticks)
    python3 - "$name" "$out" $((w1 - w0)) $((p1 - p0)) "$tmp/results" <<'PY'
import json, sys
name, out, w, p, results = sys.argv[1:]
d = json.loads(out)
n = d["ok"] + d["errors"] or 1
db = f'  postgres {int(p) * 10 / n:.3f} ms CPU/run' if name.startswith("postgres") else ""
print(f'{name:16} {d["rps"]:8.1f} req/s  p50 {d["p50_ms"]:6.2f}  p99 {d["p99_ms"]:6.2f}  errors {d["errors"]}'
      f'  wunder {int(w) * 10 / n:.3f} ms CPU/run{db}')
open(results, "a").write(f'{name} {d["rps"]}\n')
PY
  done
done
python3 - "$tmp/results" <<'PY'
import statistics, sys
rates = {}
for line in open(sys.argv[1]):
    name, rps = line.split()
    rates.setdefault(name, []).append(float(rps))
med = {k: statistics.median(v) for k, v in rates.items()}
print("medians: " + ", ".join(f"{k} {v:.0f} req/s" for k, v in med.items()))
def ratio(a, b, label):
    if a in med and b in med:
        per = [x / y for x, y in zip(rates[a], rates[b])]
        print(f"{label}: {med[a] / med[b]:.2f}x (rounds {', '.join(f'{x:.2f}' for x in per)})")
ratio("postgres", "sqlite", "PostgreSQL / SQLite, empty")
ratio("postgres-seeded", "sqlite-seeded", "PostgreSQL / SQLite, seeded")
ratio("sqlite-seeded", "sqlite", "SQLite seeded / empty")
ratio("postgres-seeded", "postgres", "PostgreSQL seeded / empty")
PY
