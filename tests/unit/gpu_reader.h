/* A memory reader with a house of its own, for the GPU unit tests (a
 * trace shares one house among all its readers: gpu/house.h);
 * reader_free frees both.  Included by one test program each. */
#ifndef GP_TEST_GPU_READER_H
#define GP_TEST_GPU_READER_H

#include "gpumem.h"
#include "house.h"

static struct gp_gpu_house *reader_house;

static struct gp_gpu_reader *reader_new(const struct gp_root *root, int pid, unsigned flags,
					const char *nvml_lib)
{
	struct gp_gpu_house_opts ho = { .root = root, .nvml_lib = nvml_lib };
	reader_house = gp_gpu_house_new(&ho);
	assert_non_null(reader_house);
	return gp_gpu_reader_new_in(reader_house, pid, flags);
}

static void reader_free(struct gp_gpu_reader *r)
{
	gp_gpu_reader_free(r);
	gp_gpu_house_free(reader_house);
	reader_house = NULL;
}

#endif
