/* A mutex whose holder does not exist in the waiter's process (issue
 * 32: "for a lock inherited held across fork, say that its holder does
 * not exist in that process").
 *
 *   fork-held fork|exit|atfork
 *
 * fork    a "logger" thread holds log_lock most of the time; main forks a
 *         worker, whose first lock of it waits for ever: the mutex's owner
 *         field names the logger, a thread of the parent only (fork(2):
 *         the child has one thread).  The parent waits for the worker.
 * exit    a thread takes log_lock and ends holding it; main's lock waits
 *         for ever (an owner that exited).
 * atfork  as fork, but a pthread_atfork handler takes the lock before the
 *         fork and releases it in both processes after: the worker logs
 *         and exits 0, and so does the parent.  The control. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void *logger(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "logger");
	for (;;) {
		pthread_mutex_lock(&log_lock);
		usleep(200000); /* holds it most of the time */
		pthread_mutex_unlock(&log_lock);
		usleep(1000);
	}
	return NULL;
}

static void *quitter(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "quitter");
	pthread_mutex_lock(&log_lock);
	return NULL; /* ends holding it */
}

static void take(void) { pthread_mutex_lock(&log_lock); }
static void give(void) { pthread_mutex_unlock(&log_lock); }

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "fork";
	pthread_t t;
	if (!strcmp(how, "exit")) {
		pthread_create(&t, NULL, quitter, NULL);
		pthread_join(t, NULL);
		pthread_mutex_lock(&log_lock); /* never returns */
		return 0;
	}
	if (!strcmp(how, "atfork"))
		pthread_atfork(take, give, give);
	pthread_create(&t, NULL, logger, NULL);
	usleep(50000);
	pid_t c = fork();
	if (c == 0) {
		prctl(PR_SET_NAME, "worker");
		pthread_mutex_lock(&log_lock); /* fork: never returns */
		pthread_mutex_unlock(&log_lock);
		_exit(0);
	}
	int st = 0;
	waitpid(c, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
