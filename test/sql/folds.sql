-- k-fold model selection never scores an empty fold (issue 29, point 7):
-- more folds than training rows is an error on every k-fold route
-- (exact, approximate, classifiers, named models by passes), and a named
-- model's folds (row hash modulo cv) that leave one empty are an error too.
SET extra_float_digits = 0;

CREATE TABLE folds_rows AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i), (i % 5) / 5.0]::float8[] AS f,
       sin(i) + 0.3 * cos(2 * i) AS y,
       CASE WHEN sin(3 * i) > 0 THEN 'p' ELSE 'q' END AS lab
FROM generate_series(1, 300) i;

-- as many folds as rows: k-fold is leave-one-out; exact ridge's equals the
-- closed form of cv "loo" (every fold one row, refitted on the 299 others)
SELECT round((kernel_model_info(kf)->'selection'->'candidates'->0->>'score')::numeric, 9)
     = round((kernel_model_info(loo)->'selection'->'candidates'->0->>'score')::numeric, 9) AS kfold_n_is_loo,
       round((kernel_model_info(loo)->'selection'->'candidates'->0->>'score')::numeric, 6) AS loo_mse
FROM (SELECT kernel_train(f, y, '{"lambda": [0.1, 1], "cv": 300}') AS kf,
             kernel_train(f, y, '{"lambda": [0.1, 1], "cv": "loo"}') AS loo FROM folds_rows) s;

-- approximate svr: 300 folds of one row each are scored; 1000 are refused
SELECT jsonb_array_length(kernel_model_info(m)->'selection'->'candidates') AS candidates,
       bool_and((c->>'score')::float8 > 0) AS every_score_positive
FROM (SELECT kernel_train(f, y, '{"method": "svr", "approximation": "nystrom", "components": 20,
                                  "lambda": [0.01, 0.1], "cv": 300}') AS m FROM folds_rows) s,
     jsonb_array_elements(kernel_model_info(m)->'selection'->'candidates') c
GROUP BY m;
SELECT kernel_train(f, y, '{"method": "svr", "approximation": "nystrom", "components": 20,
                            "lambda": [0.01, 0.1], "cv": 1000}') FROM folds_rows;
\echo :LAST_ERROR_SQLSTATE
SELECT kernel_train(f, y, '{"method": "svr", "approximation": "rff", "components": 20,
                            "lambda": [0.01, 0.1], "cv": 301}') FROM folds_rows;

-- exact regression, every method
SELECT kernel_train(f, y, '{"lambda": [0.1, 1], "cv": 301}') FROM folds_rows;
SELECT kernel_train(f, y, '{"method": "lms", "lambda": [0.1, 1], "cv": 301}') FROM folds_rows;
SELECT kernel_train(f, y, '{"method": "svr", "lambda": [0.1, 1], "cv": 301}') FROM folds_rows;

-- classifiers, exact and approximate (folds dealt within each class)
SELECT kernel_train(f, lab, '{"method": "svm", "lambda": [0.01, 0.1], "cv": 301}') FROM folds_rows;
\echo :LAST_ERROR_SQLSTATE
SELECT kernel_train(f, lab, '{"method": "logistic", "approximation": "nystrom", "components": 20,
                              "lambda": [0.01, 0.1], "cv": 301}') FROM folds_rows;
-- 300 folds of one row: a fold's training rows keep both classes, so it scores
SELECT kernel_model_info(kernel_train(f, lab, '{"method": "svm", "lambda": [0.01, 0.1], "cv": 300}'))->'selection'->'best' AS best
FROM folds_rows;

-- named models by passes: each row's fold is its hash modulo cv, so at
-- cv 240 of 240 training rows some fold is empty (an error, not MSE 0),
-- and more folds than rows is refused as above
SELECT name FROM kernel_model_train('folds svr', 'SELECT f, y FROM folds_rows',
  '{"method": "svr", "approximation": "nystrom", "components": 20, "lambda": [0.01, 0.1], "cv": 240}');
\echo :LAST_ERROR_SQLSTATE
SELECT name FROM kernel_model_train('folds svr', 'SELECT f, y FROM folds_rows',
  '{"method": "svr", "approximation": "nystrom", "components": 20, "lambda": [0.01, 0.1], "cv": 1000}');
SELECT name FROM kernel_model_train('folds logistic', 'SELECT f, lab FROM folds_rows',
  '{"method": "logistic", "approximation": "nystrom", "components": 20, "lambda": [0.01, 0.1], "cv": 240}');
SELECT name FROM kernel_model_train('folds logistic', 'SELECT f, lab FROM folds_rows',
  '{"method": "logistic", "approximation": "nystrom", "components": 20, "lambda": [0.01, 0.1], "cv": 1000}');
-- a few folds still select, every fold scored
SELECT name, version FROM kernel_model_train('folds svr', 'SELECT f, y FROM folds_rows',
  '{"method": "svr", "approximation": "nystrom", "components": 20, "lambda": [0.01, 0.1], "cv": 5}');
SELECT kernel_model_info(model)->'selection'->'folds' AS folds,
       jsonb_array_length(kernel_model_info(model)->'selection'->'candidates') AS candidates,
       (SELECT bool_and((c->>'score')::float8 > 0)
        FROM jsonb_array_elements(kernel_model_info(model)->'selection'->'candidates') c) AS every_score_positive
FROM kernel_models WHERE name = 'folds svr';
-- exact named models select in memory by rank: as many folds as rows work
SELECT name, version FROM kernel_model_train('folds ridge', 'SELECT f, y FROM folds_rows',
  '{"lambda": [0.1, 1], "cv": 240}');
SELECT name FROM kernel_model_train('folds ridge', 'SELECT f, y FROM folds_rows',
  '{"lambda": [0.1, 1], "cv": 241}');
SELECT kernel_model_drop('folds svr'), kernel_model_drop('folds ridge');

DROP TABLE folds_rows;
