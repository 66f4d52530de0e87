#!/bin/sh
# The BPF sampler's process record on a real GPU process (issue 30): the
# process's CPU times, faults and io summed by the task iterator's pass
# (taskiter.bpf.c account) against /proc/PID/stat's and io's walk, on
# bench/workloads/torch_serve.py (a GEMM thread on the GPU writing into a
# pipe a slow reader drains, an asyncio loop answering a TCP client,
# CUDA's and torch's own threads).  Two traces of it at once, one on each
# path, 0.5 s apart: moving counters are read at slightly different
# instants, so each sample's BPF value is compared with the /proc values
# of the samples around it (a value between them is consistent).  Then
# the same process at rest (the GPU work done, every thread asleep):
# the two paths' last records must be equal.  Then the stacks of the
# resting process from saved registers against ptrace's (frames
# compared).  Needs root (BPF).
#   ../shared/tools/devbundle .devbundle src/gpuprobe
#   OUT=$OUT bench/device-bpf-sums.sh
set -u
GPUPROBE=${GPUPROBE:-.devbundle/run}
OUT=${OUT:-./device-bpf-sums-out}
. "${0%/*}/h200-lib.sh"
h200_log device-bpf-sums
W=bench/workloads/torch_serve.py
$GPUPROBE info | grep -E '^(BPF|Sampler|OS|GPUs)'

python3 "$W" 14 > "$OUT/serve.out" 2>&1 &
tp=$!
sleep 6 # torch imported, the GEMM thread and the server running
$GPUPROBE trace -q --interval 0.5 --seconds 6 --stacks none -o "$OUT/busy-bpf.jsonl" "$tp" > /dev/null 2>&1 &
b=$!
GPUPROBE_BPF_SAMPLER=off $GPUPROBE trace -q --interval 0.5 --seconds 6 --stacks none \
	-o "$OUT/busy-proc.jsonl" "$tp" > /dev/null 2>&1
wait $b
for f in busy-bpf busy-proc; do
	echo "$f: $(jq -r 'select(.type=="header") | "sampler \(.sampler_path) \(.sampler_why // "")"' "$OUT/$f.jsonl")," \
		"$(jq -s '[.[] | select(.type=="sample")] | length' "$OUT/$f.jsonl") samples"
done
# When a trace started (its header's "started", to the millisecond), in
# seconds: the two traces' t are each their own.
started() {
	jq -r 'select(.type=="header") | .started | capture("(?<s>.*)\\.(?<ms>[0-9]+)Z")
		| ((.s + "Z") | fromdate) + ((.ms | tonumber) / 1000)' "$1"
}
# Per BPF sample: its counter between the /proc samples before and after
# it in time (both monotonic), or not.
for k in utime stime minflt majflt io.rchar io.wchar io.syscr io.syscw; do
	jq -r --arg k "$k" 'select(.type=="sample") | [.t, (.proc | getpath($k | split(".")))] | @tsv' "$OUT/busy-bpf.jsonl" \
		> "$OUT/b.tsv"
	jq -r --arg k "$k" 'select(.type=="sample") | [.t, (.proc | getpath($k | split(".")))] | @tsv' "$OUT/busy-proc.jsonl" \
		> "$OUT/p.tsv"
	# the two traces' clocks start apart: align on the header's start
	db=$(started "$OUT/busy-bpf.jsonl")
	dp=$(started "$OUT/busy-proc.jsonl")
	awk -v db="$db" -v dp="$dp" -v k="$k" '
		FNR == NR { pt[++np] = $1 + dp; pv[np] = $2; next }
		{ t = $1 + db; v = $2; lo = ""; hi = ""
		  for (i = 1; i <= np; i++) { if (pt[i] <= t) lo = pv[i]; if (pt[i] >= t && hi == "") hi = pv[i] }
		  if (lo == "" || hi == "") next
		  n++; if (v + 0 >= lo - 0.011 && v + 0 <= hi + 0.011) ok++
		  else bad = bad sprintf(" t=%.2f %s not in [%s, %s];", $1, v, lo, hi) }
		END { printf "busy %-8s %d of %d BPF samples between the /proc samples around them%s\n", k, ok, n, bad }' \
		"$OUT/p.tsv" "$OUT/b.tsv"
done
wait $tp
echo "serve: $(tail -n 1 "$OUT/serve.out")"

# At rest: the same process shape, its work done, every thread asleep.
python3 - > "$OUT/rest.out" 2>&1 <<'PY' &
import threading, time, torch
x = torch.randn(4096, 4096, device="cuda")
for _ in range(50):
    x = (x @ x).tanh()
torch.cuda.synchronize()
def worker(n):
    y = torch.randn(256, 256)
    for _ in range(200):
        y = (y @ y).tanh()
ts = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
with open("/dev/null", "wb") as f:
    f.write(b"z" * (1 << 20))
print("rested", flush=True)
time.sleep(40)
PY
rp=$!
i=0
while ! grep -q rested "$OUT/rest.out" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
$GPUPROBE trace -q --interval 0.5 --seconds 3 --stacks none -o "$OUT/rest-bpf.jsonl" "$rp" > /dev/null 2>&1 &
b=$!
GPUPROBE_BPF_SAMPLER=off $GPUPROBE trace -q --interval 0.5 --seconds 3 --stacks none \
	-o "$OUT/rest-proc.jsonl" "$rp" > /dev/null 2>&1
wait $b
procsum() { jq -c 'select(.type=="sample") | .proc | {utime, stime, minflt, majflt, children_cpu, io}' "$1" | tail -n 1; }
echo "rest bpf:  $(procsum "$OUT/rest-bpf.jsonl")"
echo "rest proc: $(procsum "$OUT/rest-proc.jsonl")"
if [ "$(procsum "$OUT/rest-bpf.jsonl")" = "$(procsum "$OUT/rest-proc.jsonl")" ]; then
	echo "rest: the same process record on both paths"
else
	echo "rest: DIFFERENT"
fi
# Its stacks: saved registers against ptrace, thread by thread.
$GPUPROBE stacks --format json "$rp" > "$OUT/st-b1.json" 2> /dev/null
GPUPROBE_BPF_REGS=off $GPUPROBE stacks --format json "$rp" > "$OUT/st-p.json" 2> /dev/null
$GPUPROBE stacks --format json "$rp" > "$OUT/st-b2.json" 2> /dev/null
frames() {
	jq -r '.threads[]? | select(.state != "R") | [.tid, ([.frames[]? | (.symbol // ((.module // "?") + "+" + (.offset // "")))
		, (.python[]? | "\(.file):\(.function):\(.line)")] | tojson)] | @tsv' "$1" | sort
}
for k in b1 p b2; do frames "$OUT/st-$k.json" > "$OUT/st-$k.f"; done
tab=$(printf '\t')
join -t "$tab" "$OUT/st-b1.f" "$OUT/st-b2.f" | awk -F'\t' '$2 == $3 && $2 != "[]" { print $1 "\t" $2 }' > "$OUT/st-stable"
join -t "$tab" "$OUT/st-stable" "$OUT/st-p.f" | awk -F'\t' '$3 != "[]"' > "$OUT/st-both"
n=$(wc -l < "$OUT/st-both")
same=$(awk -F'\t' '$2 == $3' "$OUT/st-both" | wc -l)
echo "stacks: $(jq '.threads | length' "$OUT/st-b1.json") threads, $n compared, $same the same," \
	"$(jq '[.threads[] | select(.regs_from == "bpf")] | length' "$OUT/st-b1.json") from saved registers," \
	"stopped: bpf $(jq '.cost.stopped // 0' "$OUT/st-b1.json"), ptrace $(jq '.cost.stopped // 0' "$OUT/st-p.json")"
awk -F'\t' '$2 != $3 { print "  differ: tid " $1 }' "$OUT/st-both" | head -n 5
kill $rp 2> /dev/null
wait 2> /dev/null
echo "done"
