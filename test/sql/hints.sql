-- Hints that point the right way (issue 22, point 2): what a newcomer hits
-- first, and what the error, hint or NOTICE tells them to do.
SET extra_float_digits = 0;

CREATE TABLE hdata AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i)]::float8[] AS f,
       sin(i) + cos(0.7 * i) AS y, sin(i) > 0 AS churned
FROM generate_series(1, 4500) i;

-- 1. exact training beyond kernel_ml.max_memory: the hint names the
-- approximation, with an example, for regression and for classification
SET kernel_ml.max_memory = '1MB';
SELECT kernel_train(f, y) FROM hdata WHERE id <= 600;
SELECT kernel_train(f, y, '{"method": "lms"}') FROM hdata WHERE id <= 600;
SELECT kernel_train(f, churned::text, '{"method": "logistic"}') FROM hdata WHERE id <= 600;
SELECT kernel_train(f, churned::text) FROM hdata WHERE id <= 600;
-- ... and the approximation it names fits
SELECT kernel_model_info(kernel_train(f, y, '{"approximation": "nystrom", "components": 50}'))->'n_centers' AS m
FROM hdata WHERE id <= 600;
RESET kernel_ml.max_memory;

-- 2. the exact svm's estimate is what its path allocates: SMO computes K's
-- columns into a cache of 64 MB, not the n x n matrix (4500 rows: 162 MB;
-- the rows are checked as they arrive, here at 4097)
SET kernel_ml.max_memory = '100MB';
SELECT kernel_train(f, churned::text) IS NOT NULL AS trained FROM hdata;
-- the paths that build K whole still need it
SELECT kernel_train(f, churned::text, '{"probability": true}') FROM hdata;
SELECT kernel_train(f, churned::text, '{"method": "logistic"}') FROM hdata;
RESET kernel_ml.max_memory;

-- 3. a boolean label column trains a classifier on 'false' and 'true'
CREATE TABLE hbool AS
SELECT kernel_train(f, churned) AS m, kernel_train(f, churned, '{"method": "logistic"}') AS ml
FROM hdata WHERE id <= 200;
SELECT kernel_model_info(m)->'classes' AS classes, kernel_model_info(ml)->>'method' AS method FROM hbool;
SELECT kernel_predict_class(m, '{1, 0.5}') AS svm, kernel_predict_class(ml, '{-1, 0.5}') AS logistic FROM hbool;
-- the same model as the labels cast to text
SELECT m = (SELECT kernel_train(f, churned::text) FROM hdata WHERE id <= 200) AS same_as_text FROM hbool;
DROP TABLE hbool;

-- 4. skipped rows: one NOTICE with the count, at the end of training
SELECT kernel_model_info(kernel_train(f, y))->'rows_skipped' AS skipped
FROM (SELECT CASE WHEN id % 50 = 0 THEN NULL ELSE f END AS f,
             CASE WHEN id % 70 = 0 THEN NULL ELSE y END AS y
      FROM hdata WHERE id <= 200) s;
SELECT kernel_train(f, churned) IS NULL AS all_skipped
FROM (SELECT f, NULL::boolean AS churned FROM hdata WHERE id <= 3) s;
-- approximate two-pass training counts them too
SELECT kernel_model_info(kernel_train(f, y, '{"approximation": "nystrom", "components": 10}',
       (SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 10}') FROM hdata WHERE id <= 100)))->'rows_skipped' AS skipped
FROM (SELECT f, CASE WHEN id = 7 THEN NULL ELSE y END AS y FROM hdata WHERE id <= 100) s;

-- 5. a bad row is named by its values (CONTEXT), which can be searched for
SELECT kernel_train(f, y) FROM (VALUES (1, '{1,2}'::float8[], 1.0::float8), (2, '{1,NaN}', 2)) v(i, f, y);
SELECT kernel_train(f, y) FROM (VALUES (1, '{1,2}'::float8[], 1.0::float8), (2, '{1,2,3}', 2)) v(i, f, y);
SELECT kernel_train(f, y) FROM (VALUES (1, '{1,2}'::float8[], 1.0::float8), (2, '{1,2}', 'Infinity')) v(i, f, y);
SELECT kernel_train(f, l) FROM (VALUES (1, '{1,2}'::float8[], 'a'), (2, '{3,NULL}', 'b')) v(i, f, l);
-- a long array is cut
SELECT kernel_train(f, y)
FROM (VALUES ('{1,2}'::float8[], 1.0::float8), (array_fill(0.125::float8, ARRAY[30]), 2)) v(f, y);

-- 6. kernel_check checks the matrix kernel_train factors: of the rows
-- standardized as training standardizes them.  Tiny raw features put the
-- sigmoid kernel's negative part below rounding (positive semi-definite as
-- far as a double can tell); standardized, it is clearly indefinite, and
-- kernel_train with the same options fails.
CREATE TABLE hsig AS
SELECT i, ARRAY[0.0001 * sin(i), 0.0001 * cos(0.7 * i), 0.0001 * ((i % 7) / 7.0)]::float8[] AS f,
       sin(i) AS y
FROM generate_series(1, 40) i;
SELECT c->'is_psd' AS is_psd, c->'standardize' AS standardize
FROM (SELECT kernel_check(f, '{"kernel": "sigmoid", "gamma": 5, "coef0": 0.5}') AS c FROM hsig) s;
SELECT kernel_train(f, y, '{"kernel": "sigmoid", "gamma": 5, "coef0": 0.5, "lambda": 0.001}') FROM hsig;
-- with "standardize": false both see the raw rows: positive semi-definite, and it trains
SELECT c->'is_psd' AS is_psd, c->'standardize' AS standardize
FROM (SELECT kernel_check(f, '{"kernel": "sigmoid", "gamma": 5, "coef0": 0.5, "standardize": false}') AS c FROM hsig) s;
SELECT kernel_model_info(kernel_train(f, y, '{"kernel": "sigmoid", "gamma": 5, "coef0": 0.5, "lambda": 0.001, "standardize": false}'))->'n_train' AS n_train
FROM hsig;
DROP TABLE hsig;

-- 7. kernel_ml.progress: a short training says nothing (the first line
-- comes one kernel_ml.progress_interval into the statement)
SHOW kernel_ml.progress_interval;
SET kernel_ml.progress = on;
SET kernel_ml.progress_interval = '1h';
SELECT kernel_train(f, y) IS NOT NULL AS trained FROM hdata WHERE id <= 100;
RESET kernel_ml.progress_interval;
RESET kernel_ml.progress;

DROP TABLE hdata;
