#!/bin/sh
# Issue 30 on the device machine, in one run (30 minutes of device time a
# session): the BPF sampler's process record on a real torch process
# against /proc's (bench/device-bpf-sums.sh), stacks from saved registers
# against ptrace's on the kinds of program installed there
# (bench/stacks-bpf-frames.sh), and the 10 000-thread sampler bench beside
# pidstat where sysstat is installed (bench/bpf-sampler.sh).  The
# workloads come built in the bundle (.devbundle/wl):
#   mkdir /tmp/wl; cp tests/workloads/{sleepers,stackload,libgplate.so} \
#     bench/workloads/{threads,taskiter-floor} /tmp/wl
#   ../shared/tools/devbundle .devbundle src/gpuprobe /tmp/wl
#   OUT=$OUT sh bench/device-issue30.sh
set -u
OUT=${OUT:-./device-issue30-out}
mkdir -p "$OUT"
GPUPROBE=.devbundle/run OUT=$OUT sh bench/device-bpf-sums.sh
echo "device-bpf-sums: $(tail -n 1 "$OUT/device-bpf-sums.log")"
GPUPROBE=$(pwd)/.devbundle/run WORKLOADS=$(pwd)/.devbundle/wl sh bench/stacks-bpf-frames.sh > "$OUT/stacks-bpf-frames.md" 2>&1
if command -v pidstat > /dev/null; then
	GPUPROBE=$(pwd)/.devbundle/run WORKLOAD=$(pwd)/.devbundle/wl/threads FLOOR=$(pwd)/.devbundle/wl/taskiter-floor \
		RUNS=2 bash bench/bpf-sampler.sh > "$OUT/bpf-sampler.md" 2>&1
else
	echo "no pidstat here (sysstat not installed): the sampler bench not run" > "$OUT/bpf-sampler.md"
fi
echo done
