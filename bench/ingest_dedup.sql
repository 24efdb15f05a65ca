-- bench/ingest_bench.sh, bench/dedup_radius.sh, bench/scale_bench.sql: :dedup_rows rows loaded in
-- transactions of :batch_rows into the indexed table without the trigger, and :checked_rows other
-- rows (default :dedup_rows) through simhash_dedup('fp', :dedup_radius, 'skip') (default radius
-- 3), their fingerprints :checked_fp (an expression of the row number g, default :ingest_fp), in
-- :dedup_rounds rounds (default 1) of a plain load and a checked one, each round loading its share
-- of both, rows numbered in load order from :base + 1; sets plain_rows_per_s and dedup_rows_per_s
-- (the best rate of each over the rounds: a load of a few thousand rows takes a fraction of a
-- second, in whichever state a noisy machine is in) and dedup_inserted, and prints them with how
-- many checked rows the trigger skipped. The rows loaded in all do not depend on the rounds: the
-- WAL a row of an ingest after them depends on where its rows fall among the index's merges (a
-- million rows after 200,000 took 475-484 bytes a row where after 40,000 they took 404-408).
\if :{?dedup_radius}
\else
\set dedup_radius 3
\endif
\if :{?checked_rows}
\else
\set checked_rows :dedup_rows
\endif
\if :{?dedup_rounds}
\else
\set dedup_rounds 1
\endif
\ir ingest_procedure.sql
\if :{?checked_fp}
\else
\set checked_fp :ingest_fp
\endif
\set checked_insert 'INSERT INTO ingest_docs SELECT g, ' :checked_fp ' FROM ' :ingest_from
CREATE TEMP TABLE ingest_dedup_loads (checked boolean, rows_per_s numeric, inserted bigint);
CREATE PROCEDURE pg_temp.dedup_rounds(plain text, checked_insert text, radius text, first bigint, rounds int,
                                      plain_rows bigint, checked_rows bigint, batch bigint)
LANGUAGE plpgsql AS $$
DECLARE
    next bigint := first;
    rate numeric;
    inserted bigint;
BEGIN
    FOR round IN 1 .. rounds LOOP
        CALL pg_temp.load_batches(plain, next, plain_rows, batch, rate, inserted);
        INSERT INTO ingest_dedup_loads VALUES (false, rate, inserted);
        next := next + plain_rows;
        EXECUTE format('CREATE TRIGGER ingest_dedup BEFORE INSERT ON ingest_docs FOR EACH ROW '
                       'EXECUTE FUNCTION simhash_dedup(%L, %L, %L)', 'fp', radius, 'skip');
        COMMIT;
        CALL pg_temp.load_batches(checked_insert, next, checked_rows, batch, rate, inserted);
        DROP TRIGGER ingest_dedup ON ingest_docs;
        INSERT INTO ingest_dedup_loads VALUES (true, rate, inserted);
        next := next + checked_rows;
        COMMIT;
    END LOOP;
END $$;
CALL pg_temp.dedup_rounds(:'ingest_rows', :'checked_insert', :'dedup_radius', :base, :dedup_rounds,
                          :dedup_rows / :dedup_rounds, :checked_rows / :dedup_rounds, :batch_rows);
SELECT max(rows_per_s) FILTER (WHERE NOT checked) AS plain_rows_per_s, max(rows_per_s) FILTER (WHERE checked) AS dedup_rows_per_s,
       sum(inserted) FILTER (WHERE checked) AS dedup_inserted, :dedup_rounds * (:checked_rows / :dedup_rounds) AS dedup_checked
FROM ingest_dedup_loads \gset
DROP TABLE ingest_dedup_loads;
SELECT format('%s base rows: load %s rows/s plain, %s rows/s through simhash_dedup at radius %s (%s%%, %s us a row; %s of %s rows skipped)',
              :base, :plain_rows_per_s, :dedup_rows_per_s, :dedup_radius, round(100.0 * :dedup_rows_per_s / :plain_rows_per_s),
              round(1e6 / :dedup_rows_per_s, 1), :dedup_checked - :dedup_inserted, :dedup_checked);
