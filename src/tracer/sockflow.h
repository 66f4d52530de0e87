/* The kernel's count of what watched processes move through their
 * sockets, and of their connects that fail (src/tracer/bpf/sockflow.bpf.c,
 * issue 32): what /proc and NETLINK_SOCK_DIAG cannot see -- send/recv
 * bytes (not in /proc/PID/io), connections that open and close between
 * two samples, connects refused inside a retry loop.
 *
 * One per gpuprobe process, opened at the first ask: loading BPF needs
 * root (or CAP_BPF with CAP_PERFMON) and a kernel with BTF; where it
 * cannot load, every call answers "none" and gp_sockflow_why says why
 * (sockets.c then counts TCP bytes from tcp_info, as before).
 * GPUPROBE_BPF=off turns it off. */
#ifndef GP_SOCKFLOW_H
#define GP_SOCKFLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One socket a watched process used, as of the last refresh: its bytes
 * are cumulative from the socket's first counted call; gen changes when
 * the counters restarted (an idle socket forgotten, then used again). */
struct gp_flowent {
	uint64_t ino;          /* "socket:[ino]" */
	int account;           /* the watched process it counts under */
	int tgid;              /* the process that first used it (a forked child's own pid) */
	uint64_t tx, rx;
	uint64_t io_tx, io_rx; /* of them, by write/read (also in /proc/PID/io) */
	uint64_t io_writes, io_reads; /* and in how many calls (syscw, syscr) */
	uint64_t gen;
	uint16_t family, type; /* AF_*, SOCK_* */
	uint16_t lport, rport; /* inet: local and remote port, host order */
	bool named;            /* unix: the side with an address (accepted from a listener) */
	bool pipe;             /* a pipe or FIFO: its read()/write() bytes, no socket */
};

/* A watched process's connects (and its forked children's, until each
 * is watched under its own pid), cumulative. */
struct gp_connects {
	uint64_t refused, failed, ok;
	int last_errno;        /* of the last failure */
	char to[80];           /* where the last failure went: "127.0.0.1:8000", "[::1]:80", "/run/x.sock" */
};

/* The shared instance, or NULL where BPF cannot be used. */
struct gp_sockflow *gp_sockflow_get(void);
/* Why there is none ("" when there is one, or none was asked for yet). */
const char *gp_sockflow_why(void);

/* Counts pid's socket calls (and its children's, forked from now on)
 * under pid; false when the map is full. */
bool gp_sockflow_watch(struct gp_sockflow *f, int pid);
void gp_sockflow_unwatch(struct gp_sockflow *f, int pid);

/* account's sockets as of tick t (the map is read again when t is not
 * the last read's), copied into *buf (grown as needed, *cap entries;
 * the caller frees it); how many. */
size_t gp_sockflow_of(struct gp_sockflow *f, double t, int account, struct gp_flowent **buf,
		      size_t *cap);

/* account's connects; false when it made none. */
bool gp_sockflow_connects(struct gp_sockflow *f, int account, struct gp_connects *out);

/* A watched process's non-blocking lock attempts refused (fcntl F_SETLK,
 * flock LOCK_NB), cumulative, and the last one's file. */
struct gp_lockrefused {
	uint64_t refused;
	unsigned major, minor;
	uint64_t ino;
	int fd;
	bool is_flock;
};

/* account's refused locks; false when none was refused. */
bool gp_sockflow_locks(struct gp_sockflow *f, int account, struct gp_lockrefused *out);

/* For benchmarks and the result's header: reads, entries, flows not
 * counted because the map was full, and ms spent reading. */
void gp_sockflow_cost(const struct gp_sockflow *f, unsigned long *reads, unsigned long *entries,
		      unsigned long *dropped, double *ms);

#endif
