#!/usr/bin/env bash
# Checks that the release metadata agree: META.json (PGXN meta-spec 1.0.0) parses and has the
# fields PGXN needs, its release version is the Makefile's EXTVERSION, the version it gives the
# extension is simhash.control's default_version, the files it names exist; where there is a
# debian/ (`make dist` leaves it out), debian/changelog packages that same release and
# debian/pgversions starts at META.json's minimum PostgreSQL; and, in a git checkout, `make dist`
# builds simhash-VERSION.zip with META.json and the sources under simhash-VERSION/ and without
# what .gitattributes keeps out of it.
# Usage: scripts/check_release_metadata.sh [source tree]   (default: this repository)
set -euo pipefail

ROOT=$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)

python3 - "$ROOT" <<'EOF'
import json, os, re, sys

root = sys.argv[1]
errors = []

def read(name):
    with open(os.path.join(root, name), encoding="utf-8") as f:
        return f.read()

def setting(text, pattern, where):
    match = re.search(pattern, text, re.MULTILINE)
    if not match:
        sys.exit(f"check_release_metadata: no {where}")
    return match.group(1)

extension_version = setting(read("Makefile"), r"^EXTVERSION\s*=\s*(\S+)\s*$", "EXTVERSION in Makefile")
extension_name = setting(read("Makefile"), r"^EXTENSION\s*=\s*(\S+)\s*$", "EXTENSION in Makefile")
default_version = setting(read(f"{extension_name}.control"),
                          r"^default_version\s*=\s*'([^']*)'", f"default_version in {extension_name}.control")

try:
    meta = json.loads(read("META.json"))
except (OSError, ValueError) as e:
    sys.exit(f"check_release_metadata: META.json: {e}")
if not isinstance(meta, dict):
    sys.exit("check_release_metadata: META.json is not a JSON object")

def field(path):
    value = meta
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value

def nonempty_string(value):
    return isinstance(value, str) and value.strip() != ""

# PGXN's meta-spec 1.0.0 requires name, abstract, maintainer, license, provides, version and
# meta-spec; description, prereqs and release_status are what this release publishes besides.
for path in ("name", "abstract", "description", "version", "license", "release_status",
             "meta-spec.version", "prereqs.runtime.requires.PostgreSQL"):
    if not nonempty_string(field(path)):
        errors.append(f"META.json: {path} is missing or not a non-empty string")
maintainer = field("maintainer")
if not (nonempty_string(maintainer) or
        (isinstance(maintainer, list) and maintainer and all(map(nonempty_string, maintainer)))):
    errors.append("META.json: maintainer must be a string or a non-empty list of strings")
if field("meta-spec.version") not in (None, "1.0.0"):
    errors.append(f"META.json: meta-spec.version is {field('meta-spec.version')}, not 1.0.0")
if field("release_status") not in (None, "stable", "testing", "unstable"):
    errors.append("META.json: release_status must be stable, testing or unstable")
if field("name") not in (None, extension_name):
    errors.append(f"META.json: name is {field('name')}, the extension is {extension_name}")
tags = field("tags")
if tags is not None and not (isinstance(tags, list) and all(map(nonempty_string, tags))):
    errors.append("META.json: tags must be a list of strings")

# PGXN takes semantic versions only.
semver = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+)?$")
if nonempty_string(field("version")):
    if not semver.match(meta["version"]):
        errors.append(f"META.json: version {meta['version']} is not a semantic version")
    if meta["version"] != extension_version:
        errors.append(f"META.json: version {meta['version']} differs from the Makefile's "
                      f"EXTVERSION {extension_version} (the release `make dist` names)")

provided = field(f"provides.{extension_name}")
if not isinstance(provided, dict):
    errors.append(f"META.json: provides.{extension_name} is missing")
else:
    for key in ("file", "version", "abstract"):
        if not nonempty_string(provided.get(key)):
            errors.append(f"META.json: provides.{extension_name}.{key} is missing")
    if nonempty_string(provided.get("version")):
        if not semver.match(provided["version"]):
            errors.append(f"META.json: provides.{extension_name}.version {provided['version']} "
                          "is not a semantic version")
        if provided["version"] != default_version:
            errors.append(f"META.json: provides.{extension_name}.version {provided['version']} differs "
                          f"from {extension_name}.control's default_version {default_version}")
    for key in ("file", "docfile"):
        name = provided.get(key)
        if nonempty_string(name) and not os.path.isfile(os.path.join(root, name)):
            errors.append(f"META.json: provides.{extension_name}.{key} {name} does not exist")

# The Debian package of this release: its upstream version is the release version, and it is
# built for the PostgreSQL versions META.json promises.
debian_checked = os.path.isfile(os.path.join(root, "debian/changelog"))
if debian_checked:
    package_version = setting(read("debian/changelog"), r"^\S+ \(([^)]+)\)", "version in debian/changelog")
    upstream_version = re.sub(r"^[0-9]+:", "", package_version).rsplit("-", 1)[0]
    if upstream_version != extension_version:
        errors.append(f"debian/changelog: the package's version {package_version} is not of release "
                      f"{extension_version} (add an entry: dch -v {extension_version}-1)")
if os.path.isfile(os.path.join(root, "debian/pgversions")) and nonempty_string(field("prereqs.runtime.requires.PostgreSQL")):
    minimum = setting(read("debian/pgversions"), r"^([0-9]+)\+\s*$", "NN+ line in debian/pgversions")
    required = meta["prereqs"]["runtime"]["requires"]["PostgreSQL"].split(".")[0]
    if minimum != required:
        errors.append(f"debian/pgversions starts at PostgreSQL {minimum}, META.json requires {required}")

for error in errors:
    print(f"check_release_metadata: {error}", file=sys.stderr)
if errors:
    sys.exit(1)
checked = ["META.json", f"{extension_name}.control", "the Makefile"] + (["debian/"] if debian_checked else [])
print(f"check_release_metadata: {', '.join(checked[:-1])} and {checked[-1]} agree "
      f"on release {extension_version} (extension version {default_version})")
EOF

# The release archive, built by `make dist` as a release manager would, into a scratch directory.
if git -C "$ROOT" rev-parse --verify -q HEAD >/dev/null 2>&1; then
    scratch=$(mktemp -d /tmp/simhash-dist.XXXXXX)
    trap 'rm -rf "$scratch"' EXIT
    make -C "$ROOT" -s dist DIST_ARCHIVE="$scratch/dist.zip" >/dev/null
    python3 - "$ROOT" "$scratch/dist.zip" <<'EOF'
import json, re, sys, zipfile

root, archive = sys.argv[1], sys.argv[2]
meta = json.load(open(f"{root}/META.json", encoding="utf-8"))
prefix = f"{meta['name']}-{meta['version']}/"
names = zipfile.ZipFile(archive).namelist()
errors = []
outside = [n for n in names if not n.startswith(prefix)]
if outside:
    errors.append(f"entries outside {prefix}: {outside[:5]}")
for needed in ("META.json", "Makefile", f"{meta['name']}.control", meta["provides"][meta["name"]]["file"],
               "sql/", "expected/", "src/"):
    if prefix + needed not in names:
        errors.append(f"{prefix}{needed} is missing")
for excluded in ("debian/", ".ci/"):
    if any(n.startswith(prefix + excluded) for n in names):
        errors.append(f"{prefix}{excluded} is in the archive (.gitattributes marks it export-ignore)")
for error in errors:
    print(f"check_release_metadata: make dist: {error}", file=sys.stderr)
if errors:
    sys.exit(1)
print(f"check_release_metadata: make dist builds {meta['name']}-{meta['version']}.zip ({len(names)} entries)")
EOF
else
    echo "check_release_metadata: not a git checkout, make dist not checked"
fi
