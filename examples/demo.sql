-- kernel_ml end to end on a real data set: scikit-learn's diabetes data
-- (442 patients, 10 raw clinical features, disease progression after a year),
-- loaded into a table by examples/demo.sh.
\set ON_ERROR_STOP on
\pset footer off
CREATE EXTENSION IF NOT EXISTS kernel_ml;

-- Hold out every fifth patient.
CREATE TABLE diabetes_train AS SELECT * FROM diabetes WHERE id % 5 <> 0;
CREATE TABLE diabetes_test  AS SELECT * FROM diabetes WHERE id % 5 = 0;

-- Train: an RBF kernel ridge model on standardized features, from a SELECT.
CREATE TABLE models (name text PRIMARY KEY, model bytea);
INSERT INTO models
SELECT 'progression',
       kernel_train(ARRAY[age, sex, bmi, bp, s1, s2, s3, s4, s5, s6], progression,
                    '{"kernel": "rbf", "gamma": 0.02, "lambda": 0.5}')
FROM diabetes_train;

-- Inspect it.
SELECT key, value FROM models, jsonb_each(kernel_model_info(model))
WHERE name = 'progression' AND key IN ('kernel', 'gamma', 'lambda', 'n_train', 'n_features',
                                       'standardize', 'train_rmse', 'size_bytes');

-- Score the held-out rows in place.
ALTER TABLE diabetes_test ADD COLUMN predicted float8;
UPDATE diabetes_test
SET predicted = kernel_predict((SELECT model FROM models WHERE name = 'progression'),
                               ARRAY[age, sex, bmi, bp, s1, s2, s3, s4, s5, s6]);

SELECT id, progression, round(predicted::numeric, 1) AS predicted
FROM diabetes_test ORDER BY id LIMIT 8;

SELECT count(*) AS test_rows,
       round(sqrt(avg((predicted - progression) ^ 2))::numeric, 2) AS rmse,
       round((1 - sum((predicted - progression) ^ 2) /
                  sum((progression - (SELECT avg(progression) FROM diabetes_test)) ^ 2))::numeric, 3) AS r2
FROM diabetes_test;

-- One model per group: GROUP BY trains one per sex.
SELECT sex, kernel_model_info(m)->'n_train' AS n_train,
       round((kernel_model_info(m)->>'train_rmse')::numeric, 2) AS train_rmse
FROM (SELECT sex, kernel_train(ARRAY[age, bmi, bp, s1, s2, s3, s4, s5, s6], progression,
                               '{"gamma": 0.02, "lambda": 0.5}') AS m
      FROM diabetes_train GROUP BY sex) g
ORDER BY sex;

-- Let kernel_ml choose gamma and lambda: closed-form leave-one-out over the
-- default grids, then a refit on all training rows with the winner.
INSERT INTO models
SELECT 'progression_auto',
       kernel_train(ARRAY[age, sex, bmi, bp, s1, s2, s3, s4, s5, s6], progression,
                    '{"kernel": "rbf", "gamma": "auto", "lambda": "auto"}')
FROM diabetes_train;

SELECT info->'gamma' AS gamma, info->'lambda' AS lambda,
       jsonb_array_length(info->'selection'->'candidates') AS candidates,
       info->'selection'->>'cv' AS cv,
       round(sqrt((info->'selection'->'candidates'->((info->'selection'->>'best')::int)->>'score')::numeric), 2) AS loo_rmse
FROM (SELECT kernel_model_info(model) AS info FROM models WHERE name = 'progression_auto') s;

SELECT round(sqrt(avg((kernel_predict(m.model, ARRAY[age, sex, bmi, bp, s1, s2, s3, s4, s5, s6])
                       - progression) ^ 2))::numeric, 2) AS rmse_auto
FROM diabetes_test, models m WHERE m.name = 'progression_auto';
