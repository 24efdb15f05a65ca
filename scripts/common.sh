# Shared by scripts/demo.sh and scripts/test.sh: installs what the project needs and runs a
# throwaway PostgreSQL cluster (own port and socket directory, non-root user, removed on exit).
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_MAJOR=15
# SIMHASH_PG_BIN selects another (relocated) PostgreSQL installation, e.g. a private copy for a
# parallel development run; by default Debian's.
PG_BIN=${SIMHASH_PG_BIN:-/usr/lib/postgresql/$PG_MAJOR/bin}
DEBIAN_PACKAGES=(
    build-essential g++ make cmake pkg-config
    postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR postgresql-contrib
    libxxhash-dev libgtest-dev libipc-run-perl
)
# The client drivers that scripts/test.sh runs against the extension (test/clients). Node.js and
# npm come from Debian unless a node and npm are there already (another nodejs package ships its
# own npm and conflicts with Debian's).
CLIENT_PACKAGES=(
    python3-psycopg python3-psycopg2 python3-asyncpg
    default-jdk-headless libpostgresql-jdbc-java
)
command -v node >/dev/null || CLIENT_PACKAGES+=(nodejs)
command -v npm >/dev/null || CLIENT_PACKAGES+=(npm)
# What scripts/test.sh builds, checks and installs the Debian package (debian/) with. debian/control
# declares Rules-Requires-Root: no, so dpkg-buildpackage needs no fakeroot, as root or not.
PACKAGING_PACKAGES=(debhelper dpkg-dev postgresql-server-dev-all lintian)

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_packages() {
    local missing=()
    for p in "${DEBIAN_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "==> apt-get install ${missing[*]}"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
    # Debian's postgresql package starts a cluster of its own; this project never uses it.
}

build_and_install() {
    echo "==> building and installing the extension"
    make -C "$REPO_ROOT" -s -j2 PG_CONFIG="$PG_BIN/pg_config"
    as_root make -C "$REPO_ROOT" -s install PG_CONFIG="$PG_BIN/pg_config"
}

# The Debian package of the working tree, as Debian builds PostgreSQL extensions (pg_buildext:
# debian/rules), built by dpkg-buildpackage in a scratch directory from a copy of the tree's
# sources (committed and new files, none that .gitignore lists: no objects, module, unit-test
# build or test results of an earlier run); lintian must find no error; then installed into
# Debian's PostgreSQL with apt-get, replacing whatever an earlier `make install` put there.
build_and_install_package() {
    echo "==> building the Debian package"
    local work
    work=$(mktemp -d /tmp/simhash-package.XXXXXX)
    # apt reads the .deb as its own unprivileged user (_apt) where it can, and complains otherwise.
    chmod 755 "$work"
    mkdir "$work/simhash"
    if git -C "$REPO_ROOT" rev-parse --verify -q HEAD >/dev/null 2>&1; then
        (cd "$REPO_ROOT" && git ls-files -z --cached --others --exclude-standard \
            | while IFS= read -r -d '' f; do [ ! -e "$f" ] || printf '%s\0' "$f"; done \
            | tar --null -T - -cf -) | tar -xf - -C "$work/simhash"
    else
        tar -C "$REPO_ROOT" --exclude-vcs --exclude-vcs-ignores -cf - . | tar -xf - -C "$work/simhash"
    fi
    # nocheck: the build would run the regression suite against the package's files on a
    # pg_virtualenv cluster; scripts/test.sh runs it against the installed package instead.
    if ! (cd "$work/simhash" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b -Pnocheck -J2) \
        >"$work/build.log" 2>&1; then
        tail -n 60 "$work/build.log"
        echo "Debian package build FAILED (whole log in $work/build.log)" >&2
        return 1
    fi
    echo "==> lintian"
    # TMPDIR: lintian leaves cache files in its temporary directory.
    TMPDIR="$work" lintian --fail-on error "$work"/*.changes
    echo "==> installing $(cd "$work" && ls postgresql-$PG_MAJOR-simhash_*.deb)"
    # --reinstall: an earlier run installed the same version, from other sources maybe.
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall \
        "$work"/postgresql-$PG_MAJOR-simhash_*.deb >/dev/null
    rm -rf "$work"
}

# The server never runs as root: root uses the postgres account that the Debian package creates.
if [ "$(id -u)" -eq 0 ]; then CLUSTER_USER=postgres; else CLUSTER_USER=$(id -un); fi

# From /: the caller's directory may be one the cluster user cannot enter (a clone under /root),
# and the server would complain at every start. Every caller passes absolute paths.
as_cluster_user() {
    if [ "$(id -un)" = "$CLUSTER_USER" ]; then "$@"; else (cd / && runuser -u "$CLUSTER_USER" -- "$@"); fi
}

# The cluster listens on its socket directory and on loopback TCP (JDBC has no Unix sockets).
start_cluster() {
    CLUSTER_DIR=$(mktemp -d /tmp/simhash-cluster.XXXXXX)
    chown "$CLUSTER_USER" "$CLUSTER_DIR" 2>/dev/null || true
    chmod 755 "$CLUSTER_DIR"
    export PGPORT=${SIMHASH_PGPORT:-55432}
    while (echo >/dev/tcp/127.0.0.1/$PGPORT) 2>/dev/null || [ -e /tmp/.s.PGSQL.$PGPORT ]; do PGPORT=$((PGPORT + 1)); done
    export PGHOST=$CLUSTER_DIR PGUSER=$CLUSTER_USER PGDATABASE=postgres
    trap stop_cluster EXIT
    echo "==> starting a throwaway cluster in $CLUSTER_DIR (port $PGPORT)"
    as_cluster_user "$PG_BIN/initdb" -D "$CLUSTER_DIR/data" -U "$CLUSTER_USER" -E UTF8 --locale=C.UTF-8 -A trust >/dev/null
    as_cluster_user "$PG_BIN/pg_ctl" -D "$CLUSTER_DIR/data" -l "$CLUSTER_DIR/server.log" -w \
        -o "-p $PGPORT -k $CLUSTER_DIR -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
}

stop_cluster() {
    if [ -n "${CLUSTER_DIR:-}" ] && [ -d "$CLUSTER_DIR/data" ]; then
        as_cluster_user "$PG_BIN/pg_ctl" -D "$CLUSTER_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    [ -n "${CLUSTER_DIR:-}" ] && rm -rf "$CLUSTER_DIR"
    CLUSTER_DIR=
}
