/* A sleeping thread's user registers through a BPF task iterator: see
 * taskregs.h and src/tracer/bpf/taskregs.bpf.c. */
#include "config.h"
#include "taskregs.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char why_none[160];

const char *gp_taskregs_why(void)
{
	return why_none;
}

#ifndef HAVE_BPF

struct gp_taskregs *gp_taskregs_get(void)
{
	snprintf(why_none, sizeof why_none, "built without BPF (clang, bpftool or libbpf missing)");
	return NULL;
}
bool gp_taskregs_read(struct gp_taskregs *r, int tid, uint64_t w[17])
{
	return false;
}
bool gp_taskregs_last_call(struct gp_taskregs *r, int tid, int64_t *nr, uint64_t args[6])
{
	return false;
}
void gp_taskregs_cost(const struct gp_taskregs *r, unsigned long *asked, unsigned long *given)
{
	*asked = *given = 0;
}

#else

#include "bpfload.h"

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* The program stays with the other BPF sources, in src/tracer/bpf/ (one
 * build rule, one kernel.h): found through the tracer's -I. */
#include "bpf/taskregs_abi.h"
#include "bpf/taskregs.skel.h"

struct gp_taskregs {
	struct taskregs_bpf *skel;
	pthread_mutex_t lock;
	unsigned long asked, given;
};

static struct gp_taskregs *the_one;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_once(void)
{
	if (!gp_bpf_may_try(why_none, sizeof why_none))
		return;
	const char *env = getenv("GPUPROBE_BPF_REGS");
	if (env && !strcmp(env, "off")) {
		snprintf(why_none, sizeof why_none, "GPUPROBE_BPF_REGS=off");
		return;
	}
	struct taskregs_bpf *skel = taskregs_bpf__open();
	int err = skel ? taskregs_bpf__load(skel) : -errno;
	struct gp_taskregs *r = err ? NULL : calloc(1, sizeof *r);
	if (!r) {
		gp_bpf_failed(err ? err : ENOMEM, why_none, sizeof why_none);
		taskregs_bpf__destroy(skel);
		return;
	}
	r->skel = skel;
	pthread_mutex_init(&r->lock, NULL);
	the_one = r;
}

struct gp_taskregs *gp_taskregs_get(void)
{
	pthread_once(&once, open_once);
	return the_one;
}

/* tid's record, from an iterator of that one thread (BPF_TASK_ITER_TID). */
static bool read_rec(struct gp_taskregs *r, int tid, struct gp_taskregs_rec *rec)
{
	union bpf_iter_link_info li;
	memset(&li, 0, sizeof li);
	li.task.tid = (__u32)tid;
	LIBBPF_OPTS(bpf_iter_attach_opts, o, .link_info = &li, .link_info_len = sizeof li);
	struct bpf_link *link = bpf_program__attach_iter(r->skel->progs.gp_taskregs, &o);
	ssize_t n = -1;
	if (link) {
		int fd = bpf_iter_create(bpf_link__fd(link));
		if (fd >= 0) {
			n = read(fd, rec, sizeof *rec);
			close(fd);
		}
		bpf_link__destroy(link);
	}
	return n == (ssize_t)sizeof *rec && rec->tid == (__u32)tid && rec->user;
}

bool gp_taskregs_read(struct gp_taskregs *r, int tid, uint64_t w[17])
{
	if (!r)
		return false;
	pthread_mutex_lock(&r->lock);
	r->asked++;
	struct gp_taskregs_rec rec;
	/* Runnable (__state 0) or on a CPU: the saved registers are those of
	 * its last entry into the kernel and the thread has moved on. */
	bool ok = read_rec(r, tid, &rec) && rec.state != 0 && !rec.on_cpu && rec.regs[7] && rec.regs[16];
	if (ok) {
		memcpy(w, rec.regs, sizeof rec.regs);
		r->given++;
	}
	pthread_mutex_unlock(&r->lock);
	return ok;
}

bool gp_taskregs_last_call(struct gp_taskregs *r, int tid, int64_t *nr, uint64_t args[6])
{
	if (!r)
		return false;
	pthread_mutex_lock(&r->lock);
	struct gp_taskregs_rec rec;
	bool ok = read_rec(r, tid, &rec) && rec.orig_ax >= 0;
	pthread_mutex_unlock(&r->lock);
	if (!ok)
		return false;
	*nr = rec.orig_ax;
	/* x86-64's argument registers: rdi rsi rdx r10 r8 r9 */
	const int at[6] = { 5, 4, 1, 10, 8, 9 };
	for (int i = 0; i < 6; i++)
		args[i] = rec.regs[at[i]];
	return true;
}

void gp_taskregs_cost(const struct gp_taskregs *r, unsigned long *asked, unsigned long *given)
{
	*asked = r ? r->asked : 0;
	*given = r ? r->given : 0;
}

#endif
