#!/usr/bin/env bash
# The files both packages ship, laid out under ROOT: the binary, the unit,
# the configuration, the udev rule and sysusers file, the man pages (made
# by the binary from its own definitions), the MIB files, the docs and
# examples. Called by build-deb.sh and build-rpm.sh; only the unit and
# udev directories differ between the families.
#
#   packaging/stage.sh ROOT UNIT_DIR UDEV_RULES_DIR     (IBSNMPD_BIN: the binary)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$1 unitdir=$2 udevdir=$3
: "${IBSNMPD_BIN:?IBSNMPD_BIN: the binary to package}"
f() { install -D -m "$1" "$2" "$root/$3"; }

f 755 "$IBSNMPD_BIN" usr/sbin/ibsnmpd
strip --strip-unneeded "$root/usr/sbin/ibsnmpd" 2>/dev/null || true
f 644 packaging/ibsnmpd.service "$unitdir/ibsnmpd.service"
f 644 packaging/ibsnmpd.toml etc/ibsnmpd/ibsnmpd.toml
f 644 packaging/debian/92-ibsnmpd.rules "$udevdir/92-ibsnmpd.rules"
f 644 packaging/debian/sysusers.conf usr/lib/sysusers.d/ibsnmpd.conf
f 644 packaging/ibsnmpd-sm-host.conf usr/share/doc/ibsnmpd/examples/ibsnmpd-sm-host.conf
f 644 packaging/grafana-ibsnmpd.json usr/share/doc/ibsnmpd/examples/grafana-ibsnmpd.json
f 644 packaging/prometheus/ibsnmpd-rules.yml usr/share/doc/ibsnmpd/examples/ibsnmpd-rules.yml
for m in mibs/IB-*; do f 644 "$m" "usr/share/snmp/mibs/$(basename "$m")"; done
# The IETF modules they import: net-snmp's default path has ietf/ on Debian
# (filled by snmp-mibs-downloader where installed; the same RFC texts).
for m in mibs/ietf/*; do f 644 "$m" "usr/share/snmp/mibs/ietf/$(basename "$m")"; done
install -d -m 755 "$root/usr/share/man/man8" "$root/usr/share/man/man5"
"$IBSNMPD_BIN" man | gzip -9n > "$root/usr/share/man/man8/ibsnmpd.8.gz"
"$IBSNMPD_BIN" man --config | gzip -9n > "$root/usr/share/man/man5/ibsnmpd.toml.5.gz"
chmod 644 "$root"/usr/share/man/man*/*.gz
for doc in README.md docs/*.md; do f 644 "$doc" "usr/share/doc/ibsnmpd/$(basename "$doc")"; done
gzip -9n "$root"/usr/share/doc/ibsnmpd/*.md
