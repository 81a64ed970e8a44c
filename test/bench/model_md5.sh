#!/bin/bash
# model_md5.sh - md5 of every model of a fixed matrix of trainings through the
# aggregates (methods x representations x tasks, with and without a cv grid,
# GROUP BY, the two-pass basis form), one line per case: "case md5" (or the
# error text).  Deterministic data from generate_series.  Compare the output
# of two builds to check that a refactoring keeps every model bit for bit:
#   bash test/bench/model_md5.sh > before.txt   (on the old build)
#   bash test/bench/model_md5.sh > after.txt && diff before.txt after.txt
# Uses psql from PATH and PGHOST/PGPORT/PGUSER; database ${KM_MD5_DB:-km_md5}.
set -euo pipefail
DB=${KM_MD5_DB:-km_md5}
PGOPTIONS="-c client_min_messages=warning" psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null
psql -X -q -d postgres -c "CREATE DATABASE $DB" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -At -F ' ' <<'SQL'
SET client_min_messages = error;
CREATE EXTENSION kernel_ml;
CREATE TABLE reg AS
SELECT i, ARRAY[sin(i * 0.37), cos(i * 0.11) * 2.0, ((i * 7919) % 101) / 50.0]::float8[] AS f,
       sin(i * 0.37) + 0.5 * cos(i * 0.11) + ((i * 31) % 17) / 40.0 AS y,
       i % 3 AS g
FROM generate_series(1, 1300) i;
CREATE TABLE cls AS
SELECT i, f, CASE WHEN y > 0.6 THEN 'yes' ELSE 'no' END AS yn,
       CASE WHEN y > 1.0 THEN 'a' WHEN y > 0.2 THEN 'b' ELSE 'c' END AS three, g
FROM reg;
CREATE FUNCTION md5_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text; d text;
BEGIN
  EXECUTE q INTO r;
  RETURN r;
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
  RETURN 'ERROR: ' || SQLERRM || ' / ' || d;
END $$;
CREATE TABLE cases(name text, q text);
-- regression: small n for exact, more than two blocks (512 rows) for approximate
INSERT INTO cases
SELECT format('reg %s %s %s', meth, repr, grid),
       format($q$SELECT md5(kernel_train(f, y, %L::jsonb)) FROM reg WHERE i <= %s$q$,
              jsonb_build_object('method', meth, 'seed', 5)
              || CASE repr WHEN 'exact' THEN '{}'::jsonb ELSE jsonb_build_object('approximation', repr, 'components', 40) END
              || CASE WHEN grid = 'single' THEN '{"lambda": 0.01, "gamma": 0.7}'::jsonb
                      WHEN meth = 'ridge' AND repr <> 'exact' THEN '{"lambda": [0.001, 0.1, 1], "gamma": 0.7}'::jsonb
                      ELSE '{"lambda": [0.001, 0.1], "gamma": [0.3, 1.5], "cv": 3}'::jsonb END,
              CASE repr WHEN 'exact' THEN 200 ELSE 1300 END)
FROM unnest(ARRAY['ridge', 'lms', 'svr']) meth, unnest(ARRAY['exact', 'nystrom', 'rff']) repr,
     unnest(ARRAY['single', 'grid']) grid;
-- classification: binary (text), 3 classes
INSERT INTO cases
SELECT format('cls %s %s %s %s', meth, repr, lab, grid),
       format($q$SELECT md5(kernel_train(f, %s, %L::jsonb)) FROM cls WHERE i <= %s$q$, lab,
              jsonb_build_object('method', meth, 'seed', 5)
              || CASE repr WHEN 'exact' THEN '{}'::jsonb ELSE jsonb_build_object('approximation', repr, 'components', 40) END
              || CASE grid WHEN 'grid' THEN '{"lambda": [0.001, 0.1], "gamma": [0.3, 1.5], "cv": 3}'::jsonb
                           ELSE '{"lambda": 0.001, "gamma": 0.7}'::jsonb END,
              CASE repr WHEN 'exact' THEN 200 ELSE 1300 END)
FROM unnest(ARRAY['svm', 'logistic']) meth, unnest(ARRAY['exact', 'nystrom', 'rff']) repr,
     unnest(ARRAY['yn', 'three']) lab, unnest(ARRAY['single', 'grid']) grid;
-- boolean labels, class weights, no intercept / no standardization, max_iter 1
INSERT INTO cases VALUES
 ('cls logistic nystrom bool', $q$SELECT md5(kernel_train(f, yn = 'yes', '{"method": "logistic", "approximation": "nystrom", "components": 30, "gamma": 1, "lambda": 0.001}')) FROM cls$q$),
 ('cls svm rff weights', $q$SELECT md5(kernel_train(f, yn, '{"method": "svm", "approximation": "rff", "components": 30, "gamma": 1, "lambda": 0.001, "class_weight": {"yes": 3}}')) FROM cls$q$),
 ('cls svm rff noint', $q$SELECT md5(kernel_train(f, three, '{"method": "svm", "approximation": "rff", "components": 30, "gamma": 1, "lambda": 0.001, "fit_intercept": false, "standardize": false}')) FROM cls$q$),
 ('cls logistic nystrom maxiter1', $q$SELECT md5(kernel_train(f, three, '{"method": "logistic", "approximation": "nystrom", "components": 30, "gamma": 1, "lambda": 0.001, "max_iter": 1}')) FROM cls$q$),
 ('reg svr nystrom eps', $q$SELECT md5(kernel_train(f, y, '{"method": "svr", "approximation": "nystrom", "components": 30, "gamma": 1, "lambda": 0.001, "epsilon": 0.3}')) FROM reg$q$),
 ('reg svr rff noint', $q$SELECT md5(kernel_train(f, y, '{"method": "svr", "approximation": "rff", "components": 30, "gamma": 1, "lambda": 0.001, "fit_intercept": false, "standardize": false}')) FROM reg$q$),
 ('reg ridge nystrom default', $q$SELECT md5(kernel_train(f, y, '{"approximation": "nystrom"}')) FROM reg$q$),
 ('reg ridge rff lambdas', $q$SELECT md5(kernel_train(f, y, '{"approximation": "rff", "components": 50, "lambda": [0.001, 0.01, 1]}')) FROM reg$q$),
 ('reg svr nystrom m>n', $q$SELECT md5(kernel_train(f, y, '{"method": "svr", "approximation": "nystrom", "components": 100, "gamma": 1}')) FROM reg WHERE i <= 60$q$),
 ('reg ridge nystrom basis2', $q$SELECT md5(kernel_train(f, y, '{"approximation": "nystrom", "components": 40, "gamma": 1, "lambda": 1, "seed": 3}', (SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 40, "gamma": 1, "lambda": 1, "seed": 3}') FROM reg WHERE i <= 700))) FROM reg$q$),
 ('reg ridge exact default', $q$SELECT md5(kernel_train(f, y)) FROM reg WHERE i <= 300$q$),
 ('cls svm exact default', $q$SELECT md5(kernel_train(f, yn)) FROM cls WHERE i <= 300$q$),
 -- errors: the same text
 ('err svr nystrom max_iter', $q$SELECT md5(kernel_train(f, y, '{"method": "svr", "approximation": "nystrom", "components": 30, "gamma": 1, "lambda": 0.0001, "max_iter": 1}')) FROM reg$q$),
 ('err svr rff overflow', $q$SELECT md5(kernel_train(f, y, '{"method": "svr", "approximation": "rff", "components": 30, "gamma": 1, "lambda": 0.001, "standardize": false}')) FROM (SELECT f, CASE WHEN i = 700 THEN 1e305 ELSE y END AS y FROM reg) s$q$),
 ('err ridge nystrom standardize', $q$SELECT md5(kernel_train(f, y, '{"approximation": "nystrom", "components": 30}')) FROM (SELECT CASE WHEN i = 900 THEN ARRAY[1.7e308, -1.7e308, 1.7e308]::float8[] ELSE f END AS f, y FROM reg) s$q$),
 ('err logistic nystrom overflow', $q$SELECT md5(kernel_train(f, three, '{"method": "logistic", "approximation": "nystrom", "components": 30, "gamma": 1, "lambda": 0.001, "standardize": false}')) FROM (SELECT CASE WHEN i = 900 THEN ARRAY[1e300, 1, 1]::float8[] ELSE f END AS f, three FROM cls) s$q$),
 ('err svm rff grid folds', $q$SELECT md5(kernel_train(f, three, '{"method": "svm", "approximation": "rff", "components": 30, "lambda": [0.01, 0.1], "cv": 5000}')) FROM cls$q$);
-- GROUP BY: every group's model, in group order
INSERT INTO cases
SELECT format('group %s %s', meth, repr),
       format($q$SELECT md5(string_agg(md5(m), ',' ORDER BY g)) FROM (SELECT g, kernel_train(f, %s, %L::jsonb) AS m FROM %s GROUP BY g) s$q$,
              CASE WHEN meth IN ('svm', 'logistic') THEN 'three' ELSE 'y' END,
              jsonb_build_object('method', meth, 'approximation', repr, 'components', 30, 'gamma', 0.8, 'lambda', 0.01, 'seed', 2),
              CASE WHEN meth IN ('svm', 'logistic') THEN 'cls' ELSE 'reg' END)
FROM unnest(ARRAY['ridge', 'svr', 'svm', 'logistic']) meth, unnest(ARRAY['nystrom', 'rff']) repr;
SELECT name, md5_of(q) FROM cases ORDER BY name;
SQL
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null
