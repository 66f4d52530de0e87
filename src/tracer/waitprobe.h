/* What a sleeping thread waits for (model/waits.h), read from outside:
 * its state, the syscall it sleeps in (/proc/TID/syscall: number and
 * arguments) and the kind of file behind the descriptor it waits on
 * (/proc/PID/fd/N, /proc/PID/fdinfo/EPFD for an epoll set, the pollfd
 * array or fd_set read with process_vm_readv).  Without permission for
 * the syscall file, wchan alone gives a coarser answer. */
#ifndef GP_WAITPROBE_H
#define GP_WAITPROBE_H

#include "procfs.h"
#include "tasks.h"
#include "waits.h"

struct gp_waitprobe;

struct gp_waitprobe *gp_waitprobe_new(const struct gp_root *root, int pid);
void gp_waitprobe_free(struct gp_waitprobe *w);
/* Forget the fds seen (a new sample: descriptors may have been reused). */
void gp_waitprobe_reset(struct gp_waitprobe *w);
enum gp_wait gp_waitprobe_classify(struct gp_waitprobe *w, const struct gp_thread *th);

#endif
