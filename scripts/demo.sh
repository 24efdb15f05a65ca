#!/usr/bin/env bash
# The main job, end to end on a fresh Debian bookworm machine: installs the packages, builds and
# installs the extension, starts a throwaway cluster, fingerprints real documents that Debian
# ships (package copyright files, license texts, the Chinese Debian FAQ) and prints their
# near-duplicates. Leaves nothing running.
source "$(dirname "$0")/common.sh"
DEBIAN_PACKAGES+=(debian-faq-zh-cn)

install_packages
build_and_install
start_cluster

DOC_DIR="$CLUSTER_DIR/docs"
mkdir -p "$DOC_DIR"
zcat /usr/share/doc/debian/FAQ/debian-faq.zh-cn.txt.gz >"$DOC_DIR/debian-faq.zh-cn.txt"
chown -R "$CLUSTER_USER" "$DOC_DIR" 2>/dev/null || true

psql -X -q -v docdir="$DOC_DIR" -f "$REPO_ROOT/demo/near_duplicates.sql"
