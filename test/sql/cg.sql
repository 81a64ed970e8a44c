-- "solver": "cg" (issue 31): nystrom ridge by preconditioned conjugate
-- gradient, one pass over the rows per iteration; by name it predicts as
-- the direct one-pass solve within 1e-6 relative; the aggregates refuse it;
-- option errors.  Newton-CG of the approximate logistic, svm and svr (their
-- Newton steps solved by the same CG): as the direct Newton within 1e-6
-- relative, by name, under a parallel plan and by kernel_train_query
SET extra_float_digits = 0;

-- the SQLSTATE and message a statement ends with
CREATE FUNCTION pg_temp.outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

-- 2,000 rows of 5 features, a smooth target far from 0
CREATE TABLE cg_rows AS
SELECT i AS id,
       ARRAY[sin(0.37 * i), cos(0.11 * i), sin(0.013 * i * i), cos(0.7 * i + 1), ((i * 7919) % 1000) / 1000.0]::float8[] AS f,
       3 + sin(4 * sin(0.37 * i)) + cos(0.11 * i) * sin(0.013 * i * i)
         + 0.5 * cos(3 * cos(0.7 * i + 1) + ((i * 7919) % 1000) / 1000.0) AS y
FROM generate_series(1, 2000) i;

-- the same model by the direct solve and by cg
SELECT name, version, deployed
FROM kernel_model_train('cg_direct', 'SELECT f, y FROM cg_rows',
       '{"approximation": "nystrom", "components": 120, "lambda": 0.01, "test_fraction": 0}');
SELECT name, version, deployed
FROM kernel_model_train('cg_cg', 'SELECT f, y FROM cg_rows',
       '{"approximation": "nystrom", "components": 120, "lambda": 0.01, "test_fraction": 0, "solver": "cg"}');
SELECT id, round(kernel_predict('cg_direct', f)::numeric, 5) AS direct,
       round(kernel_predict('cg_cg', f)::numeric, 5) AS cg
FROM cg_rows WHERE id IN (1, 2, 500, 1999, 2000) ORDER BY id;
SELECT max(abs(kernel_predict('cg_cg', f) / kernel_predict('cg_direct', f) - 1)) < 1e-6 AS within_1e6
FROM cg_rows;
SELECT i->>'components' AS components, i->>'approximation' AS approximation,
       round((i->>'train_rmse')::numeric, 6) AS train_rmse
FROM (SELECT kernel_model_info(n) AS i FROM (VALUES ('cg_direct'), ('cg_cg')) v(n)) s;

-- under a parallel plan: each pass is one statement of the pass aggregate,
-- its point rebuilt in the workers, their states added
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SELECT name, version, deployed
FROM kernel_model_train('cg_par', 'SELECT f, y FROM cg_rows',
       '{"approximation": "nystrom", "components": 120, "lambda": 0.01, "test_fraction": 0, "solver": "cg"}');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
SELECT max(abs(kernel_predict('cg_par', f) / kernel_predict('cg_direct', f) - 1)) < 1e-6 AS parallel_within_1e6
FROM cg_rows;

-- a larger table (6,000 rows, m = 300): the preconditioner from a sample of
-- the rows (3,401 by their hashes) in place of Falkon's from the centres,
-- CG from the sample's own solution: the same model as the direct solve,
-- serially and in parallel, in 10 iterations at the default tol, where
-- Falkon's preconditioner stopped at max_iter (100) with the residual above
-- tol (kernel_ml 0.4.0 before it).  (Of cg_rows' 2,000 rows at m = 120 the
-- sample is every row: CG's start is the solution.)
CREATE TABLE cg_big AS
SELECT i AS id,
       ARRAY[sin(0.37 * i), cos(0.11 * i), sin(0.013 * i * i), cos(0.7 * i + 1), ((i * 7919) % 1000) / 1000.0]::float8[] AS f,
       3 + sin(4 * sin(0.37 * i)) + cos(0.11 * i) * sin(0.013 * i * i)
         + 0.5 * cos(3 * cos(0.7 * i + 1) + ((i * 7919) % 1000) / 1000.0) AS y
FROM generate_series(1, 6000) i;
SELECT count(*) FROM kernel_model_train('cg_big_direct', 'SELECT f, y FROM cg_big',
       '{"approximation": "nystrom", "components": 300, "lambda": 0.001, "test_fraction": 0}');
SELECT count(*) FROM kernel_model_train('cg_big_cg', 'SELECT f, y FROM cg_big',
       '{"approximation": "nystrom", "components": 300, "lambda": 0.001, "test_fraction": 0, "solver": "cg"}');
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SELECT count(*) FROM kernel_model_train('cg_big_par', 'SELECT f, y FROM cg_big',
       '{"approximation": "nystrom", "components": 300, "lambda": 0.001, "test_fraction": 0, "solver": "cg"}');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
SELECT max(abs(kernel_predict('cg_big_cg', f) / kernel_predict('cg_big_direct', f) - 1)) < 1e-6 AS within_1e6,
       max(abs(kernel_predict('cg_big_par', f) / kernel_predict('cg_big_direct', f) - 1)) < 1e-6 AS parallel_within_1e6
FROM cg_big;

-- an aggregate reads the rows once: refused, with a hint to the named path
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 50, "solver": "cg"}') FROM cg_rows;
SELECT pg_temp.outcome($$SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 50, "solver": "cg"}') FROM cg_rows$$);
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 50, "solver": "cg"}',
                    (SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 50}') FROM cg_rows))
FROM cg_rows;

-- option errors
SELECT kernel_model_train('cg_bad', 'SELECT f, y FROM cg_rows', '{"solver": "cg"}');
SELECT kernel_model_train('cg_bad', 'SELECT f, y FROM cg_rows', '{"solver": "cg", "approximation": "rff"}');
SELECT kernel_model_train('cg_bad', 'SELECT f, y FROM cg_rows', '{"solver": "cg", "method": "svr"}');
SELECT kernel_model_train('cg_bad', 'SELECT f, y FROM cg_rows', '{"solver": "cg", "method": "lms", "approximation": "nystrom"}');
SELECT kernel_model_train('cg_bad', 'SELECT f, y FROM cg_rows', '{"solver": "cg", "approximation": "nystrom", "lambda": [0.1, 1]}');
SELECT kernel_train(f, y::text, '{"solver": "cg", "method": "logistic", "approximation": "nystrom"}') FROM cg_rows WHERE id <= 10;
SELECT kernel_model_train('cg_bad', 'SELECT f, y FROM cg_rows', '{"approximation": "nystrom", "tol": 1e-9}');
SELECT kernel_model_train('cg_bad', 'SELECT f, y FROM cg_rows', '{"solver": "cgg", "approximation": "nystrom"}');

-- max_iter reached: the model is stored, with a warning (cg_big: of
-- cg_rows' 2,000 rows the sample would be every row, and CG's start the
-- solution)
SELECT name, version, deployed
FROM kernel_model_train('cg_short', 'SELECT f, y FROM cg_big',
       '{"approximation": "nystrom", "components": 300, "lambda": 0.001, "test_fraction": 0, "solver": "cg", "max_iter": 2}');

-- Newton-CG: two classes (y above its median) by logistic over nystrom and
-- svm over rff, svr over nystrom; direct and cg at tol 1e-10
CREATE TABLE cg_lbl AS SELECT id, f, y, (y > 3.1)::text AS lbl FROM cg_rows;
SELECT m, name FROM (VALUES
  ('logistic', 'nystrom', 'lbl'), ('svm', 'rff', 'lbl'), ('svr', 'nystrom', 'y')) c(m, a, t),
  (VALUES ('_d', '{}'::jsonb), ('_n', '{"solver": "cg"}')) v(s, o),
  LATERAL (SELECT name FROM kernel_model_train('cg_' || m || s, format('SELECT f, %s FROM cg_lbl', t),
    pg_catalog.jsonb_build_object('method', m, 'approximation', a, 'components', 80,
      'lambda', 0.001, 'tol', 1e-10, 'test_fraction', 0) || o)) k
ORDER BY 1, 2;
SELECT m, max(abs(kernel_predict('cg_' || m || '_n', f) - kernel_predict('cg_' || m || '_d', f))
              / greatest(abs(kernel_predict('cg_' || m || '_d', f)), 1)) < 1e-6 AS within_1e6
FROM cg_lbl, (VALUES ('logistic'), ('svm'), ('svr')) c(m) GROUP BY m ORDER BY m;
SELECT m, i->>'solver' AS solver, i->>'converged' AS converged,
       round((coalesce(i->>'train_accuracy', i->>'train_rmse'))::numeric, 6) AS train
FROM (VALUES ('logistic'), ('svm'), ('svr')) c(m),
     LATERAL (SELECT kernel_model_info('cg_' || m || '_n') AS i) s ORDER BY m;
-- under a parallel plan (kinds 7 and 16 rebuilt in the workers) and by kernel_train_query
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SELECT name FROM kernel_model_train('cg_logistic_p', 'SELECT f, lbl FROM cg_lbl',
       '{"method": "logistic", "approximation": "nystrom", "components": 80, "lambda": 0.001, "tol": 1e-10, "test_fraction": 0, "solver": "cg"}');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
SELECT max(abs(kernel_predict('cg_logistic_p', f) - kernel_predict('cg_logistic_d', f))
           / greatest(abs(kernel_predict('cg_logistic_d', f)), 1)) < 1e-6 AS parallel_within_1e6
FROM cg_lbl;
SELECT max(abs(kernel_predict(q.model, f) - kernel_predict('cg_svr_d', f))
           / greatest(abs(kernel_predict('cg_svr_d', f)), 1)) < 1e-6 AS query_within_1e6
FROM cg_lbl, (SELECT kernel_train_query('SELECT f, y FROM cg_lbl',
  '{"method": "svr", "approximation": "nystrom", "components": 80, "lambda": 0.001, "tol": 1e-10, "solver": "cg"}') AS model) q;
-- the aggregate refuses it
SELECT kernel_train(f, lbl, '{"method": "logistic", "approximation": "nystrom", "components": 20, "solver": "cg"}') FROM cg_lbl;

-- Newton-CG of one-vs-rest: three and four classes (tertiles and quartiles
-- of y) by logistic and svm over nystrom, the outputs' CGs in lockstep (one
-- Hessian-vector pass per iteration for every class still iterating): the
-- direct Newton's labels on every row, its probabilities within 1e-6
-- relative; by name over the cursor, under a parallel plan (kind 16's point
-- carries the classes it multiplies) and by kernel_train_query
CREATE TABLE cg_k AS SELECT id, f, (ntile(3) OVER (ORDER BY y, id))::text AS k3,
  chr(96 + ntile(4) OVER (ORDER BY y, id)::int) AS k4 FROM cg_rows;
SELECT m, t, s, name FROM (VALUES ('logistic'), ('svm')) c(m), (VALUES ('k3'), ('k4')) k(t),
  (VALUES ('_d', '{}'::jsonb), ('_n', '{"solver": "cg"}')) v(s, o),
  LATERAL (SELECT name FROM kernel_model_train('cg_' || m || '_' || t || s, format('SELECT f, %s FROM cg_k', t),
    pg_catalog.jsonb_build_object('method', m, 'approximation', 'nystrom', 'components', 80,
      'lambda', 0.001, 'tol', 1e-8, 'test_fraction', 0) || o)) x
ORDER BY 1, 2, 3;
SELECT m, t, i->>'solver' AS solver, i->>'converged' AS converged,
       round((i->>'train_accuracy')::numeric, 4) AS train_accuracy
FROM (VALUES ('logistic'), ('svm')) c(m), (VALUES ('k3'), ('k4')) k(t),
     LATERAL (SELECT kernel_model_info('cg_' || m || '_' || t || '_n') AS i) s ORDER BY m, t;
SELECT m, t, count(*) FILTER (WHERE kernel_predict_class('cg_' || m || '_' || t || '_n', f)
                                    IS DISTINCT FROM kernel_predict_class('cg_' || m || '_' || t || '_d', f)) AS labels_differ
FROM cg_k, (VALUES ('logistic'), ('svm')) c(m), (VALUES ('k3'), ('k4')) k(t) GROUP BY m, t ORDER BY m, t;
SELECT t, count(*) AS probabilities,
       max(abs((pn.value::text)::float8 / (pd.value::text)::float8 - 1)) < 1e-6 AS within_1e6
FROM cg_k, (VALUES ('k3'), ('k4')) k(t),
  LATERAL jsonb_each(kernel_predict_proba('cg_logistic_' || t || '_d', f)) pd,
  LATERAL jsonb_each(kernel_predict_proba('cg_logistic_' || t || '_n', f)) pn
WHERE pd.key = pn.key GROUP BY t ORDER BY t;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SELECT m, t, name FROM (VALUES ('logistic', 'k4'), ('svm', 'k3')) c(m, t),
  LATERAL (SELECT name FROM kernel_model_train('cg_' || m || '_' || t || '_p', format('SELECT f, %s FROM cg_k', t),
    pg_catalog.jsonb_build_object('method', m, 'approximation', 'nystrom', 'components', 80,
      'lambda', 0.001, 'tol', 1e-8, 'test_fraction', 0, 'solver', 'cg'))) x ORDER BY 1;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
SELECT count(*) FILTER (WHERE kernel_predict_class('cg_svm_k3_p', f)
                              IS DISTINCT FROM kernel_predict_class('cg_svm_k3_d', f)) AS parallel_svm_labels_differ
FROM cg_k;
SELECT count(*) AS probabilities,
       max(abs((pn.value::text)::float8 / (pd.value::text)::float8 - 1)) < 1e-6 AS parallel_within_1e6
FROM cg_k, LATERAL jsonb_each(kernel_predict_proba('cg_logistic_k4_d', f)) pd,
  LATERAL jsonb_each(kernel_predict_proba('cg_logistic_k4_p', f)) pn
WHERE pd.key = pn.key;
CREATE TEMP TABLE cg_q AS SELECT kernel_train_query('SELECT f, k4 FROM cg_k',
  '{"method": "logistic", "approximation": "nystrom", "components": 80, "lambda": 0.001, "tol": 1e-8, "solver": "cg"}') AS model;
SELECT count(*) AS probabilities,
       max(abs((pn.value::text)::float8 / (pd.value::text)::float8 - 1)) < 1e-6 AS query_within_1e6,
       count(*) FILTER (WHERE kernel_predict_class(q.model, f)
                              IS DISTINCT FROM kernel_predict_class('cg_logistic_k4_d', f)) AS labels_differ
FROM cg_k, cg_q q, LATERAL jsonb_each(kernel_predict_proba('cg_logistic_k4_d', f)) pd,
  LATERAL jsonb_each(kernel_predict_proba(q.model, f)) pn
WHERE pd.key = pn.key;

-- Newton-CG's memory plan counts its O(q m) sums, L and Falkon's R, not the
-- direct Newton's m x m Hessians: 1,000 components of four classes train
-- under 24MB (the plan before counted 42 MB); 12MB is refused with the hint
-- (lower "components" or raise kernel_ml.max_memory: the rows are not held)
SET kernel_ml.max_memory = '24MB';
SELECT name FROM kernel_model_train('cg_mem', 'SELECT f, k4 FROM cg_k',
       '{"method": "logistic", "approximation": "nystrom", "components": 1000, "lambda": 0.001, "test_fraction": 0, "solver": "cg"}');
SET kernel_ml.max_memory = '12MB';
SELECT name FROM kernel_model_train('cg_mem', 'SELECT f, k4 FROM cg_k',
       '{"method": "logistic", "approximation": "nystrom", "components": 1000, "lambda": 0.001, "test_fraction": 0, "solver": "cg"}');
-- nystrom ridge by cg: the same hint
SELECT name FROM kernel_model_train('cg_mem', 'SELECT f, y FROM cg_rows',
       '{"approximation": "nystrom", "components": 1000, "lambda": 0.001, "test_fraction": 0, "solver": "cg"}');
-- the number the hint names trains
SET kernel_ml.max_memory = '20MB';
SELECT name FROM kernel_model_train('cg_mem', 'SELECT f, k4 FROM cg_k',
       '{"method": "logistic", "approximation": "nystrom", "components": 1000, "lambda": 0.001, "test_fraction": 0, "solver": "cg"}');
-- past the one-pass cap of 8,192 components a Newton-CG classifier is
-- bounded by kernel_ml.max_memory, as its options are (refused before a row
-- is read, with what it needs)
SET kernel_ml.max_memory = '64MB';
SELECT name FROM kernel_model_train('cg_mem', 'SELECT f, k4 FROM cg_k',
       '{"method": "logistic", "approximation": "nystrom", "components": 9000, "lambda": 0.001, "test_fraction": 0, "solver": "cg"}');
RESET kernel_ml.max_memory;
SELECT (kernel_model_info('cg_mem')->>'outputs')::int AS outputs, kernel_model_info('cg_mem')->>'converged' AS converged;

-- Newton-CG at tol 1e-10: its gradient, summed over raw features and
-- whitened after the pass, has a floor near 1e-9 of its start; a class at
-- the floor stops after three steps in a row that lower neither the
-- objective beyond rounding nor the gradient norm by half (before: the same
-- point again to max_iter, 50 Newton steps of up to 16 passes).  Whether a
-- class reaches the floor before tol depends on rounding (the order of the
-- sums, the BLAS kernels of the machine): it converges, or it stalls (not
-- converged, with the warning, hidden here); either way within a few steps
-- and the direct Newton's model within 1e-6 (the rule itself: unit
-- test_primal_stall).  Two classes at lambda 1e-4 (rows in the order of y)
-- show why three flat steps: rounding may reject a good step twice before
-- the full step is accepted and the gradient falls to 1e-14 of its start
SET client_min_messages = error;
SELECT m, s, name FROM (VALUES ('logistic', 'SELECT f, k4 FROM cg_k', 'logistic', 0.001),
    ('svm', 'SELECT f, k3 FROM cg_k', 'svm', 0.001),
    ('binary', 'SELECT f, lbl FROM cg_lbl ORDER BY y, id', 'logistic', 0.0001)) c(m, q, meth, l),
  (VALUES ('_d', '{}'::jsonb), ('_n', '{"solver": "cg"}')) v(s, o),
  LATERAL (SELECT name FROM kernel_model_train('cg_floor_' || m || s, q,
    pg_catalog.jsonb_build_object('method', meth, 'approximation', 'nystrom', 'components', 80,
      'lambda', l, 'tol', 1e-10, 'test_fraction', 0) || o)) x
ORDER BY 1, 2;
RESET client_min_messages;
SELECT m, s, i->>'solver' AS solver, (i->>'iterations')::int <= 12 AS within_12_steps
FROM (VALUES ('logistic'), ('svm'), ('binary')) c(m), (VALUES ('_d'), ('_n')) v(s),
     LATERAL (SELECT kernel_model_info('cg_floor_' || m || s) AS i) x ORDER BY 1, 2;
SELECT max(abs(kernel_predict('cg_floor_binary_n', f) - kernel_predict('cg_floor_binary_d', f))) < 1e-6
       AS binary_within_1e6
FROM cg_lbl;
SELECT count(*) FILTER (WHERE kernel_predict_class('cg_floor_svm_n', f)
                              IS DISTINCT FROM kernel_predict_class('cg_floor_svm_d', f)) AS svm_labels_differ
FROM cg_k;
SELECT count(*) AS probabilities,
       max(abs((pn.value::text)::float8 / (pd.value::text)::float8 - 1)) < 1e-6 AS within_1e6
FROM cg_k, LATERAL jsonb_each(kernel_predict_proba('cg_floor_logistic_d', f)) pd,
  LATERAL jsonb_each(kernel_predict_proba('cg_floor_logistic_n', f)) pn
WHERE pd.key = pn.key;

-- clean up: the catalog is shared with the other tests
SELECT kernel_model_drop(n) FROM (VALUES ('cg_direct'), ('cg_cg'), ('cg_par'), ('cg_short'),
  ('cg_logistic_d'), ('cg_logistic_n'), ('cg_svm_d'), ('cg_svm_n'), ('cg_svr_d'), ('cg_svr_n'),
  ('cg_logistic_p'), ('cg_logistic_k3_d'), ('cg_logistic_k3_n'), ('cg_logistic_k4_d'),
  ('cg_logistic_k4_n'), ('cg_svm_k3_d'), ('cg_svm_k3_n'), ('cg_svm_k4_d'), ('cg_svm_k4_n'),
  ('cg_logistic_k4_p'), ('cg_svm_k3_p'), ('cg_mem'), ('cg_floor_logistic_d'),
  ('cg_floor_logistic_n'), ('cg_floor_svm_d'), ('cg_floor_svm_n'), ('cg_floor_binary_d'),
  ('cg_floor_binary_n'), ('cg_big_direct'), ('cg_big_cg'), ('cg_big_par')) v(n);
SELECT count(*) AS left_over FROM kernel_models WHERE name LIKE 'cg\_%';
