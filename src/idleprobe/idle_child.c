/* The runtime side of gpuprobe idle: `gpuprobe __idle-child`, started by
 * the observer.  Opens a GPU context with the least work possible, says
 * so at each step on fd 3 and waits for the observer's nod on fd 4 (so
 * the observer can list the threads at each step), then sits idle until
 * killed.  A process cannot unwind itself with ptrace, and the observer
 * must stay out of the measurement: hence a child.
 *
 * HSA: hsa_init; find a GPU agent; create a signal and register an async
 * handler on it (older ROCr starts its async-events thread lazily there;
 * ROCm >= 7.2 starts both threads inside hsa_init: seed 000).
 * CUDA: cuInit, the primary context with the --cuda-sched flags.
 * Protocol, one line each: "info KEY VALUE", "phase NAME", "ready",
 * "error TEXT". */
#include "config.h"
#include "dl.h"
#include "commands.h"
#include "error.h"
#include "gpu.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[1600];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof line - 2)
		n = (int)sizeof line - 2;
	for (int i = 0; i < n; i++)
		if (line[i] == '\n')
			line[i] = ' ';
	line[n++] = '\n';
	if (write(3, line, (size_t)n) < 0)
		_exit(1);
}

/* "phase NAME", then wait for the observer to have listed the threads. */
static void phase(const char *name)
{
	say("phase %s", name);
	char b;
	while (read(4, &b, 1) < 0 && errno == EINTR)
		;
}

/* ---- HSA ------------------------------------------------------------- */

typedef int hsa_status_t;
static bool on_signal(long long value, void *arg)
{
	(void)value;
	(void)arg;
	return true;
}

static int idle_hsa(const char *lib, bool touch)
{
	struct gp_gpu g;
	phase("before-context");
	if (gp_gpu_open(&g, GP_RT_HSA, lib) < 0) {
		say("error %s%s%s", g.err, g.hint[0] ? "; hint: " : "", g.hint);
		return 1;
	}
	say("info lib %s", g.lib);
	say("info version %s", g.version);
	say("info build %s", g.build);
	phase("context");
	/* hsa.h: hsa_signal_create(int64_t, uint32_t, const hsa_agent_t*, hsa_signal_t*);
	 * hsa_ext_amd.h: hsa_amd_signal_async_handler(hsa_signal_t,
	 * hsa_signal_condition_t, hsa_signal_value_t, hsa_amd_signal_handler, void*). */
	hsa_status_t (*sig_create)(int64_t, uint32_t, const void *, uint64_t *) =
		(hsa_status_t (*)(int64_t, uint32_t, const void *, uint64_t *))dlsym(g.dl, "hsa_signal_create");
	hsa_status_t (*async)(uint64_t, int, int64_t, bool (*)(long long, void *), void *) =
		(hsa_status_t (*)(uint64_t, int, int64_t, bool (*)(long long, void *), void *))
			dlsym(g.dl, "hsa_amd_signal_async_handler");
	uint64_t sig = 0;
	if (!sig_create || !async) {
		say("info handler not registered: the runtime lacks hsa_signal_create or hsa_amd_signal_async_handler");
	} else if (sig_create(1, 0, NULL, &sig) != 0) {
		say("info handler not registered: hsa_signal_create failed");
	} else {
		/* HSA_SIGNAL_CONDITION_EQ = 0: fires when the signal reads 0,
		 * which nothing ever sets: the handler only waits. */
		int64_t st = async(sig, 0, 0, on_signal, NULL);
		if (st != 0) {
			char name[128];
			gp_gpu_status_name(&g, st, name, sizeof name);
			say("info handler not registered: hsa_amd_signal_async_handler: %s", name);
		}
	}
	phase("handler");
	if (touch)
		say("info --touch: no queue is created for HSA here; the context and the handler are the work");
	say("ready");
	for (;;)
		pause();
}

/* ---- CUDA -------------------------------------------------------------- */

typedef int CUresult;

/* A kernel that spins on the clock for `cycles`: the positive control.
 * PTX, JIT-compiled by the driver for whatever GPU is there. */
static const char spin_ptx[] =
	".version 7.0\n.target sm_50\n.address_size 64\n"
	".visible .entry gp_spin(.param .u64 cycles)\n{\n"
	"  .reg .u64 %rd<5>;\n  .reg .pred %p;\n"
	"  ld.param.u64 %rd1, [cycles];\n  mov.u64 %rd2, %clock64;\n"
	"LOOP:\n  mov.u64 %rd3, %clock64;\n  sub.u64 %rd4, %rd3, %rd2;\n"
	"  setp.lt.u64 %p, %rd4, %rd1;\n  @%p bra LOOP;\n  ret;\n}\n";

#define CU(sym) dlsym(dl, sym)

static int idle_cuda(const char *lib, const char *sched, bool touch, bool busy)
{
	phase("before-context");
	void *dl = gp_dlopen(lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		say("error %s: cannot load: %s", lib ? lib : "libcuda.so.1", gp_dlerror());
		return 1;
	}
	CUresult (*init)(unsigned) = (CUresult (*)(unsigned))CU("cuInit");
	CUresult (*dev_get)(int *, int) = (CUresult (*)(int *, int))CU("cuDeviceGet");
	CUresult (*set_flags)(int, unsigned) = (CUresult (*)(int, unsigned))CU("cuDevicePrimaryCtxSetFlags_v2");
	if (!set_flags)
		set_flags = (CUresult (*)(int, unsigned))CU("cuDevicePrimaryCtxSetFlags");
	CUresult (*retain)(void **, int) = (CUresult (*)(void **, int))CU("cuDevicePrimaryCtxRetain");
	CUresult (*set_cur)(void *) = (CUresult (*)(void *))CU("cuCtxSetCurrent");
	CUresult (*drv)(int *) = (CUresult (*)(int *))CU("cuDriverGetVersion");
	CUresult (*errname)(CUresult, const char **) = (CUresult (*)(CUresult, const char **))CU("cuGetErrorName");
	if (!init || !dev_get || !retain || !set_cur) {
		say("error %s does not export the CUDA driver API (cuInit, cuDevicePrimaryCtxRetain...)",
		    lib ? lib : "libcuda.so.1");
		return 1;
	}
	char path[1024] = "";
	Dl_info di;
	if (dladdr((void *)init, &di) && di.dli_fname)
		snprintf(path, sizeof path, "%s", di.dli_fname);
	say("info lib %s", path[0] ? path : lib ? lib : "libcuda.so.1");
	int v = 0;
	if (drv && drv(&v) == 0)
		say("info version CUDA driver API %d.%d", v / 1000, v % 1000 / 10);
	CUresult r = init(0);
	int dev = 0;
	void *ctx = NULL;
	if (r == 0)
		r = dev_get(&dev, 0);
	/* CU_CTX_SCHED_AUTO 0, SPIN 1, YIELD 2, BLOCKING_SYNC 4 (cuda.h). */
	unsigned flags = !strcmp(sched, "spin") ? 1 : !strcmp(sched, "yield") ? 2
			 : !strcmp(sched, "blocking") ? 4 : 0;
	if (r == 0 && set_flags)
		r = set_flags(dev, flags);
	if (r == 0)
		r = retain(&ctx, dev);
	if (r == 0)
		r = set_cur(ctx);
	if (r != 0) {
		const char *name = NULL;
		if (errname)
			errname(r, &name);
		say("error CUDA context: %s (%d)", name ? name : "?", r);
		return 1;
	}
	say("info build sched=%s", sched);
	phase("context");
	if (touch || busy) {
		CUresult (*alloc)(unsigned long long *, size_t) =
			(CUresult (*)(unsigned long long *, size_t))CU("cuMemAlloc_v2");
		CUresult (*memset8)(unsigned long long, unsigned char, size_t) =
			(CUresult (*)(unsigned long long, unsigned char, size_t))CU("cuMemsetD8_v2");
		CUresult (*sync)(void) = (CUresult (*)(void))CU("cuCtxSynchronize");
		unsigned long long p;
		if (alloc && memset8 && sync && alloc(&p, 1 << 20) == 0)
			memset8(p, 0, 1 << 20), sync();
	}
	phase("handler");
	say("ready");
	if (busy) {
		/* Keep a kernel running and wait for it: with sched=spin the
		 * waiting host thread spins (the positive control). */
		CUresult (*load)(void **, const void *) = (CUresult (*)(void **, const void *))CU("cuModuleLoadData");
		CUresult (*getf)(void **, void *, const char *) =
			(CUresult (*)(void **, void *, const char *))CU("cuModuleGetFunction");
		CUresult (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				   unsigned, void *, void **, void **) =
			(CUresult (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				      unsigned, void *, void **, void **))CU("cuLaunchKernel");
		CUresult (*sync)(void) = (CUresult (*)(void))CU("cuCtxSynchronize");
		void *mod, *fn;
		if (!load || !getf || !launch || !sync || load(&mod, spin_ptx) || getf(&fn, mod, "gp_spin")) {
			say("error cannot load the spin kernel (cuModuleLoadData)");
			return 1;
		}
		unsigned long long cycles = 500000000ull; /* ~0.25-0.5 s a launch */
		void *args[] = { &cycles };
		for (;;) {
			if (launch(fn, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL) || sync())
				return 1;
		}
	}
	for (;;)
		pause();
}

int cmd_idle_child(int argc, char **argv, const struct gp_global *g)
{
	(void)g;
	const char *rt = "hsa", *lib = NULL, *sched = "auto";
	bool touch = false, busy = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runtime") && i + 1 < argc)
			rt = argv[++i];
		else if (!strcmp(argv[i], "--lib") && i + 1 < argc)
			lib = argv[++i];
		else if (!strcmp(argv[i], "--cuda-sched") && i + 1 < argc)
			sched = argv[++i];
		else if (!strcmp(argv[i], "--touch"))
			touch = true;
		else if (!strcmp(argv[i], "--busy-kernel"))
			busy = true;
		else if (!strcmp(argv[i], "--no-interrupts"))
			/* Before the runtime loads: ROCr reads it at hsa_init. */
			setenv("HSA_ENABLE_INTERRUPT", "0", 1);
	}
	/* exec of /proc/self/exe names us "exe"; the runtime's threads
	 * inherit this name unless they set their own. */
	prctl(PR_SET_NAME, "gpuprobe-idle");
	if (fcntl(3, F_GETFD) < 0 || fcntl(4, F_GETFD) < 0) {
		gp_err("__idle-child", "runs only under gpuprobe idle");
		return GP_EXIT_USAGE;
	}
	return !strcmp(rt, "cuda") ? idle_cuda(lib, sched, touch, busy) : idle_hsa(lib, touch);
}
