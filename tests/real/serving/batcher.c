/* A threaded C server whose batcher thread died (issue 32, row 4).
 *
 * "api-server" accepts connections and starts a handler thread for each;
 * the handler recv()s the request, queues a job and waits on the job's
 * condition variable; one "batcher" thread answers the queue every 20 ms.
 * "loadgen" (a child) opens a connection every 0.5 s and waits for its answer.
 *
 *   batcher                 Truth: progress.
 *   batcher --die-after S   at +S s the batcher leaves (pthread_exit on an
 *                           error path): every handler waits in
 *                           pthread_cond_wait for ever; clients keep coming.
 *                           Truth: a hang (hang-blocked): the handlers wait on
 *                           a condition only the batcher, gone since +S s,
 *                           would signal; named.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
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

struct job { struct job *next; int done; char answer[64]; pthread_cond_t cv; };
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct job *queue;
static double start, die_after = -1;

static void *batcher(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "batcher");
	for (;;) {
		usleep(20000);
		if (die_after >= 0 && now() - start >= die_after)
			pthread_exit(NULL);	/* an error path that only returns */
		pthread_mutex_lock(&mu);
		for (struct job *j = queue; j; j = j->next) {
			snprintf(j->answer, sizeof j->answer, "answer %p", (void *)j);
			j->done = 1;
			pthread_cond_signal(&j->cv);
		}
		queue = NULL;
		pthread_mutex_unlock(&mu);
	}
}

static void *handler(void *arg)
{
	int c = (int)(long)arg;
	char buf[4096], reply[200];
	size_t got = 0;
	ssize_t r;
	while (got < sizeof buf - 1 && (r = recv(c, buf + got, sizeof buf - 1 - got, 0)) > 0) {
		got += r;
		buf[got] = 0;
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	struct job j = { .cv = PTHREAD_COND_INITIALIZER };
	pthread_mutex_lock(&mu);
	j.next = queue;
	queue = &j;
	while (!j.done)
		pthread_cond_wait(&j.cv, &mu);
	pthread_mutex_unlock(&mu);
	int len = snprintf(reply, sizeof reply, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s",
			   strlen(j.answer), j.answer);
	send(c, reply, len, MSG_NOSIGNAL);
	close(c);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--die-after"))
		die_after = atof(argv[2]);
	start = now();
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a;
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 128) ||
	    getsockname(l, (struct sockaddr *)&a, &al)) {
		perror("batcher: listen");
		return 1;
	}
	if (fork() == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(l);
		loadgen(ntohs(a.sin_port), 2);
	}
	prctl(PR_SET_NAME, "api-server");
	pthread_t t;
	pthread_create(&t, NULL, batcher, NULL);
	pthread_detach(t);
	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c < 0)
			continue;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&at, 256 << 10);
		pthread_create(&t, &at, handler, (void *)(long)c);
		pthread_attr_destroy(&at);
	}
}
