#!/bin/sh
# Sets up a fresh Debian 12 machine and builds gpuprobe:
#   1. installs the Debian packages needed to build (only those missing;
#      installing needs root); with --tests, those the test suite needs too,
#   2. autoreconf -fi, ./configure "$@", make.
# Re-running it is cheap: nothing is installed twice.
#
#   ./bootstrap.sh && src/gpuprobe demo          build and run (README)
#   ./bootstrap.sh --tests && make -j2 check     the test lab, then the tests
set -eu
cd "$(dirname "$0")"
tests=no
if [ "${1:-}" = --tests ]; then
	tests=yes
	shift
fi

# Build (issue 28: what building needs, not the test lab; 153 MB of
# archives on a debootstrap --variant=minbase bookworm, the smallest Debian
# 12 there is, measured 2026-12-06, bench/results/2026-12-06-bootstrap.md):
# compiler, Autotools, the chosen libraries; libcairo2-dev (plots, 25 MB of
# it); libbpf-dev, bpftool and clang (the BPF path, where the kernel counts
# socket bytes and reads saved registers, src/tracer/bpf/: 63 MB of it;
# without them gpuprobe still builds, on /proc and sock_diag alone);
# libzstd-dev, zlib1g-dev: -o FILE.zst (libzstd streaming), report of .zst
# and .gz results, gzip for gpuprobe bundle's archive (src/bundle/tar.c).
BUILD_PKGS="gcc make autoconf automake pkg-config
      libdw-dev libelf-dev libproc2-dev libjansson-dev libcairo2-dev
      libzstd-dev zlib1g-dev libbpf-dev bpftool clang"

# Test (--tests; 368 MB more, most of it python3-torch): cmocka, jq (the
# end-to-end scripts read results with it), zstd (they read a .zst back),
# procps/sysstat/elfutils (peers the benchmarks compare against);
# libhsa-runtime64-1: the real ROCr (5.2.3) whose hsa_init failure gpuprobe
# must diagnose (tests/e2e/gpu-real-hsa.sh); mandoc (man page lint),
# cmark-gfm (the report's Markdown must parse), xmllint/file/pngcheck
# (plots), bash-completion (the completion test); clang also serves
# libFuzzer (make fuzz, the short pass in make check); valgrind (make
# memcheck); python3, xz-utils, pv: the real programs of
# tests/real/cases.tsv (bench/real-programs.sh installs its servers itself).
# gdb and python3-dbg: py-bt, the truth beside tests/e2e/stacks-python-pybt.sh.
# strace: another tracer holding one thread (tests/e2e/stacks-traced-elsewhere.sh).
# python3-torch (1.13, with libtorch): real ranks without a GPU, two
# torch.distributed processes on gloo (tests/e2e/trace-gloo-ranks.sh).
# prometheus-node-exporter (13 MB installed) and prometheus (96 MB: the
# package that ships promtool; Debian has no smaller one): watch --metrics
# read as a fleet reads it, node_exporter's textfile collector serving it
# and `promtool check metrics` linting it (tests/e2e/watch-metrics.sh), and
# the shipped alert rules (promtool test rules).  systemd: systemd-analyze
# verify of the installed unit (tests/report/install-unit.sh).
TEST_PKGS="zstd libcmocka-dev jq procps sysstat elfutils util-linux coreutils
      libhsa-runtime64-1 mandoc cmark-gfm libxml2-utils file pngcheck bash-completion
      valgrind python3 xz-utils pv gdb python3-dbg strace systemd
      prometheus-node-exporter prometheus python3-torch"
# The Kubernetes manifest's validator (tests/report/k8s-manifests.sh) runs
# on Node.js, from the npm registry: Debian's nodejs and npm where none is.
command -v npm > /dev/null 2>&1 || TEST_PKGS="$TEST_PKGS nodejs npm"
PKGS=$BUILD_PKGS
[ $tests = no ] || PKGS="$BUILD_PKGS $TEST_PKGS"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "bootstrap.sh: missing packages:$missing" >&2
		echo "bootstrap.sh: run as root, or: sudo apt-get install$missing" >&2
		exit 1
	fi
	echo "bootstrap.sh: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# Its modules, pinned by tests/k8s/package-lock.json (integrity hashes).
if [ $tests = yes ] && [ ! -d tests/k8s/node_modules/kubernetes-models ]; then
	(cd tests/k8s && npm ci --no-audit --no-fund --loglevel=error) ||
		echo "bootstrap.sh: npm ci in tests/k8s failed: the manifest test will skip" >&2
fi

autoreconf -fi
./configure "$@"
make -j"$(nproc)"
