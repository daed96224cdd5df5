#!/usr/bin/env bash
# The packages (docs/install.md). Debian: built from the repository
# (packaging/build-deb.sh), installed with dpkg into a clean root, its files
# where docs/install.md says, lintian clean, its unit accepted by
# `systemd-analyze verify`, its MIBs loadable by net-snmp with `-m ALL` from
# the installed directories alone, its binary serving with the shipped
# configuration, upgraded, removed and purged cleanly; its maintainer
# scripts' systemd lifecycle (enable and start, restart on upgrade, stop on
# remove, policy-rc.d, purge). RPM (packaging/build-rpm.sh, when rpmbuild
# is installed): `rpm -qlp`, the scriptlets, an install, upgrade and erase
# in a scratch root.
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

# --- the package's data and metadata as lintian checks them -----------------
if command -v lintian >/dev/null 2>&1; then
    out=$(lintian --fail-on error,warning "$deb" 2>&1 | grep -v 'root privileges' || true)
    [ -z "$out" ] || fail "lintian: $out"
else
    echo "package: lintian not installed: not checked"
fi
listing=$(dpkg-deb -c "$deb")
top=$(awk 'NR == 1 {print $1, $2, $6}' <<<"$listing")
[ "$top" = "drwxr-xr-x root/root ./" ] || fail "data archive's ./: $top"
(cd "$root" && dpkg-deb -I "$deb" md5sums | md5sum --quiet -c -) || fail "md5sums do not match the files"
grep -q '^License: Apache-2.0' "$root/usr/share/doc/ibsnmpd/copyright" || fail "copyright: no Apache-2.0"

# --- enablement through dpkg --root: deb-systemd-helper works inside the root
# (DPKG_ROOT), recording what it enabled so purge can undo it ---------------
wants="$root/etc/systemd/system/multi-user.target.wants/ibsnmpd.service"
[ -L "$wants" ] || fail "not enabled on install ($wants)"
if command -v systemctl >/dev/null 2>&1; then
    # What an operator does: enable it again by hand.
    systemctl --root="$root" --quiet disable ibsnmpd.service
    systemctl --root="$root" --quiet enable ibsnmpd.service
fi
# An upgrade (the same package again) keeps it enabled.
dpkg --root="$root" --log=/dev/null --force-depends --force-script-chrootless -i "$deb" \
    >"$tmp/dpkg.out" 2>&1 || fail "dpkg -i again (upgrade): $(cat "$tmp/dpkg.out")"
[ -L "$wants" ] || fail "upgrade disabled the unit"
dpkg --root="$root" --log=/dev/null --force-script-chrootless -r ibsnmpd >/dev/null || fail "dpkg -r"
[ ! -e "$root/usr/sbin/ibsnmpd" ] || fail "binary left after remove"
[ -e "$root/etc/ibsnmpd/ibsnmpd.toml" ] || fail "remove took the conffile"
[ "$(readlink "$root/etc/systemd/system/ibsnmpd.service")" = /dev/null ] || fail "remove did not mask the unit"
mkdir -p "$root/var/lib/private/ibsnmpd" # the dynamic user's state, as systemd leaves it
dpkg --root="$root" --log=/dev/null --force-script-chrootless -P ibsnmpd >/dev/null || fail "dpkg -P"
[ ! -e "$root/usr/sbin/ibsnmpd" ] || fail "binary left after purge"
[ ! -e "$root/etc/ibsnmpd/ibsnmpd.toml" ] || fail "conffile left after purge"
left=$(cd "$root" && find etc/systemd var/lib/systemd var/lib/private -name '*ibsnmpd*' 2>/dev/null || true)
[ -z "$left" ] || fail "left after purge: $left"

# --- the maintainer scripts on a running systemd ------------------------------
# This machine runs no systemd, and dpkg --root never starts anything, so
# the scripts as shipped run here directly with /run/systemd/system pointed
# at a scratch directory, systemctl and the group/udev tools recording their
# calls, and the real deb-systemd-helper and deb-systemd-invoke working in
# a scratch root (DPKG_ROOT: policy-rc.d is read there). Not exercised: a
# real systemd starting the unit, udev applying the rule.
sys="$tmp/sys"; fake="$tmp/fakebin"; calls="$tmp/calls"
mkdir -p "$sys/run/systemd/system" "$fake" "$tmp/scripts"
dpkg-deb -x "$deb" "$sys/root"
dpkg-deb -e "$deb" "$tmp/control"
for s in postinst prerm postrm; do
    sed -e "s#/run/systemd/system#$sys/run/systemd/system#g" -e "s#/run/udev#$sys/run/udev#g" \
        -e "s#/etc/ibsnmpd/ibsnmpd.toml#$sys/root/etc/ibsnmpd/ibsnmpd.toml#g" \
        "$tmp/control/$s" > "$tmp/scripts/$s"
done
for tool in systemctl systemd-sysusers groupadd udevadm chgrp chmod; do
    printf '#!/bin/sh\necho "%s $*" >> "%s"\ncase "$*" in *is-enabled*) echo enabled ;; esac\nexit 0\n' \
        "$tool" "$calls" > "$fake/$tool"
done
for tool in deb-systemd-helper deb-systemd-invoke; do
    printf '#!/bin/sh\nDPKG_ROOT="%s" exec /usr/bin/%s "$@"\n' "$sys/root" "$tool" > "$fake/$tool"
done
chmod 755 "$fake"/*
script() { # SCRIPT ARGS...: run it as dpkg would on the host, calls recorded afresh
    : > "$calls"
    env -u DPKG_ROOT PATH="$fake:$PATH" DPKG_MAINTSCRIPT_PACKAGE=ibsnmpd DPKG_MAINTSCRIPT_NAME="$1" sh -e "$tmp/scripts/$1" "${@:2}" || fail "$*: exit $?"
}
called() { grep -q -- "$1" "$calls"; }
swants="$sys/root/etc/systemd/system/multi-user.target.wants/ibsnmpd.service"

script postinst configure ""
called "systemctl --quiet --system start ibsnmpd.service" || fail "install did not start: $(cat "$calls")"
called "systemd-sysusers ibsnmpd.conf" || fail "install did not create the group: $(cat "$calls")"
# The configuration as shipped (root:root 0644) becomes 0640 root:ibsnmpd:
# it may come to hold SNMPv3 passwords, and the unit's user reads it
# through the group.
called "chgrp ibsnmpd $sys/root/etc/ibsnmpd/ibsnmpd.toml" || fail "install left the configuration's group: $(cat "$calls")"
called "chmod 0640 $sys/root/etc/ibsnmpd/ibsnmpd.toml" || fail "install left the configuration's mode: $(cat "$calls")"
[ -L "$swants" ] || fail "install did not enable"
script prerm upgrade 0.1.0
! called " stop " || fail "upgrade stopped the agent in prerm: $(cat "$calls")"
script postinst configure 0.1.0
called "systemctl --quiet --system restart ibsnmpd.service" || fail "upgrade did not restart: $(cat "$calls")"
# policy-rc.d saying no (101, as in image builds): nothing starts.
install -D -m 755 /dev/stdin "$sys/root/usr/sbin/policy-rc.d" <<<$'#!/bin/sh\nexit 101'
script postinst configure 0.1.0
! called "restart" || fail "restarted though policy-rc.d forbids: $(cat "$calls")"
rm "$sys/root/usr/sbin/policy-rc.d"
script prerm remove
called "stop ibsnmpd.service" || fail "remove did not stop the agent: $(cat "$calls")"
script postrm remove
called "systemctl --system daemon-reload" || fail "remove: no daemon-reload: $(cat "$calls")"
script postrm purge
[ ! -e "$swants" ] || fail "purge left $swants"
left=$(cd "$sys/root" && find etc/systemd var/lib/systemd -name '*ibsnmpd*' 2>/dev/null || true)
[ -z "$left" ] || fail "left after purge: $left"

echo "package: $(basename "$deb") installs, verifies, serves, upgrades, is removed and purged cleanly"

# --- the RPM (RHEL, Rocky, Alma) -------------------------------------------
if ! command -v rpmbuild >/dev/null 2>&1; then
    echo "package: rpmbuild not installed (Debian's rpm package): the RPM is not checked"
    exit 0
fi
url=https://example.org/ibsnmpd
rpm=$(IBSNMPD_URL=$url IBSNMPD_BIN=${CARGO_TARGET_DIR:-target}/release/ibsnmpd packaging/build-rpm.sh "$tmp/rpm")
[ -f "$rpm" ] || fail "no RPM built"
files=$(rpm -qlp "$rpm" 2>/dev/null)
# Its metadata: the licence file, a changelog, the project's URL.
[ "$(rpm -qp --licensefiles "$rpm" 2>/dev/null)" = /usr/share/licenses/ibsnmpd/LICENSE ] || fail "RPM: no %license file"
rpm -qp --changelog "$rpm" 2>/dev/null | grep -q '^- Built from ' || fail "RPM: no changelog: $(rpm -qp --changelog "$rpm" 2>&1)"
[ "$(rpm -qp --qf '%{URL}' "$rpm" 2>/dev/null)" = "$url" ] || fail "RPM: URL $(rpm -qp --qf '%{URL}' "$rpm" 2>&1)"
# The configuration: root and the unit's group only.
rpm -qp --qf '[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILENAMES}\n]' "$rpm" 2>/dev/null \
    | grep -qx -- '-rw-r----- root:ibsnmpd /etc/ibsnmpd/ibsnmpd.toml' || fail "RPM: configuration not 0640 root:ibsnmpd"
for f in /usr/sbin/ibsnmpd /usr/lib/systemd/system/ibsnmpd.service /etc/ibsnmpd/ibsnmpd.toml \
    /usr/lib/udev/rules.d/92-ibsnmpd.rules /usr/lib/sysusers.d/ibsnmpd.conf \
    /usr/share/man/man8/ibsnmpd.8.gz /usr/share/man/man5/ibsnmpd.toml.5.gz \
    /usr/share/snmp/mibs/IB-TC-MIB /usr/share/snmp/mibs/IB-SM-MIB /usr/share/snmp/mibs/ietf/SNMPv2-SMI \
    /usr/share/doc/ibsnmpd/examples/ibsnmpd-sm-host.conf; do
    grep -qx "$f" <<<"$files" || fail "RPM: $f not in rpm -qlp"
done
[ "$(rpm -qp --configfiles "$rpm" 2>/dev/null)" = /etc/ibsnmpd/ibsnmpd.toml ] || fail "RPM: configuration not %config"
rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$rpm" 2>/dev/null | grep -qx 'cn /etc/ibsnmpd/ibsnmpd.toml' \
    || fail "RPM: configuration not %config(noreplace)"

# Its scriptlets as %systemd_post/preun/postun_with_restart behave, with
# systemctl recording ($1: packages of this name after the step).
scriptlet() { # TAG ARG: run the RPM's scriptlet, calls recorded afresh
    rpm -qp --qf "%{$1}" "$rpm" 2>/dev/null | sed -e "s#/usr/bin/systemctl#$fake/systemctl#g" \
        -e "s#/usr/bin/udevadm#$fake/udevadm#g" > "$tmp/scriptlet"
    : > "$calls"
    sh "$tmp/scriptlet" "$2" || fail "RPM $1 $2: exit $?"
}
scriptlet POSTIN 1
called "systemctl --no-reload preset ibsnmpd.service" || fail "RPM install: no preset: $(cat "$calls")"
scriptlet POSTIN 2
! called preset || fail "RPM upgrade ran the preset again: $(cat "$calls")"
scriptlet PREUN 1
[ ! -s "$calls" ] || fail "RPM upgrade stopped the agent: $(cat "$calls")"
scriptlet POSTUN 1
called "systemctl try-restart ibsnmpd.service" || fail "RPM upgrade did not restart: $(cat "$calls")"
scriptlet PREUN 0
called "systemctl --no-reload disable --now ibsnmpd.service" || fail "RPM remove did not stop: $(cat "$calls")"
scriptlet POSTUN 0
called "systemctl daemon-reload" || fail "RPM remove: no daemon-reload: $(cat "$calls")"
! called try-restart || fail "RPM remove restarted: $(cat "$calls")"

# Installed into a scratch root: rpm runs the scriptlets chrooted there, so
# the root gets a shell (this host's, with its libraries); no systemctl
# there, so they change nothing.
rroot="$tmp/rpmroot"
for f in /bin/sh $(ldd "$(readlink -f /bin/sh)" | grep -o '/[^ ]*'); do
    install -D "$(readlink -f "$f")" "$rroot$f"
done
rpm --root "$rroot" --nodeps -i "$rpm" >"$tmp/rpm.out" 2>&1 || fail "rpm --root -i: $(cat "$tmp/rpm.out")"
for f in usr/sbin/ibsnmpd etc/ibsnmpd/ibsnmpd.toml usr/share/snmp/mibs/IB-PM-MIB usr/lib/systemd/system/ibsnmpd.service; do
    [ -e "$rroot/$f" ] || fail "RPM: /$f not installed in the scratch root"
done
# The same unit and configuration as the Debian package.
cmp -s "$rroot/usr/lib/systemd/system/ibsnmpd.service" packaging/ibsnmpd.service || fail "RPM: another unit"
cmp -s "$rroot/etc/ibsnmpd/ibsnmpd.toml" packaging/ibsnmpd.toml || fail "RPM: another configuration"
echo "changed" >> "$rroot/etc/ibsnmpd/ibsnmpd.toml"
rpm --root "$rroot" --nodeps -U --replacepkgs "$rpm" >"$tmp/rpm.out" 2>&1 || fail "rpm -U: $(cat "$tmp/rpm.out")"
tail -1 "$rroot/etc/ibsnmpd/ibsnmpd.toml" | grep -qx changed || fail "RPM: an upgrade replaced the edited configuration"
rpm --root "$rroot" --nodeps -e ibsnmpd >"$tmp/rpm.out" 2>&1 || fail "rpm -e: $(cat "$tmp/rpm.out")"
[ ! -e "$rroot/usr/sbin/ibsnmpd" ] || fail "RPM: binary left after rpm -e"
echo "package: $(basename "$rpm") lists, scripts, installs, upgrades and erases as RHEL expects"
