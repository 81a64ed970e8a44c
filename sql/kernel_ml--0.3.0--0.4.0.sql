-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION kernel_ml UPDATE TO '0.4.0'" to load this file. \quit

-- kernel_ml 0.3.0 -> 0.4.0.
--
-- Every function, aggregate, operator and type this script names is
-- schema-qualified (pg_catalog., @extschema@.): the script runs with the
-- extension's schema on the search path, where another role may have
-- created objects.

-- Issue 29: 0.3.0's view called pg_catalog's aggregates unqualified, so a
-- role with CREATE on the extension's schema could plant, say,
-- array_agg(jsonb) there before CREATE EXTENSION or ALTER EXTENSION UPDATE
-- and have it bound into the view for good, to run as whoever reads it.  The
-- view is recreated qualified.  (0.3.0's other expressions -- its CHECK
-- constraints, the DEFAULT now(), the trigger function -- name operators and
-- functions that match pg_catalog's exactly, which the implicit pg_catalog
-- first on the search path of an extension script resolves before any
-- other schema: they could not be captured.)
CREATE OR REPLACE VIEW kernel_models_overview AS
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
-- Named models: an identity per model, which a drop and a new training of
-- the name change (issue 29, point 4) --------------------------------------

CREATE SEQUENCE @extschema@.kernel_model_ids;

REVOKE ALL ON SEQUENCE @extschema@.kernel_model_ids FROM PUBLIC;

COMMENT ON SEQUENCE @extschema@.kernel_model_ids IS
'the identities of named models (kernel_model_names.model_id), drawn by the catalog functions and the restore trigger';

ALTER TABLE @extschema@.kernel_model_names ADD COLUMN model_id bigint;
UPDATE @extschema@.kernel_model_names
   SET model_id = pg_catalog.nextval('@extschema@.kernel_model_ids'::pg_catalog.regclass);
ALTER TABLE @extschema@.kernel_model_names ALTER COLUMN model_id SET NOT NULL;
ALTER TABLE @extschema@.kernel_model_names ADD UNIQUE (model_id);

COMMENT ON COLUMN @extschema@.kernel_model_names.model_id IS 'the identity of the model under this name in this cluster, new whenever the name is created (a drop and a new training of the name change it, and a restore draws a new one); a retrain stores only into the model_id it started from';

-- Named models: an owner that a dump and restore keep, or keep absent
-- (issue 29, point 5) -------------------------------------------------------

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

ALTER TABLE @extschema@.kernel_model_names ADD COLUMN owner_role @extschema@.kernel_model_owner;
UPDATE @extschema@.kernel_model_names SET owner_role = owner;
ALTER TABLE @extschema@.kernel_model_names ALTER COLUMN owner_role SET NOT NULL;

COMMENT ON COLUMN @extschema@.kernel_model_names.owner IS 'the role that owns the name, by OID in this cluster; 0 or a dropped role''s OID: nobody (only superusers can deploy, drop, reassign or train over it; kernel_model_retrain refuses it); restored rows take it from owner_role';
COMMENT ON COLUMN @extschema@.kernel_model_names.owner_name IS 'the owner''s role name when the catalog last wrote the row (NULL: no owner), for display: a role dropped since keeps its name here, and kernel_model_reassign finds its models by it; a restore never gives the model to a role by this name (but for a dump of 0.3.0, which has no owner_role)';
COMMENT ON COLUMN @extschema@.kernel_model_names.owner_role IS 'the owner again (the same OID as owner), as a dump carries it: its text is the role''s name, or - when the role no longer exists or there is none, so a model whose owner was dropped before a dump stays without an owner after a restore; a restore resolves the name in the target cluster (a missing role: no owner)';

-- Null arguments of the catalog's verbs (issue 30): one rule, an error
-- (22004) naming the argument, so these are no longer STRICT (a null was
-- "nothing to do", no row and no error) ---------------------------------------

ALTER FUNCTION @extschema@.kernel_model_retrain(pg_catalog.text) CALLED ON NULL INPUT;
ALTER FUNCTION @extschema@.kernel_model_deploy(pg_catalog.text, pg_catalog.int4) CALLED ON NULL INPUT;
ALTER FUNCTION @extschema@.kernel_model_reassign(pg_catalog.text, pg_catalog.regrole) CALLED ON NULL INPUT;

-- kernel_model_retrain starts from the deployed version and records a
-- digest of its rows; the "keep" option bounds the versions (issue 30) ----

COMMENT ON FUNCTION @extschema@.kernel_model_retrain(pg_catalog.text) IS
'train a new version of the named model with the query, options and search_path of its deployed version (its latest when none is deployed; metrics->''retrain'' says which, and whether the rows changed since); the query runs as the model''s owner (never as the caller) in a security-restricted operation, and nothing it sets outlives it; an error, storing nothing, if the model was dropped, re-created or changed owner meanwhile; a null name is an error (22004)';
COMMENT ON COLUMN @extschema@.kernel_models.metrics IS 'split sizes; a digest of the training rows (rows_digest, independent of their order; null for models trained by SQL passes); training and held-out RMSE, MAE and R^2 (regression) or accuracy, balanced accuracy, log-loss, AUC and confusion matrix (classification); the deployment decision with both scores; for a retrain, the version it started from and whether the rows changed since (retrain)';
-- By-name twins of every function that takes a model as bytea (issue 30).
CREATE FUNCTION @extschema@.kernel_predict_proba(name text, features float8[], label text)
RETURNS float8
AS 'MODULE_PATHNAME', 'kernel_predict_proba_label_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.kernel_predict_proba(text, float8[], text) IS
'the probability of one class for one row under the deployed version of the named classifier (an error for a label the model does not have), looked up, and read access checked, once per statement snapshot and current user';

CREATE FUNCTION @extschema@.kernel_model_info(name text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_model_info_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.kernel_model_info(text) IS
'describe the deployed version of the named model, as kernel_model_info(bytea) does; read access checked as for scoring by name';

CREATE FUNCTION @extschema@.kernel_model_export(name text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_model_export_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.kernel_model_export(text) IS
'every number needed to score the deployed version of the named model outside the database, as kernel_model_export(bytea); read access checked as for scoring by name';

-- Scoring a matrix ------------------------------------------------------
-- Many rows in one call: a 2-D float8 array, one inner array per row
-- (PostgreSQL does not tell float8[][] from float8[], hence the names),
-- scored a panel of rows at a time by two GEMMs.

CREATE FUNCTION @extschema@.kernel_predict_matrix(model bytea, features float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_predict_matrix'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.kernel_predict_matrix(bytea, float8[]) IS
'score the rows of a 2-D array (one inner array per row) in one call: kernel_predict''s value per row, in row order';

CREATE FUNCTION @extschema@.kernel_predict_class_matrix(model bytea, features float8[])
RETURNS text[]
AS 'MODULE_PATHNAME', 'kernel_predict_class_matrix'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.kernel_predict_class_matrix(bytea, float8[]) IS
'the predicted class of every row of a 2-D array (one inner array per row), in row order';

CREATE FUNCTION @extschema@.kernel_predict_proba_matrix(model bytea, features float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_predict_proba_matrix'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.kernel_predict_proba_matrix(bytea, float8[]) IS
'the class probabilities of every row of a 2-D array (one inner array per row), as a rows x classes 2-D array, classes in the model''s sorted label order';

CREATE FUNCTION @extschema@.kernel_predict_matrix(name text, features float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_predict_matrix_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.kernel_predict_matrix(text, float8[]) IS
'kernel_predict_matrix with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';

CREATE FUNCTION @extschema@.kernel_predict_class_matrix(name text, features float8[])
RETURNS text[]
AS 'MODULE_PATHNAME', 'kernel_predict_class_matrix_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.kernel_predict_class_matrix(text, float8[]) IS
'kernel_predict_class_matrix with the deployed version of the named classifier, looked up, and read access checked, once per statement snapshot and current user';

CREATE FUNCTION @extschema@.kernel_predict_proba_matrix(name text, features float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_predict_proba_matrix_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.kernel_predict_proba_matrix(text, float8[]) IS
'kernel_predict_proba_matrix with the deployed version of the named classifier, looked up, and read access checked, once per statement snapshot and current user';

-- Evaluation ------------------------------------------------------------
-- kernel_evaluate(model or name, features, target): error measures as
-- jsonb.  The state holds sums (and, for two classes, each row's score for
-- the AUC); partial states combine, so it runs in parallel workers.

CREATE FUNCTION @extschema@.kernel_evaluate_sfunc(internal, bytea, float8[], float8)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION @extschema@.kernel_evaluate_sfunc(internal, bytea, float8[], text)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_label_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION @extschema@.kernel_evaluate_sfunc(internal, text, float8[], float8)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_by_name_sfunc'
LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION @extschema@.kernel_evaluate_sfunc(internal, text, float8[], text)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_label_by_name_sfunc'
LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION @extschema@.kernel_evaluate_final(internal)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_evaluate_final'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION @extschema@.kernel_evaluate_combine(internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_combine'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION @extschema@.kernel_evaluate_serialize(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'kernel_evaluate_serialize'
LANGUAGE C STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.kernel_evaluate_deserialize(bytea, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_deserialize'
LANGUAGE C STRICT PARALLEL SAFE;

CREATE AGGREGATE @extschema@.kernel_evaluate(model bytea, features float8[], target float8) (
	SFUNC = @extschema@.kernel_evaluate_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_evaluate_final,
	COMBINEFUNC = @extschema@.kernel_evaluate_combine,
	SERIALFUNC = @extschema@.kernel_evaluate_serialize,
	DESERIALFUNC = @extschema@.kernel_evaluate_deserialize,
	PARALLEL = SAFE
);

CREATE AGGREGATE @extschema@.kernel_evaluate(model bytea, features float8[], target text) (
	SFUNC = @extschema@.kernel_evaluate_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_evaluate_final,
	COMBINEFUNC = @extschema@.kernel_evaluate_combine,
	SERIALFUNC = @extschema@.kernel_evaluate_serialize,
	DESERIALFUNC = @extschema@.kernel_evaluate_deserialize,
	PARALLEL = SAFE
);

CREATE AGGREGATE @extschema@.kernel_evaluate(name text, features float8[], target float8) (
	SFUNC = @extschema@.kernel_evaluate_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_evaluate_final,
	COMBINEFUNC = @extschema@.kernel_evaluate_combine,
	SERIALFUNC = @extschema@.kernel_evaluate_serialize,
	DESERIALFUNC = @extschema@.kernel_evaluate_deserialize,
	PARALLEL = SAFE
);

CREATE AGGREGATE @extschema@.kernel_evaluate(name text, features float8[], target text) (
	SFUNC = @extschema@.kernel_evaluate_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_evaluate_final,
	COMBINEFUNC = @extschema@.kernel_evaluate_combine,
	SERIALFUNC = @extschema@.kernel_evaluate_serialize,
	DESERIALFUNC = @extschema@.kernel_evaluate_deserialize,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE @extschema@.kernel_evaluate(bytea, float8[], float8) IS
'error measures of a model on (features, target) rows as jsonb: n, rmse, mae, r2 for regression; for a classifier (the target taken as the label float8out writes) what the text form gives; rows with a NULL argument skipped and counted';
COMMENT ON AGGREGATE @extschema@.kernel_evaluate(bytea, float8[], text) IS
'error measures of a classifier on (features, label) rows as jsonb: n, accuracy, balanced accuracy, log-loss (models with probabilities), AUC (two classes), the confusion matrix, per-class precision, recall, F1 and support; rows with a NULL argument skipped and counted';
COMMENT ON AGGREGATE @extschema@.kernel_evaluate(text, float8[], float8) IS
'kernel_evaluate with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';
COMMENT ON AGGREGATE @extschema@.kernel_evaluate(text, float8[], text) IS
'kernel_evaluate with the deployed version of the named classifier, looked up, and read access checked, once per statement snapshot and current user';
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
LANGUAGE C STABLE STRICT PARALLEL SAFE;

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
LANGUAGE C STABLE STRICT PARALLEL SAFE;

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
LANGUAGE C STABLE STRICT PARALLEL SAFE;

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
LANGUAGE C STABLE STRICT PARALLEL SAFE;

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
LANGUAGE C STABLE STRICT PARALLEL SAFE;

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
LANGUAGE C STABLE STRICT PARALLEL SAFE;

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
-- Scoring by name in a statement over a Citus table (issue 33): the by-name
-- scoring functions get a support function that marks them, so such a
-- statement scores with their bytea twins fed by (SELECT
-- kernel_model_get(name)) (src/catalog/predict_citus.c) ---------------------
CREATE FUNCTION @extschema@._kernel_ml_by_name_support(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_ml_by_name_support'
LANGUAGE C STRICT;

COMMENT ON FUNCTION @extschema@._kernel_ml_by_name_support(internal) IS
'internal: planner support function of the by-name scoring functions; marks them so that a statement over a Citus table scores with the deployed model''s bytes, looked up on the coordinator once per execution';

ALTER FUNCTION @extschema@.kernel_predict(pg_catalog.text, pg_catalog.float8[]) SUPPORT @extschema@._kernel_ml_by_name_support;
ALTER FUNCTION @extschema@.kernel_predict_class(pg_catalog.text, pg_catalog.float8[]) SUPPORT @extschema@._kernel_ml_by_name_support;
ALTER FUNCTION @extschema@.kernel_predict_proba(pg_catalog.text, pg_catalog.float8[]) SUPPORT @extschema@._kernel_ml_by_name_support;
ALTER FUNCTION @extschema@.kernel_predict_proba(pg_catalog.text, pg_catalog.float8[], pg_catalog.text) SUPPORT @extschema@._kernel_ml_by_name_support;
ALTER FUNCTION @extschema@.kernel_model_info(pg_catalog.text) SUPPORT @extschema@._kernel_ml_by_name_support;
ALTER FUNCTION @extschema@.kernel_model_export(pg_catalog.text) SUPPORT @extschema@._kernel_ml_by_name_support;

-- the by-name forms that 0.4.0 adds before the support function above: marked
-- for the Citus planner hook too (predict_citus.c)
ALTER FUNCTION @extschema@.kernel_predict_matrix(pg_catalog.text, pg_catalog.float8[]) SUPPORT @extschema@._kernel_ml_by_name_support;
ALTER FUNCTION @extschema@.kernel_predict_class_matrix(pg_catalog.text, pg_catalog.float8[]) SUPPORT @extschema@._kernel_ml_by_name_support;
ALTER FUNCTION @extschema@.kernel_predict_proba_matrix(pg_catalog.text, pg_catalog.float8[]) SUPPORT @extschema@._kernel_ml_by_name_support;
ALTER FUNCTION @extschema@.kernel_predict(pg_catalog.text, record) SUPPORT @extschema@._kernel_ml_by_name_support;
ALTER FUNCTION @extschema@.kernel_predict_class(pg_catalog.text, record) SUPPORT @extschema@._kernel_ml_by_name_support;
ALTER FUNCTION @extschema@.kernel_predict_proba(pg_catalog.text, record) SUPPORT @extschema@._kernel_ml_by_name_support;
ALTER FUNCTION @extschema@.kernel_predict(pg_catalog.text, pg_catalog.text) SUPPORT @extschema@._kernel_ml_by_name_support;
ALTER FUNCTION @extschema@.kernel_predict_class(pg_catalog.text, pg_catalog.text) SUPPORT @extschema@._kernel_ml_by_name_support;
ALTER FUNCTION @extschema@.kernel_predict_proba(pg_catalog.text, pg_catalog.text) SUPPORT @extschema@._kernel_ml_by_name_support;

-- kernel_evaluate(model or name, row record): a table model's error
-- measures on whole rows, the features encoded by column names as
-- kernel_predict(model, row) encodes them and the target read from the
-- column the model was trained on; the state is the float8[] forms'.
CREATE FUNCTION @extschema@.kernel_evaluate_sfunc(internal, bytea, record)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_row_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION @extschema@.kernel_evaluate_sfunc(internal, text, record)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_evaluate_row_by_name_sfunc'
LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE @extschema@.kernel_evaluate(model bytea, rec record) (
	SFUNC = @extschema@.kernel_evaluate_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_evaluate_final,
	COMBINEFUNC = @extschema@.kernel_evaluate_combine,
	SERIALFUNC = @extschema@.kernel_evaluate_serialize,
	DESERIALFUNC = @extschema@.kernel_evaluate_deserialize,
	PARALLEL = SAFE
);

CREATE AGGREGATE @extschema@.kernel_evaluate(name text, rec record) (
	SFUNC = @extschema@.kernel_evaluate_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_evaluate_final,
	COMBINEFUNC = @extschema@.kernel_evaluate_combine,
	SERIALFUNC = @extschema@.kernel_evaluate_serialize,
	DESERIALFUNC = @extschema@.kernel_evaluate_deserialize,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE @extschema@.kernel_evaluate(bytea, record) IS
'error measures of a model trained from a table on whole rows, as kernel_evaluate(model, features, target) gives them: each row encoded by column names as kernel_predict(model, row) encodes it, the target read from the column the model was trained on; rows with a NULL row or target skipped and counted';
COMMENT ON AGGREGATE @extschema@.kernel_evaluate(text, record) IS
'kernel_evaluate(model, row) with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';
-- The Gaussian-process reading of exact kernel ridge (issue 32): the
-- predictive standard deviation, by bytea and by name (src/core/model/gp.c) -----
CREATE FUNCTION @extschema@.kernel_predict_std(model pg_catalog.bytea, features pg_catalog.float8[])
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'kernel_predict_std'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.kernel_predict_std(pg_catalog.bytea, pg_catalog.float8[]) IS
'the predictive standard deviation of a new observation at one row, from the Gaussian-process reading of an exact kernel ridge model: sqrt(s2 (k(x, x) - k_x''(K + lambda I)^-1 k_x + lambda)), the latent part clipped at 0; the factor of K + lambda I is built once per call site and model';

CREATE FUNCTION @extschema@.kernel_predict_std(name pg_catalog.text, features pg_catalog.float8[])
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'kernel_predict_std_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION @extschema@.kernel_predict_std(pg_catalog.text, pg_catalog.float8[]) IS
'kernel_predict_std with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';

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
-- The kernel drift test (issue 32, item 4): the training side recorded
-- with each version, the test, and retraining on drift ---------------------
ALTER TABLE @extschema@.kernel_models ADD COLUMN drift_reference pg_catalog.bytea;

COMMENT ON COLUMN @extschema@.kernel_models.drift_reference IS 'the training side of the drift test (kernel_model_drift), recorded when the version was trained: J <= 10 features of the model''s basis (kernel values at J of its rows or centres, or J of its random features) and the sums of those features over every usable row the query returned (count, sum, sum of products); NULL for versions trained before 0.4.0 and models without a basis';

CREATE FUNCTION @extschema@.kernel_model_retrain(name pg_catalog.text, options pg_catalog.jsonb)
RETURNS TABLE (name pg_catalog.text, version pg_catalog.int4, deployed pg_catalog.bool, metrics pg_catalog.jsonb)
AS 'MODULE_PATHNAME', 'kernel_model_retrain'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.kernel_model_retrain(pg_catalog.text, pg_catalog.jsonb) IS
'kernel_model_retrain(name) with options: {"when": "drifted", "alpha": 0.01} first runs the drift test (kernel_model_drift) of the rows the stored query returns now, as the model''s owner, against the version the retrain starts from, and retrains only when its p-value is below alpha (metrics->''retrain''->''drift'' holds the test); otherwise it stores nothing, returns no row and raises a NOTICE with the test; {"when": "always"} (the default) retrains as kernel_model_retrain(name); unknown keys are an error; a null argument is an error (22004)';

CREATE FUNCTION @extschema@.kernel_model_drift(name pg_catalog.text, query pg_catalog.text)
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'kernel_model_drift'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.kernel_model_drift(pg_catalog.text, pg_catalog.text) IS
'a linear-time kernel two-sample test (mean embedding, chi-square null) between the rows the deployed version of the named model was trained on (its drift_reference) and the rows of query (its first column: feature arrays; rows with a null array skipped), run as the caller in a security-restricted operation with the caller''s search_path pinned: {statistic, p_value, dof, n_train, n_new, new_rows_skipped, version, features, basis, test}; read access as for kernel_predict(name, features)';
-- Kernel PCA (issue 32): kernel_fit, an aggregate for methods without a
-- target (kernel_train's state, combine and serialization), and
-- kernel_transform by bytea and by name (src/sql/kernel_fit.c, transform.c) -----
CREATE FUNCTION @extschema@.kernel_fit_sfunc(internal, pg_catalog.float8[], pg_catalog.jsonb)
RETURNS internal
AS 'MODULE_PATHNAME', 'kernel_fit_sfunc'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE FUNCTION @extschema@.kernel_fit_final(internal)
RETURNS pg_catalog.bytea
AS 'MODULE_PATHNAME', 'kernel_fit_final'
LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE @extschema@.kernel_fit(features pg_catalog.float8[], options pg_catalog.jsonb) (
	SFUNC = @extschema@.kernel_fit_sfunc,
	STYPE = internal,
	FINALFUNC = @extschema@.kernel_fit_final,
	COMBINEFUNC = @extschema@.kernel_train_combine,
	SERIALFUNC = @extschema@.kernel_train_serialize,
	DESERIALFUNC = @extschema@.kernel_train_deserialize,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE @extschema@.kernel_fit(pg_catalog.float8[], pg_catalog.jsonb) IS
'fit a kernel model without a target on the rows: "method": "pca" (kernel PCA, scikit-learn''s KernelPCA) with "dimensions": k (default 2) and the kernel options of kernel_train; exact, or approximate with "approximation": "nystrom" or "rff" (one pass of additive sums); returns the model as bytea, read with kernel_transform';

CREATE FUNCTION @extschema@.kernel_transform(model pg_catalog.bytea, features pg_catalog.float8[])
RETURNS pg_catalog.float8[]
AS 'MODULE_PATHNAME', 'kernel_transform'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.kernel_transform(pg_catalog.bytea, pg_catalog.float8[]) IS
'the k coordinates of one row under a kernel PCA model (kernel_fit with "method": "pca"), as scikit-learn''s KernelPCA.transform: centred in feature space, each component scaled by 1 / sqrt(eigenvalue), its sign fixed so that its largest coefficient is positive';

CREATE FUNCTION @extschema@.kernel_transform(name pg_catalog.text, features pg_catalog.float8[])
RETURNS pg_catalog.float8[]
AS 'MODULE_PATHNAME', 'kernel_transform_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION @extschema@.kernel_transform(pg_catalog.text, pg_catalog.float8[]) IS
'kernel_transform with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';

-- One-class SVM (issue 32): "method": "oneclass" of kernel_fit, its decision
-- value by kernel_predict, inlier or outlier by kernel_predict_class.
COMMENT ON AGGREGATE @extschema@.kernel_fit(pg_catalog.float8[], pg_catalog.jsonb) IS
'fit a kernel model without a target on the rows: "method": "pca" (kernel PCA, scikit-learn''s KernelPCA) with "dimensions": k (default 2), read with kernel_transform, or "method": "oneclass" (the one-class SVM, scikit-learn''s OneClassSVM) with "nu" in (0, 1] (default 0.5), read with kernel_predict (the decision value) and kernel_predict_class (inlier or outlier); the kernel options of kernel_train; exact, or approximate with "approximation": "nystrom" or "rff"; returns the model as bytea';

COMMENT ON FUNCTION @extschema@.kernel_predict(pg_catalog.bytea, pg_catalog.float8[]) IS
'score one row with a model: the prediction of a regression model, the decision value of a binary classifier (positive means the second class) or of a one-class model (positive means inlier); an error for a multi-class model';

COMMENT ON FUNCTION @extschema@.kernel_predict_class(pg_catalog.bytea, pg_catalog.float8[]) IS
'the predicted class label of one row under a classifier; under a one-class model, inlier (decision value above 0) or outlier';

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

-- kernel_predict_std_matrix (issue 32): kernel_predict_std of the rows of a
-- 2-D array, a panel at a time
CREATE FUNCTION @extschema@.kernel_predict_std_matrix(model pg_catalog.bytea, features pg_catalog.float8[])
RETURNS pg_catalog.float8[]
AS 'MODULE_PATHNAME', 'kernel_predict_std_matrix'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.kernel_predict_std_matrix(pg_catalog.bytea, pg_catalog.float8[]) IS
'kernel_predict_std of every row of a 2-D array (one inner array per row), in row order: a panel of rows at a time, its kernel block by one GEMM and one triangular solve';

CREATE FUNCTION @extschema@.kernel_predict_std_matrix(name pg_catalog.text, features pg_catalog.float8[])
RETURNS pg_catalog.float8[]
AS 'MODULE_PATHNAME', 'kernel_predict_std_matrix_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT @extschema@._kernel_ml_by_name_support;

COMMENT ON FUNCTION @extschema@.kernel_predict_std_matrix(pg_catalog.text, pg_catalog.float8[]) IS
'kernel_predict_std_matrix with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';
