-- nystrom centres: "centers" uniform (the default), kmeans, leverage (issue 31)
SET extra_float_digits = 0;

-- 12 clusters of unequal size and spread in 3 features
CREATE TABLE cdata AS
SELECT i AS id, ARRAY[3.0 * sin(c) + s * n1, 3.0 * cos(1.7 * c) + s * n2, (c % 5) - 2.0 + s * n3]::float8[] AS f,
       sin(3.0 * sin(c) + s * n1) + 0.5 * cos(3.0 * cos(1.7 * c) + s * n2) + 0.1 * n3 AS y
FROM (SELECT i, floor(12.0 * power((i * 0.6180339887) - floor(i * 0.6180339887), 2))::int AS c,
             0.05 + 0.06 * (floor(12.0 * power((i * 0.6180339887) - floor(i * 0.6180339887), 2))::int % 6) AS s,
             sin(i * 12.9898) AS n1, sin(i * 78.233) AS n2, sin(i * 37.719) AS n3
      FROM generate_series(1, 2000) i) g;
ANALYZE cdata;

-- the same model in any row order (md5 of the model bytes)
CREATE TABLE byorder AS
SELECT c, o, md5(kernel_train(f, y, jsonb_build_object('approximation', 'nystrom', 'components', 60,
                                                        'centers', c, 'seed', 3)
                              ORDER BY CASE WHEN o = 'asc' THEN id ELSE -id END)) AS h
FROM cdata, unnest(ARRAY['uniform', 'kmeans', 'leverage']) c, unnest(ARRAY['asc', 'desc']) o
GROUP BY c, o;
SELECT c, count(DISTINCT h) AS models FROM byorder GROUP BY c ORDER BY c;

-- and under a parallel plan
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF)
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 60, "centers": "kmeans", "seed": 3}') FROM cdata;
CREATE TABLE bypar AS
SELECT 'kmeans' AS c, md5(kernel_train(f, y, '{"approximation": "nystrom", "components": 60, "centers": "kmeans", "seed": 3}')) AS h FROM cdata
UNION ALL
SELECT 'leverage', md5(kernel_train(f, y, '{"approximation": "nystrom", "components": 60, "centers": "leverage", "seed": 3}')) FROM cdata;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
SELECT p.c, p.h = o.h AS same_as_serial FROM bypar p JOIN byorder o ON o.c = p.c AND o.o = 'asc' ORDER BY 1;

-- a classifier too; the model says which centres it has
CREATE TABLE cmodels AS
SELECT c, kernel_train(f, y, jsonb_build_object('approximation', 'nystrom', 'components', 60, 'centers', c)) AS m,
       kernel_train(f, CASE WHEN y > 0.5 THEN 'hi' ELSE 'lo' END,
                    jsonb_build_object('approximation', 'nystrom', 'components', 60, 'centers', c)) AS k
FROM cdata, unnest(ARRAY['uniform', 'kmeans', 'leverage']) c GROUP BY c;
SELECT c, kernel_model_info(m)->>'centers' AS regression, kernel_model_info(k)->>'centers' AS classifier,
       (kernel_model_info(m)->>'n_centers')::int AS n_centers
FROM cmodels ORDER BY c;
-- the default's bytes are "uniform"'s, and rff models say nothing of centres
SELECT md5(kernel_train(f, y, '{"approximation": "nystrom", "components": 60}')) = md5(m) AS default_is_uniform
FROM cdata, cmodels WHERE c = 'uniform' GROUP BY m;
SELECT kernel_model_info(kernel_train(f, y, '{"approximation": "rff", "components": 20}')) ? 'centers' AS rff_has_centers
FROM cdata;
-- refined centres fit the clusters better (training RMSE, 60 centres)
SELECT c, round((kernel_model_info(m)->>'train_rmse')::numeric, 3) AS train_rmse FROM cmodels ORDER BY c;
-- errors
SELECT kernel_train(f, y, '{"centers": "kmeans"}') FROM cdata;
SELECT kernel_train(f, y, '{"approximation": "rff", "centers": "leverage"}') FROM cdata;
SELECT kernel_train(f, y, '{"approximation": "nystrom", "centers": "kmean"}') FROM cdata;
SELECT kernel_train(f, y, '{"approximation": "nystrom", "centers": 3}') FROM cdata;
-- a kernel that is not positive semi-definite on the sketch
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 10, "centers": "leverage",
                            "kernel": "sigmoid", "gamma": 2, "coef0": -1}') FROM cdata;
SELECT kernel_basis(f, '{"approximation": "nystrom", "centers": "kmeans"}') FROM cdata;
WITH b AS (SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 20}') AS b FROM cdata)
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 20, "centers": "leverage"}', b.b)
FROM cdata, b GROUP BY b.b;
-- named models train by the learner's passes over the stored query (the
-- aggregate host, the cursor host for the refine passes): refined centres
-- too, the model the one statement gives over the same training rows (up
-- to the order of the sums: ridge's normal equations over k-means centres
-- magnify it to about 1e-7 here, svr's whitened Newton to 1e-11)
SELECT version FROM kernel_model_train('centres_named', 'SELECT f, y FROM cdata',
       '{"approximation": "nystrom", "components": 20, "centers": "kmeans", "seed": 3}');
WITH tr AS (SELECT f, y FROM cdata WHERE NOT _kernel_ml_holdout(f, y, 3, 0.2)),
     m AS (SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 20, "centers": "kmeans", "seed": 3}') AS m FROM tr)
SELECT kernel_model_info(kernel_model_get('centres_named'))->>'centers' AS centers,
       max(abs(kernel_predict(m.m, c.f) - kernel_predict('centres_named', c.f))) < 1e-6 AS same_ridge
FROM m, cdata c GROUP BY 1;
SELECT kernel_model_drop('centres_named');
SELECT version FROM kernel_model_train('centres_svr', 'SELECT f, y FROM cdata',
       '{"method": "svr", "approximation": "nystrom", "components": 20, "centers": "kmeans", "lambda": 0.01, "seed": 3}');
SELECT version FROM kernel_model_train('centres_logistic', 'SELECT f, (y > 0)::int::float8 AS y FROM cdata',
       '{"method": "logistic", "approximation": "nystrom", "components": 20, "centers": "leverage", "lambda": 0.01, "seed": 3}');
WITH tr AS (SELECT f, y FROM cdata WHERE NOT _kernel_ml_holdout(f, y, 3, 0.2)),
     m AS (SELECT kernel_train(f, y, '{"method": "svr", "approximation": "nystrom", "components": 20, "centers": "kmeans", "lambda": 0.01, "seed": 3}') AS m FROM tr)
SELECT kernel_model_info(kernel_model_get('centres_svr'))->>'centers' AS centers,
       max(abs(kernel_predict(m.m, c.f) - kernel_predict('centres_svr', c.f))) < 1e-9 AS same_svr
FROM m, cdata c GROUP BY 1;
WITH tr AS (SELECT f, (y > 0)::int::float8 AS y FROM cdata),
     trn AS (SELECT f, y FROM tr WHERE NOT _kernel_ml_holdout(f, y, 3, 0.2)),
     m AS (SELECT kernel_train(f, y, '{"method": "logistic", "approximation": "nystrom", "components": 20, "centers": "leverage", "lambda": 0.01, "seed": 3}') AS m FROM trn)
SELECT kernel_model_info(kernel_model_get('centres_logistic'))->>'centers' AS centers,
       max(abs((kernel_predict_proba(m.m, c.f)->>'1')::float8
               - (kernel_predict_proba('centres_logistic', c.f)->>'1')::float8)) < 1e-9 AS same_logistic
FROM m, cdata c GROUP BY 1;
SELECT kernel_model_drop('centres_svr'), kernel_model_drop('centres_logistic');

DROP TABLE cdata, byorder, bypar, cmodels;
