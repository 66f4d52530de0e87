/* NVML process lists: the layout of the entries, from the bytes written.
 * See nvmlproc.h for the drivers that wrote each layout. */
#include "config.h"
#include "nvmlproc.h"
#include "strbuf.h"

#include <stdint.h>
#include <string.h>

/* The layouts, smallest first: a smaller stride that still covers every
 * byte written is the true one (a larger one would have written more). */
static const unsigned strides[] = { 16, 24, 32 };

/* PID_MAX_LIMIT (include/linux/threads.h: 4 M on 64-bit): no pid above
 * it, in any namespace; NVML lists host pids, which /proc of a container
 * may not show, so existence in our /proc is not asked. */
#define PID_LIMIT		(4u * 1024 * 1024)
/* 1 PiB: ten times the HBM of any GPU sold (B300: 288 GB); more is a
 * pid or an id read as a size. */
#define BYTES_LIMIT		(1ull << 50)
/* MIG ids are small (an H100/H200 has at most 7 GPU instances; NVML's
 * ids stay below 16); ~0u is "no instance", the answer without MIG. */
#define INSTANCE_LIMIT		4096u

static uint32_t u32_at(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static uint64_t u64_at(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

/* The fields sit at the offsets of the C layouts on every ABI NVML ships
 * for (x86-64, aarch64, ppc64le): the u64 after pid aligned to 8. */
void gp_nvml_proc_at(const void *buf, unsigned stride, unsigned i,
		     struct gp_nvml_proc *e)
{
	const unsigned char *p = (const unsigned char *)buf + (size_t)i * stride;

	e->pid = u32_at(p);
	e->used = u64_at(p + 8);
	e->gi = stride >= 24 ? u32_at(p + 16) : ~0u;
	e->ci = stride >= 24 ? u32_at(p + 20) : ~0u;
	e->cc_used = stride >= 32 ? u64_at(p + 24) : 0;
}

static bool bytes_ok(unsigned long long b)
{
	return b == ~0ull || b <= BYTES_LIMIT;
}

static bool instance_ok(unsigned id)
{
	return id == ~0u || id < INSTANCE_LIMIT;
}

/* Index of the first entry that cannot be a process at this stride, or
 * n when all can. */
static unsigned first_bad(const void *buf, unsigned stride, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct gp_nvml_proc e;

		gp_nvml_proc_at(buf, stride, i, &e);
		if (e.pid == 0 || e.pid > PID_LIMIT || !bytes_ok(e.used) ||
		    !instance_ok(e.gi) || !instance_ok(e.ci) ||
		    !bytes_ok(e.cc_used))
			return i;
	}
	return n;
}

/* Bytes from the start to the last byte the driver changed.  Every
 * layout ends with the high byte of a pid-, size- or id-sized field,
 * 0x00 or 0xff in any plausible entry, never GP_NVML_FILL: the extent
 * ends exactly at the last entry's end. */
static size_t written(const unsigned char *b, size_t len)
{
	while (len > 0 && b[len - 1] == GP_NVML_FILL)
		len--;
	return len;
}

unsigned gp_nvml_stride(const void *buf, size_t len, unsigned n,
			char *why, size_t cap)
{
	enum { NS = sizeof strides / sizeof strides[0] };
	size_t w = written(buf, len);
	unsigned bad[NS];
	bool tried[NS] = { false };

	if (cap)
		why[0] = '\0';
	if (n == 0)
		return 0;
	for (size_t k = 0; k < NS; k++) {
		size_t need = (size_t)n * strides[k];

		if (need > len || need < w)
			continue;	/* past the buffer, or bytes beyond it written */
		tried[k] = true;
		bad[k] = first_bad(buf, strides[k], n);
		if (bad[k] == n)
			return strides[k];
	}

	/* Only now, for the reason: no allocation on the common path. */
	struct strbuf sb = STRBUF_INIT;
	const char *sep = ": ";

	strbuf_addf(&sb, "%u entries in %zu bytes written", n, w);
	for (size_t k = 0; k < NS; k++)
		if (tried[k]) {
			strbuf_addf(&sb, "%sat %u bytes an entry, entry %u is no process",
				    sep, strides[k], bad[k]);
			sep = "; ";
		}
	if (*sep == ':')
		strbuf_addstr(&sb, ": no layout of 16, 24 or 32 bytes an entry fits");
	else
		strbuf_addstr(&sb, " (pid, size or instance id out of range)");
	strbuf_copy_to(&sb, why, cap);
	strbuf_release(&sb);
	return 0;
}
