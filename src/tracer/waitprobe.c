#include "config.h"
#include "waitprobe.h"
#include "syscalls.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* What a descriptor names, as far as a wait is concerned. */
enum fdkind {
	FD_UNKNOWN, FD_SOCKET, FD_PIPE, FD_TTY, FD_EVENTFD, FD_SIGNALFD, FD_TIMERFD,
	FD_EPOLL, FD_INOTIFY, FD_GPU, FD_DEVICE, FD_FILE,
};

enum { FD_CACHE = 64, MAX_SET = 64 };

struct gp_waitprobe {
	const struct gp_root *root;
	int pid;
	struct { int fd; enum fdkind k; } cache[FD_CACHE];
	size_t ncache;
};

struct gp_waitprobe *gp_waitprobe_new(const struct gp_root *root, int pid)
{
	struct gp_waitprobe *w = calloc(1, sizeof *w);
	if (w) {
		w->root = root;
		w->pid = pid;
	}
	return w;
}

void gp_waitprobe_free(struct gp_waitprobe *w)
{
	free(w);
}

void gp_waitprobe_reset(struct gp_waitprobe *w)
{
	w->ncache = 0;
}

static enum fdkind kind_of_link(const char *l, const struct gp_waitprobe *w, int fd)
{
	if (!strncmp(l, "socket:", 7))
		return FD_SOCKET;
	if (!strncmp(l, "pipe:", 5))
		return FD_PIPE;
	if (!strcmp(l, "anon_inode:[eventfd]"))
		return FD_EVENTFD;
	if (!strcmp(l, "anon_inode:[signalfd]"))
		return FD_SIGNALFD;
	if (!strcmp(l, "anon_inode:[timerfd]"))
		return FD_TIMERFD;
	if (!strcmp(l, "anon_inode:[eventpoll]"))
		return FD_EPOLL;
	if (!strcmp(l, "anon_inode:inotify") || !strcmp(l, "anon_inode:[fanotify]"))
		return FD_INOTIFY;
	if (!strncmp(l, "/dev/pts/", 9) || !strncmp(l, "/dev/tty", 8) || !strcmp(l, "/dev/console"))
		return FD_TTY;
	if (!strncmp(l, "/dev/nvidia", 11) || !strcmp(l, "/dev/kfd") || !strncmp(l, "/dev/dri/", 9)
	    || !strncmp(l, "/dev/dxg", 8) || !strncmp(l, "/dev/accel/", 11))
		return FD_GPU;
	if (!strncmp(l, "/dev/", 5))
		return FD_DEVICE;
	if (l[0] == '/') {
		/* A FIFO by name is a pipe. */
		char p[64];
		struct stat st;
		snprintf(p, sizeof p, "proc/%d/fd/%d", w->pid, fd);
		if (fstatat(w->root->dirfd, p, &st, 0) == 0 && S_ISFIFO(st.st_mode))
			return FD_PIPE;
		return FD_FILE;
	}
	return FD_UNKNOWN;
}

static enum fdkind fd_kind(struct gp_waitprobe *w, long fd)
{
	if (fd < 0 || fd > INT32_MAX)
		return FD_UNKNOWN;
	for (size_t i = 0; i < w->ncache; i++)
		if (w->cache[i].fd == fd)
			return w->cache[i].k;
	char p[64], l[256];
	snprintf(p, sizeof p, "proc/%d/fd/%ld", w->pid, fd);
	ssize_t n = readlinkat(w->root->dirfd, p, l, sizeof l - 1);
	enum fdkind k = FD_UNKNOWN;
	if (n > 0) {
		l[n] = '\0';
		k = kind_of_link(l, w, (int)fd);
	}
	if (w->ncache < FD_CACHE)
		w->cache[w->ncache++] = (typeof(w->cache[0])){ (int)fd, k };
	return k;
}

/* A set of descriptors waited on together (poll, select, epoll).  Any
 * socket, tty or inotify in it: the wait is for the world.  Pipes are weak
 * evidence there: servers keep a self-pipe or a parent-death pipe in their
 * event sets (PostgreSQL's postmaster-death pipe beside its latch), so a
 * set of pipes, eventfds and signalfds alone may be woken from inside. */
struct setclass {
	unsigned outside, wakeup, pipes, timers, gpu, unknown, n;
};

static void set_add(struct setclass *c, enum fdkind k)
{
	c->n++;
	switch (k) {
	case FD_SOCKET: case FD_TTY: case FD_INOTIFY: c->outside++; break;
	case FD_PIPE: c->pipes++; break;
	case FD_EVENTFD: case FD_SIGNALFD: case FD_EPOLL: c->wakeup++; break;
	case FD_TIMERFD: c->timers++; break;
	case FD_GPU: c->gpu++; break;
	default: c->unknown++; break;
	}
}

static enum gp_wait set_wait(const struct setclass *c)
{
	if (c->n == 0)
		return GP_WAIT_TIMER;
	if (c->outside)
		return GP_WAIT_INPUT;
	/* A GPU runtime's event thread (CUDA's cuda-EvtHandlr) polls its
	 * device fds beside an eventfd for its whole life: a wakeup that
	 * comes from the GPU or from the process, not a stuck driver call
	 * (that is an ioctl, or D state). */
	if (c->gpu)
		return GP_WAIT_WAKEUP;
	if (c->wakeup || (c->pipes && c->n > 1))
		return GP_WAIT_WAKEUP;
	if (c->pipes)
		return GP_WAIT_INPUT;
	if (c->timers)
		return GP_WAIT_TIMER;
	return GP_WAIT_OTHER;
}

static bool read_mem(int pid, uint64_t addr, void *buf, size_t len)
{
	if (!addr)
		return false;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

static enum gp_wait poll_wait(struct gp_waitprobe *w, uint64_t fds, uint64_t nfds)
{
	struct setclass c = { 0 };
	if (nfds == 0)
		return GP_WAIT_TIMER;
	struct { int fd; short events, revents; } pf[MAX_SET];
	size_t n = nfds < MAX_SET ? (size_t)nfds : MAX_SET;
	if (!w->root->live || !read_mem(w->pid, fds, pf, n * sizeof pf[0]))
		return GP_WAIT_OTHER;
	for (size_t i = 0; i < n; i++)
		if (pf[i].fd >= 0)
			set_add(&c, fd_kind(w, pf[i].fd));
	return set_wait(&c);
}

static enum gp_wait select_wait(struct gp_waitprobe *w, const uint64_t a[6])
{
	uint64_t nfds = a[0];
	if (nfds == 0 || (!a[1] && !a[2] && !a[3]))
		return GP_WAIT_TIMER;
	unsigned char bits[128];
	size_t nb = (size_t)((nfds > 1024 ? 1024 : nfds) + 7) / 8;
	struct setclass c = { 0 };
	for (int set = 1; set <= 2; set++) {
		if (!a[set])
			continue;
		if (!w->root->live || !read_mem(w->pid, a[set], bits, nb))
			return GP_WAIT_OTHER;
		for (size_t fd = 0; fd < nb * 8 && fd < nfds && c.n < MAX_SET; fd++)
			if (bits[fd / 8] & (1u << (fd % 8)))
				set_add(&c, fd_kind(w, (long)fd));
	}
	return set_wait(&c);
}

/* An epoll set's members: "tfd:        5 events: ..." lines of its fdinfo. */
static enum gp_wait epoll_wait_kind(struct gp_waitprobe *w, long epfd)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/fdinfo/%ld", w->pid, epfd);
	char *text = gp_slurp(w->root, p, NULL);
	if (!text)
		return GP_WAIT_OTHER;
	struct setclass c = { 0 };
	for (char *s = strstr(text, "tfd:"); s && c.n < MAX_SET; s = strstr(s + 4, "tfd:"))
		set_add(&c, fd_kind(w, strtol(s + 4, NULL, 10)));
	free(text);
	return set_wait(&c);
}

static enum gp_wait fd_read_wait(enum fdkind k)
{
	switch (k) {
	case FD_SOCKET: case FD_PIPE: case FD_TTY: case FD_INOTIFY: return GP_WAIT_INPUT;
	case FD_EVENTFD: case FD_SIGNALFD: return GP_WAIT_WAKEUP;
	case FD_TIMERFD: return GP_WAIT_TIMER;
	case FD_GPU: return GP_WAIT_DRIVER;
	default: return GP_WAIT_OTHER;
	}
}

/* Without /proc/TID/syscall (another user's process), the kernel function
 * it sleeps in says less, but something. */
static enum gp_wait from_wchan(const char *wc)
{
	static const struct { const char *pfx; enum gp_wait w; } t[] = {
		{ "hrtimer_nanosleep", GP_WAIT_TIMER }, { "do_nanosleep", GP_WAIT_TIMER },
		{ "do_wait", GP_WAIT_CHILD }, { "kernel_wait4", GP_WAIT_CHILD },
		{ "sigsuspend", GP_WAIT_SIGNAL }, { "do_sigtimedwait", GP_WAIT_SIGNAL },
		{ "pipe_read", GP_WAIT_INPUT }, { "pipe_wait", GP_WAIT_INPUT },
		{ "n_tty_read", GP_WAIT_INPUT }, { "unix_stream_read", GP_WAIT_INPUT },
		{ "sk_wait_data", GP_WAIT_INPUT }, { "inet_csk_accept", GP_WAIT_INPUT },
		{ "do_select", GP_WAIT_OTHER }, { "do_sys_poll", GP_WAIT_OTHER },
		{ "ep_poll", GP_WAIT_OTHER }, { "futex", GP_WAIT_OTHER },
	};
	if (!wc || !*wc)
		return GP_WAIT_OTHER;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strncmp(wc, t[i].pfx, strlen(t[i].pfx)))
			return t[i].w;
	return GP_WAIT_OTHER;
}

static bool is(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(name, *list))
			return true;
	return false;
}

static enum gp_wait classify(struct gp_waitprobe *w, const struct gp_thread *th);

enum gp_wait gp_waitprobe_classify(struct gp_waitprobe *w, const struct gp_thread *th)
{
	enum gp_wait k = classify(w, th);
	if (th->wait_mem && k != GP_WAIT_NONE)
		*th->wait_mem = (uint8_t)k;
	return k;
}

static enum gp_wait classify(struct gp_waitprobe *w, const struct gp_thread *th)
{
	char state = th->st.state;
	if (state == 'R' || state == 'Z' || state == 'X')
		return GP_WAIT_NONE;
	if (state == 'T' || state == 't')
		return GP_WAIT_STOPPED;
	const char *name = th->sc.kind == GP_SC_IN ? gp_syscall_name(th->sc.nr) : NULL;
	const uint64_t *a = th->sc.args;
	if (state == 'D') {
		if (name && !strcmp(name, "ioctl") && fd_kind(w, (long)a[0]) == FD_GPU)
			return GP_WAIT_DRIVER;
		return GP_WAIT_DISK;
	}
	if (th->sc.kind == GP_SC_UNKNOWN)
		return from_wchan(th->wchan);
	if (!name)
		return GP_WAIT_OTHER;
	if (!strcmp(name, "restart_syscall")) {
		/* A sleep interrupted by a stop (ours, when its stack was
		 * taken) resumes here with its arguments gone: nanosleep and
		 * clock_nanosleep, a futex wait with a timeout, a timed poll
		 * restart this way (-ERESTART_RESTARTBLOCK); an untimed futex,
		 * select and epoll_wait restart as themselves.  The kernel
		 * function it sleeps in tells which. */
		if (th->wait_mem && *th->wait_mem)
			return (enum gp_wait)*th->wait_mem;
		const char *wc = th->wchan;
		if (wc && !strncmp(wc, "futex", 5))
			return GP_WAIT_CONDVAR;
		enum gp_wait k = from_wchan(wc);
		/* Only bounded sleeps restart this way. */
		return k == GP_WAIT_OTHER ? GP_WAIT_TIMER : k;
	}
	static const char *const reads[] = { "read", "readv", "recvfrom", "recvmsg", "recvmmsg",
		"accept", "accept4", NULL };
	static const char *const writes[] = { "write", "writev", "sendto", "sendmsg", "sendmmsg",
		"connect", "sendfile", "splice", NULL };
	static const char *const sleeps[] = { "nanosleep", "clock_nanosleep", "alarm", NULL };
	static const char *const sigs[] = { "pause", "rt_sigsuspend", "rt_sigtimedwait",
		"sigsuspend", NULL };
	static const char *const epolls[] = { "epoll_wait", "epoll_pwait", "epoll_pwait2", NULL };
	if (is(name, reads))
		return fd_read_wait(fd_kind(w, (long)a[0]));
	if (is(name, writes)) {
		enum fdkind k = fd_kind(w, (long)a[0]);
		return k == FD_SOCKET || k == FD_PIPE || k == FD_TTY ? GP_WAIT_OUTPUT : GP_WAIT_OTHER;
	}
	if (is(name, sleeps))
		return GP_WAIT_TIMER;
	if (is(name, sigs))
		return GP_WAIT_SIGNAL;
	if (!strcmp(name, "wait4") || !strcmp(name, "waitid"))
		return GP_WAIT_CHILD;
	if (!strcmp(name, "poll") || !strcmp(name, "ppoll"))
		return poll_wait(w, a[0], a[1]);
	if (!strcmp(name, "select") || !strcmp(name, "pselect6"))
		return select_wait(w, a);
	if (is(name, epolls))
		return epoll_wait_kind(w, (long)a[0]);
	if (!strcmp(name, "futex")) {
		/* FUTEX_WAIT (0), FUTEX_LOCK_PI (6), FUTEX_WAIT_BITSET (9),
		 * FUTEX_WAIT_REQUEUE_PI (11), FUTEX_LOCK_PI2 (13): the
		 * timeout is the fourth argument (futex(2)); PRIVATE and
		 * CLOCK_REALTIME are flag bits above the command. */
		unsigned cmd = (unsigned)a[1] & 0x7f;
		if (cmd == 0 || cmd == 6 || cmd == 9 || cmd == 11 || cmd == 13)
			return a[3] ? GP_WAIT_CONDVAR : GP_WAIT_LOCK;
		return GP_WAIT_OTHER;
	}
	if (!strcmp(name, "futex_waitv"))
		return a[3] ? GP_WAIT_CONDVAR : GP_WAIT_LOCK;
	if (!strcmp(name, "flock") || !strcmp(name, "semop"))
		return GP_WAIT_LOCK;
	if (!strcmp(name, "semtimedop"))
		return GP_WAIT_CONDVAR;
	if (!strcmp(name, "fcntl"))
		/* F_SETLKW (7), F_OFD_SETLKW (38) */
		return a[1] == 7 || a[1] == 38 ? GP_WAIT_LOCK : GP_WAIT_OTHER;
	/* open() of a FIFO sleeps in wait_for_partner (fs/pipe.c, fifo_open)
	 * until a process opens the other end: a wait for a peer. */
	if ((!strcmp(name, "openat") || !strcmp(name, "open"))
	    && !strcmp(th->wchan, "wait_for_partner"))
		return GP_WAIT_INPUT;
	if (!strcmp(name, "msgrcv") || !strcmp(name, "mq_timedreceive"))
		return GP_WAIT_INPUT;
	if (!strcmp(name, "ioctl")) {
		enum fdkind k = fd_kind(w, (long)a[0]);
		return k == FD_GPU || k == FD_DEVICE ? GP_WAIT_DRIVER : GP_WAIT_OTHER;
	}
	return GP_WAIT_OTHER;
}
