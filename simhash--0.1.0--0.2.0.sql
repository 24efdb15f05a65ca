-- simhash extension: upgrade from 0.1.0 to 0.2.0
\echo Use "ALTER EXTENSION simhash UPDATE TO '0.2.0'" to load this file. \quit

-- Every change to the catalog between 0.1.0 and 0.2.0, in the order of simhash--0.2.0.sql.
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
