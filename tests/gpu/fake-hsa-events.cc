// The test double's events thread, in C++ so that its symbol is what
// ROCr's is: rocr::core::Runtime::AsyncEventsLoop(void*), a static member
// (seed 000: the thread that burns a core when interrupts are off).
// No exceptions, no RTTI, no libstdc++: the double links with the C
// compiler driver.
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace rocr {
namespace core {
class Runtime {
public:
	static void AsyncEventsLoop(void *);
};
} // namespace core
} // namespace rocr

static volatile int stop_flag;
static int wake[2] = { -1, -1 };
static pthread_t events_thread[2];
static bool running;

// noinline: the frame must exist for a stack walk to name it.
// With interrupts off (HSA_ENABLE_INTERRUPT=0), ROCr's polling fallback:
// seed 000 measured it at ~91% of a core per thread.  Built with
// -DGP_FAKE_BACKOFF it naps in that branch with an escalating backoff,
// 20 us doubling to 2 ms (the shape of ROCm/rocm-systems#7898), for the
// A/B comparison.
__attribute__((noinline)) void rocr::core::Runtime::AsyncEventsLoop(void *)
{
	const char *e = getenv("HSA_ENABLE_INTERRUPT");
	if (e && !strcmp(e, "0")) {
#ifdef GP_FAKE_BACKOFF
		useconds_t nap = 20;
#endif
		while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
			__asm__ volatile("" ::: "memory");
#ifdef GP_FAKE_BACKOFF
			usleep(nap);
			if (nap < 2000)
				nap *= 2;
#endif
		}
		return;
	}
	char b;
	while (read(wake[0], &b, 1) < 0 && errno == EINTR)
		;
}

static void *events_main(void *arg)
{
	rocr::core::Runtime::AsyncEventsLoop(arg);
	return nullptr;
}

extern "C" void fake_hsa_events_start(void);
extern "C" void fake_hsa_events_stop(void);

extern "C" void fake_hsa_events_start(void)
{
	if (running || pipe(wake) != 0)
		return;
	stop_flag = 0;
	/* Two async-events threads, as seed 000's dump shows (ROCm >= 7.2
	 * starts them inside hsa_init). */
	for (int i = 0; i < 2; i++)
		if (pthread_create(&events_thread[i], nullptr, events_main, nullptr) == 0)
			running = true;
}

extern "C" void fake_hsa_events_stop(void)
{
	if (!running)
		return;
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	char b[2] = { 1, 1 };
	if (write(wake[1], b, 2) < 0) {
	}
	pthread_join(events_thread[0], nullptr);
	pthread_join(events_thread[1], nullptr);
	close(wake[0]);
	close(wake[1]);
	running = false;
}
