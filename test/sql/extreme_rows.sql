-- Rows far from the data (issue 29, point 2): every classifier and every
-- probability path (svm with Platt: binary and one-vs-one coupling; logistic:
-- binary sigmoid, multinomial softmax, one-vs-rest sigmoids; exact, nystrom,
-- rff; by bytea and by name, jsonb and per label) scores rows 1e3 and 1e6
-- times the data's scale.  Every probability is finite, in [0, 1], the
-- probabilities of a row sum to 1 within 1e-12, the one-label form agrees
-- with the jsonb form (within 1e-15: jsonb keeps 15 digits), and the class kernel_predict_class returns has the
-- largest probability (ties allowed: far away, sigmoids round to 0 or 1).
SET extra_float_digits = 0;

-- three clusters of 30 rows within about 2 of the origin (y2: the first
-- cluster against the others); for the
-- one-vs-rest logistic on quadratic features every class's decision value
-- is below -745 at {1000, 0}: every sigmoid underflows to 0
CREATE TEMP TABLE xr_rows AS
SELECT i, ARRAY[cx + sp * cos(i * 1.7), cy + sp * sin(i * 2.3)]::float8[] AS x,
       'k' || (i % 3) AS y3, CASE WHEN i % 3 = 0 THEN 'p' ELSE 'n' END AS y2
FROM generate_series(1, 90) i
JOIN (VALUES (0, -0.50, -1.38, 0.78), (1, -1.23, -0.68, 0.90), (2, -1.88, -1.40, 0.59))
     AS c(c, cx, cy, sp) ON c.c = i % 3;

-- 16 directions at 1e3 and at 1e6, and mixed scales
CREATE TEMP TABLE xr_far AS
SELECT row_number() OVER () AS r, x FROM (
  SELECT ARRAY[s * cos(t * pi() / 8), s * sin(t * pi() / 8)]::float8[] AS x
  FROM unnest(ARRAY[1e3, 1e6]::float8[]) s, generate_series(0, 15) t
  UNION ALL
  SELECT x::float8[] FROM unnest(ARRAY['{1000,0}', '{1e6,-1e6}', '{-1e6,1e6}', '{1e3,-1e6}',
                                       '{-1e6,1e3}', '{1e6,1e6}', '{-1e6,-1e6}']) x) s;
SELECT count(*) AS far_rows FROM xr_far;

CREATE TEMP TABLE xr_cfg(name text, opts jsonb);
INSERT INTO xr_cfg VALUES
 ('svm rbf probability',        '{"method": "svm", "probability": true}'),
 ('svm linear probability',     '{"method": "svm", "kernel": "linear", "probability": true}'),
 ('svm poly probability',       '{"method": "svm", "kernel": "poly", "degree": 3, "probability": true}'),
 ('svm poly',                   '{"method": "svm", "kernel": "poly", "degree": 3}'),
 ('logistic rbf',               '{"method": "logistic"}'),
 ('logistic linear',            '{"method": "logistic", "kernel": "linear"}'),
 ('logistic poly',              '{"method": "logistic", "kernel": "poly", "degree": 2}'),
 ('logistic nystrom linear',    '{"method": "logistic", "approximation": "nystrom", "components": 20, "kernel": "linear"}'),
 ('logistic nystrom poly',      '{"method": "logistic", "approximation": "nystrom", "components": 20, "kernel": "poly", "degree": 2}'),
 ('logistic nystrom poly 3',    '{"method": "logistic", "approximation": "nystrom", "components": 20, "kernel": "poly", "degree": 3}'),
 ('logistic nystrom rbf',       '{"method": "logistic", "approximation": "nystrom", "components": 20}'),
 ('logistic rff',               '{"method": "logistic", "approximation": "rff", "components": 50}'),
 ('svm nystrom poly',           '{"method": "svm", "approximation": "nystrom", "components": 20, "kernel": "poly", "degree": 2}'),
 ('svm rff',                    '{"method": "svm", "approximation": "rff", "components": 50}');

CREATE TEMP TABLE xr_models AS
SELECT c.name, 2 AS k, (SELECT kernel_train(x, y2, c.opts) FROM xr_rows) AS model FROM xr_cfg c
UNION ALL
SELECT c.name, 3, (SELECT kernel_train(x, y3, c.opts) FROM xr_rows) FROM xr_cfg c;

SELECT name, k, kernel_model_info(model)->>'multiclass' AS multiclass,
       kernel_model_info(model)->>'probability' AS probability
FROM xr_models ORDER BY name, k;

-- the probability of each class of each far row, jsonb and per label
CREATE FUNCTION pg_temp.xr_check(rows_query text)
RETURNS TABLE (name text, k int, rows bigint, finite boolean, in_unit boolean,
               sums_to_one boolean, label_form boolean, class_is_top boolean)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format($q$
    WITH s AS (%s),
    e AS (
      SELECT s.name, s.k, s.r, s.cls, j.key AS label, (j.value #>> '{}')::float8 AS p, s.pl
      FROM s, jsonb_each(s.pj) j
    )
    SELECT name, k, count(DISTINCT r),
           bool_and(p IS NOT NULL AND p NOT IN ('NaN', 'Infinity', '-Infinity')),
           bool_and(p BETWEEN 0 AND 1),
           bool_and(total IS NOT NULL AND abs(total - 1) <= 1e-12),
           bool_and(abs(pl - p) <= 1e-15 OR label <> cls),
           bool_and(top IS NOT NULL AND top_of_class = top)
    FROM (SELECT e.*, sum(p) OVER w AS total, max(p) OVER w AS top,
                 max(p) FILTER (WHERE label = cls) OVER w AS top_of_class
          FROM e WINDOW w AS (PARTITION BY name, k, r)) t
    GROUP BY name, k ORDER BY name, k$q$, rows_query);
END $$;

SELECT * FROM pg_temp.xr_check($$
  SELECT m.name, m.k, f.r, kernel_predict_class(m.model, f.x) AS cls,
         kernel_predict_proba(m.model, f.x) AS pj,
         kernel_predict_proba(m.model, f.x, kernel_predict_class(m.model, f.x)) AS pl
  FROM xr_models m, xr_far f
  WHERE (kernel_model_info(m.model)->>'probability')::boolean$$);

-- the classifiers without probabilities still decide every far row
SELECT m.name, m.k, count(*) AS rows, bool_and(kernel_predict_class(m.model, f.x) IS NOT NULL) AS decided,
       bool_and(m.k = 3 OR kernel_predict(m.model, f.x) NOT IN ('NaN', 'Infinity', '-Infinity')) AS finite
FROM xr_models m, xr_far f
WHERE NOT (kernel_model_info(m.model)->>'probability')::boolean
GROUP BY 1, 2 ORDER BY 1, 2;

-- the 0 / 0 of the issue: every one-vs-rest sigmoid underflows at {1000, 0}
-- (was {"k0": null, "k1": null, "k2": null}); in the log domain
-- s_c / sum_j s_j with s_c = e^f_c / (1 + e^f_c) = e^f_c there, the softmax
-- of the decision values (the unit test test_classify_proba_extreme checks
-- the numbers)
SELECT jsonb_object_agg(key, round(value::numeric, 6)) AS p
FROM xr_models, jsonb_each(kernel_predict_proba(model, '{1000,0}'))
WHERE name = 'logistic nystrom poly' AND k = 3;

-- named models: by-name jsonb probabilities and class
SELECT name, version, deployed
FROM kernel_model_train('xr_ovr', 'SELECT x, y3 FROM xr_rows',
                        '{"method": "logistic", "approximation": "nystrom", "components": 20, "kernel": "poly", "degree": 2, "test_fraction": 0.2}');
SELECT name, version, deployed
FROM kernel_model_train('xr_platt', 'SELECT x, y3 FROM xr_rows',
                        '{"method": "svm", "kernel": "poly", "degree": 3, "probability": true, "test_fraction": 0.2}');
SELECT name, version, deployed
FROM kernel_model_train('xr_binary', 'SELECT x, y2 FROM xr_rows',
                        '{"method": "logistic", "approximation": "nystrom", "components": 20, "kernel": "linear", "test_fraction": 0.2}');
SELECT n AS model, (metrics->'holdout'->>'log_loss')::float8 BETWEEN 0 AND 40 AS holdout_log_loss_finite
FROM unnest(ARRAY['xr_ovr', 'xr_platt', 'xr_binary']) n, kernel_models WHERE name = n ORDER BY 1;
SELECT * FROM pg_temp.xr_check($$
  SELECT name, k, r, cls, pj, (pj ->> cls)::float8 AS pl
  FROM (SELECT n AS name, 0 AS k, f.r, kernel_predict_class(n, f.x) AS cls,
               kernel_predict_proba(n, f.x) AS pj
        FROM unnest(ARRAY['xr_ovr', 'xr_platt', 'xr_binary']) n, xr_far f) s$$);
SELECT kernel_model_drop(n) FROM unnest(ARRAY['xr_ovr', 'xr_platt', 'xr_binary']) n ORDER BY n;
