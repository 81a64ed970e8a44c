-- kernel_train runs as a partial aggregate in parallel workers
SET extra_float_digits = 0;

CREATE TABLE pdata AS
SELECT i AS id, ARRAY[sin(i), cos(0.3 * i), (i % 11) / 11.0]::float8[] AS f,
       sin(i) * cos(0.3 * i) AS y
FROM generate_series(1, 3000) i;
ANALYZE pdata;

SET max_parallel_workers_per_gather = 0;
CREATE TABLE serial AS SELECT kernel_train(f, y) AS model FROM pdata;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT kernel_train(f, y) FROM pdata;
CREATE TABLE par AS SELECT kernel_train(f, y) AS model FROM pdata;

SELECT kernel_model_info(p.model)->'n_train' AS n_train,
       max(abs(kernel_predict(p.model, d.f) - kernel_predict(s.model, d.f))) < 1e-9 AS same_predictions
FROM par p, serial s, pdata d WHERE d.id % 50 = 0 GROUP BY 1;

RESET ALL;

-- the two-pass form, kernel_train(f, y, options, basis), under parallel
-- query with a leader that only combines: in a fresh backend it ran no
-- transition, so it rebuilds the learner's sums pass from what the
-- workers' states carry (issue 28); the same model as the serial one
SET extra_float_digits = 0;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE pbasis AS
SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 50, "seed": 3}') AS b FROM pdata;
CREATE TABLE serial2 AS
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 50, "seed": 3}', (SELECT b FROM pbasis)) AS model
FROM pdata;
\c -
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF)
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 50, "seed": 3}', (SELECT b FROM pbasis)) FROM pdata;
CREATE TABLE par2 AS
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 50, "seed": 3}', (SELECT b FROM pbasis)) AS model
FROM pdata;
SELECT kernel_model_info(p.model)->'n_train' AS n_train,
       max(abs(kernel_predict(p.model, d.f) - kernel_predict(s.model, d.f))) < 1e-9 AS same_predictions
FROM par2 p, serial2 s, pdata d WHERE d.id % 50 = 0 GROUP BY 1;

-- and kernel_basis the same way: the same rows sampled, the same scaler
EXPLAIN (COSTS OFF)
SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 50, "seed": 3}') FROM pdata;
SELECT (i->>'rows')::int AS rows,
       (SELECT max(abs(a.v::text::float8 - c.v::text::float8))
        FROM pbasis, jsonb_path_query(i, '$.centers[*][*]') WITH ORDINALITY a(v, n)
        JOIN jsonb_path_query(kernel_basis_info(b), '$.centers[*][*]') WITH ORDINALITY c(v, n) USING (n)) < 1e-9 AS same_centers,
       (SELECT max(abs((i->'mean'->>k)::float8 - (kernel_basis_info(b)->'mean'->>k)::float8))
        FROM pbasis, generate_series(0, 2) k) < 1e-12 AS same_mean
FROM (SELECT kernel_basis_info(kernel_basis(f, '{"approximation": "nystrom", "components": 50, "seed": 3}')) AS i
      FROM pdata) q;

RESET ALL;
DROP TABLE pdata, serial, par, pbasis, serial2, par2;
