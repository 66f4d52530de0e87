/* One interface to the GPU runtimes, two dlopen backends (hsa.c, cuda.c).
 *
 * gpuprobe never links a runtime: each backend dlopens its library
 * (libhsa-runtime64.so.1, libcuda.so.1, or --lib PATH) and resolves the
 * entry points it needs, so the binary builds and runs where neither is
 * installed (DESIGN.md, Dependencies).
 *
 * Threads: gp_gpu_open, gp_gpu_pin and gp_gpu_unpin may each be called on
 * a thread of their own (lockprobe runs them under a watchdog); a backend
 * makes whatever per-thread state it needs current itself (CUDA's
 * context is per thread). */
#ifndef GP_GPU_H
#define GP_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gp_rt { GP_RT_AUTO = 0, GP_RT_HSA, GP_RT_CUDA };

/* hsa.h:766-774 (ROCr 5.2.3): HSA_DEVICE_TYPE_CPU = 0, GPU = 1, DSP = 2.
 * Seed 004's probe looked for devtype == 2 and so never found the CPU. */
enum gp_agent_type { GP_AGENT_CPU = 0, GP_AGENT_GPU = 1, GP_AGENT_DSP = 2 };

/* hsa_ext_amd.h:915-925 (5.2.3) and EXTENDED_SCOPE_FINE_GRAINED = 8,
 * added in later ROCr (absent from 5.2.3's header). */
enum {
	GP_POOL_KERNARG_INIT = 1,
	GP_POOL_FINE_GRAINED = 2,
	GP_POOL_COARSE_GRAINED = 4,
	GP_POOL_EXT_FINE_GRAINED = 8,
};
/* hsa_ext_amd.h:864-878: hsa_amd_segment_t. */
enum { GP_SEG_GLOBAL = 0, GP_SEG_READONLY = 1, GP_SEG_PRIVATE = 2, GP_SEG_GROUP = 3 };

/* An attribute the runtime reports, or that it does not know (an older
 * runtime answers HSA_STATUS_ERROR_INVALID_ARGUMENT): "unsupported", not a
 * failure. */
struct gp_gpu_agent {
	uint64_t handle;
	char name[64];             /* HSA_AGENT_INFO_NAME: char[64] (hsa.h:807) */
	char product[64];          /* HSA_AMD_AGENT_INFO_PRODUCT_NAME 0xA009: char[64] */
	char uuid[24];             /* HSA_AMD_AGENT_INFO_UUID 0xA011: char[21] */
	int type;                  /* enum gp_agent_type, -1 unknown */
	uint32_t node, bdfid;
	bool have_product, have_uuid, have_node, have_bdfid;
	char label[16];            /* "cpu", "cpu1", "gpu0": the pool name prefix */
	/* CUDA only */
	uint64_t total_mem;
	int ro_register;           /* attribute 113: 1, 0, or -1 unknown */
};

struct gp_gpu_pool {
	uint64_t handle;
	int agent;                 /* index in agents[] */
	uint32_t segment, flags;
	uint64_t size;
	bool alloc_allowed;        /* RUNTIME_ALLOC_ALLOWED: a 1-byte bool */
	bool have_segment, have_flags, have_size, have_alloc_allowed;
	char name[32];             /* "cpu-fine", "gpu0-coarse" (gp_pool_names) */
};

#define GP_GPU_MAX_AGENTS 32
#define GP_GPU_MAX_POOLS 128

struct gp_gpu;
struct gp_gpu_backend {
	const char *name;          /* "hsa", "cuda" */
	const char *pin_call;      /* "hsa_amd_memory_lock", "cuMemHostRegister_v2" */
	const char *pool_call;     /* "hsa_amd_memory_lock_to_pool", or NULL */
	const char *unpin_call;
	/* 0, or -1 with g->err (one line) and g->init_status set. */
	int (*open)(struct gp_gpu *g);
	/* Status code of the runtime; *agent_ptr as the runtime returns it. */
	int64_t (*pin)(struct gp_gpu *g, void *p, size_t n, int pool, unsigned flags);
	int64_t (*unpin)(struct gp_gpu *g, void *p);
	void (*status_name)(struct gp_gpu *g, int64_t code, char *buf, size_t cap);
	void (*close)(struct gp_gpu *g);
	int64_t success;
};

struct gp_gpu {
	const struct gp_gpu_backend *be;
	void *dl;
	char lib[512];             /* what was dlopened */
	bool loaded;               /* the library loaded (open may still fail) */
	char version[128];         /* runtime version text */
	char build[128];           /* HSA 0x200 build string, CUDA driver version */
	struct gp_gpu_agent agents[GP_GPU_MAX_AGENTS];
	int nagents;
	struct gp_gpu_pool pools[GP_GPU_MAX_POOLS];
	int npools;
	char err[1200];            /* why open failed */
	char hint[256];
	int64_t init_status;
	void *priv;                /* the backend's function table */
};

extern const struct gp_gpu_backend gp_hsa_backend;
/* For a backend's open: dlopens --lib, else dflt, unless already loaded
 * (g->lib then names it, g->loaded is set), and binds the entry points
 * of syms[0..n).  -1 with g->err, and the install hint in g->hint, when
 * it does not load or lacks a required entry (then not a usable `what`). */
struct gp_dl_sym;
int gp_gpu_load(struct gp_gpu *g, const char *dflt, const char *hint,
		const struct gp_dl_sym *syms, size_t n, const char *what);
extern const struct gp_gpu_backend gp_cuda_backend;

/* Picks and opens the runtime.  rt AUTO: by --lib's exports, else by
 * device nodes (/dev/kfd or /dev/dxg: hsa; /dev/nvidia0: cuda), else
 * whichever library loads.  Returns 0, or -1 with g->err (and g->hint). */
int gp_gpu_open(struct gp_gpu *g, enum gp_rt rt, const char *lib);
void gp_gpu_close(struct gp_gpu *g);
/* pool: index in pools[] for lock_to_pool, -1 for the plain call. */
int64_t gp_gpu_pin(struct gp_gpu *g, void *p, size_t n, int pool, unsigned flags);
int64_t gp_gpu_unpin(struct gp_gpu *g, void *p);
void gp_gpu_status_name(struct gp_gpu *g, int64_t code, char *buf, size_t cap);
bool gp_gpu_parse_runtime(const char *s, enum gp_rt *rt);

/* ---- pure helpers (gpu_names.c; tested in tests/unit/test_gpu) -------- */

/* gpuprobe's own table: hsa.h:122-263 and the AMD additions 40-47
 * (hsa_ext_amd.h:176-193 in 5.2.3, and later ROCr), which 5.2.3's
 * hsa_status_string does not know.  NULL for a code not in the table. */
const char *gp_hsa_status_table(int64_t code);
/* CUresult names for the codes lockprobe meets, used when cuGetErrorName
 * is absent or fails.  NULL when unknown. */
const char *gp_cuda_status_table(int64_t code);
/* Labels agents ("cpu"/"cpuN", "gpuN", "dspN") and names every pool
 * "LABEL-KIND" with KIND kernarg, extfine, fine, coarse (global segment)
 * or the segment name; a second pool of one kind gets "2", "3"... */
void gp_pool_names(struct gp_gpu_agent *agents, int nagents,
		   struct gp_gpu_pool *pools, int npools);
/* "fine|kernarg" style text of the global flags. */
void gp_pool_flags_text(uint32_t flags, char *buf, size_t cap);
const char *gp_agent_type_name(int type);
/* --cuda-flags: "read-only,portable", "0x9", "9", "none" -> flags.
 * False on an unknown word. */
bool gp_cuda_flags_parse(const char *s, unsigned *flags);
void gp_cuda_flags_text(unsigned flags, char *buf, size_t cap);
/* CU_MEMHOSTREGISTER_*: cuda.h (CUDA 11.1+). */
enum {
	GP_CU_REG_PORTABLE = 0x1,
	GP_CU_REG_DEVICEMAP = 0x2,
	GP_CU_REG_IOMEMORY = 0x4,
	GP_CU_REG_READ_ONLY = 0x8,
};
/* Resolves --pool NAME against pools[]: the names, "all", "cpu", "gpu"
 * (every pool of that agent type).  Writes indexes to out (cap); returns
 * how many, or -1 for an unknown name. */
int gp_pool_select(const struct gp_gpu_agent *agents, const struct gp_gpu_pool *pools,
		   int npools, const char *sel, int *out, int cap);

/* Why hsa_init failed, from the machine (it answers 0x1008 for every
 * cause).  root: a directory standing for "/" (tests), or NULL.  Writes
 * one line and a hint. */
void gp_hsa_diagnose(const char *root, char *line, size_t cap, char *hint, size_t hcap);

#endif
