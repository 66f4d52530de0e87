#!/bin/sh
# Turn 3's CUDA IPC shape (issue 29), through the NVML test double: in
# one traced tree, process A's kernel spins on the GPU (100 % SM, GPM: no
# math) waiting for a flag that process B -- which holds a context on the
# GPU (listed by NVML, 1 MiB) and runs no kernel -- never sets; B sleeps
# in load_weights().  The verdict is hang-gpu-spin and names B, its frame
# and that it runs no kernel; report of the saved file says the same.
# (For real, on a GPU: bench/ipc_flag.py, bench/device-odd-1gpu.sh.)
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
. "${0%/*}/lib.sh"
require_jq
require_python
. "$top_srcdir/tests/gpu/lib-nvml.sh"
cat > "$TMP/peer.py" <<'PY'
import time
def load_weights():
    time.sleep(3600)  # LINE:peer
load_weights()
PY
cat > "$TMP/spinner.py" <<'PY'
import time
def synchronize():
    time.sleep(3600)  # the host waits on the GPU's spin
synchronize()
PY
printf 'gpus 1\ndev util=100 memutil=0 power=137 sms=132 gpm=1 smutil=24 occ=3\n' > "$TMP/nvml"
GPUPROBE_NVML_LIB=$N GPUPROBE_FAKE_NVML=$TMP/nvml \
	gp trace -q --interval 0.5 --seconds 7 --hang-after 2 -o "$TMP/t.jsonl" -- \
	sh -c "'$PY' '$TMP/spinner.py' & echo \$! > '$TMP/a.pid'; '$PY' '$TMP/peer.py' & echo \$! > '$TMP/b.pid'; wait" \
	> "$TMP/out" 2>&1 &
T=$!
have_pids() { [ -s "$TMP/a.pid" ] && [ -s "$TMP/b.pid" ]; }
wait_until 5 have_pids || fail "the tree did not start"
A=$(cat "$TMP/a.pid"); B=$(cat "$TMP/b.pid")
# A's kernel resident at 100 % SM; B listed with a context, no kernel
printf 'gpus 1\nproc %s sm=100 bytes=1048576\nproc %s bytes=1048576\ndev util=100 memutil=0 power=137 sms=132 gpm=1 smutil=24 occ=3\n' \
	"$A" "$B" > "$TMP/nvml.new"
mv "$TMP/nvml.new" "$TMP/nvml"
wait $T
rc=$?
cat "$TMP/out"
ok "trace exit 0 (got $rc)" [ $rc -eq 0 ]
v=$(jq -r 'select(.type == "verdict") | .class' "$TMP/t.jsonl")
ok "A's kernel spins: $v is hang-gpu-spin" [ "$v" = hang-gpu-spin ]
s=$(jq -r 'select(.type == "verdict") | .summary' "$TMP/t.jsonl")
ok "the spin is A's (pid $A)" sh -c "printf '%s' \"\$1\" | grep -q \"the GPU spins on pid $A (python3)'s kernel\"" _ "$s"
L=$(grep -n 'LINE:peer' "$TMP/peer.py" | cut -d: -f1)
ok "B named: pid $B holds a context and runs no kernel, waiting in load_weights (peer.py:$L)" \
	sh -c "printf '%s' \"\$1\" | grep -q \"pid $B (python3) holds a context on a GPU and runs no kernel: its main thread waits in load_weights (peer.py:$L)\"" _ "$s"
r=$(gp report --format json "$TMP/t.jsonl" | jq -r '.results[0].verdict.summary')
ok "report of the saved file names B too" \
	sh -c "printf '%s' \"\$1\" | grep -q \"pid $B (python3) holds a context on a GPU and runs no kernel\"" _ "$r"
pass
