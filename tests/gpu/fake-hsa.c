/* A test double of ROCr's libhsa-runtime64.so.1: what gpuprobe's HSA
 * backend calls, behaving as seed 004 measured.  A fixture: loaded only
 * by tests, through --lib.
 *
 *   agents  CPU (pools fine 2, kernarg 3, coarse 4, ext-fine 8) and GPU
 *           (coarse 4, fine 2)
 *   lock_to_pool with a GPU agent's pool         -> 0x28 INVALID_MEMORY_POOL
 *   HSA_USE_SVM=0 in the environment             -> lock calls give 0x1000
 *   GPUPROBE_FAKE_HSA_HANG_ABOVE=SIZE            -> a lock above SIZE bytes never
 *                                                   returns (blocks in read(2))
 *   GPUPROBE_FAKE_HSA_PIN_HANG=1                 -> every lock call blocks for ever
 *        in fake_kfd_register_memory() (read(2) under it), a named frame the
 *        way ROCr's KfdDriver::RegisterMemory sits under the lock call (seed 004)
 *   GPUPROBE_FAKE_HSA_PIN_STARVED=1              -> every lock call polls for ever
 *        in fake_kfd_pin_starved(), a thread that cannot take a ptrace stop
 *        for ~1 s at a time and then can for 50 ms (see there): the shape
 *        of a thread in a long kernel call, which takes a stop only on its
 *        way out (issue 18: 0.4-1.2 s in cuMemHostRegister)
 *   GPUPROBE_FAKE_HSA_TID_REUSE=SECONDS          -> hsa_init starts a thread that
 *        spins that long and exits; then a thread that sleeps takes its tid
 *        (through /proc/sys/kernel/ns_last_pid: only in a PID namespace of
 *        our own, e.g. under unshare -Upfr --mount-proc); the log says
 *        "tid reuse: T" when it did, "tid reuse: no: WHY" when it could not
 *   GPUPROBE_FAKE_HSA_INIT_FAIL=1                -> hsa_init gives 0x1008
 *   GPUPROBE_FAKE_HSA_INIT_HANG=1                -> hsa_init never returns (blocks
 *                                                   in read(2), as a wedged driver)
 *   GPUPROBE_FAKE_HSA_OLD=1                      -> a 5.2.3-like runtime: no
 *        product name, uuid, alloc-allowed attribute (INVALID_ARGUMENT), no ext-fine pool
 *   GPUPROBE_FAKE_HSA_LOG=FILE                   -> every pin/unpin call appended to FILE
 *   HSA_ENABLE_INTERRUPT=0                       -> the events thread spins in
 *        rocr::core::Runtime::AsyncEventsLoop(void*) (fake-hsa-events.cc), as
 *        ROCr's polling fallback does (seed 000); otherwise it blocks there. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

typedef uint32_t hsa_status_t;
typedef struct { uint64_t handle; } hsa_agent_t;
typedef struct { uint64_t handle; } hsa_amd_memory_pool_t;

enum {
	OK = 0, INFO_BREAK = 1, INVALID_MEMORY_POOL = 0x28,
	ERROR = 0x1000, INVALID_ARGUMENT = 0x1001, INVALID_AGENT = 0x1004,
	OUT_OF_RESOURCES = 0x1008, NOT_INITIALIZED = 0x100B,
};

struct pool { uint64_t handle; uint64_t agent; uint32_t segment, flags; uint64_t size; bool alloc; const char *name; };
struct agent { uint64_t handle; uint32_t type; const char *name, *product, *uuid; uint32_t node; };

static const struct agent agents[] = {
	{ 0x1000, 0, "AMD Ryzen AI MAX+ 395 w/ Radeon 8060S", "AMD Ryzen AI MAX+ 395 w/ Radeon 8060S", "CPU-XX", 0 },
	{ 0x2000, 1, "gfx1151", "AMD Radeon Graphics", "GPU-XX", 1 },
};
static const struct pool pools[] = {
	{ 0x1101, 0x1000, 0, 2, 64ull << 30, true, "cpu-fine" },
	{ 0x1102, 0x1000, 0, 3, 64ull << 30, true, "cpu-kernarg" },
	{ 0x1103, 0x1000, 0, 4, 64ull << 30, true, "cpu-coarse" },
	{ 0x1104, 0x1000, 0, 8, 64ull << 30, true, "cpu-extfine" },
	{ 0x2101, 0x2000, 0, 4, 16ull << 30, true, "gpu0-coarse" },
	{ 0x2102, 0x2000, 0, 2, 16ull << 30, true, "gpu0-fine" },
};
#define NAGENTS (sizeof agents / sizeof agents[0])
#define NPOOLS (sizeof pools / sizeof pools[0])

static int inited;

static bool env_is(const char *k, const char *v)
{
	const char *e = getenv(k);
	return e && !strcmp(e, v);
}

static bool old(void) { return env_is("GPUPROBE_FAKE_HSA_OLD", "1"); }

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void logf_(const char *fmt, ...)
{
	const char *path = getenv("GPUPROBE_FAKE_HSA_LOG");
	if (!path)
		return;
	FILE *f = fopen(path, "a");
	if (!f)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

/* The C++ events thread, when the build has a C++ compiler. */
void fake_hsa_events_start(void) __attribute__((weak));
void fake_hsa_events_stop(void) __attribute__((weak));

static void block_for_ever(void) __attribute__((noreturn));
static void block_for_ever(void)
{
	/* Blocked in read(2) on a pipe nobody writes. */
	int fds[2];
	if (pipe(fds) == 0) {
		char b;
		for (;;)
			if (read(fds[0], &b, 1) < 0)
				(void)0;
	}
	for (;;)
		pause();
}

/* Not inlined, not a tail call away: the frame the unwind must name.
 * Global (hidden visibility) so the symbol table keeps its name even in
 * a build that strips local symbols. */
void fake_kfd_register_memory(void *host, size_t size) __attribute__((noinline, noreturn));
void fake_kfd_register_memory(void *host, size_t size)
{
	logf_("fake_kfd_register_memory host=%p size=%zu: blocking", host, size);
	block_for_ever();
}

/* The runtime's own busy thread beside the starved one, on its CPU: 1 s
 * of work, 50 ms of sleep, for ever. */
static void *starve_hog(void *arg)
{
	cpu_set_t *cpu = arg;
	pthread_setaffinity_np(pthread_self(), sizeof *cpu, cpu);
	for (;;) {
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 1000000000L);
		struct timespec nap = { 0, 50 * 1000 * 1000 };
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* Not inlined: the frame the unwind must name.  The calling thread moves
 * to one CPU at SCHED_IDLE (allowed unprivileged) and polls there, beside
 * a busy thread of normal policy on the same CPU: it runs only while that
 * one sleeps, 50 ms a second (measured: SCHED_IDLE beside a spinner got
 * no CPU for 0.4-2.5 s).  A PTRACE_INTERRUPT is taken only when the
 * thread runs, so a stop asked for in the busy second does not come
 * within stacks.h's 100 ms; one asked for while it runs comes at once. */
void fake_kfd_pin_starved(void *host, size_t size) __attribute__((noinline, noreturn));
void fake_kfd_pin_starved(void *host, size_t size)
{
	static cpu_set_t cpu;
	cpu_set_t all;
	int last = 0;
	pthread_t hog;

	logf_("fake_kfd_pin_starved host=%p size=%zu: starved", host, size);
	CPU_ZERO(&all);
	if (sched_getaffinity(0, sizeof all, &all) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &all))
				last = c;
	CPU_ZERO(&cpu);
	CPU_SET(last, &cpu);
	pthread_create(&hog, NULL, starve_hog, &cpu);
	sched_setaffinity(0, sizeof cpu, &cpu);
	struct sched_param sp = { 0 };
	sched_setscheduler(0, SCHED_IDLE, &sp);
	for (volatile unsigned long n = 0;; n++)
		__asm__ volatile("" ::: "memory");
}

/* GPUPROBE_FAKE_HSA_TID_REUSE: a short-lived spinner, and a sleeper that
 * reuses its tid once it is gone. */
static double reuse_s;
static pid_t reuse_tid;
static int reuse_state;	/* 0 not yet, 1 the sleeper has the tid, 2 it has another */

static void *reuse_spinner(void *arg)
{
	(void)arg;
	reuse_tid = (pid_t)syscall(SYS_gettid);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < reuse_s);
	return NULL;
}

/* Sleeps for ever when it got the spinner's tid; else says so and ends. */
static void *reuse_sleeper(void *arg)
{
	(void)arg;
	if ((pid_t)syscall(SYS_gettid) != reuse_tid) {
		__atomic_store_n(&reuse_state, 2, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&reuse_state, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

static void nap_ms(long ms)
{
	struct timespec t = { 0, ms * 1000 * 1000 };
	nanosleep(&t, NULL);
}

static void *reuse_coordinator(void *arg)
{
	pthread_t sp, sl;
	(void)arg;
	if (pthread_create(&sp, NULL, reuse_spinner, NULL) != 0)
		return NULL;
	pthread_join(sp, NULL);
	/* The join returns when the thread clears its tid; the kernel frees
	 * the number a little later (measured: after its /proc entry is
	 * gone, one or two tries more): ask again until it is ours. */
	for (int i = 0; i < 500; i++) {
		/* The next pid this namespace hands out is ns_last_pid + 1. */
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		if (!f || fprintf(f, "%d", (int)reuse_tid - 1) < 0 || fclose(f) != 0) {
			logf_("tid reuse: no: ns_last_pid not writable (not in a PID namespace of our own)");
			return NULL;
		}
		__atomic_store_n(&reuse_state, 0, __ATOMIC_RELEASE);
		if (pthread_create(&sl, NULL, reuse_sleeper, NULL) != 0)
			break;
		int st;
		while ((st = __atomic_load_n(&reuse_state, __ATOMIC_ACQUIRE)) == 0)
			nap_ms(1);
		if (st == 1) {
			logf_("tid reuse: %d", (int)reuse_tid);
			return NULL;
		}
		pthread_join(sl, NULL);
		nap_ms(1);
	}
	logf_("tid reuse: no: tid %d not handed out again", (int)reuse_tid);
	return NULL;
}

API hsa_status_t hsa_init(void)
{
	const char *reuse = getenv("GPUPROBE_FAKE_HSA_TID_REUSE");
	if (reuse && !reuse_s && (reuse_s = atof(reuse)) > 0) {
		pthread_t c;
		pthread_create(&c, NULL, reuse_coordinator, NULL);
		pthread_detach(c);
	}
	if (env_is("GPUPROBE_FAKE_HSA_INIT_FAIL", "1"))
		return OUT_OF_RESOURCES;
	if (env_is("GPUPROBE_FAKE_HSA_INIT_HANG", "1"))
		block_for_ever();
	if (inited++ == 0 && fake_hsa_events_start)
		fake_hsa_events_start();
	return OK;
}

API hsa_status_t hsa_shut_down(void)
{
	if (!inited)
		return NOT_INITIALIZED;
	if (--inited == 0 && fake_hsa_events_stop)
		fake_hsa_events_stop();
	return OK;
}

/* As 5.2.3: no strings for the AMD codes 0x28-0x2F. */
API hsa_status_t hsa_status_string(hsa_status_t s, const char **out)
{
	if (!out)
		return INVALID_ARGUMENT;
	switch (s) {
	case OK: *out = "HSA_STATUS_SUCCESS: The function has been executed successfully."; break;
	case ERROR: *out = "HSA_STATUS_ERROR: A generic error has occurred."; break;
	case INVALID_ARGUMENT: *out = "HSA_STATUS_ERROR_INVALID_ARGUMENT: One of the actual arguments does not meet a precondition stated in the documentation of the corresponding formal argument."; break;
	case 0x1026: *out = "HSA_STATUS_ERROR_FATAL: A fatal error has occurred."; break;
	case 0x1027: *out = "HSA_STATUS_ERROR_FAKE_ONLY_IN_THE_RUNTIME: for the name lookup test."; break;
	default: return INVALID_ARGUMENT;
	}
	return OK;
}

API hsa_status_t hsa_system_get_info(uint32_t attr, void *value)
{
	if (!inited)
		return NOT_INITIALIZED;
	switch (attr) {
	case 0: *(uint16_t *)value = 1; return OK;
	case 1: *(uint16_t *)value = old() ? 1 : 18; return OK;
	case 0x200:
		if (old())
			return INVALID_ARGUMENT;
#ifdef GP_FAKE_BACKOFF
		*(const char **)value = "gpuprobe-fake-hsa 7.0.0 (backoff in the polling fallback)";
#else
		*(const char **)value = "gpuprobe-fake-hsa 7.0.0";
#endif
		return OK;
	default: return INVALID_ARGUMENT;
	}
}

/* Signals and the async handler: what `gpuprobe idle` asks of a runtime
 * to open a context with the least work (hsa.h hsa_signal_create,
 * hsa_ext_amd.h hsa_amd_signal_async_handler). */
API hsa_status_t hsa_signal_create(int64_t initial, uint32_t n, const hsa_agent_t *consumers,
				   uint64_t *signal)
{
	(void)initial; (void)n; (void)consumers;
	if (!inited)
		return NOT_INITIALIZED;
	if (!signal)
		return INVALID_ARGUMENT;
	static uint64_t next = 0x5000;
	*signal = next++;
	logf_("hsa_signal_create -> 0x%llx", (unsigned long long)*signal);
	return OK;
}

API hsa_status_t hsa_signal_destroy(uint64_t signal)
{
	(void)signal;
	return inited ? OK : NOT_INITIALIZED;
}

API hsa_status_t hsa_amd_signal_async_handler(uint64_t signal, int cond, int64_t value,
					      bool (*handler)(int64_t, void *), void *arg)
{
	(void)cond; (void)value; (void)handler; (void)arg;
	if (!inited)
		return NOT_INITIALIZED;
	logf_("hsa_amd_signal_async_handler signal=0x%llx", (unsigned long long)signal);
	return OK;
}

API hsa_status_t hsa_iterate_agents(hsa_status_t (*cb)(hsa_agent_t, void *), void *data)
{
	if (!inited)
		return NOT_INITIALIZED;
	for (size_t i = 0; i < NAGENTS; i++) {
		hsa_status_t s = cb((hsa_agent_t){ agents[i].handle }, data);
		if (s != OK)
			return s;
	}
	return OK;
}

static const struct agent *find_agent(uint64_t h)
{
	for (size_t i = 0; i < NAGENTS; i++)
		if (agents[i].handle == h)
			return &agents[i];
	return NULL;
}

static const struct pool *find_pool(uint64_t h)
{
	for (size_t i = 0; i < NPOOLS; i++)
		if (pools[i].handle == h)
			return &pools[i];
	return NULL;
}

/* Writes exactly the attribute's size, as ROCr does: a caller with a
 * wider buffer would read garbage past it. */
API hsa_status_t hsa_agent_get_info(hsa_agent_t agent, uint32_t attr, void *value)
{
	if (!inited)
		return NOT_INITIALIZED;
	const struct agent *a = find_agent(agent.handle);
	if (!a)
		return INVALID_AGENT;
	switch (attr) {
	case 0: memset(value, 0, 64); strncpy(value, a->name, 63); return OK;
	case 16: *(uint32_t *)value = a->node; return OK;
	case 17: *(uint32_t *)value = a->type; return OK;
	case 0xA006: *(uint32_t *)value = a->type ? 0xc100 : 0; return OK;
	case 0xA009:
		if (old())
			return INVALID_ARGUMENT;
		memset(value, 0, 64);
		strncpy(value, a->product, 63);
		return OK;
	case 0xA011:
		if (old())
			return INVALID_ARGUMENT;
		memset(value, 0, 21);
		strncpy(value, a->uuid, 20);
		return OK;
	default: return INVALID_ARGUMENT;
	}
}

API hsa_status_t hsa_amd_agent_iterate_memory_pools(hsa_agent_t agent,
		hsa_status_t (*cb)(hsa_amd_memory_pool_t, void *), void *data)
{
	if (!inited)
		return NOT_INITIALIZED;
	if (!find_agent(agent.handle))
		return INVALID_AGENT;
	for (size_t i = 0; i < NPOOLS; i++) {
		if (pools[i].agent != agent.handle || (old() && pools[i].flags == 8))
			continue;
		hsa_status_t s = cb((hsa_amd_memory_pool_t){ pools[i].handle }, data);
		if (s != OK)
			return s;
	}
	return OK;
}

API hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t pool, uint32_t attr, void *value)
{
	if (!inited)
		return NOT_INITIALIZED;
	const struct pool *p = find_pool(pool.handle);
	if (!p)
		return INVALID_MEMORY_POOL;
	switch (attr) {
	case 0: *(uint32_t *)value = p->segment; return OK;
	case 1: *(uint32_t *)value = p->flags; return OK;
	case 2: *(size_t *)value = p->size; return OK;
	case 5:
		if (old())
			return INVALID_ARGUMENT;
		*(bool *)value = p->alloc; /* one byte */
		return OK;
	default: return INVALID_ARGUMENT;
	}
}

static hsa_status_t common_lock(const char *call, void *host, size_t size, hsa_agent_t *ag,
				int nag, const struct pool *p, uint32_t flags, void **out)
{
	logf_("%s size=%zu num_agent=%d agent0=0x%llx pool=%s flags=%u svm=%s", call, size, nag,
	      ag && nag > 0 ? (unsigned long long)ag[0].handle : 0ull, p ? p->name : "-", flags,
	      getenv("HSA_USE_SVM") ? getenv("HSA_USE_SVM") : "-");
	if (!inited)
		return NOT_INITIALIZED;
	if (!host || !size || !out || (ag && nag <= 0) || (!ag && nag != 0))
		return INVALID_ARGUMENT;
	for (int i = 0; i < nag; i++)
		if (!find_agent(ag[i].handle))
			return INVALID_AGENT;
	/* Seed 004 arm 1: the fleet's no-SVM knob refuses the call. */
	if (env_is("HSA_USE_SVM", "0"))
		return ERROR;
	if (env_is("GPUPROBE_FAKE_HSA_PIN_HANG", "1"))
		fake_kfd_register_memory(host, size);
	if (env_is("GPUPROBE_FAKE_HSA_PIN_STARVED", "1"))
		fake_kfd_pin_starved(host, size);
	const char *hang = getenv("GPUPROBE_FAKE_HSA_HANG_ABOVE");
	if (hang && size > strtoull(hang, NULL, 0))
		block_for_ever();
	*out = host;
	return OK;
}

API hsa_status_t hsa_amd_memory_lock(void *host, size_t size, hsa_agent_t *ag, int nag, void **out)
{
	hsa_status_t r = common_lock("hsa_amd_memory_lock", host, size, ag, nag, NULL, 0, out);
	__asm__ volatile("" ::: "memory");
	return r;
}

API hsa_status_t hsa_amd_memory_lock_to_pool(void *host, size_t size, hsa_agent_t *ag, int nag,
					     hsa_amd_memory_pool_t pool, uint32_t flags, void **out)
{
	const struct pool *p = find_pool(pool.handle);
	if (inited && p && find_agent(p->agent)->type != 0) {
		logf_("hsa_amd_memory_lock_to_pool size=%zu num_agent=%d pool=%s flags=%u -> 0x28",
		      size, nag, p->name, flags);
		return INVALID_MEMORY_POOL; /* "not owned by a CPU agent" */
	}
	if (!p)
		return INVALID_MEMORY_POOL;
	if (flags != 0)
		return INVALID_ARGUMENT; /* "Reserved parameter, must be 0" */
	hsa_status_t r = common_lock("hsa_amd_memory_lock_to_pool", host, size, ag, nag, p, flags, out);
	/* No tail call: this frame stays on the stack, as the API entry
	 * does in ROCr (the unwind test names it). */
	__asm__ volatile("" ::: "memory");
	return r;
}

API hsa_status_t hsa_amd_memory_unlock(void *host)
{
	logf_("hsa_amd_memory_unlock");
	if (!inited)
		return NOT_INITIALIZED;
	(void)host;
	return OK;
}
