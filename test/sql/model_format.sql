-- Models are validated on every read: truncated, corrupted, newer, foreign bytes
SET extra_float_digits = 0;

-- the SQLSTATE and message a statement ends with
CREATE FUNCTION pg_temp.outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

CREATE TABLE m AS
SELECT kernel_train(ARRAY[i, i % 3]::float8[], i * 0.5, '{"lambda": 1}') AS model FROM generate_series(1, 5) i;

-- layout (format 2) of a ridge without selection (lambda given; the default
-- grid adds a selection section): 80-byte header, then sections of 16 bytes of framing
-- each: scaler (2d doubles), expansion (n, then n + n*d doubles), method
-- (ridge: lambda, jitter), training (train_rmse), gp (amplitude, half log
-- determinant)
SELECT length(model) = 80 + (16 + 8 * 2 * 2) + (16 + 8 + 8 * (5 + 5 * 2)) + (16 + 8 * 2) + (16 + 8) + (16 + 8 * 2) AS size_ok,
       substring(model from 1 for 4) = 'KMLM'::bytea AS magic,
       get_byte(model, 4) AS format_version
FROM m;

-- truncated at a few lengths: 22P03
SELECT len, pg_temp.outcome(format('SELECT kernel_predict(%L::bytea, ''{1,2}'')', substring(model from 1 for len)))
FROM m, (VALUES (0), (3), (7), (100), (147), (148), (200), (299)) v(len) ORDER BY len;

-- a flipped bit in the header, the coefficients, the checksum: XX001
SELECT pos, pg_temp.outcome(format('SELECT kernel_model_info(%L::bytea)', set_byte(model, pos, get_byte(model, pos) # 16)))
FROM m, LATERAL (VALUES (9), (20), (60), (143), (150), (250), (length(model) - 1)) v(pos) ORDER BY pos;

-- the magic: not a model
SELECT pg_temp.outcome(format('SELECT kernel_predict(%L::bytea, ''{1,2}'')', set_byte(model, 0, 0))) FROM m;
-- a newer format version: 22P03 with a hint to upgrade
SELECT kernel_model_info(set_byte(model, 4, 3)) FROM m;
-- arbitrary bytes
SELECT kernel_predict('\xdeadbeef'::bytea, '{1,2}');
-- an untyped literal is read as a model name: the hint says to cast it
SELECT kernel_predict('\xdeadbeef', '{1,2}');
SELECT kernel_model_info('\x'::bytea);
SELECT kernel_model_info(decode(repeat('00', 500), 'hex'));
-- a valid model followed by more bytes
SELECT pg_temp.outcome(format('SELECT kernel_model_info(%L::bytea)', model || '\x00'::bytea)) FROM m;

-- a model stored in a table and read back through TOAST predicts the same
CREATE TABLE big AS
SELECT kernel_train(ARRAY[sin(i), cos(i), i % 5]::float8[], sin(2 * i)) AS model
FROM generate_series(1, 400) i;
SELECT length(model) > 8000 AS toasted FROM big;
SELECT round(kernel_predict(model, ARRAY[sin(i), cos(i), i % 5]::float8[])::numeric, 6) AS pred
FROM big, generate_series(1, 3) i ORDER BY i;

-- several models in one query: each row uses its own
SELECT k, round(kernel_predict(model, '{0.1,0.2,1}')::numeric, 6) AS pred
FROM (SELECT k, kernel_train(ARRAY[sin(i), cos(i), i % 5]::float8[], sin(2 * i) * k) AS model
      FROM generate_series(1, 400) i, generate_series(1, 3) k GROUP BY k) s
ORDER BY k;

DROP TABLE m, big;
