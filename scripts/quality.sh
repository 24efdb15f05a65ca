#!/usr/bin/env bash
# Quality evaluation (numbers, not a test): precision, recall and F1 of SimHash and MinHash on the
# English and Chinese Debian FAQ with generated near-duplicates. Leaves nothing running.
source "$(dirname "$0")/common.sh"
DEBIAN_PACKAGES+=(debian-faq debian-faq-zh-cn)
install_packages
build_and_install
start_cluster
FAQ_DIR="$CLUSTER_DIR/faq"
mkdir -p "$FAQ_DIR"
zcat /usr/share/doc/debian/FAQ/debian-faq.en.txt.gz >"$FAQ_DIR/debian-faq.en.txt"
zcat /usr/share/doc/debian/FAQ/debian-faq.zh-cn.txt.gz >"$FAQ_DIR/debian-faq.zh-cn.txt"
chown -R "$CLUSTER_USER" "$FAQ_DIR" 2>/dev/null || true
psql -X -q -v faqdir="$FAQ_DIR" -f "$REPO_ROOT/bench/quality.sql"
