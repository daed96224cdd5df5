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
d() { install -d -m 755 "$root/$1"; }
f() { install -D -m "$1" "$2" "$root/$3"; }

f 755 "$IBSNMPD_BIN" usr/sbin/ibsnmpd
strip --strip-unneeded "$root/usr/sbin/ibsnmpd" 2>/dev/null || true
f 644 packaging/ibsnmpd.service lib/systemd/system/ibsnmpd.service
f 644 packaging/ibsnmpd.toml etc/ibsnmpd/ibsnmpd.toml
f 644 packaging/debian/92-ibsnmpd.rules lib/udev/rules.d/92-ibsnmpd.rules
f 644 packaging/debian/sysusers.conf usr/lib/sysusers.d/ibsnmpd.conf
f 644 packaging/ibsnmpd-sm-host.conf usr/share/doc/ibsnmpd/examples/ibsnmpd-sm-host.conf
f 644 packaging/grafana-ibsnmpd.json usr/share/doc/ibsnmpd/examples/grafana-ibsnmpd.json
f 644 packaging/prometheus/ibsnmpd-rules.yml usr/share/doc/ibsnmpd/examples/ibsnmpd-rules.yml
for m in mibs/IB-*; do f 644 "$m" "usr/share/snmp/mibs/$(basename "$m")"; done
# The IETF modules they import: net-snmp's default path has ietf/ (filled
# by snmp-mibs-downloader where installed; the same RFC texts).
for m in mibs/ietf/*; do f 644 "$m" "usr/share/snmp/mibs/ietf/$(basename "$m")"; done
d usr/share/man/man8
d usr/share/man/man5
"$IBSNMPD_BIN" man | gzip -9n > "$root/usr/share/man/man8/ibsnmpd.8.gz"
"$IBSNMPD_BIN" man --config | gzip -9n > "$root/usr/share/man/man5/ibsnmpd.toml.5.gz"
for doc in README.md docs/*.md; do f 644 "$doc" "usr/share/doc/ibsnmpd/$(basename "$doc")"; done
gzip -9n "$root"/usr/share/doc/ibsnmpd/*.md
cat > "$root/usr/share/doc/ibsnmpd/copyright" <<TXT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ibsnmpd
Files: *
Copyright: the ibsnmpd authors
License: see the source repository
TXT

d DEBIAN
cat > "$root/DEBIAN/control" <<TXT
Package: ibsnmpd
Version: $VERSION
Architecture: $ARCH
Maintainer: ibsnmpd maintainers <ibsnmpd@localhost>
Section: net
Priority: optional
Depends: libc6 (>= 2.34), libgcc-s1
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
install -m 755 packaging/debian/postinst "$root/DEBIAN/postinst"
install -m 755 packaging/debian/postrm "$root/DEBIAN/postrm"

mkdir -p "$OUT"
deb="$OUT/ibsnmpd_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
