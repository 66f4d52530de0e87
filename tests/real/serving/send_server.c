/* A C server that answers requests with send()/recv() (issue 32, rows 1, 3, 11).
 *
 * "send-server" accepts one connection at a time, recv()s a request up to
 * its blank line and send()s 1000 bytes back: nothing goes through
 * read()/write(), so /proc/PID/io's rchar/wchar never move.  "loadgen" (a
 * child, poll()-driven) opens a new connection every 0.5 s, sends a request
 * and reads its answer.
 *
 *   send_server [tree]            server + loadgen child.  Truth: progress.
 *   send_server server PORTFILE   server alone, its port written to PORTFILE.
 *   send_server client PORT       the loadgen alone.
 *   send_server idle              server, no client.  Truth: idle (waits in
 *                                 accept() for input from outside).
 *   send_server stuck             server + loadgen; from the 4th request on the
 *                                 handler calls reload_model(), which sleeps an
 *                                 hour: the loop never accepts again, the backlog
 *                                 fills and the accepted client waits in recv().
 *                                 Truth: a hang (hang-blocked), the sleeping
 *                                 frame reload_model named.
 */
#define _GNU_SOURCE
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

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A new connection every 1/rate s; replies read on poll(); up to 512 open. */
static void loadgen(int port, double rate)
{
	struct pollfd fds[512];
	int n = 0, i = 0;
	double next = now();
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	prctl(PR_SET_NAME, "loadgen");
	for (;;) {
		if (now() >= next && n < 512) {
			int s = socket(AF_INET, SOCK_STREAM, 0);
			char req[128];
			int len = snprintf(req, sizeof req,
					   "GET /generate?i=%d HTTP/1.1\r\nHost: x\r\n\r\n", i++);
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

__attribute__((noinline)) static void reload_model(void)
{
	sleep(3600);
	__asm__ volatile("" ::: "memory");
}

static int stuck, served;

static void handle(int c)
{
	char buf[4096], reply[1100];
	size_t got = 0;
	ssize_t r;
	while (got < sizeof buf - 1 && (r = recv(c, buf + got, sizeof buf - 1 - got, 0)) > 0) {
		got += r;
		buf[got] = 0;
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	if (stuck && ++served > 3)
		reload_model();
	int len = snprintf(reply, sizeof reply,
			   "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
	memset(reply + len, 'x', 1000);
	send(c, reply, len + 1000, MSG_NOSIGNAL);
	close(c);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "tree";
	if (!strcmp(mode, "client") && argc > 2) {
		loadgen(atoi(argv[2]), 2);
		return 0;
	}
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a;
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 8) ||
	    getsockname(l, (struct sockaddr *)&a, &al)) {
		perror("send_server: listen");
		return 1;
	}
	int port = ntohs(a.sin_port);
	stuck = !strcmp(mode, "stuck");
	if (!strcmp(mode, "server") && argc > 2) {
		char tmp[4096];
		snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
		FILE *f = fopen(tmp, "w");
		if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f) || rename(tmp, argv[2])) {
			perror("send_server: portfile");
			return 1;
		}
	} else if (strcmp(mode, "idle")) {
		pid_t p = fork();
		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(l);
			loadgen(port, 2);
		}
	}
	prctl(PR_SET_NAME, "send-server");
	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c >= 0)
			handle(c);
	}
}
