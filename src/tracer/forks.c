#include "config.h"
#include "forks.h"
#include "grow.h"
#include "timeutil.h"
#include "waitfd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEATHS 64

struct gp_forks {
	int fd, root;
	int *pid;                 /* the tree's processes, as the events say */
	char (*comm)[16];         /* their names, beside pid (comm events) */
	size_t n, cap, ccap;
	struct gp_forks_counts c;
	struct gp_death deaths[DEATHS]; /* since gp_forks_deaths last took them */
	size_t nd;
	unsigned dlost;
	/* A thread reads the events as they come, so that a process that
	 * execs is named while it lives (a retry loop's curl lives 5 ms of
	 * each second; the connector names no exec'd program, and the
	 * per-sample drain came too late to read its /proc/PID/comm).  It
	 * takes no signal and never ptraces; mu guards all of the above. */
	pthread_t th;
	bool threaded;
	int stop[2];
	pthread_mutex_t mu;
};

static bool tracked(const struct gp_forks *f, int pid, size_t *at)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->pid[i] == pid) {
			if (at)
				*at = i;
			return true;
		}
	return false;
}

static void track_locked(struct gp_forks *f, int pid)
{
	if (pid <= 0 || tracked(f, pid, NULL))
		return;
	if (!gp_grow(&f->pid, &f->cap, f->n + 1, sizeof *f->pid, 64)
	    || !gp_grow(&f->comm, &f->ccap, f->n + 1, sizeof *f->comm, 64))
		return;
	f->comm[f->n][0] = 0;
	f->pid[f->n++] = pid;
}

void gp_forks_track(struct gp_forks *f, int pid)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->mu);
	track_locked(f, pid);
	pthread_mutex_unlock(&f->mu);
}

static void forget(struct gp_forks *f, size_t at)
{
	f->n--;
	if (at == f->n)
		return;
	f->pid[at] = f->pid[f->n];
	memcpy(f->comm[at], f->comm[f->n], sizeof f->comm[at]);
}

size_t gp_forks_deaths(struct gp_forks *f, struct gp_death *out, size_t cap, unsigned *lost)
{
	*lost = 0;
	if (!f)
		return 0;
	pthread_mutex_lock(&f->mu);
	size_t n = f->nd < cap ? f->nd : cap;
	memcpy(out, f->deaths, n * sizeof *out);
	*lost = f->dlost + (unsigned)(f->nd - n);
	f->nd = 0;
	f->dlost = 0;
	pthread_mutex_unlock(&f->mu);
	return n;
}

/* One netlink message to the connector: cn_msg{CN_IDX_PROC, CN_VAL_PROC}
 * and the operation (Documentation/driver-api/connector.rst). */
static int send_op(int fd, enum proc_cn_mcast_op op)
{
	struct {
		struct nlmsghdr nl;
		struct cn_msg cn;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) m;
	memset(&m, 0, sizeof m);
	m.nl.nlmsg_len = sizeof m;
	m.nl.nlmsg_type = NLMSG_DONE;
	m.nl.nlmsg_pid = 0;
	m.cn.id.idx = CN_IDX_PROC;
	m.cn.id.val = CN_VAL_PROC;
	m.cn.len = sizeof op;
	m.op = op;
	return send(fd, &m, sizeof m, 0) == (ssize_t)sizeof m ? 0 : -1;
}

/* The proc_event of one received message, copied into *out (in the
 * message it sits at offset 36, after nlmsghdr and cn_msg: not aligned
 * for its 8-byte timestamp, which UBSan rejects); NULL when it is not
 * one. */
static const struct proc_event *event_of(const char *buf, ssize_t len, struct proc_event *out)
{
	const struct nlmsghdr *nl = (const void *)buf;
	if (len < (ssize_t)(NLMSG_HDRLEN + sizeof(struct cn_msg)) || !NLMSG_OK(nl, (size_t)len)
	    || nl->nlmsg_type == NLMSG_ERROR)
		return NULL;
	const struct cn_msg *cn = NLMSG_DATA(nl);
	if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC
	    || cn->len < offsetof(struct proc_event, event_data)
	    || (size_t)len < NLMSG_HDRLEN + sizeof *cn + cn->len)
		return NULL;
	memset(out, 0, sizeof *out);
	memcpy(out, cn->data, cn->len < sizeof *out ? cn->len : sizeof *out);
	return out;
}

/* The initial namespaces' nsfs inodes are fixed numbers (the kernel's
 * include/linux/proc_ns.h, since 3.8: PROC_USER_INIT_INO 0xEFFFFFFD,
 * PROC_PID_INIT_INO 0xEFFFFFFC).  From any other, cn_proc_mcast_ctl
 * returns without an answer, so asking would only cost the 0.5 s wait
 * below (a trace inside a container, tests/faults/pid-reuse.sh). */
static const char *other_namespace(void)
{
	struct stat st;
	if (stat("/proc/self/ns/user", &st) == 0 && st.st_ino != 0xEFFFFFFDu)
		return "user";
	if (stat("/proc/self/ns/pid", &st) == 0 && st.st_ino != 0xEFFFFFFCu)
		return "pid";
	return NULL;
}

static void start_reader(struct gp_forks *f);

struct gp_forks *gp_forks_open(int root, char *why, size_t cap)
{
	const char *ns = other_namespace();
	if (ns) {
		snprintf(why, cap, "the process connector answers only the initial namespaces (this is another %s namespace)", ns);
		return NULL;
	}
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
	if (fd < 0) {
		snprintf(why, cap, "no process connector (%s)", strerror(errno));
		return NULL;
	}
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC, .nl_pid = 0 };
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || send_op(fd, PROC_CN_MCAST_LISTEN) < 0) {
		snprintf(why, cap, "the process connector refused (%s): run as root", strerror(errno));
		close(fd);
		return NULL;
	}
	/* A second's worth of a busy machine's events between two samples
	 * (SO_RCVBUFFORCE: root only; the default otherwise). */
	int sz = 8 << 20;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof sz);
	/* The kernel answers a LISTEN with a PROC_EVENT_NONE whose ack is
	 * the error (cn_proc_mcast_ctl, since Linux 3.2), or not at all
	 * from another namespace.  Other events may come first. */
	/* Bounded by the clock, not by the reads: on a busy machine other
	 * processes' events keep coming, and the answer may be among the
	 * ones a full queue dropped (ENOBUFS). */
	char buf[4096] __attribute__((aligned(8))); /* nlmsghdr, then cn_msg: 4-byte fields */
	double deadline = gp_mono_now() + 0.5;
	for (double left; (left = deadline - gp_mono_now()) > 0;) {
		ssize_t len = recv(fd, buf, sizeof buf, 0);
		if (len < 0 && errno == EAGAIN) {
			/* Up to 0.5 s (watch opens one per process it follows):
			 * a late ptrace stop is let go meanwhile (waitfd.h). */
			gp_wait_fd(fd, POLLIN, deadline);
			continue;
		}
		if (len < 0 && (errno == EINTR || errno == ENOBUFS))
			continue;
		if (len < 0)
			break;
		struct proc_event evbuf;
		const struct proc_event *ev = event_of(buf, len, &evbuf);
		if (!ev || ev->what != PROC_EVENT_NONE)
			continue;
		if (ev->event_data.ack.err) {
			snprintf(why, cap, "the process connector refused (%s): run as root",
				 strerror((int)ev->event_data.ack.err));
			close(fd);
			return NULL;
		}
		struct gp_forks *f = calloc(1, sizeof *f);
		if (!f) {
			close(fd);
			snprintf(why, cap, "out of memory");
			return NULL;
		}
		f->fd = fd;
		f->root = root;
		pthread_mutex_init(&f->mu, NULL);
		gp_forks_track(f, root);
		start_reader(f);
		return f;
	}
	snprintf(why, cap, "the process connector did not answer (another pid or user namespace)");
	close(fd);
	return NULL;
}

/* A process that exec'd: its new name, read at once (fs/exec.c sets
 * comm before proc_exec_connector sends the event). */
static void exec_name(struct gp_forks *f, int tgid)
{
	size_t at;
	if (!tracked(f, tgid, &at))
		return;
	char path[40], name[17];
	snprintf(path, sizeof path, "/proc/%d/comm", tgid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, name, 16);
	close(fd);
	if (n <= 0)
		return;
	name[n] = 0;
	name[strcspn(name, "\n")] = 0;
	memcpy(f->comm[at], name, sizeof f->comm[at]);
	f->comm[at][15] = 0;
}

static void drain_locked(struct gp_forks *f)
{
	char buf[4096] __attribute__((aligned(8))); /* nlmsghdr, then cn_msg: 4-byte fields */
	for (;;) {
		ssize_t len = recv(f->fd, buf, sizeof buf, 0);
		if (len < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				f->c.lost++; /* the queue overflowed: some events are gone */
				continue;
			}
			return; /* EAGAIN: all read */
		}
		struct proc_event evbuf;
		const struct proc_event *ev = event_of(buf, len, &evbuf);
		if (!ev)
			continue;
		size_t at;
		if (ev->what == PROC_EVENT_FORK) {
			const struct fork_proc_event *e = &ev->event_data.fork;
			/* A new process (a thread has child_pid != child_tgid)
			 * of a process of the tree.  Counted even when already
			 * tracked: the sample's /proc walk (tree.c) tracks what
			 * it finds, and a process started between this drain
			 * and that walk is found before its fork is read here
			 * (a make of 40 recipes under load: 42 of 43 counted).
			 * The kernel sends one fork event a process. */
			size_t par;
			if (e->child_pid == e->child_tgid && tracked(f, e->parent_tgid, &par)) {
				char pcomm[16];
				memcpy(pcomm, f->comm[par], sizeof pcomm);
				track_locked(f, e->child_tgid);
				if (tracked(f, e->child_tgid, &at))
					memcpy(f->comm[at], pcomm, sizeof pcomm); /* a fork keeps its name */
				f->c.started++;
			}
		} else if (ev->what == PROC_EVENT_EXEC) {
			const struct exec_proc_event *e = &ev->event_data.exec;
			if (e->process_pid == e->process_tgid)
				exec_name(f, e->process_tgid);
		} else if (ev->what == PROC_EVENT_COMM) {
			const struct comm_proc_event *e = &ev->event_data.comm;
			if (e->process_pid == e->process_tgid && tracked(f, e->process_tgid, &at)) {
				memcpy(f->comm[at], e->comm, sizeof f->comm[at]);
				f->comm[at][15] = 0;
			}
		} else if (ev->what == PROC_EVENT_EXIT) {
			const struct exit_proc_event *e = &ev->event_data.exit;
			/* The root's own exit ends the trace: not one of
			 * the processes it started. */
			if (e->process_pid == e->process_tgid && tracked(f, e->process_tgid, &at)) {
				if (e->process_tgid != f->root) {
					f->c.exited++;
					struct gp_death d = { .pid = e->process_tgid, .code = (int)e->exit_code,
							      .ppid = e->parent_tgid };
					memcpy(d.comm, f->comm[at], sizeof d.comm);
					if (f->nd == DEATHS) { /* the oldest go first */
						memmove(f->deaths, f->deaths + 1, (DEATHS - 1) * sizeof *f->deaths);
						f->nd--;
						f->dlost++;
					}
					f->deaths[f->nd++] = d;
				}
				forget(f, at);
			}
		}
	}
}

void gp_forks_drain(struct gp_forks *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->mu);
	drain_locked(f);
	pthread_mutex_unlock(&f->mu);
}

static void *reader(void *arg)
{
	struct gp_forks *f = arg;
	struct pollfd p[2] = { { .fd = f->fd, .events = POLLIN }, { .fd = f->stop[0], .events = POLLIN } };
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return NULL;
		if (p[1].revents)
			return NULL;
		if (p[0].revents)
			gp_forks_drain(f);
	}
}

/* The reader thread, with every signal blocked (they are the main
 * thread's: trace takes them with sigtimedwait). */
static void start_reader(struct gp_forks *f)
{
	if (pipe2(f->stop, O_CLOEXEC) != 0)
		return;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	f->threaded = pthread_create(&f->th, NULL, reader, f) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!f->threaded) {
		close(f->stop[0]);
		close(f->stop[1]);
	}
}

void gp_forks_counts(const struct gp_forks *f, struct gp_forks_counts *c)
{
	if (f) {
		pthread_mutex_lock((pthread_mutex_t *)&f->mu);
		*c = f->c;
		pthread_mutex_unlock((pthread_mutex_t *)&f->mu);
	} else {
		memset(c, 0, sizeof *c);
	}
}

void gp_forks_close(struct gp_forks *f)
{
	if (!f)
		return;
	if (f->threaded) {
		(void)!write(f->stop[1], "", 1);
		pthread_join(f->th, NULL);
		close(f->stop[0]);
		close(f->stop[1]);
	}
	pthread_mutex_destroy(&f->mu);
	(void)send_op(f->fd, PROC_CN_MCAST_IGNORE);
	close(f->fd);
	free(f->pid);
	free(f->comm);
	free(f);
}
