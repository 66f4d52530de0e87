/* The bundle's jvm-threads.txt: a HotSpot JVM's own thread dump, with its
 * deadlock report, asked through its attach protocol as jstack does
 * (issue 32).  Only behind `bundle --jvm-threaddump`: asking makes the
 * JVM start its Attach Listener thread and a socket, which stay for the
 * JVM's life -- gpuprobe never changes what it probes by default, and the
 * MANIFEST says what this did.
 *
 * The protocol, as OpenJDK 17 keeps it (jdk.attach's
 * sun/tools/attach/VirtualMachineImpl.java on Linux, and HotSpot's
 * os/linux/attachListener_linux.cpp and share/services/attachListener.cpp):
 *  - the listener's socket is .java_pid<PID> in the target's temporary
 *    directory, PID as the target's own pid namespace numbers it;
 *  - when it is absent, the client creates .attach_pid<PID> in the
 *    target's working directory (else its /tmp) and sends SIGQUIT: the
 *    JVM's signal thread sees the file (owned by its own effective uid)
 *    and starts the listener instead of printing a dump; the client waits
 *    for the socket and removes the file;
 *  - the listener accepts only a peer of its own effective uid and gid
 *    (SO_PEERCRED): root takes the target's before it connects;
 *  - a request is "1" (the protocol version), the command and three
 *    arguments, each NUL-terminated: "threaddump" with "-l" adds the
 *    owners of java.util.concurrent locks ("Locked ownable
 *    synchronizers"); the answer is a result code line ("0") and the
 *    dump, ending with VM_FindDeadlocks' "Found one Java-level deadlock"
 *    report, then EOF.
 * SIGQUIT is sent only to a process that maps libjvm.so and catches
 * SIGQUIT (SigCgt in its status): a JVM run with -Xrs does not, and
 * would dump core and die of it. */
#include "config.h"
#include "bundle.h"
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define JVM_ATTACH_WAIT_S 8.0   /* jdk.attach waits up to 10 s (attachTimeout) */
#define JVM_ANSWER_WAIT_S 10.0

struct jvm_target {
	unsigned uid, gid;       /* effective */
	int nspid;               /* its pid in its own namespace */
	bool quit_caught;        /* SIGQUIT in SigCgt */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* uid, gid, NSpid and whether SIGQUIT is caught, from /proc/PID/status. */
static int read_target(const struct gp_root *root, int pid, struct jvm_target *t, char *why,
		       size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	size_t len = 0;
	char *st = gp_slurp(root, path, &len);
	if (!st) {
		snprintf(why, cap, "%s: %s", path, strerror(errno));
		return -1;
	}
	memset(t, 0, sizeof *t);
	t->nspid = pid;
	bool uid = false, gid = false;
	for (char *l = st; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned r, e;
		unsigned long long cgt;
		if (sscanf(l, "Uid: %u %u", &r, &e) == 2)
			t->uid = e, uid = true;
		else if (sscanf(l, "Gid: %u %u", &r, &e) == 2)
			t->gid = e, gid = true;
		else if (sscanf(l, "SigCgt: %llx", &cgt) == 1)
			t->quit_caught = (cgt >> (SIGQUIT - 1)) & 1;
		else if (!strncmp(l, "NSpid:", 6)) {
			/* the last number: the pid in the innermost namespace */
			const char *e2 = strchr(l, '\n');
			const char *p = e2 ? e2 : l + strlen(l);
			while (p > l && (p[-1] < '0' || p[-1] > '9'))
				p--;
			while (p > l && p[-1] >= '0' && p[-1] <= '9')
				p--;
			t->nspid = atoi(p);
		}
	}
	free(st);
	if (!uid || !gid || t->nspid <= 0) {
		snprintf(why, cap, "%s: no Uid, Gid or NSpid", path);
		return -1;
	}
	return 0;
}

static int maps_libjvm(const struct gp_root *root, int pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	size_t len = 0;
	char *maps = gp_slurp(root, path, &len);
	if (!maps)
		return -1;
	int found = strstr(maps, "/libjvm.so") != NULL;
	free(maps);
	return found;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof sa.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The listener's socket, started if absent: the attach file and SIGQUIT;
 * said: what was done to the target (the file's first lines). */
static int attach(int pid, const struct jvm_target *t, char *said, size_t said_cap, char *why,
		  size_t cap)
{
	char sock[128], trig[128];
	snprintf(sock, sizeof sock, "/proc/%d/root/tmp/.java_pid%d", pid, t->nspid);
	int fd = connect_to(sock);
	if (fd >= 0) {
		snprintf(said, said_cap, "its attach listener was running (%s)", sock);
		return fd;
	}
	if (!t->quit_caught) {
		snprintf(why, cap, "pid %d does not catch SIGQUIT (-Xrs?): not signalled", pid);
		return -1;
	}
	snprintf(trig, sizeof trig, "/proc/%d/cwd/.attach_pid%d", pid, t->nspid);
	int tf = open(trig, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (tf < 0) {
		snprintf(trig, sizeof trig, "/proc/%d/root/tmp/.attach_pid%d", pid, t->nspid);
		tf = open(trig, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	}
	if (tf < 0) {
		snprintf(why, cap, "%s: %s: the attach file cannot be made", trig, strerror(errno));
		return -1;
	}
	close(tf);
	snprintf(said, said_cap, "gpuprobe asked it to start its attach listener (%s, SIGQUIT): "
		 "the listener thread and %s stay for the JVM's life", trig, sock);
	if (kill(pid, SIGQUIT) < 0) {
		snprintf(why, cap, "kill(%d, SIGQUIT): %s", pid, strerror(errno));
		unlink(trig);
		return -1;
	}
	double t0 = now_s();
	while ((fd = connect_to(sock)) < 0 && now_s() - t0 < JVM_ATTACH_WAIT_S)
		usleep(100 * 1000);
	unlink(trig);
	if (fd < 0)
		snprintf(why, cap, "%s: %s after %.0f s: the JVM did not start its listener", sock,
			 strerror(errno), JVM_ATTACH_WAIT_S);
	return fd;
}

/* Writes the request, copies the answer to out, bounded in time. */
static int ask_threaddump(int fd, FILE *out, char *why, size_t cap)
{
	static const char req[] = "1\0threaddump\0-l\0\0";
	if (write(fd, req, sizeof req) != (ssize_t)sizeof req) {
		snprintf(why, cap, "writing the request: %s", strerror(errno));
		return -1;
	}
	char buf[8192];
	double t0 = now_s();
	size_t total = 0;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = (int)((JVM_ANSWER_WAIT_S - (now_s() - t0)) * 1000);
		if (left <= 0 || poll(&p, 1, left) <= 0) {
			snprintf(why, cap, "the answer did not end within %.0f s (%zu bytes kept)",
				 JVM_ANSWER_WAIT_S, total);
			return -1;
		}
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		fwrite(buf, 1, (size_t)n, out);
		total += (size_t)n;
	}
	return total ? 0 : (snprintf(why, cap, "the JVM answered nothing"), -1);
}

int gp_bundle_jvm(int pid, FILE *out, char *why, size_t cap)
{
	struct gp_root root;
	if (gp_root_open(&root, NULL) < 0) {
		snprintf(why, cap, "/: %s", strerror(errno));
		return 2;
	}
	struct jvm_target t;
	int jvm = maps_libjvm(&root, pid);
	int rc = jvm < 0 ? -1 : jvm ? read_target(&root, pid, &t, why, cap) : 0;
	gp_root_close(&root);
	if (jvm <= 0 || rc < 0) {
		if (jvm == 0)
			snprintf(why, cap, "pid %d maps no libjvm.so: not a HotSpot JVM", pid);
		else if (jvm < 0)
			snprintf(why, cap, "/proc/%d/maps: %s", pid, strerror(errno));
		return 2;
	}
	/* The listener talks only to its own uid and gid (SO_PEERCRED). */
	if (geteuid() == 0 && (t.gid != getegid() || t.uid != geteuid())
	    && (setegid(t.gid) < 0 || seteuid(t.uid) < 0)) {
		snprintf(why, cap, "taking uid %u gid %u: %s", t.uid, t.gid, strerror(errno));
		return 1;
	}
	char said[400] = "";
	int fd = attach(pid, &t, said, sizeof said, why, cap);
	if (fd < 0)
		return 1;
	fprintf(out, "HotSpot thread dump of pid %d, asked through its attach protocol "
		"(threaddump -l, as jstack -l); %s.\nThe first line is the listener's result code.\n\n",
		pid, said);
	rc = ask_threaddump(fd, out, why, cap);
	close(fd);
	return rc < 0 ? 1 : 0;
}
