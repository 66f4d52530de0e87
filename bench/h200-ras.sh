#!/bin/sh
# NCCL's RAS service on the H200 machine (issue 19, shared/DEVICE.md):
#   GPUPROBE=.devbundle/run OUT=$OUT bench/h200-ras.sh
# (or GPUPROBE=src/gpuprobe where it is built there).  Logs under $OUT
# (h200-ras.log is the summary); record what it measured in
# bench/results/.
#
# What it answers:
#   1. torch's version and the NCCL it carries (torch.cuda.nccl.version(),
#      and the libnccl file the process maps, with its build-id);
#      whether that NCCL has RAS at all: NCCL's own guide
#      (docs/userguide/source/troubleshooting/ras.rst) says "Since NCCL
#      2.24"; src/ras/ first appears in v2.24.3-1; `SET FORMAT json` only
#      from v2.28.7-1 (client_support.cc), before that text only.
#   2. whether 127.0.0.1:28028 answers while a 2-process NCCL job runs,
#      and what (the raw answer, text and JSON), by the protocol of
#      src/ras/client.cc.
#   3. gpuprobe trace --ras-port 28028 of that job: the `ras` lines and
#      the verdict (rank 1 stops calling all_reduce after 20 steps; rank
#      0 waits in all_reduce, its GPU spinning: the RAS counts should
#      show rank 1 behind and not moving).
#
# One GPU: NCCL refuses two ranks on one device ("Multiple Ranks are
# using the same GPU", init.cc) unless NCCL_MULTI_RANK_GPU_ENABLE=1,
# which exists only from NCCL 2.30 (init.cc, 2026-03).  The job is tried
# that way first (with NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=0: one device
# has no P2P with itself); if init fails, a one-rank job (world_size 1)
# runs instead: RAS answers for it too (one communicator of one rank,
# its counts moving), which shows the port and the parser on a real
# NCCL, but no lagging rank -- the log says which job ran.
set -u
GPUPROBE=${GPUPROBE:-src/gpuprobe}
OUT=${OUT:-./h200-out}
PY=${PYTHON:-python3}
PORT=${RAS_PORT:-28028}
. "${0%/*}/h200-lib.sh"
h200_log h200-ras
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
PIDS=
trap 'for p in $PIDS; do kill -KILL $p 2>/dev/null; done' EXIT

"$PY" - <<'PY'
import torch
v = torch.cuda.nccl.version()
v = v if isinstance(v, tuple) else (v // 1000, v // 100 % 10, v % 100)
print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl %d.%d.%d" % v[:3])
print("RAS in this NCCL:", "yes" if v[:3] >= (2, 24, 3) else "no (before 2.24.3)",
      "| JSON answer:", "yes" if v[:3] >= (2, 28, 7) else "no (text only before 2.28.7)",
      "| two ranks on one GPU:", "NCCL_MULTI_RANK_GPU_ENABLE (2.30+)" if v[:2] >= (2, 30) else "no")
PY

# The job: WORLD ranks on cuda:0 (tcp rendezvous on localhost); rank 1
# of two stops after 20 all_reduces and sleeps; the others go on (and
# wait in the 21st).  Each rank prints "ready" after its first step.
cat > "$OUT/nccl_job.py" <<'PY'
import os, sys, time, datetime
import torch, torch.distributed as dist
rank, world = int(sys.argv[1]), int(sys.argv[2])
torch.cuda.set_device(0)
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29517", rank=rank,
                        world_size=world, timeout=datetime.timedelta(seconds=600))
t = torch.ones(1 << 20, device="cuda")
step = 0
def reduce_step():
    dist.all_reduce(t)
    torch.cuda.synchronize()
def lost_rank():
    time.sleep(3600)
while True:
    if world > 1 and rank == 1 and step == 20:
        print("rank 1 stops calling all_reduce", flush=True)
        lost_rank()
    reduce_step()
    step += 1
    if step == 1:
        print("ready", flush=True)
    if world == 1:
        time.sleep(0.05)   # counts that move, slowly
PY

# ras_query FORMAT: one exchange by NCCL's client protocol, raw answer.
ras_query() {
	"$PY" - "$PORT" "$1" <<'PY'
import socket, sys
port, fmt = int(sys.argv[1]), sys.argv[2]
try:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
except OSError as e:
    print("port %d: %s" % (port, e)); sys.exit(1)
s.settimeout(10)
f = s.makefile("rwb")
def cmd(c):
    f.write(c.encode() + b"\n"); f.flush()
    return f.readline().decode(errors="replace").rstrip()
print("handshake:", cmd("CLIENT PROTOCOL 2"))
print("timeout:", cmd("TIMEOUT 2"))
if fmt == "json":
    print("set format json:", cmd("SET FORMAT json"))
f.write(b"VERBOSE STATUS\n"); f.flush()
sys.stdout.write(f.read().decode(errors="replace"))
PY
}

run_job() {  # run_job WORLD: starts the ranks, 0 once all are ready
	PIDS=
	for r in $(seq 0 $(($1 - 1))); do
		NCCL_P2P_DISABLE=1 NCCL_MULTI_RANK_GPU_ENABLE=1 NCCL_DEBUG=WARN \
			"$PY" "$OUT/nccl_job.py" $r $1 > "$OUT/rank$r-w$1.out" 2>&1 &
		PIDS="$PIDS $!"
	done
	n=0
	while :; do
		all=1
		for r in $(seq 0 $(($1 - 1))); do grep -q ready "$OUT/rank$r-w$1.out" || all=0; done
		[ $all = 1 ] && return 0
		for p in $PIDS; do kill -0 $p 2>/dev/null || { echo "a rank exited:"; tail -5 "$OUT"/rank*-w$1.out; return 1; }; done
		n=$((n + 1)); [ $n -gt 600 ] && { echo "not ready after 120 s"; return 1; }
		sleep 0.2
	done
}
stop_job() { for p in $PIDS; do kill -KILL $p 2>/dev/null; done; wait 2>/dev/null; PIDS=; }

WORLD=2
if ! run_job 2; then
	stop_job
	echo "== two ranks on one GPU failed (above); one rank instead"
	WORLD=1
	run_job 1 || { stop_job; echo "== the one-rank job failed too"; exit 1; }
fi
echo "== job of $WORLD rank(s) running: pids$PIDS"
leader=${PIDS# }; leader=${leader%% *}
grep -h "libnccl" /proc/"$leader"/maps | awk '{print $6}' | sort -u | sed 's/^/libnccl mapped: /'
sleep 2   # rank 1 reaches step 20 (two ranks)
echo "== port $PORT, text:"; ras_query text > "$OUT/ras-text.txt" 2>&1; echo "rc $?"; head -40 "$OUT/ras-text.txt"
echo "== port $PORT, json:"; ras_query json > "$OUT/ras-json.txt" 2>&1; echo "rc $?"; head -60 "$OUT/ras-json.txt"

# gpuprobe on the job: the ranks are this shell's children, not one
# tree of their own, so each rank is traced by pid for 20 s, side by
# side; both ask RAS (one service answers for the whole job).
for p in $PIDS; do
	"$GPUPROBE" trace -q --seconds 20 --hang-after 8 --ras-port "$PORT" -o "$OUT/trace-$p.jsonl" "$p" \
		> "$OUT/trace-$p.out" 2>&1 &
done
sleep 26
for p in $PIDS; do
	echo "== trace of pid $p:"
	grep '"type":"ras"' "$OUT/trace-$p.jsonl" | cut -c1-400
	grep '"type":"verdict"' "$OUT/trace-$p.jsonl" | "$PY" -c 'import json,sys; v=json.loads(sys.stdin.read()); print("VERDICT", v["class"], v["confidence"], "|", v["summary"][:700])'
	"$GPUPROBE" report "$OUT/trace-$p.jsonl" > "$OUT/report-$p.md" 2>&1
	grep -A12 "NCCL RAS" "$OUT/report-$p.md" | head -16
done
stop_job
