-- Scoring with per-group models in any row order (issue 22, section 4): a
-- call site keeps several decoded models, recognized by their TOAST pointer
-- or, in-line, by all their bytes, so rows interleaved across groups score
-- exactly as rows sorted by group and as rows scored one at a time.
SET max_parallel_workers_per_gather = 0;
-- the rows table is scanned in storage order and probes a hash of models
SET enable_mergejoin = off;
SET enable_nestloop = off;

-- 12 groups of 400 training rows, each group its own target and classes
CREATE TEMP TABLE gtrain AS
SELECT g, i,
       ARRAY[sin(i * 0.37 + g), cos(i * 0.11 * g), ((i * 7 + g) % 13) / 13.0]::float8[] AS f,
       sin(i * 0.05 * g) + g * 0.1 AS y
FROM generate_series(1, 12) g, generate_series(1, 400) i;
ALTER TABLE gtrain ADD COLUMN label text;
UPDATE gtrain SET label = CASE WHEN f[1] + f[2] * (g % 3 - 1) > 0.3 THEN 'a'
                               WHEN f[3] > 0.5 THEN 'b' ELSE 'c' END;

-- one model per group and kind: exact and approximate, regression and
-- classification; stored out of line when large (TOAST pointers), in line
-- when small
CREATE TEMP TABLE gm (g int, kind text, model bytea);
ALTER TABLE gm ALTER COLUMN model SET STORAGE EXTERNAL;
INSERT INTO gm SELECT g, 'ridge', kernel_train(f, y, '{"lambda": 0.1, "gamma": 0.5}')
FROM gtrain GROUP BY g;
INSERT INTO gm SELECT g, 'nystrom', kernel_train(f, y, '{"lambda": 0.1, "approximation": "nystrom", "components": 20, "seed": 1}')
FROM gtrain GROUP BY g;
INSERT INTO gm SELECT g, 'svm', kernel_train(f, label, '{"lambda": 0.01, "probability": true}')
FROM gtrain GROUP BY g;
INSERT INTO gm SELECT g, 'logistic', kernel_train(f, label, '{"method": "logistic", "lambda": 0.01, "approximation": "nystrom", "components": 20, "seed": 1}')
FROM gtrain GROUP BY g;
SELECT kind, count(DISTINCT model) AS models, min(octet_length(model)) > 2100 AS out_of_line,
       max(octet_length(model)) < 1900 AS in_line
FROM gm GROUP BY kind ORDER BY kind;

-- 20 rows per group to score, stored sorted by group and interleaved
CREATE TEMP TABLE gscore AS
SELECT g, g * 1000 + i AS id,
       ARRAY[sin(i * 1.3 + g), cos(i * 0.7 * g), ((i * 5 + g) % 11) / 11.0]::float8[] AS f
FROM generate_series(1, 12) g, generate_series(1, 20) i;
CREATE TEMP TABLE rows_sorted AS SELECT * FROM gscore ORDER BY g, id;
CREATE TEMP TABLE rows_mixed AS SELECT * FROM gscore ORDER BY hashint4(id), id;
-- consecutive rows of another group, in the order a scan reads them
SELECT count(*) FILTER (WHERE g <> prev) AS group_changes, count(*) AS rows
FROM (SELECT g, lag(g) OVER (ORDER BY ctid) AS prev FROM rows_mixed) s;

-- the predictions of a row with its group's model, as text to compare exactly
CREATE TEMP TABLE preds (ord text, id int, kind text, pred text);
EXPLAIN (COSTS OFF)
SELECT kernel_predict(m.model, t.f) FROM rows_mixed t JOIN gm m USING (g);
INSERT INTO preds
SELECT 'sorted', t.id, m.kind,
       CASE WHEN m.kind IN ('ridge', 'nystrom') THEN kernel_predict(m.model, t.f)::text
            ELSE kernel_predict_class(m.model, t.f) || ' ' || kernel_predict_proba(m.model, t.f)::text
                 || ' ' || kernel_predict_proba(m.model, t.f, 'b')::text END
FROM rows_sorted t JOIN gm m USING (g);
INSERT INTO preds
SELECT 'interleaved', t.id, m.kind,
       CASE WHEN m.kind IN ('ridge', 'nystrom') THEN kernel_predict(m.model, t.f)::text
            ELSE kernel_predict_class(m.model, t.f) || ' ' || kernel_predict_proba(m.model, t.f)::text
                 || ' ' || kernel_predict_proba(m.model, t.f, 'b')::text END
FROM rows_mixed t JOIN gm m USING (g);
-- the same models as in-memory values (no TOAST pointer: compared by bytes)
INSERT INTO preds
SELECT 'interleaved, in memory', t.id, m.kind,
       CASE WHEN m.kind IN ('ridge', 'nystrom') THEN kernel_predict(m.model, t.f)::text
            ELSE kernel_predict_class(m.model, t.f) || ' ' || kernel_predict_proba(m.model, t.f)::text
                 || ' ' || kernel_predict_proba(m.model, t.f, 'b')::text END
FROM rows_mixed t JOIN (SELECT g, kind, model || ''::bytea AS model FROM gm) m USING (g);
-- decoded models bounded to 256 kB (a quarter of kernel_ml.max_memory):
-- the 12 models of a kind do not all fit, so models are evicted and decoded again
SET kernel_ml.max_memory = '1MB';
INSERT INTO preds
SELECT 'interleaved, 256 kB', t.id, m.kind,
       CASE WHEN m.kind IN ('ridge', 'nystrom') THEN kernel_predict(m.model, t.f)::text
            ELSE kernel_predict_class(m.model, t.f) || ' ' || kernel_predict_proba(m.model, t.f)::text
                 || ' ' || kernel_predict_proba(m.model, t.f, 'b')::text END
FROM rows_mixed t JOIN gm m USING (g);
RESET kernel_ml.max_memory;

-- one at a time: a new statement per row, the model a constant
CREATE FUNCTION pg_temp.score_one(model bytea, kind text, f float8[]) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	IF kind IN ('ridge', 'nystrom') THEN
		EXECUTE format('SELECT kernel_predict(%L::bytea, %L::float8[])::text', model, f) INTO r;
	ELSE
		EXECUTE format('SELECT kernel_predict_class(%1$L::bytea, %2$L::float8[]) || '' '' || '
					   'kernel_predict_proba(%1$L::bytea, %2$L::float8[])::text || '' '' || '
					   'kernel_predict_proba(%1$L::bytea, %2$L::float8[], ''b'')::text', model, f) INTO r;
	END IF;
	RETURN r;
END
$$;
INSERT INTO preds
SELECT 'one at a time', t.id, m.kind, pg_temp.score_one(m.model, m.kind, t.f)
FROM rows_mixed t JOIN gm m USING (g);

SELECT p.ord, count(*) AS rows, count(*) FILTER (WHERE p.pred IS DISTINCT FROM s.pred) AS differ
FROM preds p JOIN preds s ON s.ord = 'sorted' AND s.id = p.id AND s.kind = p.kind
GROUP BY p.ord ORDER BY p.ord;
-- what is compared: each group's model gives its own predictions
SELECT kind, round(sum(pred::float8)::numeric, 6) AS sum, count(DISTINCT pred) AS distinct_preds
FROM preds WHERE ord = 'sorted' AND kind IN ('ridge', 'nystrom') GROUP BY kind ORDER BY kind;
SELECT kind, split_part(pred, ' ', 1) AS class, count(*)
FROM preds WHERE ord = 'sorted' AND kind IN ('svm', 'logistic') GROUP BY 1, 2 ORDER BY 1, 2;
SELECT count(DISTINCT kernel_predict(m.model, t.f)) AS one_row_12_models
FROM gm m, gscore t WHERE m.kind = 'ridge' AND t.id = 1001;

-- each model decoded once when rows interleave (DEBUG1 shows the decodes)
SET client_min_messages = debug1;
SELECT count(*), round(sum(kernel_predict(m.model, t.f))::numeric, 6) AS sum
FROM rows_mixed t JOIN gm m USING (g) WHERE m.kind = 'ridge' AND t.g <= 3;
RESET client_min_messages;

-- a model larger than the cache bound is still scored, alone
CREATE TEMP TABLE wide AS
SELECT i, ARRAY(SELECT sin(i * 0.1 + j) FROM generate_series(1, 40) j)::float8[] AS f,
       cos(i * 0.01) AS y
FROM generate_series(1, 1000) i;
CREATE TEMP TABLE gm2 AS
SELECT g, model FROM gm WHERE kind = 'ridge' AND g <= 2
UNION ALL
SELECT 99, kernel_train(f, y, '{"lambda": 0.1}') FROM wide;
CREATE TEMP TABLE rows2 (n int, g int, f float8[]);
INSERT INTO rows2
SELECT n, grp, CASE WHEN grp = 99 THEN (SELECT f FROM wide WHERE i = n)
                    ELSE (SELECT f FROM gscore WHERE id = grp * 1000 + n) END
FROM generate_series(1, 2) n, (VALUES (1), (2), (99)) v(grp) ORDER BY n, grp;
SELECT octet_length(model) > 320000 AS larger_than_256kB FROM gm2 WHERE g = 99;
CREATE TEMP TABLE rows2_one AS
SELECT t.n, t.g, pg_temp.score_one(m.model, 'ridge', t.f)::float8 AS p
FROM rows2 t JOIN gm2 m USING (g);
-- rows in the order (1, 1), (1, 2), (1, 99), (2, 1), (2, 2), (2, 99): the
-- large model evicts the others and is evicted by the next one
SET kernel_ml.max_memory = '1MB';
SET client_min_messages = debug1;
SELECT t.n, t.g,
       kernel_predict((SELECT model FROM gm2 WHERE gm2.g = t.g), t.f) =
       (SELECT p FROM rows2_one o WHERE o.n = t.n AND o.g = t.g) AS same_as_one_at_a_time
FROM (SELECT * FROM rows2 ORDER BY n, g OFFSET 0) t;
RESET client_min_messages;
RESET kernel_ml.max_memory;

-- more groups than the cache holds (256): 300 small in-line models
CREATE TEMP TABLE tiny AS
SELECT g, kernel_train(ARRAY[i::float8], (i * g)::float8, '{"lambda": 0.1}') AS model
FROM generate_series(1, 300) g, generate_series(1, 4) i GROUP BY g;
CREATE TEMP TABLE tiny_rows AS
SELECT g, x FROM generate_series(1, 300) g, (VALUES (0.5), (1.5), (2.5)) v(x)
ORDER BY hashint4(g * 10 + (x * 2)::int);
SELECT count(DISTINCT model) AS models, count(*) FILTER (WHERE a.same) AS same, count(*) AS rows
FROM (SELECT t.g, m.model,
             kernel_predict(m.model, ARRAY[t.x]) = pg_temp.score_one(m.model, 'ridge', ARRAY[t.x])::float8 AS same
      FROM tiny_rows t JOIN tiny m USING (g)) a;

-- models of equal length that differ in a few bytes are not confused: two
-- models trained on rows that differ in one target value, small (in line)
-- and large (TOASTed), stored in a table, scored interleaved
CREATE TEMP TABLE twins (size text, which text, model bytea);
INSERT INTO twins
SELECT 'small', w, kernel_train(f, CASE WHEN w = 'b' AND i = 4 THEN y + 1 ELSE y END, '{"lambda": 0.1}')
FROM (SELECT i, ARRAY[i::float8, (i * 7 % 5)::float8] AS f, (i % 3)::float8 AS y
      FROM generate_series(1, 6) i) d, (VALUES ('a'), ('b')) v(w)
GROUP BY w;
INSERT INTO twins
SELECT 'large', w, kernel_train(f, CASE WHEN w = 'b' AND i = 4 THEN y + 1 ELSE y END, '{"lambda": 0.1}')
FROM (SELECT i, ARRAY[i::float8, (i * 7 % 5)::float8] AS f, (i % 3)::float8 AS y
      FROM generate_series(1, 300) i) d, (VALUES ('a'), ('b')) v(w)
GROUP BY w;
-- same length, different bytes; the first difference is past the first 64 bytes
SELECT a.size, octet_length(a.model) = octet_length(b.model) AS same_length,
       (SELECT min(k) FROM generate_series(0, octet_length(a.model) - 1) k
        WHERE get_byte(a.model, k) <> get_byte(b.model, k)) AS first_difference
FROM twins a JOIN twins b ON a.size = b.size AND a.which = 'a' AND b.which = 'b'
ORDER BY a.size DESC;
CREATE TEMP TABLE twin_rows AS
SELECT n, w AS which, ARRAY[n * 0.5, n % 4]::float8[] AS f
FROM generate_series(1, 10) n, (VALUES ('a'), ('b')) v(w) ORDER BY n, w;
SELECT m.size, count(*) AS rows,
       count(*) FILTER (WHERE kernel_predict(m.model, t.f) = pg_temp.score_one(m.model, 'ridge', t.f)::float8) AS same_as_one_at_a_time
FROM twin_rows t JOIN twins m USING (which) GROUP BY m.size ORDER BY m.size DESC;
-- the twins disagree on these rows, so a confusion would show
SELECT a.size, count(*) FILTER (WHERE kernel_predict(a.model, t.f) <> kernel_predict(b.model, t.f)) AS rows_differ
FROM twins a JOIN twins b ON a.size = b.size AND a.which = 'a' AND b.which = 'b',
     (SELECT DISTINCT f FROM twin_rows) t
GROUP BY a.size ORDER BY a.size DESC;

-- a copy with one byte changed in its body (same length, same first and
-- last 64 bytes, same middle) is another value: decoded, and refused
SET client_min_messages = debug1;
SELECT k, kernel_predict(m, ARRAY[1.0, 2.0]::float8[])
FROM (SELECT 1 AS k, model || ''::bytea AS m FROM twins WHERE size = 'small' AND which = 'a'
      UNION ALL
      SELECT 2, model || ''::bytea FROM twins WHERE size = 'large' AND which = 'a'
      UNION ALL
      SELECT 3, set_byte(model, 1000, get_byte(model, 1000) # 1) FROM twins WHERE size = 'large' AND which = 'a') s;
RESET client_min_messages;

-- a call site that outlives a statement (a PL/pgSQL loop): the variable
-- takes the models of interleaved groups and of the twins in turn
CREATE FUNCTION pg_temp.loop_check() RETURNS TABLE (checked int, differ int)
LANGUAGE plpgsql AS $$
DECLARE
	r record;
	m bytea;
	p float8;
BEGIN
	checked := 0;
	differ := 0;
	FOR r IN SELECT t.id, t.g, t.f FROM rows_mixed t LOOP
		SELECT model INTO m FROM gm WHERE gm.g = r.g AND kind = 'ridge';
		p := kernel_predict(m, r.f);
		checked := checked + 1;
		IF p IS DISTINCT FROM (SELECT pred::float8 FROM preds
							   WHERE ord = 'sorted' AND id = r.id AND kind = 'ridge') THEN
			differ := differ + 1;
		END IF;
	END LOOP;
	FOR r IN SELECT t.which, t.f, w.size FROM twin_rows t, (VALUES ('small'), ('large')) w(size) LOOP
		SELECT model INTO m FROM twins WHERE twins.which = r.which AND twins.size = r.size;
		p := kernel_predict(m, r.f);
		checked := checked + 1;
		IF p IS DISTINCT FROM pg_temp.score_one(m, 'ridge', r.f)::float8 THEN
			differ := differ + 1;
		END IF;
	END LOOP;
	RETURN NEXT;
END
$$;
SELECT * FROM pg_temp.loop_check();
