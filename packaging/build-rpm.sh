#!/usr/bin/env bash
# Builds the RPM for RHEL, Rocky and Alma 8/9 with rpmbuild (Debian's `rpm`
# package will do): the same files as the Debian package
# (packaging/stage.sh), the unit and udev rule under /usr/lib, the
# configuration as %config(noreplace), the MIBs under /usr/share/snmp/mibs.
# The scriptlets are what %systemd_post, %systemd_preun and
# %systemd_postun_with_restart expand to, written out (those macros come
# with systemd-rpm-macros, which Debian does not have): the preset decides
# on install (RHEL's default preset leaves the unit disabled: `systemctl
# enable --now ibsnmpd`), removal disables and stops it, an upgrade
# restarts it if it runs. docs/install.md says what each part is for.
#
#   packaging/build-rpm.sh [OUT_DIR]     -> OUT_DIR/ibsnmpd-VERSION-1.ARCH.rpm
#
# IBSNMPD_BIN=path skips the cargo build (CI builds once). The binary needs
# the glibc it was built against: one built on Debian 12 needs glibc 2.34
# (EL9); for EL8 (glibc 2.28) build on EL8 (dnf install rpm-build).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-target/rpm}
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
if [ -z "${IBSNMPD_BIN:-}" ]; then
    cargo build --release -q -p ibsnmpd --bin ibsnmpd
    IBSNMPD_BIN=${CARGO_TARGET_DIR:-target}/release/ibsnmpd
fi

top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
root="$top/root"
IBSNMPD_BIN=$IBSNMPD_BIN packaging/stage.sh "$root" usr/lib/systemd/system usr/lib/udev/rules.d
# The licence text where RHEL keeps them (%license).
install -D -m 644 LICENSE "$root/usr/share/licenses/ibsnmpd/LICENSE"

# The project's address (Cargo.toml's workspace `repository`, or
# IBSNMPD_URL): the spec's URL.
URL=${IBSNMPD_URL:-$(sed -n 's/^repository = "\(.*\)"/\1/p' Cargo.toml | head -1)}
url_tag=""
if [ -n "$URL" ]; then
    url_tag="URL:            $URL"
else
    echo "build-rpm.sh: no project URL (Cargo.toml repository, IBSNMPD_URL): the RPM has no URL tag" >&2
fi
# Who built it, for %changelog: RPM_PACKAGER ("Name <email>"), else the
# author of the commit built, as build-deb.sh's changelog.
PACKAGER=${RPM_PACKAGER:-$(git log -1 --format='%an <%ae>' 2>/dev/null || true)}
case "$PACKAGER" in
*?" <"?*@?*">") ;;
*) echo "build-rpm.sh: no packager: set RPM_PACKAGER=\"Name <email>\"" >&2; exit 2 ;;
esac
CHANGED=$(git log -1 --format=%cd --date=format:'%a %b %d %Y' 2>/dev/null || LC_ALL=C date +'%a %b %d %Y')
BUILT_FROM=$(git describe --always --dirty 2>/dev/null || echo 'a source tree')

cat > "$top/ibsnmpd.spec" <<SPEC
Name:           ibsnmpd
Version:        $VERSION
Release:        1
Summary:        SNMP agent for InfiniBand fabrics
License:        Apache-2.0
$url_tag
Recommends:     libibumad
Suggests:       net-snmp-utils, infiniband-diags, opensm
Requires(pre):  shadow-utils
Requires(post): systemd
Requires(preun): systemd
Requires(postun): systemd

# A Rust binary, built already: no debuginfo split, no brp scripts.
%global debug_package %{nil}
%global __os_install_post %{nil}
%global _build_id_links none

%description
Serves IF-MIB rows for InfiniBand ports and the IETF IPoIB drafts'
IB-IF-MIB, IB-PM-MIB and IB-SM-MIB over SNMPv1/v2c/v3 (or through the
host's snmpd as an AgentX subagent), from SMPs, SA queries and PMA MADs
(libibumad) or sysfs; traps and informs for fabric events; Prometheus
metrics.

%install
cp -a "$root/." %{buildroot}/

%pre
# The group the udev rule gives /dev/infiniband/umad* to (sysusers.d file
# shipped too; RHEL 8's systemd-sysusers predates RPM's own handling).
getent group ibsnmpd >/dev/null || groupadd -r ibsnmpd
exit 0

%post
# %%systemd_post: on first install the preset decides.
if [ \$1 -eq 1 ] && [ -x /usr/bin/systemctl ]; then
    /usr/bin/systemctl --no-reload preset ibsnmpd.service >/dev/null 2>&1 || :
fi
if [ -x /usr/bin/udevadm ] && [ -d /run/udev ]; then
    /usr/bin/udevadm control --reload-rules >/dev/null 2>&1 || :
    /usr/bin/udevadm trigger --subsystem-match=infiniband_mad >/dev/null 2>&1 || :
fi

%preun
# %%systemd_preun: on removal (not upgrade) disable and stop.
if [ \$1 -eq 0 ] && [ -x /usr/bin/systemctl ]; then
    /usr/bin/systemctl --no-reload disable --now ibsnmpd.service >/dev/null 2>&1 || :
fi

%postun
# %%systemd_postun_with_restart: systemd rereads the units; on upgrade the
# running agent restarts on the new binary.
if [ -x /usr/bin/systemctl ]; then
    /usr/bin/systemctl daemon-reload >/dev/null 2>&1 || :
    if [ \$1 -ge 1 ]; then
        /usr/bin/systemctl try-restart ibsnmpd.service >/dev/null 2>&1 || :
    fi
fi

%files
%attr(0755,root,root) /usr/sbin/ibsnmpd
/usr/lib/systemd/system/ibsnmpd.service
/usr/lib/udev/rules.d/92-ibsnmpd.rules
/usr/lib/sysusers.d/ibsnmpd.conf
%dir /etc/ibsnmpd
# It may come to hold SNMPv3 passwords: root and the unit's group only.
%attr(0640,root,ibsnmpd) %config(noreplace) /etc/ibsnmpd/ibsnmpd.toml
/usr/share/man/man8/ibsnmpd.8.gz
/usr/share/man/man5/ibsnmpd.toml.5.gz
/usr/share/snmp/mibs/IB-*
%dir /usr/share/snmp/mibs/ietf
/usr/share/snmp/mibs/ietf/*
%doc /usr/share/doc/ibsnmpd
%license /usr/share/licenses/ibsnmpd/LICENSE

%changelog
* $CHANGED $PACKAGER - $VERSION-1
- Built from $BUILT_FROM.
SPEC

mkdir -p "$OUT"
rpmbuild --quiet -bb "$top/ibsnmpd.spec" \
    --define "_topdir $top/build" \
    --define "_rpmdir $top/rpms" \
    --define "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm" \
    --define "_buildhost ibsnmpd-build" >/dev/null
rpm=$(ls "$top"/rpms/*.rpm)
cp "$rpm" "$OUT/"
echo "$OUT/$(basename "$rpm")"
