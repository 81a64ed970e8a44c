-- kernel_evaluate: error measures of a model on rows in one aggregate call.
-- Every value is checked against the same measure recomputed here in SQL
-- from kernel_predict, kernel_predict_class and kernel_predict_proba row by
-- row (the printed values equal scikit-learn's metrics on those rows:
-- test/crosscheck/crosscheck.py evaluate).
SET extra_float_digits = 0;

CREATE TABLE ev_rows AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f,
       sin(i) + 0.5 * cos(0.7 * i) + ((i * 7919) % 100) / 500.0 AS y,
       CASE WHEN sin(i) + 0.3 * cos(3 * i) + 0.4 * sin(5.3 * i) > 0 THEN 'pos' ELSE 'neg' END AS lab,
       (i % 3)::text AS l3, (i % 2)::float8 AS k2, i % 4 AS grp
FROM generate_series(1, 300) i;

CREATE TABLE ev_models AS
SELECT kernel_train(f, y, '{"lambda": 0.1}') AS reg,
       kernel_train(f, lab, '{"method": "logistic", "lambda": 0.01}') AS logit,
       kernel_train(f, l3, '{"method": "svm", "probability": true}') AS svm3,
       kernel_train(f, lab, '{"method": "svm"}') AS svm2,
       kernel_train(f, k2, '{"method": "logistic"}') AS logit_f8,
       kernel_train(f, y, '{"lambda": 1}') AS reg2
FROM ev_rows WHERE id <= 200;

-- regression on the 100 rows not trained on
SELECT e->>'task' AS task, e->'n' AS n, round((e->>'rmse')::numeric, 6) AS rmse,
       round((e->>'mae')::numeric, 6) AS mae, round((e->>'r2')::numeric, 6) AS r2, e->'skipped' AS skipped
FROM (SELECT kernel_evaluate(m.reg, r.f, r.y) AS e FROM ev_rows r, ev_models m WHERE r.id > 200) s;

WITH p AS (SELECT r.y, kernel_predict(m.reg, r.f) AS p FROM ev_rows r, ev_models m WHERE r.id > 200),
sq AS (SELECT sqrt(avg((p - y) ^ 2)) AS rmse, avg(abs(p - y)) AS mae,
              1 - sum((p - y) ^ 2) / sum((y - (SELECT avg(y) FROM p)) ^ 2) AS r2 FROM p),
ev AS (SELECT kernel_evaluate(m.reg, r.f, r.y) AS e FROM ev_rows r, ev_models m WHERE r.id > 200)
SELECT abs((e->>'rmse')::float8 - rmse) < 1e-12 AS rmse_ok, abs((e->>'mae')::float8 - mae) < 1e-12 AS mae_ok,
       abs((e->>'r2')::float8 - r2) < 1e-12 AS r2_ok
FROM sq, ev;

-- binary logistic: every key, then each measure recomputed
SELECT array(SELECT jsonb_object_keys(e) ORDER BY 1) AS keys, e->'n' AS n,
       round((e->>'accuracy')::numeric, 6) AS accuracy,
       round((e->>'balanced_accuracy')::numeric, 6) AS balanced_accuracy,
       round((e->>'log_loss')::numeric, 6) AS log_loss, round((e->>'auc')::numeric, 6) AS auc,
       e->'confusion' AS confusion
FROM (SELECT kernel_evaluate(m.logit, r.f, r.lab) AS e FROM ev_rows r, ev_models m WHERE r.id > 200) s;

SELECT c.key AS class, round((c.value->>'precision')::numeric, 6) AS precision,
       round((c.value->>'recall')::numeric, 6) AS recall, round((c.value->>'f1')::numeric, 6) AS f1,
       c.value->'support' AS support
FROM (SELECT kernel_evaluate(m.logit, r.f, r.lab) AS e FROM ev_rows r, ev_models m WHERE r.id > 200) s,
     jsonb_each(e->'classes') c ORDER BY 1;

CREATE TEMP TABLE ev_pred AS
SELECT r.id, r.lab, kernel_predict_class(m.logit, r.f) AS pred,
       (kernel_predict_proba(m.logit, r.f)->>'pos')::float8 AS p_pos
FROM ev_rows r, ev_models m WHERE r.id > 200;

WITH ev AS (SELECT kernel_evaluate(m.logit, r.f, r.lab) AS e FROM ev_rows r, ev_models m WHERE r.id > 200),
acc AS (SELECT avg((pred = lab)::int) AS accuracy,
               avg(-ln(CASE WHEN lab = 'pos' THEN greatest(least(p_pos, 1 - 2.220446049250313e-16), 2.220446049250313e-16)
                            ELSE greatest(least(1 - p_pos, 1 - 2.220446049250313e-16), 2.220446049250313e-16) END)) AS log_loss
        FROM ev_pred),
rec AS (SELECT avg(r) AS balanced FROM (SELECT avg((pred = lab)::int) AS r FROM ev_pred GROUP BY lab) s),
-- the Mann-Whitney AUC: pairs (positive, negative) ordered right, ties a half
auc AS (SELECT avg(CASE WHEN a.p_pos > b.p_pos THEN 1 WHEN a.p_pos = b.p_pos THEN 0.5 ELSE 0 END) AS auc
        FROM ev_pred a, ev_pred b WHERE a.lab = 'pos' AND b.lab = 'neg'),
prf AS (SELECT c, (SELECT count(*) FILTER (WHERE pred = c AND lab = c)::float8 / nullif(count(*) FILTER (WHERE pred = c), 0) FROM ev_pred) AS precision,
               (SELECT count(*) FILTER (WHERE pred = c AND lab = c)::float8 / nullif(count(*) FILTER (WHERE lab = c), 0) FROM ev_pred) AS recall
        FROM unnest(ARRAY['neg', 'pos']) c)
SELECT abs((e->>'accuracy')::float8 - accuracy) < 1e-12 AS accuracy_ok,
       abs((e->>'balanced_accuracy')::float8 - balanced) < 1e-12 AS balanced_ok,
       abs((e->>'log_loss')::float8 - log_loss) < 1e-12 AS log_loss_ok,
       abs((e->>'auc')::float8 - auc) < 1e-12 AS auc_ok,
       (SELECT bool_and(abs((e->'classes'->c->>'precision')::float8 - precision) < 1e-12
                        AND abs((e->'classes'->c->>'recall')::float8 - recall) < 1e-12
                        AND abs((e->'classes'->c->>'f1')::float8 - 2 * precision * recall / (precision + recall)) < 1e-12)
        FROM prf) AS per_class_ok,
       e->'confusion'->'matrix' = (SELECT jsonb_agg(row ORDER BY t) FROM (
           SELECT t, jsonb_agg((SELECT count(*) FROM ev_pred WHERE lab = t AND pred = p) ORDER BY p) AS row
           FROM unnest(ARRAY['neg', 'pos']) t, unnest(ARRAY['neg', 'pos']) p GROUP BY t) x) AS confusion_ok
FROM ev, acc, rec, auc;

-- three classes, svm with Platt probabilities: no AUC, log-loss from
-- kernel_predict_proba's probabilities
SELECT e->'n' AS n, e ? 'auc' AS has_auc, round((e->>'accuracy')::numeric, 6) AS accuracy,
       round((e->>'balanced_accuracy')::numeric, 6) AS balanced_accuracy,
       round((e->>'log_loss')::numeric, 6) AS log_loss, e->'confusion' AS confusion
FROM (SELECT kernel_evaluate(m.svm3, r.f, r.l3) AS e FROM ev_rows r, ev_models m WHERE r.id > 200) s;

WITH ev AS (SELECT kernel_evaluate(m.svm3, r.f, r.l3) AS e FROM ev_rows r, ev_models m WHERE r.id > 200),
p AS (SELECT r.l3, kernel_predict_class(m.svm3, r.f) AS pred,
             (kernel_predict_proba(m.svm3, r.f)->>r.l3)::float8 AS p_true
      FROM ev_rows r, ev_models m WHERE r.id > 200)
SELECT abs((e->>'accuracy')::float8 - (SELECT avg((pred = l3)::int) FROM p)) < 1e-12 AS accuracy_ok,
       abs((e->>'log_loss')::float8 - (SELECT avg(-ln(greatest(p_true, 2.220446049250313e-16))) FROM p)) < 1e-12 AS log_loss_ok
FROM ev;

-- an svm without probabilities: log_loss null, the AUC of the decision value
WITH ev AS (SELECT kernel_evaluate(m.svm2, r.f, r.lab) AS e FROM ev_rows r, ev_models m WHERE r.id > 200),
p AS (SELECT r.lab, kernel_predict(m.svm2, r.f) AS f FROM ev_rows r, ev_models m WHERE r.id > 200)
SELECT e->'log_loss' AS log_loss, round((e->>'auc')::numeric, 6) AS auc,
       abs((e->>'auc')::float8 - (SELECT avg(CASE WHEN a.f > b.f THEN 1 WHEN a.f = b.f THEN 0.5 ELSE 0 END)
                                  FROM p a, p b WHERE a.lab = 'pos' AND b.lab = 'neg')) < 1e-12 AS auc_ok
FROM ev;

-- a classifier trained on a float8 label: a float8 target is its label
SELECT e->'confusion'->'labels' AS labels, round((e->>'accuracy')::numeric, 6) AS accuracy,
       (SELECT kernel_evaluate(m.logit_f8, r.f, r.k2::text) FROM ev_rows r, ev_models m WHERE r.id > 200) = e AS same_as_text
FROM (SELECT kernel_evaluate(m.logit_f8, r.f, r.k2) AS e FROM ev_rows r, ev_models m WHERE r.id > 200) s;

-- GROUP BY evaluates each group as a WHERE would
SELECT r.grp, (kernel_evaluate(m.logit, r.f, r.lab)->'n')::int AS n,
       kernel_evaluate(m.logit, r.f, r.lab)
       = (SELECT kernel_evaluate(m2.logit, r2.f, r2.lab) FROM ev_rows r2, ev_models m2
          WHERE r2.id > 200 AND r2.grp = r.grp) AS same
FROM ev_rows r, ev_models m WHERE r.id > 200 GROUP BY r.grp ORDER BY 1;

-- NULL model, features or target: skipped and counted; no scored row: NULL
SELECT e->'n' AS n, e->'skipped' AS skipped
FROM (SELECT kernel_evaluate(m.reg, CASE WHEN r.id % 10 = 1 THEN NULL ELSE r.f END,
                             CASE WHEN r.id % 10 = 2 THEN NULL ELSE r.y END) AS e
      FROM ev_rows r, ev_models m WHERE r.id > 200) s;
SELECT kernel_evaluate(NULL::bytea, r.f, r.y) IS NULL AS all_skipped FROM ev_rows r;
SELECT kernel_evaluate(m.reg, r.f, r.y) IS NULL AS empty FROM ev_rows r, ev_models m WHERE false;

-- errors
-- a model that changes within a group
SELECT kernel_evaluate(CASE WHEN r.id % 2 = 0 THEN m.reg ELSE m.reg2 END, r.f, r.y)
FROM ev_rows r, ev_models m;
-- a label the model does not have
SELECT kernel_evaluate(m.logit, r.f, CASE WHEN r.id = 250 THEN 'maybe' ELSE r.lab END)
FROM ev_rows r, ev_models m WHERE r.id > 200;
-- a text target for a regression model
SELECT kernel_evaluate(m.reg, r.f, r.lab) FROM ev_rows r, ev_models m;
-- a non-finite target, a feature array of the wrong length, a NULL element
SELECT kernel_evaluate(m.reg, r.f, CASE WHEN r.id = 5 THEN 'NaN' ELSE r.y END) FROM ev_rows r, ev_models m;
SELECT kernel_evaluate(m.reg, r.f[1:2], r.y) FROM ev_rows r, ev_models m;
SELECT kernel_evaluate(m.reg, ARRAY[1, NULL, 2]::float8[], 1.0) FROM ev_models m;

-- parallel: partial states serialized and combined, the same measures
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
CREATE TABLE ev_big AS SELECT r.* FROM ev_rows r, generate_series(1, 20) g;
ANALYZE ev_big;
EXPLAIN (COSTS OFF)
SELECT kernel_evaluate((SELECT logit FROM ev_models), f, lab) FROM ev_big;
CREATE TEMP TABLE ev_par AS
SELECT kernel_evaluate((SELECT logit FROM ev_models), f, lab) AS c,
       kernel_evaluate((SELECT reg FROM ev_models), f, y) AS r FROM ev_big;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE ev_ser AS
SELECT kernel_evaluate((SELECT logit FROM ev_models), f, lab) AS c,
       kernel_evaluate((SELECT reg FROM ev_models), f, y) AS r FROM ev_big;
RESET max_parallel_workers_per_gather;
SELECT p.c->'n' AS n, p.c->'confusion' = s.c->'confusion' AS same_confusion,
       p.c->'auc' = s.c->'auc' AS same_auc,
       abs((p.c->>'log_loss')::float8 - (s.c->>'log_loss')::float8) < 1e-12 AS same_log_loss,
       abs((p.r->>'rmse')::float8 - (s.r->>'rmse')::float8) < 1e-12 AS same_rmse,
       abs((p.r->>'r2')::float8 - (s.r->>'r2')::float8) < 1e-12 AS same_r2
FROM ev_par p, ev_ser s;

-- by name: the deployed version, the same measures as by model
SELECT version, deployed FROM kernel_model_train('ev_logit', 'SELECT f, lab FROM ev_rows WHERE id <= 200',
                                                 '{"method": "logistic", "lambda": 0.01, "test_fraction": 0}');
SELECT kernel_evaluate('ev_logit', r.f, r.lab) = kernel_evaluate(kernel_model_get('ev_logit'), r.f, r.lab) AS same
FROM ev_rows r WHERE r.id > 200;
SELECT kernel_evaluate(CASE WHEN r.id % 2 = 1 THEN 'ev_logit' ELSE 'other' END, r.f, r.lab)
FROM ev_rows r WHERE r.id > 200;
SELECT kernel_evaluate('no_such_model', r.f, r.y) FROM ev_rows r;
-- the privilege rules of kernel_predict(name, ...): a role that may not read
-- the model gets its error, then the same measures once granted
CREATE ROLE regress_ev_reader;
GRANT SELECT ON ev_rows TO regress_ev_reader;
SELECT kernel_evaluate('ev_logit', r.f, r.lab) AS owner_eval FROM ev_rows r WHERE r.id > 200 \gset
SET ROLE regress_ev_reader;
SELECT kernel_evaluate('ev_logit', r.f, r.lab) FROM ev_rows r WHERE r.id > 200;
RESET ROLE;
GRANT SELECT ON kernel_models TO regress_ev_reader;
SET ROLE regress_ev_reader;
SELECT kernel_evaluate('ev_logit', r.f, r.lab) = :'owner_eval'::jsonb AS reader_same
FROM ev_rows r WHERE r.id > 200;
RESET ROLE;
REVOKE SELECT ON kernel_models FROM regress_ev_reader;
REVOKE SELECT ON ev_rows FROM regress_ev_reader;
DROP ROLE regress_ev_reader;
SELECT kernel_model_drop('ev_logit');

DROP TABLE ev_rows, ev_models, ev_big;
