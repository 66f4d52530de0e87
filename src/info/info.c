/* gpuprobe info: the environment facts a maintainer asks for first, as
 * text, JSON or a Markdown list that pastes into an issue.  The same
 * object is every result header's `host` (gp_host_info). */
#include "config.h"
#include "commands.h"
#include "error.h"
#include "hostinfo.h"
#include "host_text.h"
#include "opts.h"
#include "procfs.h"
#include "sockflow.h"
#include "taskiter.h"

#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { OPT_PROC_ROOT = 0x100, OPT_LIB, OPT_NO_RUNTIMES };

struct info_opts {
	const char *proc_root;
	const char *lib;
	int runtimes; /* -1: as the root says (live: yes) */
	struct gp_format_args fmt;
};

static const struct argp_option info_options[] = {
	{ "proc-root", OPT_PROC_ROOT, "DIR", 0,
	  "Read /proc, /sys, /dev and /etc under DIR (replay a captured tree)", 0 },
	{ "lib", OPT_LIB, "PATH", 0, "Describe this HSA runtime instead of libhsa-runtime64.so.1", 0 },
	{ "no-runtimes", OPT_NO_RUNTIMES, NULL, 0, "Do not dlopen the HSA and CUDA runtimes", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static error_t info_parse(int key, char *arg, struct argp_state *state)
{
	struct info_opts *o = state->input;
	switch (key) {
	case OPT_PROC_ROOT:
		o->proc_root = arg;
		break;
	case OPT_LIB:
		o->lib = arg;
		o->runtimes = 1;
		break;
	case OPT_NO_RUNTIMES:
		o->runtimes = 0;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp info_argp = {
	info_options, info_parse, NULL,
	"Print the environment facts a maintainer asks for first: OS and kernel, CPU, "
	"GPUs and driver versions, WSL, device nodes and this user's access to them, "
	"the HSA runtime's real file, version and build-id, the CUDA driver version, "
	"HSA_/ROCR_/HIP_/CUDA_ environment, writeback and THP settings, Yama "
	"ptrace_scope, ulimit -l and MemAvailable.\v"
	"No runtime is initialised: the HSA runtime is only loaded to find its file "
	"(its build-id is read from the ELF note), and the CUDA driver answers "
	"cuDriverGetVersion without cuInit.  Every result file's header holds the "
	"same facts.\n\n"
	"Exit status: 0 ok; 1 the --proc-root cannot be opened; 64 usage error.",
	NULL, NULL, NULL,
};

int cmd_info(int argc, char **argv, const struct gp_global *g)
{
	struct info_opts o = { .runtimes = -1,
			       .fmt = { GP_FMT_TEXT | GP_FMT_JSON | GP_FMT_MARKDOWN, GP_FMT_TEXT } };
	const struct gp_group groups[] = {
		{ &gp_format_argp, &o.fmt, NULL, 0 }, { &gp_noargs_argp, NULL, NULL, 0 }, GP_GROUPS_END,
	};
	if (gp_parse_command(&info_argp, groups, argc, argv, &o))
		return GP_EXIT_USAGE;
	struct gp_root root;
	if (gp_root_open(&root, o.proc_root) < 0) {
		gp_err_errno(errno, o.proc_root, "cannot open the --proc-root directory");
		return GP_EXIT_ERROR;
	}
	struct gp_host_info_opts ho = { .runtimes = o.runtimes < 0 ? root.live : o.runtimes,
					.process = true, .hsa_lib = o.lib };
	json_t *h = gp_host_info_ex(&root, &ho);
	/* Whether trace and watch will have the kernel count socket bytes
	 * and failed connects (tracer/sockflow.h): the real load, not a
	 * guess from capabilities; why not where it fails. */
	if (root.live) {
		struct gp_sockflow *sf = gp_sockflow_get();
		json_object_set_new(h, "bpf", json_pack("{s:b, s:s}", "sockets", sf != NULL,
							"why", sf ? "" : gp_sockflow_why()));
		/* How trace and watch will read threads (tracer/taskiter.h). */
		bool it = gp_taskiter_usable();
		json_object_set_new(h, "sampler", json_pack("{s:s, s:s}", "path", it ? "bpf" : "proc",
							    "why", it ? "" : gp_taskiter_why()));
	}
	gp_root_close(&root);
	if (o.fmt.fmt == GP_FMT_JSON) {
		json_dumpf(h, stdout, JSON_INDENT(2));
		putchar('\n');
	} else if (o.fmt.fmt == GP_FMT_MARKDOWN) {
		printf("**Environment** (`gpuprobe info`)\n\n");
		gp_host_render_markdown(stdout, h);
	} else {
		gp_host_render_text(stdout, h);
	}
	json_decref(h);
	return GP_EXIT_OK;
}
