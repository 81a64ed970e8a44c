-- Every method x representation x task trains the same bytes from the same
-- rows in any order and under any plan (issue 29, point 6): rows in
-- ascending, descending and a shuffled order, a forced parallel plan, per
-- group of a GROUP BY, and named models whose query orders its rows either
-- way.  Training that holds its rows in memory (exact and approximate
-- aggregates, named exact models) fits them in the order of a hash of each
-- row's values (split.c).
SET extra_float_digits = 0;

CREATE TABLE dall AS
SELECT i AS id, ARRAY[sin(i), cos(0.7 * i), (i % 5) / 5.0]::float8[] AS f,
       sin(i) + 0.3 * cos(2 * i) AS y,
       CASE WHEN sin(3 * i) > 0.3 THEN 'a' WHEN sin(3 * i) > -0.3 THEN 'b' ELSE 'c' END AS lab,
       CASE WHEN sin(3 * i) > 0 THEN 'p' ELSE 'q' END AS lab2,
       i % 2 AS grp
FROM generate_series(1, 240) i;
-- 20 rows twice: identical rows are interchangeable, in any order
INSERT INTO dall SELECT 240 + id, f, y, lab, lab2, grp FROM dall WHERE id <= 20;
ANALYZE dall;

-- tgt: the aggregate's second argument (float8, text or boolean)
CREATE TABLE dcfg (name text, tgt text, opts jsonb);
INSERT INTO dcfg VALUES
  ('ridge exact',                 'y',    '{"method": "ridge"}'),
  ('ridge exact loo grid',        'y',    '{"method": "ridge", "lambda": [0.01, 0.1, 1]}'),
  ('ridge exact gcv grid',        'y',    '{"method": "ridge", "lambda": [0.01, 0.1, 1], "cv": "gcv"}'),
  ('ridge exact kfold grid',      'y',    '{"method": "ridge", "gamma": [0.5, 2], "lambda": [0.01, 0.1], "cv": 4}'),
  ('ridge nystrom',               'y',    '{"method": "ridge", "approximation": "nystrom", "components": 20}'),
  ('ridge rff',                   'y',    '{"method": "ridge", "approximation": "rff", "components": 20}'),
  ('ridge nystrom grid',          'y',    '{"method": "ridge", "approximation": "nystrom", "components": 20, "lambda": [0.01, 0.1, 1]}'),
  ('lms exact',                   'y',    '{"method": "lms"}'),
  ('lms exact kfold grid',        'y',    '{"method": "lms", "lambda": [0.01, 0.1], "cv": 3}'),
  ('svr exact',                   'y',    '{"method": "svr"}'),
  ('svr exact kfold grid',        'y',    '{"method": "svr", "lambda": [0.01, 0.1], "cv": 3}'),
  ('svr nystrom',                 'y',    '{"method": "svr", "approximation": "nystrom", "components": 20}'),
  ('svr rff',                     'y',    '{"method": "svr", "approximation": "rff", "components": 20}'),
  ('svr nystrom kfold grid',      'y',    '{"method": "svr", "approximation": "nystrom", "components": 20, "lambda": [0.01, 0.1], "cv": 3}'),
  ('svm exact',                   'lab',  '{"method": "svm"}'),
  ('svm exact probability',       'lab',  '{"method": "svm", "probability": true}'),
  ('svm exact kfold grid',        'lab',  '{"method": "svm", "lambda": [0.01, 0.1], "cv": 3}'),
  ('svm exact sgd',               'lab2', '{"method": "svm", "solver": "sgd"}'),
  ('svm nystrom',                 'lab',  '{"method": "svm", "approximation": "nystrom", "components": 20}'),
  ('svm rff',                     'lab',  '{"method": "svm", "approximation": "rff", "components": 20}'),
  ('svm float labels',            '(lab2 = ''p'')::int::float8', '{"method": "svm"}'),
  ('svm boolean labels',          'lab2 = ''p''', '{"method": "svm"}'),
  ('logistic exact',              'lab',  '{"method": "logistic"}'),
  ('logistic exact sgd',          'lab2', '{"method": "logistic", "solver": "sgd"}'),
  ('logistic nystrom',            'lab',  '{"method": "logistic", "approximation": "nystrom", "components": 20}'),
  ('logistic rff',                'lab',  '{"method": "logistic", "approximation": "rff", "components": 20}'),
  ('logistic nystrom kfold grid', 'lab',  '{"method": "logistic", "approximation": "nystrom", "components": 20, "lambda": [0.01, 0.1], "cv": 3}');

CREATE TABLE dres (name text, ord text, grp int, model_md5 text);
-- one statement per configuration and order, the options a constant
CREATE VIEW dstatements AS
SELECT c.name, o.ord,
       format('INSERT INTO dres SELECT %L, %L, NULL, md5(kernel_train(f, %s, %L %s)) FROM dall',
              c.name, o.ord, c.tgt, c.opts, o.order_by) AS statement
FROM dcfg c,
     (VALUES ('ascending', 'ORDER BY id'), ('descending', 'ORDER BY id DESC'),
             ('shuffled', 'ORDER BY md5(id::text)'), ('parallel', '')) o(ord, order_by);

\set ECHO none
SELECT statement FROM dstatements WHERE ord <> 'parallel' ORDER BY name, ord \gexec
\set ECHO all

-- a forced parallel plan: partial aggregates in two workers, combined
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF)
SELECT md5(kernel_train(f, y, '{"method": "svr"}')) FROM dall;
EXPLAIN (COSTS OFF)
SELECT md5(kernel_train(f, lab, '{"method": "svm"}')) FROM dall;
\set ECHO none
SELECT statement FROM dstatements WHERE ord = 'parallel' ORDER BY name \gexec
\set ECHO all
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;

-- each configuration trained four ways: one model
SELECT name, count(*) AS orders, count(DISTINCT model_md5) AS models
FROM dres GROUP BY name ORDER BY name;

-- GROUP BY: one model per group, the same in either order
INSERT INTO dres
SELECT c.name, 'group ascending', d.grp, md5(kernel_train(d.f, d.y, c.opts ORDER BY d.id))
FROM dcfg c CROSS JOIN dall d WHERE c.tgt = 'y' GROUP BY c.name, d.grp
UNION ALL
SELECT c.name, 'group descending', d.grp, md5(kernel_train(d.f, d.y, c.opts ORDER BY d.id DESC))
FROM dcfg c CROSS JOIN dall d WHERE c.tgt = 'y' GROUP BY c.name, d.grp
UNION ALL
SELECT c.name, 'group ascending', d.grp, md5(kernel_train(d.f, d.lab, c.opts ORDER BY d.id))
FROM dcfg c CROSS JOIN dall d WHERE c.tgt = 'lab' GROUP BY c.name, d.grp
UNION ALL
SELECT c.name, 'group descending', d.grp, md5(kernel_train(d.f, d.lab, c.opts ORDER BY d.id DESC))
FROM dcfg c CROSS JOIN dall d WHERE c.tgt = 'lab' GROUP BY c.name, d.grp;
-- and a GROUP BY under a forced parallel plan (partial aggregates per group)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF)
SELECT grp, md5(kernel_train(f, y, '{"method": "svr"}')) FROM dall GROUP BY grp;
\set ECHO none
SELECT format('INSERT INTO dres SELECT %L, %L, grp, md5(kernel_train(f, %s, %L)) FROM dall GROUP BY grp',
              name, 'group parallel', tgt, opts)
FROM dcfg WHERE tgt IN ('y', 'lab') ORDER BY name \gexec
\set ECHO all
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
SELECT a.name, count(*) AS groups,
       count(*) FILTER (WHERE a.model_md5 IS DISTINCT FROM b.model_md5
                        OR a.model_md5 IS DISTINCT FROM p.model_md5) AS differing
FROM dres a JOIN dres b USING (name, grp) JOIN dres p USING (name, grp)
WHERE a.ord = 'group ascending' AND b.ord = 'group descending' AND p.ord = 'group parallel'
GROUP BY a.name ORDER BY a.name;

-- named models trained from a query (exact models gather its rows): the
-- query's ORDER BY does not change the model
CREATE FUNCTION dnamed(model_name text, query text, opts jsonb) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM kernel_model_train(model_name, query, opts);
  RETURN (SELECT md5(model) FROM kernel_models WHERE name = model_name
          ORDER BY version DESC LIMIT 1);
END $$;
SET client_min_messages = warning;
SELECT c.name,
       dnamed(c.name || ' asc', format('SELECT f, %s FROM dall ORDER BY id', c.tgt), c.opts || '{"seed": 3}')
     = dnamed(c.name || ' desc', format('SELECT f, %s FROM dall ORDER BY id DESC', c.tgt), c.opts || '{"seed": 3}')
       AS same_model
FROM dcfg c
WHERE c.name IN ('ridge exact', 'ridge exact kfold grid', 'lms exact', 'svr exact',
                 'svr exact kfold grid', 'svm exact', 'logistic exact')
ORDER BY 1;
RESET client_min_messages;
SELECT kernel_model_drop(name) FROM kernel_model_names WHERE name LIKE '% asc' OR name LIKE '% desc';

DROP FUNCTION dnamed(text, text, jsonb);
DROP VIEW dstatements;
DROP TABLE dall, dcfg, dres;
