/* --runtime auto|hsa|cuda and --lib PATH: the option group of the
 * commands that open a GPU runtime (lock, pools, idle), an argp child as
 * src/common/opts.h describes. */
#ifndef GP_GPU_ARGS_H
#define GP_GPU_ARGS_H

#include "gpu.h"
#include "opts.h"

#include <argp.h>

#define GP_MAX_LIBS 8

struct gp_runtime_args {
	const struct gp_help *help;   /* opts.h: the command's wording, or NULL */
	enum gp_rt rt;
	const char *libs[GP_MAX_LIBS];
	int nlibs;
	int max_libs;          /* how many --lib the command compares (0: one) */
};
extern const struct argp gp_runtime_argp;

/* "hsa", "cuda" or "auto". */
const char *gp_rt_name(enum gp_rt rt);

#endif
