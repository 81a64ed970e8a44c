-- kernel_predict_matrix, kernel_predict_class_matrix,
-- kernel_predict_proba_matrix: many rows in one call, scored a panel at a
-- time by GEMMs, equal to kernel_predict row by row within 1e-12
-- (relative to the largest value; another summation order, not bit for bit).
SET extra_float_digits = 0;

CREATE TABLE mx_rows AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f,
       sin(i) + 0.5 * cos(0.7 * i) AS y,
       CASE WHEN sin(i) + 0.3 * cos(3 * i) > 0 THEN 'pos' ELSE 'neg' END AS lab,
       (i % 3)::text AS l3
FROM generate_series(1, 1000) i;

CREATE TABLE mx_models AS
SELECT 'rbf' AS kind, kernel_train(f, y, '{"lambda": 0.1}') AS model FROM mx_rows WHERE id <= 300
UNION ALL SELECT 'laplacian', kernel_train(f, y, '{"kernel": "laplacian", "lambda": 0.1}') FROM mx_rows WHERE id <= 300
UNION ALL SELECT 'poly', kernel_train(f, y, '{"kernel": "poly", "lambda": 0.1}') FROM mx_rows WHERE id <= 300
UNION ALL SELECT 'nystrom', kernel_train(f, y, '{"lambda": 0.1, "approximation": "nystrom", "components": 50}') FROM mx_rows
UNION ALL SELECT 'rff', kernel_train(f, y, '{"lambda": 0.1, "approximation": "rff", "components": 64}') FROM mx_rows
UNION ALL SELECT 'logistic', kernel_train(f, lab, '{"method": "logistic", "lambda": 0.01}') FROM mx_rows WHERE id <= 300
UNION ALL SELECT 'svm3', kernel_train(f, l3, '{"method": "svm", "probability": true}') FROM mx_rows WHERE id <= 300
UNION ALL SELECT 'svm2', kernel_train(f, lab, '{"method": "svm"}') FROM mx_rows WHERE id <= 300;

CREATE TABLE mx_matrix AS SELECT array_agg(f ORDER BY id) AS x FROM mx_rows;
SELECT array_dims(x) FROM mx_matrix;

-- values: kernel_predict's, row by row, in row order
SELECT m.kind, array_length(p.v, 1) AS rows,
       max(abs(p.v[r.id] - kernel_predict(m.model, r.f))) / max(abs(kernel_predict(m.model, r.f))) < 1e-12 AS same
FROM mx_models m
CROSS JOIN LATERAL (SELECT kernel_predict_matrix(m.model, x) AS v FROM mx_matrix) p
JOIN mx_rows r ON true
WHERE m.kind NOT IN ('svm3')
GROUP BY m.kind, p.v ORDER BY m.kind;

-- classes: kernel_predict_class's
SELECT m.kind, bool_and(p.c[r.id] = kernel_predict_class(m.model, r.f)) AS same
FROM mx_models m
CROSS JOIN LATERAL (SELECT kernel_predict_class_matrix(m.model, x) AS c FROM mx_matrix) p
JOIN mx_rows r ON true
WHERE m.kind IN ('logistic', 'svm3', 'svm2')
GROUP BY m.kind ORDER BY m.kind;

-- probabilities: rows x classes, classes in sorted label order
SELECT m.kind, array_dims(p.p) AS dims,
       max(abs(p.p[r.id][c.i] - (kernel_predict_proba(m.model, r.f)->>c.label)::float8)) < 1e-12 AS same
FROM mx_models m
CROSS JOIN LATERAL (SELECT kernel_predict_proba_matrix(m.model, x) AS p FROM mx_matrix) p
JOIN LATERAL (SELECT row_number() OVER () AS i, label
              FROM jsonb_object_keys(kernel_predict_proba(m.model, ARRAY[0, 0, 0]::float8[])) label) c ON true
JOIN mx_rows r ON r.id % 7 = 0
WHERE m.kind IN ('logistic', 'svm3')
GROUP BY m.kind, p.p ORDER BY m.kind;

-- small panels (kernel_ml.max_memory 1MB: about 200 rows a panel): the
-- same values as one panel of 1,000 rows
CREATE TEMP TABLE mx_one AS
SELECT kernel_predict_matrix(m.model, x) AS v FROM mx_models m, mx_matrix WHERE m.kind = 'rbf';
SET kernel_ml.max_memory = '1MB';
CREATE TEMP TABLE mx_small AS
SELECT kernel_predict_matrix(m.model, x) AS v FROM mx_models m, mx_matrix WHERE m.kind = 'rbf';
RESET kernel_ml.max_memory;
SELECT max(abs(a - b)) / max(abs(a)) < 1e-12 AS same_in_small_panels
FROM mx_one, mx_small, unnest(mx_one.v, mx_small.v) u(a, b);

-- a 2-D literal, an empty array
SELECT round(v::numeric, 6) FROM mx_models m, unnest(kernel_predict_matrix(m.model, ARRAY[[0.5, 0.5, 0.5], [1, 0, 0]])) v
WHERE m.kind = 'rbf';
SELECT kernel_predict_matrix(m.model, '{}') AS empty, kernel_predict_class_matrix(m.model, '{}') AS empty_classes
FROM mx_models m WHERE m.kind = 'logistic';

-- by name: the deployed version
SELECT version, deployed FROM kernel_model_train('mx_svm3', 'SELECT f, l3 FROM mx_rows WHERE id <= 300',
                                                 '{"method": "svm", "probability": true, "test_fraction": 0}');
SELECT kernel_predict_class_matrix('mx_svm3', x) = kernel_predict_class_matrix(kernel_model_get('mx_svm3'), x) AS same_classes,
       kernel_predict_proba_matrix('mx_svm3', x) = kernel_predict_proba_matrix(kernel_model_get('mx_svm3'), x) AS same_proba
FROM mx_matrix;
SELECT version, deployed FROM kernel_model_train('mx_reg', 'SELECT f, y FROM mx_rows WHERE id <= 300', '{"test_fraction": 0}');
SELECT kernel_predict_matrix('mx_reg', x) = kernel_predict_matrix(kernel_model_get('mx_reg'), x) AS same
FROM mx_matrix;
SELECT kernel_predict_matrix('no_such_model', ARRAY[[1, 2, 3]]);
-- a role that may not read the model
CREATE ROLE regress_mx_reader;
SET ROLE regress_mx_reader;
SELECT kernel_predict_proba_matrix('mx_svm3', ARRAY[[1, 2, 3]]);
RESET ROLE;
DROP ROLE regress_mx_reader;

-- errors
-- a one-dimensional array, three dimensions
SELECT kernel_predict_matrix(m.model, ARRAY[1, 2, 3]::float8[]) FROM mx_models m WHERE m.kind = 'rbf';
SELECT kernel_predict_class_matrix(m.model, ARRAY[1, 2, 3]::float8[]) FROM mx_models m WHERE m.kind = 'svm3';
SELECT kernel_predict_matrix(m.model, ARRAY[[[1, 2, 3]]]::float8[]) FROM mx_models m WHERE m.kind = 'rbf';
-- columns, NULL, NaN
SELECT kernel_predict_matrix(m.model, ARRAY[[1, 2], [3, 4]]::float8[]) FROM mx_models m WHERE m.kind = 'rbf';
SELECT kernel_predict_matrix(m.model, ARRAY[[1, 2, 3], [3, NULL, 4]]::float8[]) FROM mx_models m WHERE m.kind = 'rbf';
SELECT kernel_predict_matrix(m.model, ARRAY[[1, 2, 3], [3, 'Infinity', 4]]::float8[]) FROM mx_models m WHERE m.kind = 'rbf';
-- a multi-class model's single value, a regression model's classes, an
-- svm without probabilities
SELECT kernel_predict_matrix(m.model, ARRAY[[1, 2, 3]]::float8[]) FROM mx_models m WHERE m.kind = 'svm3';
SELECT kernel_predict_class_matrix(m.model, ARRAY[[1, 2, 3]]::float8[]) FROM mx_models m WHERE m.kind = 'rbf';
SELECT kernel_predict_proba_matrix(m.model, ARRAY[[1, 2, 3]]::float8[]) FROM mx_models m WHERE m.kind = 'svm2';
-- a row whose standardized feature overflows is named
SELECT kernel_predict_matrix(m.model, ARRAY[[0, 0, 0], [1e308, 0, 0]]::float8[]) FROM mx_models m WHERE m.kind = 'rbf';

-- rbf far from the data: rows near the training rows, rows 1e5 and 1e100
-- away, rows 5e153 away (squared norms past DBL_MAX / 8: the unexpanded
-- form), and a gamma of 1e308 (too large to fold into the GEMM):
-- kernel_predict's values
CREATE TEMP TABLE mx_far AS
SELECT i AS id, ARRAY[sin(i) * s, cos(i), 0.5]::float8[] AS f
FROM generate_series(1, 12) i, (VALUES (1.0), (1e5), (1e100), (5e153)) v(s);
CREATE TEMP TABLE mx_far_models AS
SELECT g AS gamma, kernel_train(f, y, format('{"lambda": 0.1, "gamma": %s}', g)::jsonb) AS model
FROM mx_rows, (VALUES ('0.5'), ('1e308')) v(g) WHERE id <= 300 GROUP BY g;
SELECT m.gamma, array_length(p.v, 1) AS rows,
       max(abs(p.v[r.rn] - kernel_predict(m.model, r.f))) <= 1e-12 * max(abs(kernel_predict(m.model, r.f))) AS same
FROM mx_far_models m
CROSS JOIN LATERAL (SELECT kernel_predict_matrix(m.model, array_agg(f ORDER BY id, f[1])) AS v FROM mx_far) p
JOIN (SELECT row_number() OVER (ORDER BY id, f[1]) AS rn, f FROM mx_far) r ON true
GROUP BY m.gamma, p.v ORDER BY m.gamma;

SELECT kernel_model_drop('mx_svm3'), kernel_model_drop('mx_reg');
DROP TABLE mx_rows, mx_models, mx_matrix;
