/* A C client that retries a refused connection every second, for ever,
 * printing nothing (issue 32, row 5).
 *
 * It reserves a port (bound, never listen()ed: a connect to it is refused
 * at once) unless PORT is given, then connect_to_server() loops: socket(),
 * connect() -> ECONNREFUSED, close(), sleep(1).
 *
 * Truth: a hang that is retrying: "connect to 127.0.0.1:PORT refused N
 * times" -- never idle.
 *
 *   retry_connect [PORT]
 */
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

__attribute__((noinline)) static int connect_to_server(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	for (;;) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0)
			return s;
		if (s >= 0)
			close(s);
		sleep(1);
	}
}

int main(int argc, char **argv)
{
	int port = argc > 1 ? atoi(argv[1]) : 0;
	if (!port) {
		int hold = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t al = sizeof a;
		if (hold < 0 || bind(hold, (struct sockaddr *)&a, sizeof a) ||
		    getsockname(hold, (struct sockaddr *)&a, &al))
			return 1;
		port = ntohs(a.sin_port);
	}
	return connect_to_server(port) < 0;
}
