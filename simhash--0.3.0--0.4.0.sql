-- simhash extension: upgrade from 0.3.0 to 0.4.0
\echo Use "ALTER EXTENSION simhash UPDATE TO '0.4.0'" to load this file. \quit

-- Every change to the catalog between 0.3.0 and 0.4.0, in the order of simhash--0.4.0.sql.
-- sql/upgrade.sql checks that an updated 0.1.0 has the same catalog as a fresh 0.4.0.

-- A double precision radius (a driver's float) reaches the index, as integer radii do.
CREATE OR REPLACE FUNCTION hamming_radius_at_most(k double precision) RETURNS integer
    AS 'MODULE_PATHNAME', 'simhash_radius_at_most_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_radius_at_most(double precision) IS
    'The radius r in -1..64 with hamming(a, b) <= k exactly when hamming(a, b) <= r: floor(k), clamped; NaN is refused (used by the <= rewrite)';
CREATE OR REPLACE FUNCTION hamming_radius_below(k double precision) RETURNS integer
    AS 'MODULE_PATHNAME', 'simhash_radius_below_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hamming_radius_below(double precision) IS
    'The radius r in -1..64 with hamming(a, b) < k exactly when hamming(a, b) <= r: ceil(k) - 1, clamped; NaN is refused (used by the < rewrite)';
CREATE OR REPLACE FUNCTION hamming_distance_lt(hamming_distance, double precision) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_distance_lt_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_lt(hamming_distance, double precision) IS 'implementation of < for hamming_distance and double precision; rewritten to hamming_within() by the planner';
CREATE OR REPLACE FUNCTION hamming_distance_lt(double precision, hamming_distance) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_float8_lt_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_lt(double precision, hamming_distance) IS 'implementation of < for double precision and hamming_distance';
CREATE OR REPLACE FUNCTION hamming_distance_le(hamming_distance, double precision) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_distance_le_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_le(hamming_distance, double precision) IS 'implementation of <= for hamming_distance and double precision; rewritten to hamming_within() by the planner';
CREATE OR REPLACE FUNCTION hamming_distance_le(double precision, hamming_distance) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_float8_le_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_le(double precision, hamming_distance) IS 'implementation of <= for double precision and hamming_distance';
CREATE OR REPLACE FUNCTION hamming_distance_gt(hamming_distance, double precision) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_distance_gt_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_gt(hamming_distance, double precision) IS 'implementation of > for hamming_distance and double precision';
CREATE OR REPLACE FUNCTION hamming_distance_gt(double precision, hamming_distance) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_float8_gt_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_gt(double precision, hamming_distance) IS 'implementation of > for double precision and hamming_distance; rewritten to hamming_within() by the planner';
CREATE OR REPLACE FUNCTION hamming_distance_ge(hamming_distance, double precision) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_distance_ge_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE SUPPORT hamming_comparison_support;
COMMENT ON FUNCTION hamming_distance_ge(hamming_distance, double precision) IS 'implementation of >= for hamming_distance and double precision';
CREATE OR REPLACE FUNCTION hamming_distance_ge(double precision, hamming_distance) RETURNS boolean
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

-- The record of indexes that need REINDEX, which simhash_index_check reads. The update to 0.3.0
-- creates it (and records the indexes it names) since this release; an installation updated to
-- 0.3.0 before has none, hence IF NOT EXISTS.
CREATE TABLE IF NOT EXISTS simhash_reindex_needed (index_oid oid NOT NULL, relfilenode oid NOT NULL, reason text NOT NULL);
GRANT SELECT ON simhash_reindex_needed TO PUBLIC;
COMMENT ON TABLE simhash_reindex_needed IS
    'Indexes an update of the extension recorded as holding values of an earlier definition (index_oid, its relfilenode then, why): while the relfilenode is unchanged the index needs REINDEX, and simhash_index_check says so';

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

-- A NULL id is refused in words of the table and columns the caller named, also on a table that
-- is not distributed (simhash_pairs and minhash_pairs spoke of their query).
CREATE OR REPLACE FUNCTION simhash_distributed_refuse_null_ids(function_name text, relation regclass, id_column name,
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

-- (The NULL-id refusal above.)
CREATE OR REPLACE FUNCTION simhash_distributed_pairs_layout(relation regclass, id_column name, fingerprint_column name,
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

-- simhash_pairs_distributed_into leaves the caller's search_path alone (it used to set it for the
-- rest of the caller's transaction): everything it names is schema-qualified instead.
CREATE OR REPLACE PROCEDURE simhash_pairs_distributed_into(relation regclass, id_column name, fingerprint_column name,
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

-- (The NULL-id refusal above.)
CREATE OR REPLACE FUNCTION minhash_pairs_distributed(relation regclass, id_column name, signature_column name,
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

-- The tables option of a simhash index is taken only as "auto" or a plain number now. Earlier
-- releases stored other spellings as given (" 4 ", "AUTO"), which a dump would then fail to
-- restore: they are rewritten in the form that reads the same. (pg_class directly: ALTER INDEX
-- cannot set the options of a partitioned index.)
DO $$
DECLARE
  idx record;
  canonical pg_catalog.text[];
BEGIN
  FOR idx IN
    SELECT c.oid, c.reloptions FROM pg_catalog.pg_class c JOIN pg_catalog.pg_am a ON a.oid OPERATOR(pg_catalog.=) c.relam
    WHERE a.amname OPERATOR(pg_catalog.=) 'simhash' AND c.reloptions IS NOT NULL
  LOOP
    canonical := ARRAY(
      SELECT CASE WHEN o.option OPERATOR(pg_catalog.!~) '^tables=' THEN o.option
                  WHEN v.value OPERATOR(pg_catalog.~*) '^auto$' THEN 'tables=auto'
                  WHEN v.value OPERATOR(pg_catalog.~) '^[+-]?[0-9]+$' THEN 'tables=' OPERATOR(pg_catalog.||) v.value::pg_catalog.int4::pg_catalog.text
                  ELSE o.option END
      FROM pg_catalog.unnest(idx.reloptions) WITH ORDINALITY o(option, n),
           LATERAL (SELECT pg_catalog.btrim(pg_catalog.substr(o.option, 8), E' \t\n\v\f\r') AS value) v
      ORDER BY o.n);
    IF canonical OPERATOR(pg_catalog.<>) idx.reloptions THEN
      UPDATE pg_catalog.pg_class SET reloptions = canonical WHERE oid OPERATOR(pg_catalog.=) idx.oid;
    END IF;
  END LOOP;
END $$;

-- The distributed pairs and groups default to radius 10 too, as simhash_pairs does.
CREATE OR REPLACE FUNCTION simhash_pairs_distributed(relation regclass, id_column name, fingerprint_column name,
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

CREATE OR REPLACE FUNCTION simhash_groups_distributed(relation regclass, id_column name, fingerprint_column name,
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

-- The index's on-disk format changed (version 5: directories of more than 16 bits, listed in each
-- run's page list, and 3 tables in runs of 100M entries or more): indexes built by 0.3.0 are
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
        IF (SELECT i.version FROM @extschema@.simhash_index_info(idx) i) OPERATOR(pg_catalog.<) 5 THEN
            names := pg_catalog.concat_ws(', ', names, idx::pg_catalog.text);
        END IF;
    END LOOP;
    IF names IS NOT NULL THEN
        RAISE WARNING 'simhash 0.4.0 stores indexes in a new on-disk format; REINDEX these indexes: %', names
            USING HINT = 'REINDEX INDEX CONCURRENTLY name; rebuilds one while writers go on. Until then, queries and writes that use them fail with this hint.';
    END IF;
END
$$;
