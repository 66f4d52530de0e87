#!/bin/sh
# NVML's call budget (issue 19, item 5 and acceptance: at most 2 ms of
# NVML per GPU per second, no call that blocks; src/gpu/nvml.h says how
# it is spent): the NVML double counts every call.  One trace of a tree
# of four processes on one GPU, each holding memory there and at 100 %
# SM, against one trace of one process: the trace opens NVML once, asks
# the process lists, the device readings and a GPM sample at most once a
# tick, process utilisation at most every other tick, never PCIe
# throughput or total energy; and the four processes cost what one does.
# Before, each traced process opened NVML twice and asked everything for
# itself: four processes, eight handles and four times the calls.
E2E_TIMEOUT=${E2E_TIMEOUT:-60} # ~20 s alone; room for make -j2 check
. "${0%/*}/lib.sh"
require_jq
N=$top_builddir/tests/gpu/libnvidia-ml.so.1
[ -f "$N" ] || framework_failure "the NVML double is not built"
DEV='dev util=100 power=300 gpm=1 smutil=24 occ=3'

run() { # name command...: trace it 5 s at 1 Hz, the calls counted
	name=$1; shift
	GPUPROBE_NVML_LIB=$N GPUPROBE_FAKE_NVML_COUNTS=$TMP/$name.counts \
	GPUPROBE_FAKE_NVML="gpus 1;proc descendants sm=100 bytes=1048576;$DEV" \
		gp trace -q --interval 1 --seconds 5 -o "$TMP/$name.jsonl" -- "$@" > "$TMP/$name.out" 2>&1
	ok "$name: exit 0" test $? = 0
}
calls() { # name function: its calls in that trace (0 when none)
	awk -v f="$2" '$2 == f { n += $3 } END { print n + 0 }' "$TMP/$1.counts"
}
ticks() { jq -s '[.[] | select(.type == "sample")] | length' "$TMP/$1.jsonl"; }

run four sh -c 'sleep 30 & sleep 30 & sleep 30 & wait'
run one sleep 30
# A machine so loaded that 5 s of trace got under 3 samples judges no
# budget (seen at a load average of 275 on 2 CPUs).
for name in four one; do
	[ "$(ticks $name)" -ge 3 ] || skip "$name: $(ticks $name) samples in 5 s: the machine is too loaded"
done
for name in four one; do
	t=$(ticks $name)
	say "$name: $t ticks; $(tr '\n' ';' < "$TMP/$name.counts")"
	ok "$name: NVML opened once" test "$(calls $name nvmlInit_v2)" = 1
	c=$(calls $name nvmlDeviceGetProcessUtilization)
	ok "$name: process utilisation $c times in $t ticks: every third tick at most" \
		test "$c" -le $(( (t + 2) / 3 + 1 ))
	ok "$name: process utilisation asked (the test can fail)" test "$c" -ge 2
	# GPM: the first pair a tick apart, then every other tick.
	for f in nvmlGpmSampleGet nvmlGpmMetricsGet; do
		c=$(calls $name $f)
		ok "$name: $f $c times in $t ticks: every other tick at most, after the first pair" \
			test "$c" -le $(( (t + 1) / 2 + 2 ))
	done
	for f in nvmlDeviceGetComputeRunningProcesses_v2 nvmlDeviceGetUtilizationRates \
		 nvmlDeviceGetPowerUsage nvmlGpmSampleGet nvmlGpmMetricsGet; do
		c=$(calls $name $f)
		ok "$name: $f $c times in $t ticks: once a tick at most" test "$c" -le "$t"
	done
	for f in nvmlDeviceGetPcieThroughput nvmlDeviceGetTotalEnergyConsumption; do
		ok "$name: $f never (it blocks)" test "$(calls $name $f)" = 0
	done
done
# The four were read: each at 100 % SM in one sample.
ok "four: every process of the tree read at 100 % SM" jq -s -e '[.[] | select(.type == "sample") |
	[.gpu.activity.nvml.sm_pct] + [.procs[]?.gpu.activity.nvml.sm_pct] | length == 4 and all(. == 100)] | any' \
	"$TMP/four.jsonl" > /dev/null
# Independent of the number of processes: apart by no more than their
# ticks are (a loaded machine skips a tick now and then), plus one.
t4=$(ticks four) t1=$(ticks one)
dt=$((t4 > t1 ? t4 - t1 : t1 - t4))
for f in nvmlDeviceGetProcessUtilization nvmlDeviceGetComputeRunningProcesses_v2 \
	 nvmlDeviceGetUtilizationRates nvmlGpmSampleGet; do
	a=$(calls four $f) b=$(calls one $f)
	d=$((a > b ? a - b : b - a))
	ok "$f: four processes $a calls in $t4 ticks, one $b in $t1" test "$d" -le $((dt + 1))
done
pass
