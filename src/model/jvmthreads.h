/* A HotSpot JVM's threads told apart by their stacks (issue 32): the
 * threads the program's own code put to sleep -- parked, entering a
 * monitor, in Object.wait or Thread.sleep -- and the JVM's own (compiler,
 * GC, VM thread, service threads, the JDK's Finalizer and Cleaner), which
 * are the runtime at rest and never decide a verdict nor name its cause.
 *
 * What it reads is what a stack line holds: frame labels (symbols of
 * libjvm.so), the thread's comm (the JVM sets it from the Java name) and
 * the syscall it sleeps in.  Pure functions: tested without a JVM. */
#ifndef GP_JVMTHREADS_H
#define GP_JVMTHREADS_H

#include "waits.h"

#include <stdbool.h>

enum gp_jvm_role {
	GP_JVM_NONE,      /* not a JVM's thread, or one in native code (accept, read) */
	GP_JVM_RUNTIME,   /* the JVM's own, at rest or at work */
	GP_JVM_PARK,      /* LockSupport.park from user code: Unsafe_Park */
	GP_JVM_ENTER,     /* blocked entering a synchronized block: ObjectMonitor::enter */
	GP_JVM_WAIT,      /* Object.wait (a join, a wait()): JVM_MonitorWait */
	GP_JVM_SLEEP,     /* Thread.sleep: JVM_Sleep */
	GP_JVM_ROLES
};

struct gp_jvm_thread {
	enum gp_jvm_role role;
	bool timed;              /* the user's wait has a timeout (parkNanos, wait(ms), sleep) */
	/* How the tracer counted its wait (model/waits.h), read from the
	 * same frames: a futex wait with a timeout is a condition with a
	 * timeout, one without is a lock; GP_WAIT_NONE where the frames do
	 * not say. */
	enum gp_wait counted;
	/* What that wait is, the JVM's semantics known: a monitor enter has
	 * no timeout whatever its park says, Thread.sleep is a timer, the
	 * JVM's own threads count for nothing (GP_WAIT_NONE). */
	enum gp_wait meant;
};

/* frames: labels, innermost first; jvm: the thread sleeps in libjvm.so
 * (its innermost frame outside the C library is libjvm's: a Java thread
 * in a socket's accept through libnio is not, whatever lies deeper);
 * syscall: the name of the call it sleeps in ("futex", "accept"),
 * or NULL. */
void gp_jvm_classify(const char (*frames)[64], unsigned nframes, bool jvm, const char *comm,
		     const char *syscall, struct gp_jvm_thread *out);

/* The JDK's own Java threads, by their native names (15 characters):
 * they run the library's code (reference processing, cleaners, signal
 * dispatch), not the program's. */
bool gp_jvm_own_name(const char *comm);

#endif
