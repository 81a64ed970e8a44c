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
