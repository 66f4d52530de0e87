/* Pure helpers of the GPU interface: status names, pool names, flags. */
#include "config.h"
#include "gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct code_name {
	int64_t code;
	const char *name;
};

/* hsa.h:122-263 (ROCr 5.2.3, Debian's libhsa-runtime-dev), and the AMD
 * additions: 40-43 at hsa_ext_amd.h:176-193 (5.2.3), 44-47 from later
 * ROCr (CU_MASK_REDUCED, OUT_OF_REGISTERS, RESOURCE_BUSY, NOT_SUPPORTED).
 * 5.2.3's hsa_status_string does not know 0x28-0x2F: seed 004 had to look
 * 0x28 up by hand (hsa_ext_amd.h:626 in the 7.x header they read). */
static const struct code_name hsa_codes[] = {
	{ 0x0, "HSA_STATUS_SUCCESS" },
	{ 0x1, "HSA_STATUS_INFO_BREAK" },
	{ 0x28, "HSA_STATUS_ERROR_INVALID_MEMORY_POOL" },
	{ 0x29, "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION" },
	{ 0x2A, "HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION" },
	{ 0x2B, "HSA_STATUS_ERROR_MEMORY_FAULT" },
	{ 0x2C, "HSA_STATUS_CU_MASK_REDUCED" },
	{ 0x2D, "HSA_STATUS_ERROR_OUT_OF_REGISTERS" },
	{ 0x2E, "HSA_STATUS_ERROR_RESOURCE_BUSY" },
	{ 0x2F, "HSA_STATUS_ERROR_NOT_SUPPORTED" },
	{ 0x1000, "HSA_STATUS_ERROR" },
	{ 0x1001, "HSA_STATUS_ERROR_INVALID_ARGUMENT" },
	{ 0x1002, "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION" },
	{ 0x1003, "HSA_STATUS_ERROR_INVALID_ALLOCATION" },
	{ 0x1004, "HSA_STATUS_ERROR_INVALID_AGENT" },
	{ 0x1005, "HSA_STATUS_ERROR_INVALID_REGION" },
	{ 0x1006, "HSA_STATUS_ERROR_INVALID_SIGNAL" },
	{ 0x1007, "HSA_STATUS_ERROR_INVALID_QUEUE" },
	{ 0x1008, "HSA_STATUS_ERROR_OUT_OF_RESOURCES" },
	{ 0x1009, "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT" },
	{ 0x100A, "HSA_STATUS_ERROR_RESOURCE_FREE" },
	{ 0x100B, "HSA_STATUS_ERROR_NOT_INITIALIZED" },
	{ 0x100C, "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW" },
	{ 0x100D, "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS" },
	{ 0x100E, "HSA_STATUS_ERROR_INVALID_INDEX" },
	{ 0x100F, "HSA_STATUS_ERROR_INVALID_ISA" },
	{ 0x1010, "HSA_STATUS_ERROR_INVALID_CODE_OBJECT" },
	{ 0x1011, "HSA_STATUS_ERROR_INVALID_EXECUTABLE" },
	{ 0x1012, "HSA_STATUS_ERROR_FROZEN_EXECUTABLE" },
	{ 0x1013, "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME" },
	{ 0x1014, "HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED" },
	{ 0x1015, "HSA_STATUS_ERROR_VARIABLE_UNDEFINED" },
	{ 0x1016, "HSA_STATUS_ERROR_EXCEPTION" },
	{ 0x1017, "HSA_STATUS_ERROR_INVALID_ISA_NAME" },
	{ 0x1018, "HSA_STATUS_ERROR_INVALID_CODE_SYMBOL" },
	{ 0x1019, "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL" },
	{ 0x1020, "HSA_STATUS_ERROR_INVALID_FILE" },
	{ 0x1021, "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER" },
	{ 0x1022, "HSA_STATUS_ERROR_INVALID_CACHE" },
	{ 0x1023, "HSA_STATUS_ERROR_INVALID_WAVEFRONT" },
	{ 0x1024, "HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP" },
	{ 0x1025, "HSA_STATUS_ERROR_INVALID_RUNTIME_STATE" },
	{ 0x1026, "HSA_STATUS_ERROR_FATAL" },
};

/* cuda.h CUresult, the codes registration and set-up return. */
static const struct code_name cuda_codes[] = {
	{ 0, "CUDA_SUCCESS" },
	{ 1, "CUDA_ERROR_INVALID_VALUE" },
	{ 2, "CUDA_ERROR_OUT_OF_MEMORY" },
	{ 3, "CUDA_ERROR_NOT_INITIALIZED" },
	{ 4, "CUDA_ERROR_DEINITIALIZED" },
	{ 34, "CUDA_ERROR_STUB_LIBRARY" },
	{ 100, "CUDA_ERROR_NO_DEVICE" },
	{ 101, "CUDA_ERROR_INVALID_DEVICE" },
	{ 201, "CUDA_ERROR_INVALID_CONTEXT" },
	{ 304, "CUDA_ERROR_OPERATING_SYSTEM" },
	{ 712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED" },
	{ 713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED" },
	{ 801, "CUDA_ERROR_NOT_SUPPORTED" },
	{ 803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH" },
	{ 804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE" },
	{ 999, "CUDA_ERROR_UNKNOWN" },
};

static const char *lookup(const struct code_name *t, size_t n, int64_t code)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].code == code)
			return t[i].name;
	return NULL;
}

const char *gp_hsa_status_table(int64_t code)
{
	return lookup(hsa_codes, sizeof hsa_codes / sizeof hsa_codes[0], code);
}

const char *gp_cuda_status_table(int64_t code)
{
	return lookup(cuda_codes, sizeof cuda_codes / sizeof cuda_codes[0], code);
}

const char *gp_agent_type_name(int type)
{
	switch (type) {
	case GP_AGENT_CPU: return "cpu";
	case GP_AGENT_GPU: return "gpu";
	case GP_AGENT_DSP: return "dsp";
	default: return "agent";
	}
}

static const char *pool_kind(const struct gp_gpu_pool *p)
{
	if (p->have_segment && p->segment != GP_SEG_GLOBAL) {
		switch (p->segment) {
		case GP_SEG_READONLY: return "readonly";
		case GP_SEG_PRIVATE: return "private";
		case GP_SEG_GROUP: return "group";
		default: return "segment";
		}
	}
	if (!p->have_flags)
		return "pool";
	/* Kernarg pools are fine-grained too (flags 3): kernarg first.
	 * Extended-scope fine before fine, for the same reason. */
	if (p->flags & GP_POOL_KERNARG_INIT)
		return "kernarg";
	if (p->flags & GP_POOL_EXT_FINE_GRAINED)
		return "extfine";
	if (p->flags & GP_POOL_FINE_GRAINED)
		return "fine";
	if (p->flags & GP_POOL_COARSE_GRAINED)
		return "coarse";
	return "pool";
}

void gp_pool_names(struct gp_gpu_agent *agents, int nagents,
		   struct gp_gpu_pool *pools, int npools)
{
	int count[4] = { 0 }, seen[4] = { 0 };
	for (int i = 0; i < nagents; i++) {
		int t = agents[i].type >= 0 && agents[i].type <= 2 ? agents[i].type : 3;
		count[t]++;
	}
	for (int i = 0; i < nagents; i++) {
		int t = agents[i].type >= 0 && agents[i].type <= 2 ? agents[i].type : 3;
		/* One CPU is "cpu" (there usually is one per NUMA node, and
		 * mostly one); GPUs are always numbered: gpu0, gpu1. */
		if (t == GP_AGENT_CPU && count[t] == 1)
			snprintf(agents[i].label, sizeof agents[i].label, "cpu");
		else
			snprintf(agents[i].label, sizeof agents[i].label, "%s%d",
				 gp_agent_type_name(agents[i].type), seen[t]);
		seen[t]++;
	}
	for (int i = 0; i < npools; i++) {
		const char *label = pools[i].agent >= 0 && pools[i].agent < nagents
			? agents[pools[i].agent].label : "agent";
		const char *kind = pool_kind(&pools[i]);
		int nth = 1;
		for (int j = 0; j < i; j++)
			if (pools[j].agent == pools[i].agent && !strcmp(pool_kind(&pools[j]), kind))
				nth++;
		if (nth == 1)
			snprintf(pools[i].name, sizeof pools[i].name, "%s-%s", label, kind);
		else
			snprintf(pools[i].name, sizeof pools[i].name, "%s-%s%d", label, kind, nth);
	}
}

static void append(char *buf, size_t cap, size_t *len, const char *word)
{
	if (*len >= cap)
		return;
	int n = snprintf(buf + *len, cap - *len, "%s%s", *len ? "|" : "", word);
	if (n > 0)
		*len += (size_t)n;
}

struct flag_word {
	const char *word;
	unsigned flag;
};

/* FLAGS as the words of the first nw entries of w joined by '|', then the
 * bits above the low four (no word names them) in hex; "0" for none. */
static void flags_text(const struct flag_word *w, size_t nw, unsigned flags, char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < nw; i++)
		if (flags & w[i].flag)
			append(buf, cap, &len, w[i].word);
	unsigned rest = flags & ~0xFu;
	if (rest) {
		char x[16];
		snprintf(x, sizeof x, "0x%x", rest);
		append(buf, cap, &len, x);
	}
	if (!len)
		snprintf(buf, cap, "0");
}

void gp_pool_flags_text(uint32_t flags, char *buf, size_t cap)
{
	static const struct flag_word pool_flag_words[] = {
		{ "kernarg", GP_POOL_KERNARG_INIT },
		{ "fine", GP_POOL_FINE_GRAINED },
		{ "coarse", GP_POOL_COARSE_GRAINED },
		{ "extfine", GP_POOL_EXT_FINE_GRAINED },
	};
	flags_text(pool_flag_words, 4, flags, buf, cap);
}

static const struct flag_word cuda_flag_words[] = {
	{ "portable", GP_CU_REG_PORTABLE },
	{ "devicemap", GP_CU_REG_DEVICEMAP },
	{ "iomemory", GP_CU_REG_IOMEMORY },
	{ "read-only", GP_CU_REG_READ_ONLY },
	{ "readonly", GP_CU_REG_READ_ONLY },
};

bool gp_cuda_flags_parse(const char *s, unsigned *flags)
{
	if (!s || !*s)
		return false;
	if (!strcasecmp(s, "none")) {
		*flags = 0;
		return true;
	}
	if (s[0] >= '0' && s[0] <= '9') {
		char *end;
		unsigned long v = strtoul(s, &end, 0);
		if (*end || v > 0xFFFFFFFFul)
			return false;
		*flags = (unsigned)v;
		return true;
	}
	unsigned f = 0;
	char *copy = strdup(s), *save = NULL;
	if (!copy)
		return false;
	for (char *w = strtok_r(copy, ",|+", &save); w; w = strtok_r(NULL, ",|+", &save)) {
		bool found = false;
		for (size_t i = 0; i < sizeof cuda_flag_words / sizeof cuda_flag_words[0]; i++)
			if (!strcasecmp(w, cuda_flag_words[i].word)) {
				f |= cuda_flag_words[i].flag;
				found = true;
			}
		if (!found) {
			free(copy);
			return false;
		}
	}
	free(copy);
	*flags = f;
	return true;
}

void gp_cuda_flags_text(unsigned flags, char *buf, size_t cap)
{
	/* The first four: "readonly" is read-only's second spelling. */
	flags_text(cuda_flag_words, 4, flags, buf, cap);
}

int gp_pool_select(const struct gp_gpu_agent *agents, const struct gp_gpu_pool *pools,
		   int npools, const char *sel, int *out, int cap)
{
	int n = 0;
	for (int i = 0; i < npools && n < cap; i++) {
		int t = agents[pools[i].agent].type;
		if (!strcmp(sel, "all") || !strcmp(pools[i].name, sel) ||
		    (!strcmp(sel, "cpu") && t == GP_AGENT_CPU) ||
		    (!strcmp(sel, "gpu") && t == GP_AGENT_GPU))
			out[n++] = i;
	}
	return n ? n : -1;
}
