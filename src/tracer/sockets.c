/* A process's sockets: see sockets.h.
 *
 * Facts relied on (Linux):
 *   - inet_diag_msg's idiag_rqueue/idiag_wqueue: for a listener, the
 *     accept queue's length and its limit; for a connection, bytes not yet
 *     read (rcv_nxt - copied_seq) and bytes not yet acked (write_seq -
 *     snd_una) (net/ipv4/tcp_diag.c tcp_diag_get_info).
 *   - unix_diag_rqlen: for a listener, pending connections; else bytes in
 *     the receive and send queues (net/unix/diag.c sk_diag_show_rqlen).
 *   - tcp_info grew by appending: tcpi_bytes_acked (4.1) and
 *     tcpi_bytes_received (4.2) are read only when the attribute is long
 *     enough to hold them (tcp_get_info fills what the kernel knows). */
#include "config.h"
#include "sockets.h"
#include "keytab.h"
#include "sockflow.h"
#include "timeutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum kind { K_OTHER, K_TCP, K_TCP_LISTEN, K_UNIX, K_UNIX_LISTEN };

/* One socket of the host's dump, by inode. */
struct sockent {
	uint64_t ino;         /* the key */
	uint8_t kind;
	bool have_bytes;
	uint32_t rq, wq;
	uint64_t acked, received;
	uint64_t peer;        /* TCP: the hash of the reversed tuple; unix: the peer's inode */
	uint64_t lport;       /* TCP: family << 16 | local port, + 1 */
};

/* A local port some TCP socket listens on (family << 16 | port, + 1). */
struct lport {
	uint64_t key;
};

/* A TCP connection's tuple (hashed) -> its inode: finds a loopback peer. */
struct tupent {
	uint64_t hash;
	uint64_t ino;
};

/* What a socket inode turned out to be, kept across ticks: a TCP socket
 * with its tuple and cookie (asked for alone next time: an exact lookup,
 * not a walk of the whole established hash), or none (family 0: UDP,
 * netlink, a packet socket -- never asked for again). */
struct known {
	uint64_t ino;
	uint8_t family;
	struct inet_diag_sockid id;
	unsigned long tick;   /* the last tick it was seen */
};

/* A socket some traced process holds: who counts it, and its counters
 * when it was last counted. */
struct owned {
	uint64_t ino;
	int pid;
	unsigned long dump;   /* the last tick that saw it held */
	uint64_t acked, received;
	/* A request read and not answered: since when bytes came in with
	 * none sent after them (< 0: none pending) */
	double pending_since;
};

/* A key stamped with the last tick that saw it: a socket inode some
 * traced process holds, a port some traced process listens on. */
struct stamp {
	uint64_t key;
	unsigned long tick;
};

/* A socket the kernel counted for one process (sockflow.h): its counters
 * when last added to the process's totals. */
struct counted {
	uint64_t ino;
	uint64_t gen, tx, rx, io_tx, io_rx, io_w, io_r;
	unsigned long tick;
};

struct gp_sockets {
	int fd;               /* NETLINK_SOCK_DIAG; -1 not opened, -2 unavailable */
	struct gp_sockflow *flow; /* the kernel's counts, or NULL (bytes from tcp_info then) */
	double t;             /* this tick */
	bool ticked;
	unsigned long tick;   /* ticks so far */
	bool unix_done, tcp_done; /* this tick's dumps */
	unsigned long dumps;
	double ms;
	/* socks: this tick's sockets; the rest are kept across ticks */
	struct gp_keytab socks, tuples, owners, known, lports;
	struct gp_keytab held, tlports; /* struct stamp */
};

struct gp_sockproc {
	struct gp_sockets *s;
	const struct gp_root *root;
	int pid;
	bool first;           /* its first read: what its sockets hold is the baseline */
	struct gp_sock_totals tot;
	uint64_t *inos;       /* this read's socket inodes */
	size_t n, cap;
	bool watched;         /* its calls are counted by the kernel (sockflow.h) */
	struct gp_flowent *flows;
	size_t flowcap;
	struct gp_keytab counted; /* struct counted, by inode */
	struct gp_keytab pipefds; /* struct pipefd: its pipes' fds, which end each is */
	struct gp_keytab pipeends; /* struct pipeend: its pipes, which ends it holds */
};

/* A pipe fd of one process, by pipe_key(inode, fd): which end, read
 * once from /proc/PID/fdinfo (an fd's access mode does not change). */
struct pipefd {
	uint64_t key;
	bool wr;
	unsigned long tick;
};

/* A pipe of one process, by inode: the ends it held at its last read
 * (1 read, 2 write). */
struct pipeend {
	uint64_t ino;
	unsigned ends;
	unsigned long tick;
};

struct gp_sockets *gp_sockets_new(void)
{
	struct gp_sockets *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->fd = -1;
	gp_keytab_init(&s->socks, sizeof(struct sockent));
	gp_keytab_init(&s->tuples, sizeof(struct tupent));
	gp_keytab_init(&s->owners, sizeof(struct owned));
	gp_keytab_init(&s->known, sizeof(struct known));
	gp_keytab_init(&s->lports, sizeof(struct lport));
	gp_keytab_init(&s->held, sizeof(struct stamp));
	gp_keytab_init(&s->tlports, sizeof(struct stamp));
	s->flow = gp_sockflow_get();
	return s;
}

void gp_sockets_free(struct gp_sockets *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	gp_keytab_free(&s->socks);
	gp_keytab_free(&s->tuples);
	gp_keytab_free(&s->owners);
	gp_keytab_free(&s->known);
	gp_keytab_free(&s->lports);
	gp_keytab_free(&s->held);
	gp_keytab_free(&s->tlports);
	free(s);
}

void gp_sockets_cost(const struct gp_sockets *s, unsigned long *dumps, double *ms)
{
	*dumps = s ? s->dumps : 0;
	*ms = s ? s->ms : 0;
}

/* ---- the host's dump ----------------------------------------------------- */

static uint64_t tuple_hash(uint8_t family, uint16_t sport, uint16_t dport, const uint32_t *src,
			   const uint32_t *dst)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const uint32_t w[] = { family, sport, dport, src[0], src[1], src[2], src[3],
			       dst[0], dst[1], dst[2], dst[3] };
	for (size_t i = 0; i < sizeof w / sizeof *w; i++)
		h = (h ^ w[i]) * 0x100000001b3ull;
	return h ? h : 1;
}

static void add_tcp(struct gp_sockets *s, const struct nlmsghdr *h)
{
	const struct inet_diag_msg *m = NLMSG_DATA(h);
	bool made;
	if (!m->idiag_inode) {
		/* not accepted yet: only its tuple, that its client's side
		 * finds its peer here (peer_is_traced) */
		const struct inet_diag_sockid *q = &m->id;
		struct tupent *t = gp_keytab_put(&s->tuples, tuple_hash(m->idiag_family, q->idiag_sport,
				   q->idiag_dport, q->idiag_src, q->idiag_dst), &made);
		if (t && made)
			t->ino = 0;
		return;
	}
	struct sockent *e = gp_keytab_put(&s->socks, m->idiag_inode, &made);
	if (!e)
		return;
	e->kind = m->idiag_state == 10 /* TCP_LISTEN */ ? K_TCP_LISTEN : K_TCP;
	e->rq = m->idiag_rqueue;
	e->wq = m->idiag_wqueue;
	const struct inet_diag_sockid *id = &m->id;
	e->lport = ((uint64_t)m->idiag_family << 16 | ntohs(id->idiag_sport)) + 1;
	if (e->kind == K_TCP_LISTEN)
		(void)gp_keytab_put(&s->lports, e->lport, &made);
	e->peer = tuple_hash(m->idiag_family, id->idiag_dport, id->idiag_sport, id->idiag_dst,
			     id->idiag_src);
	struct tupent *t = gp_keytab_put(&s->tuples, tuple_hash(m->idiag_family, id->idiag_sport,
			   id->idiag_dport, id->idiag_src, id->idiag_dst), &made);
	if (t)
		t->ino = m->idiag_inode;
	struct known *k = gp_keytab_put(&s->known, m->idiag_inode, &made);
	if (k) {
		k->family = m->idiag_family;
		k->id = *id;
		k->tick = s->tick;
	}
	size_t alen = h->nlmsg_len - NLMSG_LENGTH(sizeof *m);
	for (const struct rtattr *a = (const struct rtattr *)(m + 1); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
		if (a->rta_type != INET_DIAG_INFO)
			continue;
		struct tcp_info ti;
		size_t len = RTA_PAYLOAD(a);
		memset(&ti, 0, sizeof ti);
		memcpy(&ti, RTA_DATA(a), len < sizeof ti ? len : sizeof ti);
		if (len >= offsetof(struct tcp_info, tcpi_bytes_received) + sizeof ti.tcpi_bytes_received) {
			e->have_bytes = true;
			e->acked = ti.tcpi_bytes_acked;
			e->received = ti.tcpi_bytes_received;
		}
	}
}

static void add_unix(struct gp_sockets *s, const struct nlmsghdr *h)
{
	const struct unix_diag_msg *m = NLMSG_DATA(h);
	bool made;
	struct sockent *e = gp_keytab_put(&s->socks, m->udiag_ino, &made);
	if (!e)
		return;
	e->kind = m->udiag_state == 10 /* TCP_LISTEN, unix too */ ? K_UNIX_LISTEN
		  : m->udiag_type == SOCK_DGRAM ? K_OTHER : K_UNIX;
	size_t alen = h->nlmsg_len - NLMSG_LENGTH(sizeof *m);
	for (const struct rtattr *a = (const struct rtattr *)(m + 1); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
		if (a->rta_type == UNIX_DIAG_RQLEN && RTA_PAYLOAD(a) >= sizeof(struct unix_diag_rqlen)) {
			struct unix_diag_rqlen q;
			memcpy(&q, RTA_DATA(a), sizeof q);
			e->rq = q.udiag_rqueue;
			e->wq = q.udiag_wqueue;
		} else if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= sizeof(uint32_t)) {
			uint32_t peer;
			memcpy(&peer, RTA_DATA(a), sizeof peer);
			e->peer = peer;
		}
	}
}

/* One dump request and all its answers.  False on any failure (the
 * kernel answers at once or not at all: 200 ms at most per recv). */
static bool dump(struct gp_sockets *s, const void *req, size_t len, bool tcp, bool one)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	if (sendto(s->fd, req, len, 0, (struct sockaddr *)&sa, sizeof sa) != (ssize_t)len)
		return false;
	uint64_t buf[4096]; /* 32 KiB, aligned for the headers */
	for (;;) {
		ssize_t n = recv(s->fd, buf, sizeof buf, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		size_t left = (size_t)n;
		for (const struct nlmsghdr *h = (const struct nlmsghdr *)buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return true;
			if (h->nlmsg_type == NLMSG_ERROR)
				return false;
			if (tcp && h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
				add_tcp(s, h);
			else if (!tcp && h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
				add_unix(s, h);
			if (one)
				return true;
		}
	}
}

static bool dump_tcp(struct gp_sockets *s, uint8_t family)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
		.nlh = { .nlmsg_len = sizeof req, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		/* every state but TIME_WAIT (6) and SYN_RECV (3): those hold
		 * no socket a process has */
		.r = { .sdiag_family = family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_ext = 1u << (INET_DIAG_INFO - 1),
		       .idiag_states = 0xfff & ~(1u << 6) & ~(1u << 3) },
	};
	return dump(s, &req, sizeof req, true, false);
}

/* One TCP socket by its tuple and cookie: inet_diag_find_one_icsk, a
 * hash lookup (net/ipv4/inet_diag.c), where a dump walks every bucket of
 * the established hash -- about 1 ms a dump on a 24 GiB machine
 * (strace -T, 2026-12-06), the same with 10 sockets or none. */
static bool lookup_tcp(struct gp_sockets *s, const struct known *k)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
		.nlh = { .nlmsg_len = sizeof req, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = k->family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_ext = 1u << (INET_DIAG_INFO - 1), .idiag_states = ~0u, .id = k->id },
	};
	return dump(s, &req, sizeof req, true, true);
}

static bool dump_unix(struct gp_sockets *s)
{
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req r;
	} req = {
		.nlh = { .nlmsg_len = sizeof req, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = AF_UNIX, .udiag_states = 0xffffffffu,
		       .udiag_show = UDIAG_SHOW_RQLEN | UDIAG_SHOW_PEER },
	};
	return dump(s, &req, sizeof req, false, false);
}

static void prune_stamps(struct gp_keytab *t, unsigned long tick)
{
	struct gp_keytab kept;
	gp_keytab_init(&kept, sizeof(struct stamp));
	bool made;
	for (size_t i = 0; i < t->cap; i++) {
		const struct stamp *o = gp_keytab_slot(t, i);
		struct stamp *n;
		if (o->key && o->tick + 8 >= tick && (n = gp_keytab_put(&kept, o->key, &made)))
			*n = *o;
	}
	gp_keytab_free(t);
	*t = kept;
}

static void stamp(struct gp_keytab *t, uint64_t key, unsigned long tick)
{
	bool made;
	struct stamp *st = gp_keytab_put(t, key, &made);
	if (st)
		st->tick = tick;
}

/* What no traced process has held for 8 ticks is forgotten: a server's
 * connections come and go, the tables must not grow with them. */
static void prune(struct gp_sockets *s)
{
	struct gp_keytab owners, known, tuples;
	gp_keytab_init(&owners, sizeof(struct owned));
	gp_keytab_init(&known, sizeof(struct known));
	gp_keytab_init(&tuples, sizeof(struct tupent));
	bool made;
	for (size_t i = 0; i < s->owners.cap; i++) {
		const struct owned *o = gp_keytab_slot(&s->owners, i);
		struct owned *n;
		if (o->ino && o->dump + 8 >= s->tick && (n = gp_keytab_put(&owners, o->ino, &made)))
			*n = *o;
	}
	for (size_t i = 0; i < s->known.cap; i++) {
		const struct known *k = gp_keytab_slot(&s->known, i);
		struct known *n;
		if (!k->ino || k->tick + 8 < s->tick || !(n = gp_keytab_put(&known, k->ino, &made)))
			continue;
		*n = *k;
		struct tupent *t;
		if (k->family && (t = gp_keytab_put(&tuples, tuple_hash(k->family, k->id.idiag_sport,
				  k->id.idiag_dport, k->id.idiag_src, k->id.idiag_dst), &made)))
			t->ino = k->ino;
	}
	prune_stamps(&s->held, s->tick);
	prune_stamps(&s->tlports, s->tick);
	gp_keytab_free(&s->owners);
	gp_keytab_free(&s->known);
	gp_keytab_free(&s->tuples);
	s->owners = owners;
	s->known = known;
	s->tuples = tuples;
}

static bool open_diag(struct gp_sockets *s)
{
	if (s->fd == -1) {
		s->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
		if (s->fd < 0) {
			s->fd = -2;
			return false;
		}
		struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
		setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	}
	return s->fd >= 0;
}

/* A new tick: this tick's table emptied, the unix sockets dumped (cheap:
 * the unix table is a list, walked in tens of microseconds). */
static bool begin_tick(struct gp_sockets *s, double t)
{
	if (s->ticked && s->t == t)
		return s->unix_done;
	s->ticked = true;
	s->t = t;
	s->tick++;
	s->tcp_done = false;
	if (s->tick % 64 == 0)
		prune(s);
	gp_keytab_reset(&s->socks);
	if (!open_diag(s))
		return s->unix_done = false;
	double t0 = gp_mono_now();
	s->unix_done = dump_unix(s);
	s->dumps++;
	s->ms += (gp_mono_now() - t0) * 1e3;
	return s->unix_done;
}

/* The TCP sockets among inos, into this tick's table: by exact lookup
 * those known, by one dump of the host's TCP sockets when any inode is
 * new (at most once a tick); what a dump did not find is not TCP. */
static void find_tcp(struct gp_sockets *s, const uint64_t *inos, size_t n)
{
	double t0 = gp_mono_now();
	bool unknown = false;
	for (size_t i = 0; i < n && !unknown; i++)
		unknown = !gp_keytab_find(&s->socks, inos[i]) && !gp_keytab_find(&s->known, inos[i]);
	if (unknown && !s->tcp_done) {
		dump_tcp(s, AF_INET);
		dump_tcp(s, AF_INET6);
		s->tcp_done = true;
		s->dumps += 2;
	}
	for (size_t i = 0; i < n; i++) {
		if (gp_keytab_find(&s->socks, inos[i]))
			continue;
		bool made;
		struct known *k = gp_keytab_put(&s->known, inos[i], &made);
		if (!k || made) /* not in this tick's dump: not TCP */
			continue;
		if (k->family && !lookup_tcp(s, k))
			k->family = 0; /* closed since: its inode is not asked for again */
		k->tick = s->tick;
	}
	s->ms += (gp_mono_now() - t0) * 1e3;
}

/* ---- one process's sockets ---------------------------------------------- */

struct gp_sockproc *gp_sockproc_new(struct gp_sockets *s, const struct gp_root *root, int pid)
{
	struct gp_sockproc *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->s = s;
	p->root = root;
	p->pid = pid;
	p->first = true;
	gp_keytab_init(&p->counted, sizeof(struct counted));
	gp_keytab_init(&p->pipefds, sizeof(struct pipefd));
	gp_keytab_init(&p->pipeends, sizeof(struct pipeend));
	/* pids are the kernel's own only in the host's pid namespace */
	p->watched = s->flow && root->live && gp_sockflow_watch(s->flow, pid);
	return p;
}

void gp_sockproc_free(struct gp_sockproc *p)
{
	if (!p)
		return;
	if (p->watched)
		gp_sockflow_unwatch(p->s->flow, p->pid);
	gp_keytab_free(&p->counted);
	gp_keytab_free(&p->pipefds);
	gp_keytab_free(&p->pipeends);
	free(p->flows);
	free(p->inos);
	free(p);
}

/* Its socket inodes, from the links of /proc/PID/fd ("socket:[123]"). */
static uint64_t pipe_key(uint64_t ino, long fd)
{
	return ((ino << 20) ^ (uint64_t)fd) + 1; /* 0 is the table's empty key */
}

/* A pipe at fd: which end it is, from its fdinfo's flags (octal, the
 * access mode in the low bits, proc(5)), read once per fd; the ends the
 * process holds, by the pipe's inode. */
static void note_pipe(struct gp_sockproc *p, const char *fdname, uint64_t ino)
{
	long fd = strtol(fdname, NULL, 10);
	bool made;
	struct pipefd *e = gp_keytab_put(&p->pipefds, pipe_key(ino, fd), &made);
	if (!e)
		return;
	if (made) {
		char path[64], buf[512];
		snprintf(path, sizeof path, "/proc/%d/fdinfo/%ld", p->pid, fd);
		ssize_t n = gp_read_file(p->root, path, buf, sizeof buf);
		const char *f = n > 0 ? strstr(buf, "flags:") : NULL;
		unsigned long flags = f ? strtoul(f + 6, NULL, 8) : 0;
		e->wr = (flags & O_ACCMODE) != O_RDONLY;
	}
	e->tick = p->s->tick;
	struct pipeend *pe = gp_keytab_put(&p->pipeends, ino, &made);
	if (!pe)
		return;
	if (made || pe->tick != p->s->tick)
		pe->ends = 0; /* this read's ends only */
	pe->ends |= e->wr ? 2 : 1;
	pe->tick = p->s->tick;
}

static bool list_inodes(struct gp_sockproc *p)
{
	char path[64];
	snprintf(path, sizeof path, "proc/%d/fd", p->pid);
	int dfd = openat(p->root->dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return false;
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return false;
	}
	p->n = 0;
	struct dirent *de;
	char link[64];
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		ssize_t len = readlinkat(dfd, de->d_name, link, sizeof link - 1);
		if (len > 6 && !memcmp(link, "pipe:[", 6) && p->s->flow) {
			link[len] = 0;
			uint64_t ino = strtoull(link + 6, NULL, 10);
			if (ino)
				note_pipe(p, de->d_name, ino);
			continue;
		}
		if (len < 9 || memcmp(link, "socket:[", 8))
			continue;
		link[len] = 0;
		uint64_t ino = strtoull(link + 8, NULL, 10);
		if (!ino)
			continue;
		if (p->n == p->cap) {
			size_t cap = p->cap ? 2 * p->cap : 16;
			uint64_t *n = realloc(p->inos, cap * sizeof *n);
			if (!n)
				break;
			p->inos = n;
			p->cap = cap;
		}
		p->inos[p->n++] = ino;
	}
	closedir(d);
	return true;
}

/* Whether a TCP connection's other end is a socket some traced process
 * holds: bytes between two processes of the trace stay inside it. */
static bool peer_is_traced(const struct gp_sockets *s, const struct sockent *e)
{
	const struct tupent *t = gp_keytab_find(&s->tuples, e->peer);
	/* inode 0: a connection on this host still in its listener's accept
	 * queue (no file yet): its acceptor is here, and a client's requests
	 * to it are no output of the client's */
	return t && (!t->ino || gp_keytab_find(&s->owners, t->ino) != NULL);
}

static void count_bytes(struct gp_sockproc *p, const struct sockent *e, double t)
{
	struct gp_sockets *s = p->s;
	bool made;
	struct owned *o = gp_keytab_put(&s->owners, e->ino, &made);
	if (!o)
		return;
	if (!made && o->pid != p->pid && o->dump == s->tick)
		return; /* shared with a process that counted it this tick (inherited) */
	if (made) {
		o->pid = p->pid;
		/* a connection new since the last read that received and sent
		 * nothing back holds a request from about now */
		o->pending_since = e->received && !e->acked && !p->first ? t : -1;
		/* Born since this process was last read: all it carried is new;
		 * at its first read, what it held is where counting starts. */
		if (p->first) {
			o->acked = e->acked;
			o->received = e->received;
		}
	}
	o->pid = p->pid;
	o->dump = s->tick;
	if (!e->have_bytes) {
		o->acked = e->acked;
		o->received = e->received;
		return;
	}
	/* Between two processes of the trace (a server and the load
	 * generator traced with it): the server's answers are work, the
	 * client's requests are not, and what either receives is the other's
	 * bytes -- counted once, as the answers of the side that accepted
	 * (its local port is one a socket listens on). */
	bool internal = peer_is_traced(s, e);
	bool server = gp_keytab_find(&s->lports, e->lport) != NULL;
	if (internal && !server) { /* a traced client's side */
		o->acked = e->acked;
		o->received = e->received;
		return;
	}
	if (e->received > o->received && o->pending_since < 0)
		o->pending_since = t;
	/* Where the kernel counts every call (count_flows), tcp_info's
	 * counters only say whether a request waits. */
	if (e->acked > o->acked) {
		if (!p->watched)
			p->tot.tx += e->acked - o->acked;
		o->pending_since = -1; /* answered (a partial answer counts) */
	}
	if (e->received > o->received && !internal && !p->watched)
		p->tot.rx += e->received - o->received;
	o->acked = e->acked;
	o->received = e->received;
	if (o->pending_since >= 0) {
		p->tot.pending++;
		if (t - o->pending_since > p->tot.pending_s)
			p->tot.pending_s = t - o->pending_since;
	}
}

/* ---- what the kernel counted (sockflow.h) --------------------------------- */

/* Which side of its connection a counted socket is, and whether the
 * other side is a traced process: as count_bytes decides for a live TCP
 * socket, from the socket itself while it lives; once closed, from its
 * ports (a client's connection to a port a traced process listens on is
 * internal) or, for unix, its address (the named side accepted). */
static void flow_sides(const struct gp_sockets *s, const struct gp_flowent *f, bool *server,
		       bool *internal)
{
	const struct sockent *e = gp_keytab_find(&s->socks, f->ino);
	if (f->family == AF_UNIX) {
		*server = f->named;
		*internal = e && e->peer && gp_keytab_find(&s->held, e->peer);
		return;
	}
	uint64_t lp = ((uint64_t)f->family << 16 | f->lport) + 1;
	uint64_t rp = ((uint64_t)f->family << 16 | f->rport) + 1;
	*server = gp_keytab_find(&s->lports, lp) || gp_keytab_find(&s->tlports, lp);
	/* A client's connection to a port some traced process listens on is
	 * internal whether or not the server's side was read yet: children
	 * are read before their parents, and the connection a traced load
	 * generator opened since the last tick has its server side accepted
	 * but not yet counted (owners) -- its request read as output once. */
	*internal = (e && e->kind == K_TCP && peer_is_traced(s, e))
		    || (!*server && gp_keytab_find(&s->tlports, rp) != NULL);
}

/* Its closed pipes' fds go (an fd number is used again). */
static void prune_pipefds(struct gp_sockproc *p)
{
	bool made;
	struct gp_keytab kept;
	gp_keytab_init(&kept, sizeof(struct pipefd));
	for (size_t i = 0; i < p->pipefds.cap; i++) {
		const struct pipefd *o = gp_keytab_slot(&p->pipefds, i);
		struct pipefd *k;
		if (o->key && o->tick + 8 >= p->s->tick && (k = gp_keytab_put(&kept, o->key, &made)))
			*k = *o;
	}
	gp_keytab_free(&p->pipefds);
	p->pipefds = kept;
	gp_keytab_init(&kept, sizeof(struct pipeend));
	for (size_t i = 0; i < p->pipeends.cap; i++) {
		const struct pipeend *o = gp_keytab_slot(&p->pipeends, i);
		struct pipeend *k;
		if (o->ino && o->tick + 8 >= p->s->tick && (k = gp_keytab_put(&kept, o->ino, &made)))
			*k = *o;
	}
	gp_keytab_free(&p->pipeends);
	p->pipeends = kept;
}

/* Every byte the kernel counted on the process's stream sockets since
 * the last read, live or closed since (datagrams are left out: a
 * resolver's lookups are no answers), added as count_bytes adds
 * tcp_info's: a traced client's requests to a traced server are not
 * output, the server's answers are. */
static void count_flows(struct gp_sockproc *p, double t)
{
	struct gp_sockets *s = p->s;
	size_t n = gp_sockflow_of(s->flow, t, p->pid, &p->flows, &p->flowcap);
	if (n)
		p->tot.have = true;
	for (size_t i = 0; i < n; i++) {
		const struct gp_flowent *f = &p->flows[i];
		const struct pipeend *pe = f->pipe ? gp_keytab_find(&p->pipeends, f->ino) : NULL;
		bool self_pipe = pe && pe->ends == 3 && pe->tick == s->tick;
		if (!self_pipe && f->type != SOCK_STREAM && f->type != SOCK_SEQPACKET)
			continue; /* any other pipe stays in rchar/wchar: a pipeline's bytes are work */
		bool made;
		struct counted *c = gp_keytab_put(&p->counted, f->ino, &made);
		if (!c)
			continue;
		uint64_t dtx = f->tx, drx = f->rx, diotx = f->io_tx, diorx = f->io_rx;
		uint64_t diow = f->io_writes, dior = f->io_reads;
		if (!made && c->gen == f->gen) {
			diow = f->io_writes >= c->io_w ? f->io_writes - c->io_w : 0;
			dior = f->io_reads >= c->io_r ? f->io_reads - c->io_r : 0;
			dtx = f->tx >= c->tx ? f->tx - c->tx : 0;
			drx = f->rx >= c->rx ? f->rx - c->rx : 0;
			diotx = f->io_tx >= c->io_tx ? f->io_tx - c->io_tx : 0;
			diorx = f->io_rx >= c->io_rx ? f->io_rx - c->io_rx : 0;
		}
		c->gen = f->gen;
		c->tx = f->tx;
		c->rx = f->rx;
		c->io_tx = f->io_tx;
		c->io_rx = f->io_rx;
		c->io_w = f->io_writes;
		c->io_r = f->io_reads;
		c->tick = s->tick;
		/* Its write()/read() bytes are in its own /proc/PID/io too,
		 * internal or not: the model takes them out of rchar/wchar,
		 * so that a socket's bytes count once, by the rules below (a
		 * traced Go client's requests, written with write(2), were
		 * output: go-hung read "write() +217 B/s", issue 32).  So do
		 * those of a pipe whose both ends the process holds itself: a
		 * runtime waking its own poller (Go's netpollBreak writes one
		 * byte, go1.19 runtime/netpoll_epoll.go) is no output; a
		 * pipeline's pipes between processes stay in: their bytes
		 * are its work.  Only the process's own calls: a child forked
		 * since the last read is counted under it, its io is not. */
		if (f->tgid == p->pid) {
			p->tot.io_tx += diotx;
			p->tot.io_rx += diorx;
			p->tot.io_writes += diow;
			p->tot.io_reads += dior;
		}
		if (self_pipe)
			continue;
		bool server, internal;
		flow_sides(s, f, &server, &internal);
		if (internal && !server)
			continue;
		p->tot.tx += dtx;
		if (!internal)
			p->tot.rx += drx;
	}
	if (s->tick % 64 == 0) { /* closed sockets' entries go */
		bool made;
		struct gp_keytab kept;
		gp_keytab_init(&kept, sizeof(struct counted));
		for (size_t i = 0; i < p->counted.cap; i++) {
			const struct counted *o = gp_keytab_slot(&p->counted, i);
			struct counted *k;
			if (o->ino && o->tick + 8 >= s->tick && (k = gp_keytab_put(&kept, o->ino, &made)))
				*k = *o;
		}
		gp_keytab_free(&p->counted);
		p->counted = kept;
		prune_pipefds(p);
	}
	struct gp_connects cn;
	if (gp_sockflow_connects(s->flow, p->pid, &cn)) {
		p->tot.have = true;
		p->tot.conn_refused = cn.refused;
		p->tot.conn_failed = cn.failed;
		p->tot.conn_ok = cn.ok;
		p->tot.conn_errno = cn.last_errno;
		snprintf(p->tot.conn_to, sizeof p->tot.conn_to, "%s", cn.to);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

bool gp_sockproc_read(struct gp_sockproc *p, double t, struct gp_sock_totals *out)
{
	struct gp_sockets *s = p->s;
	/* bench/trace-cost.sh's baseline row: the same trace without this
	 * reader, side by side (not a user's option). */
	static int off = -1;
	if (off < 0)
		off = getenv("GPUPROBE_BENCH_NO_SOCKETS") != NULL;
	if (off || !p->root->live || !begin_tick(s, t) || !list_inodes(p)) {
		*out = p->tot;
		out->have = false;
		return false;
	}
	struct gp_sock_totals *tot = &p->tot;
	tot->have = false;
	tot->conns = tot->listeners = tot->backlog = 0;
	tot->unread = tot->unsent = 0;
	tot->pending = 0;
	tot->pending_s = 0;
	/* One socket on two fds (dup, or inherited twice) counts once. */
	if (p->n > 1)
		qsort(p->inos, p->n, sizeof *p->inos, cmp_u64);
	find_tcp(s, p->inos, p->n);
	for (size_t i = 0; i < p->n; i++) {
		if (i && p->inos[i] == p->inos[i - 1])
			continue;
		const struct sockent *e = gp_keytab_find(&s->socks, p->inos[i]);
		if (!e || e->kind == K_OTHER)
			continue;
		tot->have = true;
		stamp(&s->held, e->ino, s->tick);
		if (e->kind == K_TCP_LISTEN)
			stamp(&s->tlports, e->lport, s->tick);
		if (e->kind == K_TCP_LISTEN || e->kind == K_UNIX_LISTEN) {
			tot->listeners++;
			tot->backlog += e->rq;
			continue;
		}
		tot->conns++;
		tot->unread += e->rq;
		tot->unsent += e->wq;
		if (e->kind == K_TCP)
			count_bytes(p, e, t);
	}
	if (p->watched)
		count_flows(p, t);
	p->first = false;
	*out = *tot;
	return tot->have;
}
