/* What every BPF program of gpuprobe checks before it loads, and how a
 * failure is said (src/tracer/sockflow.c, src/unwind/taskregs.c). */
#ifndef GP_BPFLOAD_H
#define GP_BPFLOAD_H

#include <stdbool.h>
#include <stddef.h>

/* Whether BPF may be tried at all: not with GPUPROBE_BPF=off, nor from a
 * pid namespace of gpuprobe's own (the kernel's tgids and tids are the
 * host's).  Also silences libbpf: its messages are kept, not printed.
 * False with why filled. */
int gp_bpf_may_try(char *why, size_t n);

/* A failed open/load/attach (err: a negative errno, or positive) said in
 * why: the capabilities asked for on EPERM, else libbpf's first error
 * message. */
void gp_bpf_failed(int err, char *why, size_t n);

/* The running kernel is release major.minor or later (uname(2)). */
bool gp_bpf_kernel_at_least(int major, int minor);

#endif
