-- simhash extension, version 0.4.0
\echo Use "CREATE EXTENSION simhash" to load this file. \quit

--------------------------------------------------------------------------------------------------
-- SimHash fingerprints
--------------------------------------------------------------------------------------------------

CREATE FUNCTION simhash(doc text, unit text DEFAULT 'word', size integer DEFAULT 2) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_text_weighted' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text, text, integer) IS
    '64-bit Charikar SimHash of a document''s set of shingles (unit ''word'' or ''char'', size 1..64), each distinct shingle voting once; 0 when the text has no tokens';

CREATE FUNCTION simhash(doc text, unit text, size integer, weighting text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_text_weighted' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text, text, integer, text) IS
    'SimHash of a document''s shingles with the given votes: ''set'' (each distinct shingle once, the default), ''log'' (1 + ln of its count) or ''count'' (every occurrence: simhash(doc, ''word'', 3, ''count'') is simhash(doc) of 0.2.0 and older)';

CREATE FUNCTION simhash_shingles(doc text, unit text DEFAULT 'word', size integer DEFAULT 2) RETURNS text[]
    AS 'MODULE_PATHNAME', 'simhash_shingles' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_shingles(text, text, integer) IS
    'The normalized shingles simhash() and minhash() hash for a document, in text order, duplicates included: simhash(doc) = simhash(ARRAY(SELECT DISTINCT unnest(simhash_shingles(doc))))';

CREATE FUNCTION shingle_jaccard(a text, b text, unit text DEFAULT 'word', size integer DEFAULT 3) RETURNS double precision
    AS 'MODULE_PATHNAME', 'shingle_jaccard' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shingle_jaccard(text, text, text, integer) IS
    'Exact Jaccard similarity of the two documents'' sets of shingles (1 when both have none): what minhash_jaccard(minhash(a), minhash(b)) estimates with the same unit and size';

CREATE FUNCTION shingle_containment(a text, b text, unit text DEFAULT 'word', size integer DEFAULT 3) RETURNS double precision
    AS 'MODULE_PATHNAME', 'shingle_containment' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shingle_containment(text, text, text, integer) IS
    'Exact fraction of a''s distinct shingles that are also b''s (1 when a has none): near 1 when b contains a';

-- IDF weights learned from a table: simhash_idf(doc) counts in how many documents each shingle
-- occurs and returns a compact dictionary (type shingle_idf); simhash(doc, idf) weighs each
-- shingle's vote by ln(N / df).
CREATE TYPE shingle_idf;
CREATE FUNCTION shingle_idf_in(cstring) RETURNS shingle_idf
    AS 'MODULE_PATHNAME', 'shingle_idf_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION shingle_idf_out(shingle_idf) RETURNS cstring
    AS 'MODULE_PATHNAME', 'shingle_idf_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION shingle_idf_recv(internal) RETURNS shingle_idf
    AS 'MODULE_PATHNAME', 'shingle_idf_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION shingle_idf_send(shingle_idf) RETURNS bytea
    AS 'MODULE_PATHNAME', 'shingle_idf_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE shingle_idf (
    INPUT = shingle_idf_in, OUTPUT = shingle_idf_out, RECEIVE = shingle_idf_recv, SEND = shingle_idf_send,
    INTERNALLENGTH = VARIABLE, STORAGE = extended);
COMMENT ON FUNCTION shingle_idf_in(cstring) IS 'shingle_idf input (bytea text form, checked in full)';
COMMENT ON FUNCTION shingle_idf_out(shingle_idf) IS 'shingle_idf output (bytea text form)';
COMMENT ON FUNCTION shingle_idf_recv(internal) IS 'shingle_idf binary input (checked in full)';
COMMENT ON FUNCTION shingle_idf_send(shingle_idf) IS 'shingle_idf binary output';
COMMENT ON TYPE shingle_idf IS
    'Document frequencies of shingles, built by the simhash_idf() aggregate (binary; text form as bytea hex): the IDF weights simhash(doc, idf) uses';

CREATE FUNCTION simhash_idf_transfn(internal, text) RETURNS internal
    AS 'MODULE_PATHNAME', 'simhash_idf_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_idf_transfn(internal, text, text, integer) RETURNS internal
    AS 'MODULE_PATHNAME', 'simhash_idf_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_idf_combinefn(internal, internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'simhash_idf_combinefn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_idf_serialfn(internal) RETURNS bytea
    AS 'MODULE_PATHNAME', 'simhash_idf_serialfn' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_idf_deserialfn(bytea, internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'simhash_idf_deserialfn' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_idf_finalfn(internal) RETURNS shingle_idf
    AS 'MODULE_PATHNAME', 'simhash_idf_finalfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE simhash_idf(doc text) (
    SFUNC = simhash_idf_transfn, STYPE = internal, FINALFUNC = simhash_idf_finalfn,
    COMBINEFUNC = simhash_idf_combinefn, SERIALFUNC = simhash_idf_serialfn,
    DESERIALFUNC = simhash_idf_deserialfn, PARALLEL = SAFE);
COMMENT ON AGGREGATE simhash_idf(text) IS
    'IDF dictionary of the documents'' single words (and single CJK characters): for each shingle in at least 2 documents, how many contain it';
CREATE AGGREGATE simhash_idf(doc text, unit text, size integer) (
    SFUNC = simhash_idf_transfn, STYPE = internal, FINALFUNC = simhash_idf_finalfn,
    COMBINEFUNC = simhash_idf_combinefn, SERIALFUNC = simhash_idf_serialfn,
    DESERIALFUNC = simhash_idf_deserialfn, PARALLEL = SAFE);
COMMENT ON AGGREGATE simhash_idf(text, text, integer) IS
    'IDF dictionary of the documents'' shingles of the given unit and size (the same for every row)';
COMMENT ON FUNCTION simhash_idf_transfn(internal, text) IS 'simhash_idf(text) transition function';
COMMENT ON FUNCTION simhash_idf_transfn(internal, text, text, integer) IS 'simhash_idf(text, text, integer) transition function';
COMMENT ON FUNCTION simhash_idf_combinefn(internal, internal) IS 'simhash_idf combine function (parallel aggregation)';
COMMENT ON FUNCTION simhash_idf_serialfn(internal) IS 'simhash_idf state serialization (parallel aggregation)';
COMMENT ON FUNCTION simhash_idf_deserialfn(bytea, internal) IS 'simhash_idf state deserialization (parallel aggregation)';
COMMENT ON FUNCTION simhash_idf_finalfn(internal) IS 'simhash_idf final function: the dictionary';

CREATE FUNCTION simhash(doc text, idf shingle_idf, weighting text DEFAULT 'log') RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_text_idf' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text, shingle_idf, text) IS
    'SimHash of a document''s shingles (the dictionary''s unit and size), each distinct shingle voting (1 + ln tf) * ln(N / df) (weighting ''log''), ln(N / df) (''set'') or tf * ln(N / df) (''count''); df = 1 for shingles the dictionary does not hold';

CREATE FUNCTION shingle_idf_weight(idf shingle_idf, shingle text) RETURNS double precision
    AS 'MODULE_PATHNAME', 'shingle_idf_weight' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shingle_idf_weight(shingle_idf, text) IS
    'ln(N / df) of one shingle as simhash_shingles() spells it (df = 1 when the dictionary does not hold it)';

CREATE FUNCTION shingle_idf_info(idf shingle_idf, OUT documents bigint, OUT shingles bigint, OUT unit text,
                                 OUT size integer, OUT min_df integer, OUT error_bound bigint) RETURNS record
    AS 'MODULE_PATHNAME', 'shingle_idf_info' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION shingle_idf_info(shingle_idf) IS
    'What an IDF dictionary holds: documents counted, shingles kept (those in at least min_df documents), unit, size, and how far below its true df a count may read (0: exact)';

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
    'SimHash of the features in a group, each of weight 1 (NULLs skipped; NULL when no row has a feature)';

CREATE AGGREGATE simhash_agg(feature text, weight double precision) (
    SFUNC = simhash_agg_weighted_transfn, STYPE = internal, FINALFUNC = simhash_agg_finalfn,
    COMBINEFUNC = simhash_agg_combinefn, SERIALFUNC = simhash_agg_serialfn,
    DESERIALFUNC = simhash_agg_deserialfn, PARALLEL = SAFE);
COMMENT ON AGGREGATE simhash_agg(text, double precision) IS
    'SimHash of the weighted features in a group (rows with a NULL feature or weight are skipped; NULL when no row has both; 22003 when a bit''s weight sum overflows)';

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

CREATE FUNCTION minhash64(doc text, unit text DEFAULT 'word', size integer DEFAULT 1) RETURNS bigint
    AS 'MODULE_PATHNAME', 'minhash64_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash64(text, text, integer) IS
    '64-bit one-bit MinHash of a document''s set of shingles (default: words, single ideographs), compared with hamming(): bit i is the low bit of slot i of minhash(doc, 64, 0, unit, size); two documents of Jaccard similarity J differ in 32(1 - J) bits on average; 0 when the text has no tokens';

CREATE FUNCTION minhash64(features text[]) RETURNS bigint
    AS 'MODULE_PATHNAME', 'minhash64_features' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash64(text[]) IS
    'One-bit MinHash fingerprint of a set of caller-extracted features (NULL elements are skipped; 0 when none is left)';

CREATE FUNCTION minhash64(doc tsvector) RETURNS bigint
    AS 'MODULE_PATHNAME', 'minhash64_tsvector' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash64(tsvector) IS
    'One-bit MinHash fingerprint of a tsvector''s set of lexemes';

--------------------------------------------------------------------------------------------------
-- Hamming distance. hamming() returns the domain hamming_distance: it is an integer everywhere,
-- but its comparison operators belong to this extension, and their planner support rewrites
-- hamming(fp, q) <= k into the indexable hamming_within(fp, q, k).
--------------------------------------------------------------------------------------------------

CREATE DOMAIN hamming_distance AS integer;
COMMENT ON DOMAIN hamming_distance IS
    'Result of hamming(): an integer whose comparisons with a radius can use a simhash index';

-- a <~> b is the distance operator (as pgvector's <-> and pg_trgm's <->): ORDER BY fp <~> q LIMIT n
-- is an ordered scan of a simhash index. It returns a plain integer, the type the index's ordering
-- is declared with. hamming(a, b) is written in SQL as a <~> b (as hamming_distance) so that the
-- planner inlines it: ORDER BY hamming(fp, q) then reaches the index the same way (the cast to a
-- domain without constraints becomes a relabelling the planner looks through).
CREATE FUNCTION hamming_dist(a bigint, b bigint) RETURNS integer
    AS 'MODULE_PATHNAME', 'simhash_hamming' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_dist(bigint, bigint) IS 'implementation of <~>: number of differing bits (0..64)';
CREATE OPERATOR <~> (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = hamming_dist, COMMUTATOR = <~>);
COMMENT ON OPERATOR <~> (bigint, bigint) IS
    'Hamming distance between two 64-bit fingerprints; ORDER BY fp <~> q uses a simhash index';

CREATE FUNCTION hamming(a bigint, b bigint) RETURNS hamming_distance
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (a <~> b)::hamming_distance;
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

-- The same for a radius typed double precision, so that a driver's float (psycopg binds a Python
-- 10.0 as float8, JDBC setDouble) reaches the index instead of PostgreSQL's float comparison. The
-- comparisons are exact (hamming(a, b) <= 3.7 is <= 3, < 3.0 is <= 2; infinities compare as
-- such) and refuse NaN (22023), which PostgreSQL's float order puts above every number. A
-- comparison of an integer with a float8 still resolves to PostgreSQL's float8 operator: float8
-- is the preferred type of its category, as numeric (see above) is not.
CREATE FUNCTION hamming_radius_at_most(k double precision) RETURNS integer
    AS 'MODULE_PATHNAME', 'simhash_radius_at_most_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_radius_at_most(double precision) IS
    'The radius r in -1..64 with hamming(a, b) <= k exactly when hamming(a, b) <= r: floor(k), clamped; NaN is refused (used by the <= rewrite)';
CREATE FUNCTION hamming_radius_below(k double precision) RETURNS integer
    AS 'MODULE_PATHNAME', 'simhash_radius_below_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_radius_below(double precision) IS
    'The radius r in -1..64 with hamming(a, b) < k exactly when hamming(a, b) <= r: ceil(k) - 1, clamped; NaN is refused (used by the < rewrite)';
CREATE FUNCTION hamming_distance_lt(hamming_distance, double precision) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_distance_lt_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_lt(hamming_distance, double precision) IS 'implementation of < for hamming_distance and double precision; rewritten to hamming_within() by the planner';
CREATE FUNCTION hamming_distance_lt(double precision, hamming_distance) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_float8_lt_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_lt(double precision, hamming_distance) IS 'implementation of < for double precision and hamming_distance';
CREATE FUNCTION hamming_distance_le(hamming_distance, double precision) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_distance_le_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_le(hamming_distance, double precision) IS 'implementation of <= for hamming_distance and double precision; rewritten to hamming_within() by the planner';
CREATE FUNCTION hamming_distance_le(double precision, hamming_distance) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_float8_le_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_le(double precision, hamming_distance) IS 'implementation of <= for double precision and hamming_distance';
CREATE FUNCTION hamming_distance_gt(hamming_distance, double precision) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_distance_gt_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_gt(hamming_distance, double precision) IS 'implementation of > for hamming_distance and double precision';
CREATE FUNCTION hamming_distance_gt(double precision, hamming_distance) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_float8_gt_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_gt(double precision, hamming_distance) IS 'implementation of > for double precision and hamming_distance; rewritten to hamming_within() by the planner';
CREATE FUNCTION hamming_distance_ge(hamming_distance, double precision) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_distance_ge_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_ge(hamming_distance, double precision) IS 'implementation of >= for hamming_distance and double precision';
CREATE FUNCTION hamming_distance_ge(double precision, hamming_distance) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_float8_ge_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_ge(double precision, hamming_distance) IS 'implementation of >= for double precision and hamming_distance; rewritten to hamming_within() by the planner';
CREATE OPERATOR < (LEFTARG = hamming_distance, RIGHTARG = double precision, FUNCTION = hamming_distance_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR < (LEFTARG = double precision, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = hamming_distance, RIGHTARG = double precision, FUNCTION = hamming_distance_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR <= (LEFTARG = double precision, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = hamming_distance, RIGHTARG = double precision, FUNCTION = hamming_distance_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR > (LEFTARG = double precision, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = hamming_distance, RIGHTARG = double precision, FUNCTION = hamming_distance_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR >= (LEFTARG = double precision, RIGHTARG = hamming_distance, FUNCTION = hamming_distance_ge,
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

CREATE OPERATOR <@ (LEFTARG = bigint, RIGHTARG = hamming_ball, FUNCTION = hamming_ball_contains,
    COMMUTATOR = @>, RESTRICT = hamming_ball_restrict_selectivity, JOIN = hamming_ball_join_selectivity);
CREATE OPERATOR @> (LEFTARG = hamming_ball, RIGHTARG = bigint, FUNCTION = hamming_ball_contains_commuted,
    COMMUTATOR = <@, RESTRICT = hamming_ball_restrict_selectivity, JOIN = hamming_ball_join_selectivity);

--------------------------------------------------------------------------------------------------
-- The simhash index access method: exact `fp <@ hamming_ball(q, k)` search from
-- permuted block tables. `hamming(fp, q) <= k` and hamming_within(fp, q, k) reach it through the
-- planner support above. Options: tables (auto or 2..8, default auto), pending_limit (kB, default 256).
--------------------------------------------------------------------------------------------------

CREATE FUNCTION simhash_handler(internal) RETURNS index_am_handler
    AS 'MODULE_PATHNAME' LANGUAGE C;
COMMENT ON FUNCTION simhash_handler(internal) IS 'Handler of the simhash index access method';

CREATE ACCESS METHOD simhash TYPE INDEX HANDLER simhash_handler;
COMMENT ON ACCESS METHOD simhash IS
    'Exact Hamming-radius index for 64-bit fingerprints: permuted block tables probed multi-index-hashing style';

CREATE OPERATOR CLASS bigint_hamming_ops DEFAULT FOR TYPE bigint USING simhash AS
    OPERATOR 1 <@ (bigint, hamming_ball),
    OPERATOR 2 <~> (bigint, bigint) FOR ORDER BY integer_ops;
COMMENT ON OPERATOR CLASS bigint_hamming_ops USING simhash IS
    'Fingerprints within a hamming_ball, and nearest first; serves hamming(fp, q) <= k, hamming_within(fp, q, k), fp <@ hamming_ball(q, k), ORDER BY hamming(fp, q) and ORDER BY fp <~> q';
COMMENT ON OPERATOR FAMILY bigint_hamming_ops USING simhash IS
    'Operator family of the default simhash operator class for bigint fingerprints';

CREATE FUNCTION simhash_index_check(index regclass, concurrently boolean DEFAULT false) RETURNS void
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_index_check(regclass, boolean) IS
    'Verifies a simhash index (page IDs, sort order, directories, identical tables) and that every heap row is indexed; raises index_corrupted. Table owner only; blocks writes to the table (ShareLock) unless concurrently, which takes AccessShareLock, checks the rows of a snapshot and works on a hot standby';

-- Indexes recorded as holding values that an update of the extension changed the definition of:
-- simhash_index_check says such an index needs REINDEX (instead of reporting its rows missing). A
-- mark holds while the index keeps the relfilenode it had, which REINDEX (and whatever else
-- rebuilds it) changes. Not dumped: a restored index is built anew.
CREATE TABLE simhash_reindex_needed (index_oid oid NOT NULL, relfilenode oid NOT NULL, reason text NOT NULL);
GRANT SELECT ON simhash_reindex_needed TO PUBLIC;
COMMENT ON TABLE simhash_reindex_needed IS
    'Indexes an update of the extension recorded as holding values of an earlier definition (index_oid, its relfilenode then, why): while the relfilenode is unchanged the index needs REINDEX, and simhash_index_check says so';

CREATE FUNCTION simhash_index_info(index regclass, OUT version integer, OUT tables integer, OUT runs integer,
                                   OUT entries bigint, OUT dead_entries bigint, OUT pending_entries bigint,
                                   OUT merging_entries bigint, OUT merges bigint, OUT last_merge timestamptz,
                                   OUT total_pages bigint, OUT run_pages bigint, OUT pending_pages bigint,
                                   OUT retired_pages bigint, OUT free_pages bigint, OUT unaccounted_pages bigint)
    RETURNS record
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_index_info(regclass) IS
    'What a simhash index holds: format version, tables of its largest run, sorted runs, live and dead (awaiting rewrite) entries in them, pending and merging entries, merges since the build and the last one''s time, and its pages: in runs, in the pending lists, retired by merges (recycled once no snapshot can read them), free (reused by merges), and unaccounted (left by a crashed merge until VACUUM); table owner or pg_stat_scan_tables';

CREATE FUNCTION simhash_index_runs(index regclass, OUT run integer, OUT entries bigint, OUT dead_entries bigint,
                                   OUT pages bigint, OUT bytes_per_entry double precision, OUT tables integer,
                                   OUT dirbits integer, OUT header_block bigint, OUT permuted boolean)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED ROWS 16;
COMMENT ON FUNCTION simhash_index_runs(regclass) IS
    'The sorted runs of a simhash index, largest first: live and dead entries, pages, bytes per entry, tables and directory bits of each, and whether its blocks are cut from a bit order chosen for skewed data; table owner or pg_stat_scan_tables';

--------------------------------------------------------------------------------------------------
-- Batch deduplication (ETL): all near-duplicate pairs of a query's rows, groups, and
-- MinHash LSH pairs. Set-returning functions that read their input query through a cursor.
--------------------------------------------------------------------------------------------------

CREATE FUNCTION simhash_pairs(query text, radius integer DEFAULT 10, memory_limit text DEFAULT NULL)
    RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
    AS 'MODULE_PATHNAME', 'simhash_pairs' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_pairs(text, integer, text) IS
    'Every pair of rows of query (id bigint, fingerprint bigint) whose fingerprints are within radius bits (0..64), once, with id_a < id_b; exact (permuted tables); memory_limit defaults to maintenance_work_mem, larger inputs are partitioned through temporary files';

CREATE FUNCTION simhash_groups(query text, radius integer DEFAULT 10, method text DEFAULT 'leader',
                               memory_limit text DEFAULT NULL)
    RETURNS TABLE (id bigint, group_id bigint)
    AS 'MODULE_PATHNAME', 'simhash_groups' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_groups(text, integer, text, text) IS
    'A group id for every row of query (id bigint, fingerprint bigint) with a fingerprint: ''leader'' (the default) = every member within radius of its group''s leader, ''connected'' = connected components of the within-radius pairs (they chain); the group id is the smallest id of the group (the leader)';

CREATE FUNCTION minhash_pairs(query text, threshold double precision DEFAULT 0.8, bands integer DEFAULT NULL,
                              "rows" integer DEFAULT NULL, memory_limit text DEFAULT NULL)
    RETURNS TABLE (id_a bigint, id_b bigint, jaccard double precision)
    AS 'MODULE_PATHNAME', 'minhash_pairs' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION minhash_pairs(text, double precision, integer, integer, text) IS
    'Pairs of rows of query (id bigint, signature integer[]) whose estimated Jaccard is at least threshold, found by LSH banding (bands x rows chosen from the threshold unless given) and verified on the whole signature; once each, id_a < id_b';

CREATE FUNCTION near_duplicates(query text, threshold double precision DEFAULT 0.65, radius integer DEFAULT 10,
                                measure text DEFAULT 'jaccard', unit text DEFAULT 'word', size integer DEFAULT 1,
                                keeper text DEFAULT 'smallest', memory_limit text DEFAULT NULL)
    RETURNS TABLE (id bigint, keeper_id bigint, similarity double precision)
    AS 'MODULE_PATHNAME', 'near_duplicates' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION near_duplicates(text, double precision, integer, text, text, integer, text, text) IS
    'One row (id, keeper_id, similarity) for every document of query (id, document text [, fingerprint bigint] [, signature integer[]]) that duplicates another: candidates within radius bits of minhash64 fingerprints (or the given ones), each verified against its keeper (the smallest id, or the first row with keeper => ''first'') by the exact shingle Jaccard or containment (or the signatures'' estimate) reaching threshold; groups never chain';

--------------------------------------------------------------------------------------------------
-- Batch pairs where the rows are (Citus): the permuted-table join as equi-joins on each table's
-- key, so that rows co-locate by key and each node joins its own.
--------------------------------------------------------------------------------------------------

CREATE FUNCTION simhash_pairs_layout(rows bigint, radius integer, max_tables integer DEFAULT 16,
                                     OUT blocks integer, OUT key_blocks integer, OUT tables integer) RETURNS record
    AS 'MODULE_PATHNAME', 'simhash_pairs_layout' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_pairs_layout(bigint, integer, integer) IS
    'The permuted tables of an exact pairs join of about rows fingerprints at radius (0..64) with at most max_tables tables: blocks = radius + key_blocks; two fingerprints within radius agree on the key of at least one of the tables';

CREATE FUNCTION simhash_pairs_key(fingerprint bigint, radius integer, blocks integer, key_blocks integer, "table" integer) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_pairs_key' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION simhash_pairs_key(bigint, integer, integer, integer, integer) IS
    'The key of a fingerprint in one table (0 .. tables - 1) of a layout from simhash_pairs_layout: rows to be joined in that table must be co-located by it';

CREATE FUNCTION simhash_pairs_reports(a bigint, b bigint, radius integer, blocks integer, key_blocks integer, "table" integer) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_pairs_reports' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION simhash_pairs_reports(bigint, bigint, integer, integer, integer, integer) IS
    'Whether the given table of the layout reports the pair: equal keys, within radius, and the first table on which the two agree; over all tables every pair within radius is reported exactly once';

CREATE FUNCTION simhash_pairs_agg_transfn(internal, bigint, bigint, integer, integer, integer, integer) RETURNS internal
    AS 'MODULE_PATHNAME', 'simhash_pairs_agg_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_pairs_agg_finalfn(internal) RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'simhash_pairs_agg_finalfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE simhash_pairs_agg(id bigint, fingerprint bigint, radius integer, blocks integer, key_blocks integer, "table" integer) (
    SFUNC = simhash_pairs_agg_transfn, STYPE = internal, FINALFUNC = simhash_pairs_agg_finalfn, PARALLEL = SAFE);
COMMENT ON AGGREGATE simhash_pairs_agg(bigint, bigint, integer, integer, integer, integer) IS
    'The pairs one table of a layout reports among a group of rows of equal key in that table, as a flat array of (id_a, id_b, distance) triples (NULL: none); GROUP BY the table and its key';
COMMENT ON FUNCTION simhash_pairs_agg_transfn(internal, bigint, bigint, integer, integer, integer, integer) IS 'simhash_pairs_agg transition function';
COMMENT ON FUNCTION simhash_pairs_agg_finalfn(internal) IS 'simhash_pairs_agg final function: the pairs of the group';

CREATE FUNCTION simhash_unpack_pairs(pairs bigint[]) RETURNS TABLE (id_a bigint, id_b bigint, value bigint)
    AS 'MODULE_PATHNAME', 'simhash_unpack_pairs' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION simhash_unpack_pairs(bigint[]) IS
    'The (id_a, id_b, value) triples of a simhash_pairs_agg or minhash_pairs_agg array, as rows';
CREATE FUNCTION minhash_slots(signature integer[]) RETURNS integer
    AS 'MODULE_PATHNAME', 'minhash_slots' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_slots(integer[]) IS
    'How many slots a MinHash signature has (signatures are compared slot by slot: only signatures of one length compare)';

CREATE FUNCTION simhash_distributed_column_type(relation regclass, column_name name) RETURNS regtype
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $function$
    -- The column's type, through any domains to their base type (NULL: no such column).
    WITH RECURSIVE chain(type_oid, depth) AS (
        SELECT a.atttypid, 0 FROM pg_catalog.pg_attribute a
        WHERE a.attrelid = relation AND a.attname = column_name AND a.attnum > 0 AND NOT a.attisdropped
      UNION ALL
        SELECT t.typbasetype, c.depth + 1 FROM pg_catalog.pg_type t JOIN chain c ON t.oid = c.type_oid
        WHERE t.typtype = 'd')
    SELECT c.type_oid::pg_catalog.regtype FROM chain c ORDER BY c.depth DESC LIMIT 1
$function$;
COMMENT ON FUNCTION simhash_distributed_column_type(regclass, name) IS
    'The base type of a column (through domains), NULL when the relation has no such column: how the *_distributed functions check their id and value columns';

CREATE FUNCTION simhash_distributed_check_columns(function_name text, relation regclass, id_column name,
                                                  value_column name, value_type regtype) RETURNS void
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    id_type pg_catalog.regtype;
    found_type pg_catalog.regtype;
BEGIN
    -- The calls below name the extension's schema as it was named at installation: after a
    -- rename that name could be another schema's, whose functions would run in their place.
    IF (SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n
        ON n.oid = e.extnamespace WHERE e.extname = 'simhash') <> '@extschema@' THEN
        RAISE EXCEPTION 'the schema of extension simhash is no longer named @extschema@' USING ERRCODE = '55000',
            HINT = 'The distributed functions name it in their SQL: rename the schema back, or drop and create the extension.';
    END IF;
    id_type := @extschema@.simhash_distributed_column_type(relation, id_column);
    found_type := @extschema@.simhash_distributed_column_type(relation, value_column);
    -- As simhash_pairs and minhash_pairs refuse their query's columns: an id of another type would
    -- be cast (numeric ids rounded into each other, text ids failing on the first non-number).
    IF id_type IS NULL OR found_type IS NULL THEN
        RAISE EXCEPTION '%: column "%" of % does not exist', function_name,
            CASE WHEN id_type IS NULL THEN id_column ELSE value_column END, relation USING ERRCODE = '42703';
    END IF;
    IF id_type NOT IN ('pg_catalog.int2'::pg_catalog.regtype, 'pg_catalog.int4'::pg_catalog.regtype,
                       'pg_catalog.int8'::pg_catalog.regtype) THEN
        RAISE EXCEPTION '%: the id column "%" of % is %, not smallint, integer or bigint', function_name, id_column,
            relation, id_type USING ERRCODE = '42804';
    END IF;
    IF found_type <> value_type THEN
        RAISE EXCEPTION '%: column "%" of % is %, not %', function_name, value_column, relation, found_type, value_type
            USING ERRCODE = '42804';
    END IF;
END
$function$;
COMMENT ON FUNCTION simhash_distributed_check_columns(text, regclass, name, name, regtype) IS
    'Refuses an id column that is not smallint, integer or bigint and a value column not of value_type (domains count as their base type): the checks simhash_pairs and minhash_pairs make of their query''s columns, for the *_distributed functions';

CREATE FUNCTION simhash_distributed_refuse_null_ids(function_name text, relation regclass, id_column name,
                                                    value_column name, value_kind text) RETURNS void
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    null_id boolean;
BEGIN
    -- Said here, of the table and columns the caller named: simhash_pairs and minhash_pairs, which
    -- a table that is not distributed runs, would speak of a query the caller never wrote.
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute a WHERE a.attrelid = relation AND a.attname = id_column
               AND a.attnotnull) THEN
        RETURN;  -- a NOT NULL column needs no scan
    END IF;
    -- (SELECT 1: Citus 13 refuses a SELECT without columns on a distributed table.)
    EXECUTE pg_catalog.format('SELECT EXISTS (SELECT 1 FROM %I.%I WHERE %I IS NULL AND %I IS NOT NULL)',
                              (SELECT n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n
                               ON n.oid = c.relnamespace WHERE c.oid = relation),
                              (SELECT c.relname FROM pg_catalog.pg_class c WHERE c.oid = relation),
                              id_column, value_column) INTO null_id;
    IF null_id THEN
        RAISE EXCEPTION '%: a row of % has a NULL id', function_name, relation USING ERRCODE = '22004',
            DETAIL = pg_catalog.format('Pairs are reported by id, so every row with a %s needs one.', value_kind),
            HINT = pg_catalog.format('Fill in the missing ids (a NOT NULL constraint on column %I keeps them filled), '
                                     'or set column %I of the rows to leave out to NULL.', id_column, value_column);
    END IF;
END
$function$;
COMMENT ON FUNCTION simhash_distributed_refuse_null_ids(text, regclass, name, name, text) IS
    'Refuses a row with a NULL id and a non-NULL value column (22004), naming the table and what the caller can change: the check the *_distributed functions make of their relation';

CREATE FUNCTION simhash_distributed_relation(relation regclass, OUT schema_name name, OUT qualified_name text,
                                             OUT distributed boolean) RETURNS record
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    SELECT n.nspname, pg_catalog.format('%I.%I', n.nspname, c.relname) INTO schema_name, qualified_name
    FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = relation;
    distributed := false;
    -- Citus's catalog is read through EXECUTE, so that this works where Citus is not installed.
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE 'SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition p WHERE p.logicalrelid OPERATOR(pg_catalog.=) $1)'
            INTO distributed USING relation;
    END IF;
END
$function$;
COMMENT ON FUNCTION simhash_distributed_relation(regclass) IS
    'The schema and schema-qualified name of a relation, and whether it is a Citus distributed table: how the *_distributed functions decide where to run';

CREATE FUNCTION simhash_distributed_pairs_layout(relation regclass, id_column name, fingerprint_column name,
                                                 radius integer, max_tables integer,
                                                 OUT distributed boolean, OUT key_blocks integer, OUT tables integer)
    RETURNS record
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    source text;
    n bigint;
    repeated bigint;
    null_id boolean;
    kb integer;
    i integer;
    layout_tables pg_catalog.numeric;
    cost pg_catalog.numeric;
    best_cost pg_catalog.numeric;
BEGIN
    -- The calls below name the extension's schema as it was named at installation: after a
    -- rename that name could be another schema's, whose functions would run in their place.
    IF (SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n
        ON n.oid = e.extnamespace WHERE e.extname = 'simhash') <> '@extschema@' THEN
        RAISE EXCEPTION 'the schema of extension simhash is no longer named @extschema@' USING ERRCODE = '55000',
            HINT = 'The distributed functions name it in their SQL: rename the schema back, or drop and create the extension.';
    END IF;
    IF relation IS NULL OR id_column IS NULL OR fingerprint_column IS NULL OR radius IS NULL OR max_tables IS NULL THEN
        RAISE EXCEPTION 'simhash_pairs_distributed arguments must not be NULL' USING ERRCODE = '22004';
    END IF;
    IF radius < 0 OR radius > 64 THEN
        RAISE EXCEPTION 'radius must be between 0 and 64, not %', radius USING ERRCODE = '22023';
    END IF;
    IF max_tables < 1 THEN
        RAISE EXCEPTION 'max_tables must be at least 1, not %', max_tables USING ERRCODE = '22023';
    END IF;
    SELECT r.qualified_name, r.distributed INTO source, distributed
    FROM @extschema@.simhash_distributed_relation(relation) r;
    PERFORM @extschema@.simhash_distributed_check_columns('simhash_pairs_distributed', relation, id_column,
                                                          fingerprint_column, 'pg_catalog.int8');
    IF NOT distributed THEN
        PERFORM @extschema@.simhash_distributed_refuse_null_ids('simhash_pairs_distributed', relation, id_column,
                                                                fingerprint_column, 'fingerprint');
        RETURN;
    END IF;
    -- One scan counts the rows and finds a repeated or NULL id: pairs are reported by id, so every
    -- row needs one of its own (as simhash_pairs checks).
    EXECUTE pg_catalog.format(
        'SELECT COALESCE(pg_catalog.sum(c), 0)::pg_catalog.int8, pg_catalog.min(id) FILTER (WHERE c OPERATOR(pg_catalog.>) 1),
                COALESCE(pg_catalog.bool_or(id IS NULL), false)
         FROM (SELECT %I::pg_catalog.int8 AS id, pg_catalog.count(*) AS c FROM %s WHERE %I IS NOT NULL GROUP BY 1) g',
        id_column, source, fingerprint_column) INTO n, repeated, null_id;
    IF null_id THEN
        PERFORM @extschema@.simhash_distributed_refuse_null_ids('simhash_pairs_distributed', relation, id_column,
                                                                fingerprint_column, 'fingerprint');
    END IF;
    IF repeated IS NOT NULL THEN
        RAISE EXCEPTION '%: id % appears more than once in %', 'simhash_pairs_distributed', repeated, source USING ERRCODE = '23505',
            DETAIL = 'Pairs are reported by id, so every row needs an id of its own.',
            HINT = 'Use a unique key (the primary key or the distribution column when it is unique) as the id.';
    END IF;
    -- The layout: every table moves all rows between the workers (about 2 us a row on a 2-core
    -- host), every pair of rows of equal key is one comparison in simhash_pairs_agg (about 5 ns);
    -- longer keys (more key blocks) mean more tables and fewer comparisons.
    -- (Plain operators in this function's own expressions are pg_catalog's: its search_path is
    -- pinned, and PostgreSQL never looks for operators in pg_temp.)
    FOR kb IN 1 .. 64 - radius LOOP
        layout_tables := 1;
        FOR i IN 1 .. kb LOOP
            layout_tables := layout_tables * (radius + i) / i;
        END LOOP;
        EXIT WHEN layout_tables > max_tables;
        cost := layout_tables * (2.0 * n + 0.005 * n::pg_catalog.numeric * n
                                          / pg_catalog.power(2.0, 64.0 * kb / (radius + kb) + 1));
        IF best_cost IS NULL OR cost < best_cost THEN
            best_cost := cost;
            key_blocks := kb;
            tables := layout_tables;
        END IF;
    END LOOP;
    IF key_blocks IS NULL THEN
        RAISE EXCEPTION 'no layout of at most % tables covers radius %', max_tables, radius
            USING ERRCODE = '54000', HINT = CASE WHEN radius = 64 THEN 'Every two rows are within 64 bits: run simhash_pairs on one node, or pair the rows with a cross join.'
                                                 ELSE 'Allow more tables, or run simhash_pairs on one node.' END;
    END IF;
END
$function$;
COMMENT ON FUNCTION simhash_distributed_pairs_layout(regclass, name, name, integer, integer) IS
    'The checks and the layout of a distributed pairs join (simhash_pairs_distributed): whether the relation is a Citus distributed table and, if so, after refusing a repeated id, the key blocks and the number of permuted tables';

CREATE FUNCTION simhash_distributed_pairs_of_table(relation regclass, id_column name, fingerprint_column name,
                                                   radius integer, key_blocks integer, "table" integer)
    RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    rel_schema name;
    source text;
    staging text;
BEGIN
    -- The calls below name the extension's schema as it was named at installation: after a
    -- rename that name could be another schema's, whose functions would run in their place.
    IF (SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n
        ON n.oid = e.extnamespace WHERE e.extname = 'simhash') <> '@extschema@' THEN
        RAISE EXCEPTION 'the schema of extension simhash is no longer named @extschema@' USING ERRCODE = '55000',
            HINT = 'The distributed functions name it in their SQL: rename the schema back, or drop and create the extension.';
    END IF;
    SELECT r.schema_name, r.qualified_name INTO rel_schema, source FROM @extschema@.simhash_distributed_relation(relation) r;
    -- Every row once, distributed by its key in this table: rows of equal key meet on one node.
    -- Repartitioned by the workers among themselves; the coordinator sees only the pairs.
    staging := pg_catalog.format('%I.%I', rel_schema, pg_catalog.format('simhash_pairs_%s_%s_%s', pg_catalog.pg_backend_pid(),
                                                                         pg_catalog.txid_current(), "table"));
    EXECUTE pg_catalog.format('CREATE UNLOGGED TABLE %s (key pg_catalog.int8, id pg_catalog.int8, fp pg_catalog.int8)', staging);
    PERFORM pg_catalog.create_distributed_table(staging, 'key', colocate_with => 'none');
    EXECUTE pg_catalog.format(
        'INSERT INTO %s SELECT @extschema@.simhash_pairs_key(r.fp, $1, $2, $3, $4), r.id, r.fp
         FROM (SELECT %I::pg_catalog.int8 AS id, %I::pg_catalog.int8 AS fp FROM %s WHERE %I IS NOT NULL) r',
        staging, id_column, fingerprint_column, source, fingerprint_column)
        USING radius, radius OPERATOR(pg_catalog.+) key_blocks, key_blocks, "table";
    -- Each worker groups its rows by key and compares every group in C (simhash_pairs_agg checks
    -- the key again and reports only the pairs this table owns). Citus sends this query to the
    -- workers with pg_catalog's names unqualified, where a polymorphic call (array_length) would
    -- lose to a function of exact argument types in a schema on the workers' search_path: the
    -- query calls none (simhash_unpack_pairs takes bigint[]).
    RETURN QUERY EXECUTE pg_catalog.format(
        'SELECT u.id_a, u.id_b, u.value::pg_catalog.int4
         FROM (SELECT @extschema@.simhash_pairs_agg(id, fp, $1, $2, $3, $4) AS p FROM %s GROUP BY key) g,
              @extschema@.simhash_unpack_pairs(g.p) u', staging)
        USING radius, radius OPERATOR(pg_catalog.+) key_blocks, key_blocks, "table";
    EXECUTE pg_catalog.format('DROP TABLE %s', staging);
END
$function$;
COMMENT ON FUNCTION simhash_distributed_pairs_of_table(regclass, name, name, integer, integer, integer) IS
    'The pairs one permuted table (0 .. tables - 1 of simhash_distributed_pairs_layout) reports in a distributed pairs join: rows repartitioned by that table''s key into a staging table, grouped and compared on the workers';

CREATE FUNCTION simhash_pairs_distributed(relation regclass, id_column name, fingerprint_column name,
                                          radius integer DEFAULT 10, max_tables integer DEFAULT 16)
    RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    layout record;
BEGIN
    -- The calls below name the extension's schema as it was named at installation: after a
    -- rename that name could be another schema's, whose functions would run in their place.
    IF (SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n
        ON n.oid = e.extnamespace WHERE e.extname = 'simhash') <> '@extschema@' THEN
        RAISE EXCEPTION 'the schema of extension simhash is no longer named @extschema@' USING ERRCODE = '55000',
            HINT = 'The distributed functions name it in their SQL: rename the schema back, or drop and create the extension.';
    END IF;
    SELECT * INTO layout
    FROM @extschema@.simhash_distributed_pairs_layout(relation, id_column, fingerprint_column, radius, max_tables);
    IF NOT layout.distributed THEN
        RETURN QUERY SELECT p.id_a, p.id_b, p.distance FROM @extschema@.simhash_pairs(
            pg_catalog.format('SELECT %I::pg_catalog.int8, %I::pg_catalog.int8 FROM %s WHERE %I IS NOT NULL',
                              id_column, fingerprint_column,
                              (SELECT r.qualified_name FROM @extschema@.simhash_distributed_relation(relation) r),
                              fingerprint_column), radius) p;
        RETURN;
    END IF;
    -- One permuted table at a time: its staging table is dropped before the next is filled.
    FOR t IN 0 .. layout.tables - 1 LOOP
        RETURN QUERY SELECT p.id_a, p.id_b, p.distance FROM @extschema@.simhash_distributed_pairs_of_table(
            relation, id_column, fingerprint_column, radius, layout.key_blocks, t) p;
    END LOOP;
END
$function$;
COMMENT ON FUNCTION simhash_pairs_distributed(regclass, name, name, integer, integer) IS
    'simhash_pairs over a Citus distributed table, computed on the workers: rows are repartitioned by each permuted table''s key and joined where they meet, and only the pairs reach the coordinator (a table that is not distributed runs simhash_pairs); ids must be unique';

CREATE PROCEDURE simhash_pairs_distributed_into(relation regclass, id_column name, fingerprint_column name,
                                                result regclass, radius integer DEFAULT 10, max_tables integer DEFAULT 16)
    LANGUAGE plpgsql
AS $procedure$
DECLARE
    -- Types qualified: they are resolved when the procedure is compiled, on the caller's
    -- search_path.
    layout pg_catalog.record;
    target pg_catalog.text;
BEGIN
    -- A procedure that commits cannot pin its search_path with SET, and a search_path it set
    -- itself would outlast the call: called from a DO block or another procedure, the caller's
    -- transaction goes on after this procedure's last COMMIT. So it runs on the caller's
    -- search_path and names every function, operator and type with its schema; the functions it
    -- calls pin their own search_path.
    -- The calls below name the extension's schema as it was named at installation: after a
    -- rename that name could be another schema's, whose functions would run in their place.
    IF (SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n
        ON n.oid OPERATOR(pg_catalog.=) e.extnamespace WHERE e.extname OPERATOR(pg_catalog.=) 'simhash')
       OPERATOR(pg_catalog.<>) '@extschema@' THEN
        RAISE EXCEPTION 'the schema of extension simhash is no longer named @extschema@' USING ERRCODE = '55000',
            HINT = 'The distributed functions name it in their SQL: rename the schema back, or drop and create the extension.';
    END IF;
    IF result IS NULL THEN
        RAISE EXCEPTION 'simhash_pairs_distributed_into arguments must not be NULL' USING ERRCODE = '22004';
    END IF;
    -- Inside a transaction block it could not commit: fail here, before any work.
    COMMIT;
    SELECT r.qualified_name INTO target FROM @extschema@.simhash_distributed_relation(result) r;
    SELECT * INTO layout
    FROM @extschema@.simhash_distributed_pairs_layout(relation, id_column, fingerprint_column, radius, max_tables);
    IF NOT layout.distributed THEN
        EXECUTE pg_catalog.format('INSERT INTO %s (id_a, id_b, distance) SELECT p.id_a, p.id_b, p.distance
                                   FROM @extschema@.simhash_pairs_distributed($1, $2, $3, $4, $5) p', target)
            USING relation, id_column, fingerprint_column, radius, max_tables;
        RETURN;
    END IF;
    -- One transaction a permuted table: its staging table and Citus's intermediate files are gone
    -- at its commit, so the workers never hold more than one copy of the rows.
    FOR t IN 0 .. layout.tables OPERATOR(pg_catalog.-) 1 LOOP
        EXECUTE pg_catalog.format('INSERT INTO %s (id_a, id_b, distance) SELECT p.id_a, p.id_b, p.distance
                                   FROM @extschema@.simhash_distributed_pairs_of_table($1, $2, $3, $4, $5, $6) p', target)
            USING relation, id_column, fingerprint_column, radius, layout.key_blocks, t;
        COMMIT;
    END LOOP;
END
$procedure$;
COMMENT ON PROCEDURE simhash_pairs_distributed_into(regclass, name, name, regclass, integer, integer) IS
    'simhash_pairs_distributed written into the table result (id_a bigint, id_b bigint, distance integer), one transaction per permuted table, so that the workers hold the staged rows of one table at a time: for tables whose staged copies would not fit on the workers'' disks at once; CALL it outside a transaction block';

CREATE FUNCTION simhash_pair_groups(pairs_query text, memory_limit text DEFAULT NULL)
    RETURNS TABLE (id bigint, group_id bigint)
    AS 'MODULE_PATHNAME', 'simhash_pair_groups' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_pair_groups(text, text) IS
    'Connected components of the pairs of pairs_query (id_a bigint, id_b bigint), e.g. from simhash_pairs_distributed: every id of some pair with the smallest id of its group (ids in no pair are not listed); in memory, 48 bytes a pair';

CREATE FUNCTION simhash_groups_distributed(relation regclass, id_column name, fingerprint_column name,
                                           radius integer DEFAULT 10, max_tables integer DEFAULT 16)
    RETURNS TABLE (id bigint, group_id bigint)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    -- The calls below name the extension's schema as it was named at installation: after a
    -- rename that name could be another schema's, whose functions would run in their place.
    IF (SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n
        ON n.oid = e.extnamespace WHERE e.extname = 'simhash') <> '@extschema@' THEN
        RAISE EXCEPTION 'the schema of extension simhash is no longer named @extschema@' USING ERRCODE = '55000',
            HINT = 'The distributed functions name it in their SQL: rename the schema back, or drop and create the extension.';
    END IF;
    RETURN QUERY SELECT g.id, g.group_id FROM @extschema@.simhash_pair_groups(pg_catalog.format(
        'SELECT id_a, id_b FROM @extschema@.simhash_pairs_distributed(%L::pg_catalog.oid::pg_catalog.regclass, %L, %L, %L::pg_catalog.int4, %L::pg_catalog.int4)',
        relation::pg_catalog.oid, id_column, fingerprint_column, radius, max_tables)) g;
END
$function$;
COMMENT ON FUNCTION simhash_groups_distributed(regclass, name, name, integer, integer) IS
    'Connected components of the within-radius pairs of a Citus table, the pairs computed on the workers (simhash_pairs_distributed) and only they grouped on the coordinator: every row with a near-duplicate and the smallest id of its group (rows without one are not listed)';

CREATE FUNCTION minhash_lsh_parameters(threshold double precision, slots integer, OUT bands integer, OUT "rows" integer) RETURNS record
    AS 'MODULE_PATHNAME', 'minhash_lsh_parameters' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_lsh_parameters(double precision, integer) IS
    'The LSH banding minhash_pairs chooses for a threshold and signatures of slots slots: bands of rows slots each';
CREATE FUNCTION minhash_band_key(signature integer[], "rows" integer, band integer) RETURNS bigint
    AS 'MODULE_PATHNAME', 'minhash_band_key' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_band_key(integer[], integer, integer) IS
    'The hash of band band (0-based, rows slots each) of a MinHash signature: rows to be compared in that band must be co-located by it';
CREATE FUNCTION minhash_pairs_agg_transfn(internal, bigint, integer[], double precision, integer, integer) RETURNS internal
    AS 'MODULE_PATHNAME', 'minhash_pairs_agg_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION minhash_pairs_agg_finalfn(internal) RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'minhash_pairs_agg_finalfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE minhash_pairs_agg(id bigint, signature integer[], threshold double precision, "rows" integer, band integer) (
    SFUNC = minhash_pairs_agg_transfn, STYPE = internal, FINALFUNC = minhash_pairs_agg_finalfn, PARALLEL = SAFE);
COMMENT ON AGGREGATE minhash_pairs_agg(bigint, integer[], double precision, integer, integer) IS
    'The pairs one LSH band reports among a group of rows of equal band key (the first band both share, estimated Jaccard at least threshold), as a flat array of (id_a, id_b, equal slots) triples (NULL: none); GROUP BY the band and its key';
COMMENT ON FUNCTION minhash_pairs_agg_transfn(internal, bigint, integer[], double precision, integer, integer) IS 'minhash_pairs_agg transition function';
COMMENT ON FUNCTION minhash_pairs_agg_finalfn(internal) IS 'minhash_pairs_agg final function: the pairs of the group';

CREATE FUNCTION minhash_pairs_distributed(relation regclass, id_column name, signature_column name,
                                          threshold double precision DEFAULT 0.8, bands integer DEFAULT NULL,
                                          "rows" integer DEFAULT NULL)
    RETURNS TABLE (id_a bigint, id_b bigint, jaccard double precision)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    rel_schema name;
    source text;
    staging text;
    distributed boolean;
    repeated bigint;
    null_id boolean;
    slots integer;
    most_slots integer;
    band_count integer := bands;
    band_rows integer := "rows";
BEGIN
    -- The calls below name the extension's schema as it was named at installation: after a
    -- rename that name could be another schema's, whose functions would run in their place.
    IF (SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n
        ON n.oid = e.extnamespace WHERE e.extname = 'simhash') <> '@extschema@' THEN
        RAISE EXCEPTION 'the schema of extension simhash is no longer named @extschema@' USING ERRCODE = '55000',
            HINT = 'The distributed functions name it in their SQL: rename the schema back, or drop and create the extension.';
    END IF;
    IF relation IS NULL OR id_column IS NULL OR signature_column IS NULL OR threshold IS NULL THEN
        RAISE EXCEPTION 'minhash_pairs_distributed arguments must not be NULL' USING ERRCODE = '22004';
    END IF;
    IF NOT (threshold > 0 AND threshold <= 1) THEN
        RAISE EXCEPTION 'threshold must be greater than 0 and at most 1, not %', threshold USING ERRCODE = '22023';
    END IF;
    SELECT r.schema_name, r.qualified_name, r.distributed INTO rel_schema, source, distributed
    FROM @extschema@.simhash_distributed_relation(relation) r;
    PERFORM @extschema@.simhash_distributed_check_columns('minhash_pairs_distributed', relation, id_column,
                                                          signature_column, 'pg_catalog.int4[]');
    IF NOT distributed THEN
        PERFORM @extschema@.simhash_distributed_refuse_null_ids('minhash_pairs_distributed', relation, id_column,
                                                                signature_column, 'signature');
        RETURN QUERY SELECT p.id_a, p.id_b, p.jaccard FROM @extschema@.minhash_pairs(
            pg_catalog.format('SELECT %I::pg_catalog.int8, %I FROM %s WHERE %I IS NOT NULL',
                              id_column, signature_column, source, signature_column), threshold, bands, "rows") p;
        RETURN;
    END IF;
    -- One scan finds a repeated or NULL id (pairs are reported by id: every row needs one of its
    -- own, as minhash_pairs checks) and the signatures' lengths, which must be one.
    EXECUTE pg_catalog.format(
        'SELECT pg_catalog.min(id) FILTER (WHERE c OPERATOR(pg_catalog.>) 1), COALESCE(pg_catalog.bool_or(id IS NULL), false),
                pg_catalog.min(fewest), pg_catalog.max(most)
         FROM (SELECT %I::pg_catalog.int8 AS id, pg_catalog.count(*) AS c,
                      pg_catalog.min(@extschema@.minhash_slots(%I)) AS fewest, pg_catalog.max(@extschema@.minhash_slots(%I)) AS most
               FROM %s WHERE %I IS NOT NULL GROUP BY 1) g',
        id_column, signature_column, signature_column, source, signature_column) INTO repeated, null_id, slots, most_slots;
    IF null_id THEN
        PERFORM @extschema@.simhash_distributed_refuse_null_ids('minhash_pairs_distributed', relation, id_column,
                                                                signature_column, 'signature');
    END IF;
    IF slots <> most_slots THEN
        RAISE EXCEPTION 'minhash_pairs_distributed: signatures have different numbers of slots (% and %)', slots, most_slots
            USING ERRCODE = '22023', HINT = 'Compute all signatures with the same slots.';
    END IF;
    IF repeated IS NOT NULL THEN
        RAISE EXCEPTION '%: id % appears more than once in %', 'minhash_pairs_distributed', repeated, source USING ERRCODE = '23505',
            DETAIL = 'Pairs are reported by id, so every row needs an id of its own.',
            HINT = 'Use a unique key (the primary key or the distribution column when it is unique) as the id.';
    END IF;
    IF slots IS NULL THEN
        RETURN;
    END IF;
    IF band_count IS NULL AND band_rows IS NULL THEN
        SELECT l.bands, l."rows" INTO band_count, band_rows FROM @extschema@.minhash_lsh_parameters(threshold, slots) l;
    ELSIF band_count IS NULL OR band_rows IS NULL THEN
        RAISE EXCEPTION 'give both bands and rows, or neither' USING ERRCODE = '22023';
    ELSIF band_count < 1 OR band_rows < 1 OR band_count::pg_catalog.int8 * band_rows > slots THEN
        RAISE EXCEPTION 'bands and rows must be positive with bands * rows at most % (the slots), not % * %',
            slots, band_count, band_rows USING ERRCODE = '22023';
    END IF;
    -- Every row once per band, distributed by (band, band hash): rows of equal band meet on one
    -- node, which compares them; only the pairs reach the coordinator.
    staging := pg_catalog.format('%I.%I', rel_schema,
                                 pg_catalog.format('minhash_pairs_%s_%s', pg_catalog.pg_backend_pid(), pg_catalog.txid_current()));
    EXECUTE pg_catalog.format('CREATE UNLOGGED TABLE %s (bucket pg_catalog.int8, band pg_catalog.int2, id pg_catalog.int8, signature pg_catalog.int4[])', staging);
    PERFORM pg_catalog.create_distributed_table(staging, 'bucket', colocate_with => 'none');
    EXECUTE pg_catalog.format(
        'INSERT INTO %s SELECT @extschema@.minhash_band_key(r.signature, $1, b) OPERATOR(pg_catalog.#) (b::pg_catalog.int8 OPERATOR(pg_catalog.<<) 56), b, r.id, r.signature
         FROM (SELECT %I::pg_catalog.int8 AS id, %I AS signature FROM %s WHERE %I IS NOT NULL) r,
              pg_catalog.generate_series(0, $2 OPERATOR(pg_catalog.-) 1) b',
        staging, id_column, signature_column, source, signature_column)
        USING band_rows, band_count;
    RETURN QUERY EXECUTE pg_catalog.format(
        'SELECT u.id_a, u.id_b, u.value::pg_catalog.float8 OPERATOR(pg_catalog./) $3
         FROM (SELECT @extschema@.minhash_pairs_agg(id, signature, $1, $2, band) AS p FROM %s GROUP BY bucket, band) g,
              @extschema@.simhash_unpack_pairs(g.p) u', staging)
        USING threshold, band_rows, slots::pg_catalog.float8;
    EXECUTE pg_catalog.format('DROP TABLE %s', staging);
END
$function$;
COMMENT ON FUNCTION minhash_pairs_distributed(regclass, name, name, double precision, integer, integer) IS
    'minhash_pairs over a Citus distributed table, computed on the workers: rows are repartitioned by each LSH band''s hash and compared where they meet, and only the pairs reach the coordinator (a table that is not distributed runs minhash_pairs); ids must be unique';

--------------------------------------------------------------------------------------------------
-- Deduplication on load: a BEFORE INSERT OR UPDATE row trigger (bigint fingerprint column,
-- plain or stored generated) that skips, rejects or marks rows within a radius of a stored row (or
-- of a row inserted earlier by the same statement), optionally only those whose text it verifies by
-- exact shingle similarity, race-free through transaction-scoped advisory locks on the fingerprint's
-- neighbourhood (radius + 1 blocks, pigeonhole); the event trigger that checks its arguments at
-- CREATE TRIGGER; and the lock helper for load procedures.
--------------------------------------------------------------------------------------------------

CREATE FUNCTION simhash_dedup() RETURNS trigger
    AS 'MODULE_PATHNAME', 'simhash_dedup' LANGUAGE C;
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

CREATE FUNCTION simhash_lock_neighbourhood(fingerprint bigint, radius integer, scope regclass) RETURNS void
    AS 'MODULE_PATHNAME', 'simhash_lock_neighbourhood' LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_lock_neighbourhood(bigint, integer, regclass) IS
    'Takes the transaction-scoped advisory locks simhash_dedup() takes for a fingerprint: any two fingerprints within radius bits share at least one lock in the same scope (table); at most 1024 distinct locks per scope; needs INSERT or UPDATE privilege on the scope table';

CREATE FUNCTION simhash_lock_neighbourhoods(fingerprints bigint[], radius integer, scope regclass) RETURNS void
    AS 'MODULE_PATHNAME', 'simhash_lock_neighbourhoods' LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_lock_neighbourhoods(bigint[], integer, regclass) IS
    'Takes the locks simhash_lock_neighbourhood takes for every fingerprint of a batch (NULLs skipped), all at once in ascending key order, so that transactions loading several rows each never deadlock on them; needs INSERT or UPDATE privilege on the scope table';

CREATE FUNCTION simhash_neighbourhood_keys(fingerprint bigint, radius integer) RETURNS integer[]
    AS 'MODULE_PATHNAME', 'simhash_neighbourhood_keys' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_neighbourhood_keys(bigint, integer) IS
    'The folded lock keys (0..1023, sorted, distinct) of a fingerprint''s neighbourhood: pg_locks shows them as advisory locks with classid = table oid, objid = key, objsubid = 21320';

-- Bulk near-dedup load: the rows of a query into a table, less the near-duplicates of the table's
-- rows and of each other (or all of them, near-duplicates pointed at what they duplicate).
CREATE FUNCTION simhash_insert_distinct(target regclass, source text, radius integer, action text DEFAULT 'skip',
                                        fingerprint name DEFAULT NULL, mark_column name DEFAULT NULL,
                                        key_column name DEFAULT 'id', memory_limit text DEFAULT NULL,
                                        OUT inserted bigint, OUT skipped bigint, OUT marked bigint)
    AS 'MODULE_PATHNAME', 'simhash_insert_distinct' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_insert_distinct(regclass, text, integer, text, name, name, name, text) IS
    'Inserts the rows of the source query into target (columns matched by name), in the query''s order, except a row within radius bits of a row of target or of a row the same load inserted before it (action ''skip''), or inserts every row with mark_column set to the key (key_column) of the row it duplicates (''mark''); the fingerprint is the column named, or the one with a simhash index; checks a chunk of rows at a time (memory_limit, default maintenance_work_mem) through that index, holding every neighbourhood lock of target until the transaction ends; returns the rows inserted, skipped and marked';

CREATE FUNCTION simhash_insert_distinct_rows() RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'simhash_insert_distinct_rows' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION simhash_insert_distinct_rows() IS
    'Internal: the rows a running simhash_insert_distinct hands its INSERT; an error anywhere else';
