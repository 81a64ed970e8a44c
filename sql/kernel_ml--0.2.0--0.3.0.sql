-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION kernel_ml UPDATE TO '0.3.0'" to load this file. \quit

-- kernel_ml 0.2.0 -> 0.3.0.
--
-- The catalog of named models (issue 21): a per-name table kernel_model_names
-- (owner, high-water version number; its row lock serialises the changes of a
-- name instead of an advisory lock any role could take), kernel_models.owner
-- kept as a role name (a dump restores into a cluster that lacks a role
-- without losing the other rows), kernel_model_drop(name, NULL) an error
-- instead of dropping every version, and kernel_model_reassign.  Models
-- themselves (the bytea in kernel_models.model and in user tables) are
-- unchanged.

-- The view reads kernel_models.owner; it is recreated below.
DROP VIEW kernel_models_overview;

CREATE TABLE kernel_model_names (
	name text PRIMARY KEY CHECK (name OPERATOR(pg_catalog.<>) ''),
	owner oid NOT NULL,
	owner_name text,
	last_version integer NOT NULL CHECK (last_version OPERATOR(pg_catalog.>=) 0)
);

SELECT pg_catalog.pg_extension_config_dump('kernel_model_names', '');

REVOKE ALL ON kernel_model_names FROM PUBLIC;

COMMENT ON TABLE kernel_model_names IS
'named models: one row per model name, its owner and the highest version number it has had; written only by the catalog functions (kernel_model_train, kernel_model_retrain, kernel_model_deploy, kernel_model_drop, kernel_model_reassign), which lock its row to serialise the changes of one name';
COMMENT ON COLUMN kernel_model_names.name IS 'model name, chosen by its owner';
COMMENT ON COLUMN kernel_model_names.owner IS 'the role that owns the name, by OID in this cluster; 0 or a dropped role''s OID: nobody (only superusers can deploy, drop, reassign or train over it; kernel_model_retrain refuses it); restored rows take the OID of the role named owner_name';
COMMENT ON COLUMN kernel_model_names.owner_name IS 'the owner''s role name when the catalog last wrote the row (NULL: no owner); what a dump and restore resolve the owner by';
COMMENT ON COLUMN kernel_model_names.last_version IS 'the highest version number the name has had: the next version is last_version + 1, so a number is never reused for another model, even after the latest version is dropped';

-- Every name of the catalog, owned by the owner of its latest version (0.2.0
-- kept one per version; the functions kept them equal), its high-water mark
-- the highest version it has now.  A dropped owner (OID 0, or an OID no role
-- has) stays no one's: owner_name NULL.
INSERT INTO kernel_model_names (name, owner, owner_name, last_version)
SELECT DISTINCT ON (m.name) m.name, m.owner::pg_catalog.oid, r.rolname::pg_catalog.text,
	   (SELECT pg_catalog.max(v.version) FROM @extschema@.kernel_models v
		WHERE v.name OPERATOR(pg_catalog.=) m.name)
FROM @extschema@.kernel_models m LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) m.owner::pg_catalog.oid
ORDER BY m.name, m.version DESC;

-- owner: regrole (dumped by name, a COPY that fails as a whole when one role
-- is missing) -> the role name as text, NULL for a dropped role.
ALTER TABLE kernel_models ALTER COLUMN owner DROP NOT NULL;
ALTER TABLE kernel_models
	ALTER COLUMN owner TYPE text
	USING CASE WHEN pg_catalog.to_regrole(owner::pg_catalog.text)::pg_catalog.oid
					OPERATOR(pg_catalog.=) owner::pg_catalog.oid
			   THEN pg_catalog.pg_get_userbyid(owner::pg_catalog.oid)::pg_catalog.text END;

COMMENT ON COLUMN kernel_models.version IS 'version number within the name: 1, 2, 3, ...; never reused (kernel_model_names.last_version)';
COMMENT ON COLUMN kernel_models.owner IS 'the name of the role that owned the model when this version was stored (kernel_model_retrain: the role its query ran as); NULL if that role no longer existed; the name''s owner now is kernel_model_names.owner';

-- Rows that do not come from the catalog functions (a restore, a superuser's
-- INSERT): owners resolved by name, and every restored version's name given
-- its row in kernel_model_names (a dump of 0.2.0 has none).  Internal.
CREATE FUNCTION _kernel_ml_catalog_restore()
RETURNS trigger
AS 'MODULE_PATHNAME', 'kernel_ml_catalog_restore'
LANGUAGE C;

COMMENT ON FUNCTION _kernel_ml_catalog_restore() IS
'internal: trigger of kernel_model_names and kernel_models for rows that do not come from the catalog functions (pg_restore): resolves owners by role name (0: none) and keeps kernel_model_names complete';

CREATE TRIGGER kernel_model_names_restore BEFORE INSERT ON kernel_model_names
FOR EACH ROW EXECUTE FUNCTION @extschema@._kernel_ml_catalog_restore();

CREATE TRIGGER kernel_models_restore BEFORE INSERT ON kernel_models
FOR EACH ROW EXECUTE FUNCTION @extschema@._kernel_ml_catalog_restore();

-- kernel_model_drop(name, NULL) dropped every version, the deployed one too:
-- the one-argument form does that now, the two-argument form with NULL is an
-- error.  A default cannot be removed by CREATE OR REPLACE.
DROP FUNCTION kernel_model_drop(text, integer);

CREATE FUNCTION kernel_model_drop(name text)
RETURNS integer
AS 'MODULE_PATHNAME', 'kernel_model_drop'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION kernel_model_drop(text) IS
'drop the named model: every version, the deployed one too, and the name itself; returns the number of versions removed';

CREATE FUNCTION kernel_model_drop(name text, version integer)
RETURNS integer
AS 'MODULE_PATHNAME', 'kernel_model_drop'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION kernel_model_drop(text, integer) IS
'drop one version (not the deployed one) of the named model; a NULL version is an error (22004), never "every version"; returns the number of versions removed';

CREATE FUNCTION kernel_model_reassign(old_owner text, new_owner regrole)
RETURNS integer
AS 'MODULE_PATHNAME', 'kernel_model_reassign'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION kernel_model_reassign(text, regrole) IS
'give every model name owned by the role named old_owner (or left by a dropped role of that name) to new_owner, as REASSIGN OWNED does for database objects, which does not know models; run it before DROP ROLE; the caller needs the privileges of both roles (a dropped role''s models: superuser); returns the number of names reassigned';

COMMENT ON FUNCTION kernel_model_retrain(text) IS
'train a new version of the named model with the query, options and search_path of its latest version; the query runs as the model''s owner (never as the caller) in a security-restricted operation, and nothing it sets outlives it; an error, storing nothing, if the model was dropped or changed owner meanwhile';

-- One row per name the caller owns or may read.  A plain view, so it reads
-- the tables with its owner's rights and filters the rows itself: by the
-- table's OID (a temporary table named kernel_models does not stand in for
-- it) and the owner's OID.
CREATE VIEW kernel_models_overview AS
SELECT m.name,
	   n.owner::pg_catalog.regrole AS owner,
	   pg_catalog.max(m.version) FILTER (WHERE m.deployed) AS deployed_version,
	   pg_catalog.count(*)::integer AS versions,
	   pg_catalog.max(m.version) AS latest_version,
	   pg_catalog.max(m.created_at) AS last_trained,
	   (pg_catalog.array_agg(m.metrics) FILTER (WHERE m.deployed))[1] AS deployed_metrics,
	   pg_catalog.max(pg_catalog.octet_length(m.model)) FILTER (WHERE m.deployed) AS deployed_bytes,
	   pg_catalog.sum(pg_catalog.octet_length(m.model))::bigint AS total_bytes
FROM @extschema@.kernel_models m JOIN @extschema@.kernel_model_names n ON n.name OPERATOR(pg_catalog.=) m.name
WHERE pg_catalog.has_table_privilege(m.tableoid, 'SELECT')
   OR pg_catalog.pg_has_role(n.owner, 'USAGE')
GROUP BY m.name, n.owner;

GRANT SELECT ON kernel_models_overview TO PUBLIC;

COMMENT ON VIEW kernel_models_overview IS
'one row per model name the caller owns or may read: owner, deployed version, number of versions, latest version, last training time, deployed metrics and sizes';

-- A boolean label column trains a classifier on the labels 'false' and
-- 'true' (as label::text would): kernel_train(features, churned).
CREATE FUNCTION kernel_train_bool_sfunc(internal, float8[], boolean)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_train_bool_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_train_bool_sfunc(internal, float8[], boolean, jsonb)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_train_bool_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE kernel_train(features float8[], label boolean) (
	SFUNC = kernel_train_bool_sfunc,
	STYPE = internal,
	FINALFUNC = kernel_train_final,
	COMBINEFUNC = kernel_train_combine,
	SERIALFUNC = kernel_train_serialize,
	DESERIALFUNC = kernel_train_deserialize,
	PARALLEL = SAFE
);

CREATE AGGREGATE kernel_train(features float8[], label boolean, options jsonb) (
	SFUNC = kernel_train_bool_sfunc,
	STYPE = internal,
	FINALFUNC = kernel_train_final,
	COMBINEFUNC = kernel_train_combine,
	SERIALFUNC = kernel_train_serialize,
	DESERIALFUNC = kernel_train_deserialize,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE kernel_train(float8[], boolean) IS
'train an RBF kernel SVM classifier (default options) on (features, label) rows with a boolean label, taken as the text labels ''false'' and ''true''; returns the model as bytea';
COMMENT ON AGGREGATE kernel_train(float8[], boolean, jsonb) IS
'train a kernel classifier (svm or logistic) on (features, label) rows with a boolean label, taken as the text labels ''false'' and ''true'', with the given options; returns the model as bytea';

-- Every comment as 0.3.0 words it (sql/kernel_ml.sql): an upgraded install
-- describes its objects exactly as a fresh one.
COMMENT ON FUNCTION kernel_eval(float8[], float8[], jsonb) IS
'one kernel value K(x, z); options choose the kernel and its parameters';
COMMENT ON AGGREGATE kernel_matrix(float8[], jsonb) IS
'Gram matrix of the input rows as a 2-D array, rows and columns in aggregate input order';
COMMENT ON AGGREGATE kernel_check(float8[], jsonb) IS
'Mercer diagnostics of the Gram matrix of the input rows: symmetry, extreme eigenvalues, condition number, positive semi-definiteness, effective rank';
COMMENT ON AGGREGATE kernel_train(float8[], float8) IS
'train an RBF kernel ridge model (default options) on (features, target) rows; returns the model as bytea';
COMMENT ON AGGREGATE kernel_train(float8[], float8, jsonb) IS
'train a kernel model on (features, target) rows with the given options: ridge, lms or svr (epsilon-SVR) regression, or svm or logistic classification of the target''s distinct values; exact, or approximate with "approximation": "nystrom" or "rff"; lambda and gamma grids selected by leave-one-out, GCV or k-fold; returns the model as bytea';
COMMENT ON FUNCTION kernel_predict(bytea, float8[]) IS
'score one row with a model: the prediction of a regression model, the decision value of a binary classifier (positive means the second class); an error for a multi-class model';
COMMENT ON FUNCTION kernel_model_info(bytea) IS
'describe a model: format, task, kernel and parameters, method and solver, classes, approximation, convergence, training statistics, model selection, size';
COMMENT ON TABLE kernel_model_names IS
'named models: one row per model name, its owner and the highest version number it has had; written only by the catalog functions (kernel_model_train, kernel_model_retrain, kernel_model_deploy, kernel_model_drop, kernel_model_reassign), which lock its row to serialise the changes of one name';
COMMENT ON COLUMN kernel_model_names.name IS 'model name, chosen by its owner';
COMMENT ON COLUMN kernel_model_names.owner IS 'the role that owns the name, by OID in this cluster; 0 or a dropped role''s OID: nobody (only superusers can deploy, drop, reassign or train over it; kernel_model_retrain refuses it); restored rows take the OID of the role named owner_name';
COMMENT ON COLUMN kernel_model_names.owner_name IS 'the owner''s role name when the catalog last wrote the row (NULL: no owner); what a dump and restore resolve the owner by';
COMMENT ON COLUMN kernel_model_names.last_version IS 'the highest version number the name has had: the next version is last_version + 1, so a number is never reused for another model, even after the latest version is dropped';
COMMENT ON TABLE kernel_models IS
'named models: one row per trained version; written by kernel_model_train, kernel_model_retrain, kernel_model_deploy and kernel_model_drop; GRANT SELECT on it lets a role read and score every model';
COMMENT ON COLUMN kernel_models.name IS 'model name, chosen by its owner';
COMMENT ON COLUMN kernel_models.version IS 'version number within the name: 1, 2, 3, ...; never reused (kernel_model_names.last_version)';
COMMENT ON COLUMN kernel_models.created_at IS 'when the version was trained (transaction start)';
COMMENT ON COLUMN kernel_models.owner IS 'the name of the role that owned the model when this version was stored (kernel_model_retrain: the role its query ran as); NULL if that role no longer existed; the name''s owner now is kernel_model_names.owner';
COMMENT ON COLUMN kernel_models.source_query IS 'the query that yielded (features, target); kernel_model_retrain runs it again, as owner, with search_path';
COMMENT ON COLUMN kernel_models.options IS 'the options given to kernel_model_train; kernel_model_retrain reuses them';
COMMENT ON COLUMN kernel_models.model IS 'the model, as kernel_train returns it';
COMMENT ON COLUMN kernel_models.metrics IS 'split sizes; training and held-out RMSE, MAE and R^2 (regression) or accuracy, balanced accuracy, log-loss, AUC and confusion matrix (classification); the deployment decision with both scores';
COMMENT ON COLUMN kernel_models.n_train IS 'rows the stored model was fitted on';
COMMENT ON COLUMN kernel_models.n_features IS 'length of the feature arrays the model takes';
COMMENT ON COLUMN kernel_models.deployed IS 'whether this is the version kernel_predict(name, features) uses; at most one per name';
COMMENT ON COLUMN kernel_models.search_path IS 'the schemas source_query resolved names in when this version was trained (the trainer''s search_path, "$user" expanded, temporary schema left out); kernel_model_retrain pins it, followed by pg_temp; NULL for versions from 0.1.0, which are retrained with "$user", public ("$user" being the owner)';
COMMENT ON FUNCTION _kernel_ml_catalog_restore() IS
'internal: trigger of kernel_model_names and kernel_models for rows that do not come from the catalog functions (pg_restore): resolves owners by role name (0: none) and keeps kernel_model_names complete';
COMMENT ON FUNCTION kernel_model_train(text, text, jsonb) IS
'run query (features float8[], target float8 or label text) as the caller in a security-restricted operation, train on a deterministic split, record held-out metrics, store a new version of the named model (name: 1 to 63 bytes; a new name belongs to the caller) with the caller''s search_path, and deploy it per the deploy option';
COMMENT ON FUNCTION kernel_model_retrain(text) IS
'train a new version of the named model with the query, options and search_path of its latest version; the query runs as the model''s owner (never as the caller) in a security-restricted operation, and nothing it sets outlives it; an error, storing nothing, if the model was dropped or changed owner meanwhile';
COMMENT ON FUNCTION kernel_model_deploy(text, integer) IS
'make a version of the named model the deployed one (manual deployment or rollback)';
COMMENT ON FUNCTION kernel_model_drop(text) IS
'drop the named model: every version, the deployed one too, and the name itself; returns the number of versions removed';
COMMENT ON FUNCTION kernel_model_drop(text, integer) IS
'drop one version (not the deployed one) of the named model; a NULL version is an error (22004), never "every version"; returns the number of versions removed';
COMMENT ON FUNCTION kernel_model_reassign(text, regrole) IS
'give every model name owned by the role named old_owner (or left by a dropped role of that name) to new_owner, as REASSIGN OWNED does for database objects, which does not know models; run it before DROP ROLE; the caller needs the privileges of both roles (a dropped role''s models: superuser); returns the number of names reassigned';
COMMENT ON FUNCTION kernel_model_get(text) IS
'the deployed version of the named model, as bytea';
COMMENT ON FUNCTION kernel_predict(text, float8[]) IS
'score one row with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';
COMMENT ON VIEW kernel_models_overview IS
'one row per model name the caller owns or may read: owner, deployed version, number of versions, latest version, last training time, deployed metrics and sizes';
COMMENT ON FUNCTION kernel_model_export(bytea) IS
'every number needed to score a model outside the database: kernel and parameters, scaler, intercept, coefficients, centres (or random features), classes';
COMMENT ON AGGREGATE kernel_basis(float8[], jsonb) IS
'the feature basis of an approximate model ("approximation": "nystrom" or "rff"): the scaler and, for nystrom, the centres, the distinct rows of smallest hash of (values, seed); the same in any row order or plan; a fixed-size state that parallel workers and Citus shards combine';
COMMENT ON FUNCTION kernel_basis_info(bytea) IS
'what a kernel_basis result holds: approximation, kernel, gamma, features, components, rows, seed, the scaler (mean, scale) and, for nystrom, the standardized centers';
COMMENT ON AGGREGATE kernel_train(float8[], float8, jsonb, bytea) IS
'train an approximate (nystrom or rff) kernel ridge regression over the basis from kernel_basis with the same options, in one pass: a fixed-size state of the m x m sums that parallel workers and Citus shards combine; returns the model as bytea';
COMMENT ON FUNCTION _kernel_ml_holdout(float8[], float8, bigint, float8) IS
'internal: whether named training of an approximate model holds a row out: a hash of its features and target seeded with seed (-0.0 read as 0.0) is below fraction * 2^64';
COMMENT ON AGGREGATE kernel_train(float8[], text) IS
'train an RBF kernel SVM classifier (default options) on (features, label) rows; returns the model as bytea';
COMMENT ON AGGREGATE kernel_train(float8[], text, jsonb) IS
'train a kernel classifier on (features, label) rows with the given options: svm (SMO, one-vs-one) or logistic (Newton), two or more classes, class weights, Platt probabilities for exact svm; exact, or approximate with "approximation": "nystrom" or "rff"; lambda and gamma grids selected by k-fold; returns the model as bytea';
COMMENT ON AGGREGATE kernel_train(float8[], boolean) IS
'train an RBF kernel SVM classifier (default options) on (features, label) rows with a boolean label, taken as the text labels ''false'' and ''true''; returns the model as bytea';
COMMENT ON AGGREGATE kernel_train(float8[], boolean, jsonb) IS
'train a kernel classifier (svm or logistic) on (features, label) rows with a boolean label, taken as the text labels ''false'' and ''true'', with the given options; returns the model as bytea';
COMMENT ON FUNCTION kernel_predict_class(bytea, float8[]) IS
'the predicted class label of one row under a classifier';
COMMENT ON FUNCTION kernel_predict_proba(bytea, float8[]) IS
'the probability of every class for one row, as {"label": p, ...}: logistic models, and svm models trained with "probability": true (Platt scaling, which can disagree with kernel_predict_class near the boundary)';
COMMENT ON FUNCTION kernel_predict_proba(bytea, float8[], text) IS
'the probability of one class (an error for a label the model does not have) for one row';
COMMENT ON FUNCTION kernel_predict_class(text, float8[]) IS
'the predicted class label of one row under the deployed version of the named classifier, looked up, and read access checked, once per statement snapshot and current user';
COMMENT ON FUNCTION kernel_predict_proba(text, float8[]) IS
'the probability of every class for one row under the deployed version of the named classifier, looked up, and read access checked, once per statement snapshot and current user';
