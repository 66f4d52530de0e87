#include "config.h"
#include "waitedge.h"
#include "nsinfo.h"
#include "parse.h"
#include "syscalls.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

enum { MAX_RELATIVES = 64, MAX_FDS = 1024, PEER_CACHE = 8 };
enum { END_READER = 0, END_WRITER = 1, END_ANY = 2 };

struct gp_waitedge {
	const struct gp_root *root;
	int pid, ppid;
	bool tracer_read;
	int tracer;                  /* TracerPid of the process this sample */
	char tracer_comm[16];
	char *locks;                 /* /proc/locks this sample, NULL unread */
	bool locks_read;
	/* want: END_READER, END_WRITER (a pipe's end), END_ANY (a socket) */
	struct { uint64_t dev, ino; int want; int pid; char comm[16]; } peer[PEER_CACHE];
	int diag_fd;                 /* NETLINK_SOCK_DIAG, -1 none yet, -2 refused */
	size_t npeer;
	struct gp_nstids ns;         /* its thread ids and ours (a container's are its own) */
	/* Futex words read this sample, by address (words): the 10 000
	 * threads of a pool wait on one condition's word, and each was a
	 * process_vm_readv of its own (10 000 a first sample, perf
	 * 2026-12-06).  gen: the sample they were read in. */
	struct { uint64_t addr; uint32_t w[3]; uint8_t got; unsigned gen; } words[64];
	unsigned gen;
};

struct gp_waitedge *gp_waitedge_new(const struct gp_root *root, int pid)
{
	struct gp_waitedge *e = calloc(1, sizeof *e);
	if (e) {
		e->root = root;
		e->pid = pid;
		e->diag_fd = -1;
		gp_nstids_init(&e->ns, pid);
	}
	return e;
}

void gp_waitedge_free(struct gp_waitedge *e)
{
	if (!e)
		return;
	free(e->locks);
	if (e->diag_fd >= 0)
		close(e->diag_fd);
	gp_nstids_free(&e->ns);
	free(e);
}

void gp_waitedge_reset(struct gp_waitedge *e, int ppid)
{
	e->ppid = ppid;
	e->tracer_read = false;
	free(e->locks);
	e->locks = NULL;
	e->locks_read = false;
	e->npeer = 0;
	e->gen++; /* every word read again */
}

static void comm_of(const struct gp_root *root, int pid, char *buf, size_t cap)
{
	char p[64], c[32];
	snprintf(p, sizeof p, "proc/%d/comm", pid);
	buf[0] = '\0';
	if (gp_read_file(root, p, c, sizeof c) > 0) {
		c[strcspn(c, "\n")] = '\0';
		gp_strlcpy(buf, c, cap);
	}
}

static bool is_task(const struct gp_root *root, int pid, int tid)
{
	char p[64];
	struct stat st;
	snprintf(p, sizeof p, "proc/%d/task/%d", pid, tid);
	return tid > 0 && fstatat(root->dirfd, p, &st, 0) == 0;
}

/* ---- a stopped process: who stopped it ------------------------------ */

/* TracerPid (proc(5)): the pid of the process tracing it, 0 if none.  A
 * stop under a tracer is the tracer's (gdb); with none, a signal's. */
static void stopper(struct gp_waitedge *e, struct gp_wait_edge *out)
{
	if (!e->tracer_read) {
		e->tracer_read = true;
		e->tracer = 0;
		e->tracer_comm[0] = '\0';
		char p[64];
		snprintf(p, sizeof p, "/proc/%d/status", e->pid);
		char *text = gp_slurp(e->root, p, NULL);
		const char *t = text ? strstr(text, "\nTracerPid:") : NULL;
		if (t)
			e->tracer = (int)strtol(t + 11, NULL, 10);
		free(text);
		if (e->tracer > 0)
			comm_of(e->root, e->tracer, e->tracer_comm, sizeof e->tracer_comm);
	}
	out->how = GP_EDGE_STOPPED;
	out->id = e->tracer > 0 ? e->tracer : 0;
	gp_strlcpy(out->comm, e->tracer_comm, sizeof out->comm);
}

/* ---- futexes: a joined thread, a mutex's owner ---------------------- */

static bool read_mem(int pid, uint64_t addr, void *buf, size_t len)
{
	if (!addr || addr % 4)
		return false;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* The three words at a futex's address (glibc's mutex: lock, count,
 * owner), read once a sample: 3 read, 1 only the first (the word ends a
 * mapping), 0 none. */
static int futex_words(struct gp_waitedge *e, uint64_t addr, uint32_t w[3])
{
	size_t k = (size_t)((addr >> 2) * 0x9e3779b97f4a7c15ull >> 58);
	if (e->words[k].gen == e->gen + 1 && e->words[k].addr == addr) {
		memcpy(w, e->words[k].w, sizeof e->words[k].w);
		return e->words[k].got;
	}
	int got = 0;
	if (read_mem(e->pid, addr, w, 3 * sizeof w[0]))
		got = 3;
	else if (read_mem(e->pid, addr, w, sizeof w[0]))
		got = 1;
	if (got == 1)
		w[2] = 0;
	e->words[k].addr = addr;
	e->words[k].got = (uint8_t)got;
	memcpy(e->words[k].w, w, sizeof e->words[k].w);
	e->words[k].gen = e->gen + 1; /* 0 never matches a fresh table */
	return got;
}

/* A locked mutex whose owner field names no thread of the process: a
 * lock inherited held across fork (fork(2): "the child process is
 * created with a single thread"; the mutex's memory, owner tid and all,
 * is copied -- POSIX leaves its state to pthread_atfork handlers), or an
 * owner that exited holding it.  Read again after the owner was looked
 * for: an owner that unlocked and exited between the two reads changed
 * the word, and is no orphan.  The owner's process, where it still runs:
 * the parent's (the fork case). */
static void orphan_edge(struct gp_waitedge *e, uint64_t addr, const uint32_t w[3], int owner,
			bool ours, struct gp_wait_edge *out)
{
	uint32_t again[3];
	if (!read_mem(e->pid, addr, again, sizeof again) || again[0] != w[0] || again[2] != w[2])
		return;
	out->how = GP_EDGE_ORPHAN;
	out->id = owner;
	if (ours && e->ppid > 1 && is_task(e->root, e->ppid, owner)) {
		out->of = e->ppid;
		char p[64], buf[64];
		snprintf(p, sizeof p, "proc/%d/comm", e->ppid);
		if (gp_read_file(e->root, p, buf, sizeof buf) > 0) {
			buf[strcspn(buf, "\n")] = '\0';
			gp_strlcpy(out->comm, buf, sizeof out->comm);
		}
	}
}

/* futex(2): FUTEX_PRIVATE_FLAG is 128; FUTEX_LOCK_PI (6) and
 * FUTEX_LOCK_PI2 (13) keep the owner's tid in the word itself, under
 * FUTEX_TID_MASK (0x3fffffff).
 *
 * glibc's pthread_join (nptl/pthread_join_common.c,
 * __pthread_clockjoin_ex) waits while the joined thread's `tid` word is
 * not 0: `__futex_abstimed_wait_cancelable64 ((unsigned int *)
 * &pd->tid, tid, ...)` -- the word it sleeps on holds the joined
 * thread's tid, which the kernel clears at its exit (CLONE_CHILD_CLEARTID).
 *
 * glibc's mutex (sysdeps/nptl/bits/struct_mutex.h, struct
 * __pthread_mutex_s): `int __lock; unsigned int __count; int __owner;`
 * -- on x86-64 and aarch64 the owner's tid is at offset 8 of the word the
 * waiter sleeps on (__lock: 0 free, 1 locked, 2 locked with waiters).
 *
 * Each of these tids is the target's own: in a container, its pid
 * namespace's (issue 28), turned into ours through NSpid (nsinfo.h) before
 * it names a task. */
static void futex_edge(struct gp_waitedge *e, const struct gp_thread *th, struct gp_wait_edge *out)
{
	const uint64_t *a = th->sc.args;
	unsigned cmd = (unsigned)a[1] & 0x7f;
	out->how = GP_EDGE_FUTEX;
	out->shared = !(a[1] & 128);
	if (!e->root->live)
		return;
	uint32_t w[3] = { 0, 0, 0 };
	if (!futex_words(e, a[0], w))
		return;
	if (cmd == 6 || cmd == 13) {
		int owner = gp_nstids_ours(&e->ns, (long)(w[0] & 0x3fffffffu));
		if (owner > 0 && owner != th->tid && is_task(e->root, e->pid, owner)) {
			out->how = GP_EDGE_MUTEX;
			out->id = owner;
		}
		return;
	}
	if (cmd != 0 && cmd != 9)
		return;
	/* The word is a live thread of this process: a join. */
	int joined = w[0] > 2 && w[0] <= 0x3fffffffu ? gp_nstids_ours(&e->ns, (long)w[0]) : 0;
	if (joined > 0 && joined != th->tid && is_task(e->root, e->pid, joined)) {
		out->how = GP_EDGE_JOIN;
		out->id = joined;
		return;
	}
	int raw = (w[0] == 1 || w[0] == 2) && (int)w[2] > 0 ? (int)w[2] : 0;
	int owner = raw ? gp_nstids_ours(&e->ns, raw) : 0;
	if (owner > 0 && owner != th->tid
	    && is_task(e->root, e->pid, owner)) {
		out->how = GP_EDGE_MUTEX;
		out->id = owner;
		return;
	}
	/* ours: in a pid namespace of its own, an id no task of it has
	 * cannot be turned into ours (nsinfo.h); the raw id is then named as
	 * its own, and not looked for in its parent */
	bool own_ns = e->ns.other == 1;
	if (raw && owner != th->tid)
		orphan_edge(e, a[0], w, owner > 0 ? owner : raw, !own_ns || owner > 0, out);
}

/* ---- file locks: /proc/locks ---------------------------------------- */

/* fs/locks.c (lock_get_status) writes one line a lock,
 *   "1: FLOCK  ADVISORY  WRITE 4242 08:02:1311 0 EOF"
 * and one a waiter, with "->" before its type; the device is
 * MAJOR:MINOR in hex, then the inode.  The holder of the file's lock is
 * the first line that is no waiter's. */
int gp_lock_holder_in(const char *locks, unsigned maj, unsigned min, uint64_t ino, int self)
{
	char want[64];
	snprintf(want, sizeof want, "%02x:%02x:%llu", maj, min, (unsigned long long)ino);
	for (const char *line = locks; line && *line;) {
		const char *eol = strchr(line, '\n');
		char l[256];
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		if (len >= sizeof l)
			len = sizeof l - 1;
		memcpy(l, line, len);
		l[len] = '\0';
		line = eol ? eol + 1 : NULL;
		if (strstr(l, "->"))
			continue;
		char type[16], dev[64];
		int pid;
		if (sscanf(l, "%*d: %15s %*s %*s %d %63s", type, &pid, dev) != 3)
			continue;
		if (strcmp(dev, want) || pid <= 0 || pid == self)
			continue;
		return pid;
	}
	return 0;
}

int gp_lock_holder(const struct gp_root *root, unsigned maj, unsigned min, uint64_t ino, int self,
		   char *comm, size_t n)
{
	char *locks = gp_slurp(root, "/proc/locks", NULL);
	int pid = locks ? gp_lock_holder_in(locks, maj, min, ino, self) : 0;
	free(locks);
	if (pid)
		comm_of(root, pid, comm, n);
	return pid;
}

static void lock_edge(struct gp_waitedge *e, long fd, bool is_flock, struct gp_wait_edge *out)
{
	out->how = is_flock ? GP_EDGE_FLOCK : GP_EDGE_POSIX;
	char p[64];
	struct stat st;
	snprintf(p, sizeof p, "proc/%d/fd/%ld", e->pid, fd);
	if (fd < 0 || fstatat(e->root->dirfd, p, &st, 0) != 0)
		return;
	if (!e->locks_read) {
		e->locks_read = true;
		e->locks = gp_slurp(e->root, "/proc/locks", NULL);
	}
	if (!e->locks)
		return;
	int pid = gp_lock_holder_in(e->locks, major(st.st_dev), minor(st.st_dev), st.st_ino, e->pid);
	if (pid) {
		out->id = pid;
		comm_of(e->root, pid, out->comm, sizeof out->comm);
	}
}

/* ---- pipes: the process at the other end ----------------------------- */

static bool fd_identity(const struct gp_root *root, int pid, long fd, mode_t type,
			uint64_t *dev, uint64_t *ino)
{
	char p[64];
	struct stat st;
	snprintf(p, sizeof p, "proc/%d/fd/%ld", pid, fd);
	if (fstatat(root->dirfd, p, &st, 0) != 0 || (st.st_mode & S_IFMT) != type)
		return false;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return true;
}

/* The access mode of pid's fd (fdinfo "flags:", octal): O_RDONLY 0,
 * O_WRONLY 1, O_RDWR 2. */
static int fd_mode(const struct gp_root *root, int pid, const char *fd)
{
	char p[320], buf[256];
	snprintf(p, sizeof p, "proc/%d/fdinfo/%s", pid, fd);
	if (gp_read_file(root, p, buf, sizeof buf) <= 0)
		return -1;
	const char *f = strstr(buf, "flags:");
	return f ? (int)(strtoul(f + 6, NULL, 8) & 3) : -1;
}

static char proc_state(const struct gp_root *root, int pid)
{
	char p[64], buf[512];
	snprintf(p, sizeof p, "proc/%d/stat", pid);
	if (gp_read_file(root, p, buf, sizeof buf) <= 0)
		return '?';
	const char *r = strrchr(buf, ')');
	return r && r[1] == ' ' ? r[2] : '?';
}

/* Does pid hold the pipe (dev, ino) open for the wanted end (END_ANY:
 * at all, a socket)? */
static bool holds_end(const struct gp_root *root, int pid, uint64_t dev, uint64_t ino, int want)
{
	char p[64];
	snprintf(p, sizeof p, "proc/%d/fd", pid);
	int dfd = openat(root->dirfd, p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return false;
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return false;
	}
	bool found = false;
	unsigned seen = 0;
	struct dirent *de;
	while (!found && (de = readdir(d)) && seen++ < MAX_FDS) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		struct stat st;
		if (fstatat(dfd, de->d_name, &st, 0) != 0 || st.st_dev != dev || st.st_ino != ino)
			continue;
		if (want == END_ANY) {
			found = true;
			break;
		}
		int m = fd_mode(root, pid, de->d_name);
		found = m == 2 || (want == END_WRITER ? m == 1 : m == 0);
	}
	closedir(d);
	return found;
}

/* The relatives a pipe usually joins: the parent, its children (this
 * process's siblings: a shell's pipeline), and this process's children
 * (/proc/PID/task/TID/children, CONFIG_PROC_CHILDREN). */
static size_t relatives(struct gp_waitedge *e, int *out, size_t cap)
{
	size_t n = 0;
	if (e->ppid > 1)
		out[n++] = e->ppid;
	int parents[2] = { e->ppid, e->pid };
	for (int k = 0; k < 2; k++) {
		if (parents[k] <= 1)
			continue;
		char p[64], buf[1024];
		snprintf(p, sizeof p, "proc/%d/task/%d/children", parents[k], parents[k]);
		if (gp_read_file(e->root, p, buf, sizeof buf) <= 0)
			continue;
		for (char *s = buf, *end; n < cap; s = end) {
			long v = strtol(s, &end, 10);
			if (end == s)
				break;
			if (v > 0 && v != e->pid)
				out[n++] = (int)v;
		}
	}
	return n;
}

/* The relative holding (dev, ino) -- a pipe's wanted end, or a socket --
 * into out (how already set): a stopped holder first, the one the others
 * wait behind.  Cached for the sample. */
static void peer_of(struct gp_waitedge *e, uint64_t dev, uint64_t ino, int want,
		    struct gp_wait_edge *out)
{
	for (size_t i = 0; i < e->npeer; i++)
		if (e->peer[i].dev == dev && e->peer[i].ino == ino && e->peer[i].want == want) {
			out->id = e->peer[i].pid;
			gp_strlcpy(out->comm, e->peer[i].comm, sizeof out->comm);
			return;
		}
	int rel[MAX_RELATIVES];
	size_t nrel = relatives(e, rel, MAX_RELATIVES);
	int best = 0;
	for (size_t i = 0; i < nrel; i++) {
		if (!holds_end(e->root, rel[i], dev, ino, want))
			continue;
		char s = proc_state(e->root, rel[i]);
		if (!best || s == 'T' || s == 't')
			best = rel[i];
		if (s == 'T' || s == 't')
			break;
	}
	out->id = best;
	if (best)
		comm_of(e->root, best, out->comm, sizeof out->comm);
	if (e->npeer < PEER_CACHE)
		e->peer[e->npeer++] = (typeof(e->peer[0])){ dev, ino, want, best, "" };
	if (e->npeer && best)
		gp_strlcpy(e->peer[e->npeer - 1].comm, out->comm, sizeof e->peer[0].comm);
}

static void pipe_edge(struct gp_waitedge *e, long fd, bool reading, struct gp_wait_edge *out)
{
	uint64_t dev, ino;
	if (!e->root->live || !fd_identity(e->root, e->pid, fd, S_IFIFO, &dev, &ino))
		return;
	out->how = GP_EDGE_PIPE;
	peer_of(e, dev, ino, reading ? END_WRITER : END_READER, out);
}

/* ---- unix sockets: the process holding the peer ---------------------- */

/* The inode of the unix socket connected to socket inode ino, 0 when not
 * known: one NETLINK_SOCK_DIAG query (unix_diag_get_exact in the kernel's
 * net/unix/diag.c; no privilege needed, and both cookie words
 * INET_DIAG_NOCOOKIE skip the cookie check of sock_diag_check_cookie).
 * The lookup is by inode in gpuprobe's own network namespace: a target in
 * another one finds nothing, and its socket waits stay "outside". */
static uint32_t unix_peer(struct gp_waitedge *e, uint32_t ino)
{
	if (e->diag_fd == -1) {
		e->diag_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
		if (e->diag_fd < 0) {
			e->diag_fd = -2;
			return 0;
		}
		/* The kernel answers at once or not at all: never wait long. */
		struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
		setsockopt(e->diag_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	}
	if (e->diag_fd < 0)
		return 0;
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req r;
	} req = {
		.nlh = { .nlmsg_len = sizeof req, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST, .nlmsg_seq = ino },
		.r = { .sdiag_family = AF_UNIX, .udiag_ino = ino, .udiag_show = UDIAG_SHOW_PEER,
		       .udiag_cookie = { ~0U, ~0U } },
	};
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	if (sendto(e->diag_fd, &req, sizeof req, 0, (struct sockaddr *)&sa, sizeof sa) != (ssize_t)sizeof req)
		return 0;
	uint64_t buf[1024]; /* 8 KiB, aligned for the headers */
	for (;;) {
		ssize_t n = recv(e->diag_fd, buf, sizeof buf, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		size_t left = (size_t)n;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_seq != ino)
				continue; /* an answer to an earlier, timed-out query */
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY
			    || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
				return 0; /* NLMSG_ERROR: no such socket here */
			const struct unix_diag_msg *m = NLMSG_DATA(h);
			if (m->udiag_ino != ino)
				return 0;
			size_t alen = h->nlmsg_len - NLMSG_LENGTH(sizeof *m);
			for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, alen); a = RTA_NEXT(a, alen))
				if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= sizeof(uint32_t)) {
					uint32_t peer;
					memcpy(&peer, RTA_DATA(a), sizeof peer);
					return peer;
				}
			return 0;
		}
	}
}

static void socket_edge(struct gp_waitedge *e, long fd, struct gp_wait_edge *out)
{
	uint64_t dev, ino;
	if (!e->root->live || !fd_identity(e->root, e->pid, fd, S_IFSOCK, &dev, &ino) || ino > UINT32_MAX)
		return;
	uint32_t peer = unix_peer(e, (uint32_t)ino);
	if (!peer)
		return; /* not a connected unix socket (TCP, a listener): outside */
	out->how = GP_EDGE_SOCKET;
	peer_of(e, dev, peer, END_ANY, out);
}

void gp_waitedge_probe(struct gp_waitedge *e, const struct gp_thread *th, enum gp_wait wait,
		       struct gp_wait_edge *out)
{
	memset(out, 0, sizeof *out);
	if (wait == GP_WAIT_STOPPED) {
		stopper(e, out);
		return;
	}
	if (th->sc.kind != GP_SC_IN)
		return;
	const char *name = gp_syscall_name(th->sc.nr);
	if (!name)
		return;
	const uint64_t *a = th->sc.args;
	if (wait == GP_WAIT_LOCK && !strcmp(name, "futex"))
		futex_edge(e, th, out);
	else if (wait == GP_WAIT_LOCK && !strcmp(name, "flock"))
		lock_edge(e, (long)a[0], true, out);
	else if (wait == GP_WAIT_LOCK && !strcmp(name, "fcntl"))
		lock_edge(e, (long)a[0], false, out);
	else if (wait == GP_WAIT_INPUT && (!strcmp(name, "read") || !strcmp(name, "readv"))) {
		pipe_edge(e, (long)a[0], true, out);
		if (!out->how)
			socket_edge(e, (long)a[0], out);
	} else if (wait == GP_WAIT_OUTPUT && (!strcmp(name, "write") || !strcmp(name, "writev"))) {
		pipe_edge(e, (long)a[0], false, out);
		if (!out->how)
			socket_edge(e, (long)a[0], out);
	} else if ((wait == GP_WAIT_INPUT || wait == GP_WAIT_OUTPUT)
		   && (!strcmp(name, "recvfrom") || !strcmp(name, "recvmsg") || !strcmp(name, "sendto")
		       || !strcmp(name, "sendmsg")))
		socket_edge(e, (long)a[0], out);
	else if ((wait == GP_WAIT_OUTPUT || wait == GP_WAIT_INPUT) && !strcmp(name, "splice")) {
		/* splice(fd_in, off_in, fd_out, ...) (pv): blocked writing
		 * into fd_out's pipe, or reading fd_in's. */
		pipe_edge(e, (long)a[2], false, out);
		if (!out->id)
			pipe_edge(e, (long)a[0], true, out);
	}
}
