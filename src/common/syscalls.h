/* Syscall numbers to names, for this build's architecture (generated at
 * build time from <asm/unistd.h>), and a readable form of the calls a
 * stuck thread is usually in. */
#ifndef GP_SYSCALLS_H
#define GP_SYSCALLS_H

#include <stddef.h>
#include <stdint.h>

/* "ioctl", or NULL for an unknown number. */
const char *gp_syscall_name(int64_t nr);

/* "ioctl(fd 3, 0xc0284b16 AMDKFD_IOC_ALLOC_MEMORY_OF_GPU)",
 * "futex(0x7f..., FUTEX_WAIT_PRIVATE)", "read(fd 5)", "nr 999" ... */
void gp_syscall_describe(char *buf, size_t cap, int64_t nr, const uint64_t args[6]);

#endif
