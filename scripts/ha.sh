#!/usr/bin/env bash
# The HA check (test/ha): three wunder replicas on a fresh PostgreSQL
# database behind Debian's haproxy, driven by the Go load driver through
# kill -9, a rolling restart, an approval on a killed replica, cancels and
# an MCP session. It prints the figures and exits non-zero when an
# invariant breaks (docs/operations.md#high-availability-tested).
#
# HA_USERS, HA_RUNS (per load phase), HA_MCP_CALLS, HA_CANCELS shape the
# load; HA_PG is the server (default postgres://postgres@127.0.0.1:5432,
# trust auth), on which a database wunder_ha_<random> is created and
# dropped at the end. Extra arguments go to the driver (-keep keeps the
# logs). Needs haproxy (apt-get install haproxy) and createdb/dropdb.
set -euo pipefail
cd "$(dirname "$0")/.."
pg=${HA_PG:-postgres://postgres@127.0.0.1:5432}
command -v "${HA_HAPROXY:-/usr/sbin/haproxy}" >/dev/null || { echo "ha.sh: haproxy not found (apt-get install haproxy)"; exit 2; }
make -s build >/dev/null 2>&1 || make build
CGO_ENABLED=0 go build -o bin/wunder-ha ./test/ha
db="wunder_ha_$(date +%s)_$RANDOM"
createdb --maintenance-db="$pg/postgres" "$db"
trap 'dropdb --maintenance-db="$pg/postgres" --if-exists --force "$db" || true' EXIT
HA_POSTGRES_DSN="$pg/$db?sslmode=disable" ./bin/wunder-ha -wunder bin/wunder "$@"
