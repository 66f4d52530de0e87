/* gpuprobe pools: agents and memory pools as the runtime reports them,
 * with the names `gpuprobe lock --pool` takes. */
#include "config.h"
#include "commands.h"
#include "error.h"
#include "gpu.h"
#include "gpu_args.h"
#include "opts.h"
#include "watchdog.h"
#include "units.h"

#include <argp.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_TIMEOUT = 0x100 };

struct pools_opts {
	int64_t timeout_ns;
	struct gp_runtime_args run;
	struct gp_format_args fmt;
};

static const struct argp_option pools_options[] = {
	{ "timeout", OPT_TIMEOUT, "SECONDS", 0, "Give up on a runtime that does not open (default 600)", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static error_t pools_parse(int key, char *arg, struct argp_state *state)
{
	struct pools_opts *o = state->input;
	switch (key) {
	case OPT_TIMEOUT:
		o->timeout_ns = gp_arg_duration(state, key, arg, GP_NS_MS, 86400 * GP_NS_S);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp pools_argp = {
	pools_options, pools_parse, "",
	"List the GPU runtime's agents (name, product, type, node) and memory pools "
	"(segment, flags, size, whether the runtime allocates from it), each pool with "
	"the name 'gpuprobe lock --pool' takes: cpu-fine, cpu-kernarg, cpu-coarse, "
	"cpu-extfine, gpu0-coarse, gpu0-fine...  CUDA: the devices and the "
	"cuMemHostRegister flags they support.\v"
	"An attribute the runtime does not know (an older ROCr) is shown as "
	"'unsupported'.  A runtime that does not open within --timeout is reported "
	"with where its thread waits (wchan, syscall).\n\n"
	"Exit status: 0 listed; 1 the runtime did not load, initialise or open within "
	"--timeout (with the reason); 64 usage error.",
	NULL, NULL, NULL,
};

static const char *seg_name(const struct gp_gpu_pool *p)
{
	if (!p->have_segment)
		return "unsupported";
	switch (p->segment) {
	case GP_SEG_GLOBAL: return "global";
	case GP_SEG_READONLY: return "readonly";
	case GP_SEG_PRIVATE: return "private";
	case GP_SEG_GROUP: return "group";
	default: return "other";
	}
}

int cmd_pools(int argc, char **argv, const struct gp_global *gl)
{
	struct pools_opts o = { .timeout_ns = 600 * GP_NS_S, .fmt = { GP_FMT_TEXT | GP_FMT_JSON, GP_FMT_TEXT } };
	const struct gp_group groups[] = {
		{ &gp_runtime_argp, &o.run, NULL, 0 }, { &gp_format_argp, &o.fmt, NULL, 0 },
		{ &gp_noargs_argp, NULL, NULL, 0 }, GP_GROUPS_END,
	};
	if (gp_parse_command(&pools_argp, groups, argc, argv, &o))
		return GP_EXIT_USAGE;
	struct gp_gpu g;
	if (gp_lockprobe_open_runtime(&g, o.run.rt, o.run.libs[0], o.timeout_ns) != 0)
		return GP_EXIT_ERROR;
	bool cuda = !strcmp(g.be->name, "cuda");
	if (o.fmt.fmt == GP_FMT_JSON) {
		json_t *j = json_pack("{s:s, s:s, s:s, s:s}", "runtime", g.be->name, "lib", g.lib,
				      "version", g.version, "build", g.build);
		json_t *agents = json_array(), *pools = json_array();
		for (int i = 0; i < g.nagents; i++) {
			struct gp_gpu_agent *a = &g.agents[i];
			json_t *ja = json_pack("{s:s, s:s, s:s}", "label", a->label, "name", a->name,
					       "type", gp_agent_type_name(a->type));
			json_object_set_new(ja, "product", a->have_product ? json_string(a->product) : json_null());
			json_object_set_new(ja, "node", a->have_node ? json_integer(a->node) : json_null());
			if (cuda)
				json_object_set_new(ja, "read_only_register",
						    a->ro_register < 0 ? json_null() : json_boolean(a->ro_register));
			json_array_append_new(agents, ja);
		}
		for (int i = 0; i < g.npools; i++) {
			struct gp_gpu_pool *p = &g.pools[i];
			char f[64];
			gp_pool_flags_text(p->flags, f, sizeof f);
			json_t *jp = json_pack("{s:s, s:s, s:s}", "name", p->name,
					       "agent", g.agents[p->agent].label, "segment", seg_name(p));
			json_object_set_new(jp, "flags", p->have_flags ? json_string(f) : json_null());
			json_object_set_new(jp, "global_flags", p->have_flags ? json_integer(p->flags) : json_null());
			json_object_set_new(jp, "size", p->have_size ? json_integer((json_int_t)p->size) : json_null());
			json_object_set_new(jp, "alloc_allowed",
					    p->have_alloc_allowed ? json_boolean(p->alloc_allowed) : json_null());
			json_array_append_new(pools, jp);
		}
		json_object_set_new(j, "agents", agents);
		json_object_set_new(j, "pools", pools);
		char *s = json_dumps(j, JSON_INDENT(2));
		printf("%s\n", s ? s : "{}");
		free(s);
		json_decref(j);
		gp_gpu_close(&g);
		return GP_EXIT_OK;
	}
	printf("runtime  %s (%s)%s%s%s%s\n", g.be->name, g.lib, g.version[0] ? ", " : "", g.version,
	       g.build[0] ? ", build " : "", g.build);
	printf("\nagents\n  %-6s %-5s %-24s %-32s %s\n", "label", "type", "name", "product", "node");
	for (int i = 0; i < g.nagents; i++) {
		struct gp_gpu_agent *a = &g.agents[i];
		char node[16] = "unsupported";
		if (a->have_node)
			snprintf(node, sizeof node, "%u", a->node);
		printf("  %-6s %-5s %-24s %-32s %s\n", a->label, gp_agent_type_name(a->type),
		       a->name[0] ? a->name : "?", a->have_product ? a->product : "unsupported", node);
	}
	if (cuda) {
		printf("\nregistration (cuMemHostRegister_v2)\n");
		for (int i = 0; i < g.nagents; i++) {
			struct gp_gpu_agent *a = &g.agents[i];
			printf("  %-6s flags portable, devicemap, iomemory; read-only: %s\n", a->label,
			       a->ro_register < 0 ? "unknown (attribute 113 not answered)"
			       : a->ro_register ? "supported (CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED = 1)"
			       : "NOT supported (attribute 113 = 0): a read-only mapping cannot be registered");
		}
	} else {
		printf("\npools (gpuprobe lock --pool NAME)\n  %-16s %-9s %-18s %-10s %s\n",
		       "name", "segment", "flags", "size", "alloc");
		for (int i = 0; i < g.npools; i++) {
			struct gp_gpu_pool *p = &g.pools[i];
			char f[64] = "unsupported", sz[32] = "unsupported";
			if (p->have_flags)
				gp_pool_flags_text(p->flags, f, sizeof f);
			else if (p->have_segment && p->segment != GP_SEG_GLOBAL)
				snprintf(f, sizeof f, "-");
			if (p->have_size)
				gp_fmt_size(sz, sizeof sz, (double)(p->size));
			printf("  %-16s %-9s %-18s %-10s %s\n", p->name, seg_name(p), f, sz,
			       p->have_alloc_allowed ? (p->alloc_allowed ? "yes" : "no") : "unsupported");
		}
		if (!g.npools)
			printf("  (none)\n");
		printf("\nlock_to_pool takes a pool owned by a CPU agent; a GPU agent's pool answers "
		       "0x28 HSA_STATUS_ERROR_INVALID_MEMORY_POOL.\n");
	}
	(void)gl;
	gp_gpu_close(&g);
	return GP_EXIT_OK;
}
