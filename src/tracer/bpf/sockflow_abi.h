/* What sockflow.bpf.c leaves in its maps for src/tracer/sockflow.c: the
 * layouts both sides share (fixed-width members only: the BPF side is
 * built by clang for the BPF target, the reader by the host compiler). */
#ifndef GP_SOCKFLOW_ABI_H
#define GP_SOCKFLOW_ABI_H

#define GP_FLOW_MAX 65536      /* sockets counted at once */
#define GP_WATCH_MAX 65536     /* processes watched at once */

/* A socket used by a watched process: counted under the watched process
 * it belongs to (the "account": itself, or the watched ancestor it was
 * forked from, until gpuprobe registers it under its own pid). */
struct gp_flow_key {
	__u32 account;
	__u32 pad;
	__u64 ino;             /* the socket's inode: "socket:[ino]" in /proc/PID/fd */
};

struct gp_flow_val {
	__u64 tx, rx;          /* bytes that its send/write calls returned, and its recv/read calls */
	__u64 sends, recvs;    /* calls that moved bytes */
	/* Of tx and rx, what went through write/writev/sendfile and
	 * read/readv: the calls /proc/PID/io counts in wchar and rchar too
	 * (fs/read_write.c: add_wchar/add_rchar in vfs_write, vfs_read,
	 * do_sendfile), so that a socket's bytes are counted once, as the
	 * socket's (Go's net package writes sockets with write(2)). */
	__u64 io_tx, io_rx;
	__u64 io_writes, io_reads; /* those calls: io's syscw and syscr count them too */
	__u32 tgid;            /* the process that first used it */
	__u16 family;          /* AF_INET, AF_INET6, AF_UNIX... at first use */
	__u16 type;            /* SOCK_STREAM, SOCK_DGRAM... */
	__u16 lport, rport;    /* inet: local and remote port (host order) at first use */
	__u8 named;            /* unix: it has an address (the side a listener accepted) */
	__u8 pipe;             /* not a socket: a pipe or FIFO (only io_tx, io_rx mean anything) */
	__u8 pad2[2];
};

/* A watched process's connects: what failed, last how, and to what. */
struct gp_connfail {
	__u64 refused;         /* ECONNREFUSED */
	__u64 failed;          /* any other error: ETIMEDOUT, ENOENT, EHOSTUNREACH, EAGAIN... */
	__u64 ok;              /* connects that took (or went in progress and took) */
	__u64 last_ns;         /* bpf_ktime_get_ns() of the last failure */
	__s32 last_errno;
	__u16 family;          /* of the last failure's address */
	__u16 port;            /* host order */
	__u8 addr[16];         /* in_addr or in6_addr */
	char path[64];         /* AF_UNIX: sun_path (abstract: a leading '@') */
};

/* A watched process's non-blocking lock attempts that were refused
 * (fcntl F_SETLK/F_OFD_SETLK: EAGAIN or EACCES; flock LOCK_NB:
 * EWOULDBLOCK): a busy handler polling a lock another process holds. */
struct gp_lockfail {
	__u64 refused;
	__u64 last_ns;
	__u64 ino;             /* the last refused lock's file */
	__u32 dev;             /* its device, the kernel's encoding: major << 20 | minor */
	__s32 fd;              /* the descriptor it was asked on */
	__u8 is_flock;
	__u8 pad[7];
};

#endif
