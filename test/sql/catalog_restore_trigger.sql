-- _kernel_ml_catalog_restore() is the BEFORE INSERT row trigger of
-- kernel_models and kernel_model_names (issue 29, point 10): called in any
-- other way it refuses with 39P01 (trigger protocol violated), never XX000,
-- and on another table it writes nothing into kernel_model_names (a role
-- could otherwise claim any model name as the catalog's owner).
\set SHOW_CONTEXT never
SELECT _kernel_ml_catalog_restore();
\echo :LAST_ERROR_SQLSTATE

CREATE TABLE km_restore_rows AS
SELECT ARRAY[i::float8, (i % 3)::float8] AS f, 2.0 * i AS y FROM generate_series(1, 12) i;
SELECT name, version FROM kernel_model_train('km_restore_victim', 'SELECT f, y FROM km_restore_rows');

-- a role that owns a table with the columns of kernel_model_names fires the
-- function from its own trigger
CREATE ROLE regress_km_restore_mallory;
GRANT CREATE ON SCHEMA public TO regress_km_restore_mallory;
SET ROLE regress_km_restore_mallory;
CREATE TABLE km_restore_fake (name text, owner oid, owner_name text, last_version integer);
CREATE TRIGGER km_fake_restore BEFORE INSERT ON km_restore_fake
FOR EACH ROW EXECUTE FUNCTION _kernel_ml_catalog_restore();
INSERT INTO km_restore_fake VALUES ('km_restore_victim', 0, 'regress_km_restore_mallory', 1);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO km_restore_fake VALUES ('km_restore_new', 0, 'regress_km_restore_mallory', 1);
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER km_fake_restore ON km_restore_fake;
-- fired after the insert, or per statement
CREATE TRIGGER km_fake_restore AFTER INSERT ON km_restore_fake
FOR EACH ROW EXECUTE FUNCTION _kernel_ml_catalog_restore();
INSERT INTO km_restore_fake VALUES ('km_restore_victim', 0, 'regress_km_restore_mallory', 1);
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER km_fake_restore ON km_restore_fake;
CREATE TRIGGER km_fake_restore BEFORE INSERT ON km_restore_fake
FOR EACH STATEMENT EXECUTE FUNCTION _kernel_ml_catalog_restore();
INSERT INTO km_restore_fake VALUES ('km_restore_victim', 0, 'regress_km_restore_mallory', 1);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- the catalog is unchanged: the victim's name is still the superuser's,
-- and no other name appeared
SELECT name, owner_name = current_user AS owned_by_caller, last_version
FROM kernel_model_names WHERE name LIKE 'km_restore%' ORDER BY name;

-- the real triggers still complete a restored row
INSERT INTO kernel_models (name, version, owner, source_query, options, model, metrics, n_train, n_features)
SELECT 'km_restore_copy', 4, current_user, source_query, options, model, metrics, n_train, n_features
FROM kernel_models WHERE name = 'km_restore_victim';
SELECT name, owner_name = current_user AS owned_by_caller, last_version
FROM kernel_model_names WHERE name = 'km_restore_copy';

SELECT kernel_model_drop('km_restore_victim'), kernel_model_drop('km_restore_copy');
DROP TABLE km_restore_fake, km_restore_rows;
REVOKE CREATE ON SCHEMA public FROM regress_km_restore_mallory;
DROP ROLE regress_km_restore_mallory;
