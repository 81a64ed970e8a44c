-- Model selection (grids, LOO, GCV, k-fold) and kernel_check diagnostics
SET extra_float_digits = 0;

CREATE TABLE sel AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f,
       sin(i) + cos(0.7 * i) ^ 2 + 0.1 * (i % 7) + 0.3 * sin(17 * i) AS y
FROM generate_series(1, 200) i;

-- a grid defaults to closed-form leave-one-out; the winner is refitted on all rows
CREATE TABLE selm AS
SELECT kernel_train(f, y, '{"lambda": [0.01, 0.1, 1, 10], "gamma": [0.1, 1]}') AS m FROM sel;
SELECT kernel_model_info(m)->'gamma' AS gamma, kernel_model_info(m)->'lambda' AS lambda,
       kernel_model_info(m)->'selection'->>'cv' AS cv,
       kernel_model_info(m)->'selection'->'best' AS best
FROM selm;
SELECT c->'gamma' AS gamma, c->'lambda' AS lambda, round((c->>'score')::numeric, 6) AS loo_mse
FROM selm, jsonb_array_elements(kernel_model_info(m)->'selection'->'candidates') c;
-- the refitted winner is the model trained with the winning values directly
SELECT abs(kernel_predict(m, '{0.1,0.2,0.3}') -
           kernel_predict((SELECT kernel_train(f, y, '{"lambda": 0.1, "gamma": 0.1}') FROM sel), '{0.1,0.2,0.3}')) < 1e-12 AS same
FROM selm;

-- "auto" grids: 13 lambdas from 1e-6 to 1e2, 7 gammas from 1/8 to 8 times 1/d
SELECT jsonb_array_length(kernel_model_info(m)->'selection'->'candidates') AS candidates,
       kernel_model_info(m)->'selection'->>'cv' AS cv
FROM (SELECT kernel_train(f, y, '{"lambda": "auto", "gamma": "auto"}') AS m FROM sel) s;

-- GCV
SELECT kernel_model_info(m)->'lambda' AS lambda, kernel_model_info(m)->'selection'->>'score' AS score
FROM (SELECT kernel_train(f, y, '{"lambda": [0.001, 0.01, 0.1, 1, 10], "cv": "gcv"}') AS m FROM sel) s;

-- k-fold: deterministic for a seed, mean and standard deviation per candidate
SELECT c->'lambda' AS lambda, round((c->>'score')::numeric, 6) AS mse, round((c->>'score_std')::numeric, 6) AS std
FROM (SELECT kernel_train(f, y, '{"lambda": [0.1, 1], "cv": 5, "seed": 42}') AS m FROM sel) s,
     jsonb_array_elements(kernel_model_info(m)->'selection'->'candidates') c;
SELECT kernel_train(f, y, '{"lambda": [0.1, 1], "cv": 5, "seed": 42}') =
       kernel_train(f, y, '{"lambda": [0.1, 1], "cv": 5, "seed": 42}') AS deterministic
FROM sel;
-- lms with a grid: 5-fold by default
SELECT kernel_model_info(m)->'selection'->>'cv' AS cv, kernel_model_info(m)->'selection'->'folds' AS folds
FROM (SELECT kernel_train(f, y, '{"method": "lms", "lambda": [0.1, 1], "max_iter": 300}') AS m FROM sel) s;

-- errors
SELECT kernel_train(f, y, '{"method": "lms", "lambda": [0.1, 1], "cv": "loo"}') FROM sel;
SELECT kernel_train(f, y, '{"cv": 1}') FROM sel;
SELECT kernel_train(f, y, '{"cv": "bootstrap"}') FROM sel;
SELECT kernel_train(f, y, '{"cv": 300}') FROM sel;
SELECT kernel_train(f, y, '{"lambda": []}') FROM sel;
SELECT kernel_train(f, y, '{"lambda": [1, -1]}') FROM sel;
SELECT kernel_train(f, y, '{"gamma": "automatic"}') FROM sel;
SELECT kernel_train(f, y, '{"kernel": "linear", "gamma": [1, 2]}') FROM sel;
SELECT kernel_train(f, y, jsonb_build_object('lambda', (SELECT jsonb_agg(i) FROM generate_series(1, 65) i))) FROM sel;
SELECT kernel_eval('{1}', '{2}', '{"gamma": [1, 2]}');
SELECT kernel_train(f, y, '{"kernel": "sigmoid", "gamma": 20, "coef0": -1, "lambda": [0, 0.000001], "standardize": false}') FROM sel;

-- kernel_check: Mercer diagnostics
SELECT k, (c->>'is_psd')::bool AS is_psd, (c->>'symmetric')::bool AS symmetric, c->'n' AS n,
       c->'effective_rank' AS effective_rank
FROM (SELECT k, kernel_check(f, jsonb_build_object('kernel', k)) AS c
      FROM sel, unnest(ARRAY['rbf', 'poly', 'linear', 'cosine', 'laplacian', 'polysum']) k GROUP BY k) s
ORDER BY k;
-- sigmoid with a large gamma and a negative coef0 is not positive semi-definite
SELECT (c->>'is_psd')::bool AS is_psd, (c->>'min_eigenvalue')::float8 < -1 AS clearly_negative
FROM (SELECT kernel_check(f, '{"kernel": "sigmoid", "gamma": 2, "coef0": -1}') AS c FROM sel) s;
-- min is positive semi-definite on non-negative data, not on data of both signs
SELECT (kernel_check(ARRAY[abs(f[1]), abs(f[2]), f[3]], '{"kernel": "min", "standardize": false}')->>'is_psd')::bool AS nonnegative,
       (kernel_check(f, '{"kernel": "min", "standardize": false}')->>'is_psd')::bool AS mixed_signs
FROM sel;
-- two orthogonal rows: the linear Gram matrix is diag(1, 4), condition number 4
SELECT c->'min_eigenvalue' AS min, c->'max_eigenvalue' AS max, c->'condition_number' AS condition,
       c->'effective_rank' AS rank
FROM (SELECT kernel_check(f, '{"kernel": "linear", "standardize": false}') AS c
      FROM (VALUES ('{1,0}'::float8[]), ('{0,2}')) v(f)) s;
SELECT kernel_check(f, '{}') IS NULL AS empty_is_null FROM sel WHERE false;

DROP TABLE sel, selm;
