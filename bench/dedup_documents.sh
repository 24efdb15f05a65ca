#!/usr/bin/env bash
# Dedup on load of documents, as an ETL job runs it: LOAD_ROWS (default 1M) documents of LINES
# (default 32) lines of the machine's licence and copyright texts, fingerprinted with FINGERPRINT
# (default minhash64) in the INSERT, in transactions of BATCH_ROWS (default 5000), into a table of
# BASE_ROWS (default 10M) rows with a simhash index: plain, then other documents through
# simhash_dedup('fp', '3', 'skip'). Compare bench/ingest_bench.sh's dedup figures, whose rows are
# bare fingerprints. Builds and drops its tables (dedup_docs, dedup_staging; a few GB at 1M rows).
#
# Usage: bench/dedup_documents.sh [BASE_ROWS]   (PGHOST, PGPORT, PGUSER, PGDATABASE; superuser, to
# read the machine's licence texts; the database needs CREATE EXTENSION simhash). Numbers, not a
# test: run it on a quiet machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"${PSQL:-psql}" -X -q -At -v ON_ERROR_STOP=1 -v base="${1:-10000000}" -v load_rows="${LOAD_ROWS:-1000000}" \
    -v batch_rows="${BATCH_ROWS:-5000}" -v lines="${LINES:-32}" -v fingerprint="${FINGERPRINT:-minhash64}" \
    -f "$here/dedup_documents.sql"
