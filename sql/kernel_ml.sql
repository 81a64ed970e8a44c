-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION kernel_ml" to load this file. \quit

-- Kernels ---------------------------------------------------------------

CREATE FUNCTION kernel_eval(x float8[], z float8[], options jsonb DEFAULT '{}')
RETURNS float8
AS 'MODULE_PATHNAME', 'kernel_eval'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_eval(float8[], float8[], jsonb) IS
'one kernel value K(x, z); options choose the kernel and its parameters';

-- kernel_matrix(features, options ORDER BY ...): the n x n Gram matrix.

CREATE FUNCTION kernel_matrix_sfunc(internal, float8[], jsonb)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_matrix_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_matrix_final(internal)
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_matrix_final'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

-- No combine function: rows and columns follow the aggregate's input order,
-- which partial aggregation in parallel workers would not keep.
CREATE AGGREGATE kernel_matrix(features float8[], options jsonb) (
	SFUNC = kernel_matrix_sfunc,
	STYPE = internal,
	FINALFUNC = kernel_matrix_final,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE kernel_matrix(float8[], jsonb) IS
'Gram matrix of the input rows as a 2-D array, rows and columns in aggregate input order';

-- kernel_check(features, options): Mercer diagnostics of the Gram matrix.

CREATE FUNCTION kernel_check_final(internal)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_check_final'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE kernel_check(features float8[], options jsonb) (
	SFUNC = kernel_matrix_sfunc,
	STYPE = internal,
	FINALFUNC = kernel_check_final,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE kernel_check(float8[], jsonb) IS
'Mercer diagnostics of the Gram matrix of the input rows: symmetry, extreme eigenvalues, condition number, positive semi-definiteness, effective rank';

-- Training --------------------------------------------------------------

CREATE FUNCTION kernel_train_sfunc(internal, float8[], float8)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_train_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_train_sfunc(internal, float8[], float8, jsonb)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_train_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_train_final(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_train_final'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_train_combine(internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_train_combine'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_train_serialize(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_train_serialize'
LANGUAGE C STRICT PARALLEL SAFE;

CREATE FUNCTION kernel_train_deserialize(bytea, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_train_deserialize'
LANGUAGE C STRICT PARALLEL SAFE;

CREATE AGGREGATE kernel_train(features float8[], target float8) (
	SFUNC = kernel_train_sfunc,
	STYPE = internal,
	FINALFUNC = kernel_train_final,
	COMBINEFUNC = kernel_train_combine,
	SERIALFUNC = kernel_train_serialize,
	DESERIALFUNC = kernel_train_deserialize,
	PARALLEL = SAFE
);

CREATE AGGREGATE kernel_train(features float8[], target float8, options jsonb) (
	SFUNC = kernel_train_sfunc,
	STYPE = internal,
	FINALFUNC = kernel_train_final,
	COMBINEFUNC = kernel_train_combine,
	SERIALFUNC = kernel_train_serialize,
	DESERIALFUNC = kernel_train_deserialize,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE kernel_train(float8[], float8) IS
'train an RBF kernel ridge model (default options) on (features, target) rows; returns the model as bytea';
CREATE FUNCTION kernel_fit_sfunc(internal, float8[], jsonb)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_fit_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_fit_final(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_fit_final'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

-- Methods without a target (kernel PCA): kernel_train's state, combine and
-- serialization (a target of 0 per row), its own final function.
CREATE AGGREGATE kernel_fit(features float8[], options jsonb) (
	SFUNC = kernel_fit_sfunc,
	STYPE = internal,
	FINALFUNC = kernel_fit_final,
	COMBINEFUNC = kernel_train_combine,
	SERIALFUNC = kernel_train_serialize,
	DESERIALFUNC = kernel_train_deserialize,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE kernel_fit(float8[], jsonb) IS
'fit a kernel model without a target on the rows: "method": "pca" (kernel PCA, scikit-learn''s KernelPCA) with "dimensions": k (default 2), read with kernel_transform, or "method": "oneclass" (the one-class SVM, scikit-learn''s OneClassSVM) with "nu" in (0, 1] (default 0.5), read with kernel_predict (the decision value) and kernel_predict_class (inlier or outlier); the kernel options of kernel_train; exact, or approximate with "approximation": "nystrom" or "rff"; returns the model as bytea';

COMMENT ON AGGREGATE kernel_train(float8[], float8, jsonb) IS
'train a kernel model on (features, target) rows with the given options: ridge, lms or svr (epsilon-SVR) regression, or svm or logistic classification of the target''s distinct values; exact, or approximate with "approximation": "nystrom" or "rff"; lambda and gamma grids selected by leave-one-out, GCV or k-fold; returns the model as bytea';

-- Scoring and inspection ------------------------------------------------

CREATE FUNCTION kernel_predict(model bytea, features float8[])
RETURNS float8
AS 'MODULE_PATHNAME', 'kernel_predict'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict(bytea, float8[]) IS
'score one row with a model: the prediction of a regression model, the decision value of a binary classifier (positive means the second class) or of a one-class model (positive means inlier); an error for a multi-class model';

CREATE FUNCTION kernel_predict_std(model bytea, features float8[])
RETURNS float8
AS 'MODULE_PATHNAME', 'kernel_predict_std'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_std(bytea, float8[]) IS
'the predictive standard deviation of a new observation at one row, from the Gaussian-process reading of an exact kernel ridge model: sqrt(s2 (k(x, x) - k_x''(K + lambda I)^-1 k_x + lambda)), the latent part clipped at 0; the factor of K + lambda I is built once per call site and model';

CREATE FUNCTION kernel_transform(model bytea, features float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_transform'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_transform(bytea, float8[]) IS
'the k coordinates of one row under a kernel PCA model (kernel_fit with "method": "pca"), as scikit-learn''s KernelPCA.transform: centred in feature space, each component scaled by 1 / sqrt(eigenvalue), its sign fixed so that its largest coefficient is positive';

CREATE FUNCTION kernel_model_info(model bytea)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_model_info'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_model_info(bytea) IS
'describe a model: format, task, kernel and parameters, method and solver, classes, approximation, convergence, training statistics, model selection, size';

-- Named models ----------------------------------------------------------

-- One row per model name: who owns it and the highest version number it has
-- ever had.  The catalog functions serialise the changes of one name on a row
-- lock of its row here (SELECT ... FOR UPDATE, as the table's owner): no other
-- role can read or lock this table.  The owner is kept twice: by OID in this
-- cluster (renaming the role keeps its models, a new role of a dropped
-- owner's name gets none) and as owner_role (kernel_model_owner), whose
-- text, what a dump carries, is the role's name at the time of the dump, or
-- - for none: rows restored from a dump (COPY, as any INSERT that does not
-- come from the catalog functions) get the OID of the role of that name, or
-- 0 (no owner) when there is none or there was none, so a missing role
-- never fails the restore of the other rows, and a model without an owner
-- is never lent to whichever role has its old OID or its old name.
-- A model's owner as a dump carries it (issue 29, point 5): the value is the
-- role's OID in this cluster; its text is the role's name (quoted as an
-- identifier), or - when there is no owner, which is also what the OID of
-- a dropped role prints as.  A dump is written by the output function, so
-- a model whose role was dropped before the dump is dumped as having no
-- owner, and a restore, whose input function resolves a name in the target
-- cluster (a missing role: no owner, never an error), never gives it to a
-- role that happens to have the dropped role's name there.
CREATE TYPE @extschema@.kernel_model_owner;

CREATE FUNCTION @extschema@.kernel_model_owner_in(pg_catalog.cstring)
RETURNS @extschema@.kernel_model_owner
AS 'MODULE_PATHNAME', 'kernel_model_owner_in'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.kernel_model_owner_in(pg_catalog.cstring) IS
'input of kernel_model_owner: a role name (as an identifier) is that role in this cluster, or no owner (0) when no role has it; - and a bare number (a dropped role''s OID) are no owner';

CREATE FUNCTION @extschema@.kernel_model_owner_out(@extschema@.kernel_model_owner)
RETURNS pg_catalog.cstring
AS 'MODULE_PATHNAME', 'kernel_model_owner_out'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.kernel_model_owner_out(@extschema@.kernel_model_owner) IS
'output of kernel_model_owner: the role''s name, quoted as an identifier where needed, or - for no owner and for a role that no longer exists';

CREATE TYPE @extschema@.kernel_model_owner (
	INPUT = @extschema@.kernel_model_owner_in,
	OUTPUT = @extschema@.kernel_model_owner_out,
	INTERNALLENGTH = 4,
	PASSEDBYVALUE,
	ALIGNMENT = int4
);

COMMENT ON TYPE @extschema@.kernel_model_owner IS
'a model''s owner (kernel_model_names.owner_role): a role OID whose text form is resolved by role name, - for no owner, so a dump and restore keep a model without an owner without one';

CREATE CAST (@extschema@.kernel_model_owner AS pg_catalog.oid) WITHOUT FUNCTION AS IMPLICIT;
CREATE CAST (pg_catalog.oid AS @extschema@.kernel_model_owner) WITHOUT FUNCTION AS ASSIGNMENT;

-- model_id tells models apart that had the same name (and owner): a drop
-- and a new training of the name give the name row a new one, so a retrain
-- that started from the old model stores nothing into the new (issue 29).
-- It is this cluster's: the catalog functions and the restore trigger draw
-- it from kernel_model_ids (no column default: a restored row without one
-- is a dump of 0.3.0, see the trigger).
CREATE SEQUENCE @extschema@.kernel_model_ids;

REVOKE ALL ON SEQUENCE @extschema@.kernel_model_ids FROM PUBLIC;

COMMENT ON SEQUENCE @extschema@.kernel_model_ids IS
'the identities of named models (kernel_model_names.model_id), drawn by the catalog functions and the restore trigger';

CREATE TABLE kernel_model_names (
	name text PRIMARY KEY CHECK (name OPERATOR(pg_catalog.<>) ''),
	owner oid NOT NULL,
	owner_name text,
	last_version integer NOT NULL CHECK (last_version OPERATOR(pg_catalog.>=) 0),
	model_id bigint NOT NULL UNIQUE,
	owner_role @extschema@.kernel_model_owner NOT NULL
);

SELECT pg_catalog.pg_extension_config_dump('kernel_model_names', '');

REVOKE ALL ON kernel_model_names FROM PUBLIC;

COMMENT ON TABLE kernel_model_names IS
'named models: one row per model name, its owner and the highest version number it has had; written only by the catalog functions (kernel_model_train, kernel_model_retrain, kernel_model_deploy, kernel_model_drop, kernel_model_reassign), which lock its row to serialise the changes of one name';
COMMENT ON COLUMN kernel_model_names.name IS 'model name, chosen by its owner';
COMMENT ON COLUMN kernel_model_names.owner IS 'the role that owns the name, by OID in this cluster; 0 or a dropped role''s OID: nobody (only superusers can deploy, drop, reassign or train over it; kernel_model_retrain refuses it); restored rows take it from owner_role';
COMMENT ON COLUMN kernel_model_names.owner_name IS 'the owner''s role name when the catalog last wrote the row (NULL: no owner), for display: a role dropped since keeps its name here, and kernel_model_reassign finds its models by it; a restore never gives the model to a role by this name (but for a dump of 0.3.0, which has no owner_role)';
COMMENT ON COLUMN kernel_model_names.last_version IS 'the highest version number the name has had: the next version is last_version + 1, so a number is never reused for another model, even after the latest version is dropped';
COMMENT ON COLUMN kernel_model_names.owner_role IS 'the owner again (the same OID as owner), as a dump carries it: its text is the role''s name, or - when the role no longer exists or there is none, so a model whose owner was dropped before a dump stays without an owner after a restore; a restore resolves the name in the target cluster (a missing role: no owner)';
COMMENT ON COLUMN kernel_model_names.model_id IS 'the identity of the model under this name in this cluster, new whenever the name is created (a drop and a new training of the name change it, and a restore draws a new one); a retrain stores only into the model_id it started from';

-- One row per trained version.  Roles change it only through the functions
-- below, which check that the caller owns the name (has the privileges of
-- the role in kernel_model_names.owner) and write as the extension's owner;
-- nobody else is granted INSERT, UPDATE or DELETE.  Read access to every
-- model is the SELECT privilege on this table: GRANT SELECT ON kernel_models
-- TO role.  search_path, then drift_reference (0.4.0), are the last columns
-- so that a table updated from 0.1.0 has the same columns in the same order.
CREATE TABLE kernel_models (
	name text NOT NULL CHECK (name OPERATOR(pg_catalog.<>) ''),
	version integer NOT NULL CHECK (version OPERATOR(pg_catalog.>) 0),
	created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	owner text,
	source_query text NOT NULL,
	options jsonb NOT NULL DEFAULT '{}',
	model bytea NOT NULL,
	metrics jsonb NOT NULL,
	n_train bigint NOT NULL,
	n_features integer NOT NULL,
	deployed boolean NOT NULL DEFAULT false,
	search_path text,
	drift_reference bytea,
	PRIMARY KEY (name, version)
);

-- At most one deployed version per name.
CREATE UNIQUE INDEX kernel_models_deployed ON kernel_models (name) WHERE deployed;

-- pg_dump keeps the rows (the table itself comes with CREATE EXTENSION).
SELECT pg_catalog.pg_extension_config_dump('kernel_models', '');

REVOKE ALL ON kernel_models FROM PUBLIC;

COMMENT ON TABLE kernel_models IS
'named models: one row per trained version; written by kernel_model_train, kernel_model_retrain, kernel_model_deploy and kernel_model_drop; GRANT SELECT on it lets a role read and score every model';
COMMENT ON COLUMN kernel_models.name IS 'model name, chosen by its owner';
COMMENT ON COLUMN kernel_models.version IS 'version number within the name: 1, 2, 3, ...; never reused (kernel_model_names.last_version)';
COMMENT ON COLUMN kernel_models.created_at IS 'when the version was trained (transaction start)';
COMMENT ON COLUMN kernel_models.owner IS 'the name of the role that owned the model when this version was stored (kernel_model_retrain: the role its query ran as); NULL if that role no longer existed; the name''s owner now is kernel_model_names.owner';
COMMENT ON COLUMN kernel_models.source_query IS 'the query that yielded (features, target); kernel_model_retrain runs it again, as owner, with search_path';
COMMENT ON COLUMN kernel_models.options IS 'the options given to kernel_model_train; kernel_model_retrain reuses them';
COMMENT ON COLUMN kernel_models.model IS 'the model, as kernel_train returns it';
COMMENT ON COLUMN kernel_models.metrics IS 'split sizes; a digest of the training rows (rows_digest, independent of their order; null for models trained by SQL passes); training and held-out RMSE, MAE and R^2 (regression) or accuracy, balanced accuracy, log-loss, AUC and confusion matrix (classification); the deployment decision with both scores; for a retrain, the version it started from and whether the rows changed since (retrain)';
COMMENT ON COLUMN kernel_models.n_train IS 'rows the stored model was fitted on';
COMMENT ON COLUMN kernel_models.n_features IS 'length of the feature arrays the model takes';
COMMENT ON COLUMN kernel_models.deployed IS 'whether this is the version kernel_predict(name, features) uses; at most one per name';
COMMENT ON COLUMN kernel_models.search_path IS 'the schemas source_query resolved names in when this version was trained (the trainer''s search_path, "$user" expanded, temporary schema left out); kernel_model_retrain pins it, followed by pg_temp; NULL for versions from 0.1.0, which are retrained with "$user", public ("$user" being the owner)';
COMMENT ON COLUMN kernel_models.drift_reference IS 'the training side of the drift test (kernel_model_drift), recorded when the version was trained: J <= 10 features of the model''s basis (kernel values at J of its rows or centres, or J of its random features) and the sums of those features over every usable row the query returned (count, sum, sum of products); NULL for versions trained before 0.4.0 and models without a basis';

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

CREATE FUNCTION kernel_model_train(name text, query text, options jsonb DEFAULT '{}')
RETURNS TABLE (name text, version integer, deployed boolean, metrics jsonb)
AS 'MODULE_PATHNAME', 'kernel_model_train'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION kernel_model_train(text, text, jsonb) IS
'run query (features float8[], target float8 or label text) as the caller in a security-restricted operation, train on a deterministic split, record held-out metrics, store a new version of the named model (name: 1 to 63 bytes; a new name belongs to the caller) with the caller''s search_path, and deploy it per the deploy option';

CREATE FUNCTION kernel_model_retrain(name text)
RETURNS TABLE (name text, version integer, deployed boolean, metrics jsonb)
AS 'MODULE_PATHNAME', 'kernel_model_retrain'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION kernel_model_retrain(text) IS
'train a new version of the named model with the query, options and search_path of its deployed version (its latest when none is deployed; metrics->''retrain'' says which, and whether the rows changed since); the query runs as the model''s owner (never as the caller) in a security-restricted operation, and nothing it sets outlives it; an error, storing nothing, if the model was dropped, re-created or changed owner meanwhile; a null name is an error (22004)';

CREATE FUNCTION kernel_model_retrain(name text, options jsonb)
RETURNS TABLE (name text, version integer, deployed boolean, metrics jsonb)
AS 'MODULE_PATHNAME', 'kernel_model_retrain'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION kernel_model_retrain(text, jsonb) IS
'kernel_model_retrain(name) with options: {"when": "drifted", "alpha": 0.01} first runs the drift test (kernel_model_drift) of the rows the stored query returns now, as the model''s owner, against the version the retrain starts from, and retrains only when its p-value is below alpha (metrics->''retrain''->''drift'' holds the test); otherwise it stores nothing, returns no row and raises a NOTICE with the test; {"when": "always"} (the default) retrains as kernel_model_retrain(name); unknown keys are an error; a null argument is an error (22004)';

CREATE FUNCTION kernel_model_drift(name text, query text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_model_drift'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION kernel_model_drift(text, text) IS
'a linear-time kernel two-sample test (mean embedding, chi-square null) between the rows the deployed version of the named model was trained on (its drift_reference) and the rows of query (its first column: feature arrays; rows with a null array skipped), run as the caller in a security-restricted operation with the caller''s search_path pinned: {statistic, p_value, dof, n_train, n_new, new_rows_skipped, version, features, basis, test}; read access as for kernel_predict(name, features)';

CREATE FUNCTION kernel_model_deploy(name text, version integer)
RETURNS void
AS 'MODULE_PATHNAME', 'kernel_model_deploy'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION kernel_model_deploy(text, integer) IS
'make a version of the named model the deployed one (manual deployment or rollback)';

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
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION kernel_model_reassign(text, regrole) IS
'give every model name owned by the role named old_owner (or left by a dropped role of that name) to new_owner, as REASSIGN OWNED does for database objects, which does not know models; run it before DROP ROLE; the caller needs the privileges of both roles (a dropped role''s models: superuser); returns the number of names reassigned';

CREATE FUNCTION kernel_model_get(name text)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_model_get'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_model_get(text) IS
'the deployed version of the named model, as bytea';

-- The support function of the by-name scoring functions below: a statement
-- over a Citus table gets their bytea twins fed by (SELECT
-- kernel_model_get(name)), so the workers, which have no catalog of named
-- models, get the model's bytes (src/catalog/predict_citus.c).  Internal.
CREATE FUNCTION _kernel_ml_by_name_support(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_ml_by_name_support'
LANGUAGE C STRICT;

COMMENT ON FUNCTION _kernel_ml_by_name_support(internal) IS
'internal: planner support function of the by-name scoring functions; marks them so that a statement over a Citus table scores with the deployed model''s bytes, looked up on the coordinator once per execution';

CREATE FUNCTION kernel_predict(name text, features float8[])
RETURNS float8
AS 'MODULE_PATHNAME', 'kernel_predict_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict(text, float8[]) IS
'score one row with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';

CREATE FUNCTION kernel_predict_std(name text, features float8[])
RETURNS float8
AS 'MODULE_PATHNAME', 'kernel_predict_std_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict_std(text, float8[]) IS
'kernel_predict_std with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';

CREATE FUNCTION kernel_transform(name text, features float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_transform_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_transform(text, float8[]) IS
'kernel_transform with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';

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

CREATE FUNCTION kernel_model_export(model bytea)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_model_export'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION kernel_model_export(bytea) IS
'every number needed to score a model outside the database: kernel and parameters, scaler, intercept, coefficients, centres (or random features), classes';

-- Approximate models (issue 12) ---------------------------------------------

CREATE FUNCTION kernel_basis_sfunc(bytea, float8[], jsonb)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_basis_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_basis_combine(bytea, bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_basis_combine'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_basis_final(bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_basis_final'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE kernel_basis(features float8[], options jsonb) (
	SFUNC = kernel_basis_sfunc,
	STYPE = bytea,
	FINALFUNC = kernel_basis_final,
	COMBINEFUNC = kernel_basis_combine,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE kernel_basis(float8[], jsonb) IS
'the feature basis of an approximate model ("approximation": "nystrom" or "rff"): the scaler and, for nystrom, the centres, the distinct rows of smallest hash of (values, seed); the same in any row order or plan; a fixed-size state that parallel workers and Citus shards combine';

CREATE FUNCTION kernel_basis_info(basis bytea)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_basis_info'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION kernel_basis_info(bytea) IS
'what a kernel_basis result holds: approximation, kernel, gamma, features, components, rows, seed, the scaler (mean, scale) and, for nystrom, the standardized centers';

CREATE FUNCTION kernel_train_basis_sfunc(bytea, float8[], float8, jsonb, bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_train_basis_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_train_basis_combine(bytea, bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_train_basis_combine'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_train_basis_final(bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_train_basis_final'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE kernel_train(features float8[], target float8, options jsonb, basis bytea) (
	SFUNC = kernel_train_basis_sfunc,
	STYPE = bytea,
	FINALFUNC = kernel_train_basis_final,
	FINALFUNC_MODIFY = READ_WRITE,
	COMBINEFUNC = kernel_train_basis_combine,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE kernel_train(float8[], float8, jsonb, bytea) IS
'train an approximate (nystrom or rff) kernel ridge regression over the basis from kernel_basis with the same options, in one pass: a fixed-size state of the m x m sums that parallel workers and Citus shards combine; returns the model as bytea';

-- The per-row hold-out split of named approximate models, whose SQL passes
-- (kernel_model_train, kernel_model_retrain) filter on it.  Internal.
CREATE FUNCTION _kernel_ml_holdout(features float8[], target float8, seed bigint, fraction float8)
RETURNS boolean
AS 'MODULE_PATHNAME', 'kernel_ml_holdout'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION _kernel_ml_holdout(float8[], float8, bigint, float8) IS
'internal: whether named training of an approximate model holds a row out: a hash of its features and target seeded with seed (-0.0 read as 0.0) is below fraction * 2^64';

-- Classification (issue 13) ---------------------------------------------

CREATE FUNCTION kernel_train_label_sfunc(internal, float8[], text)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_train_label_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_train_label_sfunc(internal, float8[], text, jsonb)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_train_label_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE kernel_train(features float8[], label text) (
	SFUNC = kernel_train_label_sfunc,
	STYPE = internal,
	FINALFUNC = kernel_train_final,
	COMBINEFUNC = kernel_train_combine,
	SERIALFUNC = kernel_train_serialize,
	DESERIALFUNC = kernel_train_deserialize,
	PARALLEL = SAFE
);

CREATE AGGREGATE kernel_train(features float8[], label text, options jsonb) (
	SFUNC = kernel_train_label_sfunc,
	STYPE = internal,
	FINALFUNC = kernel_train_final,
	COMBINEFUNC = kernel_train_combine,
	SERIALFUNC = kernel_train_serialize,
	DESERIALFUNC = kernel_train_deserialize,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE kernel_train(float8[], text) IS
'train an RBF kernel SVM classifier (default options) on (features, label) rows; returns the model as bytea';
COMMENT ON AGGREGATE kernel_train(float8[], text, jsonb) IS
'train a kernel classifier on (features, label) rows with the given options: svm (SMO, one-vs-one) or logistic (Newton), two or more classes, class weights, Platt probabilities for exact svm; exact, or approximate with "approximation": "nystrom" or "rff"; lambda and gamma grids selected by k-fold; returns the model as bytea';

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

CREATE FUNCTION kernel_predict_class(model bytea, features float8[])
RETURNS text
AS 'MODULE_PATHNAME', 'kernel_predict_class'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_class(bytea, float8[]) IS
'the predicted class label of one row under a classifier; under a one-class model, inlier (decision value above 0) or outlier';

CREATE FUNCTION kernel_predict_proba(model bytea, features float8[])
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_predict_proba'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_proba(bytea, float8[]) IS
'the probability of every class for one row, as {"label": p, ...}: logistic models, and svm models trained with "probability": true (Platt scaling, which can disagree with kernel_predict_class near the boundary)';

CREATE FUNCTION kernel_predict_proba(model bytea, features float8[], label text)
RETURNS float8
AS 'MODULE_PATHNAME', 'kernel_predict_proba_label'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_proba(bytea, float8[], text) IS
'the probability of one class (an error for a label the model does not have) for one row';

CREATE FUNCTION kernel_predict_class(name text, features float8[])
RETURNS text
AS 'MODULE_PATHNAME', 'kernel_predict_class_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict_class(text, float8[]) IS
'the predicted class label of one row under the deployed version of the named classifier, looked up, and read access checked, once per statement snapshot and current user';

CREATE FUNCTION kernel_predict_proba(name text, features float8[])
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_predict_proba_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict_proba(text, float8[]) IS
'the probability of every class for one row under the deployed version of the named classifier, looked up, and read access checked, once per statement snapshot and current user';

CREATE FUNCTION kernel_predict_proba(name text, features float8[], label text)
RETURNS float8
AS 'MODULE_PATHNAME', 'kernel_predict_proba_label_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict_proba(text, float8[], text) IS
'the probability of one class for one row under the deployed version of the named classifier (an error for a label the model does not have), looked up, and read access checked, once per statement snapshot and current user';

CREATE FUNCTION kernel_model_info(name text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_model_info_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_model_info(text) IS
'describe the deployed version of the named model, as kernel_model_info(bytea) does; read access checked as for scoring by name';

CREATE FUNCTION kernel_model_export(name text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_model_export_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_model_export(text) IS
'every number needed to score the deployed version of the named model outside the database, as kernel_model_export(bytea); read access checked as for scoring by name';

-- Scoring a matrix ------------------------------------------------------
-- Many rows in one call: a 2-D float8 array, one inner array per row
-- (PostgreSQL does not tell float8[][] from float8[], hence the names),
-- scored a panel of rows at a time by two GEMMs.

CREATE FUNCTION kernel_predict_matrix(model bytea, features float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_predict_matrix'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_matrix(bytea, float8[]) IS
'score the rows of a 2-D array (one inner array per row) in one call: kernel_predict''s value per row, in row order';

CREATE FUNCTION kernel_predict_class_matrix(model bytea, features float8[])
RETURNS text[]
AS 'MODULE_PATHNAME', 'kernel_predict_class_matrix'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_class_matrix(bytea, float8[]) IS
'the predicted class of every row of a 2-D array (one inner array per row), in row order';

CREATE FUNCTION kernel_predict_proba_matrix(model bytea, features float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_predict_proba_matrix'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_proba_matrix(bytea, float8[]) IS
'the class probabilities of every row of a 2-D array (one inner array per row), as a rows x classes 2-D array, classes in the model''s sorted label order';

CREATE FUNCTION kernel_predict_std_matrix(model bytea, features float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_predict_std_matrix'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_std_matrix(bytea, float8[]) IS
'kernel_predict_std of every row of a 2-D array (one inner array per row), in row order: a panel of rows at a time, its kernel block by one GEMM and one triangular solve';

CREATE FUNCTION kernel_predict_matrix(name text, features float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_predict_matrix_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict_matrix(text, float8[]) IS
'kernel_predict_matrix with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';

CREATE FUNCTION kernel_predict_std_matrix(name text, features float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_predict_std_matrix_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict_std_matrix(text, float8[]) IS
'kernel_predict_std_matrix with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';

CREATE FUNCTION kernel_predict_class_matrix(name text, features float8[])
RETURNS text[]
AS 'MODULE_PATHNAME', 'kernel_predict_class_matrix_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict_class_matrix(text, float8[]) IS
'kernel_predict_class_matrix with the deployed version of the named classifier, looked up, and read access checked, once per statement snapshot and current user';

CREATE FUNCTION kernel_predict_proba_matrix(name text, features float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_predict_proba_matrix_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict_proba_matrix(text, float8[]) IS
'kernel_predict_proba_matrix with the deployed version of the named classifier, looked up, and read access checked, once per statement snapshot and current user';

-- Evaluation ------------------------------------------------------------
-- kernel_evaluate(model or name, features, target): error measures as
-- jsonb.  The state holds sums (and, for two classes, each row's score for
-- the AUC); partial states combine, so it runs in parallel workers.

CREATE FUNCTION kernel_evaluate_sfunc(internal, bytea, float8[], float8)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_evaluate_sfunc(internal, bytea, float8[], text)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_label_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_evaluate_sfunc(internal, text, float8[], float8)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_by_name_sfunc'
LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_evaluate_sfunc(internal, text, float8[], text)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_label_by_name_sfunc'
LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_evaluate_final(internal)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_evaluate_final'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_evaluate_combine(internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_combine'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_evaluate_serialize(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_evaluate_serialize'
LANGUAGE C STRICT PARALLEL SAFE;

CREATE FUNCTION kernel_evaluate_deserialize(bytea, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_deserialize'
LANGUAGE C STRICT PARALLEL SAFE;

CREATE AGGREGATE kernel_evaluate(model bytea, features float8[], target float8) (
	SFUNC = @extschema@.kernel_evaluate_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_evaluate_final,
	COMBINEFUNC = @extschema@.kernel_evaluate_combine,
	SERIALFUNC = @extschema@.kernel_evaluate_serialize,
	DESERIALFUNC = @extschema@.kernel_evaluate_deserialize,
	PARALLEL = SAFE
);

CREATE AGGREGATE kernel_evaluate(model bytea, features float8[], target text) (
	SFUNC = @extschema@.kernel_evaluate_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_evaluate_final,
	COMBINEFUNC = @extschema@.kernel_evaluate_combine,
	SERIALFUNC = @extschema@.kernel_evaluate_serialize,
	DESERIALFUNC = @extschema@.kernel_evaluate_deserialize,
	PARALLEL = SAFE
);

CREATE AGGREGATE kernel_evaluate(name text, features float8[], target float8) (
	SFUNC = @extschema@.kernel_evaluate_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_evaluate_final,
	COMBINEFUNC = @extschema@.kernel_evaluate_combine,
	SERIALFUNC = @extschema@.kernel_evaluate_serialize,
	DESERIALFUNC = @extschema@.kernel_evaluate_deserialize,
	PARALLEL = SAFE
);

CREATE AGGREGATE kernel_evaluate(name text, features float8[], target text) (
	SFUNC = @extschema@.kernel_evaluate_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_evaluate_final,
	COMBINEFUNC = @extschema@.kernel_evaluate_combine,
	SERIALFUNC = @extschema@.kernel_evaluate_serialize,
	DESERIALFUNC = @extschema@.kernel_evaluate_deserialize,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE kernel_evaluate(bytea, float8[], float8) IS
'error measures of a model on (features, target) rows as jsonb: n, rmse, mae, r2 for regression; for a classifier (the target taken as the label float8out writes) what the text form gives; rows with a NULL argument skipped and counted';
COMMENT ON AGGREGATE kernel_evaluate(bytea, float8[], text) IS
'error measures of a classifier on (features, label) rows as jsonb: n, accuracy, balanced accuracy, log-loss (models with probabilities), AUC (two classes), the confusion matrix, per-class precision, recall, F1 and support; rows with a NULL argument skipped and counted';
COMMENT ON AGGREGATE kernel_evaluate(text, float8[], float8) IS
'kernel_evaluate with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';
COMMENT ON AGGREGATE kernel_evaluate(text, float8[], text) IS
'kernel_evaluate with the deployed version of the named classifier, looked up, and read access checked, once per statement snapshot and current user';

-- kernel_evaluate(model or name, row record): a table model's error
-- measures on whole rows, the features encoded by column names as
-- kernel_predict(model, row) encodes them and the target read from the
-- column the model was trained on; the state is the float8[] forms'.
CREATE FUNCTION kernel_evaluate_sfunc(internal, bytea, record)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_row_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_evaluate_sfunc(internal, text, record)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_row_by_name_sfunc'
LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE kernel_evaluate(model bytea, rec record) (
	SFUNC = @extschema@.kernel_evaluate_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_evaluate_final,
	COMBINEFUNC = @extschema@.kernel_evaluate_combine,
	SERIALFUNC = @extschema@.kernel_evaluate_serialize,
	DESERIALFUNC = @extschema@.kernel_evaluate_deserialize,
	PARALLEL = SAFE
);

CREATE AGGREGATE kernel_evaluate(name text, rec record) (
	SFUNC = @extschema@.kernel_evaluate_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_evaluate_final,
	COMBINEFUNC = @extschema@.kernel_evaluate_combine,
	SERIALFUNC = @extschema@.kernel_evaluate_serialize,
	DESERIALFUNC = @extschema@.kernel_evaluate_deserialize,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE kernel_evaluate(bytea, record) IS
'error measures of a model trained from a table on whole rows, as kernel_evaluate(model, features, target) gives them: each row encoded by column names as kernel_predict(model, row) encodes it, the target read from the column the model was trained on; rows with a NULL row or target skipped and counted';
COMMENT ON AGGREGATE kernel_evaluate(text, record) IS
'kernel_evaluate(model, row) with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';
-- Training from a table (issue 30) --------------------------------------
-- kernel_train(row, 'target', options) over whole rows: every column but the
-- target is a feature (or those "features" lists); numbers, booleans (0 / 1),
-- text and enums (one-hot); NULLs imputed with "impute".  The model keeps
-- the columns, and kernel_predict(model, row) matches them by name.
CREATE FUNCTION kernel_train_row_sfunc(internal, record, text)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_train_row_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_train_row_sfunc(internal, record, text, jsonb)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_train_row_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION kernel_train_row_final(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_train_row_final'
LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE kernel_train(rec record, target text) (
	SFUNC = @extschema@.kernel_train_row_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_train_row_final,
	PARALLEL = SAFE
);

CREATE AGGREGATE kernel_train(rec record, target text, options jsonb) (
	SFUNC = @extschema@.kernel_train_row_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_train_row_final,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE kernel_train(record, text) IS
'train a model on whole rows: the named column is the target, every other column a feature (numbers, booleans as 0 / 1, text and enums one-hot); returns the model, which keeps the columns, as bytea';
COMMENT ON AGGREGATE kernel_train(record, text, jsonb) IS
'train a model on whole rows with the options of kernel_train and "features" (the feature columns), "impute" ("mean", "median" or "most_frequent": NULLs get the training rows'' value), "unknown" ("ignore": an unseen category scores as all zeros; "error"), "categorical" ("onehot"); returns the model as bytea';

CREATE FUNCTION kernel_predict(model bytea, rec record)
RETURNS float8
AS 'MODULE_PATHNAME', 'kernel_predict_row'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict(bytea, record) IS
'score one row of a table with a model trained from a table: its columns matched by name (extra ones ignored), encoded as at training, then scored as kernel_predict(model, features)';

CREATE FUNCTION kernel_predict(name text, rec record)
RETURNS float8
AS 'MODULE_PATHNAME', 'kernel_predict_row_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict(text, record) IS
'score one row of a table with the deployed version of the named model, trained from a table; its columns matched by name';

CREATE FUNCTION kernel_predict_class(model bytea, rec record)
RETURNS text
AS 'MODULE_PATHNAME', 'kernel_predict_class_row'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_class(bytea, record) IS
'the predicted class of one row of a table, with a classifier trained from a table';

CREATE FUNCTION kernel_predict_class(name text, rec record)
RETURNS text
AS 'MODULE_PATHNAME', 'kernel_predict_class_row_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict_class(text, record) IS
'the predicted class of one row of a table with the deployed version of the named classifier, trained from a table';

CREATE FUNCTION kernel_predict_proba(model bytea, rec record)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_predict_proba_row'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_proba(bytea, record) IS
'the probability of every class for one row of a table, with a classifier trained from a table';

CREATE FUNCTION kernel_predict_proba(name text, rec record)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_predict_proba_row_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict_proba(text, record) IS
'the probability of every class for one row of a table with the deployed version of the named classifier, trained from a table';

-- kernel_predict(m, '{1, 2}'): an untyped literal would fit both the
-- float8[] and the record forms; these text forms take it (an unknown
-- literal resolves to text first) and read it as float8[].
CREATE FUNCTION kernel_predict(model bytea, features text)
RETURNS float8
AS 'MODULE_PATHNAME', 'kernel_predict_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict(bytea, text) IS
'kernel_predict(model, features) with the features as a float8[] literal (''{1, 2}''): keeps untyped literals unambiguous beside kernel_predict(model, row)';

CREATE FUNCTION kernel_predict(name text, features text)
RETURNS float8
AS 'MODULE_PATHNAME', 'kernel_predict_text_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict(text, text) IS
'kernel_predict(name, features) with the features as a float8[] literal';

CREATE FUNCTION kernel_predict_class(model bytea, features text)
RETURNS text
AS 'MODULE_PATHNAME', 'kernel_predict_class_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_class(bytea, text) IS
'kernel_predict_class(model, features) with the features as a float8[] literal';

CREATE FUNCTION kernel_predict_class(name text, features text)
RETURNS text
AS 'MODULE_PATHNAME', 'kernel_predict_class_text_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict_class(text, text) IS
'kernel_predict_class(name, features) with the features as a float8[] literal';

CREATE FUNCTION kernel_predict_proba(model bytea, features text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_predict_proba_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_proba(bytea, text) IS
'kernel_predict_proba(model, features) with the features as a float8[] literal';

CREATE FUNCTION kernel_predict_proba(name text, features text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_predict_proba_text_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION kernel_predict_proba(text, text) IS
'kernel_predict_proba(name, features) with the features as a float8[] literal';

-- Named models from a table (issue 30): the stored query reads the table's
-- columns through kernel_table_rows, which encodes them.  options has no
-- default: a three-argument call of untyped literals stays
-- kernel_model_train(name, query, options).
CREATE FUNCTION kernel_table_rows(relation regclass, target_column text, columns text[], options jsonb)
RETURNS TABLE (features float8[], target float8)
AS 'MODULE_PATHNAME', 'kernel_table_rows'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION kernel_table_rows(regclass, text, text[], jsonb) IS
'internal to kernel_model_train(name, relation, target, options): the columns of the table encoded as a table model takes them (imputed, one-hot), with a numeric target; rows without a target as NULLs';

CREATE FUNCTION kernel_table_label_rows(relation regclass, target_column text, columns text[], options jsonb)
RETURNS TABLE (features float8[], target text)
AS 'MODULE_PATHNAME', 'kernel_table_rows'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION kernel_table_label_rows(regclass, text, text[], jsonb) IS
'internal to kernel_model_train(name, relation, target, options): the same as kernel_table_rows with a text, enum or boolean target (a classifier''s labels)';

CREATE FUNCTION kernel_model_train(name text, relation regclass, target text, options jsonb)
RETURNS TABLE (name text, version integer, deployed boolean, metrics jsonb)
AS 'MODULE_PATHNAME', 'kernel_model_train_table'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION kernel_model_train(text, regclass, text, jsonb) IS
'train a new version of a named model from the columns of a table (every column but the target, or those "features" lists; numbers, booleans, one-hot text and enums, NULLs imputed with "impute"); kernel_model_retrain reads the same columns again; score rows with kernel_predict(name, row)';

-- The pass aggregate (issue 28, DESIGN-0.4.md step 5) -----------------------

CREATE FUNCTION @extschema@._kernel_ml_pass_sfunc(bytea, float8[], float8, bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_pass_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION @extschema@._kernel_ml_pass_sfunc(bytea, float8[], text, bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_pass_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION @extschema@._kernel_ml_pass_combine(bytea, bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_pass_combine'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION @extschema@._kernel_ml_pass_final(bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_pass_final'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE @extschema@._kernel_ml_pass(features float8[], target float8, descriptor bytea) (
	SFUNC = @extschema@._kernel_ml_pass_sfunc,
	STYPE = bytea,
	FINALFUNC = @extschema@._kernel_ml_pass_final,
	FINALFUNC_MODIFY = READ_WRITE,
	COMBINEFUNC = @extschema@._kernel_ml_pass_combine,
	PARALLEL = SAFE
);

CREATE AGGREGATE @extschema@._kernel_ml_pass(features float8[], label text, descriptor bytea) (
	SFUNC = @extschema@._kernel_ml_pass_sfunc,
	STYPE = bytea,
	FINALFUNC = @extschema@._kernel_ml_pass_final,
	FINALFUNC_MODIFY = READ_WRITE,
	COMBINEFUNC = @extschema@._kernel_ml_pass_combine,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE @extschema@._kernel_ml_pass(float8[], float8, bytea) IS
'one pass of a training over the rows of its statement (kernel_model_train and kernel_train_query issue it): the descriptor names the pass and its point; a fixed-size bytea state that parallel workers and Citus shards combine';

COMMENT ON AGGREGATE @extschema@._kernel_ml_pass(float8[], text, bytea) IS
'one pass of a classifier''s training over the rows of its statement, the label as text (kernel_model_train and kernel_train_query issue it): the descriptor names the pass and its point; a fixed-size bytea state that parallel workers and Citus shards combine';

CREATE FUNCTION @extschema@.kernel_train_query(query text, options jsonb DEFAULT '{}'::pg_catalog.jsonb)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_train_query'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.kernel_train_query(text, jsonb) IS
'train one model on every usable row a query returns (features, then target or label; or features alone for kernel_fit methods), the same model as the kernel_train aggregate over those rows: an approximate model''s passes (basis, sums, Newton steps, folds, "solver": "cg" iterations) run as statements over the pass aggregate, which parallel workers and Citus shards compute where the rows are; the query runs as the caller, security-restricted, with the search_path pinned';

CREATE FUNCTION @extschema@._kernel_ml_row_side(features float8[], target float8, seed bigint, fraction float8, folds integer)
RETURNS integer
AS 'MODULE_PATHNAME', 'kernel_ml_row_side'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION @extschema@._kernel_ml_row_side(features float8[], label text, seed bigint, fraction float8, folds integer)
RETURNS integer
AS 'MODULE_PATHNAME', 'kernel_ml_row_side'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@._kernel_ml_row_side(float8[], float8, bigint, float8, integer) IS
'where a named training puts a row: NULL for a row with a NULL feature array or target, else 2 fold + held (held 1 when the per-row split holds it out; fold its row hash modulo folds); the counting statement of the aggregate host groups by it';

COMMENT ON FUNCTION @extschema@._kernel_ml_row_side(float8[], text, bigint, float8, integer) IS
'where a named classifier''s training puts a row (its label as text): NULL for a row with a NULL feature array or label, else 2 fold + held';
