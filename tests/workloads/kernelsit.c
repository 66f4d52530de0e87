/* The shape of seed 004's pin: a thread that computes briefly, then sits
 * ~0.3 s inside one kernel call (mmap of SIZE MiB with MAP_POPULATE: the
 * kernel faults every page in before returning, as cuMemHostRegister and
 * hsa_amd_memory_lock do for 0.4-1.2 s), in a loop for SECONDS.  A
 * ptrace interrupt cannot stop it until that call returns.  Prints
 * "kernelsit: done N calls" and exits with STATUS, so that a test sees
 * the command finished by itself.
 *
 * Without SIZE_MIB the size is found at start: doubled from 64 MiB until
 * one call takes 0.25 s (at most 4 GiB), since page-fault speed differs
 * tenfold between machines (a VM's first touch of host memory).
 *
 *   kernelsit SECONDS [STATUS [SIZE_MIB]] */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One call that sits in the kernel while every page is faulted in. */
static int populate(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED) {
		perror("kernelsit: mmap");
		return -1;
	}
	munmap(p, len);
	return 0;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	int status = argc > 2 ? atoi(argv[2]) : 0;
	size_t mib = argc > 3 ? strtoul(argv[3], NULL, 10) : 0;
	if (!mib) {
		for (mib = 64; mib < 4096; mib *= 2) {
			double t0 = now();
			if (populate((size_t)mib << 20) < 0)
				return 2;
			if (now() - t0 >= 0.25)
				break;
		}
	}
	size_t len = mib << 20;
	fprintf(stderr, "kernelsit: %zu MiB a call\n", mib);
	double end = now() + secs;
	unsigned long calls = 0;
	volatile unsigned long x = 0;
	while (now() < end) {
		double spin_end = now() + 0.05;
		while (now() < spin_end)
			x++;
		if (populate(len) < 0)
			return 2;
		calls++;
	}
	printf("kernelsit: done %lu calls\n", calls);
	fflush(stdout);
	return status;
}
