/* The house: one reader per GPU source per trace, shared by every
 * process the trace follows (issue 19, item 5).
 *
 * A trace of a process tree used to open, per process, two NVML handles
 * (the memory reader's and the activity reader's) and ask each GPU's
 * device-wide lists once per process: N processes, 2N handles and N
 * times the calls, all serialised on the driver's lock.  Now the tree
 * (tracer/tree.c) makes one house, every process's readers take it, and
 * each sample is one tick: what is device-wide (NVML's process lists,
 * utilisation samples, power, clocks and GPM; an amdgpu card's
 * gpu_busy_percent and gpu_metrics) is read once a tick and served to
 * every process from the house; what is a process's own (its DRM
 * fdinfo, its KFD directory, its place in those lists) stays with its
 * reader.  nvml.h says the NVML call budget this keeps.
 *
 * The house is no thread: readers run in the sampler's loop, one after
 * the other. */
#ifndef GP_HOUSE_H
#define GP_HOUSE_H

#include <stdbool.h>

#include "procfs.h"

struct gp_nvml;
struct gp_amd_cards;

enum {
	GP_HOUSE_NO_NVML = 1,	/* never load NVML (trace --no-nvml) */
};

struct gp_gpu_house_opts {
	const struct gp_root *root;	/* must outlive the house */
	unsigned flags;
	/* NULL: $GPUPROBE_NVML_LIB when set (tests point it at
	 * tests/gpu/libnvidia-ml.so.1), else "libnvidia-ml.so.1"; "": the
	 * running program itself (a test links a fake NVML, -rdynamic). */
	const char *nvml_lib;
};

struct gp_gpu_house;

/* NULL on allocation failure only. */
struct gp_gpu_house *gp_gpu_house_new(const struct gp_gpu_house_opts *o);
void gp_gpu_house_free(struct gp_gpu_house *h);

const struct gp_root *gp_gpu_house_root(const struct gp_gpu_house *h);

/* The sample at t (seconds, the caller's clock) begins: every reader of
 * it passes the same t, and the device-wide answers are read once for
 * all of them.  Idempotent for one t. */
void gp_gpu_house_tick(struct gp_gpu_house *h, double t);

/* The trace's one NVML handle, loaded on the first ask (once: a machine
 * without NVML costs one failed dlopen a trace); NULL with *why ("not
 * loaded (--no-nvml)", "recorded tree: NVML answers only live", the
 * dlopen or nvmlInit error).  Not closed by the caller. */
struct gp_nvml *gp_gpu_house_nvml(struct gp_gpu_house *h, const char **why);

/* The amdgpu cards' sysfs reader of the trace (gpu/amdsys.h). */
struct gp_amd_cards *gp_gpu_house_cards(struct gp_gpu_house *h);

/* A path an open fd of a GPU user points at: /dev/nvidia*, /dev/kfd,
 * a /dev/dri node (watch --gpu follows such processes; bundle lists them). */
bool gp_gpu_device_path(const char *path);

#endif
