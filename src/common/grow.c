#include "config.h"
#include "grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool gp_grow(void *arrp, size_t *cap, size_t need, size_t size, size_t first)
{
	if (need <= *cap)
		return true;
	size_t nc = *cap ? *cap : first;
	while (nc < need)
		nc = nc > SIZE_MAX / 2 ? need : 2 * nc;
	if (nc > SIZE_MAX / size)
		return false;
	void *arr;
	/* The pointer is read and written through memcpy: arrp may be the
	 * address of a `struct x *`, which a `void **` must not alias. */
	memcpy(&arr, arrp, sizeof arr);
	void *na = realloc(arr, nc * size);
	if (!na)
		return false;
	memcpy(arrp, &na, sizeof na);
	*cap = nc;
	return true;
}
