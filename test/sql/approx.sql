-- Approximate models (issue 12): options, the kernel_basis aggregate
SET extra_float_digits = 0;
\set VERBOSITY sqlstate

-- option validation
SELECT kernel_train(ARRAY[1.0, 2.0]::float8[], 1.0, '{"approximation": "exact"}');
SELECT kernel_train(ARRAY[1.0, 2.0]::float8[], 1.0, '{"approximation": 3}');
SELECT kernel_train(ARRAY[1.0, 2.0]::float8[], 1.0, '{"approximation": "nystrom", "components": 0}');
SELECT kernel_train(ARRAY[1.0, 2.0]::float8[], 1.0, '{"approximation": "nystrom", "components": 2.5}');
SELECT kernel_train(ARRAY[1.0, 2.0]::float8[], 1.0, '{"components": 10}');
SELECT kernel_train(ARRAY[1.0, 2.0]::float8[], 1.0, '{"approximation": "rff", "kernel": "laplacian"}');
SELECT kernel_train(ARRAY[1.0, 2.0]::float8[], 1.0, '{"approximation": "nystrom", "method": "lms"}');
SELECT kernel_train(ARRAY[1.0, 2.0]::float8[], 1.0, '{"approximation": "nystrom", "cv": 5, "lambda": [1, 2]}');
SELECT kernel_train(ARRAY[1.0, 2.0]::float8[], 1.0, '{"approximation": "nystrom", "gamma": [1, 2]}');
SELECT kernel_basis(ARRAY[1.0, 2.0]::float8[], '{}');
SELECT kernel_basis(ARRAY[1.0, 2.0]::float8[], '{"approximation": "nystrom", "components": 2000000000}');
\set VERBOSITY default
SELECT kernel_train(ARRAY[1.0, 2.0]::float8[], 1.0, '{"approximation": "rff", "kernel": "poly"}');
SELECT kernel_basis(ARRAY[1.0, 2.0]::float8[], '{"components": 5}');
\set VERBOSITY sqlstate

CREATE TABLE bdata AS
SELECT i AS id, ARRAY[sin(i), cos(0.3 * i), (i % 11) / 11.0]::float8[] AS f,
       sin(i) * cos(0.3 * i) AS y
FROM generate_series(1, 20000) i;
-- rows 1..100 again, negated zeros included: duplicates are one centre
INSERT INTO bdata SELECT id + 20000, f, y FROM bdata WHERE id <= 100;
INSERT INTO bdata VALUES (30001, '{-0.0, 0.5, 0}', 0), (30002, '{0.0, 0.5, -0.0}', 0);
ANALYZE bdata;

-- empty input and all-NULL rows: NULL
SELECT kernel_basis(f, '{"approximation": "nystrom"}') IS NULL AS empty FROM bdata WHERE false;
SELECT kernel_basis(NULL::float8[], '{"approximation": "nystrom"}') IS NULL AS all_null;

SET max_parallel_workers_per_gather = 0;
CREATE TABLE b_fwd AS SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 50, "seed": 7}' ORDER BY id) AS b FROM bdata;
CREATE TABLE b_rev AS SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 50, "seed": 7}' ORDER BY id DESC) AS b FROM bdata;

SELECT kernel_basis_info(b) - 'mean' - 'scale' - 'centers' AS info FROM b_fwd;
-- the same centres in the same order (standardized by scalers that agree to rounding)
CREATE FUNCTION centre_diff(a bytea, b bytea) RETURNS float8 LANGUAGE sql AS $$
  SELECT max(abs((x.v->>k)::float8 - (y.v->>k)::float8))
  FROM jsonb_array_elements(kernel_basis_info(a)->'centers') WITH ORDINALITY x(v, i)
  JOIN jsonb_array_elements(kernel_basis_info(b)->'centers') WITH ORDINALITY y(v, i) USING (i),
       generate_series(0, jsonb_array_length(x.v) - 1) k $$;
SELECT centre_diff(a.b, r.b) < 1e-13 AS same_centres FROM b_fwd a, b_rev r;
SELECT max(abs((kernel_basis_info(a.b)->'mean'->>j)::float8 - (kernel_basis_info(r.b)->'mean'->>j)::float8)) < 1e-15 AS same_mean,
       max(abs((kernel_basis_info(a.b)->'scale'->>j)::float8 / (kernel_basis_info(r.b)->'scale'->>j)::float8 - 1)) < 1e-14 AS same_scale
FROM b_fwd a, b_rev r, generate_series(0, 2) j;
-- the scaler is avg and stddev_pop over the rows
SELECT max(abs((kernel_basis_info(a.b)->'mean'->>(j - 1))::float8 - s.mu)) < 1e-14 AS mean_ok,
       max(abs((kernel_basis_info(a.b)->'scale'->>(j - 1))::float8 / s.sd - 1)) < 1e-12 AS scale_ok
FROM b_fwd a,
     (SELECT j, avg(f[j]) AS mu, stddev_pop(f[j]) AS sd FROM bdata, generate_series(1, 3) j GROUP BY j) s
GROUP BY ();
-- every centre is a row of the table (unstandardized), and they are distinct
WITH info AS (SELECT kernel_basis_info(b) AS i FROM b_fwd),
centre AS (
  SELECT c.ord, ARRAY(SELECT (c.v->>k)::float8 * (i->'scale'->>k)::float8 + (i->'mean'->>k)::float8
                      FROM generate_series(0, 2) k ORDER BY k) AS x
  FROM info, jsonb_array_elements(i->'centers') WITH ORDINALITY c(v, ord))
SELECT count(*) AS centres,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM bdata d WHERE
           abs(d.f[1] - c.x[1]) < 1e-12 AND abs(d.f[2] - c.x[2]) < 1e-12 AND abs(d.f[3] - c.x[3]) < 1e-12)) AS found,
       count(DISTINCT x::text) AS distinct_centres
FROM centre c;
-- components beyond the distinct rows: every distinct row once (-0.0 = 0.0)
SELECT (kernel_basis_info(kernel_basis(f, '{"approximation": "nystrom", "components": 1000}'))->>'components')::int AS m,
       (SELECT count(DISTINCT f) FROM bdata WHERE id <= 100 OR id > 20000) AS distinct_rows
FROM bdata WHERE id <= 100 OR id > 20000;
-- another seed, other centres; rff keeps the seed only
SELECT (SELECT kernel_basis_info(kernel_basis(f, '{"approximation": "nystrom", "components": 50, "seed": 8}')) FROM bdata)->'centers'
       <> (SELECT kernel_basis_info(b)->'centers' FROM b_fwd) AS seed_matters;
SELECT kernel_basis_info(kernel_basis(f, '{"approximation": "rff", "components": 300, "gamma": 0.5}')) - 'mean' - 'scale' AS rff
FROM bdata;

-- a forced parallel plan: partial aggregates, the same basis
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 50, "seed": 7}') FROM bdata;
CREATE TABLE b_par AS SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 50, "seed": 7}') AS b FROM bdata;
SELECT centre_diff(a.b, r.b) < 1e-13 AS same_centres, kernel_basis_info(r.b)->'rows' AS rows
FROM b_fwd a, b_par r;
SELECT max(abs((kernel_basis_info(a.b)->'mean'->>j)::float8 - (kernel_basis_info(r.b)->'mean'->>j)::float8)) < 1e-15 AS same_mean,
       max(abs((kernel_basis_info(a.b)->'scale'->>j)::float8 / (kernel_basis_info(r.b)->'scale'->>j)::float8 - 1)) < 1e-14 AS same_scale
FROM b_fwd a, b_par r, generate_series(0, 2) j;
RESET ALL;
SET extra_float_digits = 0;
\set VERBOSITY sqlstate

-- a basis is untrusted input: changed bytes are refused
SELECT kernel_basis_info(overlay(b placing '\xff'::bytea from 40)) FROM b_fwd;
SELECT kernel_basis_info(substr(b, 1, 100)) FROM b_fwd;
SELECT kernel_basis_info('\x00'::bytea);
SELECT kernel_basis_info(b || '\x00'::bytea) FROM b_fwd;

DROP TABLE bdata, b_fwd, b_rev, b_par;
DROP FUNCTION centre_diff(bytea, bytea);

-- training: one statement vs two passes, serial vs parallel
CREATE TABLE tdata AS
SELECT i AS id, ARRAY[sin(i), cos(0.3 * i), (i % 11) / 11.0]::float8[] AS f,
       sin(i) * cos(0.3 * i) + 0.1 * (i % 11) / 11.0 AS y
FROM generate_series(1, 30000) i;
INSERT INTO tdata VALUES (30001, NULL, 1), (30002, '{1,2,3}', NULL);
ANALYZE tdata;
CREATE TABLE probes AS SELECT id, f FROM tdata WHERE id % 997 = 0;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE m_one AS SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 40, "gamma": 1, "lambda": 1, "seed": 3}') AS m
FROM tdata WHERE id <= 30000;
CREATE TABLE m_two AS SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 40, "gamma": 1, "lambda": 1, "seed": 3}',
       (SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 40, "gamma": 1, "lambda": 1, "seed": 3}') FROM tdata WHERE id <= 30000)) AS m
FROM tdata WHERE id <= 30000;
SELECT kernel_model_info(m)->'approximation' AS approximation, kernel_model_info(m)->'rank' AS rank, kernel_model_info(m)->'components' AS components,
       kernel_model_info(m)->'n_train' AS n_train, kernel_model_info(m)->'rows_seen' AS rows_seen FROM m_one;
SELECT max(abs(kernel_predict(a.m, p.f) - kernel_predict(b.m, p.f))) < 1e-10 AS one_equals_two
FROM m_one a, m_two b, probes p;
-- NULL rows are skipped and counted
SELECT kernel_model_info(kernel_train(f, y, '{"approximation": "nystrom", "components": 50}',
       (SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 50}') FROM tdata)))->'rows_skipped' AS skipped
FROM tdata;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 40, "gamma": 1, "lambda": 1, "seed": 3}',
       (SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 40, "gamma": 1, "lambda": 1, "seed": 3}') FROM tdata WHERE id <= 30000))
FROM tdata WHERE id <= 30000;
CREATE TABLE m_par AS SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 40, "gamma": 1, "lambda": 1, "seed": 3}',
       (SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 40, "gamma": 1, "lambda": 1, "seed": 3}') FROM tdata WHERE id <= 30000)) AS m
FROM tdata WHERE id <= 30000;
RESET ALL;
SET extra_float_digits = 0;
SELECT max(abs(kernel_predict(a.m, p.f) - kernel_predict(b.m, p.f))) < 1e-10 AS parallel_equals_serial
FROM m_two a, m_par b, probes p;
-- components >= rows: exact kernel ridge (at the same gamma: without one,
-- exact rbf models take kernlab's sigest and approximate ones 1 / d)
CREATE TABLE small AS SELECT * FROM tdata WHERE id <= 300;
SELECT max(abs(kernel_predict(a, p.f) / kernel_predict(e, p.f) - 1)) < 1e-6 AS nystrom_all_rows_is_exact
FROM (SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 1000, "lambda": 0.5, "gamma": 0.5}') AS a,
             kernel_train(f, y, '{"lambda": 0.5, "gamma": 0.5}') AS e FROM small) s, probes p;
SELECT round(((kernel_model_info(kernel_train(f, y, '{"approximation": "nystrom", "components": 50}'))->>'gamma')::float8 *
       max(array_length(f, 1)))::numeric, 12) AS approx_default_gamma_times_d
FROM small;
-- a lambda grid is scored by GCV
SELECT i->'selection'->'cv' AS cv, jsonb_array_length(i->'selection'->'candidates') AS candidates, i->'lambda' IN ('0.01', '0.1', '1') AS picked_from_grid
FROM (SELECT kernel_model_info(kernel_train(f, y, '{"approximation": "nystrom", "components": 100, "lambda": [0.01, 0.1, 1]}')) AS i
      FROM small) s;
\set VERBOSITY sqlstate
SELECT kernel_train(f, y, '{"approximation": "nystrom"}', NULL::bytea) FROM small;
SELECT kernel_train(f, y, '{"approximation": "rff"}', (SELECT kernel_basis(f, '{"approximation": "nystrom"}') FROM small)) FROM small;
SELECT kernel_train(f, y, '{"approximation": "nystrom", "lambda": 0}') FROM small;
SELECT kernel_train(f, y, '{"approximation": "nystrom"}', '\x00'::bytea) FROM small;
SET kernel_ml.max_memory = '1MB';
SELECT kernel_train(f, y, '{"approximation": "rff", "components": 5000}') FROM small;
RESET kernel_ml.max_memory;
\set VERBOSITY default
-- rff with more features than rows (Z^T Z singular, lambda I makes it
-- solvable): a model whose rank is D (a reader error before)
SELECT (i->>'rank')::int AS rank, i->>'approximation' AS approximation,
       (i->>'components')::int AS components
FROM (SELECT kernel_model_info(kernel_train(f, y, '{"approximation": "rff", "components": 400, "lambda": 0.1}')) AS i
      FROM small) s;
DROP TABLE tdata, probes, m_one, m_two, m_par, small;

-- named models with an approximation: SQL passes, a per-row hash split
-- (about test_fraction of the rows held out: 355 of 2000 here; catalog.sql)
CREATE TABLE ndata AS
SELECT i AS id, ARRAY[sin(i), cos(0.3 * i), (i % 11) / 11.0]::float8[] AS f,
       sin(i) * cos(0.3 * i) + 0.1 * (i % 11) / 11.0 AS y
FROM generate_series(1, 2000) i;
SELECT (r.metrics->'holdout_rows')::int AS holdout_rows, r.deployed
FROM kernel_model_train('approx_named', 'SELECT f, y FROM ndata',
                        '{"approximation": "nystrom", "components": 100, "gamma": 1, "lambda": 0.1}') r;
SELECT kernel_model_info(model) - 'size_bytes' - 'kernel_ml_version' - 'intercept' - 'train_rmse' - 'approximation_eps'
       - 'amplitude' - 'log_marginal_likelihood' AS info
FROM kernel_models WHERE name = 'approx_named';
SELECT (metrics->'holdout'->>'rmse')::float8 < 0.05 AS fits FROM kernel_models WHERE name = 'approx_named';
-- retraining is deterministic: the same model, byte for byte
SELECT (kernel_model_retrain('approx_named')).version;
SELECT count(DISTINCT model) AS distinct_models, count(*) AS versions FROM kernel_models WHERE name = 'approx_named';
SELECT kernel_predict('approx_named', f) = kernel_predict(m.model, f) AS by_name
FROM ndata, kernel_models m WHERE m.name = 'approx_named' AND m.version = 1 AND ndata.id = 7;
SELECT kernel_model_drop('approx_named');
DROP TABLE ndata;

-- rff: W and b drawn from the seed; progress NOTICEs name the phases
CREATE TABLE rdata AS
SELECT i AS id, ARRAY[sin(i), cos(0.3 * i), (i % 11) / 11.0]::float8[] AS f,
       sin(i) * cos(0.3 * i) AS y
FROM generate_series(1, 500) i;
SELECT i->'approximation' AS approximation, i->'n_train' AS n_train, i->'rank' AS rank,
       i->'approximation_seed' AS seed, (i->>'train_rmse')::float8 < 0.2 AS fits
FROM (SELECT kernel_model_info(kernel_train(f, y, '{"approximation": "rff", "components": 64, "seed": 5, "lambda": 0.01}')) AS i
      FROM rdata) s;
SELECT abs((kernel_model_info(a)->>'train_rmse')::float8 / (kernel_model_info(b)->>'train_rmse')::float8 - 1) < 1e-10
       AS rff_one_equals_two
FROM (SELECT kernel_train(f, y, '{"approximation": "rff", "components": 64, "seed": 5, "lambda": 0.01}') AS a,
             kernel_train(f, y, '{"approximation": "rff", "components": 64, "seed": 5, "lambda": 0.01}',
                          (SELECT kernel_basis(f, '{"approximation": "rff", "components": 64, "seed": 5, "lambda": 0.01}') FROM rdata)) AS b
      FROM rdata) s;
-- a basis stored in a table (TOASTed) trains the same model as one from a subquery
CREATE TABLE rbasis AS SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 400, "lambda": 0.1}') AS b FROM rdata;
SELECT pg_column_size(b) < octet_length(b) OR octet_length(b) > 2000 AS toasted FROM rbasis;
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 400, "lambda": 0.1}', (SELECT b FROM rbasis)) =
       kernel_train(f, y, '{"approximation": "nystrom", "components": 400, "lambda": 0.1}',
                    (SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 400, "lambda": 0.1}') FROM rdata)) AS same_model
FROM rdata;
DROP TABLE rbasis;
SET kernel_ml.progress = on;
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 20}') IS NOT NULL AS trained FROM rdata;
RESET kernel_ml.progress;
DROP TABLE rdata;

-- smooth rows (20 features sin(0.37 i (j + 1) + j), gamma 1): the two-pass
-- form (rows buffered, features computed a block at a time by GEMM) gives
-- the one-statement model
CREATE TABLE idata AS
SELECT i AS id, ARRAY(SELECT sin(0.37 * i * (j + 1) + j) FROM generate_series(0, 19) j) AS f,
       sin(0.37 * i) * cos(0.74 * i + 1) AS y
FROM generate_series(1, 3000) i;
SELECT max(abs(kernel_predict(a, p.f) - kernel_predict(b, p.f))) < 1e-10 AS one_equals_two
FROM (SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 300, "gamma": 1, "lambda": 1}') AS a,
             kernel_train(f, y, '{"approximation": "nystrom", "components": 300, "gamma": 1, "lambda": 1}',
                          (SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 300, "gamma": 1, "lambda": 1}') FROM idata)) AS b
      FROM idata) s, (SELECT f FROM idata WHERE id % 500 = 0) p;
DROP TABLE idata;
