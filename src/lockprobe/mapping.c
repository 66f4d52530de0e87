#include "config.h"
#include "mapping.h"
#include "progress.h"
#include "timeutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22   /* Linux 5.14, include/uapi/asm-generic/mman-common.h */
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

const char *gp_map_kind_name(enum gp_map_kind k)
{
	switch (k) {
	case GP_MAP_FILE_RO: return "file-shared-ro";
	case GP_MAP_FILE_RW: return "file-shared-rw";
	default: return "anon";
	}
}

int gp_file_open(const char *path, bool writable, struct gp_file *f, char *why, size_t cap)
{
	/* O_NONBLOCK: opening a FIFO with no writer would wait forever. */
	int fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		if (e == EISDIR)
			snprintf(why, cap, "is a directory: give a regular file");
		else
			snprintf(why, cap, "cannot open%s: %s", writable ? " read-write" : "", strerror(e));
		return -1;
	}
	if (fstat(fd, &f->st) < 0) {
		snprintf(why, cap, "cannot stat: %s", strerror(errno));
		close(fd);
		return -1;
	}
	const char *what = NULL;
	if (S_ISDIR(f->st.st_mode))
		what = "is a directory";
	else if (S_ISFIFO(f->st.st_mode))
		what = "is a FIFO";
	else if (S_ISSOCK(f->st.st_mode))
		what = "is a socket";
	else if (S_ISCHR(f->st.st_mode) || S_ISBLK(f->st.st_mode))
		what = "is a device";
	else if (!S_ISREG(f->st.st_mode))
		what = "is not a regular file";
	if (what) {
		snprintf(why, cap, "%s: give a regular file (or --anon SIZE)", what);
		close(fd);
		return -1;
	}
	if (f->st.st_size == 0) {
		snprintf(why, cap, "is empty: nothing to map");
		close(fd);
		return -1;
	}
	/* Back to blocking mode for the mapping's sake (harmless for files). */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f->fd = fd;
	return 0;
}

int gp_map_range(struct gp_map *m, enum gp_map_kind kind, const struct gp_file *f,
		 uint64_t offset, size_t size)
{
	memset(m, 0, sizeof *m);
	m->kind = kind;
	m->len = size;
	void *p;
	if (kind == GP_MAP_ANON)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	else
		p = mmap(NULL, size, kind == GP_MAP_FILE_RW ? PROT_READ | PROT_WRITE : PROT_READ,
			 MAP_SHARED, f->fd, (off_t)offset);
	if (p == MAP_FAILED)
		return -1;
	m->base = p;
	return 0;
}

void gp_map_release(struct gp_map *m)
{
	if (m->base)
		munmap(m->base, m->len);
	m->base = NULL;
}

int gp_prefault(struct gp_map *m, bool progress, double *secs, const char **method)
{
	const size_t chunk = 64u << 20;
	long pg = sysconf(_SC_PAGESIZE);
	int advice = m->kind == GP_MAP_ANON ? MADV_POPULATE_WRITE : MADV_POPULATE_READ;
	*method = m->kind == GP_MAP_ANON ? "populate-write" : "populate-read";
	struct gp_progress bar;
	gp_progress_start(&bar, "pre-fault", m->len, progress);
	double t0 = gp_mono_now();
	bool touch = false;
	for (size_t off = 0; off < m->len; off += chunk) {
		size_t n = m->len - off < chunk ? m->len - off : chunk;
		char *p = (char *)m->base + off;
		if (!touch && madvise(p, n, advice) != 0) {
			if (errno != EINVAL) {
				int e = errno;
				gp_progress_end(&bar);
				errno = e;
				return -1;
			}
			touch = true; /* kernel older than 5.14 */
			*method = "touch";
		}
		if (touch) {
			volatile char sink = 0;
			for (size_t i = 0; i < n; i += (size_t)pg) {
				if (m->kind == GP_MAP_ANON)
					((volatile char *)p)[i] = 0;
				else
					sink ^= ((volatile char *)p)[i];
			}
			(void)sink;
		}
		gp_progress_update(&bar, off + n);
	}
	*secs = gp_mono_now() - t0;
	gp_progress_end(&bar);
	return 0;
}

struct gp_refault {
	struct gp_map *m;
	int n;
	pthread_t *th;
	atomic_bool stop;
	atomic_ullong chunks;
	atomic_int running;        /* threads past their first chunk */
	int started;
};

struct refault_arg {
	struct gp_refault *r;
	int idx;
};

static void *refault_main(void *p)
{
	struct refault_arg *a = p;
	struct gp_refault *r = a->r;
	const size_t chunk = 2u << 20;
	long pg = sysconf(_SC_PAGESIZE);
	size_t slice = (r->m->len / (size_t)r->n + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	size_t lo = slice * (size_t)a->idx;
	size_t hi = lo + slice > r->m->len ? r->m->len : lo + slice;
	char *base = r->m->base;
	volatile char sink = 0;
	bool counted = false;
	while (!atomic_load(&r->stop) && lo < hi) {
		for (size_t off = lo; off < hi && !atomic_load(&r->stop); off += chunk) {
			size_t n = hi - off < chunk ? hi - off : chunk;
			/* A file's pages stay in the page cache: DONTNEED only
			 * drops this process's page-table entries, so the reads
			 * below fault them back in.  Never on anonymous memory,
			 * where it would discard the contents. */
			if (r->m->kind != GP_MAP_ANON)
				madvise(base + off, n, MADV_DONTNEED);
			for (size_t i = 0; i < n; i += (size_t)pg)
				sink ^= ((volatile char *)base)[off + i];
			atomic_fetch_add(&r->chunks, 1);
			if (!counted) {
				counted = true;
				atomic_fetch_add(&r->running, 1);
			}
		}
	}
	if (!counted)
		atomic_fetch_add(&r->running, 1); /* an empty slice: nothing to wait for */
	(void)sink;
	free(a);
	return NULL;
}

struct gp_refault *gp_refault_start(struct gp_map *m, int nthreads)
{
	if (nthreads <= 0)
		return NULL;
	struct gp_refault *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->m = m;
	r->n = nthreads;
	r->th = calloc((size_t)nthreads, sizeof *r->th);
	atomic_init(&r->stop, false);
	atomic_init(&r->chunks, 0);
	atomic_init(&r->running, 0);
	for (int i = 0; i < nthreads && r->th; i++) {
		struct refault_arg *a = malloc(sizeof *a);
		if (!a)
			break;
		a->r = r;
		a->idx = i;
		if (pthread_create(&r->th[i], NULL, refault_main, a) != 0) {
			free(a);
			break;
		}
		r->started++;
	}
	/* "N threads keep faulting the range in during the pin": the pin
	 * starts once each has faulted its first chunk, or after 2 s.  On a
	 * loaded machine a thread created just before an instant pin could
	 * otherwise not run at all during it (tests/e2e/lock-arms.sh saw 0
	 * chunks beside two busy processes). */
	for (int ms = 0; ms < 2000 && atomic_load(&r->running) < r->started; ms++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	return r;
}

uint64_t gp_refault_stop(struct gp_refault *r)
{
	if (!r)
		return 0;
	atomic_store(&r->stop, true);
	for (int i = 0; i < r->started; i++)
		pthread_join(r->th[i], NULL);
	uint64_t n = atomic_load(&r->chunks);
	free(r->th);
	free(r);
	return n;
}
