#!/bin/sh
# gpuprobe info on a captured WSL2 host tree (tests/fixtures/hostinfo-wsl:
# seed 000's machine: kernel 6.6.114.1-microsoft-standard-WSL2, /dev/dxg,
# librocdxg, an RX 7900 XTX), in text, JSON and Markdown; and live, where
# the HSA runtime's real file and build-id are checked against the ELF.
. "${0%/*}/../e2e/lib.sh"
. "${0%/*}/lib-md.sh"
require_jq
ROOT=$TMP/root
sh "$top_srcdir/tests/fixtures/hostinfo-wsl.sh" "$ROOT" || framework_failure "cannot assemble the host tree"

gp info --proc-root "$ROOT" --format json > "$TMP/i.json" || fail "info --format json exited $?"
j() { jq -r "$1" "$TMP/i.json"; }
ok "os: Ubuntu 24.04.1 LTS" test "$(j .os.name)" = "Ubuntu 24.04.1 LTS"
ok "kernel from the tree" test "$(j .os.kernel)" = "6.6.114.1-microsoft-standard-WSL2"
ok "cpu model" test "$(j .cpu.model)" = "AMD Ryzen 9 7950X 16-Core Processor"
ok "one GPU: card0 (connectors skipped)" test "$(j '.gpus | length')" = 1
ok "GPU vendor AMD 0x1002:0x744c" test "$(j '.gpus[0] | "\(.vendor_name) \(.vendor):\(.device)"')" = "AMD 0x1002:0x744c"
ok "GPU driver amdgpu, PCI address" test "$(j '.gpus[0] | "\(.driver) \(.pci)"')" = "amdgpu 0000:c5:00.0"
ok "amdgpu module version" test "$(j .drivers.amdgpu)" = "6.12.12"
ok "no NVIDIA driver: absent, not empty" test "$(j '.drivers | has("nvidia")')" = false
ok "WSL detected, three reasons" test "$(j '.wsl.detected')" = true -a "$(j '.wsl.evidence | length')" = 3
ok "librocdxg found" test "$(j '.wsl.evidence[2]')" = "librocdxg: /usr/lib/wsl/lib/librocdxg.so.1.2.0"
ok "device nodes: dxg, dri/card0, dri/renderD128" test "$(j '[.devices[].path] | join(" ")')" = "/dev/dxg /dev/dri/card0 /dev/dri/renderD128"
ok "device mode" test "$(j '.devices[] | select(.path == "/dev/dri/renderD128") | .mode')" = "-rw-rw----"
ok "device access is a boolean" test "$(j '.devices[0].read | type')" = boolean
ok "THP enabled/defrag: the selected words" test "$(j '.thp | "\(.enabled) \(.defrag)"')" = "madvise madvise"
ok "vm.dirty_* from the tree" test "$(j '.vm | "\(."vm.dirty_ratio") \(."vm.dirty_background_ratio") \(."vm.dirty_expire_centisecs")"')" = "20 10 3000"
ok "no Yama in the tree: absent" test "$(j 'has("kernel.yama.ptrace_scope")')" = false
ok "MemAvailable in bytes" test "$(j .mem_available)" = $((52428800 * 1024))
ok "page_size kept for the loader" test "$(j .page_size)" -gt 0
ok "a replayed root probes no runtime" test "$(j 'has("runtimes")')" = false
HSA_TEST_KNOB=1 CUDA_VISIBLE_DEVICES=0 ROCR_VISIBLE_DEVICES=1 UNRELATED=x \
	gp info --proc-root "$ROOT" --format json > "$TMP/env.json" || fail "info exited $?"
ok "GPU environment captured" test "$(jq -r '.env | "\(.HSA_TEST_KNOB) \(.CUDA_VISIBLE_DEVICES) \(.ROCR_VISIBLE_DEVICES)"' "$TMP/env.json")" = "1 0 1"
ok "other environment not captured" test "$(jq -r '.env | has("UNRELATED")' "$TMP/env.json")" = false
ok "ulimit -l" test "$(jq -r '.memlock.soft' "$TMP/env.json")" = "$(ulimit -l | awk '{ print ($1 == "unlimited") ? $1 : $1 * 1024 }')"

gp info --proc-root "$ROOT" > "$TMP/i.txt" || fail "info (text) exited $?"
ok "text: WSL line" grep -q '^WSL  *yes (kernel release says microsoft, /dev/dxg present' "$TMP/i.txt"
ok "text: GPU line" grep -q '^GPUs  *card0: AMD 0x1002:0x744c, driver amdgpu at 0000:c5:00.0' "$TMP/i.txt"
ok "text: MemAvailable" grep -q '^MemAvailable  *50.0 GiB of 62.5 GiB' "$TMP/i.txt"
if command -v cmark-gfm >/dev/null 2>&1 && command -v xmllint >/dev/null 2>&1; then
	gp info --proc-root "$ROOT" --format markdown > "$TMP/i.md" || fail "info markdown exited $?"
	md_html "$TMP/i.md"
	ok "markdown: a list of facts (>= 10 items)" test "$(xq "$TMP/i.md.html" 'count(//ul/li)')" -ge 10
	ok "markdown: labels in bold" test "$(xq "$TMP/i.md.html" 'count(//ul/li/strong)')" -ge 10
	ok "markdown: no raw markup left" test -z "$(grep -F '**' "$TMP/i.md.html")"
fi

# The H200 machine (shared/DEVICE.md) as read there: no DRM card, the
# NVIDIA driver's own GPU list and version banner.
NV=$top_srcdir/tests/fixtures/hostinfo-nvidia
gp info --proc-root "$NV" --format json > "$TMP/nv.json" || fail "info on the nvidia tree exited $?"
ok "nvidia: driver version from the banner" test "$(jq -r .drivers.nvidia "$TMP/nv.json")" = 580.159.04
ok "nvidia: open kernel module" test "$(jq -r .drivers.nvidia_open "$TMP/nv.json")" = true
ok "nvidia: the GPU from /proc/driver/nvidia/gpus" test "$(jq -r '.gpus[0] | "\(.model) \(.pci)"' "$TMP/nv.json")" = "NVIDIA H200 0000:00:05.0"
ok "nvidia: device nodes" test "$(jq -r '[.devices[].path] | join(" ")' "$TMP/nv.json")" = "/dev/nvidia0 /dev/nvidiactl"
ok "nvidia: WSL not detected" test "$(jq -r .wsl.detected "$TMP/nv.json")" = false

# Live: the HSA runtime as the dynamic linker finds it.
gp info --format json > "$TMP/live.json" || fail "live info exited $?"
p=$(jq -r '.runtimes.hsa.path // empty' "$TMP/live.json")
if [ -n "$p" ]; then
	ok "hsa path is the real file (no symlink)" test -f "$p" -a ! -L "$p"
	ok "hsa version is the file's suffix" test "$(jq -r .runtimes.hsa.file_version "$TMP/live.json")" = "${p##*.so.}"
	if command -v readelf >/dev/null 2>&1; then
		want=$(readelf -n "$p" | awk '/Build ID/ { print $3 }')
		ok "hsa build-id matches readelf -n ($want)" test "$(jq -r .runtimes.hsa.build_id "$TMP/live.json")" = "$want"
	fi
else
	say "no HSA runtime here: $(jq -r .runtimes.hsa.error "$TMP/live.json")"
fi
gp info --format json --lib /nonexistent/libhsa-runtime64.so.1 > "$TMP/nolib.json" || fail "--lib missing exited $?"
ok "a missing --lib is reported, not fatal" test -n "$(jq -r '.runtimes.hsa.error // empty' "$TMP/nolib.json")"
gp info --no-runtimes --format json > "$TMP/nort.json"
ok "--no-runtimes: none probed" test "$(jq -r 'has("runtimes")' "$TMP/nort.json")" = false
gp info --format yaml > /dev/null 2>&1
ok "bad --format: exit 64" test $? -eq 64
gp info --proc-root /nonexistent > /dev/null 2> "$TMP/e"
ok "missing --proc-root: exit 1, one line" test $? -eq 1 -a "$(wc -l < "$TMP/e")" -eq 1
pass
