#!/bin/sh
# Issue 30 on the device: `trace --stacks all` of 10 000 sleeping threads
# as root -- every thread's user stack, how many came from the registers
# the kernel saved (BPF, no stop) and how many needed a ptrace stop, and
# when each thread's first stack came after the trace began.  Then the
# same with GPUPROBE_BPF_REGS=off (every sleeper stopped) for the frames'
# comparison.  Logs under $OUT.
set -u
GP=${GP:-.devbundle/run}
OUT=${OUT:-/tmp/stacks-all}
N=${N:-10000}
mkdir -p "$OUT"
S=.devbundle/sleepers
[ -x "$S" ] || S=tests/workloads/sleepers
"$S" "$N" > /dev/null 2>&1 &
P=$!
sleep 3
echo "threads: $(ls /proc/$P/task | wc -l)"
for mode in bpf ptrace; do
	env=
	[ $mode = ptrace ] && env="GPUPROBE_BPF_REGS=off"
	t0=$(date +%s.%N)
	env $env /usr/bin/time -f "%e s wall %U s user %S s sys" $GP trace $P --stacks all --interval 1 --seconds 12 \
		-o "$OUT/$mode.jsonl" > "$OUT/$mode.txt" 2> "$OUT/$mode.time"
	echo "== $mode: $(tail -1 "$OUT/$mode.time")"
	python3 - "$OUT/$mode.jsonl" <<'PY'
import json, sys
first = {}; regs = {}; stopped = 0; unw = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("type") != "stacks":
        continue
    for th in d.get("threads", []):
        tid = th.get("tid")
        if th.get("frames") and tid not in first:
            first[tid] = d.get("t", 0)
            regs[tid] = th.get("regs_from")
        u = th.get("unwind", "?")
        unw[u] = unw.get(u, 0) + 1
        if th.get("stop_us") is not None and th.get("regs_from") != "bpf":
            stopped += 1
ts = sorted(first.values())
print("threads with a user stack:", len(first))
print("from saved registers (bpf):", sum(1 for v in regs.values() if v == "bpf"))
print("thread entries with a stop (stop_us, not bpf):", stopped)
print("unwind kinds:", unw)
if ts:
    print("first stack at: min %.1f s, max %.1f s after the start" % (ts[0], ts[-1]))
PY
done
python3 - "$OUT/bpf.jsonl" "$OUT/ptrace.jsonl" <<'PY'
import json, sys
def frames(path):
    out = {}
    for line in open(path):
        d = json.loads(line)
        if d.get("type") != "stacks":
            continue
        for th in d.get("threads", []):
            if th.get("frames") and th["tid"] not in out:
                out[th["tid"]] = [f.get("function") or f.get("symbol") or f.get("pc") for f in th["frames"]]
    return out
a, b = frames(sys.argv[1]), frames(sys.argv[2])
both = set(a) & set(b)
same = sum(1 for t in both if a[t] == b[t])
print("frames compared on %d threads: %d identical" % (len(both), same))
PY
kill $P
