/* System-wide readers: /proc/vmstat, /proc/meminfo, /proc/pressure/{cpu,memory,io},
 * and the host facts that go in a result header.  They read the machine,
 * not a process, and serve both the tracer (a sample's system part) and
 * the host facts of every result header (hostinfo.c, beside it), so they
 * sit in a room below the tracer and the commands. */
#ifndef GP_SYSINFO_H
#define GP_SYSINFO_H

#include "procfs.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* What the live summary and the verdict need, compactly.  have_* false
 * means this kernel lacks the field: absent, never 0. */
struct gp_sys_compact {
	uint64_t nr_dirtied, nr_written;  /* pages, cumulative */
	uint64_t pgsteal_file;            /* pages reclaimed from the page cache */
	uint64_t nr_dirty, nr_writeback;  /* pages, now */
	uint64_t mem_available;           /* bytes */
	bool have_dirtied, have_written, have_pgsteal_file, have_mem_available;
};

/* Pure: every "name value" line of vmstat into obj (integers).  A field
 * the kernel lacks is simply absent. */
void gp_vmstat_parse(const char *text, json_t *obj, struct gp_sys_compact *c);
/* Pure: meminfo "Name:  123 kB" into obj, in bytes (HugePages_* counts
 * stay counts).  Not libproc2's meminfo API: procps 4.0.2 opens the fixed
 * path /proc/meminfo (meminfo.c MEMINFO_FILE), so a --proc-root replay
 * would read the live machine's; and it keeps only the fields it knows,
 * where a result keeps every field by name.  libproc2 serves process
 * lookup by name and identity (common/identity.c). */
void gp_meminfo_parse(const char *text, json_t *obj, struct gp_sys_compact *c);
/* Pure: one pressure file ("some avg10=0.00 avg60=0.00 avg300=0.00
 * total=0" and "full ...") into {"some":{...},"full":{...}}; NULL when
 * nothing parses. */
json_t *gp_psi_parse(const char *text);

struct gp_sys_reader;
struct gp_sys_reader *gp_sys_reader_new(const struct gp_root *root);
void gp_sys_reader_free(struct gp_sys_reader *r);
/* {"vmstat":{...},"meminfo":{...},"psi":{"cpu":..,"memory":..,"io":..}};
 * a source that cannot be read is absent. */
json_t *gp_sys_read(struct gp_sys_reader *r, struct gp_sys_compact *c);
/* The same as a delta against the last call's reading (format 4):
 * {"delta":1, PART:{the members that changed}} for each part read; whole
 * on the first call, when a part appeared, or when whole is set. */
json_t *gp_sys_read_delta(struct gp_sys_reader *r, struct gp_sys_compact *c, bool whole);

/* Host facts for the header: kernel release, CPU count, page size, clock
 * ticks, vm.dirty_ratio, vm.dirty_background_ratio, hostname, boot time. */
json_t *gp_host_facts(const struct gp_root *root);

#endif
