#!/usr/bin/env bash
# The Debian package: built from the repository (packaging/build-deb.sh),
# installed with dpkg into a clean root, its files where docs/install.md
# says, its unit accepted by `systemd-analyze verify`, its MIBs loadable by
# net-snmp with `-m ALL` from the installed directories alone, its binary
# serving with the shipped configuration, and removed and purged cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "package: FAILED: $*" >&2; exit 1; }
tmp=$(mktemp -d)
pid=""
cleanup() {
    [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

echo "package: building (release)"
deb=$(packaging/build-deb.sh "$tmp/out")
[ -f "$deb" ] || fail "no package built"

root="$tmp/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
# Maintainer scripts run outside the root (the clean root has no shell):
# they see DPKG_ROOT and leave the live system alone.
# (--force-depends: the clean root has no libc6 package to satisfy.)
dpkg --root="$root" --log=/dev/null --force-depends --force-script-chrootless -i "$deb" \
    >"$tmp/dpkg.out" 2>&1 || fail "dpkg -i into a clean root: $(cat "$tmp/dpkg.out")"

for f in usr/sbin/ibsnmpd lib/systemd/system/ibsnmpd.service etc/ibsnmpd/ibsnmpd.toml \
    lib/udev/rules.d/92-ibsnmpd.rules usr/lib/sysusers.d/ibsnmpd.conf \
    usr/share/man/man8/ibsnmpd.8.gz usr/share/man/man5/ibsnmpd.toml.5.gz \
    usr/share/snmp/mibs/IB-TC-MIB usr/share/snmp/mibs/IB-SM-MIB usr/share/snmp/mibs/ietf/SNMPv2-SMI \
    usr/share/doc/ibsnmpd/examples/ibsnmpd-sm-host.conf; do
    [ -e "$root/$f" ] || fail "/$f not installed"
done
dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Conffiles}\n' ibsnmpd | grep -q /etc/ibsnmpd/ibsnmpd.toml \
    || fail "/etc/ibsnmpd/ibsnmpd.toml is not a conffile"

# The unit as installed; ExecStart must exist for verify: the installed binary.
unit="$tmp/ibsnmpd.service"
sed "s#/usr/sbin/ibsnmpd#$root/usr/sbin/ibsnmpd#" "$root/lib/systemd/system/ibsnmpd.service" > "$unit"
for dropin in "" "$root/usr/share/doc/ibsnmpd/examples/ibsnmpd-sm-host.conf"; do
    u=$unit
    if [ -n "$dropin" ]; then
        # The drop-in as installed beside the unit.
        mkdir -p "$tmp/sm/ibsnmpd.service.d"; u="$tmp/sm/ibsnmpd.service"
        cp "$unit" "$u"; cp "$dropin" "$tmp/sm/ibsnmpd.service.d/sm-host.conf"
    fi
    # (--man=no: the pages are in the clean root, not on this host.)
    out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$u" 2>&1) || fail "systemd-analyze verify: $out"
    if grep -v -e 'not found' -e 'Cannot add dependency' -e 'ibsnmpd.service: Command' <<<"$out" | grep -q .; then
        fail "systemd-analyze verify warns: $out"
    fi
done

# MIBs: everything -m ALL loads is in the installed directories.
if ! mibs=$(MIBDIRS="$root/usr/share/snmp/mibs:$root/usr/share/snmp/mibs/ietf" \
    snmptranslate -m ALL -On IB-SM-MIB::ibSmTraceResultExitPort 2>&1); then
    fail "snmptranslate: $mibs"
fi
[ "$mibs" = ".1.3.6.1.3.117.7.1.11.2.1.11" ] || fail "snmptranslate: $mibs"

# The installed binary with the shipped configuration (on the sim: no HCA here).
port=$((20000 + RANDOM % 30000))
"$root/usr/sbin/ibsnmpd" --config "$root/etc/ibsnmpd/ibsnmpd.toml" --source sim \
    --listen "127.0.0.1:$port" --state-dir "$tmp/state" 2>"$tmp/agent.log" &
pid=$!
ok=""
for _ in $(seq 100); do
    if snmpget -v2c -c public -t 0.3 -r 0 "127.0.0.1:$port" 1.3.6.1.2.1.1.3.0 >/dev/null 2>&1; then ok=1; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
done
[ -n "$ok" ] || fail "the installed agent did not answer: $(cat "$tmp/agent.log")"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""

dpkg --root="$root" --log=/dev/null --force-script-chrootless -P ibsnmpd >/dev/null || fail "dpkg -P"
[ ! -e "$root/usr/sbin/ibsnmpd" ] || fail "binary left after purge"
[ ! -e "$root/etc/ibsnmpd/ibsnmpd.toml" ] || fail "conffile left after purge"
echo "package: $(basename "$deb") installs, verifies, serves and purges cleanly"
