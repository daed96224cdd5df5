#!/usr/bin/env bash
# Builds the Debian package from this repository with dpkg-deb alone (no
# extra tool): the release binary, the unit, the default configuration (a
# conffile), man pages, the MIB files, the udev rule and group, the SM-host
# drop-in. docs/install.md says what each part is for.
#
#   packaging/build-deb.sh [OUT_DIR]        -> OUT_DIR/ibsnmpd_VERSION_ARCH.deb
#
# IBSNMPD_BIN=path skips the cargo build (CI builds once).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-target/debian}
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
ARCH=$(dpkg --print-architecture)
if [ -z "${IBSNMPD_BIN:-}" ]; then
    cargo build --release -q -p ibsnmpd --bin ibsnmpd
    IBSNMPD_BIN=${CARGO_TARGET_DIR:-target}/release/ibsnmpd
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
# The data archive's ./ as every package's: 0755 (mktemp made it 0700).
chmod 755 "$root"
d() { install -d -m 755 "$root/$1"; }

IBSNMPD_BIN=$IBSNMPD_BIN packaging/stage.sh "$root" lib/systemd/system lib/udev/rules.d
# The year and date of the commit built (reproducible builds).
YEAR=$(git log -1 --format=%cd --date=format:%Y 2>/dev/null || date +%Y)
cat > "$root/usr/share/doc/ibsnmpd/copyright" <<TXT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ibsnmpd

Files: *
Copyright: $YEAR The ibsnmpd authors
License: Apache-2.0

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may
 not use this file except in compliance with the License. You may obtain a
 copy of the License at
 .
 http://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
 WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
 License for the specific language governing permissions and limitations
 under the License.
 .
 On Debian systems, the full text of the Apache License, Version 2.0 can be
 found in the file /usr/share/common-licenses/Apache-2.0.
TXT
# Files of the source's MIB modules keep their own notices (mibs/ietf: the
# IETF Trust's; docs/mibs.md).

# Who builds the package: Debian's DEBFULLNAME and DEBEMAIL (as dch reads
# them), else the author of the commit built.
if [ -n "${DEBFULLNAME:-}" ] && [ -n "${DEBEMAIL:-}" ]; then
    MAINTAINER="$DEBFULLNAME <$DEBEMAIL>"
else
    MAINTAINER=$(git log -1 --format='%an <%ae>' 2>/dev/null || true)
fi
case "$MAINTAINER" in
*?" <"?*@?*">") ;;
*) echo "build-deb.sh: no maintainer: set DEBFULLNAME and DEBEMAIL" >&2; exit 2 ;;
esac

# A native package's changelog: this version, from the commit built.
{
    echo "ibsnmpd ($VERSION) unstable; urgency=medium"
    echo
    echo "  * Built from $(git describe --always --dirty 2>/dev/null || echo 'a source tree')."
    echo
    echo " -- $MAINTAINER  $(git log -1 --format=%cD 2>/dev/null || date -R)"
} | gzip -9n > "$root/usr/share/doc/ibsnmpd/changelog.gz"
chmod 644 "$root/usr/share/doc/ibsnmpd/changelog.gz"

d DEBIAN
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z \
    | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/md5sums"
cat > "$root/DEBIAN/control" <<TXT
Package: ibsnmpd
Version: $VERSION
Architecture: $ARCH
Maintainer: $MAINTAINER
Section: net
Priority: optional
Depends: libc6 (>= 2.34), libgcc-s1, init-system-helpers (>= 1.54~)
Recommends: libibumad3, snmp
Suggests: infiniband-diags, opensm, snmpd
Installed-Size: $(du -sk "$root" | cut -f1)
Description: SNMP agent for InfiniBand fabrics
 Serves IF-MIB rows for InfiniBand ports and the IETF IPoIB drafts'
 IB-IF-MIB, IB-PM-MIB and IB-SM-MIB over SNMPv1/v2c/v3 (or through the
 host's snmpd as an AgentX subagent), from SMPs, SA queries and PMA MADs
 (libibumad) or sysfs; traps and informs for fabric events; Prometheus
 metrics.
TXT
echo /etc/ibsnmpd/ibsnmpd.toml > "$root/DEBIAN/conffiles"
for script in postinst prerm postrm; do
    install -m 755 "packaging/debian/$script" "$root/DEBIAN/$script"
done

mkdir -p "$OUT"
deb="$OUT/ibsnmpd_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
