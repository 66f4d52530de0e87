/* A test double of libnvidia-ml.so.1: the NVML calls gpuprobe makes,
 * driven by the test.  A fixture: loaded only by tests, by path.
 *
 * GPUPROBE_FAKE_NVML holds the script: a file path (starts with '/' or
 * '.'), re-read at every call so a test can change it while a trace
 * runs, or the text itself with ';' between lines.  Lines:
 *
 *   gpus N                         GPUs listed (default 1)
 *   proc PID [gpu=I] [sm=P] [mem=P] [bytes=B]
 *                                  PID runs on GPU I: listed by
 *                                  nvmlDeviceGetComputeRunningProcesses
 *                                  with B bytes; with sm or mem > 0 it is
 *                                  "active" and nvmlDeviceGetProcessUtilization
 *                                  returns one sample for it, stamped now
 *                                  PID "children": every child process of
 *                                  the program that loaded the double
 *                                  (gpuprobe idle's runtime child);
 *                                  "descendants": every process below it
 *                                  (a traced tree: trace -- sh -c ...)
 *   dev [gpu=I] [util=P] [memutil=P] [throttle=MASK] [power=W] [sms=N]
 *       [smclock=MHZ] [gpm=0|1] [smutil=P] [occ=P] [tensor=P] [fp16=P]
 *       [fp32=P] [fp64=P] [int=P] [dram=P]
 *                                  nvmlDeviceGetUtilizationRates, the
 *                                  clock-event reasons, power (W; absent:
 *                                  NOT_SUPPORTED), SM count and clock,
 *                                  and the GPM metrics (gpm=1: Hopper's
 *                                  GPM supported; each metric a %) of GPU I
 *   fail init|procutil|util CODE   that call returns CODE
 *   stride N                       bytes an entry of the process lists
 *                                  written by the _v2 and _v3 calls
 *                                  (default 24, nvmlProcessInfo_v2_t):
 *                                  32 as R535's _v3 wrote
 *                                  (nvmlProcessInfo_v3_t), 16 as
 *                                  550.127.08's (nvitop PRs #79, #226),
 *                                  or any other, a layout not yet seen.
 *                                  The bare calls always write 16 (v1).
 *
 * Each process list is exported under the three names real drivers do
 * (_v3, _v2, bare), so the caller picks as with a real libnvidia-ml.
 *
 * GPUPROBE_FAKE_NVML_COUNTS=FILE: when the library is unloaded (dlclose,
 * or exit), appends one line "PID FUNCTION CALLS" per NVML function the
 * loader called, PID the loader's: what the NVML call budget (nvml.h)
 * is checked against (tests/e2e/trace-nvml-budget.sh).
 *
 * GPUPROBE_FAKE_NVML_COST="FUNCTION=US,...": each call of FUNCTION burns
 * US microseconds of CPU first, as the driver's ioctls do (the H200's
 * costs: bench/results/2026-12-04-gpu-work.md); bench/nvml-budget.sh
 * measures gpuprobe's slope with them.
 *
 * nvmlDeviceGetPcieThroughput and nvmlDeviceGetTotalEnergyConsumption
 * are exported, and block 20 ms as the H200's did: counted, never to be
 * called at 1 Hz.
 *
 * GPUPROBE_FAKE_NVML_LOG=FILE appends "procutil GPU SINCE" per
 * nvmlDeviceGetProcessUtilization call (the last-seen timestamp the
 * caller passed, µs), and "procs NAME GPU COUNT" per process-list call
 * (the symbol called and the count the caller offered). */
#include <dirent.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/time.h>
#include <fcntl.h>
#include <time.h>

#define API __attribute__((visibility("default")))

enum { OK = 0, UNINIT = 1, INVALID = 2, NOT_FOUND = 6, INSUFFICIENT = 7 };

struct proc { unsigned pid, gpu, sm, mem; unsigned long long bytes; };
struct dev {
	unsigned util, memutil;
	unsigned long long throttle;
	unsigned power_w, sms, smclock;
	bool have_power, gpm;
	double gpm_v[14];	/* by NVML GPM metric id, 1..13 */
};

#define MAXP 64
#define MAXG 8

static struct {
	unsigned ngpu;
	struct proc p[MAXP];
	unsigned np;
	struct dev d[MAXG];
	int fail_init, fail_procutil, fail_util;
	unsigned stride;
} S;

static int inited;

static unsigned long long now_us(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (unsigned long long)tv.tv_sec * 1000000ull + (unsigned long long)tv.tv_usec;
}

/* ---- calls counted, and their cost ---------------------------------- */

static const char *const fn_names[] = {
	"nvmlInit_v2", "nvmlShutdown", "nvmlDeviceGetCount_v2",
	"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetName", "nvmlDeviceGetUUID",
	"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
	"nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses_v3",
	"nvmlDeviceGetGraphicsRunningProcesses_v2", "nvmlDeviceGetGraphicsRunningProcesses",
	"nvmlDeviceGetProcessUtilization", "nvmlDeviceGetUtilizationRates",
	"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetPowerUsage",
	"nvmlDeviceGetClockInfo", "nvmlDeviceGetArchitecture", "nvmlDeviceGetNumGpuCores",
	"nvmlGpmQueryDeviceSupport", "nvmlGpmSampleAlloc", "nvmlGpmSampleFree",
	"nvmlGpmSampleGet", "nvmlGpmMetricsGet",
	"nvmlDeviceGetPcieThroughput", "nvmlDeviceGetTotalEnergyConsumption",
};
#define NFN (sizeof fn_names / sizeof fn_names[0])
static unsigned long calls[NFN];

/* The configured cost of fn, µs ("nvmlGpmSampleGet=280,..."), 0 none. */
static unsigned long cost_of(const char *fn)
{
	const char *spec = getenv("GPUPROBE_FAKE_NVML_COST");
	size_t n = strlen(fn);

	for (const char *p = spec; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, fn, n) && p[n] == '=')
			return strtoul(p + n + 1, NULL, 10);
	return 0;
}

static void burn_us(unsigned long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((unsigned long)((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000) < us);
}

static void call(const char *fn)
{
	for (size_t i = 0; i < NFN; i++)
		if (!strcmp(fn_names[i], fn))
			calls[i]++;
	unsigned long us = cost_of(fn);
	if (us)
		burn_us(us);
}
#define CALL() call(__func__)

__attribute__((destructor)) static void write_counts(void)
{
	const char *path = getenv("GPUPROBE_FAKE_NVML_COUNTS");
	char buf[4096];
	size_t len = 0;

	if (!path)
		return;
	for (size_t i = 0; i < NFN; i++) {
		if (!calls[i])
			continue;
		int w = snprintf(buf + len, sizeof buf - len, "%d %s %lu\n", (int)getpid(),
				 fn_names[i], calls[i]);
		if (w < 0 || (size_t)w >= sizeof buf - len)
			break;
		len += (size_t)w;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	/* One write: two loaders appending never interleave their lines. */
	if (write(fd, buf, len) < 0)
		len = 0;
	close(fd);
}

static unsigned long long kv(const char *line, const char *key, unsigned long long def)
{
	char pat[32];
	snprintf(pat, sizeof pat, " %s=", key);
	const char *p = strstr(line, pat);
	return p ? strtoull(p + strlen(pat), NULL, 0) : def;
}

static void add_proc(unsigned pid, const char *line)
{
	if (S.np < MAXP)
		S.p[S.np++] = (struct proc){ pid, (unsigned)kv(line, "gpu", 0),
			(unsigned)kv(line, "sm", 0), (unsigned)kv(line, "mem", 0),
			kv(line, "bytes", 0) };
}

/* Every process whose parent is self (all below it with deep), added as
 * the line says. */
static void add_below(int self, const char *line, bool deep)
{
	int kids[MAXP];
	unsigned nk = 0;
	{
		DIR *d = opendir("/proc");
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char path[64], buf[512];
			unsigned pid = (unsigned)strtoul(de->d_name, NULL, 10);
			if (!pid)
				continue;
			snprintf(path, sizeof path, "/proc/%u/stat", pid);
			FILE *f = fopen(path, "r");
			if (!f)
				continue;
			size_t n = fread(buf, 1, sizeof buf - 1, f);
			fclose(f);
			buf[n] = '\0';
			char *rp = strrchr(buf, ')');
			int ppid = 0;
			if (rp && sscanf(rp + 2, "%*c %d", &ppid) == 1 && ppid == self && nk < MAXP) {
				add_proc(pid, line);
				kids[nk++] = (int)pid;
			}
		}
		if (d)
			closedir(d);
	}
	for (unsigned i = 0; deep && i < nk; i++)
		add_below(kids[i], line, true);
}

static void parse_line(char *line)
{
	char word[16];
	unsigned long long a;
	int code;

	if (sscanf(line, "%15s", word) != 1)
		return;
	if (!strcmp(word, "gpus") && sscanf(line, "%*s %llu", &a) == 1) {
		S.ngpu = a > MAXG ? MAXG : (unsigned)a;
	} else if (!strcmp(word, "proc") && sscanf(line, "%*s %llu", &a) == 1) {
		add_proc((unsigned)a, line);
	} else if (!strcmp(word, "proc")) {
		if (strstr(line, " children") || strstr(line, " descendants"))
			add_below(getpid(), line, strstr(line, " descendants") != NULL);
	} else if (!strcmp(word, "dev")) {
		unsigned g = (unsigned)kv(line, "gpu", 0);
		if (g < MAXG) {
			struct dev *d = &S.d[g];
			*d = (struct dev){ (unsigned)kv(line, "util", 0),
				(unsigned)kv(line, "memutil", 0), kv(line, "throttle", 0),
				(unsigned)kv(line, "power", 0), (unsigned)kv(line, "sms", 132),
				(unsigned)kv(line, "smclock", 1980), strstr(line, " power=") != NULL,
				kv(line, "gpm", 0) != 0, { 0 } };
			/* nvmlGpmMetricId_t: SM_UTIL 2, SM_OCCUPANCY 3, INTEGER 4,
			 * ANY_TENSOR 5, DRAM_BW 10, FP64 11, FP32 12, FP16 13 */
			static const struct { const char *k; int id; } m[] = {
				{ "smutil", 2 }, { "occ", 3 }, { "int", 4 }, { "tensor", 5 },
				{ "dram", 10 }, { "fp64", 11 }, { "fp32", 12 }, { "fp16", 13 } };
			for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
				d->gpm_v[m[i].id] = (double)kv(line, m[i].k, 0);
		}
	} else if (!strcmp(word, "stride") && sscanf(line, "%*s %llu", &a) == 1) {
		S.stride = a < 8 || a > 256 ? 24 : (unsigned)a;
	} else if (!strcmp(word, "fail") && sscanf(line, "%*s %15s %i", word, &code) == 2) {
		if (!strcmp(word, "init"))
			S.fail_init = code;
		else if (!strcmp(word, "procutil"))
			S.fail_procutil = code;
		else if (!strcmp(word, "util"))
			S.fail_util = code;
	}
}

/* The script's text as last parsed, and when: the same text is parsed
 * again only after 200 ms, so that "proc descendants" walks /proc a few
 * times a second, not at every call (a trace makes ~20 calls a tick; at
 * one walk each a loaded machine skipped ticks), and a changed script is
 * seen at once. */
static char last_text[8192];
static unsigned long long last_parse_us;

static void load(void)
{
	const char *spec = getenv("GPUPROBE_FAKE_NVML");
	char buf[8192];
	size_t n = 0;

	if (spec && (spec[0] == '/' || spec[0] == '.')) {
		FILE *f = fopen(spec, "r");
		if (f) {
			n = fread(buf, 1, sizeof buf - 1, f);
			fclose(f);
		} else {
			spec = NULL;
		}
	} else if (spec) {
		n = strlen(spec);
		if (n > sizeof buf - 1)
			n = sizeof buf - 1;
		memcpy(buf, spec, n);
	}
	buf[n] = '\0';
	unsigned long long now = now_us();
	if (spec && last_parse_us && now - last_parse_us < 200000 && !strcmp(buf, last_text))
		return;
	memset(&S, 0, sizeof S);
	S.ngpu = 1;
	S.stride = 24;
	last_parse_us = spec ? now : 0;
	memcpy(last_text, buf, n + 1);
	if (!spec)
		return;
	for (char *save = NULL, *l = strtok_r(buf, ";\n", &save); l;
	     l = strtok_r(NULL, ";\n", &save))
		parse_line(l);
}

static unsigned gpu_of(void *h) { return (unsigned)((unsigned long)h - 1); }

API int nvmlInit_v2(void)
{
	CALL();
	load();
	if (S.fail_init)
		return S.fail_init;
	inited++;
	return OK;
}

API int nvmlShutdown(void)
{
	CALL();
	if (!inited)
		return UNINIT;
	inited--;
	return OK;
}

API int nvmlDeviceGetCount_v2(unsigned *n)
{
	CALL();
	load();
	*n = S.ngpu;
	return inited ? OK : UNINIT;
}

API int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h)
{
	CALL();
	if (i >= S.ngpu)
		return INVALID;
	*h = (void *)(unsigned long)(i + 1);
	return OK;
}

API int nvmlDeviceGetName(void *h, char *name, unsigned len)
{
	CALL();
	snprintf(name, len, "Fake NVML GPU %u", gpu_of(h));
	return OK;
}

/* A UUID of the form drivers give ("GPU-" and 36 hex digits and
 * dashes), one per fake GPU: what DCGM exporter labels series by. */
API int nvmlDeviceGetUUID(void *h, char *uuid, unsigned len)
{
	CALL();
	snprintf(uuid, len, "GPU-fa6e0000-0000-4000-8000-%012u", gpu_of(h));
	return OK;
}

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...)
{
	const char *log = getenv("GPUPROBE_FAKE_NVML_LOG");
	va_list ap;

	if (!log)
		return;
	FILE *f = fopen(log, "a");
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* One entry as a driver lays it out: pid u32, 4 bytes of padding,
 * usedGpuMemory u64, then (v2) gpuInstanceId and computeInstanceId u32,
 * then (v3) usedGpuCcProtectedMemory u64; beyond 32 bytes, zeros.
 * Written with memcpy of a run-time length, so that ASan's interceptor
 * checks every byte against the caller's buffer even though this
 * library is not instrumented. */
static void put_entry(unsigned char *out, unsigned k, unsigned stride,
		      unsigned pid, unsigned long long used)
{
	unsigned char e[256];
	unsigned none = ~0u;

	memset(e, 0, sizeof e);
	memcpy(e, &pid, 4);
	memcpy(e + 8, &used, 8);
	if (stride >= 24) {
		memcpy(e + 16, &none, 4);	/* no MIG: no instance */
		memcpy(e + 20, &none, 4);
	}
	memcpy(out + (size_t)k * stride, e, stride);
}

/* The compute list of GPU h in entries of stride bytes. */
static int procs(const char *name, void *h, unsigned *n, void *out, unsigned stride)
{
	unsigned g = gpu_of(h), k = 0;

	load();
	log_line("procs %s %u %u\n", name, g, *n);
	for (unsigned i = 0; i < S.np; i++)
		if (S.p[i].gpu == g) {
			if (k < *n)
				put_entry(out, k, stride, S.p[i].pid, S.p[i].bytes);
			k++;
		}
	int r = k > *n ? INSUFFICIENT : OK;
	*n = k;
	return r;
}

API int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned *n, void *out)
{
	CALL();
	return procs("compute_v3", h, n, out, S.stride);
}

API int nvmlDeviceGetComputeRunningProcesses_v2(void *h, unsigned *n, void *out)
{
	CALL();
	return procs("compute_v2", h, n, out, S.stride);
}

API int nvmlDeviceGetComputeRunningProcesses(void *h, unsigned *n, void *out)
{
	CALL();
	return procs("compute", h, n, out, 16);
}

/* No graphics clients: a compute GPU. */
static int no_procs(const char *name, void *h, unsigned *n)
{
	load();
	log_line("procs %s %u %u\n", name, gpu_of(h), *n);
	*n = 0;
	return OK;
}

API int nvmlDeviceGetGraphicsRunningProcesses_v3(void *h, unsigned *n, void *out)
{
	CALL();
	(void)out;
	return no_procs("graphics_v3", h, n);
}

API int nvmlDeviceGetGraphicsRunningProcesses_v2(void *h, unsigned *n, void *out)
{
	CALL();
	(void)out;
	return no_procs("graphics_v2", h, n);
}

API int nvmlDeviceGetGraphicsRunningProcesses(void *h, unsigned *n, void *out)
{
	CALL();
	(void)out;
	return no_procs("graphics", h, n);
}

struct util_sample {
	unsigned pid;
	unsigned long long ts;
	unsigned sm, mem, enc, dec;
};

API int nvmlDeviceGetProcessUtilization(void *h, struct util_sample *out, unsigned *n,
					unsigned long long since)
{
	CALL();
	unsigned g = gpu_of(h), k = 0;
	unsigned long long now = now_us();

	load();
	log_line("procutil %u %llu\n", g, since);
	if (S.fail_procutil)
		return S.fail_procutil;
	/* Only processes active since `since` are returned (NVML API
	 * reference, nvmlDeviceGetProcessUtilization). */
	for (unsigned i = 0; i < S.np; i++) {
		if (S.p[i].gpu != g || (!S.p[i].sm && !S.p[i].mem) || now <= since)
			continue;
		if (out && k < *n)
			out[k] = (struct util_sample){ S.p[i].pid, now, S.p[i].sm,
						       S.p[i].mem, 0, 0 };
		k++;
	}
	if (k == 0)
		return NOT_FOUND;
	int r = !out || k > *n ? INSUFFICIENT : OK;
	*n = k;
	return r;
}

struct utilization { unsigned gpu, memory; };

API int nvmlDeviceGetUtilizationRates(void *h, struct utilization *u)
{
	CALL();
	unsigned g = gpu_of(h);
	load();
	if (S.fail_util)
		return S.fail_util;
	if (g >= MAXG)
		return INVALID;
	u->gpu = S.d[g].util;
	u->memory = S.d[g].memutil;
	return OK;
}

API int nvmlDeviceGetCurrentClocksEventReasons(void *h, unsigned long long *mask)
{
	CALL();
	unsigned g = gpu_of(h);
	if (g >= MAXG)
		return INVALID;
	*mask = S.d[g].throttle;
	return OK;
}

API int nvmlDeviceGetPowerUsage(void *h, unsigned *mw)
{
	CALL();
	unsigned g = gpu_of(h);
	load();
	if (g >= MAXG)
		return INVALID;
	if (!S.d[g].have_power)
		return 3; /* NVML_ERROR_NOT_SUPPORTED */
	*mw = S.d[g].power_w * 1000;
	return OK;
}

API int nvmlDeviceGetClockInfo(void *h, unsigned type, unsigned *mhz)
{
	CALL();
	unsigned g = gpu_of(h);
	load();
	if (g >= MAXG || type != 1 /* NVML_CLOCK_SM */)
		return INVALID;
	*mhz = S.d[g].smclock;
	return OK;
}

/* A Hopper (NVML_DEVICE_ARCH_HOPPER 9) of 128 cores an SM. */
API int nvmlDeviceGetArchitecture(void *h, unsigned *arch)
{
	CALL();
	(void)h;
	*arch = 9;
	return OK;
}

API int nvmlDeviceGetNumGpuCores(void *h, unsigned *cores)
{
	CALL();
	unsigned g = gpu_of(h);
	load();
	if (g >= MAXG)
		return INVALID;
	*cores = S.d[g].sms * 128;
	return OK;
}

/* GPM (nvml.h, Hopper and newer): a sample is a handle; the metrics
 * between two samples are the device's figures of the script. */
struct gpm_sample { unsigned gpu; unsigned long long t; };
struct gpm_support { unsigned version, supported; };
struct gpm_metric {
	unsigned id;
	int ret;
	double value;
	const char *short_name, *long_name, *unit;
};
struct gpm_get {
	unsigned version, n;
	struct gpm_sample *s1, *s2;
	struct gpm_metric m[];
};

API int nvmlGpmQueryDeviceSupport(void *h, struct gpm_support *sp)
{
	CALL();
	unsigned g = gpu_of(h);
	load();
	if (g >= MAXG || sp->version != 1)
		return INVALID;
	sp->supported = S.d[g].gpm;
	return OK;
}

API int nvmlGpmSampleAlloc(struct gpm_sample **s)
{
	CALL();
	*s = calloc(1, sizeof **s);
	return *s ? OK : 2;
}

API int nvmlGpmSampleFree(struct gpm_sample *s)
{
	CALL();
	free(s);
	return OK;
}

API int nvmlGpmSampleGet(void *h, struct gpm_sample *s)
{
	CALL();
	unsigned g = gpu_of(h);
	load();
	if (g >= MAXG || !S.d[g].gpm)
		return 3;
	s->gpu = g;
	s->t = now_us();
	log_line("gpmsample %u\n", g);
	return OK;
}

API int nvmlGpmMetricsGet(struct gpm_get *mg)
{
	CALL();
	load();
	if (mg->version != 1 || !mg->s1 || !mg->s2 || mg->n > 98)
		return INVALID;
	/* Two samples at least 100 ms apart (NVML API reference,
	 * nvmlGpmMetricsGet): closer ones read as garbage on real GPUs. */
	unsigned long long dt = mg->s2->t > mg->s1->t ? mg->s2->t - mg->s1->t : 0;
	log_line("gpmmetrics %u %llu\n", mg->n, dt);
	const struct dev *d = &S.d[mg->s2->gpu < MAXG ? mg->s2->gpu : 0];
	for (unsigned i = 0; i < mg->n; i++) {
		mg->m[i].ret = mg->m[i].id < 14 ? OK : 2;
		mg->m[i].value = mg->m[i].id < 14 ? d->gpm_v[mg->m[i].id] : 0;
	}
	return OK;
}

/* The calls that block (H200, driver 580: PCIe throughput 20.7 ms, total
 * energy 3 ms a call): here to be counted, never to be called at 1 Hz. */
API int nvmlDeviceGetPcieThroughput(void *h, unsigned counter, unsigned *value)
{
	CALL();
	(void)h;
	(void)counter;
	burn_us(20000);
	*value = 0;
	return OK;
}

API int nvmlDeviceGetTotalEnergyConsumption(void *h, unsigned long long *mj)
{
	CALL();
	(void)h;
	burn_us(3000);
	*mj = 0;
	return OK;
}
