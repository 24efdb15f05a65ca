-- The dedup trigger keeps a saved check plan per trigger. A session that drops and creates
-- triggers (loaders staging through temporary tables) frees the plans of triggers that no longer
-- exist: the plans held stay bounded by the triggers that do.
CREATE TABLE plan_docs (id bigserial PRIMARY KEY, fp bigint);
CREATE INDEX ON plan_docs USING simhash (fp);
SELECT count(*) AS plans_before FROM pg_backend_memory_contexts WHERE name = 'CachedPlanSource' \gset
DO $$
BEGIN
    FOR i IN 1..50 LOOP
        DROP TRIGGER IF EXISTS plan_dedup ON plan_docs;
        CREATE TRIGGER plan_dedup BEFORE INSERT ON plan_docs FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
        INSERT INTO plan_docs (fp) VALUES (hashint8extended(i, 9)), (hashint8extended(i, 9) # 1);
    END LOOP;
END $$;
SELECT count(*) AS rows_kept FROM plan_docs;
SELECT count(*) - :plans_before BETWEEN 0 AND 2 AS plans_bounded
FROM pg_backend_memory_contexts WHERE name = 'CachedPlanSource';
-- A table dropped with its trigger: its plan goes when the next trigger is first used.
CREATE TEMP TABLE plan_staging (fp bigint);
CREATE INDEX ON plan_staging USING simhash (fp);
CREATE TRIGGER staging_dedup BEFORE INSERT ON plan_staging FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
INSERT INTO plan_staging VALUES (1), (3);
DROP TABLE plan_staging;
DROP TRIGGER plan_dedup ON plan_docs;
CREATE TRIGGER plan_dedup BEFORE INSERT ON plan_docs FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
INSERT INTO plan_docs (fp) VALUES (42);
SELECT count(*) - :plans_before BETWEEN 0 AND 2 AS plans_bounded
FROM pg_backend_memory_contexts WHERE name = 'CachedPlanSource';
DROP TABLE plan_docs;
