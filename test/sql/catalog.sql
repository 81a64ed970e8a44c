-- Named models: catalog, versions, deployment policies, rollback, errors
SET extra_float_digits = 0;

-- the SQLSTATE and message a statement ends with
CREATE FUNCTION pg_temp.outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

CREATE TABLE cat_houses AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f,
       2 * sin(i) + cos(0.7 * i) * (i % 7) / 7.0 AS y
FROM generate_series(1, 300) i;

-- version 1: nothing deployed yet, so if_better deploys it
SELECT name, version, deployed, metrics->'deploy'->>'reason' AS reason,
       metrics->'rows' AS rows, metrics->'train_rows' AS train_rows,
       metrics->'holdout_rows' AS holdout_rows,
       round((metrics->'holdout'->>'r2')::numeric, 2) AS holdout_r2
FROM kernel_model_train('cat_price', 'SELECT f, y FROM cat_houses', '{"lambda": 0.01, "seed": 7}');

-- version 2: a worse model (lambda 100) is kept but not deployed; both scores recorded
SELECT version, deployed, metrics->'deploy'->>'reason' AS reason,
       metrics->'deploy'->'previous_version' AS previous_version,
       (metrics->'deploy'->>'new_holdout_rmse')::float8 > (metrics->'deploy'->>'previous_holdout_rmse')::float8 AS worse
FROM kernel_model_train('cat_price', 'SELECT f, y FROM cat_houses', '{"lambda": 100, "seed": 7}');

-- version 3: deploy always, even though worse
SELECT version, deployed, metrics->'deploy'->>'reason' AS reason
FROM kernel_model_train('cat_price', 'SELECT f, y FROM cat_houses;', '{"lambda": 100, "seed": 7, "deploy": "always"}');

-- version 4: deploy never
SELECT version, deployed, metrics->'deploy'->>'reason' AS reason
FROM kernel_model_train('cat_price', 'SELECT f, y FROM cat_houses', '{"lambda": 0.001, "seed": 7, "deploy": "never"}');

-- version 5: better than the deployed version 3, refitted on all rows
SELECT version, deployed, metrics->'deploy'->>'reason' AS reason, metrics->'refit' AS refit
FROM kernel_model_train('cat_price', 'SELECT f, y FROM cat_houses', '{"lambda": 0.01, "seed": 7, "refit": true}');

SELECT version, owner = current_user AS owner_ok, owner, search_path, n_train, n_features, deployed,
       options, kernel_model_info(model)->'n_train' AS model_rows
FROM kernel_models WHERE name = 'cat_price' ORDER BY version;

-- the split is the same for the same seed and rows, whatever their order
SELECT a.metrics->'holdout' = b.metrics->'holdout' AS same_split
FROM kernel_model_train('cat_split', 'SELECT f, y FROM cat_houses ORDER BY id', '{"seed": 3, "deploy": "never"}') a,
     kernel_model_train('cat_split', 'SELECT f, y FROM cat_houses ORDER BY id DESC', '{"seed": 3, "deploy": "never"}') b;
SELECT kernel_model_drop('cat_split');

-- scoring by name equals scoring with the deployed bytea
SELECT count(*) AS rows,
       max(abs(kernel_predict('cat_price', f) - kernel_predict(kernel_model_get('cat_price'), f))) = 0 AS same
FROM cat_houses;
SELECT kernel_model_get('cat_price') = (SELECT model FROM kernel_models WHERE name = 'cat_price' AND deployed) AS get_ok;

-- rollback to version 1, then the next statement uses it
SELECT kernel_model_deploy('cat_price', 1);
SELECT name, deployed_version, versions, latest_version, deployed_bytes > 0 AS has_bytes
FROM kernel_models_overview WHERE name = 'cat_price';
SELECT round(kernel_predict('cat_price', f)::numeric, 4) AS v1_prediction,
       round(kernel_predict(m.model, f)::numeric, 4) AS from_table
FROM cat_houses, kernel_models m WHERE id = 10 AND m.name = 'cat_price' AND m.version = 1;

-- retrain reuses the query and options of the deployed version (1, rolled
-- back to), not those of the latest (5, with refit)
SELECT version, deployed, metrics->'refit' AS refit,
       metrics->'retrain'->>'from_version' AS from_version, metrics->'retrain'->>'from' AS source
FROM kernel_model_retrain('cat_price');
SELECT options FROM kernel_models WHERE name = 'cat_price' AND version = 6;

-- parallel workers look the model up with the leader's snapshot
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT sum(kernel_predict('cat_price', f)) FROM cat_houses;
SELECT round(sum(kernel_predict('cat_price', f))::numeric, 6) =
       round(sum(kernel_predict(kernel_model_get('cat_price'), f))::numeric, 6) AS parallel_same
FROM cat_houses;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- test_fraction 0: no hold-out; if_better keeps the deployed version
SELECT version, deployed, metrics->'holdout_rows' AS holdout_rows, metrics->'holdout' AS holdout,
       metrics->'deploy'->>'reason' AS reason
FROM kernel_model_train('cat_price', 'SELECT f, y FROM cat_houses', '{"test_fraction": 0}');

-- a different number of features is stored, not deployed: every scorer that
-- sends the old number would fail ("deploy": "always" deploys it)
SELECT version, deployed, metrics->'deploy'->>'reason' AS reason
FROM kernel_model_train('cat_price', 'SELECT f[1:2], y FROM cat_houses', '{}');
SELECT kernel_model_deploy('cat_price', 1);

-- features of other numeric types are converted
SELECT version, deployed FROM kernel_model_train('cat_ints', 'SELECT ARRAY[id % 5, id % 3], id % 4 FROM cat_houses', '{}');
SELECT round(kernel_predict('cat_ints', ARRAY[1, 2])::numeric, 4) AS ints;

-- errors
SELECT kernel_predict('cat_nope', ARRAY[1.0, 2.0, 3.0]);
SELECT kernel_model_get('cat_nope');
SELECT * FROM kernel_model_retrain('cat_nope');
SELECT kernel_model_deploy('cat_price', 99);
SELECT kernel_model_drop('cat_price', 99);
SELECT kernel_model_drop('cat_price', 1);
SELECT kernel_model_drop('cat_nope');
SELECT * FROM kernel_model_train('cat_bad', 'SELECT f, y FROM cat_houses WHERE id < 0');
SELECT * FROM kernel_model_train('cat_bad', 'SELECT NULL::float8[], y FROM cat_houses');
SELECT * FROM kernel_model_train('cat_bad', 'SELECT f FROM cat_houses');
SELECT * FROM kernel_model_train('cat_bad', 'SELECT f, y, id FROM cat_houses');
SELECT * FROM kernel_model_train('cat_bad', 'SELECT f::text, y FROM cat_houses');
SELECT * FROM kernel_model_train('cat_bad', 'SELECT f, to_jsonb(y) FROM cat_houses');
SELECT * FROM kernel_model_train('cat_bad', 'SELECT 1; SELECT 2');
SELECT * FROM kernel_model_train('cat_bad', 'VACUUM cat_houses');
SELECT * FROM kernel_model_train('cat_bad', 'SELECT f, y FROM no_such_table');
SELECT * FROM kernel_model_train('cat_bad', 'SELECT f, y / 0 FROM cat_houses');
SELECT * FROM kernel_model_train('cat_bad', 'SELECT f, CASE WHEN id = 5 THEN ''NaN'' ELSE y END FROM cat_houses');
SELECT * FROM kernel_model_train('cat_bad', 'SELECT CASE WHEN id = 5 THEN f[1:2] ELSE f END, y FROM cat_houses');
SELECT * FROM kernel_model_train('cat_bad', 'SELECT f, y FROM cat_houses', '{"refit": 1}');
SELECT * FROM kernel_model_train('cat_bad', 'SELECT f, y FROM cat_houses', '{"deploy": "sometimes"}');
SELECT * FROM kernel_model_train('cat_bad', 'SELECT f, y FROM cat_houses', '{"test_fraction": 1}');
SELECT * FROM kernel_model_train('', 'SELECT f, y FROM cat_houses');
SELECT * FROM kernel_model_train(NULL, 'SELECT f, y FROM cat_houses');
SELECT kernel_predict('cat_price', ARRAY[1.0]);

-- the same errors with their SQLSTATEs
SELECT q, pg_temp.outcome(q) FROM (VALUES
  ('SELECT kernel_predict(''cat_nope'', ARRAY[1.0])'),
  ('SELECT kernel_model_deploy(''cat_price'', 99)'),
  ('SELECT kernel_model_drop(''cat_price'', 1)'),
  ('SELECT kernel_model_train(''cat_bad'', ''SELECT f, y FROM cat_houses WHERE false'')'),
  ('SELECT kernel_model_train(''cat_bad'', ''SELECT f FROM cat_houses'')'),
  ('SELECT kernel_model_train(''cat_bad'', ''SELECT f::text, y FROM cat_houses'')'),
  ('SELECT kernel_model_train(repeat(''x'', 64), ''SELECT f, y FROM cat_houses'')'),
  ('SELECT kernel_model_retrain(repeat(''x'', 64))'),
  ('SELECT kernel_model_train(''cat_bad'', ''SELECT f, y FROM cat_houses'', ''{"deploy": "sometimes"}'')')
) v(q);

-- a read-only transaction is refused before any work
BEGIN READ ONLY;
SELECT * FROM kernel_model_train('cat_ro', 'SELECT f, y FROM cat_houses');
ROLLBACK;
BEGIN READ ONLY;
SELECT * FROM kernel_model_retrain('cat_price');
ROLLBACK;
BEGIN READ ONLY;
SELECT kernel_model_deploy('cat_price', 1);
ROLLBACK;
BEGIN READ ONLY;
SELECT kernel_model_drop('cat_price');
ROLLBACK;
-- reading is fine
BEGIN READ ONLY;
SELECT round(kernel_predict('cat_price', ARRAY[1.0, 2.0, 3.0])::numeric, 4) IS NOT NULL AS reads;
ROLLBACK;

-- a 63-byte name is the longest
SELECT octet_length(name) AS bytes, version FROM kernel_model_train(repeat('y', 63), 'SELECT f, y FROM cat_houses');
SELECT kernel_model_drop(repeat('y', 63));

-- no failed training left anything behind
SELECT name, count(*) AS versions FROM kernel_models GROUP BY name ORDER BY name;

-- a NULL version is an error (22004), never "every version" (the deployed
-- one too): say, a version from a clean-up subquery that found nothing
SELECT count(*) AS versions_before FROM kernel_models WHERE name = 'cat_price';
SELECT kernel_model_drop('cat_price', NULL);
SELECT pg_temp.outcome('SELECT kernel_model_drop(''cat_price'', (SELECT max(version) FROM kernel_models WHERE name = ''no_such''))');
SELECT count(*) AS versions_after, count(*) FILTER (WHERE deployed) AS deployed
FROM kernel_models WHERE name = 'cat_price';

-- a version number is never reused: after the latest version is dropped,
-- the next one takes the number after it (kernel_model_names.last_version)
SELECT version, deployed FROM kernel_model_train('cat_hw', 'SELECT f, y FROM cat_houses', '{"deploy": "always"}');
SELECT version, deployed FROM kernel_model_train('cat_hw', 'SELECT f, y FROM cat_houses', '{"deploy": "never", "lambda": 5}');
SELECT kernel_model_drop('cat_hw', 2);
SELECT version, deployed, metrics->'deploy'->'previous_version' AS previous
FROM kernel_model_train('cat_hw', 'SELECT f, y FROM cat_houses', '{"deploy": "never", "lambda": 7}');
SELECT name, owner = (SELECT oid FROM pg_roles WHERE rolname = current_user) AS owner_ok,
       owner_name = current_user AS owner_name_ok, last_version
FROM kernel_model_names WHERE name = 'cat_hw';
SELECT array_agg(version ORDER BY version) AS versions FROM kernel_models WHERE name = 'cat_hw';
-- dropping the model frees the name: a new model of it starts at 1
SELECT kernel_model_drop('cat_hw');
SELECT count(*) AS name_rows FROM kernel_model_names WHERE name = 'cat_hw';
SELECT version FROM kernel_model_train('cat_hw', 'SELECT f, y FROM cat_houses');
SELECT kernel_model_drop('cat_hw');

-- a name whose versions are all dropped is gone
SELECT kernel_model_drop('cat_price', 2);
SELECT kernel_model_drop('cat_price');
SELECT kernel_model_drop('cat_ints');
SELECT count(*) AS left_over FROM kernel_models;
-- and a new model of that name starts again at version 1
SELECT version, deployed FROM kernel_model_train('cat_price', 'SELECT f, y FROM cat_houses');
SELECT kernel_model_drop('cat_price');

-- numbers in the metrics are float8out's text (at the default
-- extra_float_digits, every digit), not float8_numeric's 15 digits
SET extra_float_digits = 1;
SELECT metrics->'test_fraction' AS test_fraction,
       (metrics->>'test_fraction')::float8 = 0.1::float8 + 0.2::float8 AS exact
FROM kernel_model_train('cat_digits', 'SELECT f, y FROM cat_houses',
                        '{"test_fraction": 0.30000000000000004, "deploy": "never"}');
SET extra_float_digits = 0;
SELECT kernel_model_drop('cat_digits');

-- Named approximate regression models run SQL passes over the stored query
-- (kernel_basis, kernel_train, a scoring aggregate) with a per-row hold-out
-- split: a row is held out iff _kernel_ml_holdout(f, y, seed, fraction).
CREATE TABLE cat_big AS
SELECT i, ARRAY[sin(i * 0.1), cos(i * 0.37), (i % 7)::float8] AS f,
       2 * sin(i * 0.1) + cos(i * 0.37) + 0.01 * (i % 5) AS y
FROM generate_series(1, 3000) i;
INSERT INTO cat_big VALUES (0, ARRAY[0, 0, 0]::float8[], NULL);
SELECT count(*) FILTER (WHERE _kernel_ml_holdout(f, y, 0, 0.2)) AS held,
       count(*) FILTER (WHERE NOT _kernel_ml_holdout(f, y, 0, 0.2)) AS kept,
       count(*) FILTER (WHERE _kernel_ml_holdout(f, y, 0, 0.0)) AS held_at_0,
       count(*) FILTER (WHERE NOT _kernel_ml_holdout(f, y, 0, 1.0)) AS kept_at_1,
       count(*) FILTER (WHERE _kernel_ml_holdout(f, y, 7, 0.2)) AS held_seed_7
FROM cat_big;
SELECT _kernel_ml_holdout(ARRAY[-0.0, 1], 2, 0, 0.5) = _kernel_ml_holdout(ARRAY[0.0, 1], 2, 0, 0.5) AS signed_zero_same_side;
SELECT _kernel_ml_holdout(ARRAY[1.0], 2, 0, 1.5);
CREATE TABLE cat_trained AS
SELECT * FROM kernel_model_train('cat_approx', 'SELECT f, y FROM cat_big',
        '{"approximation": "nystrom", "components": 100, "lambda": 0.01}');
SELECT version, deployed, metrics->'rows' AS rows, metrics->'rows_skipped' AS skipped,
       metrics->'train_rows' AS train_rows, metrics->'holdout_rows' AS holdout_rows,
       metrics->'split' AS split, metrics->'deploy'->'reason' AS reason
FROM cat_trained;
SELECT kernel_model_info(kernel_model_get('cat_approx')) @>
       '{"approximation": "nystrom", "components": 100, "rows_seen": 2435}' AS info;
-- the model equals the two-pass kernel_train over the same training rows
-- (the same up to summation order: exactly here, serial), and the
-- hold-out and training scores equal SQL's over the same rows
CREATE TABLE cat_ref AS
WITH tr AS (SELECT f, y FROM cat_big WHERE NOT _kernel_ml_holdout(f, y, 0, 0.2))
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 100, "lambda": 0.01}',
                    (SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 100, "lambda": 0.01}') FROM tr)) AS m
FROM tr;
SELECT max(abs(kernel_predict(r.m, b.f) - kernel_predict('cat_approx', b.f))) < 1e-10 AS same_model
FROM cat_ref r, cat_big b;
WITH e AS (SELECT _kernel_ml_holdout(b.f, b.y, 0, 0.2) AS held, kernel_predict(r.m, b.f) - b.y AS e, b.y
           FROM cat_ref r, cat_big b WHERE b.y IS NOT NULL),
s AS (SELECT held, sqrt(avg(e * e)) AS rmse, avg(abs(e)) AS mae,
             1 - sum(e * e) / (var_pop(y) * count(*)) AS r2 FROM e GROUP BY held)
SELECT s.held,
       abs(s.rmse - (t.metrics->m->>'rmse')::float8) < 1e-12 AS rmse,
       abs(s.mae - (t.metrics->m->>'mae')::float8) < 1e-12 AS mae,
       abs(s.r2 - (t.metrics->m->>'r2')::float8) < 1e-12 AS r2
FROM s, cat_trained t, LATERAL (SELECT CASE WHEN s.held THEN 'holdout' ELSE 'train' END AS m) k
ORDER BY s.held;
-- retrain: the same rows give the same model, not lower, not deployed
SELECT version, deployed, metrics->'deploy'->'reason' AS reason,
       metrics->'deploy'->'new_holdout_rmse' = metrics->'deploy'->'previous_holdout_rmse' AS same_rmse
FROM kernel_model_retrain('cat_approx');
-- if_better: a worse lambda deployed anyway, then the better one wins back
SELECT version, deployed FROM kernel_model_train('cat_approx', 'SELECT f, y FROM cat_big',
        '{"approximation": "nystrom", "components": 100, "lambda": 100, "deploy": "always"}');
SELECT version, deployed, metrics->'deploy'->'reason' AS reason,
       metrics->'deploy'->'previous_version' AS previous,
       (metrics->'deploy'->>'new_holdout_rmse')::float8 < (metrics->'deploy'->>'previous_holdout_rmse')::float8 AS lower
FROM kernel_model_train('cat_approx', 'SELECT f, y FROM cat_big',
        '{"approximation": "nystrom", "components": 100, "lambda": 0.01, "deploy": "if_better"}');
SELECT version, deployed FROM kernel_model_train('cat_approx', 'SELECT f, y FROM cat_big',
        '{"approximation": "nystrom", "components": 100, "lambda": 100, "deploy": "if_better"}');
SELECT version FROM kernel_models WHERE name = 'cat_approx' AND deployed;
-- the deployed previous version is scored on the same held-out rows
SELECT abs((metrics->'deploy'->>'previous_holdout_rmse')::float8 - (SELECT (metrics->'holdout'->>'rmse')::float8 FROM kernel_models WHERE name = 'cat_approx' AND version = 4)) < 1e-12 AS prev_scored_alike
FROM kernel_models WHERE name = 'cat_approx' AND version = 5;
-- rff with refit: the stored model is the two-pass model of every usable row
SELECT version, deployed, metrics->'refit' AS refit, metrics->'holdout_rows' AS holdout_rows
FROM kernel_model_train('cat_rff', 'SELECT f, y FROM cat_big',
        '{"approximation": "rff", "components": 200, "lambda": 0.01, "gamma": 0.5, "refit": true}');
WITH a AS (SELECT f, y FROM cat_big WHERE y IS NOT NULL),
r AS (SELECT kernel_train(f, y, '{"approximation": "rff", "components": 200, "lambda": 0.01, "gamma": 0.5}',
                          (SELECT kernel_basis(f, '{"approximation": "rff", "components": 200, "lambda": 0.01, "gamma": 0.5}') FROM a)) AS m FROM a)
SELECT max(abs(kernel_predict(r.m, b.f) - kernel_predict('cat_rff', b.f))) < 1e-10 AS same_model,
       (kernel_model_info(kernel_model_get('cat_rff'))->>'rows_seen')::int AS rows_seen
FROM r, cat_big b;
-- no usable rows; every row held out
SELECT * FROM kernel_model_train('cat_none', 'SELECT f, y FROM cat_big WHERE y IS NULL',
        '{"approximation": "nystrom"}');
SELECT * FROM kernel_model_train('cat_none', 'SELECT f, y FROM cat_big WHERE i < 3',
        '{"approximation": "nystrom", "test_fraction": 0.99}');
-- every pass must read the same rows: a query that returns other rows each
-- time (here a bound that grows by 1000 rows a pass) is an error that says
-- so, and stores nothing
CREATE SEQUENCE cat_passes;
SELECT * FROM kernel_model_train('cat_moving', 'SELECT f, y FROM cat_big WHERE i <= (SELECT 1000 * nextval(''cat_passes''))',
        '{"approximation": "nystrom", "components": 20}');
-- the same when the passes that differ are scoring and fitting: the bound
-- moves only after the two training passes
SELECT setval('cat_passes', 1, false);
SELECT * FROM kernel_model_train('cat_moving', 'SELECT f, y FROM cat_big WHERE i <= (SELECT 1000 * greatest(2, nextval(''cat_passes'')))',
        '{"approximation": "nystrom", "components": 20}');
SELECT count(*) AS stored FROM kernel_models WHERE name = 'cat_moving';
-- a sample that repeats (TABLESAMPLE ... REPEATABLE) trains, its n_train the
-- sample's training rows
SELECT version, deployed, (metrics->>'train_rows')::int = (SELECT count(*) FROM cat_big TABLESAMPLE BERNOULLI (30) REPEATABLE (7)
                                                           WHERE y IS NOT NULL AND NOT _kernel_ml_holdout(f, y, 0, 0.2)) AS train_rows_ok
FROM kernel_model_train('cat_sample', 'SELECT f, y FROM cat_big TABLESAMPLE BERNOULLI (30) REPEATABLE (7)',
        '{"approximation": "nystrom", "components": 20}');
SELECT n_train = (metrics->>'train_rows')::int AS n_train_ok FROM kernel_models WHERE name = 'cat_sample';
SELECT kernel_model_drop('cat_approx'), kernel_model_drop('cat_rff'), kernel_model_drop('cat_sample');
DROP SEQUENCE cat_passes;
DROP TABLE cat_big, cat_trained, cat_ref;

-- a model trained from a temporary table (or a temporary view) says that it
-- cannot be retrained in another session; a regular or unlogged table, or a
-- view over one, says nothing
CREATE TEMP TABLE cat_tmp AS SELECT ARRAY[i::float8, (i % 7)::float8] AS f, (3 * i + i % 7)::float8 AS y
FROM generate_series(1, 60) i;
CREATE UNLOGGED TABLE cat_unlogged AS SELECT * FROM cat_tmp;
CREATE VIEW cat_unlogged_v AS SELECT f, y FROM cat_unlogged;
CREATE TEMP VIEW cat_tmp_v AS SELECT f, y FROM cat_unlogged;
SELECT version FROM kernel_model_train('cat_tmp', 'SELECT f, y FROM cat_tmp', '{}');
SELECT version FROM kernel_model_retrain('cat_tmp');
SELECT version FROM kernel_model_train('cat_tmp_approx', 'SELECT f, y FROM cat_tmp WHERE y > 0',
        '{"approximation": "nystrom", "components": 10}');
SELECT version FROM kernel_model_train('cat_tmp_v', 'SELECT f, y FROM cat_tmp_v', '{}');
SELECT version FROM kernel_model_train('cat_unlogged', 'SELECT f, y FROM cat_unlogged_v', '{}');
SELECT kernel_model_drop('cat_tmp'), kernel_model_drop('cat_tmp_approx'), kernel_model_drop('cat_tmp_v'),
       kernel_model_drop('cat_unlogged');
DROP VIEW cat_tmp_v, cat_unlogged_v;
DROP TABLE cat_tmp, cat_unlogged;

-- the catalog is registered for pg_dump and everything has a comment
SELECT c.relname, e.extcondition
FROM pg_extension x, unnest(x.extconfig) WITH ORDINALITY AS t(oid, i)
JOIN pg_class c ON c.oid = t.oid
LEFT JOIN LATERAL (SELECT x.extcondition[t.i] AS extcondition) e ON true
WHERE x.extname = 'kernel_ml';
SELECT p.oid::regprocedure AS undocumented
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
JOIN pg_extension x ON x.oid = d.refobjid AND x.extname = 'kernel_ml'
WHERE obj_description(p.oid, 'pg_proc') IS NULL AND p.proname LIKE 'kernel_model%';
SELECT obj_description('kernel_models'::regclass, 'pg_class') IS NOT NULL AS table_comment,
       obj_description('kernel_models_overview'::regclass, 'pg_class') IS NOT NULL AS view_comment;

DROP TABLE cat_houses;
