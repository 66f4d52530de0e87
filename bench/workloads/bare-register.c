/* The baseline for gpuprobe lock's "within 2%": the same registration
 * call, with nothing around it.  dlopen libcuda.so.1, primary context,
 * mmap FILE MAP_SHARED PROT_READ, pre-fault (MADV_POPULATE_READ), then
 * time cuMemHostRegister_v2(READ_ONLY) and cuMemHostUnregister.
 *   bare-register FILE [REPEAT]
 * Prints one line per repeat: "register_s=... unregister_s=... rc=..". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bare-register FILE [REPEAT]\n");
		return 64;
	}
	int repeat = argc > 2 ? atoi(argv[2]) : 1;
	void *dl = dlopen("libcuda.so.1", RTLD_NOW);
	if (!dl) {
		fprintf(stderr, "bare-register: %s\n", dlerror());
		return 1;
	}
	int (*cuInit)(unsigned) = (int (*)(unsigned))dlsym(dl, "cuInit");
	int (*cuDeviceGet)(int *, int) = (int (*)(int *, int))dlsym(dl, "cuDeviceGet");
	int (*retain)(void **, int) = (int (*)(void **, int))dlsym(dl, "cuDevicePrimaryCtxRetain");
	int (*setcur)(void *) = (int (*)(void *))dlsym(dl, "cuCtxSetCurrent");
	int (*reg)(void *, size_t, unsigned) = (int (*)(void *, size_t, unsigned))dlsym(dl, "cuMemHostRegister_v2");
	int (*unreg)(void *) = (int (*)(void *))dlsym(dl, "cuMemHostUnregister");
	if (!cuInit || !cuDeviceGet || !retain || !setcur || !reg || !unreg) {
		fprintf(stderr, "bare-register: libcuda.so.1 lacks an entry point\n");
		return 1;
	}
	int dev, r;
	void *ctx;
	double t0 = now();
	if ((r = cuInit(0)) || (r = cuDeviceGet(&dev, 0)) || (r = retain(&ctx, dev)) || (r = setcur(ctx))) {
		fprintf(stderr, "bare-register: CUDA set-up failed: %d\n", r);
		return 1;
	}
	printf("init_s=%.3f\n", now() - t0);
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(argv[1]);
		return 1;
	}
	size_t len = (size_t)st.st_size;
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	t0 = now();
	madvise(p, len, MADV_POPULATE_READ);
	double pf = now() - t0;
	printf("prefault_s=%.3f prefault_mib_s=%.0f\n", pf, len / 1048576.0 / pf);
	for (int i = 0; i < repeat; i++) {
		t0 = now();
		r = reg(p, len, 0x8 /* CU_MEMHOSTREGISTER_READ_ONLY */);
		double rs = now() - t0;
		double us = 0;
		if (r == 0) {
			t0 = now();
			unreg(p);
			us = now() - t0;
		}
		printf("register_s=%.4f unregister_s=%.4f rc=%d\n", rs, us, r);
	}
	return 0;
}
