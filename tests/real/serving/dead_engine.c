/* A C frontend and its engine process over a socketpair, and a load
 * generator (issue 32, rows 1 and 2).
 *
 * "frontend" (one poll() loop) accepts clients, recv()s each request up to
 * its blank line, passes it to "engine" (a child, SOCK_SEQPACKET
 * socketpair) and send()s the engine's answer back: every byte moves by
 * send()/recv().  "loadgen" (another child) opens a connection every 0.5 s,
 * sends a request and waits for the answer.
 *
 *   dead_engine                      Truth: progress (every request answered).
 *   dead_engine --engine-dies-after S
 *       at +S s the engine is SIGKILLed (as the OOM killer does).  The
 *       frontend sees the socketpair close and drops the engine without
 *       failing anything, never reaps it (a zombie), and goes on accepting
 *       and reading requests that it keeps "until the engine is back".
 *       Truth: a hang, requests read and never answered, the engine's
 *       death (SIGKILL) named.
 */
#include "common.h"

#define MAXC 512

static void oom_kill(int sig)
{
	(void)sig;
	kill(getpid(), SIGKILL);
}

static void engine(int s, int dies_after)
{
	char buf[256];
	ssize_t r;
	prctl(PR_SET_NAME, "engine");
	if (dies_after) {
		signal(SIGALRM, oom_kill);
		alarm(dies_after);
	}
	while ((r = recv(s, buf, sizeof buf - 1, 0)) > 0) {
		double end = now() + 0.01;
		unsigned h = 5381;
		while (now() < end)
			for (int k = 0; k < 1000; k++)
				h = h * 33 + buf[k % r];
		int id = atoi(buf);
		int len = snprintf(buf, sizeof buf, "%d %08x", id, h);
		send(s, buf, len, MSG_NOSIGNAL);
	}
	_exit(0);
}

struct client { int fd; size_t got; int sent; char buf[1024]; };

int main(int argc, char **argv)
{
	int dies_after = argc > 2 && !strcmp(argv[1], "--engine-dies-after") ? atoi(argv[2]) : 0;
	int port, sp[2], l = listener(128, &port);
	if (l < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp)) {
		perror("dead_engine: setup");
		return 1;
	}
	if (fork_child() == 0) {
		close(l);
		close(sp[0]);
		engine(sp[1], dies_after);
	}
	close(sp[1]);
	if (fork_child() == 0) {
		close(l);
		close(sp[0]);
		loadgen(port, 2, "POST /v1/completions");
	}
	prctl(PR_SET_NAME, "frontend");
	static struct client c[MAXC];
	static struct pollfd p[MAXC + 2];
	int n = 0, eng = sp[0];
	for (;;) {
		p[0] = (struct pollfd){ .fd = l, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = eng, .events = POLLIN };
		for (int k = 0; k < n; k++)
			p[k + 2] = (struct pollfd){ .fd = c[k].sent ? -1 : c[k].fd, .events = POLLIN };
		if (poll(p, n + 2, -1) <= 0)
			continue;
		if ((p[0].revents & POLLIN) && n < MAXC) {
			int fd = accept(l, NULL, NULL);
			if (fd >= 0)
				c[n++] = (struct client){ .fd = fd };
		}
		if (p[1].revents) {
			char buf[256];
			ssize_t r = recv(eng, buf, sizeof buf - 1, 0);
			if (r <= 0) {
				/* The engine went away: forget it (the bug); the
				 * requests stay queued for its return. */
				close(eng);
				eng = -1;
			} else {
				buf[r] = 0;
				int id = atoi(buf);
				for (int k = 0; k < n; k++) {
					if (c[k].fd != id)
						continue;
					char reply[300];
					int len = snprintf(reply, sizeof reply,
							   "HTTP/1.1 200 OK\r\nContent-Length: %zd\r\n\r\n%s",
							   r, buf);
					send(c[k].fd, reply, len, MSG_NOSIGNAL);
					close(c[k].fd);
					c[k] = c[--n];
					break;
				}
			}
		}
		for (int k = 0; k < n; k++) {
			struct client *q = &c[k];
			if (q->sent || !p[k + 2].revents)
				continue;
			ssize_t r = recv(q->fd, q->buf + q->got, sizeof q->buf - 1 - q->got, 0);
			if (r <= 0) {
				close(q->fd);
				c[k--] = c[--n];
				continue;
			}
			q->got += r;
			q->buf[q->got] = 0;
			if (strstr(q->buf, "\r\n\r\n")) {
				char msg[32];
				int len = snprintf(msg, sizeof msg, "%d", q->fd);
				q->sent = 1;
				if (eng >= 0)
					send(eng, msg, len, MSG_NOSIGNAL);
			}
		}
	}
}
