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
 *                                  nvmlDeviceGetComputeRunningProcesses_v3
 *                                  with B bytes; with sm or mem > 0 it is
 *                                  "active" and nvmlDeviceGetProcessUtilization
 *                                  returns one sample for it, stamped now
 *                                  PID "children": every child process of
 *                                  the program that loaded the double
 *                                  (gpuprobe idle's runtime child)
 *   dev [gpu=I] [util=P] [memutil=P] [throttle=MASK]
 *                                  nvmlDeviceGetUtilizationRates and the
 *                                  clock-event reasons of GPU I
 *   fail init|procutil|util CODE   that call returns CODE
 *
 * GPUPROBE_FAKE_NVML_LOG=FILE appends "procutil GPU SINCE" per
 * nvmlDeviceGetProcessUtilization call (the last-seen timestamp the
 * caller passed, µs). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/time.h>

#define API __attribute__((visibility("default")))

enum { OK = 0, UNINIT = 1, INVALID = 2, NOT_FOUND = 6, INSUFFICIENT = 7 };

struct proc { unsigned pid, gpu, sm, mem; unsigned long long bytes; };
struct dev { unsigned util, memutil; unsigned long long throttle; };

#define MAXP 64
#define MAXG 8

static struct {
	unsigned ngpu;
	struct proc p[MAXP];
	unsigned np;
	struct dev d[MAXG];
	int fail_init, fail_procutil, fail_util;
} S;

static int inited;

static unsigned long long now_us(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (unsigned long long)tv.tv_sec * 1000000ull + (unsigned long long)tv.tv_usec;
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
	} else if (!strcmp(word, "proc") && strstr(line, " children")) {
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
			if (rp && sscanf(rp + 2, "%*c %d", &ppid) == 1 && ppid == (int)getpid())
				add_proc(pid, line);
		}
		if (d)
			closedir(d);
	} else if (!strcmp(word, "dev")) {
		unsigned g = (unsigned)kv(line, "gpu", 0);
		if (g < MAXG)
			S.d[g] = (struct dev){ (unsigned)kv(line, "util", 0),
				(unsigned)kv(line, "memutil", 0), kv(line, "throttle", 0) };
	} else if (!strcmp(word, "fail") && sscanf(line, "%*s %15s %i", word, &code) == 2) {
		if (!strcmp(word, "init"))
			S.fail_init = code;
		else if (!strcmp(word, "procutil"))
			S.fail_procutil = code;
		else if (!strcmp(word, "util"))
			S.fail_util = code;
	}
}

static void load(void)
{
	const char *spec = getenv("GPUPROBE_FAKE_NVML");
	char buf[8192];
	size_t n = 0;

	memset(&S, 0, sizeof S);
	S.ngpu = 1;
	if (!spec)
		return;
	if (spec[0] == '/' || spec[0] == '.') {
		FILE *f = fopen(spec, "r");
		if (!f)
			return;
		n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
	} else {
		n = strlen(spec);
		if (n > sizeof buf - 1)
			n = sizeof buf - 1;
		memcpy(buf, spec, n);
	}
	buf[n] = '\0';
	for (char *save = NULL, *l = strtok_r(buf, ";\n", &save); l;
	     l = strtok_r(NULL, ";\n", &save))
		parse_line(l);
}

static unsigned gpu_of(void *h) { return (unsigned)((unsigned long)h - 1); }

API int nvmlInit_v2(void)
{
	load();
	if (S.fail_init)
		return S.fail_init;
	inited++;
	return OK;
}

API int nvmlShutdown(void)
{
	if (!inited)
		return UNINIT;
	inited--;
	return OK;
}

API int nvmlDeviceGetCount_v2(unsigned *n)
{
	load();
	*n = S.ngpu;
	return inited ? OK : UNINIT;
}

API int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h)
{
	if (i >= S.ngpu)
		return INVALID;
	*h = (void *)(unsigned long)(i + 1);
	return OK;
}

API int nvmlDeviceGetName(void *h, char *name, unsigned len)
{
	snprintf(name, len, "Fake NVML GPU %u", gpu_of(h));
	return OK;
}

struct proc_info { unsigned pid; unsigned long long used; unsigned gi, ci; };

API int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned *n, struct proc_info *out)
{
	unsigned g = gpu_of(h), k = 0;

	load();
	for (unsigned i = 0; i < S.np; i++)
		if (S.p[i].gpu == g) {
			if (k < *n)
				out[k] = (struct proc_info){ S.p[i].pid, S.p[i].bytes, ~0u, ~0u };
			k++;
		}
	int r = k > *n ? INSUFFICIENT : OK;
	*n = k;
	return r;
}

API int nvmlDeviceGetGraphicsRunningProcesses_v3(void *h, unsigned *n, struct proc_info *out)
{
	(void)h; (void)out;
	*n = 0;
	return OK;
}

struct util_sample {
	unsigned pid;
	unsigned long long ts;
	unsigned sm, mem, enc, dec;
};

API int nvmlDeviceGetProcessUtilization(void *h, struct util_sample *out, unsigned *n,
					unsigned long long since)
{
	unsigned g = gpu_of(h), k = 0;
	unsigned long long now = now_us();
	const char *log = getenv("GPUPROBE_FAKE_NVML_LOG");

	load();
	if (log) {
		FILE *f = fopen(log, "a");
		if (f) {
			fprintf(f, "procutil %u %llu\n", g, since);
			fclose(f);
		}
	}
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
	unsigned g = gpu_of(h);
	if (g >= MAXG)
		return INVALID;
	*mask = S.d[g].throttle;
	return OK;
}
