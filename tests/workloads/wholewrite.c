/* A writer and a reader that trust POSIX, the truth beside "a stop must
 * not change what the target sees" (issue 27).
 *
 *   wholewrite KIND ROUNDS BYTES CHUNK PAUSE_MS
 *
 * KIND: pipe, unix (a stream socketpair, send/recv) or tcp (loopback).
 * The parent writes ROUNDS blocks of BYTES, each in ONE call (write() on
 * a pipe, send() on a socket), and sleeps 20 ms between blocks.  A
 * blocking pipe write of any size returns the whole count unless a caught
 * signal interrupts it (pipe(7), write(2)); no signal is caught here, so
 * a short count is exit 3.  The child reads CHUNK bytes at a time
 * (recv with MSG_WAITALL on sockets: whole unless a caught signal, EOF or
 * an error, recv(2); a short one before EOF is exit 5), pausing PAUSE_MS
 * between reads so that the writer sits blocked in mid-transfer, and
 * checks every byte of the stream by its position (byte i is
 * (i * 131 + 7) & 255): a lost, doubled or torn byte is exit 4.
 * Prints "wholewrite: done N bytes" when all is whole. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned char expect(unsigned long long i)
{
	return (unsigned char)((i * 131 + 7) & 255);
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int reader(int fd, int sock, size_t chunk, long pause_ms, unsigned long long total)
{
	unsigned char *buf = malloc(chunk);
	unsigned long long at = 0;
	if (!buf)
		return 99;
	for (;;) {
		ssize_t n = sock ? recv(fd, buf, chunk, MSG_WAITALL) : read(fd, buf, chunk);
		if (n < 0) {
			fprintf(stderr, "wholewrite: reader: %s\n", strerror(errno));
			return 6;
		}
		if (n == 0)
			break;
		for (ssize_t k = 0; k < n; k++, at++)
			if (buf[k] != expect(at)) {
				fprintf(stderr, "wholewrite: byte %llu is %u, not %u\n", at, buf[k],
					expect(at));
				return 4;
			}
		if (sock && (size_t)n < chunk && at < total) {
			fprintf(stderr, "wholewrite: short recv(MSG_WAITALL): %zd of %zu at %llu\n",
				n, chunk, at);
			return 5;
		}
		if (pause_ms)
			nap_ms(pause_ms);
	}
	free(buf);
	if (at != total) {
		fprintf(stderr, "wholewrite: read %llu bytes of %llu\n", at, total);
		return 4;
	}
	return 0;
}

static int connect_pair(const char *kind, int sv[2])
{
	if (!strcmp(kind, "pipe"))
		return pipe(sv);
	if (!strcmp(kind, "unix"))
		return socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	if (strcmp(kind, "tcp"))
		return -1;
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a;
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1)
	    || getsockname(l, (struct sockaddr *)&a, &al))
		return -1;
	sv[1] = socket(AF_INET, SOCK_STREAM, 0);
	if (sv[1] < 0 || connect(sv[1], (struct sockaddr *)&a, sizeof a))
		return -1;
	sv[0] = accept(l, NULL, NULL);
	close(l);
	return sv[0] < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: wholewrite pipe|unix|tcp ROUNDS BYTES CHUNK PAUSE_MS\n");
		return 2;
	}
	const char *kind = argv[1];
	int rounds = atoi(argv[2]);
	size_t bytes = strtoul(argv[3], NULL, 0), chunk = strtoul(argv[4], NULL, 0);
	long pause_ms = atol(argv[5]);
	int sock = strcmp(kind, "pipe") != 0;
	int sv[2]; /* [0] read end, [1] write end */
	if (rounds <= 0 || !bytes || !chunk || connect_pair(kind, sv) != 0) {
		fprintf(stderr, "wholewrite: bad arguments or %s: %s\n", kind, strerror(errno));
		return 2;
	}
	unsigned long long total = (unsigned long long)rounds * bytes;
	pid_t child = fork();
	if (child == 0) {
		close(sv[1]);
		_exit(reader(sv[0], sock, chunk, pause_ms, total));
	}
	close(sv[0]);
	unsigned char *buf = malloc(bytes);
	if (!buf || child < 0)
		return 99;
	unsigned long long at = 0;
	for (int r = 0; r < rounds; r++) {
		for (size_t k = 0; k < bytes; k++)
			buf[k] = expect(at + k);
		ssize_t n = sock ? send(sv[1], buf, bytes, 0) : write(sv[1], buf, bytes);
		if (n != (ssize_t)bytes) {
			fprintf(stderr, "wholewrite: short %s: %zd of %zu bytes (round %d)\n",
				sock ? "send" : "write", n, bytes, r);
			kill(child, SIGKILL);
			free(buf);
			return 3;
		}
		at += bytes;
		nap_ms(20);
	}
	free(buf);
	close(sv[1]);
	int st;
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "wholewrite: the reader failed (status %d)\n",
			WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		return WIFEXITED(st) ? WEXITSTATUS(st) : 4;
	}
	printf("wholewrite: done %llu bytes\n", total);
	return 0;
}
