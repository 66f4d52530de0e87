/* Built-in workloads for gpuprobe demo: each the shape of a real
 * trouble, runnable on any machine with no GPU.  A workload runs in a
 * child (gpuprobe __workload NAME) and never returns. */
#ifndef GP_WORKLOADS_H
#define GP_WORKLOADS_H

struct gp_workload {
	const char *name;
	const char *shape;      /* what it imitates, for the demo's table */
	const char *expect;     /* the verdict class gpuprobe should give */
	int (*run)(void);
};

extern const struct gp_workload gp_workloads[];
extern const unsigned gp_nworkloads;

const struct gp_workload *gp_workload_find(const char *name);

#endif
