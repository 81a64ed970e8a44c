-- kernel_model_export: every number needed to score a model outside the database
SET extra_float_digits = 0;

CREATE FUNCTION pg_temp.outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

CREATE TABLE ex_rows AS
SELECT i, ARRAY[i * 0.37 - 1, (i % 5) * 1.5, sin(i)]::float8[] AS f,
       cos(i * 0.3) + 0.1 * i AS y
FROM generate_series(1, 12) i;

CREATE TABLE ex AS
SELECT k, kernel_train(f, y, opts::jsonb) AS model
FROM ex_rows, (VALUES ('rbf', '{"kernel": "rbf", "gamma": 0.3, "lambda": 0.01}'),
                      ('linear', '{"kernel": "linear", "lambda": 0.01}'),
                      ('poly', '{"kernel": "poly", "gamma": 0.3, "degree": 2, "coef0": 1}'),
                      ('laplacian', '{"kernel": "laplacian", "gamma": 0.3}')) v(k, opts)
GROUP BY k, opts;

-- the keys: kernel parameters only where the kernel uses them
SELECT k, array(SELECT jsonb_object_keys(kernel_model_export(model)) ORDER BY 1) AS keys
FROM ex ORDER BY k;

-- shapes: one centre per training row, d values each; one coefficient per row
SELECT k, e->>'kernel' AS kernel, e->>'task' AS task, e->>'approximation' AS approximation,
       e->>'format_version' AS format_version, e->'outputs' AS outputs,
       jsonb_array_length(e->'centers') AS centers,
       (SELECT min(jsonb_array_length(c)) FROM jsonb_array_elements(e->'centers') c) AS min_d,
       (SELECT max(jsonb_array_length(c)) FROM jsonb_array_elements(e->'centers') c) AS max_d,
       jsonb_array_length(e->'coef') AS coef, jsonb_array_length(e->'mean') AS mean,
       jsonb_array_length(e->'scale') AS scale
FROM (SELECT k, kernel_model_export(model) AS e FROM ex) s ORDER BY k;

-- the numbers are the model's own: scored in SQL from the export (rbf,
-- linear), predictions equal kernel_predict's to rounding
CREATE FUNCTION pg_temp.score(e jsonb, x float8[]) RETURNS float8 LANGUAGE sql AS $$
  WITH xs AS (
    SELECT j, (x[j + 1] - (e->'mean'->>j)::float8) / (e->'scale'->>j)::float8 AS v
    FROM generate_series(0, jsonb_array_length(e->'mean') - 1) j),
  k AS (
    SELECT i, CASE e->>'kernel'
                WHEN 'rbf' THEN exp(-(e->>'gamma')::float8 *
                                    (SELECT sum(((e->'centers'->i->>j)::float8 - v) ^ 2) FROM xs))
                WHEN 'linear' THEN (SELECT sum((e->'centers'->i->>j)::float8 * v) FROM xs)
              END AS kv
    FROM generate_series(0, jsonb_array_length(e->'centers') - 1) i)
  SELECT (e->>'intercept')::float8 + sum((e->'coef'->>i)::float8 * kv) FROM k
$$;
SELECT k, max(abs(pg_temp.score(kernel_model_export(model), f) - kernel_predict(model, f)) /
              greatest(1, abs(kernel_predict(model, f)))) < 1e-12 AS same
FROM ex, ex_rows WHERE k IN ('rbf', 'linear') GROUP BY k ORDER BY k;

-- exact numbers: the intercept reads back as the same double
SELECT k, (kernel_model_export(model)->>'intercept')::float8 =
          (kernel_model_info(model)->>'intercept')::float8 AS same_intercept
FROM ex ORDER BY k;

-- a corrupt, truncated or foreign bytea is an error, not a guess
SELECT pg_temp.outcome(format('SELECT kernel_model_export(%L::bytea)',
                              set_byte(model, 100, get_byte(model, 100) # 1)))
FROM ex WHERE k = 'rbf';
SELECT pg_temp.outcome(format('SELECT kernel_model_export(%L::bytea)',
                              substring(model from 1 for 90)))
FROM ex WHERE k = 'rbf';
SELECT pg_temp.outcome($q$SELECT kernel_model_export('\x00010203'::bytea)$q$);
SELECT kernel_model_export(NULL) IS NULL AS strict;
