/* NVML process lists: which layout the driver wrote, found from the bytes
 * it wrote, never from the name of the symbol that wrote them.
 *
 * nvml.h names three entry layouts: nvmlProcessInfo_v1_t (pid u32,
 * usedGpuMemory u64: 16 bytes), nvmlProcessInfo_v2_t (+ gpuInstanceId u32,
 * computeInstanceId u32: 24 bytes) and R535's nvmlProcessInfo_v3_t
 * (+ usedGpuCcProtectedMemory u64: 32 bytes).  Drivers have written each
 * of them through nvmlDeviceGet{Compute,Graphics}RunningProcesses_v3
 * without a change of name: R535 (CUDA 12.2) 32 bytes where R510-R530
 * wrote 24 (XuehaiPan/nvitop PR #79, NVIDIA/go-nvml #75, pynvml PR #48);
 * 550.127.08 on Hopper 16 bytes (nvitop PR #226, whose maintainer notes
 * that NVIDIA later moved the 32-byte list to
 * nvmlDeviceGetRunningProcessDetailList and gave _v3 back its 24 bytes).
 * A reader with a fixed stride then gets wrong pids and, when the stride
 * written is larger than the one assumed, overruns its buffer.
 *
 * So the caller fills its buffer with GP_NVML_FILL, sized for
 * GP_NVML_ROOM bytes an entry plus GP_NVML_SLACK, and asks
 * gp_nvml_stride() what was written: the smallest known stride whose n
 * entries cover every byte the driver changed and whose entries all read
 * as plausible (nvitop PR #226 measures the bytes written the same way,
 * with a sentinel; the code here is ours).  Pure: no I/O. */
#ifndef GP_NVMLPROC_H
#define GP_NVMLPROC_H

#include <stdbool.h>
#include <stddef.h>

#define GP_NVML_FILL		0xa5	/* never a pid's, a size's or an id's high byte */
#define GP_NVML_MAX_STRIDE	32	/* nvmlProcessInfo_v3_t, the largest known */
/* Bytes an entry a buffer holds: twice the largest layout known, so that
 * a layout not yet seen (a v4 with one more field: 40 bytes) lands
 * inside the buffer and is refused as unknown, rather than written past
 * it as R535's 32 bytes were past a 24-byte reader's. */
#define GP_NVML_ROOM		(2 * GP_NVML_MAX_STRIDE)
#define GP_NVML_SLACK		64	/* a driver that writes one entry too many */

/* Bytes of a buffer for n entries (n is the count the driver is told). */
static inline size_t gp_nvml_procbuf_size(unsigned n)
{
	return (size_t)n * GP_NVML_ROOM + GP_NVML_SLACK;
}

/* One entry, whatever its layout. */
struct gp_nvml_proc {
	unsigned pid;
	unsigned long long used;	/* usedGpuMemory; ~0: not available */
	unsigned gi, ci;		/* GPU/compute instance; ~0u: none (v1) */
	unsigned long long cc_used;	/* usedGpuCcProtectedMemory (v3), else 0 */
};

/* The stride (16, 24 or 32) of the n entries the driver wrote into buf
 * (len bytes, every one GP_NVML_FILL before the call), or 0 when no known
 * layout fits; why (cap bytes) then says what was seen ("40 entries in
 * 1600 bytes written: no layout of 16, 24 or 32 bytes an entry fits",
 * "5 entries in 48 bytes written: at 16 bytes an entry, entry 1 is no
 * process; at 24 ..., entry 2 ...").
 * n == 0 answers 0 with why "".  Reads only buf[0..len). */
unsigned gp_nvml_stride(const void *buf, size_t len, unsigned n,
			char *why, size_t cap);

/* Entry i of a list of the given stride (one gp_nvml_stride answered);
 * the caller keeps (i + 1) * stride <= len. */
void gp_nvml_proc_at(const void *buf, unsigned stride, unsigned i,
		     struct gp_nvml_proc *e);

#endif
