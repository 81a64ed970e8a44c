-- Models written by kernel_ml 0.1.0 (format 1) keep loading and predict
-- bit-for-bit as 0.1.0 did.  The fixtures were made by 0.1.0 itself
-- (test/fixtures/make_format1.sh): its kernel_train wrote the models, its
-- kernel_predict the predictions, as float8send bits in hex.
CREATE TEMP TABLE fx (name text PRIMARY KEY, model_hex text);
\copy fx FROM 'test/fixtures/format1_models.tsv'
CREATE TEMP TABLE fx_rows (j int PRIMARY KEY, f float8[]);
\copy fx_rows FROM 'test/fixtures/format1_rows.tsv'
CREATE TEMP TABLE fx_want (name text, j int, bits text);
\copy fx_want FROM 'test/fixtures/format1_predictions.tsv'

-- every prediction of every fixture, bit for bit
SELECT name, count(*) AS predictions,
       count(*) FILTER (WHERE encode(float8send(kernel_predict(decode(model_hex, 'hex'), f)), 'hex') = bits) AS identical
FROM fx_want JOIN fx USING (name) JOIN fx_rows USING (j)
GROUP BY name ORDER BY name;

-- any that differ, with both bit patterns
SELECT name, j, bits AS v010, encode(float8send(kernel_predict(decode(model_hex, 'hex'), f)), 'hex') AS now
FROM fx_want JOIN fx USING (name) JOIN fx_rows USING (j)
WHERE encode(float8send(kernel_predict(decode(model_hex, 'hex'), f)), 'hex') <> bits;

-- kernel_model_info reads them: format 1, written by 0.1.0
SELECT name, kernel_model_info(decode(model_hex, 'hex')) AS info FROM fx ORDER BY name;

-- kernel_model_export reads them too
SELECT name, e->>'format_version' AS format_version, e->>'kernel' AS kernel,
       jsonb_array_length(e->'centers') AS centers, jsonb_array_length(e->'coef') AS coef
FROM (SELECT name, kernel_model_export(decode(model_hex, 'hex')) AS e FROM fx) s ORDER BY name;
