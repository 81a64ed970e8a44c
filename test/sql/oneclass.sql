-- one-class SVM ("method": "oneclass", libsvm's nu one-class SVM as
-- scikit-learn's OneClassSVM) through kernel_fit: decision values against
-- scikit-learn's, inlier / outlier, kernel_model_info, nystrom and rff,
-- option errors, crafted models
SET extra_float_digits = 0;

-- the SQLSTATE and message a statement ends with
CREATE FUNCTION pg_temp.outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

-- 60 rows on a curve and 3 far outliers, d = 2
CREATE TABLE oc_rows AS
SELECT i AS id, ARRAY[sin(i * 1.3) * 1.5, cos(i * 0.7) + (i % 7) / 7.0]::float8[] AS f
FROM generate_series(1, 60) i
UNION ALL VALUES (61, '{6,6}'::float8[]), (62, '{-5,4}'), (63, '{5,-6}');

-- scikit-learn's OneClassSVM(nu, gamma = 0.5, tol = 1e-6) on the rows
-- standardized (population scale), decision_function of six new rows:
--   (X - X.mean(0)) / X.std(0), OneClassSVM(...).fit(Xs).decision_function((T - mu) / sd)
CREATE TABLE oc_ref (nu float8, id int, f float8[], sk float8);
INSERT INTO oc_ref VALUES
  (0.2, 1, '{0,0}', 0.8729850191), (0.2, 2, '{1,1}', 0.4016046512),
  (0.2, 3, '{-1,0.5}', 0.5133148749), (0.2, 4, '{6,6}', -2.8869519395),
  (0.2, 5, '{3,-3}', -3.457916896), (0.2, 6, '{0.5,-0.5}', 0.5922746496),
  (0.5, 1, '{0,0}', 2.2678044367), (0.5, 2, '{1,1}', 0.636851902),
  (0.5, 3, '{-1,0.5}', 1.5103153379), (0.5, 4, '{6,6}', -12.6229578649),
  (0.5, 5, '{3,-3}', -12.7561616916), (0.5, 6, '{0.5,-0.5}', 0.5087512025);

-- nu 0.2 and the default nu 0.5; gamma 0.5 = 1 / d is the default (scikit-learn's 'scale')
CREATE TABLE oc_models AS
SELECT 'nu02' AS name, kernel_fit(f, '{"method": "oneclass", "nu": 0.2, "tol": 1e-6}') AS model FROM oc_rows
UNION ALL
SELECT 'nu05', kernel_fit(f, '{"method": "oneclass", "tol": 1e-6}') FROM oc_rows;
SELECT name, i->>'method' AS method, i->>'task' AS task, i->'nu' AS nu, i->'gamma' AS gamma,
       i->'tol' AS tol, i->'converged' AS converged, i->'n_support' AS n_support,
       i->'n_train' AS n_train, i->'rows_seen' AS rows_seen,
       round((i->>'intercept')::numeric, 4) AS intercept
FROM (SELECT name, kernel_model_info(model) AS i FROM oc_models) s ORDER BY name;

-- decision values within 1e-3 relative to scikit-learn's largest, the same labels
SELECT r.nu, r.id, round(kernel_predict(m.model, r.f)::numeric, 4) AS decision,
       round(r.sk::numeric, 4) AS sklearn,
       abs(kernel_predict(m.model, r.f) - r.sk) <= 1e-3 * max(abs(r.sk)) OVER (PARTITION BY r.nu) AS close,
       kernel_predict_class(m.model, r.f) AS class
FROM oc_ref r JOIN oc_models m ON m.name = CASE r.nu WHEN 0.2 THEN 'nu02' ELSE 'nu05' END
ORDER BY r.nu, r.id;

-- many rows in one call: the same values within 1e-12 (another summation
-- order, as matrix_scoring), the same classes
SELECT m.name,
       (SELECT max(abs(p - v)) / max(abs(v)) FROM unnest(kernel_predict_matrix(m.model, r.x), r.v) u(p, v)) < 1e-12
         AS same_values,
       kernel_predict_class_matrix(m.model, r.x) AS classes
FROM oc_models m,
     LATERAL (SELECT array_agg(kernel_predict(m.model, f) ORDER BY id) AS v,
                     ('{' || string_agg(f::text, ',' ORDER BY id) || '}')::float8[] AS x
              FROM oc_ref WHERE nu = 0.2) r
ORDER BY m.name;

-- the training rows: at most a fraction nu outliers, at least nu support vectors
SELECT m.name, count(*) FILTER (WHERE kernel_predict_class(m.model, r.f) = 'outlier') AS outliers,
       count(*) AS n
FROM oc_models m, oc_rows r GROUP BY m.name ORDER BY m.name;

-- nystrom with every row a centre is the exact model; rff is close
SELECT o.name, max(abs(kernel_predict(o.model, r.f) - kernel_predict(e.model, r.f))) < 1e-6 AS nystrom_is_exact
FROM (SELECT 'nu02' AS name, kernel_fit(f, '{"method": "oneclass", "nu": 0.2, "tol": 1e-6,
        "approximation": "nystrom", "components": 100}') AS model FROM oc_rows) o
JOIN oc_models e USING (name), oc_ref r GROUP BY o.name;
SELECT i->>'approximation' AS approximation, i->'components' AS components, i->'nu' AS nu,
       i->'converged' AS converged,
       (SELECT count(*) FROM oc_ref r WHERE r.nu = 0.2 AND
        (kernel_predict(model, r.f) > 0) = (r.sk > 0)) AS labels_as_exact
FROM (SELECT model, kernel_model_info(model) AS i FROM
      (SELECT kernel_fit(f, '{"method": "oneclass", "nu": 0.2, "approximation": "rff",
               "components": 200, "seed": 3}') AS model FROM oc_rows) s) t;

-- a named model: a one-column query, every row fitted; the by-name verbs are the bytea model's
SELECT name, version, deployed FROM kernel_model_train('oc_named', 'SELECT f FROM oc_rows',
                                                      '{"method": "oneclass", "nu": 0.2, "tol": 1e-6}');
SELECT r.id, kernel_predict('oc_named', r.f) = kernel_predict(m.model, r.f) AS same_decision,
       kernel_predict_class('oc_named', r.f) AS class
FROM oc_ref r, oc_models m WHERE r.nu = 0.2 AND m.name = 'nu02' ORDER BY r.id;
SELECT kernel_model_drop('oc_named');

-- options: nu in (0, 1], a method-own key; nu = 1 keeps every row (rho: the largest K a)
SELECT pg_temp.outcome(format('SELECT kernel_fit(f, %L) FROM oc_rows', o)) AS outcome
FROM (VALUES ('{"method": "oneclass", "nu": 0}'), ('{"method": "oneclass", "nu": 1.5}'),
             ('{"method": "oneclass", "nu": "half"}'), ('{"method": "pca", "nu": 0.5}'),
             ('{"method": "oneclass", "dimensions": 2}'),
             ('{"method": "oneclass", "max_iter": 3}')) v(o);
SELECT (i->>'n_support')::int AS n_support, (SELECT count(*) FROM oc_rows r
        WHERE kernel_predict(model, r.f) > 1e-9) AS inside
FROM (SELECT model, kernel_model_info(model) AS i FROM
      (SELECT kernel_fit(f, '{"method": "oneclass", "nu": 1}') AS model FROM oc_rows) s) t;

-- a target, a classifier's verbs, the transform verb
SELECT pg_temp.outcome('SELECT kernel_train(f, 1.0, ''{"method": "oneclass"}'') FROM oc_rows') AS train;
SELECT pg_temp.outcome(format('SELECT kernel_predict_proba(%L::bytea, ''{0,0}'')', model)) AS proba,
       pg_temp.outcome(format('SELECT kernel_transform(%L::bytea, ''{0,0}'')', model)) AS transform
FROM oc_models WHERE name = 'nu02';

-- crafted models: the METHOD section's fields changed, every checksum fixed
-- up, are refused by the field's rule (22P03), never predicted
CREATE FUNCTION pg_temp.crc32c(b bytea) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  c bigint := 4294967295;
BEGIN
  FOR i IN 0 .. length(b) - 1 LOOP
    c := c # get_byte(b, i);
    FOR k IN 1 .. 8 LOOP
      IF c & 1 = 1 THEN c := (c >> 1) # 2197175160; ELSE c := c >> 1; END IF;
    END LOOP;
  END LOOP;
  RETURN c # 4294967295;
END $$;
CREATE FUNCTION pg_temp.put_u32(b bytea, at int, v bigint) RETURNS bytea LANGUAGE sql AS $$
  SELECT set_byte(set_byte(set_byte(set_byte(b, at, (v & 255)::int), at + 1, ((v >> 8) & 255)::int),
                  at + 2, ((v >> 16) & 255)::int), at + 3, ((v >> 24) & 255)::int)
$$;
CREATE FUNCTION pg_temp.get_u32(b bytea, at int) RETURNS bigint LANGUAGE sql AS $$
  SELECT get_byte(b, at)::bigint + (get_byte(b, at + 1)::bigint << 8) +
         (get_byte(b, at + 2)::bigint << 16) + (get_byte(b, at + 3)::bigint << 24)
$$;
CREATE FUNCTION pg_temp.payload_at(b bytea, tag int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  at int := 80;
BEGIN
  WHILE at < length(b) LOOP
    IF get_byte(b, at) + (get_byte(b, at + 1) << 8) = tag THEN RETURN at + 12; END IF;
    at := at + 12 + pg_temp.get_u32(b, at + 4)::int + 4;
  END LOOP;
  RETURN NULL;
END $$;
CREATE FUNCTION pg_temp.fix_crcs(b bytea) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE
  at int := 80;
  len int;
BEGIN
  WHILE at < length(b) LOOP
    len := pg_temp.get_u32(b, at + 4)::int;
    b := pg_temp.put_u32(b, at + 12 + len, pg_temp.crc32c(substring(b from at + 1 for 12 + len)));
    at := at + 12 + len + 4;
  END LOOP;
  RETURN pg_temp.put_u32(b, 76, pg_temp.crc32c(substring(b from 1 for 76)));
END $$;
CREATE FUNCTION pg_temp.outcome_detail(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  d text;
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
  RETURN SQLSTATE || ' ' || SQLERRM || ': ' || d;
END $$;
-- the METHOD section (tag 3) of oneclass: nu, tol (f64), max_iter, iterations
-- (i32), converged (one byte), n_support (u32), objective (f64)
SELECT pg_temp.get_u32(model, pg_temp.payload_at(model, 3) - 8) AS method_section_bytes,
       pg_temp.fix_crcs(model) = model AS crcs_reproduced
FROM oc_models WHERE name = 'nu02';
SELECT what, pg_temp.outcome_detail(format('SELECT kernel_predict(%L::bytea, ''{0,0}'')', crafted)) AS outcome
FROM oc_models m,
     LATERAL (SELECT pg_temp.payload_at(m.model, 3) AS p) s,
     LATERAL (VALUES
       ('unchanged', pg_temp.fix_crcs(m.model)),
       ('nu 1', pg_temp.fix_crcs(overlay(m.model placing '\x000000000000f03f'::bytea from s.p + 1 for 8))),
       ('nu 2', pg_temp.fix_crcs(overlay(m.model placing '\x0000000000000040'::bytea from s.p + 1 for 8))),
       ('nu < 0 (sign bit)', pg_temp.fix_crcs(set_byte(m.model, s.p + 7, get_byte(m.model, s.p + 7) | 128))),
       ('nu NaN', pg_temp.fix_crcs(set_byte(set_byte(m.model, s.p + 7, 127), s.p + 6, 255))),
       ('converged 2', pg_temp.fix_crcs(set_byte(m.model, s.p + 24, 2))),
       ('objective < 0', pg_temp.fix_crcs(set_byte(m.model, s.p + 36, get_byte(m.model, s.p + 36) | 128))),
       ('a byte flipped', set_byte(m.model, s.p + 2, get_byte(m.model, s.p + 2) # 1))
     ) v(what, crafted)
WHERE m.name = 'nu05';
-- the header's task and method bytes (16, 17) swapped for another's, its
-- checksum fixed up: the sections no longer fit, refused with 22P03
SELECT what, pg_temp.outcome_detail(format('SELECT kernel_predict(%L::bytea, ''{0,0}'')', crafted)) AS outcome
FROM oc_models m,
     LATERAL (VALUES
       ('task 1 (regression)', pg_temp.fix_crcs(set_byte(m.model, 16, 1))),
       ('task 3 (transform)', pg_temp.fix_crcs(set_byte(m.model, 16, 3))),
       ('task 5 (none)', pg_temp.fix_crcs(set_byte(m.model, 16, 5))),
       ('method 5 (svr)', pg_temp.fix_crcs(set_byte(m.model, 17, 5))),
       ('method 6 (pca)', pg_temp.fix_crcs(set_byte(m.model, 17, 6)))
     ) v(what, crafted)
WHERE m.name = 'nu05';

DROP TABLE oc_rows, oc_ref, oc_models;
