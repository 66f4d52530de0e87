/* What the C programs of tests/real/serving/ share (send_server.c,
 * dead_engine.c, batcher.c include it; each is built alone from its .c,
 * hooks.sh's serving_cc): the clock, a listening socket, a child that
 * dies with its parent, a request read up to its blank line, and the
 * load generator.  Static functions, each used by some of the programs
 * only (hence "unused" for the others). */
#ifndef SERVING_COMMON_H
#define SERVING_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SERVING_UNUSED __attribute__((unused))

SERVING_UNUSED static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A TCP socket listening on 127.0.0.1 with BACKLOG, on a port the kernel
 * picks (stored in *PORT); -1 with errno set on failure. */
SERVING_UNUSED static int listener(int backlog, int *port)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a;
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, backlog) ||
	    getsockname(l, (struct sockaddr *)&a, &al)) {
		int e = errno;
		if (l >= 0)
			close(l);
		errno = e;
		return -1;
	}
	*port = ntohs(a.sin_port);
	return l;
}

/* fork(); the child dies with its parent (PR_SET_PDEATHSIG, SIGKILL). */
SERVING_UNUSED static pid_t fork_child(void)
{
	pid_t p = fork();
	if (p == 0)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	return p;
}

/* recv() from C into BUF (SIZE bytes, kept NUL-terminated) up to the blank
 * line that ends a request's head, the peer's EOF, or a full BUF. */
SERVING_UNUSED static size_t recv_request(int c, char *buf, size_t size)
{
	size_t got = 0;
	ssize_t r;
	while (got < size - 1 && (r = recv(c, buf + got, size - 1 - got, 0)) > 0) {
		got += r;
		buf[got] = 0;
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	return got;
}

#define LOADGEN_MAXC 512

/* The load generator, named "loadgen": a new connection to 127.0.0.1:PORT
 * every 1/RATE s, each sending "TARGET?i=N HTTP/1.1" (TARGET: a method and
 * a path); the answers read on poll() until the server closes; up to
 * LOADGEN_MAXC open.  Never returns. */
SERVING_UNUSED static void loadgen(int port, double rate, const char *target)
{
	struct pollfd fds[LOADGEN_MAXC];
	int n = 0, i = 0;
	double next = now();
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	prctl(PR_SET_NAME, "loadgen");
	for (;;) {
		if (now() >= next && n < LOADGEN_MAXC) {
			int s = socket(AF_INET, SOCK_STREAM, 0);
			char req[128];
			int len = snprintf(req, sizeof req, "%s?i=%d HTTP/1.1\r\nHost: x\r\n\r\n",
					   target, i++);
			if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0 &&
			    send(s, req, len, MSG_NOSIGNAL) == len) {
				fds[n].fd = s;
				fds[n++].events = POLLIN;
			} else if (s >= 0) {
				close(s);
			}
			next += 1 / rate;
		}
		int ms = (int)((next - now()) * 1000);
		if (poll(fds, n, ms > 0 ? ms : 0) <= 0)
			continue;
		for (int k = 0; k < n; k++) {
			char buf[4096];
			if (!fds[k].revents)
				continue;
			if (recv(fds[k].fd, buf, sizeof buf, 0) > 0)
				continue;
			close(fds[k].fd);
			fds[k--] = fds[--n];
		}
	}
}

#endif
