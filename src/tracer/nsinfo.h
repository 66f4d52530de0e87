/* A target's namespaces: its pid in its own pid namespace beside ours, and
 * the container it runs in, named by its cgroup (issue 28).
 *
 * NSpid (/proc/PID/status, Linux 4.1): the process's id in each pid
 * namespace it is a member of, from the namespace of the procfs read (ours)
 * to its own.  A process in a container is "pid 1" to itself: CPython
 * records that id in each thread state (native_thread_id, from gettid() in
 * the target), so Python frames are matched to our tids through it.
 *
 * The container: the runtimes put each container in a cgroup named by its
 * id (64 hex digits), and Kubernetes' kubelet each pod in one named by the
 * pod's UID; /proc/PID/cgroup gives the path as seen from our cgroup
 * namespace.  The shapes recognised (cgroup v1 and v2, cgroupfs and
 * systemd drivers):
 *   docker      /docker/ID, /system.slice/docker-ID.scope
 *   containerd  .../cri-containerd-ID.scope, /k8s.io/ID (its namespace/ID)
 *   cri-o       .../crio-ID.scope
 *   podman      /machine.slice/libpod-ID.scope, /libpod_parent/libpod-ID,
 *               .../user@UID.service/.../libpod-ID.scope[/container]
 *   Kubernetes  /kubepods[/QOS]/podUID/ID, /kubepods.slice/...
 *               kubepods-QOS-podUID_WITH_UNDERSCORES.slice/...
 * The monitors' own cgroups (crio-conmon-ID, libpod-conmon-ID) are not the
 * container's. */
#ifndef GP_NSINFO_H
#define GP_NSINFO_H

#include "procfs.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The ids of an NSpid line in status text, ours first: their count (at
 * most cap), 0 when there is no such line. */
size_t gp_nspid_parse(const char *status, long *ids, size_t cap);

/* tid (a thread of pid) as its own pid namespace numbers it; -1 when it
 * cannot be read. */
long gp_ns_inner_tid(int pid, int tid);

/* pid lives in a pid namespace other than ours (false when unknown). */
bool gp_ns_other_pidns(int pid);

/* The thread ids of one live process in its own pid namespace and ours.
 * What the target writes in its memory is its own: CPython's
 * native_thread_id, a mutex's owner (glibc's __owner), a futex word of
 * FUTEX_LOCK_PI, a joined thread's tid.  Each task's NSpid is read once
 * (a task's ids never change while it lives). */
struct gp_nstids {
	int pid;
	int other;            /* -1 not looked at yet, 0 our namespace, 1 its own */
	struct gp_nstid { int host; long own; } *m; /* ascending by host */
	size_t n;
};
void gp_nstids_init(struct gp_nstids *t, int pid);
void gp_nstids_free(struct gp_nstids *t);
/* The process's tasks now, our tids ascending (gp_list_tids'): the map
 * follows them, reading only the new ones.  -1 when out of memory. */
int gp_nstids_update(struct gp_nstids *t, const int *tids, size_t n);
/* Our tid for the target's own id of one of its threads: the id itself in
 * our namespace; 0 when no task of it has that id (the map is brought up to
 * date once, from the task list, when the id is not in it). */
int gp_nstids_ours(struct gp_nstids *t, long own);
/* The same from the map as it is (no /proc read): 0 when not in it. */
int gp_nstids_find(const struct gp_nstids *t, long own);

struct gp_container {
	const char *runtime;  /* "docker", "containerd", "cri-o", "podman", NULL unknown */
	char id[65];          /* the container's id, "" none */
	char pod_uid[37];     /* the Kubernetes pod's UID, "" none */
};

/* The container a /proc/PID/cgroup text names.  False when none. */
bool gp_container_parse(const char *cgroup, struct gp_container *c);

/* Adds to a `target` record what says where the process lives: `nspid`
 * (when it has an id in a namespace below ours), `ns` (the namespaces it
 * does not share with gpuprobe, live roots only) and `container`.  Nothing
 * for a process of the host's own namespaces and cgroups. */
void gp_ns_target_json(const struct gp_root *root, int pid, json_t *target);

#endif
