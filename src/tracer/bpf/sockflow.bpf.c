/* Bytes a watched process moves through its sockets, and its connects
 * that fail: what /proc cannot tell (issue 32).  /proc/PID/io counts
 * read() and write() only, and NETLINK_SOCK_DIAG sees a socket only while
 * it lives: a connection opened, answered and closed between two samples
 * (HTTP/1.0, a client per request) left no trace, and neither did a
 * connect refused inside a retry loop.
 *
 * One raw tracepoint at every system call's exit (sys_exit: its args are
 * the task's pt_regs and the return value, include/trace/events/syscalls.h),
 * filtered first by syscall number, then by the watched processes' map.
 * A call that moved n > 0 bytes adds n to its socket's counters; the
 * socket is the file at the call's fd in the task's fd table, kept only
 * when its inode is a socket's (S_IFSOCK) -- or, for read/write, a
 * pipe's (S_IFIFO: pipe_flow).  x86_64 numbers
 * (arch/x86/entry/syscalls/syscall_64.tbl); at sys_exit pt_regs still
 * holds the call's arguments (di, si, dx, r10, r8) and orig_ax its number.
 *
 * It observes and changes nothing: tracepoint programs cannot alter a
 * call's result. */
#include "kernel.h"
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "sockflow_abi.h"

char LICENSE[] SEC("license") = "GPL";

#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define S_IFMT 0170000
#define S_IFSOCK 0140000
#define S_IFIFO 0010000
#define EINTR 4
#define EAGAIN 11
#define EISCONN 106
#define EALREADY 114
#define EINPROGRESS 115
#define ECONNREFUSED 111
#define SOL_SOCKET 1
#define SO_ERROR 4

enum {
	NR_READ = 0, NR_WRITE = 1, NR_READV = 19, NR_WRITEV = 20, NR_SENDFILE = 40,
	NR_CONNECT = 42, NR_SENDTO = 44, NR_RECVFROM = 45, NR_SENDMSG = 46, NR_RECVMSG = 47,
	NR_GETSOCKOPT = 55, NR_FCNTL = 72, NR_FLOCK = 73, NR_RECVMMSG = 299, NR_SENDMMSG = 307,
};

#define F_SETLK 6
#define F_OFD_SETLK 37
#define LOCK_NB 4
#define EACCES 13

/* tgid -> account (see sockflow_abi.h) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GP_WATCH_MAX);
	__type(key, __u32);
	__type(value, __u32);
} watched SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GP_FLOW_MAX);
	__type(key, struct gp_flow_key);
	__type(value, struct gp_flow_val);
} flows SEC(".maps");

/* account -> its connects */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GP_WATCH_MAX);
	__type(key, __u32);
	__type(value, struct gp_connfail);
} connects SEC(".maps");

/* account -> its refused lock attempts */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GP_WATCH_MAX);
	__type(key, __u32);
	__type(value, struct gp_lockfail);
} lockfails SEC(".maps");

__u64 dropped = 0;     /* flows not counted: the map was full */
__u64 seen = 0;        /* calls counted */

/* The calling task's open file at fd, 0 when fd is none (fs/file.c:
 * files->fdt->fd[fd], bounded by max_fds). */
static struct file *file_at(int fd)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	if (!fdt || fd < 0 || (unsigned)fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *f = 0;
	if (bpf_probe_read_kernel(&f, sizeof f, &fds[fd]))
		return 0;
	return f;
}

static struct socket *socket_at(int fd, __u64 *ino)
{
	struct file *f = file_at(fd);
	if (!f)
		return 0;
	struct inode *in = BPF_CORE_READ(f, f_inode);
	if ((BPF_CORE_READ(in, i_mode) & S_IFMT) != S_IFSOCK)
		return 0;
	*ino = BPF_CORE_READ(in, i_ino);
	return BPF_CORE_READ(f, private_data);
}

/* The pipe (or FIFO) at fd: its inode, 0 when fd is none. */
static __u64 pipe_at(int fd)
{
	struct file *f = file_at(fd);
	if (!f)
		return 0;
	struct inode *in = BPF_CORE_READ(f, f_inode);
	if ((BPF_CORE_READ(in, i_mode) & S_IFMT) != S_IFIFO)
		return 0;
	return BPF_CORE_READ(in, i_ino);
}

static struct gp_flow_val *new_flow(const struct gp_flow_key *k, const struct gp_flow_val *nv)
{
	bpf_map_update_elem(&flows, k, nv, BPF_NOEXIST);
	struct gp_flow_val *v = bpf_map_lookup_elem(&flows, k);
	if (!v)
		__sync_fetch_and_add(&dropped, 1);
	return v;
}

/* A pipe's bytes by read/write: where the process holds both its ends
 * (sockets.c decides, from its fds), they never leave it -- the Go
 * runtime's netpoller wakes itself with one byte through a pipe of its
 * own (go1.19 runtime/netpoll_epoll.go netpollBreak). */
static struct gp_flow_val *pipe_flow(__u32 account, __u32 tgid, int fd)
{
	__u64 ino = pipe_at(fd);
	if (!ino)
		return 0;
	struct gp_flow_key k = { .account = account, .ino = ino };
	struct gp_flow_val *v = bpf_map_lookup_elem(&flows, &k);
	if (v)
		return v;
	struct gp_flow_val nv = {};
	nv.tgid = tgid;
	nv.pipe = 1;
	return new_flow(&k, &nv);
}

static struct gp_flow_val *flow_of(__u32 account, __u32 tgid, int fd, bool io)
{
	__u64 ino = 0;
	struct socket *so = socket_at(fd, &ino);
	if (!so)
		return io ? pipe_flow(account, tgid, fd) : 0;
	struct gp_flow_key k = { .account = account, .ino = ino };
	struct gp_flow_val *v = bpf_map_lookup_elem(&flows, &k);
	if (v)
		return v;
	struct gp_flow_val nv = {};
	struct sock *sk = BPF_CORE_READ(so, sk);
	nv.tgid = tgid;
	nv.type = BPF_CORE_READ(so, type);
	nv.family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (nv.family == AF_INET || nv.family == AF_INET6) {
		nv.lport = BPF_CORE_READ(sk, __sk_common.skc_num);
		nv.rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	} else if (nv.family == AF_UNIX) {
		nv.named = BPF_CORE_READ((struct unix_sock *)sk, addr) != 0;
	}
	return new_flow(&k, &nv);
}

/* sendmmsg/recvmmsg return a count of messages: the bytes are each
 * mmsghdr's msg_len (struct mmsghdr: a 56-byte msghdr, then msg_len),
 * read for the first 8. */
static __u64 mmsg_bytes(unsigned long vec, long n)
{
	__u64 sum = 0;
	for (int i = 0; i < 8; i++) {
		if (i >= n)
			break;
		__u32 len = 0;
		if (bpf_probe_read_user(&len, sizeof len, (void *)(vec + (unsigned long)i * 64 + 56)))
			break;
		sum += len;
	}
	return sum;
}

static void record_fail(__u32 account, int err, struct socket *so, unsigned long uaddr, long ulen)
{
	struct gp_connfail *c = bpf_map_lookup_elem(&connects, &account);
	if (!c) {
		struct gp_connfail z = {};
		bpf_map_update_elem(&connects, &account, &z, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&connects, &account);
		if (!c)
			return;
	}
	if (err == 0) {
		__sync_fetch_and_add(&c->ok, 1);
		return;
	}
	if (err == ECONNREFUSED)
		__sync_fetch_and_add(&c->refused, 1);
	else
		__sync_fetch_and_add(&c->failed, 1);
	c->last_errno = err;
	c->last_ns = bpf_ktime_get_ns();
	__u16 fam = 0;
	if (uaddr && ulen >= 2 && !bpf_probe_read_user(&fam, sizeof fam, (void *)uaddr)) {
		/* connect's own address: what the program asked for */
		c->family = fam;
		if (fam == AF_INET && ulen >= 8) {
			__u16 port = 0;
			bpf_probe_read_user(&port, 2, (void *)(uaddr + 2));
			c->port = bpf_ntohs(port);
			bpf_probe_read_user(c->addr, 4, (void *)(uaddr + 4));
		} else if (fam == AF_INET6 && ulen >= 24) {
			__u16 port = 0;
			bpf_probe_read_user(&port, 2, (void *)(uaddr + 2));
			c->port = bpf_ntohs(port);
			bpf_probe_read_user(c->addr, 16, (void *)(uaddr + 8));
		} else if (fam == AF_UNIX) {
			c->path[0] = 0;
			bpf_probe_read_user_str(c->path, sizeof c->path, (void *)(uaddr + 2));
			if (!c->path[0] && ulen > 3) { /* abstract: "@name" */
				bpf_probe_read_user_str(c->path + 1, sizeof c->path - 1, (void *)(uaddr + 3));
				c->path[0] = '@';
			}
		}
		return;
	}
	if (!so)
		return;
	/* SO_ERROR after a non-blocking connect: the socket still holds
	 * where it went */
	struct sock *sk = BPF_CORE_READ(so, sk);
	c->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	c->port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (c->family == AF_INET) {
		__u32 a = BPF_CORE_READ(sk, __sk_common.skc_daddr);
		__builtin_memcpy(c->addr, &a, 4);
	} else if (c->family == AF_INET6) {
		BPF_CORE_READ_INTO(&c->addr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
	}
}

static void on_connect(__u32 account, struct pt_regs *regs, long ret)
{
	if (ret == -EINPROGRESS || ret == -EALREADY || ret == -EINTR || ret == -EISCONN)
		return; /* the answer comes later, through SO_ERROR or the next call */
	unsigned long uaddr = BPF_CORE_READ(regs, si);
	long ulen = (long)BPF_CORE_READ(regs, dx);
	__u64 ino;
	record_fail(account, ret < 0 ? (int)-ret : 0, socket_at((int)BPF_CORE_READ(regs, di), &ino),
		    ret < 0 ? uaddr : 0, ulen);
}

static void on_getsockopt(__u32 account, struct pt_regs *regs, long ret)
{
	if (ret != 0 || BPF_CORE_READ(regs, si) != SOL_SOCKET || BPF_CORE_READ(regs, dx) != SO_ERROR)
		return;
	int err = 0;
	if (bpf_probe_read_user(&err, sizeof err, (void *)BPF_CORE_READ(regs, r10)) || err <= 0)
		return; /* 0: no error pending, not an answer to a connect */
	__u64 ino;
	struct socket *so = socket_at((int)BPF_CORE_READ(regs, di), &ino);
	if (so && BPF_CORE_READ(so, type) == 1 /* SOCK_STREAM */)
		record_fail(account, err, so, 0, 0);
}

/* A non-blocking lock refused: fcntl(fd, F_SETLK or F_OFD_SETLK) failing
 * with EAGAIN or EACCES (fcntl(2): "the lock is held by another
 * process"), flock(fd, LOCK_NB) with EWOULDBLOCK.  Which file, by its
 * inode and device, that /proc/locks names its holder. */
static void on_lock(__u32 account, struct pt_regs *regs, long ret, bool is_flock)
{
	long cmd = (long)BPF_CORE_READ(regs, si);
	if (is_flock ? !(cmd & LOCK_NB) || ret != -EAGAIN
		     : (cmd != F_SETLK && cmd != F_OFD_SETLK) || (ret != -EAGAIN && ret != -EACCES))
		return;
	struct gp_lockfail *l = bpf_map_lookup_elem(&lockfails, &account);
	if (!l) {
		struct gp_lockfail z = {};
		bpf_map_update_elem(&lockfails, &account, &z, BPF_NOEXIST);
		l = bpf_map_lookup_elem(&lockfails, &account);
		if (!l)
			return;
	}
	__sync_fetch_and_add(&l->refused, 1);
	l->last_ns = bpf_ktime_get_ns();
	int fd = (int)BPF_CORE_READ(regs, di);
	l->fd = fd;
	l->is_flock = is_flock;
	struct file *f = file_at(fd);
	if (!f)
		return;
	struct inode *in = BPF_CORE_READ(f, f_inode);
	l->ino = BPF_CORE_READ(in, i_ino);
	l->dev = BPF_CORE_READ(in, i_sb, s_dev);
}

SEC("raw_tracepoint/sys_exit")
int gp_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	long ret = (long)ctx->args[1];
	long nr = (long)BPF_CORE_READ(regs, orig_ax);
	bool tx;
	switch (nr) {
	case NR_WRITE: case NR_WRITEV: case NR_SENDTO: case NR_SENDMSG: case NR_SENDMMSG:
	case NR_SENDFILE:
		tx = true;
		break;
	case NR_READ: case NR_READV: case NR_RECVFROM: case NR_RECVMSG: case NR_RECVMMSG:
		tx = false;
		break;
	case NR_CONNECT: case NR_GETSOCKOPT: case NR_FCNTL: case NR_FLOCK:
		tx = false;
		break;
	default:
		return 0;
	}
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 *acct = bpf_map_lookup_elem(&watched, &tgid);
	if (!acct)
		return 0;
	__u32 account = *acct;
	if (nr == NR_CONNECT) {
		on_connect(account, regs, ret);
		return 0;
	}
	if (nr == NR_GETSOCKOPT) {
		on_getsockopt(account, regs, ret);
		return 0;
	}
	if (nr == NR_FCNTL || nr == NR_FLOCK) {
		if (ret < 0)
			on_lock(account, regs, ret, nr == NR_FLOCK);
		return 0;
	}
	if (ret <= 0)
		return 0;
	int fd = (int)BPF_CORE_READ(regs, di); /* sendfile's too: out_fd */
	__u64 bytes = (__u64)ret;
	if (nr == NR_SENDMMSG || nr == NR_RECVMMSG)
		bytes = mmsg_bytes(BPF_CORE_READ(regs, si), ret);
	bool io = nr == NR_WRITE || nr == NR_WRITEV || nr == NR_SENDFILE || nr == NR_READ
		  || nr == NR_READV;
	struct gp_flow_val *v = flow_of(account, tgid, fd, io);
	if (!v)
		return 0;
	if (tx) {
		__sync_fetch_and_add(&v->tx, bytes);
		__sync_fetch_and_add(&v->sends, 1);
		if (io) {
			__sync_fetch_and_add(&v->io_tx, bytes);
			__sync_fetch_and_add(&v->io_writes, 1);
		}
	} else {
		__sync_fetch_and_add(&v->rx, bytes);
		__sync_fetch_and_add(&v->recvs, 1);
		if (io) {
			__sync_fetch_and_add(&v->io_rx, bytes);
			__sync_fetch_and_add(&v->io_reads, 1);
		}
	}
	__sync_fetch_and_add(&seen, 1);
	return 0;
}

/* A watched process's new child is watched under the same account from
 * its first instruction: a short-lived child (a curl of a retry loop)
 * would be gone before gpuprobe's next look.  args: parent, child
 * (include/trace/events/sched.h sched_process_fork). */
SEC("raw_tracepoint/sched_process_fork")
int gp_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	if (ctgid == ptgid)
		return 0; /* a thread */
	__u32 *acct = bpf_map_lookup_elem(&watched, &ptgid);
	if (acct)
		bpf_map_update_elem(&watched, &ctgid, acct, BPF_NOEXIST);
	return 0;
}

/* An inherited entry goes with its process (its pid may be reused by a
 * stranger); entries gpuprobe made (account == tgid) gpuprobe removes. */
SEC("raw_tracepoint/sched_process_exit")
int gp_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx->args[0];
	__u32 tgid = BPF_CORE_READ(t, tgid);
	if (BPF_CORE_READ(t, pid) != (int)tgid)
		return 0;
	__u32 *acct = bpf_map_lookup_elem(&watched, &tgid);
	if (acct && *acct != tgid)
		bpf_map_delete_elem(&watched, &tgid);
	return 0;
}
