-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION kernel_ml UPDATE TO '0.4.0'" to load this file. \quit

-- kernel_ml 0.3.0 -> 0.4.0.
--
-- Every function, aggregate, operator and type this script names is
-- schema-qualified (pg_catalog., @extschema@.): the script runs with the
-- extension's schema on the search path, where another role may have
-- created objects.

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
