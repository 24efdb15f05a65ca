-- simhash extension: upgrade from 0.1.0 to 0.2.0
\echo Use "ALTER EXTENSION simhash UPDATE TO '0.2.0'" to load this file. \quit

-- Every change to the catalog between 0.1.0 and 0.2.0, in the order of the install script.
-- sql/upgrade.sql checks that an updated 0.1.0 has the same catalog as a fresh 0.2.0.

-- simhash_index_check: table owner only, and a concurrently mode (AccessShareLock, hot standby).
DROP FUNCTION simhash_index_check(regclass);
CREATE FUNCTION simhash_index_check(index regclass, concurrently boolean DEFAULT false) RETURNS void
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_index_check(regclass, boolean) IS
    'Verifies a simhash index (page IDs, sort order, directories, identical tables) and that every heap row is indexed; raises index_corrupted. Table owner only; blocks writes to the table (ShareLock) unless concurrently, which takes AccessShareLock, checks the rows of a snapshot and works on a hot standby';

-- simhash_lock_neighbourhood checks the caller's privilege on the scope table.
COMMENT ON FUNCTION simhash_lock_neighbourhood(bigint, integer, regclass) IS
    'Takes the transaction-scoped advisory locks simhash_dedup() takes for a fingerprint: any two fingerprints within radius bits share at least one lock in the same scope (table); at most 1024 distinct locks per scope; needs INSERT or UPDATE privilege on the scope table';

-- = and <> for hamming_ball.
CREATE FUNCTION hamming_ball_eq(hamming_ball, hamming_ball) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_ball_eq(hamming_ball, hamming_ball) IS 'implementation of = for hamming_ball: same center and radius';
CREATE FUNCTION hamming_ball_ne(hamming_ball, hamming_ball) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_ball_ne(hamming_ball, hamming_ball) IS 'implementation of <> for hamming_ball';
CREATE OPERATOR = (LEFTARG = hamming_ball, RIGHTARG = hamming_ball, FUNCTION = hamming_ball_eq,
    COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel);
CREATE OPERATOR <> (LEFTARG = hamming_ball, RIGHTARG = hamming_ball, FUNCTION = hamming_ball_ne,
    COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);

-- The same operators for a radius typed smallint or bigint, so that a radius bound by a driver as
-- int2 (psycopg 3) or int8 (JDBC setLong, Go int64) also reaches the index instead of resolving
-- to PostgreSQL's own int4-int2 or int4-int8 operator. The planner support turns the radius into
-- hamming_within's int4 radius exactly (a bigint clamped to -1..64). There are no operators for a
-- numeric radius: PostgreSQL has no int4-numeric operator, so (hamming_distance, numeric) would
-- make every `integer < numeric` comparison in the database ambiguous; a numeric radius resolves
-- to numeric's own operator (see the README).
CREATE FUNCTION hamming_radius_at_most(k bigint) RETURNS integer
    AS 'MODULE_PATHNAME', 'simhash_radius_at_most_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_radius_at_most(bigint) IS
    'The radius r in -1..64 with hamming(a, b) <= k exactly when hamming(a, b) <= r (used by the <= rewrite)';
CREATE FUNCTION hamming_radius_below(k bigint) RETURNS integer
    AS 'MODULE_PATHNAME', 'simhash_radius_below_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_radius_below(bigint) IS
    'The radius r in -1..64 with hamming(a, b) < k exactly when hamming(a, b) <= r (used by the < rewrite)';

CREATE FUNCTION hamming_distance_lt(hamming_distance, smallint) RETURNS boolean AS 'int42lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_lt(hamming_distance, smallint) IS 'implementation of < for hamming_distance and smallint; rewritten to hamming_within() by the planner';
CREATE FUNCTION hamming_distance_lt(smallint, hamming_distance) RETURNS boolean AS 'int24lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_lt(smallint, hamming_distance) IS 'implementation of < for hamming_distance and smallint';
CREATE FUNCTION hamming_distance_le(hamming_distance, smallint) RETURNS boolean AS 'int42le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_le(hamming_distance, smallint) IS 'implementation of <= for hamming_distance and smallint; rewritten to hamming_within() by the planner';
CREATE FUNCTION hamming_distance_le(smallint, hamming_distance) RETURNS boolean AS 'int24le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_le(smallint, hamming_distance) IS 'implementation of <= for hamming_distance and smallint';
CREATE FUNCTION hamming_distance_gt(hamming_distance, smallint) RETURNS boolean AS 'int42gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_gt(hamming_distance, smallint) IS 'implementation of > for hamming_distance and smallint';
CREATE FUNCTION hamming_distance_gt(smallint, hamming_distance) RETURNS boolean AS 'int24gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_gt(smallint, hamming_distance) IS 'implementation of > for hamming_distance and smallint; rewritten to hamming_within() by the planner';
CREATE FUNCTION hamming_distance_ge(hamming_distance, smallint) RETURNS boolean AS 'int42ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_ge(hamming_distance, smallint) IS 'implementation of >= for hamming_distance and smallint';
CREATE FUNCTION hamming_distance_ge(smallint, hamming_distance) RETURNS boolean AS 'int24ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_ge(smallint, hamming_distance) IS 'implementation of >= for hamming_distance and smallint; rewritten to hamming_within() by the planner';
CREATE OPERATOR < (LEFTARG = hamming_distance, RIGHTARG = smallint, FUNCTION = hamming_distance_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR < (LEFTARG = smallint, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = hamming_distance, RIGHTARG = smallint, FUNCTION = hamming_distance_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR <= (LEFTARG = smallint, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = hamming_distance, RIGHTARG = smallint, FUNCTION = hamming_distance_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR > (LEFTARG = smallint, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = hamming_distance, RIGHTARG = smallint, FUNCTION = hamming_distance_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR >= (LEFTARG = smallint, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE FUNCTION hamming_distance_lt(hamming_distance, bigint) RETURNS boolean AS 'int48lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_lt(hamming_distance, bigint) IS 'implementation of < for hamming_distance and bigint; rewritten to hamming_within() by the planner';
CREATE FUNCTION hamming_distance_lt(bigint, hamming_distance) RETURNS boolean AS 'int84lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_lt(bigint, hamming_distance) IS 'implementation of < for hamming_distance and bigint';
CREATE FUNCTION hamming_distance_le(hamming_distance, bigint) RETURNS boolean AS 'int48le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_le(hamming_distance, bigint) IS 'implementation of <= for hamming_distance and bigint; rewritten to hamming_within() by the planner';
CREATE FUNCTION hamming_distance_le(bigint, hamming_distance) RETURNS boolean AS 'int84le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_le(bigint, hamming_distance) IS 'implementation of <= for hamming_distance and bigint';
CREATE FUNCTION hamming_distance_gt(hamming_distance, bigint) RETURNS boolean AS 'int48gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_gt(hamming_distance, bigint) IS 'implementation of > for hamming_distance and bigint';
CREATE FUNCTION hamming_distance_gt(bigint, hamming_distance) RETURNS boolean AS 'int84gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_gt(bigint, hamming_distance) IS 'implementation of > for hamming_distance and bigint; rewritten to hamming_within() by the planner';
CREATE FUNCTION hamming_distance_ge(hamming_distance, bigint) RETURNS boolean AS 'int48ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_ge(hamming_distance, bigint) IS 'implementation of >= for hamming_distance and bigint';
CREATE FUNCTION hamming_distance_ge(bigint, hamming_distance) RETURNS boolean AS 'int84ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_ge(bigint, hamming_distance) IS 'implementation of >= for hamming_distance and bigint; rewritten to hamming_within() by the planner';
CREATE OPERATOR < (LEFTARG = hamming_distance, RIGHTARG = bigint, FUNCTION = hamming_distance_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR < (LEFTARG = bigint, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = hamming_distance, RIGHTARG = bigint, FUNCTION = hamming_distance_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR <= (LEFTARG = bigint, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = hamming_distance, RIGHTARG = bigint, FUNCTION = hamming_distance_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR > (LEFTARG = bigint, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = hamming_distance, RIGHTARG = bigint, FUNCTION = hamming_distance_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR >= (LEFTARG = bigint, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);

-- simhash_agg returns NULL when no feature counts (it returned 0 when every feature was NULL).
COMMENT ON AGGREGATE simhash_agg(text) IS
    'SimHash of the features in a group, each of weight 1 (NULLs skipped; NULL when no row has a feature)';
COMMENT ON AGGREGATE simhash_agg(text, double precision) IS
    'SimHash of the weighted features in a group (rows with a NULL feature or weight are skipped; NULL when no row has both; 22003 when a bit''s weight sum overflows)';

-- simhash_index_info: what an index holds, its pages by kind.
CREATE FUNCTION simhash_index_info(index regclass, OUT version integer, OUT tables integer, OUT runs integer,
                                   OUT entries bigint, OUT dead_entries bigint, OUT pending_entries bigint,
                                   OUT merging_entries bigint, OUT merges bigint, OUT last_merge timestamptz,
                                   OUT total_pages bigint, OUT run_pages bigint, OUT pending_pages bigint,
                                   OUT retired_pages bigint, OUT free_pages bigint, OUT unaccounted_pages bigint)
    RETURNS record
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_index_info(regclass) IS
    'What a simhash index holds: format version, tables option, sorted runs, live and dead (awaiting rewrite) entries in them, pending and merging entries, merges since the build and the last one''s time, and its pages: in runs, in the pending lists, retired by merges (recycled once no snapshot can read them), free (reused by merges), and unaccounted (left by a crashed merge until VACUUM); table owner or pg_stat_scan_tables';

CREATE FUNCTION simhash_index_runs(index regclass, OUT run integer, OUT entries bigint, OUT dead_entries bigint,
                                   OUT pages bigint, OUT bytes_per_entry double precision, OUT tables integer,
                                   OUT dirbits integer, OUT header_block bigint, OUT permuted boolean)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED ROWS 16;
COMMENT ON FUNCTION simhash_index_runs(regclass) IS
    'The sorted runs of a simhash index, largest first: live and dead entries, pages, bytes per entry, tables and directory bits of each, and whether its blocks are cut from a bit order chosen for skewed data; table owner or pg_stat_scan_tables';

-- The distance operator <~> and ordered scans (ORDER BY fp <~> q, ORDER BY hamming(fp, q));
-- hamming() becomes SQL, a <~> b, so that the planner inlines it.
CREATE FUNCTION hamming_dist(a bigint, b bigint) RETURNS integer
    AS 'MODULE_PATHNAME', 'simhash_hamming' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_dist(bigint, bigint) IS 'implementation of <~>: number of differing bits (0..64)';
CREATE OPERATOR <~> (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = hamming_dist, COMMUTATOR = <~>);
COMMENT ON OPERATOR <~> (bigint, bigint) IS
    'Hamming distance between two 64-bit fingerprints; ORDER BY fp <~> q uses a simhash index';
CREATE OR REPLACE FUNCTION hamming(a bigint, b bigint) RETURNS hamming_distance
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (a <~> b)::hamming_distance;
ALTER OPERATOR FAMILY bigint_hamming_ops USING simhash ADD OPERATOR 2 <~> (bigint, bigint) FOR ORDER BY integer_ops;
COMMENT ON OPERATOR CLASS bigint_hamming_ops USING simhash IS
    'Fingerprints within a hamming_ball, and nearest first; serves hamming(fp, q) <= k, hamming_within(fp, q, k), fp <@ hamming_ball(q, k), ORDER BY hamming(fp, q) and ORDER BY fp <~> q';

-- The index's on-disk format changed (version 4: log-structured runs): indexes built by 0.1.0 are
-- refused with a hint until they are rebuilt. simhash_index_info reports their format version.
DO $$
DECLARE
    idx pg_catalog.regclass;
    names text;
BEGIN
    FOR idx IN SELECT c.oid FROM pg_catalog.pg_class c JOIN pg_catalog.pg_am a ON a.oid OPERATOR(pg_catalog.=) c.relam
                WHERE a.amname OPERATOR(pg_catalog.=) 'simhash' AND c.relkind OPERATOR(pg_catalog.=) 'i'
                  -- not another session's temporary index (unreadable here, gone with that session),
                  -- nor one a failed CREATE INDEX CONCURRENTLY left without pages
                  AND (c.relpersistence OPERATOR(pg_catalog.<>) 't'
                       OR c.relnamespace OPERATOR(pg_catalog.=) pg_catalog.pg_my_temp_schema())
                  AND pg_catalog.pg_relation_size(c.oid) OPERATOR(pg_catalog.>) 0
                ORDER BY 1
    LOOP
        IF (SELECT i.version FROM @extschema@.simhash_index_info(idx) i) OPERATOR(pg_catalog.<) 4 THEN
            names := pg_catalog.concat_ws(', ', names, idx::pg_catalog.text);
        END IF;
    END LOOP;
    IF names IS NOT NULL THEN
        RAISE WARNING 'simhash 0.2.0 stores indexes in a new on-disk format; REINDEX these indexes: %', names
            USING HINT = 'REINDEX INDEX CONCURRENTLY name; rebuilds one while writers go on. Until then, queries and writes that use them fail with this hint.';
    END IF;
END
$$;
