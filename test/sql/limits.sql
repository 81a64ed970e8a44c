-- Size limits, overflowing statistics and the per-backend memory ceiling
-- (issue 20: F3, F5, section 4; issue 21: C6)
SET extra_float_digits = 0;

-- F3: "components" beyond the solve's limit (8192) is an option error
-- (22023, the range in the detail) before any row is read: each of these
-- rows would fail on its NULL feature if it were read
SELECT kernel_train(ARRAY[1, NULL]::float8[], 1.0, '{"approximation": "rff", "components": 16000}');
SELECT kernel_train(ARRAY[1, NULL]::float8[], 'a'::text, '{"method": "logistic", "approximation": "nystrom", "components": 8193}');
SELECT kernel_basis(ARRAY[1, NULL]::float8[], '{"approximation": "rff", "components": 16000}');
SELECT kernel_train(ARRAY[1, NULL]::float8[], 1.0, '{"approximation": "rff", "components": 16000}', '\x00'::bytea);
-- the limit itself is accepted: the row is read (and refused)
SELECT kernel_basis(ARRAY[1, NULL]::float8[], '{"approximation": "rff", "components": 8192}');
-- a named model: refused before its query runs (an empty table here)
CREATE TABLE lim_empty (f float8[], y float8);
SELECT kernel_model_train('lim_big', 'SELECT f, y FROM lim_empty', '{"approximation": "rff", "components": 16000}');
SELECT count(*) FROM kernel_models WHERE name = 'lim_big';

-- F5: targets near 1e308 overflow the sums of y and y^2; an approximate
-- regression raises 22003 (as the exact path does) rather than report a
-- train_rmse of 0 while every residual is about 1e308
CREATE TABLE lim_huge AS
SELECT ARRAY[i, i % 7]::float8[] AS f,
       CASE WHEN i % 2 = 0 THEN 1e308 ELSE -1e308 END::float8 AS y
FROM generate_series(1, 50) i;
\set VERBOSITY sqlstate
SELECT kernel_model_info(kernel_train(f, y, '{"approximation": "nystrom", "components": 10}'))->'train_rmse' FROM lim_huge;
SELECT kernel_model_info(kernel_train(f, y, '{"approximation": "rff", "components": 10}'))->'train_rmse' FROM lim_huge;
SELECT kernel_model_info(kernel_train(f, y, '{"approximation": "nystrom", "components": 10}',
       (SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 10}') FROM lim_huge)))->'train_rmse'
FROM lim_huge;
-- squares alone overflow (1e200^2): no silent 0 either
SELECT kernel_model_info(kernel_train(f, y / 1e108, '{"approximation": "nystrom", "components": 10}'))->'train_rmse' FROM lim_huge;
\set VERBOSITY default
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 10}') FROM lim_huge;
-- the same targets scaled down train, with an honest error
SELECT round((kernel_model_info(kernel_train(f, y / 1e300, '{"approximation": "nystrom", "components": 10}'))->>'train_rmse')::numeric / 1e8, 3) AS rmse_over_1e8
FROM lim_huge;

-- C6: kernel_ml.max_memory bounds what the whole backend holds, not one
-- call.  One kernel_train(f, y, options, basis) call over 200 rff features
-- needs about 2 MB at its peak and keeps about 0.6 MB while rows arrive.
CREATE TABLE lim_rows AS
SELECT i AS id, ARRAY[sin(i), cos(i), (i % 5)::float8]::float8[] AS f, sin(i) + cos(i) AS y
FROM generate_series(1, 2000) i;
CREATE TABLE lim_basis AS
SELECT kernel_basis(f, '{"approximation": "rff", "components": 200}') AS b FROM lim_rows;
SET kernel_ml.max_memory = '2MB';
SELECT length(kernel_train(f, y, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) FROM lim_rows;
-- twenty calls in one select list: refused, each counted while it runs
SELECT length(kernel_train(f, y,      '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c1,
       length(kernel_train(f, y + 1,  '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c2,
       length(kernel_train(f, y + 2,  '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c3,
       length(kernel_train(f, y + 3,  '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c4,
       length(kernel_train(f, y + 4,  '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c5,
       length(kernel_train(f, y + 5,  '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c6,
       length(kernel_train(f, y + 6,  '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c7,
       length(kernel_train(f, y + 7,  '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c8,
       length(kernel_train(f, y + 8,  '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c9,
       length(kernel_train(f, y + 9,  '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c10,
       length(kernel_train(f, y + 10, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c11,
       length(kernel_train(f, y + 11, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c12,
       length(kernel_train(f, y + 12, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c13,
       length(kernel_train(f, y + 13, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c14,
       length(kernel_train(f, y + 14, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c15,
       length(kernel_train(f, y + 15, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c16,
       length(kernel_train(f, y + 16, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c17,
       length(kernel_train(f, y + 17, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c18,
       length(kernel_train(f, y + 18, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c19,
       length(kernel_train(f, y + 19, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) AS c20
FROM lim_rows;
-- after the error nothing is held: one call (which needs nearly all of
-- the 2 MB) succeeds again
SELECT length(kernel_train(f, y, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) FROM lim_rows;
-- a call that fails on a row half-way, and an aborted transaction, hold nothing after
SELECT length(kernel_train(CASE WHEN id = 1500 THEN ARRAY[1]::float8[] ELSE f END, y,
       '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) FROM lim_rows;
BEGIN;
SELECT length(kernel_train(f, y, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) FROM lim_rows;
SELECT 1 / 0;
ROLLBACK;
BEGIN;
SAVEPOINT s;
-- (two calls with the same options and basis share one parsed basis and
-- its random features; other options need their own, and are refused)
SELECT length(kernel_train(f, y, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))),
       length(kernel_train(f, y, '{"approximation": "rff", "components": 200, "lambda": 0.5}', (SELECT b FROM lim_basis)))
FROM lim_rows;
ROLLBACK TO SAVEPOINT s;
SELECT length(kernel_train(f, y, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis))) FROM lim_rows;
COMMIT;
-- grouped, sorted: each group's state is released when the next group
-- starts; hashed: every group's state is held at once, and counted
SET enable_hashagg = off;
EXPLAIN (COSTS OFF)
SELECT id % 4 AS g, length(kernel_train(f, y, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis)))
FROM lim_rows GROUP BY 1 ORDER BY 1;
SELECT id % 4 AS g, length(kernel_train(f, y, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis)))
FROM lim_rows GROUP BY 1 ORDER BY 1;
RESET enable_hashagg;
SET enable_sort = off;
EXPLAIN (COSTS OFF)
SELECT id % 4 AS g, length(kernel_train(f, y, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis)))
FROM lim_rows GROUP BY 1;
SELECT id % 4 AS g, length(kernel_train(f, y, '{"approximation": "rff", "components": 200}', (SELECT b FROM lim_basis)))
FROM lim_rows GROUP BY 1;
RESET enable_sort;

-- exact models: the rows that several calls collect count together (each
-- buffer at the capacity it allocated), so three calls over 300 rows of 50
-- features are refused where one fits, and the error releases them (one
-- lambda: the default's leave-one-out grid needs a second 300 x 300 matrix,
-- refused at 2MB)
CREATE TABLE lim_wide AS
SELECT i AS id, array_agg(sin(i * j) ORDER BY j)::float8[] AS f, cos(i) AS y
FROM generate_series(1, 300) i, generate_series(1, 50) j GROUP BY i;
SET kernel_ml.max_memory = '2MB';
SELECT kernel_train(f, y, '{"lambda": 1}') IS NOT NULL AS one FROM lim_wide;
SELECT kernel_train(f, y) IS NOT NULL AS default_grid FROM lim_wide;
SELECT kernel_train(f, y, '{"lambda": 1}') IS NOT NULL AS a, kernel_train(f, y + 1, '{"lambda": 1}') IS NOT NULL AS b,
       kernel_train(f, y + 2, '{"lambda": 1}') IS NOT NULL AS c
FROM lim_wide;
SELECT kernel_train(f, y, '{"lambda": 1}') IS NOT NULL AS again FROM lim_wide;
RESET kernel_ml.max_memory;
DROP TABLE lim_empty, lim_huge, lim_rows, lim_basis, lim_wide;

-- components whose m x m work cannot fit are refused before any pass over
-- the rows, with how many would fit: by name (the query would fail on its
-- first row if a pass read it), in one statement and with a basis
CREATE TABLE lim_comp AS SELECT ARRAY[i, i % 7]::float8[] AS f, i::float8 AS y FROM generate_series(1, 50) i;
SET kernel_ml.max_memory = '8MB';
SELECT version FROM kernel_model_train('lim_comp', 'SELECT f, y / (y - y) FROM lim_comp',
       '{"approximation": "nystrom", "components": 2000}');
SELECT kernel_train(f, y, '{"approximation": "rff", "components": 2000}') FROM lim_comp;
SELECT kernel_train(f, y::text, '{"method": "logistic", "approximation": "rff", "components": 2000}') FROM lim_comp;
RESET kernel_ml.max_memory;
SELECT count(*) AS stored FROM kernel_models WHERE name = 'lim_comp';
DROP TABLE lim_comp;
