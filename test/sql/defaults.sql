-- Defaults (issue 22): C = 1 for classifiers, kernlab's sigest for the rbf
-- gamma of exact regressions (1 / d for classifiers; exact ridge selects
-- among 1 / (4d), 1 / d, sigest and three lambdas, issue 30), stratified
-- k-fold for classifiers, and a NOTICE
-- for a two-valued integer target trained without "method".
SET extra_float_digits = 0;

-- two interleaved half-circles (as classify.sql)
CREATE TEMP TABLE moons AS
SELECT i,
       ARRAY[cos(i * 0.0314159) + CASE WHEN i % 2 = 0 THEN 0 ELSE 1 END,
             sin(i * 0.0314159) * CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END + CASE WHEN i % 2 = 0 THEN 0 ELSE 0.5 END]::float8[] AS x,
       CASE WHEN i % 2 = 0 THEN 'yes' ELSE 'no' END AS yn,
       (i % 2)::int AS y01
FROM generate_series(1, 200) AS i;

-- the default lambda of svm and logistic is 1 / n (C = 1 / (n lambda) = 1),
-- exact and approximate; exact rbf ridge picks lambda from 0.01, 0.1 and 1
-- by leave-one-out (issue 30): 0.01 with gamma sigest here, as NumPy's
-- closed-form leave-one-out over the same grid
SELECT m, round(((kernel_model_info(model)->>'lambda')::float8 * 200)::numeric, 12) AS lambda_times_n
FROM (SELECT 'svm' AS m, kernel_train(x, yn) AS model FROM moons
      UNION ALL SELECT 'logistic', kernel_train(x, yn, '{"method": "logistic"}') FROM moons
      UNION ALL SELECT 'svm float8 labels', kernel_train(x, y01, '{"method": "svm"}') FROM moons
      UNION ALL SELECT 'nystrom logistic', kernel_train(x, yn, '{"method": "logistic", "approximation": "nystrom", "components": 50}') FROM moons
      UNION ALL SELECT 'nystrom svm', kernel_train(x, yn, '{"method": "svm", "approximation": "nystrom", "components": 50}') FROM moons
      UNION ALL SELECT 'ridge', kernel_train(x, y01::float8 * 2, '{"method": "ridge"}') FROM moons) s
ORDER BY 1;
-- a lambda given is kept
SELECT kernel_model_info(kernel_train(x, yn, '{"lambda": 0.01}'))->'lambda' AS given FROM moons;
-- the selection table records the resolved lambda too
SELECT c->'lambda' = to_jsonb(0.005) AS candidate_lambda_is_one_over_n, jsonb_array_length(i->'selection'->'candidates') AS candidates
FROM (SELECT kernel_model_info(kernel_train(x, yn, '{"gamma": [0.5, 2], "cv": 5}')) AS i FROM moons) s,
     jsonb_array_elements(i->'selection'->'candidates') c;
-- the default classifier separates the moons (the 0.2.0 default, C = 1/n,
-- predicted one class): 184 of 200 training rows, as scikit-learn's SVC() on
-- StandardScaler features (gamma "scale" = 0.5)
SELECT count(*) FILTER (WHERE kernel_predict_class(m.model, x) = yn) AS correct
FROM moons, (SELECT kernel_train(x, yn) AS model FROM moons) m;

-- the default gamma of an exact rbf regression: kernlab's sigest over every
-- pair of the 200 standardized rows, 1.3018232745607026 in NumPy (mean of 1 /
-- the 0.9 and 0.1 quantiles, np.quantile's default type 7, of the nonzero
-- squared distances); classifiers (issue 30) and approximate models keep 1 / d
SELECT round((kernel_model_info(kernel_train(x, yn))->>'gamma')::numeric, 12) AS svm_gamma,
       round((kernel_model_info(kernel_train(x, y01::float8, '{"method": "ridge"}'))->>'gamma')::numeric, 12) AS ridge_gamma,
       round((kernel_model_info(kernel_train(x, yn, '{"approximation": "nystrom", "components": 20}'))->>'gamma')::numeric, 12) AS nystrom_gamma,
       round((kernel_model_info(kernel_train(x, y01::float8, '{"kernel": "laplacian"}'))->>'gamma')::numeric, 12) AS laplacian_gamma
FROM moons;
-- the same rows in another order, and the features rescaled: the same gamma
SELECT (SELECT kernel_model_info(kernel_train(x, y01::float8, '{"method": "ridge"}' ORDER BY i DESC))->'gamma' FROM moons) =
       (SELECT kernel_model_info(kernel_train(x, y01::float8, '{"method": "ridge"}' ORDER BY i))->'gamma' FROM moons) AS order_free,
       abs((SELECT (kernel_model_info(kernel_train(ARRAY[x[1] * 1e6, x[2] - 3], y01::float8, '{"method": "ridge"}'))->>'gamma')::float8 FROM moons) /
           1.3018232745607026 - 1) < 1e-12 AS scale_free;

-- stratified folds: a class of 2 rows among 60, 2 folds.  By rank alone
-- both rows fall in one fold for about half of the seeds, whose training
-- rows then miss the class; stratified, each fold holds one of them.
CREATE TEMP TABLE rare AS
SELECT i, ARRAY[sin(i), cos(i)]::float8[] AS x, CASE WHEN i <= 2 THEN 'rare' ELSE 'common' END AS label
FROM generate_series(1, 60) i;
SELECT s AS seed,
       (SELECT jsonb_array_length(kernel_model_info(kernel_train(x, label, jsonb_build_object('lambda', jsonb_build_array(0.01, 0.1), 'cv', 2, 'seed', s)))->'selection'->'candidates') FROM rare) AS exact_scored,
       (SELECT kernel_model_info(kernel_train(x, label, jsonb_build_object('method', 'logistic', 'approximation', 'nystrom', 'components', 10, 'lambda', jsonb_build_array(0.01, 0.1), 'cv', 2, 'seed', s)))->'selection'->'candidates'->0->'score' IS NOT NULL FROM rare) AS approx_scored
FROM generate_series(0, 5) s;

-- a 0/1 integer target without "method": a regression, with a NOTICE naming
-- the classifiers; none with a method given, three values, or fractions
SELECT kernel_model_info(kernel_train(x, y01))->'task' AS task FROM moons;
SELECT kernel_model_info(kernel_train(x, y01 * 5 - 2))->'task' AS task FROM moons;
SELECT kernel_model_info(kernel_train(x, y01, '{"method": "ridge"}'))->'task' AS task FROM moons;
SELECT kernel_model_info(kernel_train(x, (i % 3)::float8))->'task' AS task FROM moons;
SELECT kernel_model_info(kernel_train(x, y01 + 0.5))->'task' AS task FROM moons;
