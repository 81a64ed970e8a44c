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
DROP TABLE pdata, serial, par;
