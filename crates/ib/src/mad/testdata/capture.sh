#!/bin/sh
# Captures real MADs from infiniband-diags running on ibsim (+ OpenSM) for the codec
# tests. Run inside a started testbed (see /work/shared/ibsim-testbed.md) with
# IBSIM_SOCKNAME set, from this directory:  sh capture.sh [NAME-PREFIX]
# Each NAME.mad holds the tool's command, its decoded output (as '#' comments) and
# every MAD it sent and received as hex blocks ('== send' / '== recv').
set -eu
PRE=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
ONLY=${1:-}
cap() {
    name=$1; shift
    case $name in "$ONLY"*) ;; *) return 0 ;; esac
    out=$(LD_PRELOAD=$PRE "$@" -d -d -d 2>&1 || true)
    {
        echo "# cmd: $*"
        printf '%s\n' "$out" | grep -v -e '^ibwarn' -e '^grh_present' -e '^Gid 0x' \
            -e '^[0-9a-f]\{4\}\( [0-9a-f]\{4\}\)\{0,7\} *$' \
            -e '^send buf$' -e '^rcv buf$' -e '^SA Request:$' -e '^SA Response:$' | sed 's/^/# /'
        printf '%s\n' "$out" | awk '
            /^(send buf|SA Request:)$/ { kind = "send"; n = 0; next }
            /^(rcv buf|SA Response:)$/ { kind = "recv"; n = 0; next }
            NF >= 1 && NF <= 8 && /^[0-9a-f][0-9a-f][0-9a-f][0-9a-f]( [0-9a-f][0-9a-f][0-9a-f][0-9a-f])* *$/ {
                if (kind != "") { if (n == 0) print "== " kind; print; n++ }
                next
            }
            { kind = "" }'
    } > "$name.mad"
}
cap nodeinfo_dr smpquery -D nodeinfo 0,1
cap nodeinfo_sw smpquery nodeinfo 1
cap nodedesc smpquery nodedesc 2
cap portinfo_hca smpquery portinfo 2 1
cap portinfo_sw smpquery portinfo 1 3
cap switchinfo smpquery switchinfo 1
cap guidinfo smpquery GI 2
cap pkeys smpquery pkeys 2 1
cap sminfo sminfo
cap lft ibroute 1
cap perfquery perfquery 2 1
cap perfquery_x perfquery -x 2 1
cap perfquery_rcverr perfquery -E 2 1
cap perfquery_xmtdisc perfquery -D 2 1
cap perfquery_flowctl perfquery --flowctlcounters 2 1
cap perfquery_vloppackets perfquery --vloppackets 2 1
cap perfquery_vlopdata perfquery --vlopdata 2 1
cap perfquery_vlxmitflowctl perfquery --vlxmitflowctlerrors 2 1
cap perfquery_vlxmitwait perfquery --vlxmitcounters 2 1
cap perfquery_reset perfquery -R 2 1 0x1001
cap sa_pathrecord saquery PR 2 4
cap sa_noderecord saquery NR 2
cap sa_portinforecord saquery PIR 2
cap sa_linkrecord saquery LR
cap sa_sminforecord saquery SMIR
cap sa_switchinforecord saquery SWIR
cap sa_lftrecord saquery LFTR 1
cap sa_guidinforecord saquery GIR 2
cap sa_mcmemberrecord saquery -m
cap sa_pkeytablerecord saquery --smkey 1 PKTR 2
cap sa_classportinfo saquery -c
cap mlnxextportinfo smpquery MEPI 2 1
