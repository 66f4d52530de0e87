/* One read of NCCL's RAS service: the socket half (ras.h); what the
 * answer means is model/rasparse.c's. */
#include "config.h"
#include "ras.h"
#include "rasparse.h"
#include "parse.h"
#include "timeutil.h"
#include "procfs.h"
#include "waitfd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* An answer larger than this is no job status we can use (NCCL's is a
 * few KiB a communicator); reading stops there. */
#define RAS_MAX_ANSWER (4u << 20)

struct conn {
	int fd;
	double deadline;         /* gp_mono_now() seconds */
	char *buf;               /* received, not yet consumed */
	size_t len, cap;
	bool eof;
	char why[96];
};

/* Waits for events on the socket until the deadline; false: time is up
 * (why says so) or poll failed.  Up to GP_RAS_BUDGET_S of a service that
 * accepts and never answers: a late ptrace stop of the target is let go
 * meanwhile (waitfd.h; it sat 2.94 s stopped behind this wait). */
static bool wait_for(struct conn *c, short events)
{
	int n = gp_wait_fd(c->fd, events, c->deadline);
	if (n > 0)
		return true;
	if (n < 0)
		snprintf(c->why, sizeof c->why, "poll: %s", strerror(errno));
	else
		snprintf(c->why, sizeof c->why, "no answer within %.1f s", GP_RAS_BUDGET_S);
	return false;
}

static bool send_line(struct conn *c, const char *line)
{
	size_t len = strlen(line), done = 0;
	while (done < len) {
		if (!wait_for(c, POLLOUT))
			return false;
		/* MSG_NOSIGNAL: a peer that closed is an error here, not a
		 * SIGPIPE that kills the trace. */
		ssize_t n = send(c->fd, line + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0) {
			snprintf(c->why, sizeof c->why, "send: %s", strerror(errno));
			return false;
		}
		done += (size_t)n;
	}
	return true;
}

/* Reads more into the buffer; false on time up, error, or the bound. */
static bool read_more(struct conn *c)
{
	if (c->len + 4096 + 1 > c->cap) {
		if (c->cap >= RAS_MAX_ANSWER) {
			snprintf(c->why, sizeof c->why, "an answer over %u MiB", RAS_MAX_ANSWER >> 20);
			return false;
		}
		size_t cap = c->cap ? c->cap * 2 : 8192;
		char *b = realloc(c->buf, cap);
		if (!b) {
			snprintf(c->why, sizeof c->why, "out of memory");
			return false;
		}
		c->buf = b;
		c->cap = cap;
	}
	if (!wait_for(c, POLLIN))
		return false;
	ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len - 1, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n < 0) {
		snprintf(c->why, sizeof c->why, "recv: %s", strerror(errno));
		return false;
	}
	if (n == 0)
		c->eof = true;
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	return true;
}

/* One reply line (NCCL's rasRead: up to the newline) into line, taken
 * off the buffer; false on time up, EOF before a newline, or error. */
static bool read_line(struct conn *c, char *line, size_t cap)
{
	for (;;) {
		char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		if (nl) {
			size_t k = (size_t)(nl - c->buf);
			size_t m = k < cap - 1 ? k : cap - 1;
			memcpy(line, c->buf, m);
			line[m] = '\0';
			if (m && line[m - 1] == '\r')
				line[m - 1] = '\0';
			memmove(c->buf, nl + 1, c->len - k - 1);
			c->len -= k + 1;
			return true;
		}
		if (c->eof) {
			snprintf(c->why, sizeof c->why, "closed the connection mid-answer");
			return false;
		}
		if (!read_more(c))
			return false;
	}
}

/* A stranger's reply, quoted in a reason: printable, short. */
static void quote(char *dst, size_t cap, const char *s)
{
	size_t k = 0;
	for (; *s && k + 1 < cap; s++)
		dst[k++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
	dst[k] = '\0';
}

static int connect_local(struct conn *c, int port, const char **state)
{
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		snprintf(c->why, sizeof c->why, "socket: %s", strerror(errno));
		*state = "absent";
		return -1;
	}
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (connect(c->fd, (struct sockaddr *)&a, sizeof a) == 0)
		return 0;
	int e = errno;
	if (e == EINPROGRESS) {
		if (!wait_for(c, POLLOUT)) {
			*state = "no-answer";
			return -1;
		}
		socklen_t len = sizeof e;
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
			e = errno;
		if (e == 0)
			return 0;
	}
	*state = "absent";
	if (e == ECONNREFUSED)
		snprintf(c->why, sizeof c->why, "not listening on 127.0.0.1:%d", port);
	else
		snprintf(c->why, sizeof c->why, "127.0.0.1:%d: %s", port, strerror(e));
	return -1;
}

/* The exchange of ras.h; state and why say how it ended. */
static json_t *exchange(struct conn *c, const char **state, bool *json_format)
{
	char line[256], q[48];
	*state = "no-answer";
	if (!send_line(c, "CLIENT PROTOCOL 2\n") || !read_line(c, line, sizeof line))
		return NULL;
	if (strncasecmp(line, "SERVER PROTOCOL ", 16)) {
		quote(q, sizeof q, line);
		snprintf(c->why, sizeof c->why, "not NCCL's RAS: it said \"%s\"", q);
		*state = "garbage";
		return NULL;
	}
	/* The service's own wait for the other processes' data, per leg
	 * (client_support.cc: "timeout " sets client->timeout; 5 s by
	 * default): under our budget. */
	if (!send_line(c, "TIMEOUT 1\n") || !read_line(c, line, sizeof line))
		return NULL;
	if (strcasecmp(line, "OK")) {
		quote(q, sizeof q, line);
		snprintf(c->why, sizeof c->why, "TIMEOUT refused: \"%s\"", q);
		*state = "garbage";
		return NULL;
	}
	if (!send_line(c, "SET FORMAT json\n") || !read_line(c, line, sizeof line))
		return NULL;
	/* Before 2.28.7: "ERROR: Unknown command set format json" -- text. */
	*json_format = !strcasecmp(line, "OK");
	if (!send_line(c, "VERBOSE STATUS\n"))
		return NULL;
	while (!c->eof)
		if (!read_more(c)) {
			if (c->len) {
				char w[160];
				snprintf(w, sizeof w, "%.80s (after %zu bytes)", c->why, c->len);
				gp_strlcpy(c->why, w, sizeof c->why);
			}
			return NULL;
		}
	json_t *out = gp_ras_parse(c->buf ? c->buf : "", c->len, *json_format, c->why, sizeof c->why);
	*state = out ? "ok" : "garbage";
	return out;
}

json_t *gp_ras_read(int port, double t, double budget_s)
{
	struct conn c = { .fd = -1, .deadline = gp_mono_now() + budget_s };
	const char *state = "absent";
	bool json_format = false;
	json_t *got = NULL;
	if (connect_local(&c, port, &state) == 0)
		got = exchange(&c, &state, &json_format);
	if (c.fd >= 0)
		close(c.fd);
	free(c.buf);
	char addr[32];
	snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
	json_t *line = json_pack("{s:s, s:f, s:s, s:s}", "type", "ras", "t", t, "addr", addr,
				 "state", state);
	if (got) {
		json_object_set_new(line, "format", json_string(json_format ? "json" : "text"));
		json_object_update(line, got);
		json_decref(got);
	} else {
		json_object_set_new(line, "why", json_string(c.why[0] ? c.why : "no answer"));
	}
	return line;
}

/* The port of NCCL_RAS_ADDR ("host:port", NCCL's src/ras/ras.cc) in
 * pid's environment, else NCCL's default.  A host other than the local
 * one is said in where (it is still asked on 127.0.0.1: the bundle runs
 * on the rank's node). */
int gp_ras_port_of(const struct gp_root *root, int pid, char *where, size_t cap)
{
	char path[64];
	size_t len = 0;
	int port = GP_RAS_PORT_DEFAULT;
	snprintf(path, sizeof path, "/proc/%d/environ", pid);
	char *env = gp_slurp(root, path, &len);
	snprintf(where, cap, "the default port (NCCL_RAS_ADDR not set)");
	for (size_t i = 0; env && i < len; i += strlen(env + i) + 1) {
		const char *v = env + i;
		if (strncmp(v, "NCCL_RAS_ADDR=", 14))
			continue;
		v += 14;
		const char *colon = strrchr(v, ':');
		char *end = NULL;
		long p = colon ? strtol(colon + 1, &end, 10) : -1;
		if (colon && end && *end == '\0' && p > 0 && p <= 65535) {
			port = (int)p;
			snprintf(where, cap, "NCCL_RAS_ADDR=%s", v);
		} else {
			snprintf(where, cap, "NCCL_RAS_ADDR=%s has no port: the default", v);
		}
	}
	if (!env)
		snprintf(where, cap, "the default port (%s unreadable: %s)", path, strerror(errno));
	free(env);
	return port;
}
