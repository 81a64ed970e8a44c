-- Classification: text labels, float8 labels, probabilities, errors.
SET extra_float_digits = 0;

-- two interleaved half-circles: rows 1..200, deterministic
CREATE TEMP TABLE moons AS
SELECT i,
       ARRAY[cos(i * 0.0314159) + CASE WHEN i % 2 = 0 THEN 0 ELSE 1 END,
             sin(i * 0.0314159) * CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END + CASE WHEN i % 2 = 0 THEN 0 ELSE 0.5 END]::float8[] AS x,
       CASE WHEN i % 2 = 0 THEN 'yes' ELSE 'no' END AS yn,
       CASE WHEN i % 2 = 1 THEN 'zzz' WHEN i <= 100 THEN 'a b' ELSE 'ü 日本' END AS three
FROM generate_series(1, 200) AS i;

-- 'yes'/'no' round-trip through an svm (the default method for text labels)
CREATE TEMP TABLE m AS
SELECT kernel_train(x, yn, '{"gamma": 2, "lambda": 0.001}') AS model FROM moons;
SELECT kernel_predict_class(model, x) AS predicted, count(*)
FROM m, moons WHERE kernel_predict_class(model, x) = yn GROUP BY 1 ORDER BY 1;
SELECT count(*) AS wrong FROM m, moons WHERE kernel_predict_class(model, x) <> yn;
-- binary: kernel_predict is the decision value, > 0 for the second class ('yes')
SELECT bool_and((kernel_predict(model, x) > 0) = (kernel_predict_class(model, x) = 'yes')) AS sign_rule
FROM m, moons;
SELECT model_info->>'task' AS task, model_info->>'method' AS method
FROM (SELECT kernel_model_info(model) AS model_info FROM m) s;

-- no probabilities without "probability": true
SELECT kernel_predict_proba(model, ARRAY[0.0, 0.0]) FROM m;

-- with probabilities (Platt): they sum to 1 and the one-label form agrees
CREATE TEMP TABLE mp AS
SELECT kernel_train(x, yn, '{"gamma": 2, "lambda": 0.001, "probability": true}') AS model FROM moons;
SELECT bool_and(abs((p->>'yes')::float8 + (p->>'no')::float8 - 1) < 1e-12) AS sums_to_one,
       bool_and(abs((p->>'yes')::float8 - kernel_predict_proba(model, x, 'yes')) < 1e-15) AS same
FROM (SELECT model, x, kernel_predict_proba(model, x) AS p FROM mp, moons) s;
SELECT kernel_predict_proba(model, ARRAY[0.0, 0.0], 'maybe') FROM mp;

-- labels with spaces and unicode, three classes (one-vs-one)
CREATE TEMP TABLE m3 AS
SELECT kernel_train(x, three, '{"gamma": 1, "lambda": 0.01}') AS model FROM moons;
SELECT kernel_predict_class(model, x) AS label, count(*) FILTER (WHERE kernel_predict_class(model, x) = three) AS correct, count(*)
FROM m3, moons GROUP BY 1 ORDER BY 1;
SELECT i->>'task' AS task, i->>'method' AS method, i->>'n_classes' AS n_classes,
       i->>'multiclass' AS multiclass, i->>'label_type' AS label_type, i->>'outputs' AS outputs,
       i->>'converged' AS converged, i->>'tol' AS tol
FROM (SELECT kernel_model_info(model) AS i FROM m3) s;
SELECT kernel_predict(model, ARRAY[0.0, 0.0]) FROM m3;
-- the classes with their training counts, the solver, the training metrics:
-- accuracy (and log-loss when the model gives probabilities) agree with
-- scoring the training rows through kernel_predict_class / _proba
SELECT i->'classes' AS classes, i->>'solver' AS solver, i->>'probability' AS probability,
       i ? 'train_log_loss' AS has_log_loss, i ? 'train_rmse' AS has_rmse,
       abs((i->>'train_accuracy')::float8 -
           (SELECT avg((kernel_predict_class(model, x) = three)::int) FROM moons)) < 1e-12 AS accuracy_agrees
FROM (SELECT model, kernel_model_info(model) AS i FROM m3) s;
SELECT i->'classes' AS classes, i->>'probability' AS probability,
       abs((i->>'train_accuracy')::float8 -
           (SELECT avg((kernel_predict_class(model, x) = yn)::int) FROM moons)) < 1e-12 AS accuracy_agrees,
       abs((i->>'train_log_loss')::float8 -
           (SELECT avg(-ln(kernel_predict_proba(model, x, yn))) FROM moons)) < 1e-9 AS log_loss_agrees
FROM (SELECT model, kernel_model_info(model) AS i FROM mp) s;

-- multinomial logistic: probabilities sum to 1 within 1e-12
CREATE TEMP TABLE ml AS
SELECT kernel_train(x, three, '{"method": "logistic", "gamma": 1, "lambda": 0.01}') AS model FROM moons;
SELECT bool_and(abs(s - 1) < 1e-12) AS sums_to_one, count(*)
FROM (SELECT (SELECT sum(value::float8) FROM jsonb_each_text(kernel_predict_proba(model, x))) AS s
      FROM ml, moons) t;
SELECT jsonb_object_keys(kernel_predict_proba(model, ARRAY[0.5, 0.5])) AS k FROM ml ORDER BY 1;
SELECT i->>'solver' AS solver, i->>'probability' AS probability,
       abs((i->>'train_log_loss')::float8 -
           (SELECT avg(-ln(kernel_predict_proba(model, x, three))) FROM moons)) < 1e-9 AS log_loss_agrees,
       abs((i->>'train_accuracy')::float8 -
           (SELECT avg((kernel_predict_class(model, x) = three)::int) FROM moons)) < 1e-12 AS accuracy_agrees
FROM (SELECT model, kernel_model_info(model) AS i FROM ml) s;

-- binary logistic agrees with its own decision value
CREATE TEMP TABLE lb AS
SELECT kernel_train(x, yn, '{"method": "logistic", "gamma": 2, "lambda": 0.001}') AS model FROM moons;
SELECT bool_and(abs(kernel_predict_proba(model, x, 'yes') - 1 / (1 + exp(-kernel_predict(model, x)))) < 1e-12) AS sigmoid
FROM lb, moons;

-- float8 targets as labels with a classification method
SELECT kernel_predict_class(kernel_train(x, (i % 2)::float8, '{"method": "svm", "gamma": 2, "lambda": 0.001}'),
                            ARRAY[1.0, 0.5]) IN ('0', '1') AS float8_labels
FROM moons;

-- NULL labels are skipped and counted
SELECT kernel_model_info(kernel_train(x, CASE WHEN i <= 10 THEN NULL ELSE yn END))->>'rows_skipped' AS skipped
FROM moons;

-- errors
SELECT kernel_train(x, 'same') FROM moons;
SELECT kernel_train(x, yn, '{"method": "ridge"}') FROM moons;
SELECT kernel_train(x, yn, '{"class_weight": {"maybe": 2}}') FROM moons;
SELECT kernel_train(x, yn, '{"class_weight": "none"}') FROM moons;
SELECT kernel_train(x, yn, '{"solver": "newton"}') FROM moons;
SELECT kernel_train(x, yn, '{"method": "logistic", "probability": true}') FROM moons;
SELECT kernel_train(x, i::float8, '{"probability": true}') FROM moons;
SELECT kernel_predict_class(kernel_train(x, i::float8), ARRAY[0.0, 0.0]) FROM moons;

-- class weights: balanced and a table train
SELECT kernel_train(x, yn, '{"class_weight": "balanced"}') IS NOT NULL AS balanced,
       kernel_train(x, yn, '{"class_weight": {"yes": 2.5}}') IS NOT NULL AS weighted
FROM moons;

-- model selection for classifiers: k-fold (folds by row hash) over the grids,
-- scored by accuracy (svm) and log-loss (logistic); the same for any row order
SELECT s->>'folds' AS folds, jsonb_array_length(s->'candidates') AS candidates,
       s->'candidates'->(s->>'best')::int->>'gamma' AS gamma,
       s->'candidates'->(s->>'best')::int->>'lambda' AS lambda,
       s->>'score' AS score,
       (s->'candidates'->(s->>'best')::int->>'score')::float8 > 0.9 AS accuracy_above_90_percent
FROM (SELECT kernel_model_info(kernel_train(x, yn, '{"gamma": [0.1, 2], "lambda": [0.001, 1], "cv": 4}'))->'selection' AS s
      FROM moons) t;
SELECT (SELECT kernel_train(x, three, '{"method": "logistic", "gamma": [0.1, 2], "lambda": [0.001, 1]}') FROM moons)
     = (SELECT kernel_train(x, three, '{"method": "logistic", "gamma": [0.1, 2], "lambda": [0.001, 1]}' ORDER BY i DESC) FROM moons)
       AS order_free;
