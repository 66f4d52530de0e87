#include "config.h"
#include "syscalls.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

struct sc_name {
	int nr;
	const char *name;
};

/* sc_x86_64, sc_generic64, sc_native: generated into the build directory
 * (src/common/gen-syscall-tables.sh); each ends with { -1, NULL } and is
 * empty where the build had no headers for it. */
#include "gp-syscall-tables.h"

static char this_machine[sizeof ((struct utsname *)0)->machine];

static void read_this_machine(void)
{
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(this_machine, sizeof this_machine, "%s", u.machine);
}

/* Once: the watchdog and the sampler may ask from their own threads. */
const char *gp_syscall_this_machine(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, read_this_machine);
	return this_machine;
}

/* The table of machine's numbering, or NULL.  aarch64, riscv64 and
 * loongarch64 number their calls by asm-generic/unistd.h (their uapi
 * asm/unistd.h includes it); the build's own table serves the machine the
 * build runs on when it is none of those. */
static const struct sc_name *table_of(const char *machine)
{
	static const char *const generic64[] = { "aarch64", "arm64", "riscv64", "loongarch64" };
	const struct sc_name *t = NULL;
	if (!machine)
		machine = gp_syscall_this_machine();
	if (!machine || !*machine)
		return NULL;
	if (!strcmp(machine, "x86_64") || !strcmp(machine, "amd64"))
		t = sc_x86_64;
	for (size_t i = 0; !t && i < sizeof generic64 / sizeof generic64[0]; i++)
		if (!strcmp(machine, generic64[i]))
			t = sc_generic64;
	if (!t && !strcmp(machine, gp_syscall_this_machine()))
		t = sc_native;
	return t && t[0].name ? t : NULL;
}

bool gp_syscall_machine_known(const char *machine)
{
	return table_of(machine) != NULL;
}

const char *gp_syscall_name_on(const char *machine, int64_t nr)
{
	const struct sc_name *t = table_of(machine);
	for (size_t i = 0; t && t[i].name; i++)
		if (t[i].nr == nr)
			return t[i].name;
	return NULL;
}

const char *gp_syscall_name(int64_t nr)
{
	return gp_syscall_name_on(NULL, nr);
}

/* ioctl requests worth naming in a GPU bug report.  Values from the
 * kernel's uapi/linux/kfd_ioctl.h (AMDKFD_IOWR('K', nr, struct)):
 * request = dir<<30 | size<<16 | 'K'<<8 | nr. */
static const struct {
	uint32_t req;
	const char *name;
} ioctls[] = {
	{ 0xc0284b16, "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU" },
	{ 0xc0104b17, "AMDKFD_IOC_FREE_MEMORY_OF_GPU" },
	{ 0xc0184b18, "AMDKFD_IOC_MAP_MEMORY_TO_GPU" },
	{ 0xc0184b19, "AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU" },
	{ 0xc0184b0c, "AMDKFD_IOC_WAIT_EVENTS" },
	{ 0xc0604b01, "AMDKFD_IOC_CREATE_QUEUE" },
};

static const char *ioctl_name(uint64_t req)
{
	for (size_t i = 0; i < sizeof ioctls / sizeof ioctls[0]; i++)
		if (ioctls[i].req == (uint32_t)req)
			return ioctls[i].name;
	return NULL;
}

void gp_syscall_describe_on(char *buf, size_t cap, const char *machine, int64_t nr,
			    const uint64_t a[6])
{
	const char *name = gp_syscall_name_on(machine, nr);
	if (!name) {
		const char *m = machine ? machine : gp_syscall_this_machine();
		if (gp_syscall_machine_known(machine))
			snprintf(buf, cap, "syscall %lld", (long long)nr);
		else if (*m)
			snprintf(buf, cap, "syscall %lld (name unknown on %s)", (long long)nr, m);
		else
			snprintf(buf, cap, "syscall %lld (name unknown: machine not recorded)",
				 (long long)nr);
		return;
	}
	if (!strcmp(name, "ioctl")) {
		const char *req = ioctl_name(a[1]);
		snprintf(buf, cap, "ioctl(fd %d, 0x%llx%s%s)", (int)a[0],
			 (unsigned long long)a[1], req ? " " : "", req ? req : "");
	} else if (!strcmp(name, "read") || !strcmp(name, "write") || !strcmp(name, "pread64")
		   || !strcmp(name, "pwrite64") || !strcmp(name, "fsync") || !strcmp(name, "fdatasync")
		   || !strcmp(name, "accept") || !strcmp(name, "accept4") || !strcmp(name, "recvfrom")
		   || !strcmp(name, "recvmsg") || !strcmp(name, "epoll_wait") || !strcmp(name, "epoll_pwait")) {
		snprintf(buf, cap, "%s(fd %d)", name, (int)a[0]);
	} else if (!strcmp(name, "futex")) {
		static const char *const ops[] = { "FUTEX_WAIT", "FUTEX_WAKE", "FUTEX_FD",
			"FUTEX_REQUEUE", "FUTEX_CMP_REQUEUE", "FUTEX_WAKE_OP", "FUTEX_LOCK_PI",
			"FUTEX_UNLOCK_PI", "FUTEX_TRYLOCK_PI", "FUTEX_WAIT_BITSET" };
		unsigned op = (unsigned)a[1] & 0x7f; /* without PRIVATE and CLOCK_REALTIME */
		snprintf(buf, cap, "futex(0x%llx, %s%s)", (unsigned long long)a[0],
			 op < sizeof ops / sizeof ops[0] ? ops[op] : "?",
			 (a[1] & 128) ? "_PRIVATE" : "");
	} else if (!strcmp(name, "madvise") || !strcmp(name, "mmap") || !strcmp(name, "munmap")
		   || !strcmp(name, "mlock") || !strcmp(name, "munlock") || !strcmp(name, "mprotect")) {
		snprintf(buf, cap, "%s(0x%llx, %llu MiB)", name, (unsigned long long)a[0],
			 (unsigned long long)(a[1] >> 20));
	} else {
		snprintf(buf, cap, "%s()", name);
	}
}

void gp_syscall_describe(char *buf, size_t cap, int64_t nr, const uint64_t a[6])
{
	gp_syscall_describe_on(buf, cap, NULL, nr, a);
}
