-- Models written by kernel_ml 0.1.0 (format 1) keep loading and predict
-- as 0.1.0 did.  The fixtures were made by 0.1.0 itself
-- (test/fixtures/make_format1.sh): its kernel_train wrote the models, its
-- kernel_predict the predictions, as float8send bits in hex.
--
-- What must not change by a bit is compared as bits: the decoded model
-- (kernel_model_export prints every coefficient, centre, mean and scale
-- in the shortest form that reads back to the same double; its md5 is
-- below).  Predictions are sums that BLAS and the compiler may round in
-- another order on another build (an assert-enabled server, sanitizers):
-- they must agree with 0.1.0's within 1e-12 of the largest prediction of
-- the same model.
CREATE TEMP TABLE fx (name text PRIMARY KEY, model_hex text);
\copy fx FROM 'test/fixtures/format1_models.tsv'
CREATE TEMP TABLE fx_rows (j int PRIMARY KEY, f float8[]);
\copy fx_rows FROM 'test/fixtures/format1_rows.tsv'
CREATE TEMP TABLE fx_want (name text, j int, bits text);
\copy fx_want FROM 'test/fixtures/format1_predictions.tsv'
-- the double whose IEEE 754 bits are the 16 hex digits h
CREATE FUNCTION pg_temp.bits_to_float8(h text) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN e = 0 THEN s * m * power(2::float8, -1074)
              ELSE s * (1 + m / 4503599627370496.0::float8) * power(2::float8, e - 1023) END
  FROM (SELECT CASE WHEN b < 0 THEN -1 ELSE 1 END::float8 AS s,
               ((b >> 52) & 2047)::int AS e,
               (b & 4503599627370495)::float8 AS m
        FROM (SELECT ('x' || h)::bit(64)::bigint AS b) x) y
$$;
CREATE TEMP TABLE fx_pred AS
SELECT w.name, w.j, pg_temp.bits_to_float8(w.bits) AS v010,
       kernel_predict(decode(fx.model_hex, 'hex'), r.f) AS now
FROM fx_want w JOIN fx USING (name) JOIN fx_rows r USING (j);

-- the bits decoder itself: 0.1.0's predictions read back exactly
SELECT count(*) AS predictions,
       count(*) FILTER (WHERE encode(float8send(pg_temp.bits_to_float8(bits)), 'hex') = bits) AS bits_read_back
FROM fx_want;

-- every prediction of every fixture, within 1e-12 of the model's largest
SELECT name, count(*) AS predictions,
       count(*) FILTER (WHERE abs(now - v010) <= 1e-12 * big) AS agree
FROM (SELECT *, max(abs(v010)) OVER (PARTITION BY name) AS big FROM fx_pred) p
GROUP BY name ORDER BY name;

-- any that do not, with both values
SELECT name, j, v010, now
FROM (SELECT *, max(abs(v010)) OVER (PARTITION BY name) AS big FROM fx_pred) p
WHERE NOT abs(now - v010) <= 1e-12 * big;

-- the decoded models, bit for bit: every exported double, hashed
SELECT name, md5(kernel_model_export(decode(model_hex, 'hex'))::text) AS export_md5
FROM fx ORDER BY name;

-- kernel_model_info reads them: format 1, written by 0.1.0
SELECT name, kernel_model_info(decode(model_hex, 'hex')) - 'amplitude' - 'log_marginal_likelihood' AS info FROM fx ORDER BY name;
-- and the Gaussian-process keys of an exact ridge model (issue 32), computed from its rows
SELECT name, round((kernel_model_info(decode(model_hex, 'hex'))->>'amplitude')::numeric, 10) AS amplitude,
       round((kernel_model_info(decode(model_hex, 'hex'))->>'log_marginal_likelihood')::numeric, 8) AS lml
FROM fx ORDER BY name;

-- kernel_model_export reads them too
SELECT name, e->>'format_version' AS format_version, e->>'kernel' AS kernel,
       jsonb_array_length(e->'centers') AS centers, jsonb_array_length(e->'coef') AS coef
FROM (SELECT name, kernel_model_export(decode(model_hex, 'hex')) AS e FROM fx) s ORDER BY name;
