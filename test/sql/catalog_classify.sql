-- Named classifiers: text and float8 labels, the stratified hold-out split,
-- classification metrics recomputed here with SQL over the stored model,
-- retrain determinism, if_better on log-loss / accuracy, task changes.
SET extra_float_digits = 0;

CREATE FUNCTION pg_temp.outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

-- 240 rows, two overlapping classes (sin(3.1 i) acts as label noise), 3 to 1
CREATE TABLE cc_rows AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i)]::float8[] AS f,
       CASE WHEN sin(i) + cos(0.7 * i) + 0.8 * sin(3.1 * i) > 0.6 THEN 'yes' ELSE 'no' END AS label,
       (i % 3)::float8 AS k3
FROM generate_series(1, 240) i;
SELECT label, count(*) FROM cc_rows GROUP BY 1 ORDER BY 1;

-- logistic on a text label, a quarter held out within each class
SELECT version, deployed, metrics->>'task' AS task, metrics->'rows' AS rows,
       metrics->'train_rows' AS train_rows, metrics->'holdout_rows' AS holdout_rows,
       metrics->'deploy'->>'reason' AS reason
FROM kernel_model_train('cc_log', 'SELECT f, label FROM cc_rows',
                        '{"method": "logistic", "gamma": 1, "lambda": 0.01, "test_fraction": 0.25}');
SELECT array(SELECT jsonb_object_keys(metrics->'holdout')) AS keys,
       metrics->'holdout'->'confusion'->'labels' AS labels
FROM kernel_models WHERE name = 'cc_log';

-- stratified: floor(0.25 n_c) rows of each class held out
SELECT (SELECT sum(floor(0.25 * c))::int FROM (SELECT count(*) c FROM cc_rows GROUP BY label) s)
       = (metrics->>'holdout_rows')::int AS stratified
FROM kernel_models WHERE name = 'cc_log';

-- the model stored is the one fitted on the training rows (no refit): its
-- predictions over all rows give the sum of the two confusion matrices,
-- the weighted accuracies and log-losses
CREATE TEMP TABLE cc_pred AS
SELECT id, label, kernel_predict_class('cc_log', f) AS pred,
       (kernel_predict_proba('cc_log', f)->>label)::float8 AS p_true
FROM cc_rows;
WITH m AS (SELECT metrics FROM kernel_models WHERE name = 'cc_log'),
conf AS (
  SELECT jsonb_agg(r ORDER BY t) AS matrix FROM (
    SELECT t, jsonb_agg(c ORDER BY p) AS r FROM (
      SELECT t, p, (SELECT count(*) FROM cc_pred WHERE label = t AND pred = p) AS c
      FROM unnest(ARRAY['no', 'yes']) t, unnest(ARRAY['no', 'yes']) p) x
    GROUP BY t) y),
sums AS (
  SELECT jsonb_agg(r ORDER BY t) AS matrix FROM (
    SELECT t, jsonb_agg(((m.metrics->'train'->'confusion'->'matrix'->t->>p)::int
                        + (m.metrics->'holdout'->'confusion'->'matrix'->t->>p)::int) ORDER BY p) AS r
    FROM m, generate_series(0, 1) t, generate_series(0, 1) p GROUP BY t) z)
SELECT conf.matrix AS recomputed, sums.matrix = conf.matrix AS confusion_matches,
       abs((m.metrics->'train'->>'accuracy')::float8 * (m.metrics->>'train_rows')::int
           + (m.metrics->'holdout'->>'accuracy')::float8 * (m.metrics->>'holdout_rows')::int
           - (SELECT count(*) FROM cc_pred WHERE pred = label)) < 1e-9 AS accuracy_matches,
       abs((m.metrics->'train'->>'log_loss')::float8 * (m.metrics->>'train_rows')::int
           + (m.metrics->'holdout'->>'log_loss')::float8 * (m.metrics->>'holdout_rows')::int
           - (SELECT sum(-ln(p_true)) FROM cc_pred)) < 1e-9 AS log_loss_matches
FROM m, conf, sums;

-- balanced accuracy is the mean recall of the two classes of the held-out confusion
WITH c AS (SELECT metrics->'holdout' AS h FROM kernel_models WHERE name = 'cc_log')
SELECT abs((h->>'balanced_accuracy')::float8
           - ((h->'confusion'->'matrix'->0->>0)::float8 / ((h->'confusion'->'matrix'->0->>0)::int + (h->'confusion'->'matrix'->0->>1)::int)
              + (h->'confusion'->'matrix'->1->>1)::float8 / ((h->'confusion'->'matrix'->1->>0)::int + (h->'confusion'->'matrix'->1->>1)::int)) / 2) < 1e-12
       AS balanced_matches,
       round((h->>'accuracy')::numeric, 4) AS accuracy, round((h->>'log_loss')::numeric, 4) AS log_loss,
       round((h->>'auc')::numeric, 4) AS auc
FROM c;

-- with nothing held out, the training scores cover every row: AUC by the
-- Mann-Whitney count over kernel_predict_proba, ties one half
SELECT version, metrics->'holdout' AS holdout
FROM kernel_model_train('cc_all', 'SELECT f, label FROM cc_rows',
                        '{"method": "logistic", "gamma": 1, "lambda": 0.01, "test_fraction": 0}');
WITH s AS (SELECT label, (kernel_predict_proba('cc_all', f)->>'yes')::float8 AS p FROM cc_rows),
mw AS (SELECT sum(CASE WHEN a.p > b.p THEN 1 WHEN a.p = b.p THEN 0.5 ELSE 0 END)::float8
              / (count(*))::float8 AS auc
       FROM s a, s b WHERE a.label = 'yes' AND b.label = 'no')
SELECT abs(mw.auc - (metrics->'train'->>'auc')::float8) < 1e-12 AS auc_matches,
       abs((metrics->'train'->>'accuracy')::float8
           - (SELECT avg((kernel_predict_class('cc_all', f) = label)::int) FROM cc_rows)) < 1e-12 AS accuracy_matches
FROM mw, kernel_models WHERE name = 'cc_all';

-- retrain: the same rows give the same split and the same model bytes;
-- if_better keeps the deployed version on an equal log-loss
SELECT version, deployed, metrics->'deploy'->>'reason' AS reason,
       metrics->'deploy'->>'criterion' AS criterion
FROM kernel_model_retrain('cc_log');
SELECT a.model = b.model AS same_model, a.metrics->'holdout' = b.metrics->'holdout' AS same_scores
FROM kernel_models a, kernel_models b
WHERE a.name = 'cc_log' AND a.version = 1 AND b.name = 'cc_log' AND b.version = 2;

-- if_better: a heavily regularised logistic model, then a better one, on log-loss
SELECT version, deployed, metrics->'deploy'->>'reason' AS reason,
       (metrics->'deploy'->>'new_holdout')::float8 < (metrics->'deploy'->>'previous_holdout')::float8 AS lower
FROM kernel_model_train('cc_log', 'SELECT f, label FROM cc_rows',
                        '{"method": "logistic", "gamma": 1, "lambda": 10, "test_fraction": 0.25}');
SELECT version, deployed, metrics->'deploy'->>'reason' AS reason,
       (metrics->'deploy'->>'new_holdout')::float8 < (metrics->'deploy'->>'previous_holdout')::float8 AS lower
FROM kernel_model_train('cc_log', 'SELECT f, label FROM cc_rows',
                        '{"method": "logistic", "gamma": 4, "lambda": 0.001, "test_fraction": 0.25}');
-- an svm without probabilities is compared on accuracy (svm is the default for text)
SELECT version, deployed, metrics->'deploy'->>'criterion' AS criterion,
       ((metrics->'deploy'->>'new_holdout')::float8 > (metrics->'deploy'->>'previous_holdout')::float8) = deployed AS consistent,
       metrics->'holdout'->'log_loss' AS log_loss
FROM kernel_model_train('cc_log', 'SELECT f, label FROM cc_rows',
                        '{"gamma": 1, "lambda": 0.01, "test_fraction": 0.25}');

-- float8 labels with a classification method; a change of task from a
-- regression model deploys only with "always"
SELECT version, deployed, metrics->>'task' AS task
FROM kernel_model_train('cc_task', 'SELECT f, k3 FROM cc_rows', '{"test_fraction": 0.25}');
SELECT version, deployed, metrics->>'task' AS task, metrics->'deploy'->>'reason' AS reason,
       metrics->'holdout'->'confusion'->'labels' AS labels,
       metrics->'holdout'->'auc' AS auc
FROM kernel_model_train('cc_task', 'SELECT f, k3 FROM cc_rows',
                        '{"method": "logistic", "gamma": 1, "lambda": 0.01, "test_fraction": 0.25}');
SELECT version, deployed, metrics->'deploy'->>'reason' AS reason
FROM kernel_model_train('cc_task', 'SELECT f, k3 FROM cc_rows',
                        '{"method": "logistic", "gamma": 1, "lambda": 0.01, "test_fraction": 0.25, "deploy": "always"}');
SELECT kernel_predict_class('cc_task', ARRAY[0.5, 0.5]) IN ('0', '1', '2') AS float8_labels;

-- errors: a regression method on a text column, one class only
SELECT * FROM kernel_model_train('cc_bad', 'SELECT f, label FROM cc_rows', '{"method": "ridge"}');
SELECT pg_temp.outcome($$SELECT kernel_model_train('cc_bad', 'SELECT f, ''same''::text FROM cc_rows')$$);
SELECT count(*) AS bad_versions FROM kernel_models WHERE name = 'cc_bad';

-- kernel_predict_class(name, f) and kernel_predict_proba(name, f) are C
-- functions on kernel_predict(name, f)'s cache: the same values as the
-- bytea forms on kernel_model_get(name), for binary and 3-class logistic
-- models and an svm with Platt probabilities
SELECT version, deployed
FROM kernel_model_train('cc_svmp', 'SELECT f, label FROM cc_rows',
                        '{"method": "svm", "gamma": 1, "lambda": 0.01, "probability": true, "test_fraction": 0}');
WITH m AS (SELECT name, kernel_model_get(name) AS model
           FROM unnest(ARRAY['cc_all', 'cc_task', 'cc_svmp']) name)
SELECT m.name, count(*) AS rows,
       bool_and(kernel_predict_class(m.name, r.f) = kernel_predict_class(m.model, r.f)) AS same_class,
       bool_and(kernel_predict_proba(m.name, r.f) = kernel_predict_proba(m.model, r.f)) AS same_proba,
       count(DISTINCT kernel_predict_class(m.name, r.f)) AS classes_predicted
FROM m, cc_rows r GROUP BY m.name ORDER BY m.name;
SELECT kernel_predict_proba('cc_task', ARRAY[0.5, 0.5]) = kernel_predict_proba(kernel_model_get('cc_task'), ARRAY[0.5, 0.5]) AS same_3_class;
SELECT abs((SELECT sum(v::float8) FROM jsonb_each_text(kernel_predict_proba('cc_svmp', ARRAY[0.2, -0.4])) e(k, v)) - 1) < 1e-12 AS sums_to_1;

-- the same errors as the bytea forms: a regression model, an svm without
-- probabilities, an unknown name, a role that may not read the model
SELECT version FROM kernel_model_train('cc_reg', 'SELECT f, k3 FROM cc_rows', '{"test_fraction": 0}');
SELECT pg_temp.outcome($$SELECT kernel_predict_class('cc_reg', ARRAY[0.5, 0.5])$$) AS by_name,
       pg_temp.outcome($$SELECT kernel_predict_class(kernel_model_get('cc_reg'), ARRAY[0.5, 0.5])$$) AS bytea;
SELECT version FROM kernel_model_train('cc_svm', 'SELECT f, label FROM cc_rows', '{"gamma": 1, "lambda": 0.01, "test_fraction": 0}');
SELECT pg_temp.outcome($$SELECT kernel_predict_proba('cc_svm', ARRAY[0.5, 0.5])$$) AS by_name,
       pg_temp.outcome($$SELECT kernel_predict_proba(kernel_model_get('cc_svm'), ARRAY[0.5, 0.5])$$) AS bytea;
SELECT kernel_predict_proba('cc_svm', f) FROM cc_rows WHERE id = 1;
SELECT kernel_predict_class('cc_nope', ARRAY[0.5, 0.5]);
SELECT kernel_predict_proba('cc_nope', ARRAY[0.5, 0.5]);
SELECT kernel_predict_class('cc_all', ARRAY[0.5, 0.5]) AS owner_class,
       kernel_predict_proba('cc_all', ARRAY[0.5, 0.5]) AS owner_proba \gset
CREATE ROLE regress_cc_reader;
SET ROLE regress_cc_reader;
SELECT pg_temp.outcome($$SELECT kernel_predict_class('cc_all', ARRAY[0.5, 0.5])$$) AS class_by_name,
       pg_temp.outcome($$SELECT kernel_predict_proba('cc_all', ARRAY[0.5, 0.5])$$) AS proba_by_name,
       pg_temp.outcome($$SELECT kernel_predict('cc_all', ARRAY[0.5, 0.5])$$) AS predict_by_name;
RESET ROLE;
GRANT SELECT ON kernel_models TO regress_cc_reader;
SET ROLE regress_cc_reader;
SELECT kernel_predict_class('cc_all', ARRAY[0.5, 0.5]) = :'owner_class' AS reader_class,
       kernel_predict_proba('cc_all', ARRAY[0.5, 0.5]) = :'owner_proba'::jsonb AS reader_proba;
RESET ROLE;
REVOKE SELECT ON kernel_models FROM regress_cc_reader;
DROP ROLE regress_cc_reader;
-- if_better never deploys a classifier no better than a constant predictor
-- (hold-out balanced accuracy 1 / classes), even as the first version:
-- with lambda 10, logistic predicts one class for every row
SELECT version, deployed, metrics->'deploy'->>'reason' AS reason,
       metrics->'holdout'->'balanced_accuracy' AS balanced_accuracy
FROM kernel_model_train('cc_const', 'SELECT f, label FROM cc_rows',
                        '{"method": "logistic", "gamma": 1, "lambda": 10, "test_fraction": 0.25}');
SELECT pg_temp.outcome($$SELECT kernel_predict_class('cc_const', ARRAY[0.5, 0.5])$$) AS scoring;
-- "always" still deploys it
SELECT version, deployed, metrics->'deploy'->>'reason' AS reason
FROM kernel_model_train('cc_const', 'SELECT f, label FROM cc_rows',
                        '{"method": "logistic", "gamma": 1, "lambda": 10, "test_fraction": 0.25, "deploy": "always"}');
SELECT kernel_model_drop('cc_const');

SELECT kernel_model_drop('cc_svmp');
SELECT kernel_model_drop('cc_svm');
SELECT kernel_model_drop('cc_reg');

SELECT kernel_model_drop('cc_log');
SELECT kernel_model_drop('cc_all');
SELECT kernel_model_drop('cc_task');
DROP TABLE cc_rows;

-- Named approximate classifiers train by passes over the query (issue 23):
-- the per-row hold-out split (not stratified), the model equal to the
-- kernel_train aggregate's on the same training rows within 1e-9 (the sums
-- add in another order), text labels, refit, retrain compared on a
-- held-out pass, and the errors of the passes.
CREATE TABLE cc_approx AS
  SELECT ARRAY[sin(i), cos(0.7 * i), (i % 5)::float8]::float8[] AS f,
         (CASE WHEN sin(i) + cos(0.7 * i) > 0.2 THEN 1 ELSE 0 END)::float8 AS y,
         CASE WHEN sin(i) > 0.5 THEN 'a' WHEN sin(i) > -0.3 THEN 'b' ELSE 'c' END AS label
  FROM generate_series(1, 1500) i;
SELECT version, deployed, metrics->>'split' AS split, metrics->'stratified' AS stratified,
       metrics->'train_rows' AS train_rows, metrics->'holdout_rows' AS holdout_rows,
       round((metrics->'holdout'->>'accuracy')::numeric, 4) AS holdout_accuracy,
       metrics->'holdout'->'confusion'->'matrix' AS holdout_confusion
FROM kernel_model_train('cc_nys', 'SELECT f, y FROM cc_approx',
                        '{"method": "logistic", "approximation": "nystrom", "components": 30, "lambda": 0.001, "seed": 3}');
WITH tr AS (SELECT f, y FROM cc_approx WHERE NOT _kernel_ml_holdout(f, y, 3, 0.2)),
agg AS (SELECT kernel_train(f, y, '{"method": "logistic", "approximation": "nystrom", "components": 30, "lambda": 0.001, "seed": 3}') AS m FROM tr)
SELECT count(*) AS rows,
       max(abs((kernel_predict_proba(agg.m, tr.f)->>'1')::float8
               - (kernel_predict_proba('cc_nys'::text, tr.f)->>'1')::float8)) < 1e-9 AS same_proba,
       (SELECT kernel_model_info(m) - 'intercept' - 'train_log_loss' FROM agg)
         = kernel_model_info(kernel_model_get('cc_nys')) - 'intercept' - 'train_log_loss' AS same_info
FROM tr, agg;
-- retrain: the same model, compared on a held-out pass; a tie keeps version 1
SELECT version, deployed, metrics->'deploy'->>'criterion' AS criterion,
       metrics->'deploy'->>'reason' AS reason
FROM kernel_model_retrain('cc_nys');
-- rff svm over text labels (three classes, one-vs-rest), refit on every row
SELECT version, deployed, metrics->'refit' AS refit,
       metrics->'holdout'->'confusion'->'labels' AS labels,
       round((metrics->'holdout'->>'accuracy')::numeric, 4) AS holdout_accuracy,
       metrics->'rows' AS rows
FROM kernel_model_train('cc_rff', 'SELECT f, label FROM cc_approx',
                        '{"approximation": "rff", "components": 60, "gamma": 0.5, "seed": 3, "refit": true}');
SELECT kernel_model_info(kernel_model_get('cc_rff'))->'rows_seen' AS refit_rows_seen;
SELECT kernel_predict_class('cc_rff', f) AS class, count(*) FROM cc_approx GROUP BY 1 ORDER BY 1;
-- errors: one class, no row, probabilities of an approximate svm
SELECT pg_temp.outcome($$SELECT version FROM kernel_model_train('cc_nys1', 'SELECT f, label FROM cc_approx WHERE label = ''a''', '{"method": "logistic", "approximation": "nystrom", "components": 10}')$$) AS one_class;
SELECT pg_temp.outcome($$SELECT version FROM kernel_model_train('cc_nys1', 'SELECT f, label FROM cc_approx WHERE false', '{"method": "logistic", "approximation": "nystrom", "components": 10}')$$) AS no_rows;
SELECT pg_temp.outcome($$SELECT version FROM kernel_model_train('cc_nys1', 'SELECT f, y FROM cc_approx', '{"method": "svm", "approximation": "nystrom", "components": 10, "probability": true}')$$) AS svm_probability;
SELECT kernel_model_drop('cc_nys'), kernel_model_drop('cc_rff');
DROP TABLE cc_approx;
