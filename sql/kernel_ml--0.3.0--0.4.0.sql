-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION kernel_ml UPDATE TO '0.4.0'" to load this file. \quit

-- kernel_ml 0.3.0 -> 0.4.0.
--
-- Every function, aggregate, operator and type this script names is
-- schema-qualified (pg_catalog., @extschema@.): the script runs with the
-- extension's schema on the search path, where another role may have
-- created objects.

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
