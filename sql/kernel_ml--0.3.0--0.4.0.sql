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
