-- kernel_predict_std and kernel_model_info's amplitude and
-- log_marginal_likelihood of approximate kernel ridge (issue 32): nystrom's
-- DTC sparse GP and rff's Bayesian linear regression on z(x)
-- (src/core/model/gp.h).  The reference numbers below come from NumPy on the
-- features kernel_model_export gives (test/crosscheck/gen_gp_approx_sql.py
-- prints them); nystrom with components >= n equals the exact model.
SET extra_float_digits = 0;

CREATE TABLE gpa_rows AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i), (i % 7) / 7.0]::float8[] AS f,
       sin(i) + 0.5 * cos(0.7 * i) + ((i * 7919) % 100) / 500.0 AS y
FROM generate_series(1, 80) i;
CREATE TABLE gpa_query AS
SELECT a AS id, ARRAY[a * 0.3, -a * 0.2, a * 0.1]::float8[] AS f
FROM generate_series(-5, 5) a;

CREATE TABLE gpa_models AS
SELECT kernel_train(f, y, '{"lambda": 0.1, "gamma": 0.5}') AS exact,
       kernel_train(f, y, '{"lambda": 0.1, "gamma": 0.5, "approximation": "nystrom", "uncertainty": true, "components": 80}') AS n80,
       kernel_train(f, y, '{"lambda": 0.1, "gamma": 0.5, "approximation": "nystrom", "uncertainty": true, "components": 100}') AS n100,
       kernel_train(f, y, '{"lambda": 0.1, "gamma": 0.5, "approximation": "nystrom", "uncertainty": true, "components": 20}') AS n20,
       kernel_train(f, y, '{"lambda": 0.1, "gamma": 0.5, "approximation": "rff", "uncertainty": true, "components": 40}') AS r40
FROM gpa_rows;

-- nystrom with components >= n (every row a centre) is the exact GP: the
-- standard deviation, the amplitude and the likelihood within 1e-6
SELECT kernel_model_info(n80)->>'n_train' AS n80_centres, kernel_model_info(n100)->>'n_train' AS n100_centres
FROM gpa_models;
SELECT max(abs(kernel_predict_std(g.n80, q.f) / kernel_predict_std(g.exact, q.f) - 1)) < 1e-6 AS n80_std,
       max(abs(kernel_predict_std(g.n100, q.f) / kernel_predict_std(g.exact, q.f) - 1)) < 1e-6 AS n100_std,
       count(*) AS rows
FROM gpa_models g, (SELECT f FROM gpa_rows UNION ALL SELECT f FROM gpa_query) q;
SELECT abs((kernel_model_info(n80)->>'amplitude')::float8 / (kernel_model_info(exact)->>'amplitude')::float8 - 1) < 1e-6 AS same_amplitude,
       abs((kernel_model_info(n80)->>'log_marginal_likelihood')::float8
           / (kernel_model_info(exact)->>'log_marginal_likelihood')::float8 - 1) < 1e-6 AS same_lml,
       round((kernel_model_info(n80)->>'amplitude')::numeric, 6) AS amplitude,
       round((kernel_model_info(n80)->>'log_marginal_likelihood')::numeric, 4) AS lml
FROM gpa_models;

-- nystrom, 20 centres: the DTC against NumPy (1e-9 relative)
SELECT abs((kernel_model_info(n20)->>'amplitude')::float8 / 0.38907838927298316 - 1) < 1e-9 AS amplitude,
       abs((kernel_model_info(n20)->>'log_marginal_likelihood')::float8 / -12.558350543904787 - 1) < 1e-9 AS lml
FROM gpa_models;
SELECT max(abs(kernel_predict_std(g.n20, q.f) / w.std - 1)) < 1e-9 AS dtc_std, count(*) AS rows
FROM gpa_models g, gpa_query q
JOIN (VALUES (-5, 0.65149556370233108), (-4, 0.6332765960520742), (-3, 0.57288276241181113),
             (-2, 0.48590523176443645), (-1, 0.43708072258877023), (0, 0.40003375184744133),
             (1, 0.2804673102917874), (2, 0.24303111573856012), (3, 0.40093250025928234),
             (4, 0.50987017905993715), (5, 0.59247719779066732)) w(id, std) USING (id);

-- rff, 40 features: Bayesian linear regression on z(x) against NumPy
SELECT abs((kernel_model_info(r40)->>'amplitude')::float8 / 0.27889136602233744 - 1) < 1e-9 AS amplitude,
       abs((kernel_model_info(r40)->>'log_marginal_likelihood')::float8 / -10.038445272126808 - 1) < 1e-9 AS lml
FROM gpa_models;
SELECT max(abs(kernel_predict_std(g.r40, q.f) / w.std - 1)) < 1e-9 AS blr_std, count(*) AS rows
FROM gpa_models g, gpa_query q
JOIN (VALUES (-5, 0.40179282208655676), (-4, 0.35427288251018496), (-3, 0.2927355028841398),
             (-2, 0.25547028489598678), (-1, 0.23125163277788333), (0, 0.23286173459664575),
             (1, 0.19726198561034802), (2, 0.18241907381023775), (3, 0.19400033785972476),
             (4, 0.22889634308755177), (5, 0.2948933760699608)) w(id, std) USING (id);

-- far from every centre k_m vanishes: nystrom's std is the prior's
-- sqrt(s2 (k(x, x) + lambda)) = sqrt(s2 1.1); never below the noise's
-- sqrt(s2 lambda), for nystrom and rff alike
SELECT abs(kernel_predict_std(n20, ARRAY[40, -40, 40]::float8[])
           / sqrt((kernel_model_info(n20)->>'amplitude')::float8 * 1.1) - 1) < 1e-12 AS far_is_prior
FROM gpa_models;
SELECT bool_and(kernel_predict_std(g.n20, q.f) >= sqrt((kernel_model_info(g.n20)->>'amplitude')::float8 * 0.1)) AS nystrom_above_noise,
       bool_and(kernel_predict_std(g.r40, q.f) >= sqrt((kernel_model_info(g.r40)->>'amplitude')::float8 * 0.1)) AS rff_above_noise
FROM gpa_models g, (SELECT f FROM gpa_rows UNION ALL SELECT f FROM gpa_query) q;

-- models in any order at one call site: the factor follows the model
SELECT bool_and(kernel_predict_std(CASE q.id % 3 WHEN 0 THEN g.n20 WHEN 1 THEN g.r40 ELSE g.exact END, q.f)
                = CASE q.id % 3 WHEN 0 THEN s.a WHEN 1 THEN s.b ELSE s.c END) AS alternating_same
FROM gpa_models g, gpa_rows q,
     LATERAL (SELECT kernel_predict_std(g.n20, q.f) AS a, kernel_predict_std(g.r40, q.f) AS b,
                     kernel_predict_std(g.exact, q.f) AS c) s;

-- by name: the same numbers as the bytea
SELECT name, version FROM kernel_model_train('gpa_named', 'SELECT f, y FROM gpa_rows',
       '{"lambda": 0.1, "gamma": 0.5, "approximation": "nystrom", "uncertainty": true, "components": 20, "test_fraction": 0}');
SELECT bool_and(kernel_predict_std('gpa_named', q.f) = kernel_predict_std(m.model, q.f)) AS same_std,
       (kernel_model_info(m.model)->>'amplitude')::float8 > 0 AS has_amplitude
FROM kernel_models m, gpa_query q WHERE m.name = 'gpa_named'
GROUP BY m.model;

-- "solver": "cg" never forms the m x m statistics: no factor, refused;
-- kernel_model_info has no amplitude
CREATE TABLE gpa_cg AS
SELECT kernel_train_query('SELECT f, y FROM gpa_rows',
       '{"lambda": 0.1, "gamma": 0.5, "approximation": "nystrom", "uncertainty": true, "components": 20, "solver": "cg"}') AS m;
SELECT kernel_predict_std(m, ARRAY[0, 0, 0]::float8[]) FROM gpa_cg;
SELECT kernel_model_info(m) ? 'amplitude' AS cg_has_amplitude FROM gpa_cg;

-- the GP_APPROX section (tag 12) is the last of a nystrom or rff ridge
-- model: amplitude f64, half log det f64, then R packed (m (m + 1) / 2
-- doubles); 20 centres: 16 + 8 * 210 bytes of payload, 1712 with its
-- header and CRC.  Cut, the model is
-- an approximate model without a factor (refused as cg's); crafted (CRC-32C
-- made again), a NaN amplitude, a diagonal of R <= 0 or a NaN element of R
-- are refused (22P03)
CREATE FUNCTION pg_temp.crc32c(b bytea) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE c bigint := 4294967295;
BEGIN
  FOR i IN 0 .. length(b) - 1 LOOP
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
-- the model with its last section (sec bytes) cut: size, count, CRC again
CREATE FUNCTION pg_temp.cut_last(m bytea, sec int) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE b bytea := substring(m from 1 for length(m) - sec);
BEGIN
  b := pg_temp.put_le(b, 8, length(b), 8);
  b := pg_temp.put_le(b, 72, get_byte(b, 72) - 1, 4);
  RETURN pg_temp.put_le(b, 76, pg_temp.crc32c(substring(b from 1 for 76)), 4);
END $$;
-- v at byte at of the last section's payload (payload bytes), CRC again
CREATE FUNCTION pg_temp.set_last(m bytea, payload int, at int, v bytea) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE b bytea := overlay(m placing v from length(m) - 4 - payload + at + 1 for 8);
BEGIN
  RETURN pg_temp.put_le(b, length(b) - 4,
                        pg_temp.crc32c(substring(b from length(b) - 4 - payload - 12 + 1 for payload + 12)), 4);
END $$;
SELECT get_byte(n20, length(n20) - 1712) AS n20_tag, get_byte(r40, length(r40) - (16 + 8 * 820) - 16) AS r40_tag,
       length(n20) - length(pg_temp.cut_last(n20, 1712)) AS cut_bytes
FROM gpa_models;
SELECT kernel_predict(pg_temp.cut_last(n20, 1712), ARRAY[0.1, 0.2, 0.3]::float8[])
       = kernel_predict(n20, ARRAY[0.1, 0.2, 0.3]::float8[]) AS cut_predicts_same,
       kernel_model_info(pg_temp.cut_last(n20, 1712)) ? 'amplitude' AS cut_has_amplitude
FROM gpa_models;
SELECT kernel_predict_std(pg_temp.cut_last(n20, 1712), ARRAY[0, 0, 0]::float8[]) FROM gpa_models;
SELECT kernel_model_info(pg_temp.set_last(n20, 1696, 0, '\x000000000000f87f')) FROM gpa_models;
SELECT kernel_predict_std(pg_temp.set_last(n20, 1696, 16, '\x000000000000f0bf'), ARRAY[0, 0, 0]::float8[]) FROM gpa_models;
SELECT kernel_predict(pg_temp.set_last(n20, 1696, 16, '\x0000000000000000'), ARRAY[0, 0, 0]::float8[]) FROM gpa_models;
SELECT kernel_predict(pg_temp.set_last(n20, 1696, 24, '\x000000000000f87f'), ARRAY[0, 0, 0]::float8[]) FROM gpa_models;
-- a negative off-diagonal element is a value; the model reads
SELECT kernel_predict_std(pg_temp.set_last(n20, 1696, 24, '\x000000000000f0bf'), ARRAY[0, 0, 0]::float8[]) > 0 AS off_diagonal_value
FROM gpa_models;

SELECT kernel_model_drop('gpa_named');
DROP TABLE gpa_rows, gpa_query, gpa_models, gpa_cg;

-- without "uncertainty": true an approximate model keeps no factor (its
-- size stays the coefficients'): kernel_predict_std says how to get one
SELECT kernel_predict_std(kernel_train(ARRAY[i::float8, (i % 5)::float8], sin(i), '{"approximation": "nystrom", "components": 10}'), ARRAY[1, 2]::float8[])
FROM generate_series(1, 50) i GROUP BY ();
