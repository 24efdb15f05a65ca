#!/usr/bin/env bash
# Quality evaluation (numbers, not a test): precision, recall and F1 of SimHash (every feature set
# and vote weighting, IDF weights; distances predicted from the shingles pairs share), MinHash,
# exact Jaccard and the verified hybrid on four sources of real text that Debian ships
# (bench/quality.sql describes them), and one-bit MinHash fingerprints (minhash64). Deterministic for a given set
# of installed packages (the copyright source reads the machine's /usr/share/doc). Leaves nothing
# running. About four minutes of queries on 2 cores after the build.
source "$(dirname "$0")/common.sh"
DEBIAN_PACKAGES+=(debian-faq debian-faq-zh-cn debian-reference-zh-cn)
install_packages
build_and_install
start_cluster
TEXT_DIR="$CLUSTER_DIR/text"
mkdir -p "$TEXT_DIR/copyright"
zcat /usr/share/doc/debian/FAQ/debian-faq.en.txt.gz >"$TEXT_DIR/faq.en.txt"
zcat /usr/share/doc/debian/FAQ/debian-faq.zh-cn.txt.gz >"$TEXT_DIR/faq.zh.txt"
zcat /usr/share/debian-reference/debian-reference.zh-cn.txt.gz >"$TEXT_DIR/reference.zh.txt"
for f in /usr/share/doc/*/copyright; do
    [ -f "$f" ] && cp -L "$f" "$TEXT_DIR/copyright/$(basename "$(dirname "$f")").txt" 2>/dev/null || true
done
chown -R "$CLUSTER_USER" "$TEXT_DIR" 2>/dev/null || true
psql -X -q -v textdir="$TEXT_DIR" -f "$REPO_ROOT/bench/quality.sql"
