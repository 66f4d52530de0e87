/* One grower for the arrays that gpuprobe appends to (points, members,
 * threads, slots): the doubling realloc that was written out at each. */
#ifndef GP_GROW_H
#define GP_GROW_H

#include <stdbool.h>
#include <stddef.h>

/* gp_grow(&arr, &cap, need, sizeof *arr, first): makes *arr (an array of
 * *cap elements of `size` bytes) hold at least `need` elements, doubling
 * it (from `first` when empty).  false, with *arr and *cap unchanged, when
 * memory is short or the size would overflow.  `arrp` is the address of
 * the array pointer, of any object type. */
bool gp_grow(void *arrp, size_t *cap, size_t need, size_t size, size_t first);

#endif
