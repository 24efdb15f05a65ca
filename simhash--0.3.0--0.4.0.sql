-- simhash extension: upgrade from 0.3.0 to 0.4.0
\echo Use "ALTER EXTENSION simhash UPDATE TO '0.4.0'" to load this file. \quit

-- Every change to the catalog between 0.3.0 and 0.4.0, in the order of simhash--0.4.0.sql.
-- sql/upgrade.sql checks that an updated 0.1.0 has the same catalog as a fresh 0.4.0.

-- Deduplicating a table in one call: candidates from the fingerprint join, verified against their
-- keepers.
CREATE FUNCTION near_duplicates(query text, threshold double precision DEFAULT 0.65, radius integer DEFAULT 10,
                                measure text DEFAULT 'jaccard', unit text DEFAULT 'word', size integer DEFAULT 1,
                                keeper text DEFAULT 'smallest', memory_limit text DEFAULT NULL)
    RETURNS TABLE (id bigint, keeper_id bigint, similarity double precision)
    AS 'MODULE_PATHNAME', 'near_duplicates' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION near_duplicates(text, double precision, integer, text, text, integer, text, text) IS
    'One row (id, keeper_id, similarity) for every document of query (id, document text [, fingerprint bigint] [, signature integer[]]) that duplicates another: candidates within radius bits of minhash64 fingerprints (or the given ones), each verified against its keeper (the smallest id, or the first row with keeper => ''first'') by the exact shingle Jaccard or containment (or the signatures'' estimate) reaching threshold; groups never chain';

-- Defaults for the recommended fingerprint, minhash64, and groups that cannot chain: radius 10
-- (was 3), simhash_groups' method 'leader' (was 'connected').
CREATE OR REPLACE FUNCTION simhash_pairs(query text, radius integer DEFAULT 10, memory_limit text DEFAULT NULL)
    RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
    AS 'MODULE_PATHNAME', 'simhash_pairs' LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION simhash_groups(query text, radius integer DEFAULT 10, method text DEFAULT 'leader',
                               memory_limit text DEFAULT NULL)
    RETURNS TABLE (id bigint, group_id bigint)
    AS 'MODULE_PATHNAME', 'simhash_groups' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_groups(text, integer, text, text) IS
    'A group id for every row of query (id bigint, fingerprint bigint) with a fingerprint: ''leader'' (the default) = every member within radius of its group''s leader, ''connected'' = connected components of the within-radius pairs (they chain); the group id is the smallest id of the group (the leader)';

-- Deduplication on load: simhash_dedup() takes options (verify=, threshold=, measure=, unit=, size=,
-- nulls=) and refuses NULL fingerprints by default; its arguments are checked at CREATE TRIGGER.
COMMENT ON FUNCTION simhash_dedup() IS
    'Row trigger: BEFORE INSERT OR UPDATE ... FOR EACH ROW EXECUTE FUNCTION simhash_dedup(fingerprint column, radius 0..64, action [, ...] [, option=value ...]): ''skip'' drops a near-duplicate, ''error'' raises 23505 (optional 4th argument: key column named in the detail), ''mark'' sets the column named by the 4th argument to the key (5th argument, default id) of the row it duplicates and keeps it; options verify=<text column> (act only on stored rows whose text has exact shingle similarity at least threshold=0.65, measure=jaccard|containment, unit=word, size=1), nulls=error|keep (a row with a NULL fingerprint, or NULL text to verify, is refused with 23502 unless kept); race-free between concurrent loaders';

CREATE FUNCTION simhash_dedup_check_arguments() RETURNS event_trigger
    AS 'MODULE_PATHNAME', 'simhash_dedup_check_arguments' LANGUAGE C;
COMMENT ON FUNCTION simhash_dedup_check_arguments() IS
    'Event trigger function: checks the declaration and arguments of every trigger a CREATE TRIGGER creates that calls simhash_dedup() against its table, raising the error its first firing would';

CREATE EVENT TRIGGER simhash_dedup_check_arguments ON ddl_command_end WHEN TAG IN ('CREATE TRIGGER')
    EXECUTE FUNCTION @extschema@.simhash_dedup_check_arguments();
COMMENT ON EVENT TRIGGER simhash_dedup_check_arguments IS
    'Refuses a simhash_dedup trigger with bad arguments when it is created (the trigger checks them again when it first fires)';

