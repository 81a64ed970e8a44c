-- kernel_predict_std and kernel_model_info's amplitude and
-- log_marginal_likelihood: the Gaussian-process reading of exact kernel
-- ridge (issue 32).  The values equal scikit-learn's
-- GaussianProcessRegressor(ConstantKernel(s2) * RBF + WhiteKernel(s2 lambda),
-- optimizer=None) on the standardized rows and centred target
-- (test/crosscheck/crosscheck.py gp); here: the identities they must meet.
SET extra_float_digits = 0;

CREATE TABLE gp_rows AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f,
       sin(i) + 0.5 * cos(0.7 * i) + ((i * 7919) % 100) / 500.0 AS y
FROM generate_series(1, 120) i;

CREATE TABLE gp_models AS
SELECT kernel_train(f, y, '{"lambda": 0.1, "gamma": 0.5}') AS m,
       kernel_train(f, y, '{"lambda": 1e-10, "gamma": 0.05}') AS tiny,
       kernel_train(f, y, '{"lambda": 0.1, "gamma": 0.5, "fit_intercept": false}') AS raw_y,
       kernel_train(f, y, '{"lambda": 30, "kernel": "sigmoid", "gamma": 0.1, "coef0": 0}') AS sig
FROM gp_rows;

-- the amplitude and log likelihood of an exact ridge model
SELECT round((kernel_model_info(m)->>'amplitude')::numeric, 6) AS amplitude,
       round((kernel_model_info(m)->>'log_marginal_likelihood')::numeric, 6) AS lml,
       (kernel_model_info(raw_y)->>'amplitude')::float8 > (kernel_model_info(m)->>'amplitude')::float8 AS uncentred_larger
FROM gp_models;

-- far from the data k_x vanishes: std = sqrt(s2 (k(x, x) + lambda)) = sqrt(s2 1.1)
SELECT abs(kernel_predict_std(m, ARRAY[40, -40, 40]::float8[])
           / sqrt((kernel_model_info(m)->>'amplitude')::float8 * 1.1) - 1) < 1e-12 AS far_is_prior
FROM gp_models;

-- near the data it is smaller, never below the noise's sqrt(s2 lambda)
SELECT bool_and(s < sqrt(a * 1.1)) AS below_prior, bool_and(s >= sqrt(a * 0.1)) AS above_noise,
       round(min(s)::numeric, 6) AS min_std, round(max(s)::numeric, 6) AS max_std
FROM (SELECT kernel_predict_std(g.m, r.f) AS s, (kernel_model_info(g.m)->>'amplitude')::float8 AS a
      FROM gp_rows r, gp_models g) t;

-- clipping: the latent variance k(x, x) - k_x'(K + lambda I)^-1 k_x is
-- never negative for a positive definite kernel, but can be for the sigmoid
-- kernel (not positive definite; K + lambda I is with lambda 30: lambda here
-- is the model's lambda plus its jitter), and rounding
-- could take it below 0 at a training row under a tiny lambda: it is clipped
-- at 0, so the standard deviation is never below the noise's sqrt(s2 lambda)
-- (to 1e-12: kernel_model_info's amplitude prints 15 digits here)
SELECT bool_and(s >= noise * (1 - 1e-12)) AS never_below_noise,
       count(*) FILTER (WHERE abs(s / noise - 1) < 1e-12) AS clipped, count(*) AS rows
FROM (SELECT kernel_predict_std(g.sig, q.f) AS s,
             sqrt((kernel_model_info(g.sig)->>'amplitude')::float8
                  * ((kernel_model_info(g.sig)->>'lambda')::float8 + (kernel_model_info(g.sig)->>'jitter')::float8)) AS noise
      FROM (SELECT ARRAY[a * 3, -a * 2, a * 5]::float8[] AS f FROM generate_series(-10, 10) a
            UNION ALL SELECT f FROM gp_rows) q, gp_models g) t;
SELECT bool_and(s >= noise * (1 - 1e-12)) AS never_below_noise, bool_and(s <= noise * 1.5) AS near_noise
FROM (SELECT kernel_predict_std(g.tiny, r.f) AS s,
             sqrt((kernel_model_info(g.tiny)->>'amplitude')::float8 * 1e-10) AS noise
      FROM gp_rows r, gp_models g) t;

-- models in any order at one call site: the factor follows the model
SELECT bool_and(kernel_predict_std(CASE WHEN r.id % 2 = 0 THEN g.m ELSE g.raw_y END, r.f)
                = CASE WHEN r.id % 2 = 0 THEN s.sm ELSE s.sr END) AS alternating_same
FROM gp_rows r, gp_models g,
     LATERAL (SELECT kernel_predict_std(g.m, r.f) AS sm, kernel_predict_std(g.raw_y, r.f) AS sr) s
WHERE r.id <= 20;

-- by name: the deployed version, the same value as by model
SELECT version, deployed FROM kernel_model_train('gp_ridge', 'SELECT f, y FROM gp_rows',
                                                 '{"lambda": 0.1, "gamma": 0.5, "test_fraction": 0}');
SELECT bool_and(kernel_predict_std('gp_ridge', r.f) = kernel_predict_std(kernel_model_get('gp_ridge'), r.f)) AS same
FROM gp_rows r WHERE r.id <= 10;
SELECT kernel_model_drop('gp_ridge');

-- no GP reading: other methods, approximate models without a factor
-- ("solver": "cg"; test/sql/gp_approx.sql has the others)
SELECT kernel_predict_std(kernel_train(f, y, '{"method": "svr"}'), ARRAY[0, 0, 0]::float8[]) FROM gp_rows;
SELECT kernel_predict_std(kernel_train(f, y, '{"method": "lms", "max_iter": 3}'), ARRAY[0, 0, 0]::float8[]) FROM gp_rows;
SELECT kernel_predict_std(kernel_train_query('SELECT f, y FROM gp_rows', '{"approximation": "nystrom", "components": 10, "solver": "cg"}'), ARRAY[0, 0, 0]::float8[]);
SELECT kernel_predict_std(kernel_train(f, CASE WHEN y > 0.5 THEN 'a' ELSE 'b' END), ARRAY[0, 0, 0]::float8[]) FROM gp_rows;
SELECT kernel_model_info(kernel_train(f, y, '{"method": "svr"}')) ? 'amplitude' AS svr_has_amplitude FROM gp_rows;

-- bad rows
SELECT kernel_predict_std(m, ARRAY[1, 2]::float8[]) FROM gp_models;
SELECT kernel_predict_std(m, ARRAY[1, 'NaN', 2]::float8[]) FROM gp_models;

-- the factor counts against kernel_ml.max_memory: 800 rows need 5 MB.
-- kernel_model_info does not factor: it reads the amplitude and the log
-- determinant the fit kept (the model's GP section, tag 17, the last 32
-- bytes of a model without columns).  A model without that section (as
-- builds before 0.4.0 wrote it: gp_old, the same model with the section
-- cut, the header's size, section count and CRC-32C made again) has them
-- computed from its rows, null when the factor does not fit
CREATE FUNCTION pg_temp.crc32c(b bytea, n int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE c bigint := 4294967295;
BEGIN
  FOR i IN 0 .. n - 1 LOOP
    c := c # get_byte(b, i);
    FOR k IN 1 .. 8 LOOP
      c := CASE WHEN c & 1 = 1 THEN (c >> 1) # 2197175160 ELSE c >> 1 END;
    END LOOP;
  END LOOP;
  RETURN c # 4294967295;
END $$;
CREATE FUNCTION pg_temp.put_le(b bytea, at int, v bigint, width int) RETURNS bytea LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 0 .. width - 1 LOOP
    b := set_byte(b, at + i, ((v >> (8 * i)) & 255)::int);
  END LOOP;
  RETURN b;
END $$;
CREATE FUNCTION pg_temp.without_gp(m bytea) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE b bytea := substring(m from 1 for length(m) - 32);
BEGIN
  b := pg_temp.put_le(b, 8, length(b), 8);
  b := pg_temp.put_le(b, 72, get_byte(b, 72) - 1, 4);
  RETURN pg_temp.put_le(b, 76, pg_temp.crc32c(b, 76), 4);
END $$;
CREATE TABLE gp_big AS
SELECT kernel_train(ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[], sin(i), '{"lambda": 0.1}') AS m
FROM generate_series(1, 800) i;
CREATE TABLE gp_old AS SELECT pg_temp.without_gp(m) AS m FROM gp_big;
SELECT get_byte(b.m, length(b.m) - 32) AS cut_tag, length(b.m) - length(o.m) AS cut_bytes,
       kernel_model_info(o.m) - 'size_bytes' - 'amplitude' - 'log_marginal_likelihood'
       = kernel_model_info(b.m) - 'size_bytes' - 'amplitude' - 'log_marginal_likelihood' AS same_info
FROM gp_big b, gp_old o;
SET kernel_ml.max_memory = '2MB';
SELECT kernel_predict_std(m, ARRAY[0, 0, 0]::float8[]) FROM gp_big;
SELECT round((kernel_model_info(m)->>'log_marginal_likelihood')::numeric, 8) AS lml,
       round((kernel_model_info(m)->>'amplitude')::numeric, 10) AS amplitude FROM gp_big;
SELECT kernel_model_info(m)->'log_marginal_likelihood' AS old_lml, kernel_model_info(m)->'amplitude' AS old_amplitude FROM gp_old;
RESET kernel_ml.max_memory;
-- with room for the factor the older model's computed values are the
-- kept ones, to the bit (shortest round-trip digits), and
-- kernel_predict_std (which takes the kept amplitude) agrees
SET extra_float_digits = 1;
SELECT kernel_model_info(o.m)->'amplitude' = kernel_model_info(b.m)->'amplitude' AS same_amplitude,
       kernel_model_info(o.m)->'log_marginal_likelihood' = kernel_model_info(b.m)->'log_marginal_likelihood' AS same_lml,
       kernel_predict_std(o.m, ARRAY[0.1, 0.2, 0.3]::float8[]) = kernel_predict_std(b.m, ARRAY[0.1, 0.2, 0.3]::float8[]) AS same_std
FROM gp_big b, gp_old o;
SET extra_float_digits = 0;
SELECT kernel_predict_std(m, ARRAY[0, 0, 0]::float8[]) > 0 AS fits_again FROM gp_big;
-- a crafted GP section is refused (22P03), its CRC-32C made again: a NaN
-- or negative amplitude, an infinite log determinant (little-endian f64
-- at bytes 0 and 8 of its payload)
CREATE FUNCTION pg_temp.set_gp(m bytea, at int, v bytea) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE b bytea := overlay(m placing v from length(m) - 20 + at + 1 for 8);
BEGIN
  RETURN pg_temp.put_le(b, length(b) - 4, pg_temp.crc32c(substring(b from length(b) - 31 for 28), 28), 4);
END $$;
SELECT kernel_model_info(pg_temp.set_gp(m, 0, '\x000000000000f87f')) FROM gp_big;
SELECT kernel_model_info(pg_temp.set_gp(m, 0, '\x000000000000f0bf')) FROM gp_big;
SELECT kernel_predict(pg_temp.set_gp(m, 8, '\x000000000000f07f'), ARRAY[0, 0, 0]::float8[]) FROM gp_big;
-- a negative half log determinant is a value (det(K + lambda I) < 1)
SELECT round((kernel_model_info(pg_temp.set_gp(m, 8, '\x000000000000f0bf'))->>'log_marginal_likelihood')::numeric, 8) AS lml FROM gp_big;
DROP TABLE gp_big, gp_old;

DROP TABLE gp_rows, gp_models;

-- "cv": "evidence": lambda and gamma by the log marginal likelihood (the
-- scores equal minus scikit-learn's: crosscheck.py gp); the winner's
-- kernel_model_info likelihood is minus its score
CREATE TABLE gp_ev AS
SELECT kernel_train(f, y, '{"cv": "evidence", "gamma": [0.1, 0.5, 2], "lambda": [0.01, 0.1, 1]}') AS m
FROM (SELECT ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f,
             sin(i) + 0.5 * cos(0.7 * i) + ((i * 7919) % 100) / 500.0 AS y
      FROM generate_series(1, 120) i) r;
SELECT i->>'cv' AS cv, i->>'score' AS score, (i->>'best')::int AS best,
       abs(((i->'candidates'->(i->>'best')::int)->>'score')::float8
           + (kernel_model_info(m)->>'log_marginal_likelihood')::float8) < 1e-9 AS best_is_lml
FROM gp_ev, LATERAL (SELECT kernel_model_info(m)->'selection' AS i) s;
SELECT kernel_model_info(kernel_train(ARRAY[i::float8], sin(i), '{"cv": "evidence", "method": "svr", "lambda": [0.1, 1]}'))
FROM generate_series(1, 20) i;
DROP TABLE gp_ev;

-- "cv": "evidence" for nystrom and rff ridge: the lambda of the highest log
-- marginal likelihood of the GP reading (DTC / Bayesian linear regression),
-- from the m x m sums of the one pass (the scores equal NumPy's:
-- crosscheck.py gp).  The pick equals the brute force over refits with
-- "uncertainty": true, and is the same in memory, by name (the query
-- host; "refit": true so that its model sees every row, as the refits) and
-- through kernel_train_query (the pass aggregate).
CREATE TABLE gp_ev_rows AS
SELECT ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f,
       sin(i) + 0.5 * cos(0.7 * i) + ((i * 7919) % 100) / 500.0 AS y
FROM generate_series(1, 200) i;
CREATE TABLE gp_ev_opts AS
SELECT a AS approx, jsonb_build_object('approximation', a, 'components', 30, 'gamma', 0.5,
                                       'lambda', '[0.0003, 0.003, 0.03, 0.3, 3]'::jsonb) AS o
FROM unnest(ARRAY['nystrom', 'rff']) a;
CREATE TABLE gp_ev_fits AS
SELECT approx, 'memory' AS host,
       (SELECT kernel_train(f, y, o || '{"cv": "evidence"}') FROM gp_ev_rows) AS m
FROM gp_ev_opts
UNION ALL
SELECT approx, 'query',
       kernel_train_query('SELECT f, y FROM gp_ev_rows', o || '{"cv": "evidence"}')
FROM gp_ev_opts;
SELECT count(*) FROM gp_ev_opts,
  LATERAL kernel_model_train('gp_ev_' || approx, 'SELECT f, y FROM gp_ev_rows', o || '{"cv": "evidence", "refit": true}');
INSERT INTO gp_ev_fits
SELECT approx, 'name', (SELECT model FROM kernel_models k WHERE k.name = 'gp_ev_' || approx)
FROM gp_ev_opts;
-- the refits, one per lambda, with their likelihood
CREATE TABLE gp_ev_brute AS
SELECT approx, (l.ord - 1)::int AS idx,
       (kernel_model_info((SELECT kernel_train(f, y, o - 'lambda' || jsonb_build_object('lambda', l.v, 'uncertainty', true))
                           FROM gp_ev_rows))->>'log_marginal_likelihood')::float8 AS lml
FROM gp_ev_opts, LATERAL jsonb_array_elements(o->'lambda') WITH ORDINALITY l(v, ord);
SELECT f.approx, f.host, i->>'cv' AS cv, i->>'score' AS score, (i->>'best')::int AS best,
       (i->>'best')::int = (SELECT idx FROM gp_ev_brute b WHERE b.approx = f.approx ORDER BY lml DESC LIMIT 1) AS best_is_brute_force,
       (SELECT max(abs(((i->'candidates'->b.idx)->>'score')::float8 + b.lml) / abs(b.lml))
        FROM gp_ev_brute b WHERE b.approx = f.approx) < 1e-9 AS scores_are_refits_lml
FROM gp_ev_fits f, LATERAL (SELECT kernel_model_info(m)->'selection' AS i) s
ORDER BY 1, 2;
-- the winner's own likelihood (with "uncertainty": true) is minus its score
SELECT approx, abs(((i->'candidates'->(i->>'best')::int)->>'score')::float8
                   + (kernel_model_info(m)->>'log_marginal_likelihood')::float8) < 1e-9 AS best_is_lml
FROM gp_ev_opts, LATERAL (SELECT kernel_train(f, y, o || '{"cv": "evidence", "uncertainty": true}') AS m FROM gp_ev_rows) t,
     LATERAL (SELECT kernel_model_info(m)->'selection' AS i) s
ORDER BY 1;
SELECT kernel_model_info(kernel_train(ARRAY[i::float8], sin(i), '{"cv": "loo", "approximation": "nystrom", "components": 5, "lambda": [0.1, 1]}'))
FROM generate_series(1, 20) i;
SELECT kernel_model_info(kernel_train(ARRAY[i::float8], sin(i), '{"cv": "evidence", "approximation": "nystrom", "components": 5, "gamma": [0.1, 1], "lambda": [0.1, 1]}'))
FROM generate_series(1, 20) i;
SELECT kernel_model_drop('gp_ev_' || approx) FROM gp_ev_opts;
DROP TABLE gp_ev_rows, gp_ev_opts, gp_ev_fits, gp_ev_brute;
