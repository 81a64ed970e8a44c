-- kernel PCA (issue 32): kernel_fit(features, '{"method": "pca"}') and
-- kernel_transform, by bytea and by name.  The reference coordinates are
-- scikit-learn 1.2's KernelPCA(kernel="rbf", eigen_solver="dense") on the
-- StandardScaler'd training rows (population scale, kernel_ml's
-- "standardize"), transform of the four held-out rows: each component's
-- sign as svd_flip fixes it (the largest coefficient positive), which
-- kernel_ml fixes the same way (test/crosscheck/crosscheck.py kpca checks
-- iris and wine).
SET extra_float_digits = 0;

CREATE TABLE kpca_rows (id int, f float8[]);
INSERT INTO kpca_rows VALUES
(1, '{1.691,0.068,3.016}'), (2, '{0.408,-0.578,3.001}'), (3, '{-0.001,-2.509,3.509}'),
(4, '{0.6,-0.251,2.914}'), (5, '{0.505,0.477,2.879}'), (6, '{-1.453,2.109,3.062}'),
(7, '{0.274,-2.053,3.825}'), (8, '{0.154,0.226,4.015}'), (9, '{-0.045,-1.901,2.797}'),
(10, '{-2.288,3.099,2.792}'), (11, '{-0.743,3.145,2.174}'), (12, '{0.535,-3.129,2.669}'),
(13, '{-1.204,3.924,3.883}'), (14, '{-0.329,2.681,2.91}'), (15, '{0.568,-0.506,2.146}'),
(16, '{-1.803,1.766,4.124}'), (17, '{0.269,-0.049,3.956}'), (18, '{0.237,1.203,3.126}'),
(19, '{-0.132,0.381,2.283}'), (20, '{0.502,0.81,3.597}');

CREATE TABLE kpca_new (id int, f float8[], want float8[], want3 float8[]);
INSERT INTO kpca_new VALUES
(101, '{-0.369,-2.813,2.95}', '{-0.25268908605602647,-0.039064117088038815}',
 '{-0.22852568709774757,-0.03673281323995414,0.5962283362712612}'),
(102, '{1.7,0.233,2.555}', '{-0.16599386151377898,-0.2759023679438999}',
 '{-0.1488448185568,-0.2645387790099615,-0.045805696437903165}'),
(103, '{-1.194,-1.1,2.85}', '{0.07768242794932076,-0.11606913594766187}',
 '{0.08230663432104748,-0.11197808615900684,0.22594440176879274}'),
(104, '{-1.18,3.995,2.859}', '{0.6986329719328604,-0.11920462781717678}',
 '{0.6831200904261656,-0.11657787452259187,-0.038738033186554305}');

CREATE TABLE kpca_models AS
SELECT kernel_fit(f, '{"method": "pca", "dimensions": 2, "gamma": 0.3}') AS m,
       kernel_fit(f, '{"method": "pca", "dimensions": 3}') AS defaults3,
       kernel_fit(f, '{"method": "pca", "dimensions": 2, "gamma": 0.3,
                       "approximation": "nystrom", "components": 100}') AS nys,
       kernel_fit(f, '{"method": "pca", "dimensions": 2, "gamma": 0.3,
                       "approximation": "rff", "components": 64}') AS rff,
       kernel_fit(f, '{"method": "pca", "dimensions": 50}') AS capped
FROM kpca_rows;

-- the coordinates of the held-out rows, and their distance to scikit-learn's
SELECT n.id, (SELECT array_agg(round(v::numeric, 6)) FROM unnest(kernel_transform(m, n.f)) v) AS coords,
       (SELECT max(abs(a - b)) FROM unnest(kernel_transform(m, n.f), n.want) AS u(a, b)) < 1e-12 AS gamma_03,
       (SELECT max(abs(a - b)) FROM unnest(kernel_transform(defaults3, n.f), n.want3) AS u(a, b)) < 1e-12 AS defaults_k3
FROM kpca_new n, kpca_models ORDER BY n.id;

-- kernel_model_info: eigenvalues (scikit-learn's eigenvalues_ 3.23164447,
-- 2.71388387), explained variance (over NumPy's trace of the centred Gram
-- matrix, 13.483272: 0.239678, 0.201278)
SELECT i->>'task' AS task, i->>'method' AS method, i->'outputs' AS outputs,
       i->'dimensions' AS dimensions, i->'n_train' AS n_train,
       (SELECT array_agg(round(v::numeric, 8)) FROM jsonb_array_elements_text(i->'eigenvalues') v) AS eigenvalues,
       (SELECT array_agg(round(v::numeric, 6)) FROM jsonb_array_elements_text(i->'explained_variance_ratio') v) AS ratio,
       round((i->>'explained_variance')::numeric, 6) AS explained,
       round((i->>'eigenvalue_total')::numeric, 6) AS total,
       i ? 'train_rmse' AS has_rmse
FROM kpca_models, kernel_model_info(m) i;

-- every component of the training rows: the total is the trace of the
-- centred Gram matrix (n minus the mean of K for rbf), the ratios add up to 1
SELECT jsonb_array_length(i->'eigenvalues') AS outputs,
       abs((i->>'explained_variance')::float8 - 1) < 1e-12 AS all_variance,
       i->'dimensions' AS asked
FROM kpca_models, kernel_model_info(capped) i;

-- nystrom with every training row as a centre: the exact coordinates (up to
-- each component's sign) within 1e-6
WITH c AS (
  SELECT n.id, u.j, u.a, u.b
  FROM kpca_new n, kpca_models,
       unnest(kernel_transform(m, n.f), kernel_transform(nys, n.f)) WITH ORDINALITY AS u(a, b, j)
), s AS (SELECT j, sign(sum(a * b)) AS s FROM c GROUP BY j)
SELECT max(abs(c.a - s.s * c.b)) < 1e-6 AS nystrom_is_exact,
       (SELECT kernel_model_info(nys)->>'n_centers' FROM kpca_models) AS centres
FROM c JOIN s USING (j);

-- rff: k finite coordinates per row, eigenvalues descending
SELECT array_length(kernel_transform(rff, n.f), 1) AS k,
       (SELECT bool_and(v::float8 >= 0) FROM jsonb_array_elements_text(kernel_model_info(rff)->'eigenvalues') v) AS nonneg
FROM kpca_new n, kpca_models WHERE n.id = 101;

-- the row order does not change the model (rows in row-hash order first)
SELECT (SELECT kernel_fit(f, '{"method": "pca", "gamma": 0.3}' ORDER BY id DESC) FROM kpca_rows)
     = (SELECT kernel_fit(f, '{"method": "pca", "gamma": 0.3}' ORDER BY id) FROM kpca_rows) AS order_free;

-- rows with a NULL feature array are skipped, with a NOTICE
SELECT length(kernel_fit(f, '{"method": "pca"}')) > 0 AS fitted
FROM (SELECT f FROM kpca_rows UNION ALL SELECT NULL) r;

-- a parallel plan (partial aggregates combined) gives the same model
CREATE TABLE kpca_big AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f
FROM generate_series(1, 3000) i;
ANALYZE kpca_big;
CREATE TABLE kpca_serial AS
SELECT kernel_fit(f, '{"method": "pca", "dimensions": 4, "approximation": "nystrom", "components": 50}') AS m
FROM kpca_big;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF)
SELECT kernel_fit(f, '{"method": "pca", "dimensions": 4, "approximation": "nystrom", "components": 50}') FROM kpca_big;
SELECT kernel_fit(f, '{"method": "pca", "dimensions": 4, "approximation": "nystrom", "components": 50}')
       = (SELECT m FROM kpca_serial) AS parallel_same
FROM kpca_big;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- a named model from a one-column query: kernel_fit's model of the same
-- rows, no split and no score (metrics: task transform, no hold-out);
-- kernel_transform by name equals kernel_transform of the bytea
SELECT version, deployed, metrics->>'task' AS task, metrics->'holdout_rows' AS holdout,
       metrics->'deploy'->>'reason' AS reason
FROM kernel_model_train('kpca_named', 'SELECT f FROM kpca_rows',
                        '{"method": "pca", "dimensions": 2, "gamma": 0.3}');
SELECT kernel_model_get('kpca_named') = m AS same_model FROM kpca_models;
SELECT n.id, kernel_transform('kpca_named', n.f) = kernel_transform(m, n.f) AS by_name
FROM kpca_new n, kpca_models ORDER BY n.id;
-- if_better has no score to compare a new version on: it stays undeployed
SELECT version, deployed, metrics->'deploy'->>'reason' AS reason
FROM kernel_model_retrain('kpca_named');
SELECT version, deployed FROM kernel_model_train('kpca_named', 'SELECT f FROM kpca_rows',
       '{"method": "pca", "dimensions": 3, "deploy": "always"}');
SELECT array_length(kernel_transform('kpca_named', '{0, 1, 3}'), 1) AS k_deployed;
SELECT kernel_model_train('kpca_named', 'SELECT f, id FROM kpca_rows', '{"method": "pca"}');
SELECT kernel_model_train('kpca_named', 'SELECT f FROM kpca_rows', '{"method": "ridge"}');
-- a grid where the method has no score to pick by: refused, not its first candidate
SELECT kernel_fit(f, '{"method": "pca", "gamma": "auto"}') FROM kpca_rows;
SELECT kernel_fit(f, '{"method": "oneclass", "gamma": [0.5, 1]}') FROM kpca_rows;
SELECT kernel_model_train('kpca_named', 'SELECT f FROM kpca_rows', '{"method": "pca", "gamma": [0.5, 1]}');
SELECT kernel_model_train('kpca_named', 'SELECT f FROM kpca_rows', '{}');
SELECT kernel_model_train('kpca_named', 'SELECT id FROM kpca_rows', '{"method": "pca"}');
SELECT kernel_predict('kpca_named', '{0, 1, 3}');
SELECT kernel_model_drop('kpca_named');

-- errors
SELECT kernel_predict(m, '{0, 1, 3}') FROM kpca_models;
-- a flipped bit in the last section (the pca section: its eigenvalues), a truncated model
SELECT kernel_transform(set_byte(m, length(m) - 10, get_byte(m, length(m) - 10) # 1), '{0, 1, 3}')
FROM kpca_models;
SELECT kernel_model_info(substr(m, 1, length(m) - 4)) FROM kpca_models;
SELECT kernel_predict_class(m, '{0, 1, 3}') FROM kpca_models;
SELECT kernel_predict_matrix(m, '{{0, 1, 3}}') FROM kpca_models;
SELECT kernel_evaluate(m, n.f, 1.0) FROM kpca_models, kpca_new n;
SELECT kernel_transform(m, '{0, 1}') FROM kpca_models;
SELECT kernel_transform(m, '{0, 1, "NaN"}') FROM kpca_models;
SELECT kernel_transform(kernel_train(f, id), '{0, 1, 3}') FROM kpca_rows;
SELECT kernel_fit(f, '{}') FROM kpca_rows;
SELECT kernel_fit(f, '{"method": "ridge"}') FROM kpca_rows;
SELECT kernel_train(f, id, '{"method": "pca"}') FROM kpca_rows;
SELECT kernel_fit(f, '{"method": "pca", "dimensions": 0}') FROM kpca_rows;
SELECT kernel_fit(f, '{"method": "pca", "cv": 5}') FROM kpca_rows;
SELECT kernel_fit(f, '{"method": "pca", "lambda": 0.1, "epsilon": 0.1}') FROM kpca_rows;
-- the exact form's n x n matrix is counted against kernel_ml.max_memory; nystrom fits
SET kernel_ml.max_memory = '16MB';
SELECT length(kernel_fit(f, '{"method": "pca"}')) FROM kpca_big;
SELECT length(kernel_fit(f, '{"method": "pca", "approximation": "nystrom", "components": 100}')) > 0 AS nystrom_fits
FROM kpca_big;
RESET kernel_ml.max_memory;
-- identical rows: every eigenvalue 0, coordinates 0 (no NaN)
SELECT kernel_transform(m, '{5, 6}') AS coords, kernel_model_info(m) -> 'explained_variance_ratio' AS ratio
FROM (SELECT kernel_fit(f, '{"method": "pca"}') AS m FROM (VALUES ('{1,2}'::float8[]), ('{1,2}')) v(f)) s;

DROP TABLE kpca_rows, kpca_new, kpca_models, kpca_big, kpca_serial;
