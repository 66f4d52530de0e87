/* A spinner in a library that the tests strip (strip --strip-all a copy):
 * like the seed's stripped libhsa-runtime64.so.1, its internal functions
 * have no symbol left, while an exported function sits right before them
 * in .text -- the nearest-symbol guess a tool must not make.
 * Built with -fno-toplevel-reorder so the layout is as written. */
#include <pthread.h>

#define EXPORT __attribute__((visibility("default"), noinline))
#define HIDDEN __attribute__((visibility("hidden"), noinline))

static volatile unsigned long gpspin_counter;

/* Exported, first in .text: its .dynsym entry precedes the hidden code. */
EXPORT unsigned long gpspin_count(void)
{
	return gpspin_counter;
}

/* An exported symbol with no size right before the hidden code: libdwfl's
 * dwfl_module_addrinfo offers it as the nearest sizeless symbol for every
 * address after it -- the guess gpuprobe must refuse. */
__asm__(".text\n.globl gpspin_sizeless\n.type gpspin_sizeless, @function\n"
	"gpspin_sizeless:\n\tnop\n");

HIDDEN void gpspin_hidden_loop(void)
{
	for (;;) {
		gpspin_counter++;
		__asm__ volatile("" ::: "memory");
	}
}

HIDDEN void *gpspin_hidden_thread(void *arg)
{
	(void)arg;
	gpspin_hidden_loop();
	return 0;
}

EXPORT int gpspin_start(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, 0, gpspin_hidden_thread, 0))
			return -1;
		pthread_detach(t);
	}
	return 0;
}
