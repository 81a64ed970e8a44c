-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION kernel_ml UPDATE TO '0.4.0'" to load this file. \quit

-- kernel_ml 0.3.0 -> 0.4.0.
--
-- Every function, aggregate, operator and type this script names is
-- schema-qualified (pg_catalog., @extschema@.): the script runs with the
-- extension's schema on the search path, where another role may have
-- created objects.
