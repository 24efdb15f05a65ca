#!/usr/bin/env bash
# Dedup on load by radius: for each radius in RADII (default "0 1 3 6 10 unique"), a fresh table of BASE
# random fingerprints (default 10M; DATA=uniform, the default, or skewed: the 12 low bits
# constant, as bench_data.sql's skewed data set) with a simhash index, LOAD_ROWS rows (default 1M) loaded
# without the trigger, then other rows through simhash_dedup('fp', radius, 'skip'): LOAD_ROWS up to
# radius 3, a fifth of them up to radius 6, a twentieth beyond (a row's check is a query at the
# radius and grows with it: at radius 10 a million rows would take about eleven minutes here).
# Transactions of BATCH_ROWS (default 5000). Prints both rates, the ratio and the time a row takes
# through the trigger, and how many rows it skipped. DUPLICATES (a percentage, default 0) of the
# checked rows are near-duplicates of stored rows (one bit away; equal at radius 0), the others
# random. The word `unique` in RADII (there by default) measures instead what
# PostgreSQL offers for exact duplicates without the extension, on the same table: a UNIQUE B-tree
# on fp and INSERT ... ON CONFLICT (fp) DO NOTHING (bench/dedup_unique.sql), LOAD_ROWS rows each.
#
# Usage: bench/dedup_radius.sh [BASE]
# Connection through PGHOST, PGPORT, PGUSER, PGDATABASE; the database needs CREATE EXTENSION
# simhash (and pg_prewarm, if available, to start from an index in shared buffers). Numbers, not a
# test: run it on a quiet machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
psql=(${PSQL:-psql} -X -q -v ON_ERROR_STOP=1)
base=${1:-10000000}
load_rows=${LOAD_ROWS:-1000000}
batch_rows=${BATCH_ROWS:-5000}
# Row ROW's fingerprint.
case ${DATA:-uniform} in
    uniform) fingerprint_of='hashint8extended(ROW, 11)' ;;
    skewed) fingerprint_of='(hashint8extended(ROW, 11) & ~4095::bigint)' ;;
    *) echo "DATA must be uniform or skewed" >&2; exit 2 ;;
esac
fingerprint=${fingerprint_of//ROW/g}
duplicates=${DUPLICATES:-0}
[[ $duplicates =~ ^[0-9]+$ ]] && ((duplicates <= 100)) || { echo "DUPLICATES must be a percentage" >&2; exit 2; }
echo "data: ${DATA:-uniform}, ${duplicates}% of the checked rows near-duplicates of stored rows"
prewarm=$("${psql[@]}" -At -c "SELECT count(*) FROM pg_extension WHERE extname = 'pg_prewarm'")

for radius in ${RADII:-0 1 3 6 10 unique}; do
    "${psql[@]}" -v base="$base" -v kind=simhash -v ingest_fp="$fingerprint" -f "$here/ingest_setup.sql"
    if [[ $prewarm == 1 ]]; then "${psql[@]}" -At -c "SELECT pg_prewarm('ingest_sh')" >/dev/null; fi
    if [[ $radius == unique ]]; then
        "${psql[@]}" -At -v base="$base" -v dedup_rows="$load_rows" -v batch_rows="$batch_rows" \
            -v ingest_fp="$fingerprint" -v prewarm="$prewarm" -f "$here/dedup_unique.sql"
        continue
    fi
    if ((radius <= 3)); then checked_rows=$load_rows
    elif ((radius <= 6)); then checked_rows=$((load_rows / 5))
    else checked_rows=$((load_rows / 20)); fi
    # Checked row g (base + LOAD_ROWS + 1 onwards) is, for DUPLICATES in every 100, row
    # g - base - LOAD_ROWS of the table's first rows (in the run CREATE INDEX built) with one bit
    # flipped (none at radius 0), else a new random fingerprint.
    stored=${fingerprint_of//ROW/(g - $base - $load_rows)}
    flip=$((radius > 0 ? 1 : 0))
    checked_fp="CASE WHEN g % 100 < $duplicates THEN $stored # ($flip::bigint << (g % 64)::int) ELSE $fingerprint END"
    "${psql[@]}" -At -v base="$base" -v dedup_rows="$load_rows" -v checked_rows="$checked_rows" \
        -v dedup_radius="$radius" -v batch_rows="$batch_rows" -v ingest_fp="$fingerprint" \
        -v checked_fp="$checked_fp" -f "$here/ingest_dedup.sql"
done
"${psql[@]}" -c "DROP TABLE IF EXISTS ingest_docs, ingest_query_ms, ingest_done"
