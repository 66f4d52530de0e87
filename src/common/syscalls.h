/* Syscall numbers to names, per machine (tables generated at build time
 * from the kernel headers: src/common/gen-syscall-tables.sh), and a
 * readable form of the calls a stuck thread is usually in.
 *
 * A machine is uname(2)'s machine, as a result's header records it
 * (host.machine): the live paths name the calls of the machine they run
 * on (machine NULL), `report` those of the machine that was traced.  A
 * machine with no table gets no name: "syscall 16 (name unknown on
 * ppc64le)", never another machine's name for the number. */
#ifndef GP_SYSCALLS_H
#define GP_SYSCALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* uname(2)'s machine of the running system ("x86_64"), "" if unknown. */
const char *gp_syscall_this_machine(void);

/* True when syscall names are known for machine (NULL: this machine). */
bool gp_syscall_machine_known(const char *machine);

/* "ioctl", or NULL for a number machine (NULL: this machine) does not
 * name, or a machine with no table. */
const char *gp_syscall_name_on(const char *machine, int64_t nr);
/* The same, on this machine. */
const char *gp_syscall_name(int64_t nr);

/* "ioctl(fd 3, 0xc0284b16 AMDKFD_IOC_ALLOC_MEMORY_OF_GPU)",
 * "futex(0x7f..., FUTEX_WAIT_PRIVATE)", "read(fd 5)", "syscall 999",
 * "syscall 16 (name unknown on ppc64le)" ...; machine NULL: this one. */
void gp_syscall_describe_on(char *buf, size_t cap, const char *machine, int64_t nr,
			    const uint64_t args[6]);
/* The same, on this machine. */
void gp_syscall_describe(char *buf, size_t cap, int64_t nr, const uint64_t args[6]);

#endif
