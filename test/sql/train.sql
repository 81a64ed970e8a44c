-- kernel_train, kernel_predict, kernel_model_info: numbers, groups, bad input
SET extra_float_digits = 0;

CREATE TABLE houses AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f,
       sin(i) + cos(0.7 * i) ^ 2 + 0.1 * (i % 7) AS y
FROM generate_series(1, 200) i;

CREATE TABLE probes (pid int, f float8[]);
INSERT INTO probes VALUES (1, '{0.5,-0.25,0.3}'), (2, '{1,1,1}'), (3, '{-1,0,0}');

-- Reference predictions from scikit-learn 1.2.1 (test/crosscheck/ has the
-- full cross-check): default options are StandardScaler + KernelRidge(rbf)
-- on the centred target, gamma and alpha chosen by exact leave-one-out
-- (NumPy: e = c / diag((K + lambda I)^-1)) among gamma 1/12, 1/3 and
-- kernlab's sigest over every pair of the 200 standardized rows (the mean of
-- 1 / the 0.9 and 0.1 quantiles, np.quantile, R's type 7, of the nonzero
-- squared distances, 0.42348675958608806) and lambda 0.01, 0.1, 1: the
-- winner is gamma 1/3, lambda 0.01 (LOO MSE 3.539e-4; sigest, the 0.3.0
-- default with lambda 1, scores 1.830e-2).
CREATE TABLE expected (pid int, options jsonb, value float8);
INSERT INTO expected VALUES
  (1, '{}', 0.765501645187), (2, '{}', 2.53404606745), (3, '{}', -0.933523003368),
  (1, '{"kernel": "poly", "gamma": 0.5, "degree": 2, "coef0": 1, "lambda": 0.1, "standardize": false, "fit_intercept": false}', 0.776313475913),
  (2, '{"kernel": "poly", "gamma": 0.5, "degree": 2, "coef0": 1, "lambda": 0.1, "standardize": false, "fit_intercept": false}', 2.701448190636),
  (3, '{"kernel": "poly", "gamma": 0.5, "degree": 2, "coef0": 1, "lambda": 0.1, "standardize": false, "fit_intercept": false}', -0.982517480477),
  (1, '{"kernel": "laplacian", "gamma": 0.3, "lambda": 0.5, "standardize": false, "fit_intercept": false}', 0.810552258119),
  (2, '{"kernel": "laplacian", "gamma": 0.3, "lambda": 0.5, "standardize": false, "fit_intercept": false}', 2.19050445115),
  (3, '{"kernel": "laplacian", "gamma": 0.3, "lambda": 0.5, "standardize": false, "fit_intercept": false}', -0.839078100493);

CREATE TABLE models AS
SELECT options, (SELECT kernel_train(f, y, options) FROM houses) AS model
FROM (SELECT DISTINCT options FROM expected) o;

SELECT coalesce(e.options->>'kernel', 'defaults') AS kernel, e.pid,
       abs(kernel_predict(m.model, p.f) - e.value) < 1e-10 AS matches_sklearn
FROM expected e JOIN models m USING (options) JOIN probes p USING (pid)
ORDER BY 1, 2;

-- the two-argument form is the default options
SELECT kernel_predict(kernel_train(f, y), '{1,1,1}') = kernel_predict(kernel_train(f, y, '{}'), '{1,1,1}') AS same
FROM houses;

-- model inspection
SELECT jsonb_pretty(kernel_model_info(model) - 'intercept' - 'train_rmse' - 'selection'
                    - 'amplitude' - 'log_marginal_likelihood')
FROM models WHERE options = '{}';
-- the default ridge's selection: its candidates' leave-one-out scores (10
-- significant digits: the last ones are rounding of the sums)
SELECT jsonb_pretty((kernel_model_info(model)->'selection') - 'candidates') AS selection
FROM models WHERE options = '{}';
SELECT round((c->>'gamma')::numeric, 10) AS gamma, c->>'lambda' AS lambda,
       to_char((c->>'score')::float8, '9.999999999EEEE') AS score
FROM models, jsonb_array_elements(kernel_model_info(model)->'selection'->'candidates') WITH ORDINALITY e(c, i)
WHERE options = '{}' ORDER BY i;
SELECT round((kernel_model_info(model)->>'intercept')::numeric, 10) AS intercept,
       round((kernel_model_info(model)->>'train_rmse')::numeric, 8) AS train_rmse,
       length(model) AS bytes
FROM models WHERE options = '{}';

-- score in place
ALTER TABLE houses ADD COLUMN pred float8;
UPDATE houses SET pred = kernel_predict((SELECT model FROM models WHERE options = '{}'), f);
SELECT round(sqrt(avg((pred - y) ^ 2))::numeric, 8) AS rmse,
       round(sqrt(avg((pred - y) ^ 2))::numeric, 8) =
       (SELECT round((kernel_model_info(model)->>'train_rmse')::numeric, 8) FROM models WHERE options = '{}') AS equals_train_rmse
FROM houses;

-- one model per group
SELECT id % 3 AS grp, kernel_model_info(kernel_train(f, y))->'n_train' AS n_train,
       round(kernel_predict(kernel_train(f, y), '{0,0,0}')::numeric, 6) AS at_origin
FROM houses GROUP BY id % 3 ORDER BY 1;

-- kernel LMS: a fixed number of steps, then to convergence (= ridge at lms's
-- default lambda 1; default ridge selects its lambda)
SELECT kernel_model_info(kernel_train(f, y, '{"method": "lms", "learning_rate": 0.001, "max_iter": 5, "tol": 0}'))
       - 'intercept' - 'train_rmse' - 'final_change' - 'kernel_ml_version' AS lms_info
FROM houses;
WITH m AS (
  SELECT kernel_train(f, y, '{"method": "lms", "max_iter": 100000, "tol": 1e-13}') AS lms,
         kernel_train(f, y, '{"lambda": 1}') AS ridge
  FROM houses)
SELECT (kernel_model_info(lms)->>'converged')::bool AS converged,
       max(abs(kernel_predict(lms, p.f) - kernel_predict(ridge, p.f))) < 1e-8 AS lms_equals_ridge
FROM m, probes p GROUP BY 1;

-- lambda = 0 needs the jitter, and says so
SELECT (kernel_model_info(kernel_train(f, y, '{"kernel": "linear", "lambda": 0}'))->>'jitter')::float8 > 0 AS jittered
FROM houses;

-- NULL rows are skipped and counted; no rows gives NULL
SELECT kernel_model_info(kernel_train(f, y))->'rows_skipped' AS skipped,
       kernel_model_info(kernel_train(f, y))->'n_train' AS n_train
FROM (SELECT f, y FROM houses UNION ALL SELECT NULL, 1 UNION ALL SELECT '{1,2,3}', NULL) s;
SELECT kernel_train(f, y) IS NULL AS empty_is_null FROM houses WHERE false;
SELECT kernel_train(NULL::float8[], y) IS NULL AS all_skipped_is_null FROM houses;
SELECT kernel_predict(NULL, '{1,2,3}') IS NULL AS null_model;
SELECT kernel_predict(model, NULL) IS NULL AS null_features FROM models WHERE options = '{}';

-- bad rows name the row (1-based, in aggregate input order)
SELECT kernel_train(f, y ORDER BY id) FROM (SELECT id, f, y FROM houses WHERE id < 5 UNION ALL SELECT 5, '{1,NULL,3}', 1) s;
SELECT kernel_train(f, y ORDER BY id) FROM (SELECT id, f, y FROM houses WHERE id < 5 UNION ALL SELECT 5, '{1,NaN,3}', 1) s;
SELECT kernel_train(f, y ORDER BY id) FROM (SELECT id, f, y FROM houses WHERE id < 5 UNION ALL SELECT 5, '{1,2,3}', 'Infinity') s;
SELECT kernel_train(f, y ORDER BY id) FROM (SELECT id, f, y FROM houses WHERE id < 5 UNION ALL SELECT 5, '{1,2}', 1) s;
SELECT kernel_train(f, y ORDER BY id) FROM (SELECT id, f, y FROM houses WHERE id < 5 UNION ALL SELECT 5, '{{1,2},{3,4}}', 1) s;
SELECT kernel_predict(model, '{1,2}') FROM models WHERE options = '{}';
SELECT kernel_predict(model, '{1,2,NaN}') FROM models WHERE options = '{}';

-- bad options
SELECT kernel_train(f, y, '{"learning_rate": 0.1}') FROM houses;
SELECT kernel_train(f, y, '{"method": "ridge", "max_iter": 10}') FROM houses;
SELECT kernel_train(f, y, '{"method": "newton"}') FROM houses;
SELECT kernel_train(f, y, '{"lambda": -1}') FROM houses;
SELECT kernel_train(f, y, '{"method": "lms", "max_iter": 0}') FROM houses;
SELECT kernel_train(f, y, '{"method": "lms", "tol": -1}') FROM houses;
SELECT kernel_train(f, y, '{"fit_intercept": 1}') FROM houses;
SELECT kernel_train(f, y, '{"lamda": 1}') FROM houses;

-- a kernel that is not positive definite, with nothing to regularise it
SELECT kernel_train(f, y, '{"kernel": "sigmoid", "gamma": 20, "coef0": -1, "lambda": 0, "standardize": false}') FROM houses;
-- a learning rate far too large diverges
SELECT kernel_train(f, y, '{"method": "lms", "learning_rate": 1000, "max_iter": 5000}') FROM houses;

-- memory is checked before allocating
SET kernel_ml.max_memory = '1MB';
SELECT kernel_train(f, y) FROM houses, generate_series(1, 3);
SELECT kernel_matrix(f, '{}') FROM houses, generate_series(1, 3);
RESET kernel_ml.max_memory;
SET kernel_ml.max_memory = -1;
SET kernel_ml.no_such_setting = 1;

DROP TABLE houses, probes, expected, models;
