// A C++ library with namespaced member functions, built with -g, for the
// stacks tests: its frames must come out demangled, with file:line.
#include <condition_variable>
#include <mutex>
#include <pthread.h>

namespace gpw {
namespace server {

class Queue {
public:
	void start_loop(long id);
	bool stop = false;
private:
	std::mutex m_;
	std::condition_variable cv_;
};

// noinline: the frame must exist for the test to find it.
__attribute__((noinline)) void Queue::start_loop(long id)
{
	std::unique_lock<std::mutex> lock(m_);
	while (!stop)
		cv_.wait(lock); // never notified
	(void)id;
}

static Queue queue;

static void *thread_main(void *arg)
{
	queue.start_loop((long)arg);
	return nullptr;
}

} // namespace server
} // namespace gpw

// Starts n threads blocked in gpw::server::Queue::start_loop(long).
extern "C" int gpcxx_start(int n)
{
	for (long i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, nullptr, gpw::server::thread_main, (void *)i))
			return -1;
		pthread_detach(t);
	}
	return 0;
}
