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
COMMENT ON AGGREGATE kernel_train(float8[], float8, jsonb) IS
'train a kernel model (ridge or lms) on (features, target) rows with the given options; returns the model as bytea';

-- Scoring and inspection ------------------------------------------------

CREATE FUNCTION kernel_predict(model bytea, features float8[])
RETURNS float8
AS 'MODULE_PATHNAME', 'kernel_predict'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_predict(bytea, float8[]) IS
'score one row with a model: intercept + sum_i alpha_i K(x_i, standardized features)';

CREATE FUNCTION kernel_model_info(model bytea)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'kernel_model_info'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION kernel_model_info(bytea) IS
'describe a model: format, kernel and parameters, method, training statistics, size';
