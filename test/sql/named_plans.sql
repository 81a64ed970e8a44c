-- Scoring by name on one node (issue 33, point 4): what the Citus rewrite
-- (src/catalog/predict_citus.c) must leave as it is.  A prepared statement
-- whose plan is reused sees a deploy between two executions, a role switch
-- is checked again, a parallel plan scores by name in its workers, and a
-- missing model is an error only when a row is scored.
SET extra_float_digits = 0;

CREATE TABLE np_rows AS
SELECT i AS id, ARRAY[sin(i), cos(0.3 * i), (i % 11) / 11.0]::float8[] AS f,
       sin(i) * cos(0.3 * i) AS y
FROM generate_series(1, 3000) i;
ANALYZE np_rows;

SELECT version, deployed FROM kernel_model_train('np_m', 'SELECT f, y FROM np_rows WHERE id <= 300',
  '{"lambda": 0.01, "deploy": "always"}');
SELECT version, deployed FROM kernel_model_train('np_m', 'SELECT f, y FROM np_rows WHERE id <= 300',
  '{"lambda": 1, "deploy": "never"}');

-- the score of row 1 under each version, from the stored bytes
CREATE TABLE np_ref AS
SELECT m.version, kernel_predict(m.model, r.f) AS p
FROM kernel_models m, np_rows r WHERE m.name = 'np_m' AND r.id = 1;
SELECT count(DISTINCT p) AS distinct_scores FROM np_ref;

-- a generic plan, kept across executions
SET plan_cache_mode = force_generic_plan;
PREPARE np_one AS
SELECT v.version FROM np_rows r, np_ref v WHERE r.id = 1 AND v.p = kernel_predict('np_m', r.f);
EXECUTE np_one;
SELECT kernel_model_deploy('np_m', 2);
EXECUTE np_one;
BEGIN;
SELECT kernel_model_deploy('np_m', 1);
EXECUTE np_one;
ROLLBACK;
EXECUTE np_one;
SELECT kernel_model_deploy('np_m', 1);
EXECUTE np_one;

-- the same plan under another role: read access is checked for that role
CREATE ROLE regress_np_reader;
GRANT SELECT ON np_rows, np_ref TO regress_np_reader;
\set VERBOSITY terse
SET ROLE regress_np_reader;
EXECUTE np_one;
RESET ROLE;
EXECUTE np_one;
GRANT SELECT ON kernel_models TO regress_np_reader;
SET ROLE regress_np_reader;
EXECUTE np_one;
RESET ROLE;
REVOKE SELECT ON kernel_models FROM regress_np_reader;
SET ROLE regress_np_reader;
EXECUTE np_one;
RESET ROLE;
\set VERBOSITY default
DEALLOCATE np_one;
RESET plan_cache_mode;

-- a missing model: no error while no row is scored
SELECT kernel_predict('np_missing', f) FROM np_rows WHERE id < 0;
SELECT kernel_predict('np_missing', f) FROM np_rows WHERE id = 1;

-- a parallel plan: each worker looks the model up by name
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM np_rows r
WHERE kernel_predict('np_m', r.f) = kernel_predict((SELECT kernel_model_get('np_m')), r.f);
SELECT count(*) FROM np_rows r
WHERE kernel_predict('np_m', r.f) = kernel_predict((SELECT kernel_model_get('np_m')), r.f);
RESET ALL;

SELECT kernel_model_drop('np_m');
DROP TABLE np_rows, np_ref;
DROP ROLE regress_np_reader;
