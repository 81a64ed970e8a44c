#!/usr/bin/env bash
# cg_scale.sh - "solver": "cg" against the direct one-pass solve (issue 31):
# 60,000 training rows and 10,000 held-out rows of d = 20 features, a smooth
# target (Friedman #1's terms on the first five features, a sine of the
# others' mean) plus noise of sd 0.1; nystrom ridge by name at lambda 0.1:
# m = 1,500 by the direct solve, m = 6,000 by CG.  Prints each model's
# held-out RMSE, its training time and CG's iterations.
#
# Usage (against the cluster of PGHOST/PGPORT, kernel_ml installed):
#   bash test/bench/cg_scale.sh [direct_m] [cg_m]
set -euo pipefail
DIRECT_M=${1:-1500}
CG_M=${2:-6000}
DB=${PGDATABASE:-postgres}
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" <<EOF
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS cg_bench CASCADE;
CREATE SCHEMA cg_bench;
CREATE EXTENSION IF NOT EXISTS kernel_ml;
SELECT pg_catalog.setseed(0.31);
CREATE TABLE cg_bench.x AS
  SELECT i, ARRAY(SELECT pg_catalog.random() FROM generate_series(1, 20) j WHERE i > 0) AS f
  FROM generate_series(1, 70000) i;
CREATE TABLE cg_bench.rows AS
  SELECT i, f,
         10 * sin(pi() * f[1] * f[2]) + 20 * (f[3] - 0.5) ^ 2 + 10 * f[4] + 5 * f[5]
         + 2 * sin(2 * pi() * (SELECT avg(v) FROM unnest(f[6:20]) v))
         + 0.1 * sqrt(-2 * ln(1 - pg_catalog.random())) * cos(2 * pi() * pg_catalog.random()) AS y
  FROM cg_bench.x;
CREATE TABLE cg_bench.train AS SELECT f, y FROM cg_bench.rows WHERE i <= 60000;
CREATE TABLE cg_bench.test AS SELECT f, y FROM cg_bench.rows WHERE i > 60000;
ANALYZE cg_bench.train;
EOF

run() {
	local name=$1 opts=$2
	local t0 t1
	t0=$(date +%s.%N)
	psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "SELECT kernel_model_train('$name', 'SELECT f, y FROM cg_bench.train', '$opts') IS NOT NULL" >/dev/null
	t1=$(date +%s.%N)
	psql -X -At -d "$DB" -c "SELECT '$name', round(sqrt(avg((kernel_predict('$name', f) - y) ^ 2))::numeric, 4) AS heldout_rmse,
	       round(($t1 - $t0)::numeric, 1) AS train_s,
	       (kernel_model_info('$name'))->>'components' AS m
	  FROM cg_bench.test"
}
echo "model|held-out RMSE|train seconds|m"
run cg_direct "{\"approximation\": \"nystrom\", \"components\": $DIRECT_M, \"lambda\": 0.1, \"test_fraction\": 0, \"deploy\": \"always\"}"
run cg_cg "{\"approximation\": \"nystrom\", \"components\": $CG_M, \"lambda\": 0.1, \"solver\": \"cg\", \"test_fraction\": 0, \"deploy\": \"always\"}"
