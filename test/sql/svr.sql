-- epsilon-SVR ("method": "svr", libsvm's epsilon-SVR as scikit-learn's SVR):
-- training, scoring, kernel_model_info, selection, named models, option
-- errors, a crafted model
SET extra_float_digits = 0;

-- the SQLSTATE and message a statement ends with
CREATE FUNCTION pg_temp.outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

CREATE TABLE svr_rows AS
SELECT i AS id, ARRAY[sin(0.37 * i), cos(0.11 * i), (i % 7) / 7.0]::float8[] AS f,
       3 * sin(0.37 * i) + (i % 7) * 0.5 + 10 AS y
FROM generate_series(1, 120) i;

-- the defaults: C = 1 (lambda 1 / n), epsilon 0.1, tol 1e-3, libsvm's iteration limit
CREATE TABLE svr_models AS
SELECT 'default' AS name, kernel_train(f, y, '{"method": "svr"}') AS model FROM svr_rows;
SELECT i->>'method' AS method, i->>'task' AS task, (i->>'lambda')::float8 * 120 AS lambda_times_n,
       i->'epsilon' AS epsilon, i->'tol' AS tol, i->'max_iter' AS max_iter,
       i->'converged' AS converged, (i->>'iterations')::int > 0 AS iterated,
       i->'n_support' AS n_support, round((i->>'gamma')::numeric, 4) AS gamma,
       round((i->>'intercept')::numeric, 4) AS intercept,
       round((i->>'train_rmse')::numeric, 4) AS train_rmse
FROM (SELECT kernel_model_info(model) AS i FROM svr_models WHERE name = 'default') s;

-- its own options and shared ones, at a fixed gamma
INSERT INTO svr_models
SELECT 'fixed', kernel_train(f, y, '{"method": "svr", "epsilon": 0.2, "lambda": 0.001, "gamma": 0.5, "tol": 1e-6}')
FROM svr_rows;
SELECT i->'lambda' AS lambda, i->'epsilon' AS epsilon, i->'tol' AS tol, i->'gamma' AS gamma,
       i->'n_support' AS n_support, round((i->>'train_rmse')::numeric, 4) AS train_rmse
FROM (SELECT kernel_model_info(model) AS i FROM svr_models WHERE name = 'fixed') s;

-- kernel_predict scores it: a few rows, and no prediction leaves the tube
-- by more than the training error allows
SELECT r.id, round(kernel_predict(m.model, r.f)::numeric, 4) AS pred, round(r.y::numeric, 4) AS y
FROM svr_rows r, svr_models m WHERE m.name = 'fixed' AND r.id IN (1, 2, 60, 120) ORDER BY r.id;
SELECT count(*) AS rows, count(*) FILTER (WHERE p = 'NaN'::float8) AS nan,
       max(abs(p - y)) < 0.5 AS close
FROM (SELECT kernel_predict(m.model, r.f) AS p, r.y
      FROM svr_rows r, svr_models m WHERE m.name = 'fixed') s;

-- translation-equivariant: the target shifted by 1000 gives every prediction shifted by 1000
SELECT max(abs(kernel_predict(a.model, r.f) + 1000 - kernel_predict(b.model, r.f))) < 1e-6 AS shifted
FROM svr_rows r, svr_models a,
     (SELECT kernel_train(f, y + 1000, '{"method": "svr", "epsilon": 0.2, "lambda": 0.001, "gamma": 0.5, "tol": 1e-6}') AS model
      FROM svr_rows) b
WHERE a.name = 'fixed';

-- a wide tube: no row outside it, every coefficient 0, every prediction is the bias b
SELECT i->'n_support' AS n_support, round((i->>'intercept')::numeric, 4) AS intercept
FROM (SELECT kernel_model_info(kernel_train(f, y, '{"method": "svr", "epsilon": 100}')) AS i FROM svr_rows) s;

-- grid selection by k-fold (MSE) over lambda and gamma
SELECT i->'lambda' AS lambda, i->'gamma' AS gamma, i->'selection'->'cv' AS cv,
       i->'selection'->'folds' AS folds, i->'selection'->'score' AS score,
       jsonb_array_length(i->'selection'->'candidates') AS candidates,
       i->'selection'->'best' AS best,
       (SELECT bool_and((c->>'score')::float8 >= ((i->'selection'->'candidates'->((i->'selection'->>'best')::int))->>'score')::float8)
        FROM jsonb_array_elements(i->'selection'->'candidates') c) AS best_is_lowest
FROM (SELECT kernel_model_info(kernel_train(f, y, '{"method": "svr", "lambda": [0.0001, 0.01, 1], "gamma": [0.05, 0.5], "cv": 4}')) AS i
      FROM svr_rows) s;
-- a grid without cv: k-fold, 5 folds
SELECT i->'selection'->'cv' AS cv, i->'selection'->'folds' AS folds
FROM (SELECT kernel_model_info(kernel_train(f, y, '{"method": "svr", "gamma": [0.1, 1]}')) AS i FROM svr_rows) s;

-- approximate: LIBLINEAR's L2-loss epsilon-SVR in the primal on nystrom
-- centres or random Fourier features, by Newton passes over the rows
INSERT INTO svr_models
SELECT 'nystrom', kernel_train(f, y, '{"method": "svr", "approximation": "nystrom", "components": 40, "gamma": 0.5, "tol": 1e-10}')
FROM svr_rows;
INSERT INTO svr_models
SELECT 'rff', kernel_train(f, y, '{"method": "svr", "approximation": "rff", "components": 60, "gamma": 0.5, "epsilon": 0.3, "seed": 5}')
FROM svr_rows;
SELECT name, i->'approximation' AS approximation, i->'n_train' AS n_train, i->'rank' AS rank,
       (i->>'lambda')::float8 * 120 AS lambda_times_n, i->'epsilon' AS epsilon, i->'tol' AS tol,
       i->'max_iter' AS max_iter, i->'converged' AS converged, (i->>'iterations')::int BETWEEN 1 AND 50 AS steps_ok,
       i->'n_support' AS outside_tube, round((i->>'train_rmse')::numeric, 4) AS train_rmse
FROM (SELECT name, kernel_model_info(model) AS i FROM svr_models WHERE name IN ('nystrom', 'rff')) s ORDER BY name;
SELECT m.name, round(kernel_predict(m.model, r.f)::numeric, 4) AS pred, round(r.y::numeric, 4) AS y
FROM svr_rows r, svr_models m WHERE m.name IN ('nystrom', 'rff') AND r.id IN (1, 60) ORDER BY m.name, r.id;
-- the same translation equivariance (the intercept is not penalized)
SELECT max(abs(kernel_predict(a.model, r.f) + 1000 - kernel_predict(b.model, r.f))) < 1e-6 AS shifted
FROM svr_rows r, svr_models a,
     (SELECT kernel_train(f, y + 1000, '{"method": "svr", "approximation": "nystrom", "components": 40, "gamma": 0.5, "tol": 1e-10}') AS model
      FROM svr_rows) b
WHERE a.name = 'nystrom';
-- "fit_intercept": false: approximate svr fits no bias (b = 0, as
-- approximate ridge), so its fit no longer follows a shift of the target
SELECT (i->>'intercept')::float8 AS intercept, i->'fit_intercept' AS fit_intercept
FROM (SELECT kernel_model_info(kernel_train(f, y, '{"method": "svr", "approximation": "rff", "components": 60, "gamma": 0.5, "fit_intercept": false}')) AS i
      FROM svr_rows) s;
SELECT max(abs(kernel_predict(a.model, r.f) + 1000 - kernel_predict(b.model, r.f))) > 100 AS not_shifted
FROM svr_rows r,
     (SELECT kernel_train(f, y, '{"method": "svr", "approximation": "nystrom", "components": 40, "gamma": 0.5, "fit_intercept": false}') AS model
      FROM svr_rows) a,
     (SELECT kernel_train(f, y + 1000, '{"method": "svr", "approximation": "nystrom", "components": 40, "gamma": 0.5, "fit_intercept": false}') AS model
      FROM svr_rows) b;
-- approximate svr selects lambda and gamma by k-fold over row-hash folds,
-- scored by the held-out MSE and recorded as the exact path records it;
-- the refit on every row is the winner's model
CREATE TEMP TABLE svr_sel AS
SELECT kernel_train(f, y, '{"method": "svr", "approximation": "nystrom", "components": 30, "lambda": [0.0001, 0.01, 1], "gamma": [0.1, 1]}') AS model
FROM svr_rows;
SELECT i->'selection'->'cv' AS cv, i->'selection'->'folds' AS folds, i->'selection'->'score' AS score,
       jsonb_array_length(i->'selection'->'candidates') AS candidates,
       (SELECT bool_and((c->>'score')::float8 >= ((i->'selection'->'candidates'->((i->'selection'->>'best')::int))->>'score')::float8)
        FROM jsonb_array_elements(i->'selection'->'candidates') c) AS best_is_lowest,
       i->'lambda' = i->'selection'->'candidates'->((i->'selection'->>'best')::int)->'lambda' AS lambda_is_best,
       i->'gamma' = i->'selection'->'candidates'->((i->'selection'->>'best')::int)->'gamma' AS gamma_is_best
FROM (SELECT kernel_model_info(model) AS i FROM svr_sel) s;
SELECT max(abs(kernel_predict(s.model, r.f) - kernel_predict(w.model, r.f))) < 1e-9 AS refit_is_winner
FROM svr_rows r, svr_sel s,
     (SELECT kernel_train(f, y, jsonb_build_object('method', 'svr', 'approximation', 'nystrom', 'components', 30,
                                                   'lambda', i->'lambda', 'gamma', i->'gamma')) AS model
      FROM svr_rows, (SELECT kernel_model_info(model) AS i FROM svr_sel) q) w;
-- the rows in another order: the same model, bit for bit
SELECT md5(model) = (SELECT md5(kernel_train(f, y, '{"method": "svr", "approximation": "nystrom", "components": 30, "lambda": [0.0001, 0.01, 1], "gamma": [0.1, 1]}' ORDER BY id DESC))
                     FROM svr_rows) AS order_free
FROM svr_sel;
-- "cv": 3 with one lambda scores it; rff too
SELECT i->'selection'->'cv' AS cv, i->'selection'->'folds' AS folds,
       jsonb_array_length(i->'selection'->'candidates') AS candidates
FROM (SELECT kernel_model_info(kernel_train(f, y, '{"method": "svr", "approximation": "rff", "cv": 3}')) AS i FROM svr_rows) s;
-- named approximate svr (one lambda and gamma: by the learner's passes over the query, the cursor host)
SELECT name, version, deployed, metrics->'train_rows' AS train_rows,
       round((metrics->'holdout'->>'r2')::numeric, 2) AS holdout_r2
FROM kernel_model_train('svr_approx', 'SELECT f, y FROM svr_rows', '{"method": "svr", "approximation": "nystrom", "components": 40, "seed": 7}');
SELECT kernel_model_info(model)->'method' AS method, kernel_model_info(model)->'approximation' AS approximation
FROM kernel_models WHERE name = 'svr_approx';
SELECT kernel_model_drop('svr_approx');
-- ... and with a grid (k-fold over the training rows, in memory)
SELECT name, version, deployed, metrics->'train_rows' AS train_rows
FROM kernel_model_train('svr_approx_grid', 'SELECT f, y FROM svr_rows', '{"method": "svr", "approximation": "rff", "components": 30, "lambda": [0.001, 0.1], "seed": 7}');
SELECT i->'selection'->'cv' AS cv, jsonb_array_length(i->'selection'->'candidates') AS candidates
FROM (SELECT kernel_model_info(model) AS i FROM kernel_models WHERE name = 'svr_approx_grid') s;
SELECT kernel_model_drop('svr_approx_grid');

-- named models: trained by name, scored by name, deployed if better
SELECT name, version, deployed, metrics->'deploy'->>'reason' AS reason,
       metrics->'train_rows' AS train_rows, round((metrics->'holdout'->>'r2')::numeric, 2) AS holdout_r2
FROM kernel_model_train('svr_named', 'SELECT f, y FROM svr_rows', '{"method": "svr", "gamma": 0.5, "seed": 7}');
SELECT version, deployed, metrics->'deploy'->>'reason' AS reason
FROM kernel_model_train('svr_named', 'SELECT f, y FROM svr_rows', '{"method": "svr", "gamma": 0.5, "lambda": 10, "seed": 7}');
SELECT (kernel_model_info(model)->>'lambda')::float8 * 96 AS lambda_times_train_rows,
       kernel_model_info(model)->'method' AS method
FROM kernel_models WHERE name = 'svr_named' AND version = 1;
SELECT r.id, round(kernel_predict('svr_named', r.f)::numeric, 4) AS by_name,
       kernel_predict('svr_named', r.f) = kernel_predict(kernel_model_get('svr_named'), r.f) AS same
FROM svr_rows r WHERE r.id IN (1, 60) ORDER BY r.id;
SELECT kernel_model_drop('svr_named');

-- option errors
SELECT kernel_train(f, y, '{"method": "svr", "epsilon": -0.1}') FROM svr_rows;
SELECT kernel_train(f, y, '{"method": "svr", "epsilon": "wide"}') FROM svr_rows;
SELECT kernel_train(f, y, '{"epsilon": 0.1}') FROM svr_rows;
SELECT kernel_train(f, y, '{"method": "lms", "epsilon": 0.1}') FROM svr_rows;
SELECT kernel_train(f, y, '{"method": "svr", "learning_rate": 0.1}') FROM svr_rows;
SELECT kernel_train(f, y, '{"method": "svr", "cv": "loo", "lambda": [0.1, 1]}') FROM svr_rows;
SELECT kernel_train(f, y, '{"method": "svr", "lambda": 0}') FROM svr_rows;
SELECT kernel_train(f, y, '{"method": "svr", "approximation": "nystrom", "cv": "gcv", "lambda": [0.01, 0.1]}') FROM svr_rows;
SELECT kernel_train(f, y, '{"method": "lms", "approximation": "rff"}') FROM svr_rows;
-- the aggregate over a basis sums ridge's statistics: svr is refused, not trained as ridge
SELECT kernel_train(f, y, '{"method": "svr", "approximation": "rff"}',
                    (SELECT kernel_basis(f, '{"method": "svr", "approximation": "rff"}') FROM svr_rows))
FROM svr_rows;
-- and a classifier (float8 labels), whose primal Newton passes over the rows many times
SELECT kernel_train(f, y, '{"method": "logistic", "approximation": "rff"}',
                    (SELECT kernel_basis(f, '{"method": "logistic", "approximation": "rff"}') FROM svr_rows))
FROM svr_rows;
SELECT kernel_train(f, y::text, '{"method": "svr"}') FROM svr_rows;
-- exact svr's dual always fits b: "fit_intercept": false is refused (22023),
-- in one statement and by name, not ignored
SELECT kernel_train(f, y, '{"method": "svr", "fit_intercept": false}') FROM svr_rows;
\set VERBOSITY sqlstate
SELECT kernel_model_train('svr_noint', 'SELECT f, y FROM svr_rows', '{"method": "svr", "fit_intercept": false}');
\set VERBOSITY default
-- max_iter reached: an error with a hint, not an unconverged model
SELECT kernel_train(f, y, '{"method": "svr", "max_iter": 3}') FROM svr_rows;

-- a crafted SVR model: its METHOD section's fields changed, every checksum
-- fixed up, is refused by the field's rule (XX001 / 22P03), not predicted
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
-- the offset of section tag's payload (format 2: 80-byte header; a section is
-- tag u16, flags u16, length u64, payload, CRC-32C u32, little-endian)
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
-- every section's checksum and the header's, recomputed
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
-- the METHOD section (tag 3) of svr: lambda, epsilon, tol (f64), max_iter,
-- iterations (i32), converged (one byte), n_support (u32)
SELECT pg_temp.get_u32(model, pg_temp.payload_at(model, 3) - 8) AS method_section_bytes,
       pg_temp.fix_crcs(model) = model AS crcs_reproduced
FROM svr_models WHERE name = 'fixed';
-- the field changed and the outcome, with its detail
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
SELECT what, pg_temp.outcome_detail(format('SELECT kernel_predict(%L::bytea, ''{0.1,0.2,0.3}'')', crafted)) AS outcome
FROM svr_models m,
     LATERAL (SELECT pg_temp.payload_at(m.model, 3) AS p) s,
     LATERAL (VALUES
       ('unchanged', pg_temp.fix_crcs(m.model)),
       ('epsilon < 0 (sign bit)', pg_temp.fix_crcs(set_byte(m.model, s.p + 15, get_byte(m.model, s.p + 15) | 128))),
       ('epsilon NaN', pg_temp.fix_crcs(set_byte(set_byte(m.model, s.p + 15, 127), s.p + 14, 255))),
       ('lambda 0', pg_temp.fix_crcs(overlay(m.model placing '\x0000000000000000'::bytea from s.p + 1 for 8))),
       ('converged 2', pg_temp.fix_crcs(set_byte(m.model, s.p + 32, 2))),
       ('max_iter < 0', pg_temp.fix_crcs(set_byte(m.model, s.p + 27, 128)))
     ) v(what, crafted)
WHERE m.name = 'fixed';
SELECT kernel_model_info(pg_temp.fix_crcs(set_byte(model, pg_temp.payload_at(model, 3) + 15, 255)))
FROM svr_models WHERE name = 'fixed';

DROP TABLE svr_rows, svr_models;
