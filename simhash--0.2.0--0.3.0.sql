-- simhash extension: upgrade from 0.2.0 to 0.3.0
\echo Use "ALTER EXTENSION simhash UPDATE TO '0.3.0'" to load this file. \quit

-- Every change to the catalog between 0.2.0 and 0.3.0, in the order of simhash--0.3.0.sql.
-- sql/upgrade.sql checks that an updated 0.1.0 has the same catalog as a fresh 0.3.0.

-- simhash(doc): word 2-shingles, each distinct shingle voting once (was word 3-shingles, every
-- occurrence voting). Fingerprints of text change.
CREATE OR REPLACE FUNCTION simhash(doc text, unit text DEFAULT 'word', size integer DEFAULT 2) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_text_weighted' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text, text, integer) IS
    '64-bit Charikar SimHash of a document''s set of shingles (unit ''word'' or ''char'', size 1..64), each distinct shingle voting once; 0 when the text has no tokens';

CREATE FUNCTION simhash(doc text, unit text, size integer, weighting text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_text_weighted' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text, text, integer, text) IS
    'SimHash of a document''s shingles with the given votes: ''set'' (each distinct shingle once, the default), ''log'' (1 + ln of its count) or ''count'' (every occurrence: simhash(doc, ''word'', 3, ''count'') is simhash(doc) of 0.2.0 and older)';

CREATE OR REPLACE FUNCTION simhash_shingles(doc text, unit text DEFAULT 'word', size integer DEFAULT 2) RETURNS text[]
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

-- Indexes and generated columns computed with simhash(text, ...) hold fingerprints of the old
-- definition: each is named, since nothing else would tell that their values are stale.
DO $$
DECLARE
  dependent record;
BEGIN
  FOR dependent IN
    SELECT DISTINCT pg_describe_object(d.classid, d.objid, d.objsubid) AS object
    FROM pg_catalog.pg_depend d
    WHERE d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
      AND d.refobjid = '@extschema@.simhash(text, text, integer)'::pg_catalog.regprocedure
      AND d.classid IN ('pg_catalog.pg_class'::pg_catalog.regclass, 'pg_catalog.pg_attrdef'::pg_catalog.regclass)
    ORDER BY 1
  LOOP
    RAISE WARNING '% holds fingerprints computed by simhash(text) of 0.2.0', dependent.object
      USING HINT = 'Rebuild it (REINDEX, or UPDATE the table) so that it agrees with the new simhash(text).';
  END LOOP;
  -- A WARNING, since CREATE EXTENSION and ALTER EXTENSION hide an extension script's NOTICEs.
  RAISE WARNING 'simhash 0.3.0: simhash(text) now votes with each distinct word 2-shingle once, so fingerprints of text computed before differ from new ones'
    USING HINT = 'Recompute stored fingerprints (UPDATE t SET fp = simhash(body)) and rebuild the indexes on them (REINDEX INDEX CONCURRENTLY), or keep computing comparable ones with simhash(body, ''word'', 3, ''count'').';
END $$;
