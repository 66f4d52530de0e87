/* A JVM's threads told apart by their stacks (model/jvmthreads.c) and
 * what the verdict makes of them (issue 32): the JVM's own threads
 * (compiler, GC, VM thread, service threads, Finalizer, Cleaner) never
 * decide the class nor the words; the Java threads parked or blocked from
 * user code are the ones named.  The stacks are those HotSpot 17 showed
 * in tests/real/serving's ReentrantAbba (frames innermost first). */
#include "config.h"
#include "unit.h"
#include "jvmthreads.h"
#include "stuck.h"
#include "verdict.h"
#include "verdict_text.h"

#include <jansson.h>
#include <stdarg.h>
#include <string.h>

#define PID 1000

/* A thread of a `stacks` line: libc's frames are libc's, the rest
 * libjvm's; "*" is a frame of JIT-compiled Java code. */
static json_t *jthread(int tid, const char *comm, const char *syscall, ...)
{
	json_t *frames = json_array();
	va_list ap;
	va_start(ap, syscall);
	for (const char *f; (f = va_arg(ap, const char *));) {
		if (!strcmp(f, "*")) {
			json_array_append_new(frames, json_pack("{s:s, s:b}", "pc", "0x7f00", "jit", 1));
			continue;
		}
		bool libc = !strncmp(f, "__", 2) || !strncmp(f, "pthread_", 8) || !strcmp(f, "accept");
		bool nio = !strncmp(f, "Java_", 5);
		bool jli = !strncmp(f, "CallJavaMain", 12) || !strncmp(f, "ContinueIn", 10)
			   || !strncmp(f, "JLI_", 4);
		const char *so = libc ? "libc.so.6" : nio ? "libnio.so" : jli ? "libjli.so" : "libjvm.so";
		char mod[64];
		snprintf(mod, sizeof mod, "/usr/lib/jvm/lib/%s", so);
		json_array_append_new(frames, json_pack("{s:s, s:s, s:s}", "symbol", f, "soname", so,
							"module", mod));
	}
	va_end(ap);
	return json_pack("{s:i, s:s, s:s, s:s, s:o}", "tid", tid, "comm", comm, "state", "S",
			 "syscall", syscall, "frames", frames);
}

#define FUTEX "futex(0x7f5d94019d78, FUTEX_WAIT_BITSET_PRIVATE)"
#define PARK(tid, name) jthread(tid, name, FUTEX, "__futex_abstimed_wait_common", \
	"pthread_cond_wait", "Parker::park(bool, long)", "Unsafe_Park", "*", "*", NULL)
#define MONITOR(tid, name) jthread(tid, name, FUTEX, "__futex_abstimed_wait_common", \
	"pthread_cond_timedwait", "os::PlatformEvent::park(long)", "ObjectMonitor::EnterI(JavaThread*)", \
	"ObjectMonitor::enter(JavaThread*)", "ObjectSynchronizer::enter(Handle, BasicLock*, JavaThread*)", \
	"InterpreterRuntime::monitorenter(JavaThread*, BasicObjectLock*)", "*", NULL)
#define OBJWAIT(tid, name, park, wrapper) jthread(tid, name, FUTEX, "__futex_abstimed_wait_common", \
	wrapper, park, "ObjectMonitor::wait(long, bool, JavaThread*)", \
	"ObjectSynchronizer::wait(Handle, long, JavaThread*)", "JVM_MonitorWait", "*", NULL)
#define VMWAIT(tid, name, wrapper, caller) jthread(tid, name, FUTEX, "__futex_abstimed_wait_common", \
	wrapper, "os::PlatformMonitor::wait(long)", "Monitor::wait_without_safepoint_check(long)", \
	caller, "Thread::call_run()", "thread_native_entry(Thread*)", "start_thread", NULL)
#define SEMWAIT(tid, name) jthread(tid, name, FUTEX, "__futex_abstimed_wait_common", \
	"__new_sem_wait_slow64.constprop.0", "PosixSemaphore::wait()", "GangWorker::loop()", \
	"Thread::call_run()", "thread_native_entry(Thread*)", NULL)
#define SLEEP(tid, name) jthread(tid, name, FUTEX, "__futex_abstimed_wait_common", \
	"pthread_cond_timedwait", "os::PlatformEvent::park(long)", "JavaThread::sleep(long)", \
	"JVM_Sleep", "*", NULL)

/* The JVM at rest: the launcher joining the Java main thread, and 18 of
 * its own threads -- 10 with no timeout, 8 with one (HotSpot 17, G1). */
static void jvm_at_rest(json_t *threads)
{
	json_array_append_new(threads, jthread(PID, "java", "futex(0x7f5d99fff990, FUTEX_WAIT_BITSET)",
		"__futex_abstimed_wait_common", "__pthread_clockjoin_ex", "CallJavaMainInNewThread",
		"ContinueInNewThread", "JLI_Launch", NULL));
	json_array_append_new(threads, SEMWAIT(PID + 2, "GC Thread#0"));
	json_array_append_new(threads, VMWAIT(PID + 3, "G1 Main Marker", "pthread_cond_wait",
					      "G1ConcurrentMarkThread::run_service()"));
	json_array_append_new(threads, SEMWAIT(PID + 4, "G1 Conc#0"));
	json_array_append_new(threads, SEMWAIT(PID + 5, "G1 Refine#0"));
	json_array_append_new(threads, VMWAIT(PID + 6, "G1 Service", "pthread_cond_timedwait",
					      "G1ServiceThread::run_service()"));
	json_array_append_new(threads, VMWAIT(PID + 7, "VM Thread", "pthread_cond_timedwait",
					      "VMThread::wait_for_operation()"));
	json_array_append_new(threads, VMWAIT(PID + 8, "Reference Handl", "pthread_cond_wait",
					      "JVM_WaitForReferencePendingList"));
	json_array_append_new(threads, OBJWAIT(PID + 9, "Finalizer", "os::PlatformEvent::park()",
					       "pthread_cond_wait"));
	json_array_append_new(threads, jthread(PID + 10, "Signal Dispatch", FUTEX,
		"__futex_abstimed_wait_common", "__new_sem_wait_slow64.constprop.0",
		"PosixSemaphore::wait()", "os::signal_wait()", NULL));
	json_array_append_new(threads, VMWAIT(PID + 11, "Service Thread", "pthread_cond_wait",
					      "ServiceThread::service_thread_entry(JavaThread*, JavaThread*)"));
	json_array_append_new(threads, VMWAIT(PID + 12, "Monitor Deflati", "pthread_cond_timedwait",
		"MonitorDeflationThread::monitor_deflation_thread_entry(JavaThread*, JavaThread*)"));
	json_array_append_new(threads, VMWAIT(PID + 13, "C2 CompilerThre", "pthread_cond_timedwait",
					      "CompileQueue::get()"));
	json_array_append_new(threads, VMWAIT(PID + 14, "C1 CompilerThre", "pthread_cond_timedwait",
					      "CompileQueue::get()"));
	json_array_append_new(threads, VMWAIT(PID + 15, "Sweeper thread", "pthread_cond_timedwait",
					      "NMethodSweeper::sweeper_loop()"));
	json_array_append_new(threads, OBJWAIT(PID + 16, "Common-Cleaner", "os::PlatformEvent::park(long)",
					       "pthread_cond_timedwait"));
	json_array_append_new(threads, VMWAIT(PID + 17, "Notification Th", "pthread_cond_wait",
		"NotificationThread::notification_thread_entry(JavaThread*, JavaThread*)"));
	json_array_append_new(threads, VMWAIT(PID + 18, "VM Periodic Tas", "pthread_cond_timedwait",
					      "WatcherThread::sleep() const"));
	json_array_append_new(threads, SEMWAIT(PID + 19, "GC Thread#1"));
}

static void snapshot(struct gp_stuck *s, json_t *threads)
{
	json_t *line = json_pack("{s:s, s:f, s:s, s:i, s:o}", "type", "stacks", "t", 8.0,
				 "why", "end", "pid", PID, "threads", threads);
	gp_stuck_init(s);
	gp_stuck_add(s, line);
	json_decref(line);
}

static void classify(json_t *th, struct gp_jvm_thread *out)
{
	struct gp_stuck s;
	json_t *threads = json_array();
	json_array_append_new(threads, th);
	snapshot(&s, threads);
	*out = s.th[0].jvm;
}

static void test_roles(void **st)
{
	(void)st;
	struct gp_jvm_thread r;
	classify(PARK(PID + 30, "lock-a-then-b"), &r);
	assert_int_equal(r.role, GP_JVM_PARK);
	assert_false(r.timed);
	assert_int_equal(r.counted, GP_WAIT_LOCK);
	assert_int_equal(r.meant, GP_WAIT_LOCK);
	/* EnterI's responsible thread parks with a recheck timeout: a
	 * condition with a timeout to the tracer, a lock to Java */
	classify(MONITOR(PID + 31, "lock-then-monit"), &r);
	assert_int_equal(r.role, GP_JVM_ENTER);
	assert_false(r.timed);
	assert_int_equal(r.counted, GP_WAIT_CONDVAR);
	assert_int_equal(r.meant, GP_WAIT_LOCK);
	classify(OBJWAIT(PID + 1, "java", "os::PlatformEvent::park()", "pthread_cond_wait"), &r);
	assert_int_equal(r.role, GP_JVM_WAIT);
	assert_false(r.timed);
	classify(OBJWAIT(PID + 32, "poller", "os::PlatformEvent::park(long)", "pthread_cond_timedwait"), &r);
	assert_int_equal(r.role, GP_JVM_WAIT);
	assert_true(r.timed);
	assert_int_equal(r.meant, GP_WAIT_CONDVAR);
	classify(SLEEP(PID + 33, "napper"), &r);
	assert_int_equal(r.role, GP_JVM_SLEEP);
	assert_int_equal(r.counted, GP_WAIT_CONDVAR);
	assert_int_equal(r.meant, GP_WAIT_TIMER);
	/* the JVM's own: by their frames, and the JDK's Java threads by name */
	classify(VMWAIT(PID + 7, "VM Thread", "pthread_cond_timedwait", "VMThread::wait_for_operation()"), &r);
	assert_int_equal(r.role, GP_JVM_RUNTIME);
	assert_int_equal(r.counted, GP_WAIT_CONDVAR);
	assert_int_equal(r.meant, GP_WAIT_NONE);
	classify(OBJWAIT(PID + 9, "Finalizer", "os::PlatformEvent::park()", "pthread_cond_wait"), &r);
	assert_int_equal(r.role, GP_JVM_RUNTIME);
	/* a Java thread in accept() through libnio sleeps in the kernel, not
	 * in the JVM: its wait counts as the tracer read it */
	classify(jthread(PID + 34, "acceptor", "accept(fd 4)", "accept", "Java_sun_nio_ch_Net_accept",
			 "*", "JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)",
			 NULL), &r);
	assert_int_equal(r.role, GP_JVM_NONE);
	/* the launcher joining the Java main thread is no JVM wait */
	classify(jthread(PID, "java", FUTEX, "__futex_abstimed_wait_common", "__pthread_clockjoin_ex",
			 "CallJavaMainInNewThread", NULL), &r);
	assert_int_equal(r.role, GP_JVM_NONE);
	/* a stripped libjvm names nothing: nothing is guessed */
	classify(jthread(PID + 35, "worker", FUTEX, "__futex_abstimed_wait_common", "pthread_cond_wait",
			 "libjvm.so+0xce2e41", NULL), &r);
	assert_int_equal(r.role, GP_JVM_NONE);
	assert_true(gp_jvm_own_name("C2 CompilerThre"));
	assert_true(gp_jvm_own_name("GC Thread#3"));
	assert_false(gp_jvm_own_name("lock-a-then-b"));
	assert_false(gp_jvm_own_name("main"));
}

/* The snapshot counts every thread, past the table of distinct stacks:
 * 18 JVM threads and 40 parked handlers of 40 names. */
static void test_counted_past_the_table(void **st)
{
	(void)st;
	json_t *threads = json_array();
	jvm_at_rest(threads);
	char name[16];
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof name, "handler-%d", i);
		json_array_append_new(threads, PARK(PID + 100 + i, name));
	}
	struct gp_stuck s;
	snapshot(&s, threads);
	assert_true(s.dropped > 0);
	assert_int_equal(s.java.runtime, 18);
	assert_int_equal(s.java.user, 40);
	assert_int_equal(s.java.role_n[GP_JVM_PARK], 40);
	assert_int_equal(s.java.nnamed, GP_STUCK_JAVA_NAMED);
	assert_string_equal(s.java.named[0].comm, "handler-0");
	assert_int_equal(s.java.counted[GP_WAIT_LOCK], 10 + 40);
	assert_int_equal(s.java.counted[GP_WAIT_CONDVAR], 8);
	assert_int_equal(s.java.meant[GP_WAIT_LOCK], 40);
	assert_int_equal(s.java.meant[GP_WAIT_CONDVAR], 0);
}

#define NPT 12

static const char *judge(struct gp_stuck *s, unsigned lock, unsigned condvar, unsigned input,
			 struct gp_verdict *v)
{
	static struct gp_point p[NPT];
	memset(p, 0, sizeof p);
	for (int i = 0; i < NPT; i++) {
		p[i].t = i;
		p[i].state = 'S';
		p[i].threads = 22;
		p[i].rss_file = 32u << 20;
		p[i].rss_anon = 60u << 20;
		p[i].have = GP_PT_IO | GP_PT_WCHAN | GP_PT_SYSCALL;
		p[i].top_sc_nr = p[i].common_sc_nr = -2;
		p[i].wait_n[GP_WAIT_LOCK] = lock;
		p[i].wait_n[GP_WAIT_CONDVAR] = condvar;
		p[i].wait_n[GP_WAIT_INPUT] = input;
	}
	struct gp_verdict_opts o = { .hang_after = 3, .page_size = 4096, .stuck = s };
	gp_verdict_compute(p, NPT, &o, v);
	static struct strbuf sb = STRBUF_INIT;
	strbuf_reset(&sb);
	gp_verdict_summary(&sb, v);
	return sb.buf;
}

static void assert_no_runtime_names(const char *sum)
{
	static const char *const own[] = { "CompilerThre", "VM Thread", "GC Thread", "Signal Dispatch",
		"Common-Cleaner", "Finalizer", "Reference Handl", "VM Periodic", "Service Thread",
		"Notification Th", "PlatformMonitor", NULL };
	for (size_t i = 0; own[i]; i++)
		if (strstr(sum, own[i]))
			fail_msg("the JVM's own %s named: %s", own[i], sum);
}

/* ReentrantAbba abba: the two parked threads and the main thread's join
 * are the program; the JVM's 18 threads decide nothing. */
static void test_abba_named_by_the_java_threads(void **st)
{
	(void)st;
	json_t *threads = json_array();
	jvm_at_rest(threads);
	json_array_append_new(threads, OBJWAIT(PID + 1, "java", "os::PlatformEvent::park()", "pthread_cond_wait"));
	json_array_append_new(threads, PARK(PID + 30, "lock-a-then-b"));
	json_array_append_new(threads, PARK(PID + 31, "lock-b-then-a"));
	struct gp_stuck s;
	snapshot(&s, threads);
	struct gp_verdict v;
	const char *sum = judge(&s, 14, 8, 0, &v);
	assert_int_equal(v.cls, GP_CLASS_HANG_BLOCKED);
	assert_non_null(strstr(sum, "lock-a-then-b (1030), lock-b-then-a (1031) parked in Unsafe_Park"));
	assert_non_null(strstr(sum, "no thread is left to wake them"));
	assert_non_null(strstr(sum, "the main thread (1001) in Object.wait"));
	assert_non_null(strstr(sum, "the JVM's own 18 threads"));
	assert_no_runtime_names(sum);
	assert_int_equal(v.cap_why, GP_CAP_JAVA);
}

/* jvm-monitor-lock-mix: the monitor's responsible thread parks with a
 * recheck timeout; still a lock with no timeout, and named. */
/* The same ABBA with one of the JVM's periodic threads caught awake by
 * the snapshot (a slower, sanitizer-built gpuprobe: "1 on a condition
 * with a timeout" left over, and no "nothing left to wake them"): the
 * sample counted its timed wait, the snapshot could not place it -- a
 * thread of the JVM it could not place takes that wait with it. */
static void test_abba_with_a_thread_awake(void **st)
{
	(void)st;
	json_t *threads = json_array();
	jvm_at_rest(threads);
	json_array_append_new(threads, OBJWAIT(PID + 1, "java", "os::PlatformEvent::park()", "pthread_cond_wait"));
	json_array_append_new(threads, PARK(PID + 30, "lock-a-then-b"));
	json_array_append_new(threads, PARK(PID + 31, "lock-b-then-a"));
	json_t *awake = VMWAIT(PID + 40, "VM Periodic Tas", "pthread_cond_timedwait", "WatcherThread::sleep() const");
	json_object_set_new(awake, "state", json_string("R"));
	json_array_append_new(threads, awake);
	struct gp_stuck s;
	snapshot(&s, threads);
	struct gp_verdict v;
	const char *sum = judge(&s, 14, 9, 0, &v);
	assert_int_equal(v.cls, GP_CLASS_HANG_BLOCKED);
	assert_non_null(strstr(sum, "no thread is left to wake them"));
	assert_null(strstr(sum, "on a condition with a timeout"));
	assert_no_runtime_names(sum);
}

static void test_monitor_and_lock(void **st)
{
	(void)st;
	json_t *threads = json_array();
	jvm_at_rest(threads);
	json_array_append_new(threads, OBJWAIT(PID + 1, "java", "os::PlatformEvent::park()", "pthread_cond_wait"));
	json_array_append_new(threads, PARK(PID + 30, "monitor-then-lk"));
	json_array_append_new(threads, MONITOR(PID + 31, "lock-then-monit"));
	struct gp_stuck s;
	snapshot(&s, threads);
	struct gp_verdict v;
	const char *sum = judge(&s, 13, 9, 0, &v);
	assert_int_equal(v.cls, GP_CLASS_HANG_BLOCKED);
	assert_non_null(strstr(sum, "monitor-then-lk (1030) parked"));
	assert_non_null(strstr(sum, "lock-then-monit (1031) blocked entering a monitor"));
	assert_non_null(strstr(sum, "with no timeout, and no thread is left to wake them"));
	assert_no_runtime_names(sum);
}

/* A Java program that only sleeps (Thread.sleep in a loop, nothing
 * written): idle.  Before, the JVM's own 10 threads with no timeout were
 * "locks" with nobody outside to release them: hang-blocked. */
static void test_sleeping_program_is_idle(void **st)
{
	(void)st;
	json_t *threads = json_array();
	jvm_at_rest(threads);
	json_array_append_new(threads, SLEEP(PID + 1, "java"));
	struct gp_stuck s;
	snapshot(&s, threads);
	struct gp_verdict v;
	const char *sum = judge(&s, 11, 9, 0, &v);
	assert_int_equal(v.cls, GP_CLASS_IDLE);
	assert_non_null(strstr(sum, "in Thread.sleep"));
	assert_null(strstr(sum, "no thread is left"));
	assert_no_runtime_names(sum);
}

/* A server at rest: its acceptor in accept(), a batcher parked on its
 * empty queue: idle, never "left to wake". */
static void test_server_at_rest_is_idle(void **st)
{
	(void)st;
	json_t *threads = json_array();
	jvm_at_rest(threads);
	json_array_append_new(threads, jthread(PID + 1, "java", "accept(fd 4)", "accept",
					       "Java_sun_nio_ch_Net_accept", "*", NULL));
	json_array_append_new(threads, PARK(PID + 30, "batcher"));
	struct gp_stuck s;
	snapshot(&s, threads);
	struct gp_verdict v;
	const char *sum = judge(&s, 12, 8, 1, &v);
	assert_int_equal(v.cls, GP_CLASS_IDLE);
	assert_non_null(strstr(sum, "batcher (1030) parked"));
	assert_null(strstr(sum, "no thread is left"));
	assert_no_runtime_names(sum);
}

/* A snapshot the sample does not hold (more JVM waits than it counted):
 * the counts are left as they were. */
static void test_counts_kept_when_the_sample_disagrees(void **st)
{
	(void)st;
	json_t *threads = json_array();
	jvm_at_rest(threads);
	json_array_append_new(threads, PARK(PID + 30, "lock-a-then-b"));
	struct gp_stuck s;
	snapshot(&s, threads);
	struct gp_verdict v;
	judge(&s, 3, 1, 0, &v);
	assert_false(v.act.java);
	assert_int_equal(v.act.w[GP_WAIT_LOCK], 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roles),
		cmocka_unit_test(test_counted_past_the_table),
		cmocka_unit_test(test_abba_named_by_the_java_threads),
	cmocka_unit_test(test_abba_with_a_thread_awake),
		cmocka_unit_test(test_monitor_and_lock),
		cmocka_unit_test(test_sleeping_program_is_idle),
		cmocka_unit_test(test_server_at_rest_is_idle),
		cmocka_unit_test(test_counts_kept_when_the_sample_disagrees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
