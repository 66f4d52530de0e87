#!/bin/sh
# GPU traces recorded on the device (an H100, driver 580.159, CUDA 13,
# 2026-12-06; bench/device-odd-1gpu.sh), judged again in CI where no GPU
# is:
#   ipc-flag-h100   turn 3's CUDA IPC case (bench/ipc_flag.py, issue 29):
#                   A's kernel polls a flag in a cupy array that B opened
#                   through CUDA IPC and never sets; B sleeps.  GPM: one
#                   block polling, no math: hang-gpu-spin, and B named --
#                   a context, no kernel, its main thread in load_weights.
#                   Never "2 processes of python3.12 -c differ": the
#                   spawn child and multiprocessing's resource tracker
#                   are not siblings.
. "${0%/*}/lib.sh"
FX=$top_srcdir/tests/fixtures/traces/device

# fixture | class | summary must contain (grep -E) | must not (grep -E)
judge_recorded "$FX" <<'TABLE'
ipc-flag-h100|hang-gpu-spin|the GPU spins on pid 468 \(python3\)'s kernel, doing no work: 1 of 132 SMs.*pid 493 \(python3\) holds a context on a GPU and runs no kernel: its main thread waits in load_weights \(ipc_flag\.py:12\)|processes of python3\.12 -c differ
TABLE
exit $failed
