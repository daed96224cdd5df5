# Sourced by the benchmark scripts: one line naming the machine a run's
# figures come from. Figures differ from one machine to another, and
# virtual machines of one kind may sit on different hosts: the CPU's
# family/model/stepping, caches, clock and kernel tell runs apart.
machine_line() {
    local l
    l=$(LC_ALL=C lscpu)
    field() { sed -nE "s/^$1: *//p" <<<"$l" | head -1; }
    echo "machine: $(nproc) CPUs, $(field 'Model name') (family $(field 'CPU family'), model $(field 'Model'), stepping $(field 'Stepping')), L2 $(field 'L2 cache'), L3 $(field 'L3 cache'), BogoMIPS $(field 'BogoMIPS'), $(field 'Hypervisor vendor' || true) guest, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
}
