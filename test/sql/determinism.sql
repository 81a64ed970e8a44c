-- Results do not depend on row order or on the plan (issue 10, point 8):
-- k-fold assigns folds by a hash of each row's values and the seed, and
-- every row of one aggregate call must bring the same options.
SET extra_float_digits = 0;

CREATE TABLE ddata AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i), (i % 5) / 5.0]::float8[] AS f,
       sin(i) + 0.3 * cos(2 * i) AS y
FROM generate_series(1, 400) i;
ANALYZE ddata;

-- k-fold grids, ridge and lms, rows in opposite orders
CREATE TABLE dm AS
SELECT 'ridge' AS method, 'asc' AS ord,
       kernel_train(f, y, '{"gamma": [0.3, 1, 3], "lambda": [0.01, 0.1, 1], "cv": 5, "seed": 11}' ORDER BY id) AS model
FROM ddata
UNION ALL
SELECT 'ridge', 'desc',
       kernel_train(f, y, '{"gamma": [0.3, 1, 3], "lambda": [0.01, 0.1, 1], "cv": 5, "seed": 11}' ORDER BY id DESC)
FROM ddata
UNION ALL
SELECT 'lms', 'asc',
       kernel_train(f, y, '{"method": "lms", "gamma": [0.5, 2], "lambda": [0.01, 0.1], "cv": 3, "seed": 5}' ORDER BY id)
FROM ddata
UNION ALL
SELECT 'lms', 'desc',
       kernel_train(f, y, '{"method": "lms", "gamma": [0.5, 2], "lambda": [0.01, 0.1], "cv": 3, "seed": 5}' ORDER BY id DESC)
FROM ddata;

-- identical selection tables (every score to the last bit), identical models
SELECT a.method,
       kernel_model_info(a.model)->'selection' = kernel_model_info(d.model)->'selection' AS same_selection,
       a.model = d.model AS same_model,
       kernel_model_info(a.model)->'selection'->'best' AS best
FROM dm a JOIN dm d ON a.method = d.method AND a.ord = 'asc' AND d.ord = 'desc'
ORDER BY 1;

-- the scores themselves
SELECT method, c.ordinality AS k, round((c.value->>'gamma')::numeric, 6) AS gamma,
       round((c.value->>'lambda')::numeric, 6) AS lambda,
       round((c.value->>'score')::numeric, 6) AS score
FROM dm, jsonb_array_elements(kernel_model_info(model)->'selection'->'candidates') WITH ORDINALITY c
WHERE ord = 'asc' ORDER BY 1, 2;

-- another seed gives other folds
SELECT kernel_model_info(kernel_train(f, y, '{"gamma": [0.3, 1, 3], "lambda": [0.01, 0.1, 1], "cv": 5, "seed": 12}'))->'selection'
       <> (SELECT kernel_model_info(model)->'selection' FROM dm WHERE method = 'ridge' AND ord = 'asc') AS seed_matters
FROM ddata;

-- a forced parallel plan gives the same selection table and model
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF)
SELECT kernel_train(f, y, '{"gamma": [0.3, 1, 3], "lambda": [0.01, 0.1, 1], "cv": 5, "seed": 11}') FROM ddata;
CREATE TABLE dpar AS
SELECT 'ridge' AS method, kernel_train(f, y, '{"gamma": [0.3, 1, 3], "lambda": [0.01, 0.1, 1], "cv": 5, "seed": 11}') AS model
FROM ddata
UNION ALL
SELECT 'lms', kernel_train(f, y, '{"method": "lms", "gamma": [0.5, 2], "lambda": [0.01, 0.1], "cv": 3, "seed": 5}')
FROM ddata;
SELECT p.method,
       kernel_model_info(p.model)->'selection' = kernel_model_info(s.model)->'selection' AS same_selection,
       p.model = s.model AS same_model
FROM dpar p JOIN dm s ON s.method = p.method AND s.ord = 'asc'
ORDER BY 1;

-- options that differ between rows: an error, under parallel query too
EXPLAIN (COSTS OFF)
SELECT kernel_train(f, y, CASE WHEN id <= 200 THEN '{"lambda": 0.1}' ELSE '{"lambda": 0.2}' END::jsonb) FROM ddata;
\set VERBOSITY terse
SELECT kernel_train(f, y, CASE WHEN id <= 200 THEN '{"lambda": 0.1}' ELSE '{"lambda": 0.2}' END::jsonb) FROM ddata;
\set VERBOSITY default
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;

-- serial: the row is named
SELECT kernel_train(f, y, CASE WHEN id <= 200 THEN '{"lambda": 0.1}' ELSE '{"lambda": 0.2}' END::jsonb ORDER BY id)
FROM ddata;
SELECT kernel_train(f, y, CASE WHEN id <= 200 THEN '{"lambda": 0.1}' END::jsonb ORDER BY id)
FROM ddata;
SELECT kernel_matrix(f, CASE WHEN id <= 3 THEN '{"kernel": "rbf"}' ELSE '{"kernel": "linear"}' END::jsonb ORDER BY id)
FROM ddata WHERE id <= 5;
SELECT kernel_check(f, CASE WHEN id <= 3 THEN '{"gamma": 1}' ELSE '{"gamma": 2}' END::jsonb ORDER BY id)
FROM ddata WHERE id <= 5;
-- the same options spelt differently are the same options
SELECT kernel_model_info(kernel_train(f, y, CASE WHEN id <= 200 THEN '{"lambda": 1, "kernel": "rbf"}'
                                              ELSE '{"kernel": "rbf", "lambda": 1.0}' END::jsonb))->'lambda' AS lambda
FROM ddata;

-- combining two partial states with different options (partition-wise
-- aggregation calls the combine function without parallel workers)
CREATE TABLE dparts (id int, f float8[], y float8, opts jsonb) PARTITION BY RANGE (id);
CREATE TABLE dparts_1 PARTITION OF dparts FOR VALUES FROM (1) TO (201);
CREATE TABLE dparts_2 PARTITION OF dparts FOR VALUES FROM (201) TO (401);
INSERT INTO dparts
SELECT id, f, y, CASE WHEN id <= 200 THEN '{"lambda": 0.1}' ELSE '{"lambda": 0.2}' END::jsonb FROM ddata;
ANALYZE dparts;
SET enable_partitionwise_aggregate = on;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT kernel_train(f, y, opts) FROM dparts;
SELECT kernel_train(f, y, opts) FROM dparts;
-- with the same options it combines
SELECT kernel_model_info(kernel_train(f, y, '{"lambda": 0.1}'))->'n_train' AS n_train FROM dparts;
RESET enable_partitionwise_aggregate;
RESET max_parallel_workers_per_gather;

DROP TABLE ddata, dm, dpar, dparts;
