/* NVML's activity: what each traced process ran on a GPU
 * (nvmlDeviceGetProcessUtilization, one ring a GPU for every process),
 * and what the device did (GPM, utilization, clocks, power); see nvml.h.
 * Split from nvml.c (issue 31: no file over 1 000 lines). */
#include "config.h"
#include "nvml_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static unsigned long long now_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (unsigned long long)tv.tv_sec * 1000000ull + (unsigned)tv.tv_usec;
}

static bool ubuf_grow(struct gp_nvml *nv, unsigned want)
{
	if (want <= nv->ucap)
		return true;
	if (want > 65536)
		return false;
	void *nb = realloc(nv->ubuf, (size_t)want * sizeof *nv->ubuf);
	if (!nb)
		return false;
	nv->ubuf = nb;
	nv->ucap = want;
	return true;
}

/* nvmlDeviceGetProcessUtilization(dev, samples, &count, lastSeen): with a
 * buffer too small, INSUFFICIENT_SIZE and the count needed; NOT_FOUND
 * when no process was active since lastSeen (nvtop's nvidia extractor
 * reads it the same way).  Returns the samples filled (0 for NOT_FOUND),
 * or -1 with *err. */
static int proc_util_call(struct gp_nvml *nv, nvml_dev h,
			  unsigned long long since, int *err)
{
	*err = NVML_ERROR_INSUFFICIENT_SIZE;
	/* The H200's driver (580.159) answers INSUFFICIENT_SIZE with a count
	 * of 72 to a buffer of 64 even when one sample would be returned:
	 * start above that, so the first read costs one call, not two. */
	if (!ubuf_grow(nv, 128))
		return -1;
	for (int tries = 0; tries < 4; tries++) {
		unsigned int n = nv->ucap;
		nvml_ret r = nv->proc_util(h, nv->ubuf, &n, since);

		if (r == NVML_SUCCESS)
			return n <= nv->ucap ? (int)n : -1;
		if (r == NVML_ERROR_NOT_FOUND)
			return 0;
		if (r != NVML_ERROR_INSUFFICIENT_SIZE) {
			*err = r;
			return -1;
		}
		if (!ubuf_grow(nv, n + 8 > nv->ucap ? n + 8 : nv->ucap * 2))
			return -1;
	}
	return -1;
}

/* Keeps the samples of the last GP_NVML_RING_US (NVML's own buffer
 * holds several seconds; a process that reads later than the others
 * still finds what was fetched for them), at most 4096. */
#define GP_NVML_RING_US 10000000ull

static bool ring_append(struct nvml_ring *r, const struct nvml_util_sample *s, unsigned n)
{
	unsigned keep = 0;

	/* Drop what is older than the window, then append. */
	for (unsigned i = 0; i < r->n; i++)
		if (r->s[i].timeStamp + GP_NVML_RING_US >= r->newest)
			r->s[keep++] = r->s[i];
	r->n = keep;
	if (n == 0)
		return true;	/* and no memcpy to a ring never allocated (UBSan) */
	if (r->n + n > 4096)
		r->n = 0;	/* a flood: the old ones go first */
	if (r->n + n > r->cap) {
		unsigned nc = r->n + n < 128 ? 128 : r->n + n;
		void *nb = realloc(r->s, (size_t)nc * sizeof *r->s);
		if (!nb)
			return false;
		r->s = nb;
		r->cap = nc;
	}
	memcpy(r->s + r->n, s, (size_t)n * sizeof *s);
	r->n += n;
	return true;
}

/* Whether the ring of g is due a call: every call before the first
 * tick; from then on once in GP_NVML_PUTIL_PERIOD_S of the ticks' time
 * (nvml.h: the budget). */
static bool ring_due(const struct gp_nvml *nv, const struct nvml_ring *r)
{
	if (!nv->tick || !r->seq)
		return true;
	return nv->t - r->at_t >= GP_NVML_PUTIL_PERIOD_S || nv->t < r->at_t;
}

/* One nvmlDeviceGetProcessUtilization of GPU g into its ring, asked
 * from the newest sample any earlier call returned (the first: one
 * second back, not the whole sample buffer: a kernel that ended before
 * the trace would read as activity now). */
static void ring_fetch(struct gp_nvml *nv, struct nvml_gpu *g)
{
	struct nvml_ring *r = &g->ring;
	unsigned long long now = now_us();
	unsigned long long since = r->newest ? r->newest : now - 1000000ull;
	int err = 0;
	int n = proc_util_call(nv, g->h, since, &err);

	r->seq++;
	r->at_us = now;
	r->at_t = nv->t;
	r->ok = n >= 0;
	r->err = err;
	if (n < 0)
		return;
	if (!r->newest)
		r->newest = since;
	for (int i = 0; i < n; i++)
		if (nv->ubuf[i].timeStamp > r->newest)
			r->newest = nv->ubuf[i].timeStamp;
	if (!ring_append(r, nv->ubuf, (unsigned)n)) {
		r->ok = false;
		r->err = 2;	/* no memory for the ring: said as NVML_ERROR_INVALID_ARGUMENT */
	}
}

/* A percentage of one NVML sample: a value over 100 is not one (seen
 * as 0xffffffff on vGPU): the sample counts, its value does not. */
static unsigned sample_pct(unsigned v)
{
	return v <= 100 ? v : 0;
}

/* The other processes with kernels on the GPU in the samples after
 * since (issue 22): each pid's mean SM % over its own samples, as for
 * pid.  At most 16 are told apart; past them the rest are not counted
 * (a GPU time-sliced 16 ways is shared whatever the 17th does). */
#define GP_NVML_OTHERS 16
#define GP_NVML_OTHER_ACTIVE_PCT 1.0	/* a mean under it: a context, no kernel */

static void other_procs(const struct nvml_ring *r, int pid, unsigned long long since,
			struct gp_nvml_proc_util *a)
{
	struct other { int pid; unsigned n; double sm; } o[GP_NVML_OTHERS];
	unsigned no = 0;

	for (unsigned k = 0; k < r->n; k++) {
		const struct nvml_util_sample *s = &r->s[k];
		if ((int)s->pid == pid || s->timeStamp <= since)
			continue;
		unsigned j = 0;
		while (j < no && o[j].pid != (int)s->pid)
			j++;
		if (j == no) {
			if (no == GP_NVML_OTHERS)
				continue;
			o[no++] = (struct other){ (int)s->pid, 0, 0 };
		}
		o[j].n++;
		o[j].sm += sample_pct(s->smUtil);
	}
	for (unsigned j = 0; j < no; j++) {
		double m = o[j].sm / o[j].n;
		if (m < GP_NVML_OTHER_ACTIVE_PCT)
			continue;
		a->others++;
		a->others_sm_pct += m;
		if (m > a->other_sm_pct) {
			a->other_sm_pct = m;
			a->other_pid = o[j].pid;
		}
	}
}

/* pid's utilisation on GPU i since the caller's last read of it, from
 * the GPU's ring.  Between two calls of the ring the caller's last
 * reading stands: the samples of the last call cover the time since
 * the one before, this tick's included. */
static void dev_proc_activity(struct gp_nvml *nv, unsigned i, int pid,
			      struct gp_nvml_seen *seen, struct gp_nvml_dev_act *a)
{
	struct nvml_gpu *g = &nv->gpu[i];
	struct nvml_ring *r = &g->ring;
	double sm = 0, mem = 0;

	if (!nv->proc_util) {
		a->proc_err = 13;	/* NVML_ERROR_FUNCTION_NOT_FOUND */
		return;
	}
	if (ring_due(nv, r))
		ring_fetch(nv, g);
	if (!r->ok) {
		a->proc_err = r->err;
		return;
	}
	a->have_proc = true;
	if (seen->seq[i] == r->seq && seen->ts[i]) {
		a->u = seen->last[i];
		return;
	}
	/* A process new to the ring looks one second back from its call. */
	unsigned long long since = seen->ts[i] ? seen->ts[i] : r->at_us - 1000000ull;
	for (unsigned k = 0; k < r->n; k++) {
		const struct nvml_util_sample *s = &r->s[k];

		if ((int)s->pid != pid || s->timeStamp <= since)
			continue;
		a->u.samples++;
		unsigned su = sample_pct(s->smUtil);
		sm += su;
		mem += sample_pct(s->memUtil);
		if (su > a->u.sm_max_pct)
			a->u.sm_max_pct = su;
	}
	if (a->u.samples) {
		a->u.sm_pct = sm / a->u.samples;
		a->u.mem_pct = mem / a->u.samples;
	}
	other_procs(r, pid, since, &a->u);
	seen->ts[i] = r->newest > since ? r->newest : since;
	seen->seq[i] = r->seq;
	seen->last[i] = a->u;
}

static unsigned long long mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
}

/* GPM: a sample now; the metrics between the previous one and it when
 * they are 100 ms apart or more (nvmlGpmMetricsGet needs that), else the
 * last metrics stand and the previous sample stays the base. */
static void read_gpm(struct gp_nvml *nv, struct nvml_gpu *g, unsigned long long t)
{
	struct nvml_work *w = &g->w;
	if (!nv->gpm_support || !nv->gpm_alloc || !nv->gpm_free || !nv->gpm_sample || !nv->gpm_get) {
		w->r.gpm_why = "no GPM in this NVML";
		return;
	}
	if (w->gpm_state == 0) {
		struct nvml_gpm_support sp = { 1, 0 };
		w->gpm_state = nv->gpm_support(g->h, &sp) == NVML_SUCCESS && sp.supported ? 1 : -1;
	}
	if (w->gpm_state < 0) {
		w->r.gpm_why = "GPM not supported (Hopper and newer)";
		return;
	}
	if ((!w->gpm_cur && nv->gpm_alloc(&w->gpm_cur) != NVML_SUCCESS) ||
	    (!w->gpm_prev && nv->gpm_alloc(&w->gpm_prev) != NVML_SUCCESS)) {
		w->r.gpm_why = "nvmlGpmSampleAlloc failed";
		return;
	}
	/* Too close (the metrics need 100 ms), or not due (nvml.h: once in
	 * GP_NVML_GPM_PERIOD_S of the ticks' t): the last metrics stand. */
	if (w->gpm_prev_us && t - w->gpm_prev_us < 100000)
		return;
	if (nv->tick && w->r.have_gpm && nv->t - w->gpm_at_t < GP_NVML_GPM_PERIOD_S && nv->t >= w->gpm_at_t)
		return;
	if (nv->gpm_sample(g->h, w->gpm_cur) != NVML_SUCCESS) {
		w->r.have_gpm = false;
		w->r.gpm_why = "nvmlGpmSampleGet failed";
		return;
	}
	if (!w->gpm_prev_us) {
		w->r.gpm_why = "first GPM sample";
	} else {
		static const unsigned ids[] = { 2, 3, 5, 13, 12, 11, 4, 10 };
		struct nvml_gpm_get *mg = calloc(1, sizeof *mg);
		if (!mg)
			return;
		mg->version = 1;
		mg->n = sizeof ids / sizeof ids[0];
		mg->s1 = w->gpm_prev;
		mg->s2 = w->gpm_cur;
		for (unsigned i = 0; i < mg->n; i++)
			mg->m[i].id = ids[i];
		double *out[] = { &w->r.gpm_sm_util, &w->r.gpm_sm_occ, &w->r.gpm_tensor, &w->r.gpm_fp16,
				  &w->r.gpm_fp32, &w->r.gpm_fp64, &w->r.gpm_int, &w->r.gpm_dram };
		if (nv->gpm_get(mg) == NVML_SUCCESS) {
			w->r.have_gpm = true;
			for (unsigned i = 0; i < mg->n; i++) {
				double v = mg->m[i].value;
				/* A metric that failed, or is no percentage: 0. */
				*out[i] = mg->m[i].ret == NVML_SUCCESS && v >= 0 && v <= 100 ? v : 0;
			}
		} else {
			w->r.have_gpm = false;
			w->r.gpm_why = "nvmlGpmMetricsGet failed";
		}
		free(mg);
	}
	void *x = w->gpm_prev;
	w->gpm_prev = w->gpm_cur;
	w->gpm_cur = x;
	w->gpm_prev_us = t;
	w->gpm_at_t = nv->t;
}

/* The device-wide readings of one GPU, read at most once in 50 ms. */
static void read_dev(struct gp_nvml *nv, struct nvml_gpu *g)
{
	struct nvml_work *w = &g->w;
	unsigned long long t = mono_us();
	/* Once a tick; before the first, at most once in 50 ms. */
	if (nv->tick ? w->tick == nv->tick : w->at_us && t - w->at_us < 50000)
		return;
	w->tick = nv->tick;
	w->at_us = t;
	struct gp_nvml_dev_act *r = &w->r;
	struct nvml_utilization u;
	r->have_util = nv->util && nv->util(g->h, &u) == NVML_SUCCESS && u.gpu <= 100 && u.memory <= 100;
	if (r->have_util) {
		r->util_pct = u.gpu;
		r->mem_util_pct = u.memory;
	}
	r->have_throttle = nv->reasons && nv->reasons(g->h, &r->throttle) == NVML_SUCCESS;
	unsigned int mw = 0, mhz = 0;
	/* Power over 5 kW is no reading (a vGPU's ~0). */
	r->have_power = nv->power && nv->power(g->h, &mw) == NVML_SUCCESS && mw < 5000000;
	r->power_w = r->have_power ? mw / 1000.0 : 0;
	r->have_sm_clock = nv->clock && nv->clock(g->h, 1 /* NVML_CLOCK_SM */, &mhz) == NVML_SUCCESS;
	r->sm_clock_mhz = mhz;
	if (!r->sms && nv->cores && nv->arch) {
		/* SMs from CUDA cores: nvmlDeviceGetAttributes_v2, which has
		 * multiprocessorCount, answers for MIG devices only (NVML API
		 * reference; NOT_SUPPORTED on the H200).  128 cores an SM from
		 * Ampere's GA10x on; only Hopper and newer (architecture 9+:
		 * NVML_DEVICE_ARCH_HOPPER) are counted here, which is where GPM,
		 * the share of SMs a grid holds, exists. */
		unsigned int cores = 0, arch = 0;
		if (nv->arch(g->h, &arch) == NVML_SUCCESS && arch >= 9 && arch < 64 &&
		    nv->cores(g->h, &cores) == NVML_SUCCESS && cores >= 128 && cores < 1u << 20)
			r->sms = cores / 128;
	}
	read_gpm(nv, g, t);
}

/* Copies the shared device readings into a caller's row. */
static void dev_fields(const struct gp_nvml_dev_act *r, struct gp_nvml_dev_act *a)
{
	a->have_util = r->have_util;
	a->util_pct = r->util_pct;
	a->mem_util_pct = r->mem_util_pct;
	a->have_throttle = r->have_throttle;
	a->throttle = r->throttle;
	a->have_power = r->have_power;
	a->power_w = r->power_w;
	a->have_floor = r->have_floor;
	a->floor_w = r->floor_w;
	a->have_sm_clock = r->have_sm_clock;
	a->sm_clock_mhz = r->sm_clock_mhz;
	a->sms = r->sms;
	a->have_gpm = r->have_gpm;
	a->gpm_sm_util = r->gpm_sm_util;
	a->gpm_sm_occ = r->gpm_sm_occ;
	a->gpm_tensor = r->gpm_tensor;
	a->gpm_fp16 = r->gpm_fp16;
	a->gpm_fp32 = r->gpm_fp32;
	a->gpm_fp64 = r->gpm_fp64;
	a->gpm_int = r->gpm_int;
	a->gpm_dram = r->gpm_dram;
	a->gpm_why = r->gpm_why;
}

unsigned gp_nvml_activity(struct gp_nvml *nv, int pid,
			  struct gp_nvml_seen *seen, unsigned long long mask,
			  struct gp_nvml_dev_act *out, unsigned cap)
{
	unsigned n = 0;

	for (unsigned i = 0; nv && i < nv->ngpu && n < cap; i++) {
		struct nvml_gpu *g = &nv->gpu[i];
		struct gp_nvml_dev_act *a;

		if (mask && (g->index >= 64 || !(mask & (1ull << g->index))))
			continue;
		a = &out[n++];

		memset(a, 0, sizeof *a);
		a->index = g->index;
		if (pid >= 0)
			dev_proc_activity(nv, i, pid, seen, a);
		read_dev(nv, g);
		dev_fields(&g->w.r, a);
	}
	return n;
}

/* nvmlClocksEventReasons (nvml.h, CUDA 12.2+; the same bits as the
 * older nvmlClocksThrottleReason*). */
static const struct { unsigned long long bit; const char *name; } reasons[] = {
	{ 0x1, "idle" },
	{ 0x2, "applications-clocks" },
	{ 0x4, "sw-power-cap" },
	{ 0x8, "hw-slowdown" },
	{ 0x10, "sync-boost" },
	{ 0x20, "sw-thermal" },
	{ 0x40, "hw-thermal" },
	{ 0x80, "hw-power-brake" },
	{ 0x100, "display-clocks" },
};

void gp_nvml_throttle_text(unsigned long long mask, char *buf, size_t cap)
{
	size_t len = 0;

	if (cap)
		buf[0] = '\0';
	for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
		if (!(mask & reasons[i].bit))
			continue;
		int w = snprintf(buf + len, cap - len, "%s%s", len ? "," : "",
				 reasons[i].name);
		if (w < 0 || (size_t)w >= cap - len)
			return;
		len += (size_t)w;
		mask &= ~reasons[i].bit;
	}
	if (mask)
		snprintf(buf + len, cap - len, "%s0x%llx", len ? "," : "", mask);
}
