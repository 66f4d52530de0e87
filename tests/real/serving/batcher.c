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
#include "common.h"
#include <pthread.h>

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
	recv_request(c, buf, sizeof buf);
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
	int port, l = listener(128, &port);
	if (l < 0) {
		perror("batcher: listen");
		return 1;
	}
	if (fork_child() == 0) {
		close(l);
		loadgen(port, 2, "GET /generate");
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
