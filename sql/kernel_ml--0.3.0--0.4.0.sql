-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION kernel_ml UPDATE TO '0.4.0'" to load this file. \quit

-- kernel_ml 0.3.0 -> 0.4.0.
--
-- Every function, aggregate, operator and type this script names is
-- schema-qualified (pg_catalog., @extschema@.): the script runs with the
-- extension's schema on the search path, where another role may have
-- created objects.

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

CREATE FUNCTION kernel_predict_matrix(name text, features float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_predict_matrix_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_matrix(text, float8[]) IS
'kernel_predict_matrix with the deployed version of the named model, looked up, and read access checked, once per statement snapshot and current user';

CREATE FUNCTION kernel_predict_class_matrix(name text, features float8[])
RETURNS text[]
AS 'MODULE_PATHNAME', 'kernel_predict_class_matrix_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict_class_matrix(text, float8[]) IS
'kernel_predict_class_matrix with the deployed version of the named classifier, looked up, and read access checked, once per statement snapshot and current user';

CREATE FUNCTION kernel_predict_proba_matrix(name text, features float8[])
RETURNS float8[]
AS 'MODULE_PATHNAME', 'kernel_predict_proba_matrix_by_name'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

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
