#include "config.h"
#include "waits.h"

#include <stddef.h>
#include <string.h>

static const char *const names[GP_WAIT_COUNT] = {
	[GP_WAIT_NONE] = "none",
	[GP_WAIT_INPUT] = "input",
	[GP_WAIT_OUTPUT] = "output",
	[GP_WAIT_TIMER] = "timer",
	[GP_WAIT_SIGNAL] = "signal",
	[GP_WAIT_WAKEUP] = "wakeup",
	[GP_WAIT_CONDVAR] = "condvar",
	[GP_WAIT_LOCK] = "lock",
	[GP_WAIT_CHILD] = "child",
	[GP_WAIT_DRIVER] = "driver",
	[GP_WAIT_DISK] = "disk",
	[GP_WAIT_STOPPED] = "stopped",
	[GP_WAIT_OTHER] = "other",
};

const char *gp_wait_name(enum gp_wait w)
{
	return (unsigned)w < GP_WAIT_COUNT ? names[w] : NULL;
}

enum gp_wait gp_wait_from_name(const char *name)
{
	if (!name)
		return GP_WAIT_NONE;
	for (int i = 0; i < GP_WAIT_COUNT; i++)
		if (!strcmp(name, names[i]))
			return (enum gp_wait)i;
	return GP_WAIT_NONE;
}

enum gp_wait_group gp_wait_group(enum gp_wait w)
{
	switch (w) {
	case GP_WAIT_INPUT:
	case GP_WAIT_OUTPUT:
	case GP_WAIT_TIMER:
	case GP_WAIT_SIGNAL:
		return GP_WG_OUTSIDE;
	case GP_WAIT_WAKEUP:
	case GP_WAIT_CONDVAR:
	case GP_WAIT_OTHER:
		return GP_WG_UNCLEAR;
	case GP_WAIT_LOCK:
	case GP_WAIT_DRIVER:
	case GP_WAIT_DISK:
		return GP_WG_INSIDE;
	case GP_WAIT_CHILD:
		return GP_WG_CHILD;
	case GP_WAIT_STOPPED:
		return GP_WG_STOPPED;
	default:
		return GP_WG_NONE;
	}
}
