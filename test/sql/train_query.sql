-- kernel_train_query(query, options) (issues 31, 33): one model of every
-- usable row a query returns, the model the kernel_train aggregate gives
-- over the same rows; an approximate model's passes run as statements over
-- the pass aggregate, the query as the caller, security-restricted.
CREATE TABLE tq AS
SELECT i, ARRAY[sin(i * 0.1), cos(i * 0.37), (i % 7)::float8]::float8[] AS f,
       sin(i * 0.1) + 0.3 * cos(i * 0.37) + (i % 7) * 0.01 AS y,
       CASE WHEN sin(i * 0.1) > 0.3 THEN 'hi' WHEN (i % 7) > 3 THEN 'mid' ELSE 'lo' END AS label
FROM generate_series(1, 3000) i;

-- approximate ridge, svr with a k-fold grid, logistic on text labels, exact ridge, kernel PCA
SELECT max(abs(kernel_predict(q.m, t.f) - kernel_predict(a.m, t.f))) < 1e-9 AS nystrom_ridge_same
FROM (SELECT kernel_train_query('SELECT f, y FROM tq', '{"approximation": "nystrom", "components": 40}') AS m) q,
     (SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 40}') AS m FROM tq) a, tq t;
SELECT max(abs(kernel_predict(q.m, t.f) - kernel_predict(a.m, t.f))) < 1e-9 AS rff_svr_grid_same
FROM (SELECT kernel_train_query('SELECT f, y FROM tq', '{"method": "svr", "approximation": "rff", "components": 30, "lambda": [0.001, 0.01], "cv": 3}') AS m) q,
     (SELECT kernel_train(f, y, '{"method": "svr", "approximation": "rff", "components": 30, "lambda": [0.001, 0.01], "cv": 3}') AS m FROM tq) a, tq t;
SELECT max(abs((kernel_predict_proba(q.m, t.f)->>'hi')::float8 - (kernel_predict_proba(a.m, t.f)->>'hi')::float8)) < 1e-9 AS logistic_same,
       kernel_model_info(q.m)->'classes' AS classes
FROM (SELECT kernel_train_query('SELECT f, label FROM tq', '{"method": "logistic", "approximation": "nystrom", "components": 30}') AS m) q,
     (SELECT kernel_train(f, label, '{"method": "logistic", "approximation": "nystrom", "components": 30}') AS m FROM tq) a, tq t
GROUP BY 2;
SELECT max(abs(kernel_predict(q.m, t.f) - kernel_predict(a.m, t.f))) < 1e-9 AS exact_same
FROM (SELECT kernel_train_query('SELECT f, y FROM tq WHERE i <= 300', '{"lambda": 0.1}') AS m) q,
     (SELECT kernel_train(f, y, '{"lambda": 0.1}') AS m FROM tq WHERE i <= 300) a, tq t;
SELECT bool_and(kernel_transform(q.m, t.f) = kernel_transform(a.m, t.f)) AS pca_same
FROM (SELECT kernel_train_query('SELECT f FROM tq WHERE i <= 300', '{"method": "pca"}') AS m) q,
     (SELECT kernel_fit(f, '{"method": "pca"}') AS m FROM tq WHERE i <= 300) a, tq t;

-- options of named models only, nulls, shapes
SELECT kernel_train_query('SELECT f, y FROM tq', '{"test_fraction": 0.2}');
SELECT kernel_train_query('SELECT f, y FROM tq', '{"deploy": "always"}');
SELECT kernel_train_query(NULL, '{}');
SELECT kernel_train_query('SELECT f, y FROM tq', NULL);
SELECT kernel_train_query('SELECT f FROM tq', '{}');
SELECT kernel_train_query('SELECT f, y FROM tq WHERE false', '{"approximation": "nystrom"}');
SELECT kernel_train_query('SELECT f, y FROM tq WHERE false', '{}');

-- the query runs as the caller: a role without SELECT on the table cannot read it
CREATE ROLE regress_tq_reader;
SET ROLE regress_tq_reader;
\set VERBOSITY terse
SELECT kernel_train_query('SELECT f, y FROM tq', '{"approximation": "nystrom", "components": 10}');
SELECT kernel_train_query('SELECT f, y FROM tq', '{}');
\set VERBOSITY default
RESET ROLE;
DROP ROLE regress_tq_reader;
DROP TABLE tq;
