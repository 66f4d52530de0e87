/* The HSA (ROCr) backend: libhsa-runtime64.so.1 through dlopen, no ROCm
 * headers.  Types and attribute numbers are ROCr's ABI; each is cited
 * from Debian 12's libhsa-runtime-dev 5.2.3 (include/hsa/hsa.h,
 * include/hsa/hsa_ext_amd.h) and checked against later ROCr where they
 * grew. */
#include "config.h"
#include "dl.h"
#include "gpu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint32_t hsa_status_t;   /* enum: int-sized */
typedef struct { uint64_t handle; } hsa_agent_t;
typedef struct { uint64_t handle; } hsa_amd_memory_pool_t;

enum {
	HSA_STATUS_SUCCESS = 0x0,
	HSA_STATUS_INFO_BREAK = 0x1,
	HSA_STATUS_ERROR_INVALID_ARGUMENT = 0x1001,
	/* hsa.h:444-449: "The type of this attribute is uint16_t". */
	HSA_SYSTEM_INFO_VERSION_MAJOR = 0,
	HSA_SYSTEM_INFO_VERSION_MINOR = 1,
	/* hsa.h:483; ROCr runtime.cpp writes a const char* into value
	 * (`*(const char**)value = STRING(ROCR_BUILD_ID)`). */
	HSA_AMD_SYSTEM_INFO_BUILD_VERSION = 0x200,
	HSA_AGENT_INFO_NAME = 0,              /* char[64], hsa.h:807 */
	HSA_AGENT_INFO_NODE = 16,             /* uint32_t, hsa.h:975 */
	HSA_AGENT_INFO_DEVICE = 17,           /* hsa_device_type_t, hsa.h:980 */
	HSA_AMD_AGENT_INFO_BDFID = 0xA006,    /* uint32_t, hsa_ext_amd.h:239 */
	HSA_AMD_AGENT_INFO_PRODUCT_NAME = 0xA009, /* char[64], hsa_ext_amd.h:253 */
	HSA_AMD_AGENT_INFO_UUID = 0xA011,     /* char[21] "GPU-XX..", hsa_ext_amd.h:300 */
	/* hsa_ext_amd.h:936-957 */
	HSA_AMD_MEMORY_POOL_INFO_SEGMENT = 0,        /* hsa_amd_segment_t */
	HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS = 1,   /* uint32_t */
	HSA_AMD_MEMORY_POOL_INFO_SIZE = 2,           /* size_t */
	HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED = 5, /* bool: ONE byte */
};

struct hsa_fns {
	hsa_status_t (*init)(void);
	hsa_status_t (*shut_down)(void);
	hsa_status_t (*status_string)(hsa_status_t, const char **);
	hsa_status_t (*system_get_info)(uint32_t, void *);
	hsa_status_t (*iterate_agents)(hsa_status_t (*)(hsa_agent_t, void *), void *);
	hsa_status_t (*agent_get_info)(hsa_agent_t, uint32_t, void *);
	hsa_status_t (*iterate_pools)(hsa_agent_t,
				      hsa_status_t (*)(hsa_amd_memory_pool_t, void *), void *);
	hsa_status_t (*pool_get_info)(hsa_amd_memory_pool_t, uint32_t, void *);
	/* hsa_ext_amd.h:1514 */
	hsa_status_t (*lock)(void *, size_t, hsa_agent_t *, int, void **);
	/* hsa_ext_amd.h:1563: pool "owned by a CPU agent" (else
	 * HSA_STATUS_ERROR_INVALID_MEMORY_POOL, 0x28); flags "Reserved
	 * parameter, must be 0". */
	hsa_status_t (*lock_to_pool)(void *, size_t, hsa_agent_t *, int,
				     hsa_amd_memory_pool_t, uint32_t, void **);
	hsa_status_t (*unlock)(void *);          /* hsa_ext_amd.h:1583 */
	bool inited;
	hsa_agent_t gpus[GP_GPU_MAX_AGENTS];
	int ngpus;
};

static struct hsa_fns fns_storage;

static void status_name(struct gp_gpu *g, int64_t code, char *buf, size_t cap)
{
	const char *n = gp_hsa_status_table(code);
	if (n) {
		snprintf(buf, cap, "%s", n);
		return;
	}
	struct hsa_fns *f = g ? g->priv : NULL;
	const char *s = NULL;
	if (f && f->status_string && f->status_string((hsa_status_t)code, &s) == 0 && s) {
		/* "HSA_STATUS_ERROR_X: description": the name is the first word. */
		size_t k = strcspn(s, ": ");
		if (k > 0 && k < cap) {
			memcpy(buf, s, k);
			buf[k] = '\0';
			return;
		}
	}
	snprintf(buf, cap, "HSA_STATUS_0x%llx", (unsigned long long)code);
}

struct walk {
	struct gp_gpu *g;
	struct hsa_fns *f;
	int agent;
};

static hsa_status_t on_pool(hsa_amd_memory_pool_t pool, void *data)
{
	struct walk *w = data;
	struct gp_gpu *g = w->g;
	if (g->npools >= GP_GPU_MAX_POOLS)
		return HSA_STATUS_SUCCESS;
	struct gp_gpu_pool *p = &g->pools[g->npools++];
	memset(p, 0, sizeof *p);
	p->handle = pool.handle;
	p->agent = w->agent;
	/* Exact-size buffers: the runtime writes as many bytes as the
	 * attribute's type, and a wider buffer would hide garbage in the rest
	 * (RUNTIME_ALLOC_ALLOWED is a 1-byte bool). */
	uint32_t seg, flags;
	size_t size;
	bool allowed;
	if (w->f->pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg) == 0) {
		p->segment = seg;
		p->have_segment = true;
	}
	if ((!p->have_segment || seg == GP_SEG_GLOBAL) &&
	    w->f->pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags) == 0) {
		p->flags = flags;
		p->have_flags = true;
	}
	if (w->f->pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, &size) == 0) {
		p->size = size;
		p->have_size = true;
	}
	if (w->f->pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &allowed) == 0) {
		p->alloc_allowed = allowed;
		p->have_alloc_allowed = true;
	}
	return HSA_STATUS_SUCCESS;
}

static hsa_status_t on_agent(hsa_agent_t agent, void *data)
{
	struct walk *w = data;
	struct gp_gpu *g = w->g;
	struct hsa_fns *f = w->f;
	if (g->nagents >= GP_GPU_MAX_AGENTS)
		return HSA_STATUS_SUCCESS;
	struct gp_gpu_agent *a = &g->agents[g->nagents];
	memset(a, 0, sizeof *a);
	a->handle = agent.handle;
	a->type = -1;
	a->ro_register = -1;
	char name[64] = "", product[64] = "", uuid[21] = "";
	uint32_t type, node, bdf;
	if (f->agent_get_info(agent, HSA_AGENT_INFO_NAME, name) == 0) {
		name[63] = '\0';
		snprintf(a->name, sizeof a->name, "%s", name);
	}
	if (f->agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) == 0)
		a->type = (int)type;
	if (f->agent_get_info(agent, HSA_AGENT_INFO_NODE, &node) == 0) {
		a->node = node;
		a->have_node = true;
	}
	/* AMD attributes: an older runtime answers INVALID_ARGUMENT for
	 * those it lacks: unsupported, not a failure. */
	if (f->agent_get_info(agent, HSA_AMD_AGENT_INFO_PRODUCT_NAME, product) == 0) {
		product[63] = '\0';
		snprintf(a->product, sizeof a->product, "%s", product);
		a->have_product = true;
	}
	if (f->agent_get_info(agent, HSA_AMD_AGENT_INFO_UUID, uuid) == 0) {
		uuid[20] = '\0';
		snprintf(a->uuid, sizeof a->uuid, "%s", uuid);
		a->have_uuid = true;
	}
	if (f->agent_get_info(agent, HSA_AMD_AGENT_INFO_BDFID, &bdf) == 0) {
		a->bdfid = bdf;
		a->have_bdfid = true;
	}
	if (a->type == GP_AGENT_GPU && f->ngpus < GP_GPU_MAX_AGENTS)
		f->gpus[f->ngpus++] = agent;
	w->agent = g->nagents++;
	if (f->iterate_pools)
		f->iterate_pools(agent, on_pool, w);
	return HSA_STATUS_SUCCESS;
}

/* One name per entry point (ROCr exports no versioned names); the
 * required ones in the order their absence is reported. */
#define ONE(name) GP_DL_NAMES(name)

static const struct gp_dl_sym hsa_syms[] = {
	{ ONE("hsa_init"), (void **)&fns_storage.init, true },
	{ ONE("hsa_iterate_agents"), (void **)&fns_storage.iterate_agents, true },
	{ ONE("hsa_agent_get_info"), (void **)&fns_storage.agent_get_info, true },
	{ ONE("hsa_amd_memory_lock"), (void **)&fns_storage.lock, true },
	{ ONE("hsa_amd_memory_unlock"), (void **)&fns_storage.unlock, true },
	{ ONE("hsa_amd_memory_pool_get_info"), (void **)&fns_storage.pool_get_info, true },
	{ ONE("hsa_shut_down"), (void **)&fns_storage.shut_down, false },
	{ ONE("hsa_status_string"), (void **)&fns_storage.status_string, false },
	{ ONE("hsa_system_get_info"), (void **)&fns_storage.system_get_info, false },
	{ ONE("hsa_amd_agent_iterate_memory_pools"), (void **)&fns_storage.iterate_pools, false },
	{ ONE("hsa_amd_memory_lock_to_pool"), (void **)&fns_storage.lock_to_pool, false },
};

static int hsa_open(struct gp_gpu *g)
{
	struct hsa_fns *f = &fns_storage;
	memset(f, 0, sizeof *f);
	g->priv = f;
	if (gp_gpu_load(g, "libhsa-runtime64.so.1",
			"install libhsa-runtime64-1 (Debian/Ubuntu) or ROCm, or give --lib PATH",
			hsa_syms, sizeof hsa_syms / sizeof hsa_syms[0], "HSA runtime") < 0)
		return -1;
	hsa_status_t st = f->init();
	if (st != HSA_STATUS_SUCCESS) {
		char name[64], why[300];
		g->init_status = st;
		status_name(g, st, name, sizeof name);
		gp_hsa_diagnose(NULL, why, sizeof why, g->hint, sizeof g->hint);
		/* hsa_init answers 0x1008 for every cause (no device, no
		 * permission, no driver): the machine says which. */
		snprintf(g->err, sizeof g->err, "hsa_init: %s (0x%x): %s", name, st, why);
		return -1;
	}
	f->inited = true;
	uint16_t major = 0, minor = 0;
	if (f->system_get_info && f->system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major) == 0 &&
	    f->system_get_info(HSA_SYSTEM_INFO_VERSION_MINOR, &minor) == 0)
		snprintf(g->version, sizeof g->version, "HSA %u.%u", major, minor);
	const char *build = NULL;
	if (f->system_get_info && f->system_get_info(HSA_AMD_SYSTEM_INFO_BUILD_VERSION, &build) == 0 && build)
		snprintf(g->build, sizeof g->build, "%s", build);
	struct walk w = { g, f, -1 };
	st = f->iterate_agents(on_agent, &w);
	if (st != HSA_STATUS_SUCCESS && st != HSA_STATUS_INFO_BREAK) {
		char name[64];
		status_name(g, st, name, sizeof name);
		snprintf(g->err, sizeof g->err, "hsa_iterate_agents: %s (0x%x)", name, st);
		return -1;
	}
	gp_pool_names(g->agents, g->nagents, g->pools, g->npools);
	return 0;
}

static int64_t hsa_pin(struct gp_gpu *g, void *p, size_t n, int pool, unsigned flags)
{
	struct hsa_fns *f = g->priv;
	void *agent_ptr = NULL;
	/* The GPU agents gain access (seed 004's probe passed its GPU
	 * agent); none (a CPU-only double): NULL/0 = every agent. */
	hsa_agent_t *agents = f->ngpus ? f->gpus : NULL;
	int nag = f->ngpus;
	if (pool < 0)
		return f->lock(p, n, agents, nag, &agent_ptr);
	if (!f->lock_to_pool)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT; /* caller checks pool_call first */
	hsa_amd_memory_pool_t mp = { g->pools[pool].handle };
	return f->lock_to_pool(p, n, agents, nag, mp, flags, &agent_ptr);
}

static int64_t hsa_unpin(struct gp_gpu *g, void *p)
{
	struct hsa_fns *f = g->priv;
	return f->unlock(p);
}

static void hsa_close(struct gp_gpu *g)
{
	struct hsa_fns *f = g->priv;
	if (f && f->inited && f->shut_down)
		f->shut_down();
	if (f)
		f->inited = false;
}

const struct gp_gpu_backend gp_hsa_backend = {
	.name = "hsa",
	.pin_call = "hsa_amd_memory_lock",
	.pool_call = "hsa_amd_memory_lock_to_pool",
	.unpin_call = "hsa_amd_memory_unlock",
	.open = hsa_open,
	.pin = hsa_pin,
	.unpin = hsa_unpin,
	.status_name = status_name,
	.close = hsa_close,
	.success = HSA_STATUS_SUCCESS,
};
