-- The bytea states of kernel_basis and kernel_train(f, y, options, basis)
-- (issue 20): a crafted or mismatched state, passed to any support function
-- through an aggregate of one's own (its INITCOND, or its own transition
-- function in front of the final function), is refused with a clean
-- SQLSTATE; a basis that changes between the rows of one call is refused
-- before it is used; the per-backend cache of parsed options and bases
-- (kept for Citus, which calls the transition function through a fresh
-- FmgrInfo for every row) gives the same models as the plain path.
SET extra_float_digits = 0;
\set VERBOSITY sqlstate
SET max_parallel_workers_per_gather = 0;
CREATE SCHEMA states;
SET search_path = states, public;

CREATE TABLE sdata AS
SELECT i AS id, ARRAY[sin(i), cos(0.3 * i), (i % 11) / 11.0]::float8[] AS f,
       sin(i) * cos(0.3 * i) AS y
FROM generate_series(1, 600) i;

-- byte helpers: little-endian integers, and a patch at a byte offset
CREATE FUNCTION le32(v bigint) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT decode(string_agg(lpad(to_hex((v >> (8 * i)) & 255), 2, '0'), '' ORDER BY i), 'hex')
  FROM generate_series(0, 3) i $$;
CREATE FUNCTION le64(v bigint) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT le32(v & 4294967295) || le32(v >> 32) $$;
CREATE FUNCTION patch(b bytea, off int, v bytea) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT overlay(b placing v from off + 1 for length(v)) $$;

-- the raw states, as an aggregate without a final function returns them
CREATE AGGREGATE basis_state(float8[], jsonb) (SFUNC = kernel_basis_sfunc, STYPE = bytea);
CREATE AGGREGATE train_state(float8[], float8, jsonb, bytea) (SFUNC = kernel_train_basis_sfunc, STYPE = bytea);

-- kernel_basis states (issue 28: the pass aggregate's, pass_desc.h): a
-- header (magic 0, key 4, ..., d 20, ...), then the learner's basis pass
-- state, km_basis_state (basis.h), whose offsets as a bytea without its
-- length word (0.3.0's state) start at 656 (where its magic is):
-- magic 0, version 4, kind 6, d 8, components 12, capacity 16,
-- n_centres 20, max_slot 24, ..., rows 68, data 76; no buffered row once
-- flat, then what the state carries (its pass's descriptor)
CREATE TABLE crafted (name text PRIMARY KEY, state bytea);
INSERT INTO crafted
SELECT 'basis_ok', basis_state(f, '{"approximation": "nystrom", "components": 3, "seed": 1, "gamma": 0.5}')
FROM sdata WHERE id <= 3;
SELECT position('\x53424d4b'::bytea IN state) - 1 AS at, get_byte(state, 656 + 8) AS d,
       get_byte(state, 656 + 20) AS centres
FROM crafted WHERE name = 'basis_ok';
-- a header that claims 200000 features over no data
INSERT INTO crafted SELECT 'basis_d', patch(state, 656 + 8, le32(200000)) FROM crafted WHERE name = 'basis_ok';
-- capacity (and components) 10^6 in a 3-row state
INSERT INTO crafted SELECT 'basis_cap', patch(patch(state, 656 + 12, le32(1000000)), 656 + 16, le32(1000000))
FROM crafted WHERE name = 'basis_ok';
-- more centres than the capacity; a max_slot beyond them
INSERT INTO crafted SELECT 'basis_n', patch(state, 656 + 20, le32(4)) FROM crafted WHERE name = 'basis_ok';
INSERT INTO crafted SELECT 'basis_slot', patch(state, 656 + 24, le32(7)) FROM crafted WHERE name = 'basis_ok';
-- a kernel_train state or a few bytes where a basis state belongs
INSERT INTO crafted VALUES ('short', '\x5342'), ('empty', '');

-- a transition function in front of the final function: it returns the
-- crafted state named by its argument
CREATE FUNCTION crafted_sfunc(s bytea, name text) RETURNS bytea LANGUAGE sql STABLE AS $$
  SELECT state FROM crafted c WHERE c.name = crafted_sfunc.name $$;
CREATE AGGREGATE basis_final_of(text) (SFUNC = crafted_sfunc, STYPE = bytea, FINALFUNC = kernel_basis_final);
CREATE AGGREGATE basis_combine_of(bytea) (SFUNC = kernel_basis_combine, STYPE = bytea, FINALFUNC = kernel_basis_final);
CREATE AGGREGATE train_final_of(text) (SFUNC = crafted_sfunc, STYPE = bytea,
  FINALFUNC = kernel_train_basis_final, FINALFUNC_MODIFY = READ_WRITE);
CREATE AGGREGATE train_combine_of(bytea) (SFUNC = kernel_train_basis_combine, STYPE = bytea,
  FINALFUNC = kernel_train_basis_final, FINALFUNC_MODIFY = READ_WRITE);

-- the genuine state goes through every support function
SELECT (kernel_basis_info(basis_final_of('basis_ok'))->>'rows')::int AS rows;
SELECT (kernel_basis_info(basis_combine_of(state))->>'rows')::int AS rows FROM crafted WHERE name = 'basis_ok';

-- kernel_basis_final and kernel_basis_combine: every crafted state is 22P03
SELECT basis_final_of('basis_d');
SELECT basis_final_of('basis_cap');
SELECT basis_final_of('basis_n');
SELECT basis_final_of('basis_slot');
SELECT basis_final_of('short');
SELECT basis_final_of('empty');
SELECT basis_combine_of(state) FROM crafted WHERE name = 'basis_d';
SELECT basis_combine_of(state) FROM crafted WHERE name = 'basis_cap';
SELECT basis_combine_of(state) FROM crafted WHERE name = 'short';

-- kernel_basis_sfunc: an aggregate whose INITCOND is the crafted state,
-- fed rows of the length the header claims
CREATE FUNCTION crafted_basis_agg(agg text, name text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE AGGREGATE %I(float8[], jsonb) (SFUNC = kernel_basis_sfunc, STYPE = bytea, '
                 'FINALFUNC = kernel_basis_final, INITCOND = %L)',
                 agg, '\x' || encode((SELECT state FROM crafted c WHERE c.name = crafted_basis_agg.name), 'hex'));
END $$;
SELECT crafted_basis_agg('basis_d_agg', 'basis_d');
SELECT crafted_basis_agg('basis_cap_agg', 'basis_cap');
SELECT crafted_basis_agg('basis_n_agg', 'basis_n');
SELECT crafted_basis_agg('basis_ok_agg', 'basis_ok');
SELECT basis_d_agg(array_fill(0.5::float8, ARRAY[200000]), '{"approximation": "nystrom", "components": 3, "seed": 1, "gamma": 0.5}');
SELECT basis_cap_agg(f, '{"approximation": "nystrom", "components": 8192, "seed": 1, "gamma": 0.5}') FROM sdata;
SELECT basis_n_agg(f, '{"approximation": "nystrom", "components": 3, "seed": 1, "gamma": 0.5}') FROM sdata;
-- a valid INITCOND continues, with the options it was made with only
SELECT (kernel_basis_info(basis_ok_agg(f, '{"approximation": "nystrom", "components": 3, "seed": 1, "gamma": 0.5}'))->>'rows')::int AS rows
FROM sdata WHERE id > 3;
SELECT basis_ok_agg(f, '{"approximation": "nystrom", "components": 4, "seed": 1, "gamma": 0.5}') FROM sdata;

-- kernel_train states (issue 28: the pass aggregate's, pass_desc.h), offsets
-- in the bytea without its length word: magic 0, key 4, state_bytes 12,
-- d 20, cap 24, nbuf 28, external 32, added 36, rows 44, skipped 52,
-- carry_len 60, ...; then the learner's sums, the rows still buffered
-- (none once flat: they are added first) and what the state carries (the
-- settings and the sums pass's descriptor, the basis inside) at the end
CREATE TABLE sbasis AS
SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 4, "seed": 1}') AS b FROM sdata;
INSERT INTO crafted
SELECT 'train_ok', train_state(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1}', b)
FROM sdata, sbasis WHERE id <= 3;
SELECT get_byte(state, 0) AS magic_byte, get_byte(state, 20) AS d, get_byte(state, 28) AS buffered,
       get_byte(state, 44) AS rows FROM crafted WHERE name = 'train_ok';
-- sums that claim dimension 100000 (their bytes) over a state of dimension 4
INSERT INTO crafted SELECT 'train_dim', patch(state, 12, le64(100000::bigint * 100001 / 2 * 8))
FROM crafted WHERE name = 'train_ok';
-- 10^6 buffered rows, a row in a buffer of none, 200000 features
INSERT INTO crafted SELECT 'train_pending', patch(state, 28, le32(1000000)) FROM crafted WHERE name = 'train_ok';
INSERT INTO crafted SELECT 'train_full', patch(state, 28, le32(1)) FROM crafted WHERE name = 'train_ok';
INSERT INTO crafted SELECT 'train_d', patch(state, 20, le32(200000)) FROM crafted WHERE name = 'train_ok';
-- another key (another pass's state), another byte of what it carries
INSERT INTO crafted SELECT 'train_key', patch(state, 4, le32(12345)) FROM crafted WHERE name = 'train_ok';
INSERT INTO crafted SELECT 'train_carry', patch(state, length(state) - ((get_byte(state, 60) + 256 * get_byte(state, 61) + 7) / 8 * 8), le32(0))
FROM crafted WHERE name = 'train_ok';

SELECT kernel_model_info(train_final_of('train_ok'))->'n_centers' AS n_centers;
SELECT train_final_of('train_dim');
SELECT train_final_of('train_pending');
SELECT train_final_of('train_d');
SELECT train_final_of('train_key');
SELECT train_final_of('train_carry');
SELECT train_final_of('basis_ok');
SELECT train_final_of('short');
SELECT train_combine_of(state) FROM crafted WHERE name = 'train_dim';
SELECT train_combine_of(state) FROM crafted WHERE name = 'train_pending';
SELECT train_combine_of(state) FROM crafted WHERE name = 'train_key';
SELECT train_combine_of(state) FROM crafted WHERE name = 'train_carry';
SELECT train_combine_of(state) FROM crafted WHERE name = 'basis_ok';

CREATE FUNCTION crafted_train_agg(agg text, name text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE AGGREGATE %I(float8[], float8, jsonb, bytea) (SFUNC = kernel_train_basis_sfunc, '
                 'STYPE = bytea, FINALFUNC = kernel_train_basis_final, FINALFUNC_MODIFY = READ_WRITE, INITCOND = %L)',
                 agg, '\x' || encode((SELECT state FROM crafted c WHERE c.name = crafted_train_agg.name), 'hex'));
END $$;
SELECT crafted_train_agg('train_dim_agg', 'train_dim');
SELECT crafted_train_agg('train_pending_agg', 'train_pending');
SELECT crafted_train_agg('train_d_agg', 'train_d');
SELECT crafted_train_agg('train_full_agg', 'train_full');
SELECT crafted_train_agg('train_basis_agg', 'basis_ok');
SELECT crafted_train_agg('train_ok_agg', 'train_ok');
SELECT train_dim_agg(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1}', b) FROM sdata, sbasis;
SELECT train_pending_agg(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1}', b) FROM sdata, sbasis;
SELECT train_full_agg(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1}', b) FROM sdata, sbasis;
SELECT train_d_agg(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1}', b) FROM sdata, sbasis;
SELECT train_basis_agg(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1}', b) FROM sdata, sbasis;
-- a genuine state continues; with another basis or other lambdas it is refused
SELECT kernel_model_info(train_ok_agg(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1}', b))->'n_centers' AS n_centers
FROM sdata, sbasis WHERE id > 3;
SELECT train_ok_agg(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1}',
                    (SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 4, "seed": 2}') FROM sdata))
FROM sdata;
SELECT train_ok_agg(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1, "lambda": 0.5}', b) FROM sdata, sbasis;

-- F1: the basis must be the same for every row of a call
\set VERBOSITY default
CREATE TABLE bases AS
SELECT 'd3m4' AS name, kernel_basis(f, '{"approximation": "nystrom", "components": 4, "seed": 1}') AS b FROM sdata
UNION ALL
SELECT 'd2m4', kernel_basis(f[1:2], '{"approximation": "nystrom", "components": 4, "seed": 1}') FROM sdata
UNION ALL
SELECT 'd3m64', kernel_basis(f, '{"approximation": "nystrom", "components": 64, "seed": 1}') FROM sdata
UNION ALL
SELECT 'd3m4s2', kernel_basis(f, '{"approximation": "nystrom", "components": 4, "seed": 2}') FROM sdata
UNION ALL
SELECT 'rff3', kernel_basis(f, '{"approximation": "rff", "components": 4, "seed": 1}') FROM sdata
UNION ALL
SELECT 'rff3s2', kernel_basis(f, '{"approximation": "rff", "components": 4, "seed": 2}') FROM sdata;
SELECT name, (kernel_basis_info(b)->>'features')::int AS d, (kernel_basis_info(b)->>'components')::int AS m
FROM bases ORDER BY name;
-- another d, more components, other centres, other random features: 22023
SELECT kernel_train(f[1:(CASE WHEN id < 300 THEN 3 ELSE 2 END)], y, '{"approximation": "nystrom", "components": 4, "seed": 1}',
                    (SELECT b FROM bases WHERE name = CASE WHEN id < 300 THEN 'd3m4' ELSE 'd2m4' END) ORDER BY id)
FROM sdata;
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1}',
                    (SELECT b FROM bases WHERE name = CASE WHEN id < 300 THEN 'd3m4' ELSE 'd3m64' END) ORDER BY id)
FROM sdata;
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1}',
                    (SELECT b FROM bases WHERE name = CASE WHEN id < 300 THEN 'd3m4' ELSE 'd3m4s2' END) ORDER BY id)
FROM sdata;
SELECT kernel_train(f, y, '{"approximation": "rff", "components": 4, "seed": 1}',
                    (SELECT b FROM bases WHERE name = CASE WHEN id < 300 THEN 'rff3' ELSE 'rff3s2' END) ORDER BY id)
FROM sdata;
-- the change on the second row, before a block is flushed
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1}',
                    (SELECT b FROM bases WHERE name = CASE WHEN id = 1 THEN 'd3m4' ELSE 'd3m64' END) ORDER BY id)
FROM sdata;
-- other options on a later row: 22023 too
SELECT kernel_train(f, y, CASE WHEN id < 300 THEN '{"approximation": "nystrom", "components": 4, "seed": 1}'
                               ELSE '{"approximation": "nystrom", "components": 4, "seed": 1, "lambda": 0.5}' END::jsonb,
                    (SELECT b FROM bases WHERE name = 'd3m4') ORDER BY id)
FROM sdata;
-- the same basis from a table on every row, as different datums: accepted
SELECT kernel_model_info(kernel_train(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1}',
                                      (SELECT b FROM bases WHERE name = 'd3m4') || ''::bytea ORDER BY id))->'n_centers' AS n_centers
FROM sdata;

-- F4: rff over huge finite features is 22003 as nystrom is, never a basis
-- that kernel_basis_info or kernel_train then refuses
SELECT kernel_basis(ARRAY[CASE WHEN i % 2 = 0 THEN 1e308 ELSE -1e308 END, 1]::float8[],
                    '{"approximation": "rff", "components": 8}') FROM generate_series(1, 10) i;
SELECT kernel_basis(ARRAY[CASE WHEN i % 2 = 0 THEN 1e308 ELSE -1e308 END, 1]::float8[],
                    '{"approximation": "nystrom", "components": 8}') FROM generate_series(1, 10) i;
SELECT kernel_train(ARRAY[CASE WHEN i % 2 = 0 THEN 1e308 ELSE -1e308 END, 1]::float8[], i,
                    '{"approximation": "rff", "components": 8}') FROM generate_series(1, 10) i;

\set VERBOSITY sqlstate

-- The cache of parsed options and bases: the same models, bit for bit, as
-- a call that parses them afresh; two bases (or options) used in turn are
-- never confused.
CREATE TABLE models AS
SELECT 'n' AS name, kernel_train(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1}',
                                 (SELECT b FROM bases WHERE name = 'd3m4') ORDER BY id) AS m FROM sdata
UNION ALL
SELECT 'n64', kernel_train(f, y, '{"approximation": "nystrom", "components": 64, "seed": 1}',
                           (SELECT b FROM bases WHERE name = 'd3m64') ORDER BY id) FROM sdata
UNION ALL
SELECT 'r', kernel_train(f, y, '{"approximation": "rff", "components": 4, "seed": 1}',
                         (SELECT b FROM bases WHERE name = 'rff3') ORDER BY id) FROM sdata
UNION ALL
SELECT 'r2', kernel_train(f, y, '{"approximation": "rff", "components": 4, "seed": 2}',
                          (SELECT b FROM bases WHERE name = 'rff3s2') ORDER BY id) FROM sdata;
SELECT count(DISTINCT m) AS distinct_models FROM models;
-- again, in consecutive statements, alternating bases of one shape
SELECT m = kernel_train(f, y, '{"approximation": "rff", "components": 4, "seed": 1}',
                        (SELECT b FROM bases WHERE name = 'rff3') ORDER BY id) AS same FROM sdata, models WHERE name = 'r' GROUP BY m;
SELECT m = kernel_train(f, y, '{"approximation": "rff", "components": 4, "seed": 2}',
                        (SELECT b FROM bases WHERE name = 'rff3s2') ORDER BY id) AS same FROM sdata, models WHERE name = 'r2' GROUP BY m;
SELECT m = kernel_train(f, y, '{"approximation": "rff", "components": 4, "seed": 1}',
                        (SELECT b FROM bases WHERE name = 'rff3') ORDER BY id) AS same FROM sdata, models WHERE name = 'r' GROUP BY m;
SELECT m = kernel_train(f, y, '{"approximation": "nystrom", "components": 4, "seed": 1}',
                        (SELECT b FROM bases WHERE name = 'd3m4') ORDER BY id) AS same FROM sdata, models WHERE name = 'n' GROUP BY m;
-- both in one statement, rows of the two calls interleaved (hash aggregation)
SET enable_sort = off;
SELECT g, kernel_train(f, y, ('{"approximation": "rff", "components": 4, "seed": ' || g || '}')::jsonb,
                       (SELECT b FROM bases WHERE name = CASE WHEN g = 1 THEN 'rff3' ELSE 'rff3s2' END))
          = (SELECT m FROM models WHERE name = CASE WHEN g = 1 THEN 'r' ELSE 'r2' END) AS same
FROM sdata, (VALUES (1), (2)) v(g) GROUP BY g ORDER BY g;
SELECT kernel_train(f, y, '{"approximation": "rff", "components": 4, "seed": 1}', (SELECT b FROM bases WHERE name = 'rff3'))
         = (SELECT m FROM models WHERE name = 'r') AS same_r,
       kernel_train(f, y, '{"approximation": "nystrom", "components": 64, "seed": 1}', (SELECT b FROM bases WHERE name = 'd3m64'))
         = (SELECT m FROM models WHERE name = 'n64') AS same_n64
FROM sdata;
RESET enable_sort;

-- a process that ran no transition of a state (a parallel leader that only
-- combines, a Citus coordinator): the pass is rebuilt from what the state
-- carries, the same model; a crafted carry is refused there too
CREATE TABLE carried AS SELECT md5(train_final_of('train_ok')) AS here;
\c -
SET search_path = states, public;
SET max_parallel_workers_per_gather = 0;
\set VERBOSITY sqlstate
SELECT md5(train_final_of('train_ok')) = (SELECT here FROM carried) AS same_model;
SELECT md5(train_combine_of(state)) = (SELECT here FROM carried) AS same_combined
FROM crafted WHERE name = 'train_ok';
SELECT train_final_of('train_carry');
SELECT train_final_of('train_key');
RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA states CASCADE;

-- a classifier's options with a basis: an error, not a ridge regression
SELECT kernel_train(f, label::float8,
       '{"method": "logistic", "approximation": "nystrom", "components": 3, "gamma": 0.5, "seed": 1}',
       (SELECT kernel_basis(f, '{"method": "logistic", "approximation": "nystrom", "components": 3, "gamma": 0.5, "seed": 1}')
        FROM (VALUES (ARRAY[1, 2]::float8[]), (ARRAY[2, 1]::float8[]), (ARRAY[0, 1]::float8[])) v(f)))
FROM (VALUES (ARRAY[1, 2]::float8[], 1), (ARRAY[2, 1]::float8[], 0)) r(f, label);
