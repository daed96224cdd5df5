# Sourced by the benchmark scripts: one line naming the machine a run's
# figures come from. Figures differ from one machine to another, and
# virtual machines of one kind may sit on different hosts: the CPU's
# family/model/stepping, caches, clock and kernel tell runs apart. A
# guest's idle policy too: whether an idle vCPU polls before it halts
# (cpuidle-haltpoll's guest_halt_poll_ns) moves every figure that waits
# on a round trip (docs/benchmarks.md).
machine_line() {
    local l poll=""
    l=$(LC_ALL=C lscpu)
    [ -r /sys/module/haltpoll/parameters/guest_halt_poll_ns ] &&
        poll=", guest halt poll $(cat /sys/module/haltpoll/parameters/guest_halt_poll_ns) ns"
    field() { sed -nE "s/^$1: *//p" <<<"$l" | head -1; }
    echo "machine: $(nproc) CPUs, $(field 'Model name') (family $(field 'CPU family'), model $(field 'Model'), stepping $(field 'Stepping')), L2 $(field 'L2 cache'), L3 $(field 'L3 cache'), BogoMIPS $(field 'BogoMIPS'), $(field 'Hypervisor vendor' || true) guest, kernel $(uname -r)$poll, load $(cut -d' ' -f1-3 /proc/loadavg)"
}
