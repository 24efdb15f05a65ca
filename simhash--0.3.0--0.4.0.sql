-- simhash extension: upgrade from 0.3.0 to 0.4.0
\echo Use "ALTER EXTENSION simhash UPDATE TO '0.4.0'" to load this file. \quit

-- Every change to the catalog between 0.3.0 and 0.4.0, in the order of simhash--0.4.0.sql.
-- sql/upgrade.sql checks that an updated 0.1.0 has the same catalog as a fresh 0.4.0.
