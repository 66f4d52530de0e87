/* What a process moves through its sockets, and what waits in them
 * (issue 32: "progress is work answered").
 *
 * /proc/PID/io counts read() and write(), not send/recv/sendmsg/recvmsg:
 * 100 x 1 000 bytes by send() add 0 to wchar, so a server answering over
 * asyncio or ZMQ looked like it did nothing.  The kernel keeps byte
 * counters per TCP socket (struct tcp_info's tcpi_bytes_acked and
 * tcpi_bytes_received, include/uapi/linux/tcp.h, kernel >= 4.1/4.2),
 * handed out with the queue lengths by NETLINK_SOCK_DIAG
 * (net/ipv4/inet_diag.c, INET_DIAG_INFO); unix sockets have queue lengths
 * and their peer (net/unix/diag.c, UDIAG_SHOW_RQLEN, UDIAG_SHOW_PEER) but
 * no byte counters.
 *
 * One dump of the host's TCP and unix sockets a tick (shared by every
 * process of a trace), and per process its socket inodes from
 * /proc/PID/fd.  A process's tx/rx are cumulative and never go down: each
 * socket adds what moved since it was last read; a socket born since the
 * process's last read adds all it carried; bytes between two processes
 * of the trace (a loopback connection whose other end is theirs) are
 * counted once, as the answers of the end that accepted the connection
 * (a server and the load generator traced with it: the answers are work,
 * the requests are not).
 *
 * The dump is of gpuprobe's own network namespace: a process in another
 * one (a container with its own network) finds none of its sockets, and
 * reads have=false.  Connections opened and closed between two ticks are
 * not seen -- unless the kernel counts the process's calls
 * (sockflow.h: root, BTF, the host's pid namespace): then tx and rx are
 * the bytes its send/recv/read/write calls moved on stream sockets, live
 * or closed since, with the same rule for bytes inside the trace, and
 * its failed connects are counted too. */
#ifndef GP_SOCKETS_H
#define GP_SOCKETS_H

#include "procfs.h"

#include <stdbool.h>
#include <stdint.h>

struct gp_sock_totals {
	bool have;            /* at least one of its sockets was found in the dump */
	uint64_t tx, rx;      /* bytes sent (acked) and received on TCP; between two traced processes only the server's tx */
	uint64_t io_tx, io_rx; /* of its stream sockets' bytes, those its write()/read() moved (also
				* in /proc/PID/io's wchar/rchar), cumulative; where the kernel counts calls */
	uint64_t io_writes, io_reads; /* and in how many calls (io's syscw, syscr) */
	uint32_t conns;       /* connected stream sockets (TCP, unix) */
	uint32_t listeners;   /* listening sockets */
	uint32_t backlog;     /* connections waiting in its listeners' accept queues */
	uint64_t unread;      /* bytes waiting in its connected sockets, not read (Recv-Q) */
	uint64_t unsent;      /* bytes written, not yet taken by the peer (Send-Q) */
	/* TCP connections from outside the tree on which bytes came in and
	 * none went back since: requests read and not answered; and how
	 * long the oldest has waited, in seconds. */
	uint32_t pending;
	double pending_s;
	/* Its connects, where the kernel counts them (sockflow.h):
	 * cumulative refusals, other failures and successes; the last
	 * failure's errno and address. */
	uint64_t conn_refused, conn_failed, conn_ok;
	int conn_errno;
	char conn_to[80];
};

struct gp_sockets;        /* the host's sockets: one per trace */
struct gp_sockproc;       /* one process's sockets */

struct gp_sockets *gp_sockets_new(void);
void gp_sockets_free(struct gp_sockets *s);

struct gp_sockproc *gp_sockproc_new(struct gp_sockets *s, const struct gp_root *root, int pid);
void gp_sockproc_free(struct gp_sockproc *p);

/* The process's sockets at tick t (seconds): the host's dump is taken
 * again when t is not the last dump's.  False when none could be read. */
bool gp_sockproc_read(struct gp_sockproc *p, double t, struct gp_sock_totals *out);

/* Cost so far, for benchmarks: dumps taken, and their time in ms. */
void gp_sockets_cost(const struct gp_sockets *s, unsigned long *dumps, double *ms);

#endif
