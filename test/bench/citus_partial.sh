#!/usr/bin/env bash
# Per-row cost of kernel_ml's bytea-state transition functions when they are
# called as Citus's worker_partial_agg calls them (issue 20, F7): through a
# fresh FmgrInfo for every row, so fn_extra is always empty, against the
# plain aggregate (one FmgrInfo for the whole scan).  Also checks that both
# give the same state, bit for bit, and that two bases used in turn by the
# fresh-FmgrInfo path are not confused.  Not part of the test suite.
#
#   PG_CONFIG=... PGHOST=... PGPORT=... bash test/bench/citus_partial.sh [rows] [components] [features]
#
# Builds test/bench/citus_fresh_fmgr.c (a test-only module, not kernel_ml.so)
# with PGXS in a temporary folder and loads it by its absolute path into a
# scratch database (kmbench_citus, dropped and created).  Needs kernel_ml
# installed in that server; runs serial plans.
set -euo pipefail
rows=${1:-200000}
m=${2:-200}
d=${3:-10}
reps=${KM_BENCH_REPS:-5}
here=$(cd "$(dirname "$0")" && pwd)
PG_CONFIG=${PG_CONFIG:-pg_config}
db=kmbench_citus

build=$(mktemp -d /tmp/km_citus_fmgr.XXXXXX)
trap 'rm -rf "$build"' EXIT
cp "$here/citus_fresh_fmgr.c" "$here/citus_fresh_fmgr.mk" "$build/"
make -s -C "$build" -f citus_fresh_fmgr.mk PG_CONFIG="$PG_CONFIG" >/dev/null
chmod -R a+rX "$build"
so=$build/citus_fresh_fmgr.so

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
run() { psql -X -q -v ON_ERROR_STOP=1 -d $db "$@"; }
run <<SQL
CREATE EXTENSION kernel_ml;
CREATE FUNCTION fresh_fmgr_sfunc(internal, regprocedure, float8[], float8, jsonb, bytea) RETURNS internal
  AS '$so', 'fresh_fmgr_sfunc' LANGUAGE C;
CREATE FUNCTION fresh_fmgr_sfunc(internal, regprocedure, float8[], jsonb) RETURNS internal
  AS '$so', 'fresh_fmgr_sfunc' LANGUAGE C;
CREATE FUNCTION fresh_fmgr_final(internal) RETURNS bytea AS '$so', 'fresh_fmgr_final' LANGUAGE C;
CREATE AGGREGATE fresh_fmgr(regprocedure, float8[], float8, jsonb, bytea)
  (SFUNC = fresh_fmgr_sfunc, STYPE = internal, FINALFUNC = fresh_fmgr_final);
CREATE AGGREGATE fresh_fmgr(regprocedure, float8[], jsonb)
  (SFUNC = fresh_fmgr_sfunc, STYPE = internal, FINALFUNC = fresh_fmgr_final);
-- the plain aggregates' transition values (no final function)
CREATE AGGREGATE plain_state(float8[], float8, jsonb, bytea) (SFUNC = kernel_train_basis_sfunc, STYPE = bytea);
CREATE AGGREGATE plain_state(float8[], jsonb) (SFUNC = kernel_basis_sfunc, STYPE = bytea);
CREATE TABLE data AS
SELECT i AS id, ARRAY(SELECT sin(i * 0.37 + j) + cos(i * 0.011 * j) FROM generate_series(1, $d) j)::float8[] AS f,
       sin(i * 0.37) AS y
FROM generate_series(1, $rows) i;
CREATE TABLE opts(name text, o jsonb);
INSERT INTO opts VALUES
  ('nystrom', '{"approximation": "nystrom", "components": $m, "seed": 1}'),
  ('rff', '{"approximation": "rff", "components": $m, "seed": 1}'),
  ('rff2', '{"approximation": "rff", "components": $m, "seed": 2}');
CREATE TABLE bases AS SELECT name, (SELECT kernel_basis(f, o) FROM data) AS b FROM opts;
VACUUM ANALYZE data;
SQL

sfunc_train="'kernel_train_basis_sfunc(bytea,float8[],float8,jsonb,bytea)'::regprocedure"
sfunc_basis="'kernel_basis_sfunc(bytea,float8[],jsonb)'::regprocedure"
o() { echo "(SELECT o FROM opts WHERE name = '$1')"; }
b() { echo "(SELECT b FROM bases WHERE name = '$1')"; }

# one run, in ms
once() {
	run -c "SET max_parallel_workers_per_gather = 0" -c '\timing on' -c "$1" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
}
min() { awk "BEGIN{print ($1 < $2) ? $1 : $2}"; }
# the fastest of $reps runs of each of two queries, run in turn (the
# machine's load changes both alike): "plain fresh", in ms
pair() {
	local p=1e99 f=1e99
	for _ in $(seq "$reps"); do
		p=$(min "$(once "$1")" "$p")
		f=$(min "$(once "$2")" "$f")
	done
	echo "$p $f"
}

echo "rows $rows, features $d, components $m, best of $reps; per row in microseconds"
printf '%-32s %10s %10s %7s\n' "transition" "plain" "fresh" "ratio"
report() {
	local name=$1 plain=$2 fresh=$3
	printf '%-32s %10.3f %10.3f %7.2f\n' "$name" \
		"$(awk "BEGIN{print $plain * 1000 / $rows}")" "$(awk "BEGIN{print $fresh * 1000 / $rows}")" \
		"$(awk "BEGIN{print $fresh / $plain}")"
}
for k in nystrom rff; do
	read -r p f < <(pair "SELECT length(plain_state(f, y, $(o $k), $(b $k))) FROM data" \
		"SELECT length(fresh_fmgr($sfunc_train, f, y, $(o $k), $(b $k))) FROM data")
	report "kernel_train(f, y, o, basis) $k" "$p" "$f"
done
for k in nystrom rff; do
	read -r p f < <(pair "SELECT length(plain_state(f, $(o $k))) FROM data" \
		"SELECT length(fresh_fmgr($sfunc_basis, f, $(o $k))) FROM data")
	report "kernel_basis(f, o) $k" "$p" "$f"
done

check=$(run -At -c "SET max_parallel_workers_per_gather = 0" -c "
SELECT bool_and(same) FROM (
  SELECT (SELECT plain_state(f, y, $(o nystrom), $(b nystrom)) FROM data) =
         (SELECT fresh_fmgr($sfunc_train, f, y, $(o nystrom), $(b nystrom)) FROM data)
  UNION ALL
  SELECT (SELECT plain_state(f, y, $(o rff), $(b rff)) FROM data) =
         (SELECT fresh_fmgr($sfunc_train, f, y, $(o rff), $(b rff)) FROM data)
  UNION ALL
  SELECT (SELECT plain_state(f, $(o nystrom)) FROM data) = (SELECT fresh_fmgr($sfunc_basis, f, $(o nystrom)) FROM data)
  UNION ALL
  -- rff and rff2 (other random features, same shape) in turn, row by row, in one scan
  SELECT (SELECT plain_state(f, y, $(o rff), $(b rff)) FROM data) = w.s1 AND
         (SELECT plain_state(f, y, $(o rff2), $(b rff2)) FROM data) = w.s2 AND w.s1 <> w.s2
  FROM (SELECT fresh_fmgr($sfunc_train, f, y, $(o rff), $(b rff)) AS s1,
               fresh_fmgr($sfunc_train, f, y, $(o rff2), $(b rff2)) AS s2 FROM data) w) t(same)")
echo "same states, bit for bit (and two bases in turn kept apart): $check"
[ "$check" = t ]
