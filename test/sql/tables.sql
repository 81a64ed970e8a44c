-- Training from a table (issue 30 section 1): kernel_train(row, target,
-- options) over whole rows, kernel_predict(model, row) by column names.
-- A table model must equal the float8[] model on the rows encoded by hand
-- (imputed with SQL's avg / percentile_cont / mode, one-hot in byte order).
SET extra_float_digits = 0;
CREATE TYPE tbl_colour AS ENUM ('red', 'green', 'blue');
CREATE TABLE tbl_houses (
	id integer,
	area numeric,
	rooms integer,
	city text,
	garden boolean,
	colour tbl_colour,
	price float8
);
INSERT INTO tbl_houses
SELECT i, 50 + (i * 37 % 100), 1 + i % 5,
	   (ARRAY['paris', 'lyon', 'nice', 'brest'])[1 + i % 4],
	   i % 3 = 0, (ARRAY['red', 'green', 'blue'])[1 + i % 3]::tbl_colour,
	   1000 + 10 * (50 + (i * 37 % 100)) + 100 * (i % 4) + 3 * (i % 5)
FROM generate_series(1, 40) i;
UPDATE tbl_houses SET area = NULL WHERE id % 7 = 0;
UPDATE tbl_houses SET city = NULL WHERE id % 9 = 0;
UPDATE tbl_houses SET garden = NULL WHERE id % 11 = 0;
UPDATE tbl_houses SET price = NULL WHERE id = 40;	-- skipped: no target

-- the table model, and the same model from float8[] rows encoded by hand
CREATE TABLE tbl_models AS
SELECT kernel_train(h, 'price', '{"features": ["area", "rooms", "city", "garden", "colour"],
		"impute": "mean", "gamma": 0.2, "lambda": 0.1}') AS model
FROM tbl_houses h;
CREATE VIEW tbl_stats AS
SELECT avg(area)::float8 AS area, avg(rooms)::float8 AS rooms,
	   avg(garden::int)::float8 AS garden,
	   (SELECT city FROM tbl_houses WHERE price IS NOT NULL AND city IS NOT NULL
		GROUP BY city ORDER BY count(*) DESC, city COLLATE "C" LIMIT 1) AS city
FROM tbl_houses WHERE price IS NOT NULL;
CREATE FUNCTION tbl_encode(h tbl_houses) RETURNS float8[] LANGUAGE sql AS $$
	SELECT ARRAY[coalesce(h.area::float8, s.area), h.rooms,
				 (coalesce(h.city, s.city) = 'brest')::int, (coalesce(h.city, s.city) = 'lyon')::int,
				 (coalesce(h.city, s.city) = 'nice')::int, (coalesce(h.city, s.city) = 'paris')::int,
				 coalesce(h.garden::int, s.garden),
				 (h.colour = 'blue')::int, (h.colour = 'green')::int, (h.colour = 'red')::int]::float8[]
	FROM tbl_stats s $$;
CREATE TABLE tbl_array_model AS
SELECT kernel_train(tbl_encode(h), price, '{"gamma": 0.2, "lambda": 0.1}') AS model
FROM tbl_houses h;

-- predictions agree with the float8[] model on the hand-encoded rows
SELECT count(*) AS rows,
	   max(abs(kernel_predict(m.model, h) - kernel_predict(a.model, tbl_encode(h)))) < 1e-9 AS same
FROM tbl_houses h, tbl_models m, tbl_array_model a;
-- a model with columns scores the encoded float8[] rows too
SELECT max(abs(kernel_predict(m.model, tbl_encode(h)) - kernel_predict(m.model, h))) < 1e-9 AS same
FROM tbl_houses h, tbl_models m;
-- the aggregate over whole rows with "features" left out: id is a feature too
SELECT (kernel_model_info(kernel_train(h, 'price', '{"impute": "median"}'))->'n_features')::int AS d
FROM tbl_houses h;

-- kernel_model_info lists the columns, their encodings and imputed values
SELECT c->>'name' AS name, c->>'type' AS type, c->>'encoding' AS encoding,
	   c->'first_feature' AS first, c->'categories' AS categories,
	   CASE WHEN c->>'encoding' = 'onehot' THEN c->>'impute'
			ELSE round((c->>'impute')::numeric, 9)::text END AS impute
FROM tbl_models m, jsonb_array_elements(kernel_model_info(m.model)->'columns') c;
SELECT kernel_model_info(model)->'target' AS target,
	   kernel_model_info(model)->>'impute' AS impute,
	   kernel_model_info(model)->>'unknown' AS unknown,
	   kernel_model_info(model)->'n_features' AS n_features,
	   kernel_model_info(model)->'rows_skipped' AS skipped
FROM tbl_models;

-- median and most_frequent: against percentile_cont and mode() (ties: smallest)
SELECT round(((kernel_model_info(kernel_train(h, 'price', '{"features": ["area", "rooms"], "impute": "median"}'))
			   ->'columns'->0->>'impute')::numeric), 9) AS median_area,
	   (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY area)
		FROM tbl_houses WHERE price IS NOT NULL) AS sql_median
FROM tbl_houses h;
SELECT kernel_model_info(kernel_train(h, 'price', '{"features": ["rooms", "city"], "impute": "most_frequent"}'))
		   ->'columns' AS most_frequent
FROM tbl_houses h;
SELECT (SELECT mode() WITHIN GROUP (ORDER BY rooms) FROM tbl_houses WHERE price IS NOT NULL) AS sql_mode_rooms;

-- columns matched by name, whatever their order; extra columns ignored
SELECT max(abs(kernel_predict(m.model, r) - kernel_predict(m.model, h))) < 1e-12 AS same
FROM tbl_models m, tbl_houses h,
	 LATERAL (SELECT h.colour, 'extra' AS note, h.garden, h.city, h.rooms, h.area) r;
-- an unseen category is all zeros before standardisation
SELECT abs(kernel_predict(m.model, r) -
		   kernel_predict(a.model, ARRAY[70, 2, 0, 0, 0, 0, 1, 0, 0, 1]::float8[])) < 1e-9 AS zeros
FROM tbl_models m, tbl_array_model a,
	 (SELECT 70 AS area, 2 AS rooms, 'rome' AS city, true AS garden, 'red'::tbl_colour AS colour) r;

-- an untyped literal is still a float8[] row, by bytea and by name (the text
-- forms keep it unambiguous beside the row forms)
SELECT kernel_predict(a.model, '{70, 2, 0, 0, 0, 0, 1, 0, 0, 1}') =
	   kernel_predict(a.model, '{70, 2, 0, 0, 0, 0, 1, 0, 0, 1}'::float8[]) AS same
FROM tbl_array_model a;
SELECT kernel_predict_class(c.model, '{70, 2, 0, 0, 1}') = kernel_predict_class(c.model, ARRAY[70, 2, 0, 0, 1]::float8[]) AS same,
	   kernel_predict_proba(c.model, '{70, 2, 0, 0, 1}') = kernel_predict_proba(c.model, ARRAY[70, 2, 0, 0, 1]::float8[]) AS same_p
FROM (SELECT kernel_train(h, 'city', '{"features": ["area", "rooms", "colour"], "impute": "median", "method": "logistic"}') AS model
	  FROM tbl_houses h) c;
SELECT kernel_predict(a.model, '{70, x}') FROM tbl_array_model a;

-- UPDATE ... SET predicted = kernel_predict(model, row)
ALTER TABLE tbl_houses ADD COLUMN predicted float8;
UPDATE tbl_houses h SET predicted = kernel_predict(m.model, h) FROM tbl_models m;
SELECT count(predicted) AS scored,
	   max(abs(predicted - kernel_predict(a.model, tbl_encode(h)))) < 1e-9 AS same
FROM tbl_houses h, tbl_array_model a;
-- retraining over the table with the new column: "features" keeps the model's
SELECT kernel_model_info(kernel_train(h, 'price', '{"features": ["area", "rooms", "city", "garden", "colour"],
		"impute": "mean", "gamma": 0.2, "lambda": 0.1}')) = kernel_model_info(m.model) AS same_model
FROM tbl_houses h, tbl_models m GROUP BY m.model;

-- a classifier from a text target, scored by rows
CREATE TABLE tbl_classifier AS
SELECT kernel_train(h, 'city', '{"features": ["area", "rooms", "colour"], "impute": "median",
		"method": "logistic", "gamma": 0.5, "lambda": 0.01}') AS model
FROM tbl_houses h;
SELECT kernel_predict_class(c.model, h) = kernel_predict_class(c.model, ARRAY[coalesce(h.area::float8, s.area), h.rooms,
		(h.colour = 'blue')::int, (h.colour = 'green')::int, (h.colour = 'red')::int]::float8[]) AS same,
	   count(*)
FROM tbl_houses h, tbl_classifier c,
	 (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY area) AS area FROM tbl_houses WHERE city IS NOT NULL) s
GROUP BY 1;
SELECT (SELECT sum(v::float8) FROM jsonb_each_text(kernel_predict_proba(c.model, h)) AS p(k, v)) AS total
FROM tbl_houses h, tbl_classifier c WHERE h.id = 1;
-- a boolean target is the labels 'false' and 'true'
SELECT kernel_predict_class(kernel_train(h, 'garden', '{"features": ["rooms", "area"], "impute": "mean"}'),
							(SELECT h2 FROM tbl_houses h2 WHERE id = 3)) IN ('false', 'true') AS label
FROM tbl_houses h;

-- errors
-- a NULL without "impute": the clear error, naming the column
SELECT kernel_train(h, 'price', '{"features": ["area", "rooms"]}') FROM tbl_houses h;
-- scoring a NULL without imputation
SELECT kernel_predict(kernel_train(h, 'price', '{"features": ["rooms", "colour"]}'),
					  (SELECT h2 FROM tbl_houses h2 WHERE id = 1)) IS NOT NULL AS ok FROM tbl_houses h;
SELECT kernel_predict(m.model, r)
FROM (SELECT kernel_train(h, 'price', '{"features": ["rooms", "colour"]}') AS model FROM tbl_houses h) m,
	 (SELECT 2 AS rooms, NULL::tbl_colour AS colour) r;
-- an unseen category under "unknown": "error"
SELECT kernel_predict(m.model, r)
FROM (SELECT kernel_train(h, 'price', '{"features": ["rooms", "city"], "impute": "mean", "unknown": "error"}') AS model
	  FROM tbl_houses h) m,
	 (SELECT 2 AS rooms, 'rome' AS city) r;
-- a missing column names it
SELECT kernel_predict(m.model, r) FROM tbl_models m, (SELECT 2 AS rooms, 'paris' AS city) r;
-- a column of another kind
SELECT kernel_predict(m.model, r)
FROM tbl_models m, (SELECT 70 AS area, 2 AS rooms, 3 AS city, true AS garden, 'red'::tbl_colour AS colour) r;
-- a model without columns given a row
SELECT kernel_predict(a.model, h) FROM tbl_array_model a, tbl_houses h WHERE h.id = 1;
-- unknown target, unknown feature, target as a feature, a type a model cannot take
SELECT kernel_train(h, 'cost', '{}') FROM tbl_houses h;
SELECT kernel_train(h, 'price', '{"features": ["area", "size"]}') FROM tbl_houses h;
SELECT kernel_train(h, 'price', '{"features": ["area", "price"]}') FROM tbl_houses h;
SELECT kernel_train(r, 'y', '{}') FROM (SELECT 1.0 AS y, now() AS at) r;
-- bad option values, and the options of kernel_train still checked
SELECT kernel_train(h, 'price', '{"impute": "mode"}') FROM tbl_houses h;
SELECT kernel_train(h, 'price', '{"unknown": "zero"}') FROM tbl_houses h;
SELECT kernel_train(h, 'price', '{"impute": "mean", "lamda": 1}') FROM tbl_houses h;
-- a column with no values in the training rows: left out when imputing (as
-- SimpleImputer drops it), an error otherwise, and no column left an error
SELECT kernel_train(r, 'y', '{"impute": "mean"}') FROM (SELECT i::float8 AS y, NULL::int AS x FROM generate_series(1, 3) i) r;
SELECT kernel_train(r, 'y', '{}') FROM (SELECT i::float8 AS y, i AS z, NULL::int AS x FROM generate_series(1, 3) i) r;
CREATE TABLE tbl_flow (area float8, city text, price float8, predicted float8);
INSERT INTO tbl_flow SELECT 50 + i, (ARRAY['a', 'b'])[1 + i % 2], 1000 + 10 * i, NULL
FROM generate_series(1, 20) i;
CREATE TABLE tbl_flow_model AS
SELECT kernel_train(h, 'price', '{"impute": "mean", "categorical": "onehot"}') AS model FROM tbl_flow h;
SELECT jsonb_path_query_array(kernel_model_info(model), '$.columns[*].name') AS columns FROM tbl_flow_model;
UPDATE tbl_flow h SET predicted = kernel_predict(m.model, h) FROM tbl_flow_model m;
SELECT count(predicted) AS predicted, max(abs(predicted - price)) < 100 AS close FROM tbl_flow;
DROP TABLE tbl_flow, tbl_flow_model;
-- kernel_evaluate(model, row): the target read from the column the model
-- was trained on, the row encoded by names; the same jsonb as the float8[]
-- form on the same rows (rows without NULL features, so that the encoding
-- by hand is exact; the NULL price of row 40 skipped by both)
SELECT e.by_row->>'task' AS task, e.by_row->'n' AS n, e.by_row->'skipped' AS skipped,
	   round((e.by_row->>'rmse')::numeric, 8) AS rmse, round((e.by_row->>'mae')::numeric, 8) AS mae,
	   round((e.by_row->>'r2')::numeric, 10) AS r2, e.same
FROM (SELECT kernel_evaluate(m.model, h) AS by_row,
	   kernel_evaluate(m.model, h) = kernel_evaluate(m.model, tbl_encode(h), h.price) AS same
FROM tbl_models m, tbl_houses h
WHERE h.area IS NOT NULL AND h.city IS NOT NULL AND h.garden IS NOT NULL
GROUP BY m.model) e;
-- every row, NULLs imputed: as kernel_predict(model, row) scores them
SELECT (e->>'n')::int AS n, (e->>'skipped')::int AS skipped,
	   abs((e->>'rmse')::float8 - (SELECT sqrt(avg((kernel_predict(m.model, h) - price) ^ 2))
								   FROM tbl_houses h, tbl_models m)) < 1e-9 AS rmse_as_predicted
FROM (SELECT kernel_evaluate(m.model, h) AS e FROM tbl_models m, tbl_houses h GROUP BY m.model) r;
-- a classifier of a text target: its NULL labels skipped, as training skipped them
SELECT kernel_evaluate(c.model, h) = kernel_evaluate(c.model, ARRAY[h.area, h.rooms,
		(h.colour = 'blue')::int, (h.colour = 'green')::int, (h.colour = 'red')::int]::float8[], h.city) AS same,
	   kernel_evaluate(c.model, h)->'skipped' AS skipped, kernel_evaluate(c.model, h)->'n' AS n
FROM tbl_classifier c, tbl_houses h WHERE h.area IS NOT NULL GROUP BY c.model;
-- a boolean target: the labels 'false' and 'true', as training read them
SELECT kernel_evaluate(g.model, h) = kernel_evaluate(g.model, ARRAY[h.rooms, h.area]::float8[], h.garden::text) AS same,
	   kernel_evaluate(g.model, h)->'confusion'->'labels' AS labels
FROM (SELECT kernel_train(h, 'garden', '{"features": ["rooms", "area"], "method": "logistic"}') AS model
	  FROM tbl_houses h WHERE area IS NOT NULL) g,
	 tbl_houses h WHERE h.area IS NOT NULL GROUP BY g.model;
-- extra columns and any order; a NULL row skipped and counted
SELECT kernel_evaluate(m.model, r)->'skipped' AS skipped,
	   kernel_evaluate(m.model, r) - 'skipped' =
	   kernel_evaluate(m.model, h) FILTER (WHERE h.id > 1) - 'skipped' AS same
FROM tbl_models m, tbl_houses h
	 LEFT JOIN LATERAL (SELECT h.price, h.colour, 'extra' AS note, h.garden, h.city, h.rooms, h.area
						WHERE h.id > 1) r ON true
GROUP BY m.model;
-- parallel workers: partial states of row forms combine as the others'
CREATE TABLE tbl_evaluate_rows AS SELECT h.* FROM tbl_houses h, generate_series(1, 50) k;
ANALYZE tbl_evaluate_rows;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT kernel_evaluate((SELECT model FROM tbl_models), h) FROM tbl_evaluate_rows h;
SELECT kernel_evaluate((SELECT model FROM tbl_models), h) AS parallel FROM tbl_evaluate_rows h \gset
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;
-- the sums of partial states may differ in the last bits from the serial order
SELECT e->'n' = p->'n' AND e->'skipped' = p->'skipped' AS same_counts,
	   abs((e->>'rmse')::float8 - (p->>'rmse')::float8) < 1e-9 * (p->>'rmse')::float8 AND
	   abs((e->>'mae')::float8 - (p->>'mae')::float8) < 1e-9 * (p->>'mae')::float8 AND
	   abs((e->>'r2')::float8 - (p->>'r2')::float8) < 1e-12 AS same_serial
FROM (SELECT kernel_evaluate((SELECT model FROM tbl_models), h) AS e FROM tbl_evaluate_rows h) s,
	 (SELECT :'parallel'::jsonb AS p) q;
RESET max_parallel_workers_per_gather;
DROP TABLE tbl_evaluate_rows;
-- errors: a row without the target column names it
SELECT kernel_evaluate(m.model, r)
FROM tbl_models m, (SELECT 70 AS area, 2 AS rooms, 'paris' AS city, true AS garden, 'red'::tbl_colour AS colour) r;
-- a target of another kind than a regression model's
SELECT kernel_evaluate(m.model, r)
FROM tbl_models m, (SELECT 70 AS area, 2 AS rooms, 'paris' AS city, true AS garden,
						   'red'::tbl_colour AS colour, 'cheap' AS price) r;
-- a label that is not a class of the classifier
SELECT kernel_evaluate(c.model, r)
FROM tbl_classifier c, (SELECT 70 AS area, 2 AS rooms, 'red'::tbl_colour AS colour, 'rome' AS city) r;
-- a model without columns: the float8[] form is the way
SELECT kernel_evaluate(a.model, h) FROM tbl_array_model a, tbl_houses h;

-- a table model written before models recorded their target column (its
-- encoder of version 1, as test/fuzz/make_seed writes ridge_encoder): it
-- still reads and scores rows; kernel_evaluate(model, row) says why not
CREATE TABLE tbl_v1_model AS SELECT decode(
	'4b4d4c4d020050005f0100000000000001010301010001000300000002000000000000000000e03f000000000000f03f' ||
	'030000000000000000000000000000000000000000000000050000001254b81501000100200000000000000000000000' ||
	'0000e03f000000000000f0bf000000000000f03f0000000000000040ec4130f202000100500000000000000003000000' ||
	'00000000000000000000d03f000000000000e0bf000000000000f03f000000000000f03f000000000000004000000000' ||
	'00000840000000000000104000000000000014400000000000001840ce5958cf03000100100000000000000000000000' ||
	'0000f03f00000000000000003ff633880400010008000000000000000000000000000000c6a546e71000000037000000' ||
	'000000000100000001000000020000000300000001000000630004000000746578740002010000020000000100000001' ||
	'0000006100010000006200330ff0e9', 'hex') AS model;
SELECT kernel_predict(m.model, r) IS NOT NULL AS scores, kernel_model_info(m.model)->'target' AS target
FROM tbl_v1_model m, (SELECT 'a' AS c) r;
SELECT kernel_evaluate(m.model, r) FROM tbl_v1_model m, (SELECT 'a' AS c, 1.0 AS y) r;
DROP TABLE tbl_v1_model;
-- by name: a named model trained from float8[] rows has no columns
SELECT version FROM kernel_model_train('tbl_named', 'SELECT tbl_encode(h), price FROM tbl_houses h',
									   '{"gamma": 0.2, "lambda": 0.1}');
SELECT kernel_predict('tbl_named', h) FROM tbl_houses h WHERE id = 1;
SELECT kernel_predict('tbl_named', tbl_encode(h)) IS NOT NULL AS scores_arrays
FROM tbl_houses h WHERE h.id = 1;
SELECT kernel_predict('tbl_named', '{70, 2, 0, 0, 0, 0, 1, 0, 0, 1}') =
	   kernel_predict('tbl_named', '{70, 2, 0, 0, 0, 0, 1, 0, 0, 1}'::float8[]) AS literal_by_name;
SELECT kernel_model_drop('tbl_named');

-- named models from a table: kernel_model_train(name, relation, target, options)
CREATE TABLE tbl_named_src AS SELECT id, area, rooms, city, garden, colour, price FROM tbl_houses;
SELECT name, version, deployed, metrics->'rows' AS rows, metrics->'rows_skipped' AS skipped
FROM kernel_model_train('tbl_price', 'tbl_named_src'::regclass, 'price',
						'{"features": ["area", "rooms", "city", "garden", "colour"], "impute": "mean",
						  "gamma": 0.2, "lambda": 0.1, "test_fraction": 0}');
SELECT source_query, options FROM kernel_models WHERE name = 'tbl_price';
-- the same model as the aggregate's on the same rows, scored by name
SELECT max(abs(kernel_predict('tbl_price', h) - kernel_predict(m.model, h))) < 1e-9 AS same
FROM tbl_named_src h, tbl_models m;
SELECT kernel_model_info(kernel_model_get('tbl_price'))->'columns'->2->'categories' AS categories;
-- kernel_evaluate by name: the deployed version's, as by bytea
SELECT kernel_evaluate('tbl_price', h) = kernel_evaluate(kernel_model_get('tbl_price'), h) AS same,
	   kernel_evaluate('tbl_price', h)->'n' AS n
FROM tbl_named_src h;
-- columns added to the table: retraining reads the stored columns
ALTER TABLE tbl_named_src ADD COLUMN note text DEFAULT 'new';
INSERT INTO tbl_named_src (id, area, rooms, city, garden, colour, price)
VALUES (41, 80, 2, 'rome', true, 'red', 1900);
SELECT name, version, metrics->'rows' AS rows FROM kernel_model_retrain('tbl_price');
SELECT kernel_model_info(model)->'columns'->2->'categories' AS categories, kernel_model_info(model)->'n_features' AS d
FROM kernel_models WHERE name = 'tbl_price' AND version = 2;
-- named training's own options ("refit") pass through
SELECT name, version, metrics->'refit' AS refit
FROM kernel_model_train('tbl_refit', 'tbl_named_src'::regclass, 'price',
						'{"features": ["rooms", "colour"], "refit": true, "deploy": "always"}');
SELECT kernel_model_drop('tbl_refit');
-- a classifier by name
SELECT name, version, deployed
FROM kernel_model_train('tbl_city', 'tbl_named_src'::regclass, 'city',
						'{"features": ["area", "rooms"], "impute": "median", "method": "logistic",
						  "deploy": "always"}');
SELECT count(*) AS scored FROM tbl_named_src h WHERE kernel_predict_class('tbl_city', h) IS NOT NULL;
SELECT kernel_evaluate('tbl_city', h) = kernel_evaluate(kernel_model_get('tbl_city'), h) AS same,
	   kernel_evaluate('tbl_city', h)->'skipped' AS skipped
FROM tbl_named_src h;
-- a used column dropped: retraining names it
ALTER TABLE tbl_named_src DROP COLUMN garden;
SELECT version FROM kernel_model_retrain('tbl_price');
-- errors at training: a column the table does not have
SELECT version FROM kernel_model_train('tbl_bad', 'tbl_named_src'::regclass, 'cost', '{}');
SELECT version FROM kernel_model_train('tbl_bad', 'tbl_named_src'::regclass, 'price', '{"features": ["garden"]}');
SELECT kernel_model_drop('tbl_price');
SELECT kernel_model_drop('tbl_city');
DROP TABLE tbl_named_src;

-- a model whose encoder section is damaged is refused (the encoder
-- section, tag 16, ends 32 bytes before the end: the GP section, tag 17,
-- follows it)
SELECT kernel_predict(overlay(model PLACING '\xff'::bytea FROM length(model) - 52), h) FROM tbl_models, tbl_houses h WHERE id = 1;
SELECT kernel_model_info(overlay(model PLACING '\xff'::bytea FROM length(model) - 52)) FROM tbl_models;

DROP FUNCTION tbl_encode(tbl_houses);
DROP VIEW tbl_stats;
DROP TABLE tbl_houses, tbl_models, tbl_array_model, tbl_classifier;
DROP TYPE tbl_colour;
-- the copies of text values count against kernel_ml.max_memory with the rows
-- (20,000 rows of one of three 960-byte categories: about 19 MB of copies)
SET kernel_ml.max_memory = '8MB';
DO $$
BEGIN
  PERFORM kernel_train(b, 'y', '{"lambda": 1, "approximation": "nystrom", "components": 10}')
  FROM (SELECT i::float8 AS y, repeat(md5((i % 3)::text), 30) AS label_text, i % 7 AS x
        FROM generate_series(1, 20000) i) b;
  RAISE NOTICE 'trained';
EXCEPTION WHEN program_limit_exceeded THEN
  RAISE NOTICE 'refused: %', SQLSTATE;
END $$;
RESET kernel_ml.max_memory;
