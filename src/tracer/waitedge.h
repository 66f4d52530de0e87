/* On whom a sleeping thread waits (model/waitgraph.h), read from outside
 * and never stopping the target: the futex word and the mutex owner
 * through process_vm_readv, /proc/locks for a file lock's holder, the
 * relatives' /proc/PID/fd for a pipe's other end, TracerPid for who
 * stopped a process.  Each probe runs only for a thread in that kind of
 * wait, at most once a sample, bounded (the fds of 64 relatives, 1024
 * each). */
#ifndef GP_WAITEDGE_H
#define GP_WAITEDGE_H

#include "procfs.h"
#include "tasks.h"
#include "waits.h"
#include "waitgraph.h"

struct gp_waitedge;

/* The pid holding a lock on the file (maj:min, ino) in /proc/locks' text
 * (a waiter's "->" lines skipped; not self), 0 none; gp_lock_holder reads
 * /proc/locks and names the holder too. */
int gp_lock_holder_in(const char *locks, unsigned maj, unsigned min, uint64_t ino, int self);
int gp_lock_holder(const struct gp_root *root, unsigned maj, unsigned min, uint64_t ino, int self,
		   char *comm, size_t n);

struct gp_waitedge *gp_waitedge_new(const struct gp_root *root, int pid);
void gp_waitedge_free(struct gp_waitedge *e);
/* A new sample: forget what was read (locks, the tracer, peers). */
void gp_waitedge_reset(struct gp_waitedge *e, int ppid);
/* th's edge, given what it waits for (waitprobe.h); how GP_EDGE_NONE when
 * none can be read. */
void gp_waitedge_probe(struct gp_waitedge *e, const struct gp_thread *th, enum gp_wait wait,
		       struct gp_wait_edge *out);

#endif
