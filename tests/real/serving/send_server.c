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
#include "common.h"

__attribute__((noinline)) static void reload_model(void)
{
	sleep(3600);
	__asm__ volatile("" ::: "memory");
}

static int stuck, served;

static void handle(int c)
{
	char buf[4096], reply[1100];
	recv_request(c, buf, sizeof buf);
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
		loadgen(atoi(argv[2]), 2, "GET /generate");
		return 0;
	}
	int port, l = listener(8, &port);
	if (l < 0) {
		perror("send_server: listen");
		return 1;
	}
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
		if (fork_child() == 0) {
			close(l);
			loadgen(port, 2, "GET /generate");
		}
	}
	prctl(PR_SET_NAME, "send-server");
	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c >= 0)
			handle(c);
	}
}
