/* A HotSpot JVM's threads told apart by their stacks (jvmthreads.h).
 *
 * The facts relied on, read in OpenJDK 17's sources (jdk17u, the JVM the
 * real cases run; the same in 11 and 21):
 *  - JavaThread::thread_main_inner (share/runtime/thread.cpp) sets the
 *    native name of every thread started by Thread.start from its Java
 *    name before it runs; os::set_native_thread_name (os/linux/os_linux.cpp)
 *    truncates it to 15 characters.  The main thread is attached by the
 *    launcher (JNI_CreateJavaVM) and keeps the process's name.
 *  - LockSupport.park is Unsafe.park, whose native Unsafe_Park
 *    (share/prims/unsafe.cpp) calls Parker::park; Parker::park
 *    (os/posix/os_posix.cpp) sleeps in pthread_cond_wait when its time is
 *    0 (no deadline) and pthread_cond_timedwait otherwise.  ReentrantLock,
 *    the j.u.c queues and CompletableFuture.get all park there.
 *  - Entering a contended synchronized block is ObjectMonitor::enter ->
 *    EnterI (share/runtime/objectMonitor.cpp); EnterI parks the monitor's
 *    "responsible" thread with a timeout (recheckInterval, up to
 *    MAX_RECHECK_INTERVAL ms) against a stranded wakeup, the others
 *    without: either way the Java-level wait has no timeout.
 *  - Object.wait is JVM_MonitorWait (share/prims/jvm.cpp) ->
 *    ObjectMonitor::wait, which parks without a timeout for millis <= 0
 *    and with one otherwise; Thread.join waits there.  Thread.sleep is
 *    JVM_Sleep.
 *  - The JVM's own threads wait in its internal primitives:
 *    os::PlatformMonitor::wait (VMThread::wait_for_operation,
 *    CompileQueue::get, WatcherThread::sleep, the service threads),
 *    PosixSemaphore::wait (GC workers, os::signal_wait), and the JDK's own
 *    Java threads (Finalizer, Common-Cleaner, Reference Handler) in
 *    Object.wait or JVM_WaitForReferencePendingList. */
#include "config.h"
#include "jvmthreads.h"

#include <string.h>

static bool any_frame(const char (*frames)[64], unsigned n, const char *word)
{
	for (unsigned i = 0; i < n; i++)
		if (strstr(frames[i], word))
			return true;
	return false;
}

bool gp_jvm_own_name(const char *comm)
{
	/* Threads the JVM or the JDK's library start for themselves, as
	 * their Java names read cut to 15 characters. */
	static const char *const exact[] = { "Reference Handl", "Finalizer", "Signal Dispatch",
		"Common-Cleaner", "Attach Listener", "Notification Th", "Service Thread",
		"Monitor Deflati", "VM Periodic Tas", "Sweeper thread", "VM Thread",
		"process reaper", "Java2D Disposer", "Surrogate Locke", NULL };
	static const char *const prefix[] = { "GC Thread#", "G1 ", "JFR ", "RMI ",
		"Keep-Alive-", NULL };
	if (!comm)
		return false;
	for (size_t i = 0; exact[i]; i++)
		if (!strcmp(comm, exact[i]))
			return true;
	for (size_t i = 0; prefix[i]; i++)
		if (!strncmp(comm, prefix[i], strlen(prefix[i])))
			return true;
	/* "C1 CompilerThre", "C2 CompilerThre", "JVMCI CompilerT" */
	return strstr(comm, "CompilerT") != NULL;
}

/* How the tracer counted the wait (tracer/waitprobe.c): a futex with a
 * timeout is a condition with a timeout, one without is a lock; glibc's
 * timed waits are the ones named so (__futex_abstimed_wait_common serves
 * both, its callers tell). */
static enum gp_wait counted_wait(const char (*frames)[64], unsigned n, const char *syscall)
{
	static const char *const input[] = { "accept", "accept4", "read", "recvfrom", "recvmsg",
		"poll", "ppoll", "epoll_wait", "epoll_pwait", "select", "pselect6", NULL };
	if (syscall && *syscall && strcmp(syscall, "futex")) {
		for (size_t i = 0; input[i]; i++)
			if (!strcmp(syscall, input[i]))
				return GP_WAIT_INPUT;
		if (!strcmp(syscall, "nanosleep") || !strcmp(syscall, "clock_nanosleep"))
			return GP_WAIT_TIMER;
		return GP_WAIT_NONE;
	}
	bool futex = any_frame(frames, n, "futex") || any_frame(frames, n, "pthread_cond_")
		     || any_frame(frames, n, "sem_wait") || any_frame(frames, n, "sem_timedwait")
		     || any_frame(frames, n, "sem_clockwait");
	if (!futex)
		return GP_WAIT_NONE;
	bool timed = any_frame(frames, n, "timedwait") || any_frame(frames, n, "clockwait");
	return timed ? GP_WAIT_CONDVAR : GP_WAIT_LOCK;
}

/* The user-code wait a frame names, innermost first: Object.wait before
 * the monitor re-entry inside it, the park under a ReentrantLock. */
static enum gp_jvm_role user_role(const char (*frames)[64], unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const char *f = frames[i];
		if (strstr(f, "JVM_MonitorWait"))
			return GP_JVM_WAIT;
		if (strstr(f, "JVM_Sleep"))
			return GP_JVM_SLEEP;
		if (strstr(f, "Unsafe_Park"))
			return GP_JVM_PARK;
		if (strstr(f, "ObjectMonitor::enter") || strstr(f, "ObjectMonitor::EnterI")
		    || strstr(f, "ObjectSynchronizer::enter") || strstr(f, "monitorenter")
		    || strstr(f, "complete_monitor_locking"))
			return GP_JVM_ENTER;
	}
	return GP_JVM_NONE;
}

void gp_jvm_classify(const char (*frames)[64], unsigned nframes, bool jvm, const char *comm,
		     const char *syscall, struct gp_jvm_thread *out)
{
	memset(out, 0, sizeof *out);
	out->counted = counted_wait(frames, nframes, syscall);
	out->meant = out->counted;
	/* A stripped libjvm names nothing: no role is guessed from it. */
	bool symbols = any_frame(frames, nframes, "::") || any_frame(frames, nframes, "JVM_")
		       || any_frame(frames, nframes, "Unsafe_");
	if (!jvm || !symbols)
		return;
	enum gp_jvm_role r = user_role(frames, nframes);
	if (gp_jvm_own_name(comm) || r == GP_JVM_NONE) {
		out->role = GP_JVM_RUNTIME;
		out->meant = GP_WAIT_NONE;
		return;
	}
	out->role = r;
	bool timed = any_frame(frames, nframes, "timedwait") || any_frame(frames, nframes, "clockwait");
	switch (r) {
	case GP_JVM_PARK:
	case GP_JVM_WAIT:
		out->timed = timed;
		out->meant = timed ? GP_WAIT_CONDVAR : GP_WAIT_LOCK;
		break;
	case GP_JVM_ENTER:
		out->meant = GP_WAIT_LOCK;
		break;
	case GP_JVM_SLEEP:
		out->timed = true;
		out->meant = GP_WAIT_TIMER;
		break;
	default:
		break;
	}
}
