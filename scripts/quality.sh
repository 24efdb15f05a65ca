#!/usr/bin/env bash
# Quality evaluation (numbers, not a test): precision, recall and F1 of SimHash (every feature set
# and vote weighting, IDF weights; distances predicted from the shingles pairs share), MinHash,
# exact Jaccard and the verified hybrid, one-bit MinHash fingerprints (minhash64), and
# near_duplicates() with its defaults and the settings around them, over hash seeds, on six sources
# of real text that Debian ships (bench/quality_corpus.sql describes them). Deterministic for a
# given set of installed packages (the copyright source reads the copyright files of the packages
# listed in bench/quality_copyright_packages.txt).
# Leaves nothing running. bench/quality.sql also writes precision, recall and F1 by k to
# RESULTS_DIR/quality_f1_by_k.csv (default bench/results/), which bench/plot.sh draws.
#
# Usage: scripts/quality.sh [SQL_FILE...]   (default: bench/quality.sql bench/dedup_quality.sql)
source "$(dirname "$0")/common.sh"
source "$REPO_ROOT/bench/results.sh"
DEBIAN_PACKAGES+=(debian-faq debian-faq-zh-cn debian-reference-zh-cn debian-reference-en python3.11-doc)
install_packages
build_and_install
start_cluster
TEXT_DIR="$CLUSTER_DIR/text"
mkdir -p "$TEXT_DIR/copyright" "$TEXT_DIR/reference-html" "$TEXT_DIR/python"
zcat /usr/share/doc/debian/FAQ/debian-faq.en.txt.gz >"$TEXT_DIR/faq.en.txt"
zcat /usr/share/doc/debian/FAQ/debian-faq.zh-cn.txt.gz >"$TEXT_DIR/faq.zh.txt"
zcat /usr/share/debian-reference/debian-reference.zh-cn.txt.gz >"$TEXT_DIR/reference.zh.txt"
zcat /usr/share/debian-reference/debian-reference.en.txt.gz >"$TEXT_DIR/reference.en.txt"
cp /usr/share/debian-reference/ch*.en.html "$TEXT_DIR/reference-html/"
# The copyright source: the copyright files of a fixed list of packages (those of the machine the
# figures in docs/quality.md come from), so that installing other packages does not change it.
missing=0
while read -r package; do
    f=/usr/share/doc/$package/copyright
    if [ -f "$f" ]; then cp -L "$f" "$TEXT_DIR/copyright/$package.txt"; else missing=$((missing + 1)); fi
done <"$REPO_ROOT/bench/quality_copyright_packages.txt"
[ "$missing" -eq 0 ] || echo "==> $missing packages of bench/quality_copyright_packages.txt are not installed: the copyright source is smaller than in docs/quality.md"
# The Python documentation's pages, reST source and HTML side by side, their paths flattened
# (library/json.rst.txt -> library__json.rst.txt).
PYDOC=/usr/share/doc/python3.11/html
(cd "$PYDOC/_sources" && find . -name '*.rst.txt' | sed 's|^\./||') | while read -r page; do
    html="$PYDOC/${page%.rst.txt}.html"
    [ -f "$html" ] || continue
    flat=${page//\//__}
    cp -L "$PYDOC/_sources/$page" "$TEXT_DIR/python/$flat"
    cp -L "$html" "$TEXT_DIR/python/${flat%.rst.txt}.html"
done
chown -R "$CLUSTER_USER" "$TEXT_DIR" 2>/dev/null || true
if [ $# -eq 0 ]; then set -- "$REPO_ROOT/bench/quality.sql" "$REPO_ROOT/bench/dedup_quality.sql"; fi
for sql in "$@"; do
    psql -X -q -v textdir="$TEXT_DIR" -v resultsdir="$results_dir" -f "$sql"
done
