-- simhash extension, version 0.1.0
\echo Use "CREATE EXTENSION simhash" to load this file. \quit

--------------------------------------------------------------------------------------------------
-- SimHash fingerprints
--------------------------------------------------------------------------------------------------

CREATE FUNCTION simhash(doc text, unit text DEFAULT 'word', size integer DEFAULT 3) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text, text, integer) IS
    '64-bit Charikar SimHash of a document''s shingles (unit ''word'' or ''char'', size 1..64); 0 when the text has no tokens';

CREATE FUNCTION simhash_shingles(doc text, unit text DEFAULT 'word', size integer DEFAULT 3) RETURNS text[]
    AS 'MODULE_PATHNAME', 'simhash_shingles' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_shingles(text, text, integer) IS
    'The normalized shingles simhash() and minhash() hash for a document, in text order: simhash(doc) = simhash(simhash_shingles(doc))';

CREATE FUNCTION simhash(features text[]) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_features' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text[]) IS
    'SimHash of caller-extracted features, each of weight 1 (duplicates count again; NULL elements are skipped)';

CREATE FUNCTION simhash(features text[], weights double precision[]) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_weighted_features' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text[], double precision[]) IS
    'SimHash of weighted features (TF-IDF keywords, for example): one finite weight per feature';

CREATE FUNCTION simhash(doc tsvector) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_tsvector' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(tsvector) IS
    'SimHash of a tsvector''s lexemes weighted by their number of positions (1 when stripped), so text search configurations apply';

CREATE FUNCTION simhash_agg_transfn(internal, text) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_agg_weighted_transfn(internal, text, double precision) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_agg_combinefn(internal, internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_agg_serialfn(internal) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_agg_deserialfn(bytea, internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_agg_finalfn(internal) RETURNS bigint
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE simhash_agg(feature text) (
    SFUNC = simhash_agg_transfn, STYPE = internal, FINALFUNC = simhash_agg_finalfn,
    COMBINEFUNC = simhash_agg_combinefn, SERIALFUNC = simhash_agg_serialfn,
    DESERIALFUNC = simhash_agg_deserialfn, PARALLEL = SAFE);
COMMENT ON AGGREGATE simhash_agg(text) IS
    'SimHash of the features in a group, each of weight 1 (NULLs skipped; NULL for no rows)';

CREATE AGGREGATE simhash_agg(feature text, weight double precision) (
    SFUNC = simhash_agg_weighted_transfn, STYPE = internal, FINALFUNC = simhash_agg_finalfn,
    COMBINEFUNC = simhash_agg_combinefn, SERIALFUNC = simhash_agg_serialfn,
    DESERIALFUNC = simhash_agg_deserialfn, PARALLEL = SAFE);
COMMENT ON AGGREGATE simhash_agg(text, double precision) IS
    'SimHash of the weighted features in a group (rows with a NULL feature or weight are skipped; NULL for no rows)';

COMMENT ON FUNCTION simhash_agg_transfn(internal, text) IS 'simhash_agg(text) transition function';
COMMENT ON FUNCTION simhash_agg_weighted_transfn(internal, text, double precision) IS 'simhash_agg(text, double precision) transition function';
COMMENT ON FUNCTION simhash_agg_combinefn(internal, internal) IS 'simhash_agg combine function (parallel aggregation)';
COMMENT ON FUNCTION simhash_agg_serialfn(internal) IS 'simhash_agg state serialization (parallel aggregation)';
COMMENT ON FUNCTION simhash_agg_deserialfn(bytea, internal) IS 'simhash_agg state deserialization (parallel aggregation)';
COMMENT ON FUNCTION simhash_agg_finalfn(internal) IS 'simhash_agg final function: the fingerprint of the summed votes';

--------------------------------------------------------------------------------------------------
-- MinHash signatures (integer[] of slots; see README "Why integer[]")
--------------------------------------------------------------------------------------------------

CREATE FUNCTION minhash(doc text, slots integer DEFAULT 128, seed bigint DEFAULT 0,
                        unit text DEFAULT 'word', size integer DEFAULT 3) RETURNS integer[]
    AS 'MODULE_PATHNAME', 'minhash_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash(text, integer, bigint, text, integer) IS
    'MinHash signature of a document''s set of shingles: slots (1..8192) values of (a*x+b) mod 2^61-1 minima';

CREATE FUNCTION minhash(features text[], slots integer DEFAULT 128, seed bigint DEFAULT 0) RETURNS integer[]
    AS 'MODULE_PATHNAME', 'minhash_features' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash(text[], integer, bigint) IS
    'MinHash signature of a set of caller-extracted features (NULL elements are skipped)';

CREATE FUNCTION minhash(doc tsvector, slots integer DEFAULT 128, seed bigint DEFAULT 0) RETURNS integer[]
    AS 'MODULE_PATHNAME', 'minhash_tsvector' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash(tsvector, integer, bigint) IS
    'MinHash signature of a tsvector''s set of lexemes';

CREATE FUNCTION minhash_jaccard(a integer[], b integer[]) RETURNS double precision
    AS 'MODULE_PATHNAME', 'minhash_jaccard' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_jaccard(integer[], integer[]) IS
    'Estimated Jaccard similarity of the two sets: the fraction of equal slots of signatures made with the same slots and seed';

CREATE FUNCTION minhash_merge(a integer[], b integer[]) RETURNS integer[]
    AS 'MODULE_PATHNAME', 'minhash_merge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_merge(integer[], integer[]) IS
    'Signature of the union of two sets: the element-wise unsigned minimum of their signatures';

--------------------------------------------------------------------------------------------------
-- Hamming distance. hamming() returns the domain hamming_distance: it is an integer everywhere,
-- but its comparison operators belong to this extension, and their planner support rewrites
-- hamming(fp, q) <= k into the indexable hamming_within(fp, q, k).
--------------------------------------------------------------------------------------------------

CREATE DOMAIN hamming_distance AS integer;
COMMENT ON DOMAIN hamming_distance IS
    'Result of hamming(): an integer whose comparisons with a radius can use a simhash index';

CREATE FUNCTION hamming(a bigint, b bigint) RETURNS hamming_distance
    AS 'MODULE_PATHNAME', 'simhash_hamming' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming(bigint, bigint) IS
    'Number of differing bits between two 64-bit fingerprints (0..64)';

CREATE FUNCTION hamming_within_support(internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION hamming_within_support(internal) IS 'planner support for hamming_within(): index condition and selectivity';

CREATE FUNCTION hamming_within(a bigint, b bigint, radius integer) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_hamming_within' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
    SUPPORT hamming_within_support;
COMMENT ON FUNCTION hamming_within(bigint, bigint, integer) IS
    'hamming(a, b) <= radius; indexable when a or b is a column with a simhash index';

CREATE FUNCTION hamming_radius_below(k integer) RETURNS integer
    AS 'MODULE_PATHNAME', 'simhash_hamming_radius_below' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_radius_below(integer) IS
    'k - 1 without overflow: hamming(a, b) < k is rewritten to hamming_within(a, b, hamming_radius_below(k))';

CREATE FUNCTION hamming_comparison_support(internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION hamming_comparison_support(internal) IS 'planner support for hamming_distance comparisons: rewrites them to hamming_within()';

-- The comparison functions run PostgreSQL's own int4 comparisons; what they add is the support
-- function. Every one of < <= > >= must exist for (distance, int), (int, distance) and
-- (distance, distance), or some spelling would silently resolve to int4's operator and miss the
-- index. The names' suffixes (_lt, _le, _gt, _ge) tell hamming_comparison_support which it is.
CREATE FUNCTION hamming_distance_lt(hamming_distance, integer) RETURNS boolean AS 'int4lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
CREATE FUNCTION hamming_distance_le(hamming_distance, integer) RETURNS boolean AS 'int4le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
CREATE FUNCTION hamming_distance_gt(hamming_distance, integer) RETURNS boolean AS 'int4gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
CREATE FUNCTION hamming_distance_ge(hamming_distance, integer) RETURNS boolean AS 'int4ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
CREATE FUNCTION hamming_distance_lt(integer, hamming_distance) RETURNS boolean AS 'int4lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
CREATE FUNCTION hamming_distance_le(integer, hamming_distance) RETURNS boolean AS 'int4le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
CREATE FUNCTION hamming_distance_gt(integer, hamming_distance) RETURNS boolean AS 'int4gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
CREATE FUNCTION hamming_distance_ge(integer, hamming_distance) RETURNS boolean AS 'int4ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
CREATE FUNCTION hamming_distance_lt(hamming_distance, hamming_distance) RETURNS boolean AS 'int4lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
CREATE FUNCTION hamming_distance_le(hamming_distance, hamming_distance) RETURNS boolean AS 'int4le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
CREATE FUNCTION hamming_distance_gt(hamming_distance, hamming_distance) RETURNS boolean AS 'int4gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
CREATE FUNCTION hamming_distance_ge(hamming_distance, hamming_distance) RETURNS boolean AS 'int4ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;

COMMENT ON FUNCTION hamming_distance_lt(hamming_distance, integer) IS 'implementation of < for hamming_distance; rewritten to hamming_within() by the planner';
COMMENT ON FUNCTION hamming_distance_le(hamming_distance, integer) IS 'implementation of <= for hamming_distance; rewritten to hamming_within() by the planner';
COMMENT ON FUNCTION hamming_distance_gt(hamming_distance, integer) IS 'implementation of > for hamming_distance';
COMMENT ON FUNCTION hamming_distance_ge(hamming_distance, integer) IS 'implementation of >= for hamming_distance';
COMMENT ON FUNCTION hamming_distance_lt(integer, hamming_distance) IS 'implementation of < for hamming_distance';
COMMENT ON FUNCTION hamming_distance_le(integer, hamming_distance) IS 'implementation of <= for hamming_distance';
COMMENT ON FUNCTION hamming_distance_gt(integer, hamming_distance) IS 'implementation of > for hamming_distance; rewritten to hamming_within() by the planner';
COMMENT ON FUNCTION hamming_distance_ge(integer, hamming_distance) IS 'implementation of >= for hamming_distance; rewritten to hamming_within() by the planner';
COMMENT ON FUNCTION hamming_distance_lt(hamming_distance, hamming_distance) IS 'implementation of < for hamming_distance; rewritten to hamming_within() by the planner';
COMMENT ON FUNCTION hamming_distance_le(hamming_distance, hamming_distance) IS 'implementation of <= for hamming_distance; rewritten to hamming_within() by the planner';
COMMENT ON FUNCTION hamming_distance_gt(hamming_distance, hamming_distance) IS 'implementation of > for hamming_distance';
COMMENT ON FUNCTION hamming_distance_ge(hamming_distance, hamming_distance) IS 'implementation of >= for hamming_distance';

CREATE OPERATOR < (LEFTARG = hamming_distance, RIGHTARG = integer, FUNCTION = hamming_distance_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = hamming_distance, RIGHTARG = integer, FUNCTION = hamming_distance_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = hamming_distance, RIGHTARG = integer, FUNCTION = hamming_distance_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = hamming_distance, RIGHTARG = integer, FUNCTION = hamming_distance_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR < (LEFTARG = integer, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = integer, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = integer, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = integer, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR < (LEFTARG = hamming_distance, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = hamming_distance, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = hamming_distance, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = hamming_distance, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);

--------------------------------------------------------------------------------------------------
-- hamming_ball: the set of fingerprints within a radius of a center; `fp <@ hamming_ball(q, k)`
-- is the search operator of the simhash index.
--------------------------------------------------------------------------------------------------

CREATE TYPE hamming_ball;
CREATE FUNCTION hamming_ball_in(cstring) RETURNS hamming_ball
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION hamming_ball_out(hamming_ball) RETURNS cstring
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION hamming_ball_recv(internal) RETURNS hamming_ball
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION hamming_ball_send(hamming_ball) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_ball_in(cstring) IS 'hamming_ball input';
COMMENT ON FUNCTION hamming_ball_out(hamming_ball) IS 'hamming_ball output';
COMMENT ON FUNCTION hamming_ball_recv(internal) IS 'hamming_ball binary input';
COMMENT ON FUNCTION hamming_ball_send(hamming_ball) IS 'hamming_ball binary output';
CREATE TYPE hamming_ball (
    INPUT = hamming_ball_in, OUTPUT = hamming_ball_out, RECEIVE = hamming_ball_recv,
    SEND = hamming_ball_send, INTERNALLENGTH = 16, ALIGNMENT = double, STORAGE = plain);
COMMENT ON TYPE hamming_ball IS
    'The 64-bit fingerprints within radius bits of center, written ''(center,radius)''; a negative radius is empty, 64 or more is everything';

CREATE FUNCTION hamming_ball(center bigint, radius integer) RETURNS hamming_ball
    AS 'MODULE_PATHNAME', 'hamming_ball_make' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_ball(bigint, integer) IS 'The ball of fingerprints within radius bits of center';

CREATE FUNCTION center(hamming_ball) RETURNS bigint
    AS 'MODULE_PATHNAME', 'hamming_ball_center' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION center(hamming_ball) IS 'Center of a hamming_ball';
CREATE FUNCTION radius(hamming_ball) RETURNS integer
    AS 'MODULE_PATHNAME', 'hamming_ball_radius' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION radius(hamming_ball) IS 'Radius of a hamming_ball';

CREATE FUNCTION hamming_ball_restrict_selectivity(internal, oid, internal, integer) RETURNS double precision
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION hamming_ball_join_selectivity(internal, oid, internal, smallint, internal) RETURNS double precision
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION hamming_ball_restrict_selectivity(internal, oid, internal, integer) IS 'selectivity of fp <@ ball: binomial fraction of random fingerprints within the radius';
COMMENT ON FUNCTION hamming_ball_join_selectivity(internal, oid, internal, smallint, internal) IS 'join selectivity of fp <@ ball';

CREATE FUNCTION hamming_ball_contains(bigint, hamming_ball) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_ball_contains(bigint, hamming_ball) IS 'implementation of <@: fingerprint within the ball';
CREATE FUNCTION hamming_ball_contains_commuted(hamming_ball, bigint) RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_ball_contains_commuted(hamming_ball, bigint) IS 'implementation of @>: ball contains the fingerprint';

CREATE OPERATOR <@ (LEFTARG = bigint, RIGHTARG = hamming_ball, FUNCTION = hamming_ball_contains,
    COMMUTATOR = @>, RESTRICT = hamming_ball_restrict_selectivity, JOIN = hamming_ball_join_selectivity);
CREATE OPERATOR @> (LEFTARG = hamming_ball, RIGHTARG = bigint, FUNCTION = hamming_ball_contains_commuted,
    COMMUTATOR = <@, RESTRICT = hamming_ball_restrict_selectivity, JOIN = hamming_ball_join_selectivity);

--------------------------------------------------------------------------------------------------
-- The simhash index access method: exact `fp <@ hamming_ball(q, k)` search from
-- permuted block tables. `hamming(fp, q) <= k` and hamming_within(fp, q, k) reach it through the
-- planner support above. Options: tables (2..8, default 4), pending_limit (kB, default 4096).
--------------------------------------------------------------------------------------------------

CREATE FUNCTION simhash_handler(internal) RETURNS index_am_handler
    AS 'MODULE_PATHNAME' LANGUAGE C;
COMMENT ON FUNCTION simhash_handler(internal) IS 'Handler of the simhash index access method';

CREATE ACCESS METHOD simhash TYPE INDEX HANDLER simhash_handler;
COMMENT ON ACCESS METHOD simhash IS
    'Exact Hamming-radius index for 64-bit fingerprints: permuted block tables probed multi-index-hashing style';

CREATE OPERATOR CLASS bigint_hamming_ops DEFAULT FOR TYPE bigint USING simhash AS
    OPERATOR 1 <@ (bigint, hamming_ball);
COMMENT ON OPERATOR CLASS bigint_hamming_ops USING simhash IS
    'Fingerprints within a hamming_ball; serves hamming(fp, q) <= k, hamming_within(fp, q, k) and fp <@ hamming_ball(q, k)';
COMMENT ON OPERATOR FAMILY bigint_hamming_ops USING simhash IS
    'Operator family of the default simhash operator class for bigint fingerprints';

CREATE FUNCTION simhash_index_check(index regclass) RETURNS void
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_index_check(regclass) IS
    'Verifies a simhash index (page IDs, sort order, directories, identical tables) and that every heap row is indexed; raises index_corrupted';

--------------------------------------------------------------------------------------------------
-- Batch deduplication (ETL): all near-duplicate pairs of a query's rows, groups, and
-- MinHash LSH pairs. Set-returning functions that read their input query through a cursor.
--------------------------------------------------------------------------------------------------

CREATE FUNCTION simhash_pairs(query text, radius integer DEFAULT 3, memory_limit text DEFAULT NULL)
    RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
    AS 'MODULE_PATHNAME', 'simhash_pairs' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_pairs(text, integer, text) IS
    'Every pair of rows of query (id bigint, fingerprint bigint) whose fingerprints are within radius bits (0..64), once, with id_a < id_b; exact (permuted tables); memory_limit defaults to maintenance_work_mem, larger inputs are partitioned through temporary files';

CREATE FUNCTION simhash_groups(query text, radius integer DEFAULT 3, method text DEFAULT 'connected',
                               memory_limit text DEFAULT NULL)
    RETURNS TABLE (id bigint, group_id bigint)
    AS 'MODULE_PATHNAME', 'simhash_groups' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_groups(text, integer, text, text) IS
    'A group id for every row of query (id bigint, fingerprint bigint) with a fingerprint: ''connected'' = connected components of the within-radius pairs, ''leader'' = every member within radius of its group''s leader; the group id is the smallest id of the group (the leader)';

CREATE FUNCTION minhash_pairs(query text, threshold double precision DEFAULT 0.8, bands integer DEFAULT NULL,
                              "rows" integer DEFAULT NULL, memory_limit text DEFAULT NULL)
    RETURNS TABLE (id_a bigint, id_b bigint, jaccard double precision)
    AS 'MODULE_PATHNAME', 'minhash_pairs' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION minhash_pairs(text, double precision, integer, integer, text) IS
    'Pairs of rows of query (id bigint, signature integer[]) whose estimated Jaccard is at least threshold, found by LSH banding (bands x rows chosen from the threshold unless given) and verified on the whole signature; once each, id_a < id_b';

--------------------------------------------------------------------------------------------------
-- Deduplication on load: a BEFORE INSERT OR UPDATE row trigger (plain bigint
-- fingerprint column; generated columns are computed after BEFORE triggers and are refused) that skips,
-- rejects or marks rows within a radius of a stored row (or of a row inserted earlier by the same
-- statement), race-free through transaction-scoped advisory locks on the fingerprint's
-- neighbourhood (radius + 1 blocks, pigeonhole), and the lock helper for load procedures.
--------------------------------------------------------------------------------------------------

CREATE FUNCTION simhash_dedup() RETURNS trigger
    AS 'MODULE_PATHNAME', 'simhash_dedup' LANGUAGE C;
COMMENT ON FUNCTION simhash_dedup() IS
    'Row trigger: BEFORE INSERT OR UPDATE ... FOR EACH ROW EXECUTE FUNCTION simhash_dedup(fingerprint column, radius 0..64, action [, ...]): ''skip'' drops a near-duplicate, ''error'' raises 23505 (optional 4th argument: key column named in the detail), ''mark'' sets the column named by the 4th argument to the key (5th argument, default id) of the row it duplicates and keeps it; race-free between concurrent loaders';

CREATE FUNCTION simhash_lock_neighbourhood(fingerprint bigint, radius integer, scope regclass) RETURNS void
    AS 'MODULE_PATHNAME', 'simhash_lock_neighbourhood' LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_lock_neighbourhood(bigint, integer, regclass) IS
    'Takes the transaction-scoped advisory locks simhash_dedup() takes for a fingerprint: any two fingerprints within radius bits share at least one lock in the same scope (table); at most 1024 distinct locks per scope';

CREATE FUNCTION simhash_neighbourhood_keys(fingerprint bigint, radius integer) RETURNS integer[]
    AS 'MODULE_PATHNAME', 'simhash_neighbourhood_keys' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_neighbourhood_keys(bigint, integer) IS
    'The folded lock keys (0..1023, sorted, distinct) of a fingerprint''s neighbourhood: pg_locks shows them as advisory locks with classid = table oid, objid = key, objsubid = 21320';
