/* env.txt: the target's environment, allow-listed (bundle_parts.h). */
#include "config.h"
#include "bundle_parts.h"
#include "procfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What maintainers of GPU runtimes and inference servers ask for (issue
 * 28), by name prefix; everything else (tokens, keys, passwords, a
 * user's paths) never enters the bundle. */
static const char *const kept_prefix[] = {
	"CUDA_", "HSA_", "HIP_", "ROC", "NCCL_", "RCCL_", "TORCH_", "PYTORCH_", "OMP_",
	"VLLM_", "SGLANG_", NULL
};
static const char *const kept_exact[] = { "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", NULL };

const char *const gp_bundle_env_rule = "names beginning CUDA_, HSA_, HIP_, ROC, NCCL_, RCCL_, "
	"TORCH_, PYTORCH_, OMP_, VLLM_ or SGLANG_, and CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH";

bool gp_bundle_env_kept(const char *var, size_t name_len)
{
	for (const char *const *p = kept_exact; *p; p++)
		if (strlen(*p) == name_len && !strncmp(var, *p, name_len))
			return true;
	for (const char *const *p = kept_prefix; *p; p++)
		if (name_len > strlen(*p) && !strncmp(var, *p, strlen(*p)))
			return true;
	return false;
}

/* One variable, its bytes that are not printable ASCII as \xNN: the
 * file is read by people and pasted into bug reports. */
static void print_var(const char *v, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)v[i];
		if (c < 0x20 || c >= 0x7f || c == '\\')
			printf("\\x%02x", c);
		else
			putchar(c);
	}
	putchar('\n');
}

int gp_bundle_env(void *arg)
{
	const struct gp_bundle_part_arg *a = arg;
	struct gp_root root;
	if (gp_root_open(&root, NULL) < 0)
		return 1;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/environ", a->pid);
	size_t n = 0;
	char *env = gp_slurp(&root, path, &n);
	gp_root_close(&root);
	if (!env) {
		fprintf(stderr, "gpuprobe: %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("# The environment of pid %d, allow-listed: %s. The other variables are not "
	       "in this bundle.\n", a->pid, gp_bundle_env_rule);
	unsigned total = 0, kept = 0;
	for (size_t i = 0; i < n;) {
		const char *v = env + i;
		size_t len = strnlen(v, n - i);
		const char *eq = memchr(v, '=', len);
		if (len) {
			total++;
			if (eq && gp_bundle_env_kept(v, (size_t)(eq - v))) {
				print_var(v, len);
				kept++;
			}
		}
		i += len + 1;
	}
	printf("# %u of %u variables kept\n", kept, total);
	free(env);
	return 0;
}
