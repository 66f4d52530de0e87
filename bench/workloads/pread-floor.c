/* bench/workloads/pread-floor: the floor under gpuprobe's per-thread cost
 * on this machine: what one pread of each /proc/PID/task/TID file costs
 * with the fd kept open, and what a null system call costs.
 *
 *   pread-floor PID [ROUNDS]      (default 20 rounds)
 *
 * Opens stat, status, wchan, syscall (and stack, when readable) of every
 * thread of PID, then preads each file of each thread ROUNDS times and
 * prints CPU microseconds (user+sys, getrusage) per pread for each file. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static double cpu_now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec
	       + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PID [ROUNDS]\n", argv[0]);
		return 64;
	}
	int pid = atoi(argv[1]);
	int rounds = argc > 2 ? atoi(argv[2]) : 20;
	static const char *const files[] = { "stat", "status", "wchan", "syscall", "stack" };
	enum { NF = 5 };
	char path[320];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d) {
		perror(path);
		return 1;
	}
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	int *fds = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		fds = realloc(fds, (n + 1) * NF * sizeof *fds);
		for (int f = 0; f < NF; f++) {
			snprintf(path, sizeof path, "/proc/%d/task/%s/%s", pid, e->d_name, files[f]);
			fds[n * NF + f] = open(path, O_RDONLY | O_CLOEXEC);
		}
		n++;
	}
	closedir(d);
	static char buf[8192];
	printf("%zu threads, %d rounds: CPU us per call\n", n, rounds);
	for (int f = 0; f < NF; f++) {
		if (fds[f] < 0 || pread(fds[f], buf, sizeof buf, 0) < 0) {
			printf("  %-8s unreadable\n", files[f]);
			continue;
		}
		double t0 = cpu_now();
		for (int r = 0; r < rounds; r++)
			for (size_t i = 0; i < n; i++)
				if (pread(fds[i * NF + f], buf, sizeof buf, 0) < 0)
					return 1;
		printf("  pread %-8s %6.2f\n", files[f], (cpu_now() - t0) * 1e6 / (rounds * (double)n));
	}
	long calls = 200000;
	double t0 = cpu_now();
	for (long i = 0; i < calls; i++)
		syscall(SYS_getppid);
	printf("  null syscall   %6.2f (getppid)\n", (cpu_now() - t0) * 1e6 / calls);
	return 0;
}
