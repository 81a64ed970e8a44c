-- The kernel drift test (issue 32, item 4): kernel_model_drift, the training
-- side kept with each version, kernel_model_retrain(name, '{"when": "drifted"}')
-- (numbers vs NumPy: test/crosscheck/crosscheck.py drift)
SET extra_float_digits = 0;
\set SHOW_CONTEXT never

-- the SQLSTATE and message a statement ends with
CREATE FUNCTION pg_temp.outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

CREATE TABLE drift_rows AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f,
       2 * sin(i) + cos(0.7 * i) AS y
FROM generate_series(1, 2000) i;

-- exact, nystrom and rff models: each version records its training side
SELECT name, version, deployed FROM kernel_model_train('drift_exact', 'SELECT f, y FROM drift_rows WHERE id <= 600', '{"lambda": 0.1}');
SELECT name, version, deployed FROM kernel_model_train('drift_nys', 'SELECT f, y FROM drift_rows', '{"approximation": "nystrom", "components": 50, "lambda": 0.1}');
SELECT name, version, deployed FROM kernel_model_train('drift_rff', 'SELECT f, y FROM drift_rows', '{"approximation": "rff", "components": 64, "lambda": 0.1}');
SELECT name, version, octet_length(drift_reference) AS reference_bytes
FROM kernel_models WHERE name LIKE 'drift\_%' ORDER BY name;

-- the training rows themselves: no drift (statistic 0, p-value 1)
SELECT d->>'statistic' AS statistic, d->>'p_value' AS p_value, d->'dof' AS dof,
       d->'n_train' AS n_train, d->'n_new' AS n_new, d->>'basis' AS basis, d->'features' AS features
FROM kernel_model_drift('drift_exact', 'SELECT f, y FROM drift_rows WHERE id <= 600') AS d;

-- other rows of the same process, a one-column query, NULL arrays skipped
SELECT round((d->>'statistic')::numeric, 6) AS statistic, round((d->>'p_value')::numeric, 6) AS p_value,
       d->'n_new' AS n_new, d->'new_rows_skipped' AS skipped
FROM kernel_model_drift('drift_exact',
  'SELECT CASE WHEN id % 100 = 0 THEN NULL ELSE f END FROM drift_rows WHERE id > 600;') AS d;

-- a shift in the first feature is found by every basis
SELECT m AS model, (d->>'p_value')::float8 < 0.01 AS drifted, d->>'basis' AS basis, d->'dof' AS dof
FROM unnest(ARRAY['drift_exact', 'drift_nys', 'drift_rff']) AS m,
     kernel_model_drift(m, 'SELECT ARRAY[f[1] + 0.3, f[2], f[3]] FROM drift_rows') AS d;

-- the rows of nystrom and rff models themselves: statistic 0
SELECT m AS model, (d->>'statistic')::float8 AS statistic, d->'n_train' AS n_train
FROM unnest(ARRAY['drift_nys', 'drift_rff']) AS m,
     kernel_model_drift(m, 'SELECT f FROM drift_rows') AS d;

-- errors
SELECT kernel_model_drift('drift_none', 'SELECT f FROM drift_rows');
SELECT kernel_model_drift('drift_exact', 'SELECT f[1:2] FROM drift_rows');
SELECT kernel_model_drift('drift_exact', 'SELECT f FROM drift_rows WHERE false');
SELECT kernel_model_drift('drift_exact', 'SELECT NULL::float8[] FROM drift_rows');
SELECT kernel_model_drift('drift_exact', 'SELECT f FROM drift_rows WHERE id = 1');
SELECT kernel_model_drift('drift_exact', 'SELECT ARRAY[1, NULL, 3]::float8[]');
SELECT kernel_model_drift('drift_exact', 'SELECT ARRAY[1, ''NaN'', 3]::float8[]');
SELECT kernel_model_drift('drift_exact', 'SELECT ''x''::text');
SELECT kernel_model_drift('drift_exact', NULL) IS NULL AS strict;
SELECT * FROM kernel_model_retrain('drift_exact', '{"when": "sometimes"}');
SELECT * FROM kernel_model_retrain('drift_exact', '{"when": "drifted", "alpha": 0}');
SELECT * FROM kernel_model_retrain('drift_exact', '{"when": "drifted", "alpha": "0.01"}');
SELECT * FROM kernel_model_retrain('drift_exact', '{"when": "drifted", "alpah": 0.01}');
SELECT * FROM kernel_model_retrain('drift_exact', '{"alpha": 0.05}');
SELECT * FROM kernel_model_retrain('drift_exact', '["when", "drifted"]');
SELECT * FROM kernel_model_retrain('drift_exact', NULL);
SELECT * FROM kernel_model_retrain('drift_none', '{"when": "drifted"}');

-- the same, by SQLSTATE
SELECT q, pg_temp.outcome(q) FROM (VALUES
  ($$SELECT kernel_model_drift('drift_none', 'SELECT f FROM drift_rows')$$),
  ($$SELECT kernel_model_drift('drift_exact', 'SELECT f[1:2] FROM drift_rows')$$),
  ($$SELECT kernel_model_drift('drift_exact', 'SELECT f FROM drift_rows WHERE false')$$),
  ($$SELECT kernel_model_drift('drift_exact', 'SELECT f FROM drift_rows WHERE id = 1')$$),
  ($$SELECT * FROM kernel_model_retrain('drift_exact', '{"when": "drifted", "alpha": 1}')$$),
  ($$SELECT * FROM kernel_model_retrain('drift_exact', '{"when": "drifted", "alpah": 0.01}')$$),
  ($$SELECT * FROM kernel_model_retrain('drift_exact', NULL)$$)) AS t (q);

-- the query runs in a security-restricted operation, as the caller
CREATE FUNCTION pg_temp.drift_sneaky() RETURNS float8[] LANGUAGE plpgsql AS $$
BEGIN
  CREATE TEMP TABLE drift_sneaked (x int);
  RETURN ARRAY[0, 0, 0]::float8[];
END $$;
SELECT kernel_model_drift('drift_exact', 'SELECT pg_temp.drift_sneaky()');

-- retrain only on drift: nothing changed, so nothing is stored (a NOTICE says why)
SELECT * FROM kernel_model_retrain('drift_rff', '{"when": "drifted", "alpha": 0.01}');
SELECT count(*) AS versions FROM kernel_models WHERE name = 'drift_rff';

-- the rows the stored query returns move: retrained, the test in metrics->'retrain'
UPDATE drift_rows SET f[1] = f[1] + 0.3 WHERE id % 2 = 0;
SELECT version, r->'from_version' AS from_version, r->'drift'->'drifted' AS drifted,
       r->'drift'->'alpha' AS alpha, (r->'drift'->>'p_value')::float8 < 1e-6 AS small_p
FROM kernel_model_retrain('drift_rff', '{"when": "drifted", "alpha": 0.01}'),
     LATERAL (SELECT metrics->'retrain') AS m (r);
-- the new version recorded the new rows: no drift against them
SELECT version, drift_reference IS NOT NULL AS has_reference FROM kernel_models WHERE name = 'drift_rff' ORDER BY version;
SELECT * FROM kernel_model_retrain('drift_rff', '{"when": "drifted"}');
-- "when": "always" is kernel_model_retrain(name)
SELECT version, metrics->'retrain'->'drift' AS drift FROM kernel_model_retrain('drift_rff', '{"when": "always"}');

-- a crafted reference (only the catalog's owner or a superuser can write one)
UPDATE kernel_models SET drift_reference = '\x00' WHERE name = 'drift_exact';
SELECT kernel_model_drift('drift_exact', 'SELECT f FROM drift_rows');
UPDATE kernel_models SET drift_reference = '\x4b4d4452010001030a00000003000000'::bytea || decode(repeat('00', 60), 'hex') WHERE name = 'drift_exact';
SELECT kernel_model_drift('drift_exact', 'SELECT f FROM drift_rows');
UPDATE kernel_models SET drift_reference = overlay(drift_reference PLACING '\xff'::bytea FROM 100)
WHERE name = 'drift_nys';
SELECT pg_temp.outcome($$SELECT kernel_model_drift('drift_nys', 'SELECT f FROM drift_rows')$$);

-- a version without a reference (trained before 0.4.0)
UPDATE kernel_models SET drift_reference = NULL WHERE name = 'drift_exact';
SELECT kernel_model_drift('drift_exact', 'SELECT f FROM drift_rows');
SELECT * FROM kernel_model_retrain('drift_exact', '{"when": "drifted"}');

SELECT kernel_model_drop(m) FROM unnest(ARRAY['drift_exact', 'drift_nys', 'drift_rff']) AS m;
DROP TABLE drift_rows;
