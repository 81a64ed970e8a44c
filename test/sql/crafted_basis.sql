-- Crafted bases and basis states (issue 29, points 8 and 10).
-- Point 8: kernel_train(f, y, options, basis) compares every row's basis
-- with the call's in full: a basis with other centres whose checksum is
-- forged (same length, header and trailer, so that only the middle
-- differs) is refused when rows mix it with the genuine one, wherever the
-- basis comes from (a column, an expression); a constant, a parameter or
-- a scalar subquery is compared once and gives the same model.
-- Point 10: a crafted rff basis state over a kernel rff does not serve is
-- bad input (22P03), never an internal error (XX000).
SET extra_float_digits = 0;
\set VERBOSITY sqlstate
SET max_parallel_workers_per_gather = 0;
CREATE SCHEMA crafted_basis;
SET search_path = crafted_basis, public;

CREATE TABLE cb AS
SELECT i AS id, ARRAY[sin(i), cos(0.3 * i), (i % 11) / 11.0]::float8[] AS f,
       sin(i) * cos(0.3 * i) AS y
FROM generate_series(1, 600) i;

-- CRC-32C (Castagnoli, reflected 0x82F63B78), the register over bytes
-- lo .. hi - 1 of b from r, and back: what a forger computes
CREATE FUNCTION crc_bytes(r bigint, b bytea, lo int, hi int) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  FOR i IN lo .. hi - 1 LOOP
    r := r # get_byte(b, i);
    FOR k IN 1 .. 8 LOOP
      r := CASE WHEN r & 1 = 1 THEN (r >> 1) # 2197175160 ELSE r >> 1 END;
    END LOOP;
  END LOOP;
  RETURN r;
END $$;
CREATE FUNCTION crc_unbit(r bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN r & 2147483648 <> 0 THEN (((r # 2197175160) << 1) | 1) & 4294967295
              ELSE (r << 1) & 4294967295 END $$;
CREATE FUNCTION crc_unbytes(r bigint, b bytea, lo int, hi int) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  FOR i IN REVERSE hi - 1 .. lo LOOP
    FOR k IN 1 .. 8 LOOP
      r := crc_unbit(r);
    END LOOP;
    r := r # get_byte(b, i);
  END LOOP;
  RETURN r;
END $$;
CREATE FUNCTION le32(v bigint) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT decode(string_agg(lpad(to_hex((v >> (8 * i)) & 255), 2, '0'), '' ORDER BY i), 'hex')
  FROM generate_series(0, 3) i $$;
CREATE FUNCTION read32(b bytea, off int) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT sum(get_byte(b, off + i)::bigint << (8 * i))::bigint FROM generate_series(0, 3) i $$;
CREATE FUNCTION patch(b bytea, off int, v bytea) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT overlay(b placing v from off + 1 for length(v)) $$;
-- The final basis (basis.c), offsets in the bytea without its length word:
-- a 64-byte header, mean[d], scale[d], centres[m][d], then the CRC-32C of
-- bytes 0 .. n - 9 and a zero word.  forge: the 4 bytes at off rewritten
-- so that the bytes keep the stored CRC.
CREATE FUNCTION stored_crc(b bytea) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT read32(b, length(b) - 8) $$;
CREATE FUNCTION crc_of(b bytea) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT crc_bytes(4294967295, b, 0, length(b) - 8) # 4294967295 $$;
CREATE FUNCTION forge(b bytea, off int) RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  before bigint := crc_bytes(4294967295, b, 0, off);
  after bigint := crc_unbytes(stored_crc(b) # 4294967295, b, off + 4, length(b) - 8);
BEGIN
  FOR k IN 1 .. 32 LOOP
    after := crc_unbit(after);
  END LOOP;
  RETURN patch(b, off, le32(before # after));
END $$;

-- the genuine basis (d = 3, m = 5: centres from byte 64 + 16 * 3 = 112), and
-- another whose first centre, a row of seed 2's, replaces the genuine's
-- first; the checksum forged in the low half of the second centre's first
-- feature (a change of its last mantissa bits)
CREATE TABLE bases AS
SELECT 0 AS k, kernel_basis(f, '{"approximation": "nystrom", "components": 5, "seed": 1}') AS b FROM cb;
CREATE TABLE other AS
SELECT kernel_basis(f, '{"approximation": "nystrom", "components": 5, "seed": 2}') AS b FROM cb;
SELECT crc_of(b) = stored_crc(b) AS crc_model_right, length(b) AS bytes FROM bases;
INSERT INTO bases
SELECT 1, forge(patch(g.b, 112, substr(o.b, 113, 24)), 136) FROM bases g, other o WHERE g.k = 0;
SELECT length(f.b) = length(g.b) AS same_length,
       substr(f.b, 1, 92) = substr(g.b, 1, 92) AS same_first_96,
       substr(f.b, length(f.b) - 7) = substr(g.b, length(g.b) - 7) AS same_trailer,
       f.b <> g.b AS differs,
       crc_of(f.b) = stored_crc(f.b) AS crc_forged
FROM bases f, bases g WHERE f.k = 1 AND g.k = 0;
-- the forged basis is a valid basis (its checksum holds) with other centres
SELECT kernel_basis_info(f.b) - 'centers' = kernel_basis_info(g.b) - 'centers' AS same_but_centres,
       kernel_basis_info(f.b)->'centers'->0 <> kernel_basis_info(g.b)->'centers'->0 AS other_centre
FROM bases f, bases g WHERE f.k = 1 AND g.k = 0;

-- rows that mix the two (a column, a join): 22023, never a model
SELECT kernel_train(c.f, c.y, '{"approximation": "nystrom", "components": 5, "seed": 1}', x.b ORDER BY c.id)
FROM cb c JOIN bases x ON x.k = c.id % 2;
-- the forged one from row 400 on
SELECT kernel_train(c.f, c.y, '{"approximation": "nystrom", "components": 5, "seed": 1}', x.b ORDER BY c.id)
FROM cb c JOIN bases x ON x.k = (c.id >= 400)::int;
-- an expression of each row choosing between two scalar subqueries
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 5, "seed": 1}',
                    CASE WHEN id < 300 THEN (SELECT b FROM bases WHERE k = 0)
                         ELSE (SELECT b FROM bases WHERE k = 1) END ORDER BY id)
FROM cb;
-- GROUP BY: one call per group, each with its own basis, is no mix
SELECT g, kernel_model_info(kernel_train(c.f, c.y, '{"approximation": "nystrom", "components": 5, "seed": 1}', x.b))->'n_centers' AS n_centers
FROM (SELECT *, id % 2 AS g FROM cb) c JOIN bases x ON x.k = c.g GROUP BY g ORDER BY g;
-- GROUP BY whose groups mix them (hashed, the states alternate row by row): 22023
SET enable_sort = off;
SELECT c.id % 2 AS g, kernel_model_info(kernel_train(c.f, c.y, '{"approximation": "nystrom", "components": 5, "seed": 1}', x.b))->'n_centers' AS n_centers
FROM cb c JOIN bases x ON x.k = (c.id % 3 = 0)::int GROUP BY c.id % 2;
RESET enable_sort;

-- one basis per call, however it comes: the same model as the constant's
CREATE TABLE models AS
SELECT x.k, (SELECT kernel_train(c.f, c.y, '{"approximation": "nystrom", "components": 5, "seed": 1}', x.b ORDER BY c.id) FROM cb c) AS m
FROM bases x;
SELECT k, kernel_model_info(m)->'n_centers' AS n_centers FROM models ORDER BY k;
SELECT m = (SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 5, "seed": 1}',
                                (SELECT b FROM bases WHERE k = 0) ORDER BY id) FROM cb) AS subquery_same
FROM models WHERE k = 0;
SELECT m = (SELECT kernel_train(c.f, c.y, '{"approximation": "nystrom", "components": 5, "seed": 1}', x.b ORDER BY c.id)
            FROM cb c, bases x WHERE x.k = 0) AS column_same
FROM models WHERE k = 0;
SELECT m = (SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 5, "seed": 1}',
                                (SELECT b FROM bases WHERE k = 0) || ''::bytea ORDER BY id) FROM cb) AS expression_same
FROM models WHERE k = 0;
-- a query parameter ($1 of a generic plan)
SET plan_cache_mode = force_generic_plan;
PREPARE train_with(bytea) AS
SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 5, "seed": 1}', $1 ORDER BY id) AS m FROM cb;
SELECT (SELECT b FROM bases WHERE k = 0) AS b0, (SELECT b FROM bases WHERE k = 1) AS b1 \gset
CREATE TABLE prepared0 AS EXECUTE train_with(:'b0');
CREATE TABLE prepared1 AS EXECUTE train_with(:'b1');
RESET plan_cache_mode;
SELECT p.m = m.m AS parameter_same FROM prepared0 p, models m WHERE m.k = 0;
SELECT p.m = m.m AS parameter_same FROM prepared1 p, models m WHERE m.k = 1;
-- the two bases give two models
SELECT (SELECT m FROM models WHERE k = 0) <> (SELECT m FROM models WHERE k = 1) AS models_differ;

-- Point 10: a basis state of rff (kind 2) whose kernel (offset 28 of the
-- km_basis_state, whose offsets start at 656 in the pass state) is linear (1):
-- every support function refuses it as input, 22P03
CREATE AGGREGATE basis_state(float8[], jsonb) (SFUNC = kernel_basis_sfunc, STYPE = bytea);
CREATE TABLE states AS
SELECT patch(basis_state(f, '{"approximation": "rff", "components": 4, "seed": 1, "gamma": 0.5}'), 656 + 28, le32(1)) AS s
FROM cb WHERE id <= 3;
SELECT get_byte(s, 656 + 6) AS kind, get_byte(s, 656 + 28) AS kernel FROM states;
CREATE FUNCTION crafted_sfunc(s bytea, x int) RETURNS bytea LANGUAGE sql STABLE AS $$
  SELECT s FROM crafted_basis.states $$;
CREATE AGGREGATE basis_final_of(int) (SFUNC = crafted_sfunc, STYPE = bytea, FINALFUNC = kernel_basis_final);
CREATE AGGREGATE basis_combine_of(bytea) (SFUNC = kernel_basis_combine, STYPE = bytea, FINALFUNC = kernel_basis_final);
SELECT basis_final_of(1);
SELECT basis_combine_of(s) FROM states;
DO $$
BEGIN
  EXECUTE format('CREATE AGGREGATE crafted_basis.crafted_agg(float8[], jsonb) (SFUNC = kernel_basis_sfunc, '
                 'STYPE = bytea, FINALFUNC = kernel_basis_final, INITCOND = %L)',
                 '\x' || encode((SELECT s FROM crafted_basis.states), 'hex'));
END $$;
SELECT crafted_agg(NULL::float8[], NULL);
SELECT crafted_agg(f, '{"approximation": "rff", "components": 4, "seed": 1, "gamma": 0.5}') FROM cb;

RESET search_path;
DROP SCHEMA crafted_basis CASCADE;
