/* The range lockprobe pins: a file mapped MAP_SHARED (read-only unless
 * --writable) or anonymous memory; pre-faulting it; re-fault threads. */
#ifndef GP_MAPPING_H
#define GP_MAPPING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

enum gp_map_kind { GP_MAP_FILE_RO, GP_MAP_FILE_RW, GP_MAP_ANON };
const char *gp_map_kind_name(enum gp_map_kind k); /* DESIGN's mapping names */

struct gp_file {
	int fd;
	struct stat st;
};

/* Opens FILE for probing: O_NONBLOCK (a FIFO never blocks the open),
 * then refuses what cannot be mapped: a directory, a FIFO, a socket or
 * device, an empty file.  0, or -1 with a one-line reason in why. */
int gp_file_open(const char *path, bool writable, struct gp_file *f, char *why, size_t cap);

struct gp_map {
	void *base;        /* what mmap returned */
	size_t len;
	enum gp_map_kind kind;
};
/* Maps [offset, offset+size) of f (offset page-aligned), or size bytes
 * of anonymous memory (f NULL). 0, or -1 with errno. */
int gp_map_range(struct gp_map *m, enum gp_map_kind kind, const struct gp_file *f,
		 uint64_t offset, size_t size);
void gp_map_release(struct gp_map *m);

/* Pre-faults: MADV_POPULATE_READ (Linux 5.14+; anonymous memory:
 * POPULATE_WRITE, so it is really allocated, not the zero page), else
 * touching one byte a page (reads only for a file: it is never written).
 * *method: "populate-read", "populate-write", "touch".  0, or -1 with
 * errno (EFAULT: the file shrank under the mapping). */
int gp_prefault(struct gp_map *m, bool progress, double *secs, const char **method);

/* N threads that keep faulting the range in for the duration of a pin
 * (seed 004 arm 2c): for a file mapping each drops its page-table
 * entries of a chunk (MADV_DONTNEED; the page cache keeps the pages)
 * and reads it back in; anonymous memory is only read. */
struct gp_refault;
struct gp_refault *gp_refault_start(struct gp_map *m, int nthreads);
/* Stops and joins; returns how many chunks were re-faulted. */
uint64_t gp_refault_stop(struct gp_refault *r);

#endif
