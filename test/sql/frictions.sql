-- Frictions of issue 30, section 4: the messages a newcomer meets.
SET extra_float_digits = 0;

CREATE TABLE fr AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i)]::float8[] AS f,
       sin(i) + 0.5 * cos(0.7 * i) AS y
FROM generate_series(1, 40) i;

-- 7. scikit-learn's names are refused with their translation; typos of a
-- key or of any enumerated value get the closest spelling.
SELECT kernel_train(f, y, '{"C": 10}') FROM fr;
SELECT kernel_train(f, y, '{"alpha": 0.1}') FROM fr;
SELECT kernel_train(f, y, '{"n_components": 100}') FROM fr;
SELECT kernel_train(f, y, '{"random_state": 7}') FROM fr;
SELECT kernel_train(f, y, '{"lamda": 0.1}') FROM fr;
SELECT kernel_train(f, y, '{"Gamma": 0.5}') FROM fr;
SELECT kernel_train(f, y, '{"epsilom": 0.1}') FROM fr;
SELECT kernel_train(f, y, '{"xyz": 1}') FROM fr;
SELECT kernel_train(f, y, '{"kernel": "RBF"}') FROM fr;
SELECT kernel_train(f, y, '{"kernel": "polynomial"}') FROM fr;
SELECT kernel_train(f, y, '{"method": "SVC"}') FROM fr;
SELECT kernel_train(f, y, '{"method": "rige"}') FROM fr;
SELECT kernel_train(f, y, '{"approximation": "nystroem"}') FROM fr;
SELECT kernel_train(f, y, '{"approximation": "RBFSampler"}') FROM fr;
SELECT kernel_train(f, y, '{"cv": "LOO"}') FROM fr;
SELECT kernel_train(f, y, '{"gamma": "scale"}') FROM fr;
SELECT kernel_train(f, y, '{"lambda": "Auto"}') FROM fr;
SELECT kernel_train(f, y::text, '{"solver": "smoo"}') FROM fr;
SELECT kernel_train(f, y::text, '{"class_weight": "balance"}') FROM fr;
SELECT kernel_model_train('fr_typo', 'SELECT f, y FROM fr', '{"deploy": "alway"}');

-- 8. Every function that takes a model as bytea has its by-name twin, with
-- the read check of scoring by name; a quoted name resolves to it.
SELECT name, version FROM kernel_model_train('fr_cls', 'SELECT f, (y > 0)::text FROM fr', '{"method": "logistic"}');
SELECT round(kernel_predict_proba('fr_cls', ARRAY[0.5, 0.5], 'true')::numeric, 6) AS by_name,
       round(kernel_predict_proba(kernel_model_get('fr_cls'), ARRAY[0.5, 0.5], 'true')::numeric, 6) AS by_bytea;
SELECT kernel_model_info('fr_cls') = kernel_model_info(kernel_model_get('fr_cls')) AS info_same,
       kernel_model_export('fr_cls') = kernel_model_export(kernel_model_get('fr_cls')) AS export_same,
       kernel_model_info('fr_cls')->>'method' AS method;
SELECT kernel_predict_proba('fr_cls', ARRAY[0.5, 0.5], 'maybe');
SELECT kernel_model_info('fr_nosuch');
SELECT p.oid::regprocedure AS bytea_form_without_twin
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'kernel_ml'
WHERE p.proargtypes[0] = 'bytea'::regtype AND p.prokind = 'f'
  AND p.proname !~ '(sfunc|combine|final|deserialize|basis_info)$'
  AND NOT EXISTS (SELECT 1 FROM pg_proc t WHERE t.proname = p.proname
                  AND t.proargtypes[0] = 'text'::regtype
                  AND t.pronargs = p.pronargs
                  AND (t.pronargs = 1 OR t.proargtypes[1:] = p.proargtypes[1:]))
ORDER BY 1;
CREATE ROLE regress_fr_reader;
SET ROLE regress_fr_reader;
\set VERBOSITY terse
SELECT kernel_model_info('fr_cls');
SELECT kernel_model_export('fr_cls');
\set VERBOSITY default
RESET ROLE;
DROP ROLE regress_fr_reader;
SELECT kernel_model_drop('fr_cls');

-- 9. One meaning per word: n_train is the rows fitted (as in kernel_models),
-- n_support the rows an exact classifier keeps, n_centers Nystrom's; C beside
-- lambda for the methods of libsvm's C (C = 1 / (n_train lambda)).
SELECT i->'method' AS method, i->'n_train' AS n_train, i->'n_support' AS n_support,
       i->'n_centers' AS n_centers, i->'components' AS components,
       i->'lambda' AS lambda, round((i->>'C')::numeric, 6) AS c
FROM (SELECT 1 AS k, kernel_model_info(kernel_train(f, (y > 0)::text)) AS i FROM fr
      UNION ALL SELECT 2, kernel_model_info(kernel_train(f, (y > 0)::text, '{"lambda": 0.005}')) FROM fr
      UNION ALL SELECT 3, kernel_model_info(kernel_train(f, y, '{"method": "svr"}')) FROM fr
      UNION ALL SELECT 4, kernel_model_info(kernel_train(f, y)) FROM fr
      UNION ALL SELECT 5, kernel_model_info(kernel_train(f, y, '{"approximation": "nystrom", "components": 10}')) FROM fr
      UNION ALL SELECT 6, kernel_model_info(kernel_train(f, y, '{"approximation": "rff", "components": 10}')) FROM fr) s
ORDER BY k;
SELECT name, version FROM kernel_model_train('fr_svm', 'SELECT f, (y > 0)::text FROM fr', '{"test_fraction": 0.25}');
SELECT m.n_train AS catalog_n_train, (kernel_model_info('fr_svm')->>'n_train')::int AS info_n_train
FROM kernel_models m WHERE m.name = 'fr_svm';
SELECT kernel_model_drop('fr_svm');

-- 1. Exact training beyond the memory limit: the first message gives the
-- whole need of the whole input (the rows past the limit are counted, not
-- kept), and leads with "approximation" when no setting could hold it.
-- 3,000 rows of 2 features: 8 (n^2 + 3 n d + 8 n) + 24 n bytes = 69.1 MB.
SET kernel_ml.max_memory = '8MB';
SELECT kernel_train(ARRAY[i::float8, sin(i)], cos(i)) FROM generate_series(1, 3000) i;
SET kernel_ml.max_memory = '63MB';
SELECT kernel_train(ARRAY[i::float8, sin(i)], cos(i)) IS NOT NULL AS trained FROM generate_series(1, 3000) i;
SET kernel_ml.max_memory = '70MB';
SELECT kernel_train(ARRAY[i::float8, sin(i)], cos(i)) IS NOT NULL AS trained FROM generate_series(1, 3000) i;
SET kernel_ml.max_memory = '8MB';
-- 200,000 rows: about 298 GB, beyond any setting (the end of the hint names
-- this server's memory or the ceiling)
DO $$
DECLARE d text; h text;
BEGIN
  PERFORM kernel_train(ARRAY[i::float8, sin(i)], cos(i)) FROM generate_series(1, 200000) i;
EXCEPTION WHEN program_limit_exceeded THEN
  GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
  RAISE NOTICE '%', d;
  RAISE NOTICE '%', left(h, 130);
END $$;
RESET kernel_ml.max_memory;

-- 2. An integer target of 3 to 20 distinct whole values (a class code such
-- as Glass's types) is still a regression without "method", with a NOTICE,
-- as for two values; by name too.  21 values, or "method", are quiet.
SELECT kernel_train(f, (id % 6 + 1)::int) IS NOT NULL AS trained FROM fr;
SELECT kernel_train(f, (id % 2)::int) IS NOT NULL AS trained FROM fr;
SELECT kernel_train(f, (id % 21)::int) IS NOT NULL AS trained FROM fr;
SELECT kernel_train(f, (id % 6 + 1)::int, '{"method": "ridge"}') IS NOT NULL AS trained FROM fr;
SELECT name, metrics->>'task' AS task FROM kernel_model_train('fr_codes', 'SELECT f, (id % 6 + 1)::int FROM fr');
SELECT kernel_model_drop('fr_codes');
-- a bytea written as a quoted literal now reads as a name, with a hint
SELECT kernel_model_info('\x00');

-- 3. One inference of the task from the label column's type for both
-- surfaces: the same label types and options give the same method (or the
-- same error) by aggregate and by name; a boolean label is class labels by
-- name too.
CREATE TABLE fr_labels AS SELECT f, (y > 0)::int AS lbl FROM fr;
CREATE FUNCTION fr_outcome(surface text, typ text, opts jsonb) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  m bytea;
  r text;
BEGIN
  IF surface = 'aggregate' THEN
    EXECUTE format('SELECT kernel_train(f, lbl::%s, $1) FROM fr_labels', typ) INTO m USING opts;
    r := kernel_model_info(m)->>'method';
  ELSE
    PERFORM kernel_model_train('fr_m', format('SELECT f, lbl::%s FROM fr_labels', typ), opts);
    r := kernel_model_info(kernel_model_get('fr_m'))->>'method';
    PERFORM kernel_model_drop('fr_m');
  END IF;
  RETURN r;
EXCEPTION WHEN others THEN
  RETURN 'ERROR: ' || SQLERRM;
END $$;
SET client_min_messages = warning;
SELECT typ, opts, fr_outcome('aggregate', typ, opts) AS by_aggregate,
       fr_outcome('name', typ, opts) = fr_outcome('aggregate', typ, opts) AS same_by_name
FROM unnest(ARRAY['float8', 'int', 'text', 'boolean']) WITH ORDINALITY t(typ, i),
     unnest(ARRAY['{}', '{"probability": true}', '{"class_weight": "balanced"}',
                  '{"method": "ridge"}', '{"method": "logistic"}',
                  '{"approximation": "nystrom", "components": 8, "class_weight": "balanced"}']::jsonb[]) WITH ORDINALITY o(opts, j)
ORDER BY i, j;
RESET client_min_messages;
