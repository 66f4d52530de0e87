#include "config.h"
#include "gpu_args.h"

#include <stdlib.h>
#include <string.h>

static const struct argp_option runtime_options[] = {
	{ "runtime", GP_KEY_RUNTIME, "auto|hsa|cuda", 0,
	  "GPU runtime (default auto: by --lib's exports, else by the device nodes)", 0 },
	{ "lib", GP_KEY_LIB, "PATH", 0, "Load the runtime from PATH (implies its kind)", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static error_t runtime_parse(int key, char *arg, struct argp_state *state)
{
	struct gp_runtime_args *r = state->input;
	int max = r->max_libs > 0 && r->max_libs <= GP_MAX_LIBS ? r->max_libs : 1;
	char a[72];
	switch (key) {
	case GP_KEY_RUNTIME:
		if (!gp_gpu_parse_runtime(arg, &r->rt))
			argp_error(state, "--runtime '%s': give auto, hsa or cuda",
				   gp_arg_shown(arg, a, sizeof a));
		break;
	case GP_KEY_LIB:
		if (!*arg)
			argp_error(state, "--lib needs a PATH");
		if (r->nlibs == max && max == 1)
			argp_error(state, "--lib '%s': one PATH only (idle compares builds)",
				   gp_arg_shown(arg, a, sizeof a));
		if (r->nlibs == max)
			argp_error(state, "--lib '%s': at most %d", gp_arg_shown(arg, a, sizeof a), max);
		r->libs[r->nlibs++] = arg;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp gp_runtime_argp = { runtime_options, runtime_parse, NULL, NULL, NULL,
				      gp_group_help, NULL };

const char *gp_rt_name(enum gp_rt rt)
{
	return rt == GP_RT_HSA ? "hsa" : rt == GP_RT_CUDA ? "cuda" : "auto";
}
