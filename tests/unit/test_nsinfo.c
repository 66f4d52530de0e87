/* nsinfo.c: a target's pid in its own namespace and its container, from
 * the cgroup path shapes each runtime writes (issue 28), and the sentence
 * `report` makes of them. */
#include "config.h"
#include "unit.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "identity.h"
#include "nsinfo.h"
#include "procfs.h"
#include "strbuf.h"
#include "target_text.h"

#define ID "4f6c1d0e8b7a9c2d3e5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f70819"
#define UID "0c8f3e2a-5b1d-4c7e-9a2f-1e3d5c7b9a01"
#define UID_ "0c8f3e2a_5b1d_4c7e_9a2f_1e3d5c7b9a01"

static void test_nspid(void **st UNUSED)
{
	long ids[4];
	assert_int_equal(gp_nspid_parse("Name:\tpython3\nNSpid:\t21045\t1\nNSpgid:\t9\n", ids, 4), 2);
	assert_int_equal(ids[0], 21045);
	assert_int_equal(ids[1], 1);
	assert_int_equal(gp_nspid_parse("NSpid:\t77\n", ids, 4), 1);
	/* nested three deep; a cap that cuts */
	assert_int_equal(gp_nspid_parse("NSpid:\t900\t40\t1\n", ids, 2), 2);
	/* none, or not numbers: nothing */
	assert_int_equal(gp_nspid_parse("Name:\tx\nPid:\t5\n", ids, 4), 0);
	assert_int_equal(gp_nspid_parse("NSpid:\tabc\n", ids, 4), 0);
	assert_int_equal(gp_nspid_parse("NSpid:\t0\n", ids, 4), 0);
	assert_int_equal(gp_nspid_parse("NSpid:\t99999999999999999999999\n", ids, 4), 0);
	assert_int_equal(gp_nspid_parse("", ids, 4), 0);
	/* "NSpgid" is not "NSpid" */
	assert_int_equal(gp_nspid_parse("NSpgid:\t3\t1\n", ids, 4), 0);
}

struct shape {
	const char *cgroup, *runtime, *id, *pod;
};

static void test_container_shapes(void **st UNUSED)
{
	static const struct shape shapes[] = {
		/* docker, cgroupfs driver (v1: every controller's line) */
		{ "12:memory:/docker/" ID "\n11:pids:/docker/" ID "\n", "docker", ID, "" },
		/* docker, systemd driver, cgroup v2 */
		{ "0::/system.slice/docker-" ID ".scope\n", "docker", ID, "" },
		/* Kubernetes on containerd, systemd driver */
		{ "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		  ".slice/cri-containerd-" ID ".scope\n", "containerd", ID, UID },
		/* Kubernetes, cgroupfs driver: the runtime unsaid */
		{ "0::/kubepods/besteffort/pod" UID "/" ID "\n", NULL, ID, UID },
		/* a guaranteed pod: no QoS level in the path */
		{ "0::/kubepods.slice/kubepods-pod" UID_ ".slice/crio-" ID ".scope\n", "cri-o", ID, UID },
		/* podman rootful; rootless with its split "container" cgroup */
		{ "0::/machine.slice/libpod-" ID ".scope\n", "podman", ID, "" },
		{ "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID
		  ".scope/container\n", "podman", ID, "" },
		{ "1:name=systemd:/libpod_parent/libpod-" ID "\n", "podman", ID, "" },
		/* nerdctl (containerd) */
		{ "0::/system.slice/nerdctl-" ID ".scope\n", "containerd", ID, "" },
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		struct gp_container c;
		if (!gp_container_parse(shapes[i].cgroup, &c))
			fail_msg("shape %zu not taken: %s", i, shapes[i].cgroup);
		if (shapes[i].runtime)
			assert_string_equal(c.runtime, shapes[i].runtime);
		else
			assert_null(c.runtime);
		assert_string_equal(c.id, shapes[i].id);
		assert_string_equal(c.pod_uid, shapes[i].pod);
	}
}

static bool parses(const char *text, struct gp_container *c)
{
	return gp_container_parse(text, c);
}

static void test_not_containers(void **st UNUSED)
{
	struct gp_container c;
	REJECTS(parses, &c,
		/* the host's own */
		"0::/user.slice/user-1000.slice/session-3.scope\n",
		"0::/\n",
		"0::/init.scope\n",
		/* this test machine's sandbox: 32 hex digits, not a container id */
		"4:memory:/process_api/e8a18a4e4fc659230a0631f45f653cf6\n",
		/* the monitors beside a container */
		"0::/machine.slice/libpod-conmon-" ID ".scope\n",
		"0::/kubepods.slice/crio-conmon-" ID ".scope\n",
		/* 63 and 65 digits, upper case */
		"0::/docker/4f6c1d0e8b7a9c2d3e5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f7081\n",
		"0::/docker/" ID "a\n",
		"0::/docker/4F6C1D0E8B7A9C2D3E5F6A7B8C9D0E1F2A3B4C5D6E7F8091A2B3C4D5E6F70819\n",
		/* "pod" outside kubepods; a UID one short */
		"0::/system.slice/pod" UID ".scope\n",
		"0::/kubepods/pod0c8f3e2a-5b1d-4c7e-9a2f-1e3d5c7b9a0\n",
		/* no path field */
		"garbage\n", "", "0:\n");
}

static void test_fixture_record(void **st UNUSED)
{
	struct gp_root root;
	assert_int_equal(gp_root_open(&root, FIXTURES "/ns-k8s"), 0);
	json_t *t = gp_target_identity(&root, 4242);
	assert_non_null(t);
	json_t *nspid = json_object_get(t, "nspid");
	assert_int_equal(json_array_size(nspid), 2);
	assert_int_equal(json_integer_value(json_array_get(nspid, 0)), 4242);
	assert_int_equal(json_integer_value(json_array_get(nspid, 1)), 1);
	/* a replayed tree says nothing of namespaces it cannot compare */
	assert_null(json_object_get(t, "ns"));
	json_t *c = json_object_get(t, "container");
	assert_non_null(c);
	/* (a fixture file missing -- the serviceaccount path is longer than
	 * tar's v7 format holds: configure.ac asks for ustar -- must fail
	 * here, not crash in strcmp) */
	assert_non_null(json_string_value(json_object_get(c, "namespace")));
	assert_string_equal(json_string_value(json_object_get(c, "runtime")), "containerd");
	assert_string_equal(json_string_value(json_object_get(c, "id")), ID);
	assert_string_equal(json_string_value(json_object_get(c, "pod_uid")), UID);
	assert_string_equal(json_string_value(json_object_get(c, "pod")), "vllm-0");
	assert_string_equal(json_string_value(json_object_get(c, "namespace")), "inference");
	/* nothing else of its environment is kept */
	char *dump = json_dumps(t, 0);
	assert_null(strstr(dump, "never-read"));
	free(dump);
	struct strbuf sb = STRBUF_INIT;
	assert_true(gp_target_where(&sb, t));
	assert_string_equal(sb.buf, "pid 1 in its own pid namespace; container 4f6c1d0e8b7a (containerd), "
			    "Kubernetes pod inference/vllm-0 (UID " UID ")");
	strbuf_release(&sb);
	json_decref(t);
	gp_root_close(&root);
}

/* A stranger's result: only what has the shape gpuprobe writes is said. */
static void test_where_hostile(void **st UNUSED)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *t = json_pack("{s:[i,s], s:{s:s, s:s, s:s, s:s}, s:[s,s,i]}",
			      "nspid", 5, "1",
			      "container", "runtime", "evil\n", "id", "zz`rm -rf`", "pod_uid", UID,
			      "pod", "A B",
			      "ns", "mnt", "bogus", 3);
	assert_true(gp_target_where(&sb, t));
	assert_string_equal(sb.buf, "Kubernetes pod UID " UID "; namespaces of its own: mnt");
	json_decref(t);
	strbuf_reset(&sb);
	t = json_pack("{s:i}", "pid", 5);
	assert_false(gp_target_where(&sb, t));
	assert_int_equal(sb.len, 0);
	json_decref(t);
	strbuf_release(&sb);
}

/* Our own process: in our namespace, a tid is its own. */
static void test_nstids_self(void **st UNUSED)
{
	struct gp_nstids t;
	gp_nstids_init(&t, getpid());
	assert_int_equal(gp_nstids_ours(&t, getpid()), getpid());
	assert_int_equal(t.other, 0);
	assert_int_equal(gp_ns_inner_tid(getpid(), getpid()), getpid());
	/* the map, given tasks, reads each one's NSpid */
	int tids[1] = { getpid() };
	assert_int_equal(gp_nstids_update(&t, tids, 1), 0);
	assert_int_equal(gp_nstids_find(&t, getpid()), getpid());
	assert_int_equal(gp_nstids_find(&t, 999999999), 0);
	assert_int_equal(gp_nstids_ours(&t, 0), 0);
	gp_nstids_free(&t);
}

UNIT_MAIN(cmocka_unit_test(test_nspid), cmocka_unit_test(test_nstids_self), cmocka_unit_test(test_container_shapes),
	  cmocka_unit_test(test_not_containers), cmocka_unit_test(test_fixture_record),
	  cmocka_unit_test(test_where_hostile))
