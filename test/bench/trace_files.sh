#!/usr/bin/env bash
# trace_files.sh [TREE]: the files, layer climbs and returns that a training
# walks through (issue 28's figures), for the tree at TREE (default: this
# one), measured, not read from the code.  Builds TREE's kernel_ml.so with
# every file under -finstrument-functions plus test/bench/trace_hook.c,
# installs it into the PostgreSQL whose pg_config is on PATH (PGHOST / PGPORT
# / PGUSER name its server: use a private one), runs each case below in a
# fresh backend and prints tools/trace_files.py's counts per case.  Reinstall
# the normal build afterwards (make install).
#   bash test/bench/trace_files.sh                 # this tree
#   git worktree add /tmp/old a14e43f && bash test/bench/trace_files.sh /tmp/old
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
tree=$(cd "${1:-$here}" && pwd)
dir=/tmp/km_trace
# KM_TRACE_NOBUILD=1: the instrumented build of TREE is installed already
if [ -z "${KM_TRACE_NOBUILD:-}" ]; then
	cp "$here/test/bench/trace_hook.c" "$tree/test/bench/trace_hook_copy.c"
	make -s -C "$tree" clean >/dev/null 2>&1 || true
	make -s -C "$tree" -j2 KM_EXTRA_CFLAGS="-finstrument-functions" \
		KM_ASAN_OBJS=test/bench/trace_hook_copy.o >/dev/null
	make -s -C "$tree" install KM_ASAN_OBJS=test/bench/trace_hook_copy.o >/dev/null
	rm -f "$tree/test/bench/trace_hook_copy.c" "$tree/test/bench/trace_hook_copy.o"
fi
db=km_trace
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
psql -X -q -d $db <<'SQL' >/dev/null
SET client_min_messages = warning;
CREATE EXTENSION kernel_ml;
CREATE TABLE t AS
SELECT i AS id, ARRAY[sin(i * 0.37), cos(i * 0.11) * 2.0, ((i * 7919) % 101) / 50.0]::float8[] AS f,
       sin(i * 0.37) + 0.5 * cos(i * 0.11) + ((i * 31) % 17) / 40.0 AS y,
       CASE WHEN sin(i * 0.37) + 0.2 * cos(i * 0.11) > 0 THEN 'a' ELSE 'b' END AS label
FROM generate_series(1, 3000) i;
SQL
run_case() {
	local name=$1 sql=$2
	rm -rf "$dir" && mkdir -p "$dir" && chmod 777 "$dir"
	psql -X -q -d $db -c "SET client_min_messages = warning" -c "$sql" >/dev/null
	printf '%-34s ' "$name"
	python3 "$here/tools/trace_files.py" "$tree" "$tree/kernel_ml.so" "$dir"/*.edges
}
run_case "aggregate nystrom ridge" \
	"SELECT length(kernel_train(f, y, '{\"approximation\": \"nystrom\", \"components\": 50}')) FROM t"
run_case "aggregate nystrom logistic" \
	"SELECT length(kernel_train(f, label, '{\"method\": \"logistic\", \"approximation\": \"nystrom\", \"components\": 50}')) FROM t"
run_case "named nystrom ridge" \
	"SELECT version FROM kernel_model_train('tr_ridge', 'SELECT f, y FROM t', '{\"approximation\": \"nystrom\", \"components\": 50}')"
run_case "named nystrom logistic" \
	"SELECT version FROM kernel_model_train('tr_logistic', 'SELECT f, label FROM t', '{\"method\": \"logistic\", \"approximation\": \"nystrom\", \"components\": 50}')"
run_case "named rff svr" \
	"SELECT version FROM kernel_model_train('tr_svr', 'SELECT f, y FROM t', '{\"method\": \"svr\", \"approximation\": \"rff\", \"components\": 50}')"
[ -n "${KM_TRACE_KEEP:-}" ] || rm -rf "$dir"
