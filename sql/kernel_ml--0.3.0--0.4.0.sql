-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION kernel_ml UPDATE TO '0.4.0'" to load this file. \quit

-- kernel_ml 0.3.0 -> 0.4.0.
--
-- Every function, aggregate, operator and type this script names is
-- schema-qualified (pg_catalog., @extschema@.): the script runs with the
-- extension's schema on the search path, where another role may have
-- created objects.

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
