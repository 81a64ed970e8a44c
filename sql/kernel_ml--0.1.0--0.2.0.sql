-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION kernel_ml UPDATE TO '0.2.0'" to load this file. \quit

-- kernel_ml 0.1.0 -> 0.2.0: the catalog of named models stores its owners by
-- OID and the search_path each version was trained with.  Models themselves
-- (the bytea in kernel_models.model and in user tables) are unchanged.

-- The view reads kernel_models.owner; it is recreated below.
DROP VIEW kernel_models_overview;

-- owner: name -> regrole.  A name that no longer names a role (its role was
-- dropped or renamed after training under 0.1.0) becomes OID 0, shown as
-- '-': such a model can still be read, deployed and dropped by a superuser,
-- but kernel_model_retrain refuses it (42704) rather than run its query as
-- anyone else; kernel_model_train by a superuser gives the name a new owner.
ALTER TABLE kernel_models
	ALTER COLUMN owner TYPE regrole
	USING COALESCE(pg_catalog.to_regrole(pg_catalog.quote_ident(owner::pg_catalog.text)),
							  0::pg_catalog.oid::pg_catalog.regrole);

-- search_path: NULL for versions trained under 0.1.0, which stored none; they
-- are retrained with "$user", public ("$user" being the owner), the default
-- search_path a scheduled job usually ran them with.
ALTER TABLE kernel_models ADD COLUMN search_path text;

COMMENT ON COLUMN kernel_models.owner IS 'the role that owns the name, by OID (0 if it no longer existed when the catalog was updated from 0.1.0); only roles with its privileges can retrain, deploy or drop it; kernel_model_retrain runs source_query as this role, and fails if it was dropped';
COMMENT ON COLUMN kernel_models.source_query IS 'the query that yielded (features, target); kernel_model_retrain runs it again, as owner, with search_path';
COMMENT ON COLUMN kernel_models.search_path IS 'the schemas source_query resolved names in when this version was trained (the trainer''s search_path, "$user" expanded, temporary schema left out); kernel_model_retrain pins it, followed by pg_temp; NULL for versions from 0.1.0, which are retrained with "$user", public ("$user" being the owner)';

COMMENT ON FUNCTION kernel_model_train(text, text, jsonb) IS
'run query (features float8[], target float8) as the caller in a security-restricted operation, train on a deterministic split, record held-out metrics, store a new version of the named model (name: 1 to 63 bytes; a new name belongs to the caller) with the caller''s search_path, and deploy it per the deploy option';
COMMENT ON FUNCTION kernel_model_retrain(text) IS
'train a new version of the named model with the query, options and search_path of its latest version; the query runs as the model''s owner (never as the caller) in a security-restricted operation, and nothing it sets outlives it';
COMMENT ON FUNCTION kernel_predict(text, float8[]) IS
'score one row with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';

-- One row per name the caller owns or may read.  A plain view, so it reads
-- the table with its owner's rights and filters the rows itself: by the
-- table's OID (a temporary table named kernel_models does not stand in for
-- it) and the owner's OID.
CREATE VIEW kernel_models_overview AS
SELECT m.name,
	   m.owner,
	   pg_catalog.max(m.version) FILTER (WHERE m.deployed) AS deployed_version,
	   pg_catalog.count(*)::integer AS versions,
	   pg_catalog.max(m.version) AS latest_version,
	   pg_catalog.max(m.created_at) AS last_trained,
	   (pg_catalog.array_agg(m.metrics) FILTER (WHERE m.deployed))[1] AS deployed_metrics,
	   pg_catalog.max(pg_catalog.octet_length(m.model)) FILTER (WHERE m.deployed) AS deployed_bytes,
	   pg_catalog.sum(pg_catalog.octet_length(m.model))::bigint AS total_bytes
FROM @extschema@.kernel_models m
WHERE pg_catalog.has_table_privilege(m.tableoid, 'SELECT')
   OR pg_catalog.pg_has_role(m.owner::pg_catalog.oid, 'USAGE')
GROUP BY m.name, m.owner;

GRANT SELECT ON kernel_models_overview TO PUBLIC;

COMMENT ON VIEW kernel_models_overview IS
'one row per model name the caller owns or may read: deployed version, number of versions, latest version, last training time, deployed metrics and sizes';

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
'train an approximate (nystrom or rff) kernel ridge model over the basis from kernel_basis with the same options: a fixed-size state of the m x m sums that parallel workers and Citus shards combine; returns the model as bytea';

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
'train a kernel classifier (svm or logistic) on (features, label) rows with the given options; returns the model as bytea';

CREATE FUNCTION kernel_predict_class(model bytea, features float8[])
RETURNS text
AS 'MODULE_PATHNAME', 'kernel_predict_class'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_class(bytea, float8[]) IS
'the predicted class label of one row under a classifier';

CREATE FUNCTION kernel_predict_proba(model bytea, features float8[])
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_predict_proba'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_proba(bytea, float8[]) IS
'the probability of every class for one row, as {"label": p, ...}';

CREATE FUNCTION kernel_predict_proba(model bytea, features float8[], label text)
RETURNS float8
AS 'MODULE_PATHNAME', 'kernel_predict_proba_label'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_proba(bytea, float8[], text) IS
'the probability of one class (an error for a label the model does not have) for one row';

CREATE FUNCTION kernel_predict_class(name text, features float8[])
RETURNS text
AS 'MODULE_PATHNAME', 'kernel_predict_class_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_class(text, float8[]) IS
'the predicted class label of one row under the deployed version of the named classifier, looked up, and read access checked, once per statement snapshot and current user';

CREATE FUNCTION kernel_predict_proba(name text, features float8[])
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_predict_proba_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_proba(text, float8[]) IS
'the probability of every class for one row under the deployed version of the named classifier, looked up, and read access checked, once per statement snapshot and current user';
