-- kernel_predict_std_matrix (issue 32): kernel_predict_std of the rows of a
-- 2-D array, a panel at a time (one GEMM for the kernel block, one
-- triangular solve for the panel).  Its values equal the row form's within
-- 1e-12 relative (the row form equals scikit-learn's and NumPy's within
-- 1e-8: crosscheck.py gp), for exact, nystrom and rff, bytea and by name.
SET extra_float_digits = 0;
CREATE TABLE gsm_rows AS
SELECT i, ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f,
       sin(i) + 0.5 * cos(0.7 * i) + ((i * 7919) % 100) / 500.0 AS y
FROM generate_series(1, 300) i;
-- new rows, then 20 training rows (where the latent part is smallest)
CREATE TABLE gsm_new AS
SELECT j, ARRAY[1.2 * sin(1.3 * j), cos(j), (j % 5) / 5.0]::float8[] AS f
FROM generate_series(1, 700) j
UNION ALL SELECT 1000 + i, f FROM gsm_rows WHERE i <= 20;
CREATE TABLE gsm_models AS
SELECT a, (SELECT kernel_train(f, y, o) FROM gsm_rows) AS m
FROM (VALUES ('exact rbf', '{"lambda": 0.01}'::jsonb),
             ('exact laplacian', '{"kernel": "laplacian", "lambda": 0.01}'),
             ('nystrom', '{"approximation": "nystrom", "components": 60, "lambda": 0.01, "uncertainty": true}'),
             ('rff', '{"approximation": "rff", "components": 80, "lambda": 0.01, "uncertainty": true}')) v(a, o);
SELECT a, cardinality(s.m) AS rows,
       (SELECT max(abs(x - y) / y) FROM unnest(s.m, r.s) u(x, y)) < 1e-12 AS equals_row_form,
       (SELECT bool_and(x > 0) FROM unnest(s.m) x) AS positive
FROM gsm_models g,
     LATERAL (SELECT kernel_predict_std_matrix(g.m, array_agg(f ORDER BY j)) AS m FROM gsm_new) s,
     LATERAL (SELECT array_agg(kernel_predict_std(g.m, f) ORDER BY j) AS s FROM gsm_new) r
ORDER BY a;
-- blocks of any size give the same values: a single row, and 3 blocks
SELECT a, abs((kernel_predict_std_matrix(m, ARRAY[[0.1, 0.2, 0.3]]::float8[]))[1]
              / kernel_predict_std(m, ARRAY[0.1, 0.2, 0.3]::float8[]) - 1) < 1e-12 AS one_row,
       (SELECT max(abs(x / y - 1)) FROM unnest(
          (SELECT array_agg(v ORDER BY b, k) FROM
             (SELECT b, k, v FROM
                (SELECT j / 300 AS b, kernel_predict_std_matrix(m, array_agg(f ORDER BY j)) AS s
                 FROM gsm_new GROUP BY j / 300) t, unnest(t.s) WITH ORDINALITY u(v, k)) w),
          (SELECT kernel_predict_std_matrix(m, array_agg(f ORDER BY j)) FROM gsm_new)) u(x, y)) < 1e-12 AS blocks
FROM gsm_models ORDER BY a;
-- by name (the deployed version), with the row form's values
SELECT count(*) FROM kernel_model_train('gsm_named', 'SELECT f, y FROM gsm_rows',
                                        '{"approximation": "nystrom", "components": 40, "uncertainty": true, "lambda": 0.05}');
SELECT (SELECT max(abs(x - y) / y) FROM unnest(s.m, r.s) u(x, y)) < 1e-12 AS by_name_equals_row_form
FROM (SELECT kernel_predict_std_matrix('gsm_named', array_agg(f ORDER BY j)) AS m FROM gsm_new) s,
     (SELECT array_agg(kernel_predict_std('gsm_named', f) ORDER BY j) AS s FROM gsm_new) r;
SELECT kernel_model_drop('gsm_named');
-- the clip rule: never below the noise's sqrt(s2 lambda), as the row form
SELECT bool_and(x >= sqrt((kernel_model_info(m)->>'amplitude')::float8 * 1e-10) * (1 - 1e-12)) AS never_below_noise
FROM (SELECT kernel_train(f, y, '{"lambda": 1e-10}') AS m FROM gsm_rows) t,
     LATERAL unnest(kernel_predict_std_matrix(m, (SELECT array_agg(f ORDER BY i) FROM gsm_rows WHERE i <= 50))) x;
-- an empty array, errors
SELECT kernel_predict_std_matrix(m, '{}'::float8[]) FROM gsm_models WHERE a = 'exact rbf';
SELECT kernel_predict_std_matrix(m, ARRAY[0.1, 0.2, 0.3]::float8[]) FROM gsm_models WHERE a = 'exact rbf';
SELECT kernel_predict_std_matrix(m, ARRAY[[0.1, 0.2]]::float8[]) FROM gsm_models WHERE a = 'exact rbf';
SELECT kernel_predict_std_matrix(m, ARRAY[[0.1, 0.2, 0.3], [0.1, NULL, 0.3]]::float8[]) FROM gsm_models WHERE a = 'exact rbf';
SELECT kernel_predict_std_matrix(m, ARRAY[[0.1, 0.2, 0.3], [0.1, 'NaN', 0.3]]::float8[]) FROM gsm_models WHERE a = 'exact rbf';
SELECT kernel_predict_std_matrix(m, ARRAY[[0.1, 0.2, 0.3], [0.1, 1e308, 0.3]]::float8[]) FROM gsm_models WHERE a = 'exact rbf';
SELECT kernel_predict_std_matrix(kernel_train(f, y, '{"method": "svr"}'), ARRAY[[0.1, 0.2, 0.3]]::float8[]) FROM gsm_rows;
SELECT kernel_predict_std_matrix(kernel_train(f, y, '{"approximation": "nystrom", "components": 10}'), ARRAY[[0.1, 0.2, 0.3]]::float8[]) FROM gsm_rows;
SELECT kernel_predict_std_matrix('gsm_no_such_model', ARRAY[[0.1, 0.2, 0.3]]::float8[]);
DROP TABLE gsm_rows, gsm_new, gsm_models;
