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
