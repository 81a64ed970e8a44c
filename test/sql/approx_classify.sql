-- Approximate classifiers (issue 13 "Approximate"): nystrom / rff features,
-- logistic and L2-SVM solved by primal Newton; text labels, errors, info keys.
SET extra_float_digits = 0;

-- two interleaved half-circles: rows 1..300, deterministic
CREATE TEMP TABLE moons AS
SELECT i,
       ARRAY[cos(i * 0.0209440) + CASE WHEN i % 2 = 0 THEN 0 ELSE 1 END,
             sin(i * 0.0209440) * CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END + CASE WHEN i % 2 = 0 THEN 0 ELSE 0.5 END]::float8[] AS x,
       CASE WHEN i % 2 = 0 THEN 'yes' ELSE 'no' END AS yn,
       CASE WHEN i % 2 = 1 THEN 'zzz' WHEN i <= 150 THEN 'a b' ELSE 'ü 日本' END AS three,
       (i % 2)::float8 AS y01
FROM generate_series(1, 300) AS i;

-- nystrom logistic, 'yes'/'no' round-trip
CREATE TEMP TABLE ml AS
SELECT kernel_train(x, yn, '{"method": "logistic", "approximation": "nystrom", "components": 40, "gamma": 2, "lambda": 0.0001}') AS model FROM moons;
SELECT kernel_predict_class(model, x) AS predicted, count(*) FILTER (WHERE kernel_predict_class(model, x) = yn) AS correct, count(*)
FROM ml, moons GROUP BY 1 ORDER BY 1;
-- binary: kernel_predict is f(x), > 0 for the second class ('yes'); sigmoid probabilities
SELECT bool_and((kernel_predict(model, x) > 0) = (kernel_predict_class(model, x) = 'yes')) AS sign_rule,
       bool_and(abs(kernel_predict_proba(model, x, 'yes') - 1 / (1 + exp(-kernel_predict(model, x)))) < 1e-12) AS sigmoid,
       bool_and(abs((kernel_predict_proba(model, x)->>'yes')::float8 + (kernel_predict_proba(model, x)->>'no')::float8 - 1) < 1e-12) AS sums_to_one
FROM ml, moons;
SELECT i->>'task' AS task, i->>'method' AS method, i->>'solver' AS solver,
       i->>'approximation' AS approximation, i->>'components' AS components,
       i->>'converged' AS converged, (i->>'iterations')::int BETWEEN 2 AND 30 AS few_iterations,
       (i->>'approximation_eps')::float8 > 0 AS eps_recorded, i->'classes' AS classes,
       i->>'probability' AS probability, (i->>'train_accuracy')::float8 > 0.95 AS accurate,
       (i->>'train_log_loss')::float8 BETWEEN 0.001 AND 0.3 AS log_loss
FROM (SELECT kernel_model_info(model) AS i FROM ml) s;
-- the export scores it as any nystrom model: intercept + coef . k(centres, x)
SELECT jsonb_array_length(e->'centers') AS centres, jsonb_array_length(e->'coef') AS coef,
       e->>'multiclass' AS multiclass, e->'classes' AS classes
FROM (SELECT kernel_model_export(model) AS e FROM ml) s;

-- nystrom L2-SVM: no probabilities
CREATE TEMP TABLE ms AS
SELECT kernel_train(x, yn, '{"method": "svm", "approximation": "nystrom", "components": 40, "gamma": 2, "lambda": 0.0001}') AS model FROM moons;
SELECT count(*) FILTER (WHERE kernel_predict_class(model, x) = yn) AS correct FROM ms, moons;
SELECT i->>'solver' AS solver, i->>'loss' AS loss, i->>'probability' AS probability,
       i->>'converged' AS converged, i ? 'train_log_loss' AS has_log_loss
FROM (SELECT kernel_model_info(model) AS i FROM ms) s;
SELECT kernel_predict_proba(model, ARRAY[0.0, 0.0]) FROM ms;

-- float8 labels with a classification method; rff
CREATE TEMP TABLE mf AS
SELECT kernel_train(x, y01, '{"method": "logistic", "approximation": "rff", "components": 200, "gamma": 2, "lambda": 0.0001}') AS model FROM moons;
SELECT kernel_predict_class(model, x) AS label, count(*) FILTER (WHERE kernel_predict_class(model, x)::float8 = y01) AS correct, count(*)
FROM mf, moons GROUP BY 1 ORDER BY 1;
SELECT i->>'approximation' AS approximation, i->>'task' AS task FROM (SELECT kernel_model_info(model) AS i FROM mf) s;

-- rff L2-SVM without intercept, features not standardized
SELECT (e->>'intercept')::float8 = 0 AS no_intercept, e->'scale' AS scale, jsonb_array_length(e->'offsets') AS d_rff
FROM (SELECT kernel_model_export(kernel_train(x, yn, '{"method": "svm", "approximation": "rff", "components": 100, "gamma": 2, "lambda": 0.0001, "fit_intercept": false, "standardize": false}')) AS e FROM moons) s;

-- three classes with spaces and unicode: one-vs-rest, probabilities normalized
CREATE TEMP TABLE m3 AS
SELECT kernel_train(x, three, '{"method": "logistic", "approximation": "nystrom", "components": 60, "gamma": 1, "lambda": 0.0001}') AS model FROM moons;
SELECT kernel_predict_class(model, x) AS label, count(*) FILTER (WHERE kernel_predict_class(model, x) = three) AS correct, count(*)
FROM m3, moons GROUP BY 1 ORDER BY 1;
SELECT bool_and(abs((p->>'zzz')::float8 + (p->>'a b')::float8 + (p->>'ü 日本')::float8 - 1) < 1e-12) AS sums_to_one
FROM (SELECT kernel_predict_proba(model, x) AS p FROM m3, moons) s;
SELECT i->'classes' AS classes, (SELECT kernel_model_export(model)->>'multiclass' FROM m3) AS multiclass
FROM (SELECT kernel_model_info(model) AS i FROM m3) s;
SELECT kernel_predict(model, ARRAY[0.0, 0.0]) FROM m3;
-- class weights change the fit
SELECT (SELECT kernel_model_export(model)->>'intercept' FROM ml) <>
       (SELECT kernel_model_export(kernel_train(x, yn, '{"method": "logistic", "approximation": "nystrom", "components": 40, "gamma": 2, "lambda": 0.0001, "class_weight": {"yes": 3}}'))->>'intercept' FROM moons) AS weights_matter;

-- the same rows in another order: the same model, bit for bit (rows in hash order)
SELECT max(abs(a.p - b.p)) = 0 AS same_model
FROM (SELECT i, kernel_predict(model, x) AS p FROM ml, moons) a
JOIN (SELECT i, kernel_predict(model, x) AS p
      FROM (SELECT kernel_train(x, yn, '{"method": "logistic", "approximation": "nystrom", "components": 40, "gamma": 2, "lambda": 0.0001}' ORDER BY i DESC) AS model FROM moons) r, moons) b USING (i);

-- a parallel plan (partial aggregates of the rows): the same model, bit for bit
CREATE TABLE ac_par AS SELECT i, x, yn FROM moons;
ANALYZE ac_par;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
CREATE TEMP TABLE ml_md5 AS SELECT md5(model) AS h FROM ml;
EXPLAIN (COSTS OFF)
SELECT md5(kernel_train(x, yn, '{"method": "logistic", "approximation": "nystrom", "components": 40, "gamma": 2, "lambda": 0.0001}')) AS h FROM ac_par;
SELECT md5(kernel_train(x, yn, '{"method": "logistic", "approximation": "nystrom", "components": 40, "gamma": 2, "lambda": 0.0001}')) = (SELECT h FROM ml_md5) AS same_bytes
FROM ac_par;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
DROP TABLE ac_par;

-- not converged within max_iter: a warning
SELECT kernel_train(x, yn, '{"method": "logistic", "approximation": "nystrom", "components": 40, "gamma": 2, "lambda": 0.0001, "max_iter": 1}') IS NOT NULL AS trained FROM moons;

-- errors
SELECT kernel_train(x, yn, '{"method": "svm", "approximation": "nystrom", "components": 40, "probability": true}') FROM moons;
SELECT kernel_train(x, yn, '{"method": "svm", "approximation": "nystrom", "solver": "sgd"}') FROM moons;
SELECT kernel_train(x, yn, '{"method": "logistic", "approximation": "rff", "lambda": [0.1, 0.01], "cv": "gcv"}') FROM moons;
SELECT kernel_train(x, yn, '{"method": "logistic", "approximation": "nystrom", "lambda": [0.1, 0]}') FROM moons;
SELECT kernel_train(x, yn, '{"method": "logistic", "approximation": "rff", "kernel": "laplacian"}') FROM moons;
SELECT kernel_train(x, yn, '{"method": "logistic", "approximation": "nystrom", "lambda": 0}') FROM moons;
SELECT kernel_train(x, 'one', '{"method": "logistic", "approximation": "nystrom"}') FROM moons;

-- model selection: k-fold (folds by rank in row-hash order) over the lambda and
-- gamma grids, scored by log-loss (logistic) or accuracy (svm), then the refit
-- on every row, which is the model trained at the winner's values alone
CREATE TEMP TABLE noisy AS
SELECT i, x, CASE WHEN i % 13 = 0 THEN (CASE yn WHEN 'yes' THEN 'no' ELSE 'yes' END) ELSE yn END AS yn, three
FROM moons;
CREATE TEMP TABLE msel AS
SELECT kernel_train(x, yn, '{"method": "logistic", "approximation": "nystrom", "components": 40, "gamma": [0.2, 2], "lambda": [1, 0.001, 1e-7], "cv": 4}') AS model
FROM noisy;
SELECT s->>'folds' AS folds, jsonb_array_length(s->'candidates') AS candidates, s->>'score' AS score,
       s->'candidates'->(s->>'best')::int->>'gamma' AS gamma,
       s->'candidates'->(s->>'best')::int->>'lambda' AS lambda,
       (SELECT min((c->>'score')::float8) FROM jsonb_array_elements(s->'candidates') c)
         = (s->'candidates'->(s->>'best')::int->>'score')::float8 AS best_is_lowest,
       (SELECT count(*) FROM jsonb_array_elements(s->'candidates') c
        WHERE (c->>'score')::float8 > 0 AND (c->>'score_std')::float8 >= 0) AS scored
FROM (SELECT kernel_model_info(model)->'selection' AS s FROM msel) t;
-- the scores mean what they say: lambda = 1 underfits (log-loss near ln 2),
-- gamma 2 with lambda 1e-7 overfits the flipped labels, the winner is well below both
SELECT bool_and((c->>'score')::float8 BETWEEN 0.6 AND 0.7) FILTER (WHERE (c->>'lambda')::float8 = 1) AS underfit_near_ln2,
       bool_and((c->>'score')::float8 > 1) FILTER (WHERE (c->>'lambda')::float8 = 1e-7 AND (c->>'gamma')::float8 = 2) AS overfit_above_1,
       min((c->>'score')::float8) < 0.45 AS winner_below_0_45
FROM msel, jsonb_array_elements(kernel_model_info(model)->'selection'->'candidates') c;
SELECT bool_and(kernel_predict(s.model, x) = kernel_predict(w.model, x)) AS refit_is_winner
FROM msel s,
     (SELECT kernel_train(x, yn, '{"method": "logistic", "approximation": "nystrom", "components": 40, "gamma": 2, "lambda": 0.001}') AS model
      FROM noisy) w,
     noisy;
SELECT (SELECT model FROM msel)
     = (SELECT kernel_train(x, yn, '{"method": "logistic", "approximation": "nystrom", "components": 40, "gamma": [0.2, 2], "lambda": [1, 0.001, 1e-7], "cv": 4}' ORDER BY i DESC) FROM noisy)
       AS order_free;
-- the winner's gamma first in the grid: its basis is computed again for the refit
SELECT kernel_model_info(g.model)->'selection'->>'best' AS best,
       bool_and(kernel_predict(g.model, x) = kernel_predict(w.model, x)) AS refit_is_winner
FROM (SELECT kernel_train(x, yn, '{"method": "logistic", "approximation": "nystrom", "components": 40, "gamma": [2, 0.2], "lambda": [1, 0.001, 1e-7], "cv": 4}') AS model
      FROM noisy) g,
     (SELECT kernel_train(x, yn, '{"method": "logistic", "approximation": "nystrom", "components": 40, "gamma": 2, "lambda": 0.001}') AS model
      FROM noisy) w,
     noisy
GROUP BY 1;
-- svm (squared hinge) over rff, three classes one-vs-rest: accuracy, the highest wins
SELECT s->>'score' AS score, jsonb_array_length(s->'candidates') AS candidates,
       (SELECT max((c->>'score')::float8) FROM jsonb_array_elements(s->'candidates') c)
         = (s->'candidates'->(s->>'best')::int->>'score')::float8 AS best_is_highest,
       (s->'candidates'->(s->>'best')::int->>'score')::float8 > 0.9 AS accuracy_above_90_percent
FROM (SELECT kernel_model_info(kernel_train(x, three, '{"method": "svm", "approximation": "rff", "components": 200, "gamma": [0.05, 1], "lambda": [0.1, 0.0001]}'))->'selection' AS s
      FROM moons) t;
