/* GPU work, not occupancy (issue 19): model/gpuwork.c judges the H200's
 * measured rows (shared/DEVICE.md, issue 19's table), and the verdict
 * reads a kernel that spins as hang-gpu-spin, a loop of kernels that
 * works as progress ("GPU working: ..."), and occupancy alone as a wait
 * for the GPU at low confidence -- where it read `waiting-gpu`, high,
 * for a spin, and "no progress for 59 s" for a training loop. */
#include "config.h"
#include "unit.h"
#include "gpuwork.h"
#include "verdict.h"
#include "verdict_text.h"

#include <string.h>

struct row {
	const char *what;
	double occ, sm_util, tensor, fp32, dram, mem_util, over_w;
	enum gp_gpu_work gpm, classic;
};

/* The rows of issue 19's table, 1 Hz medians on the H200, idle floor 120 W. */
static const struct row rows[] = {
	{ "1 thread polling a flag", 100, 0.8, 0, 0, 0, 0, 0.3, GP_GW_SPIN, GP_GW_SPIN },
	{ "32 CTAs polling", 100, 24.2, 0, 0, 0, 0, 14, GP_GW_SPIN, GP_GW_SPIN },
	{ "every SM polling", 100, 100, 0, 0, 0, 0, 18, GP_GW_SPIN, GP_GW_SPIN },
	{ "32 CTAs, FMA loop", 100, 24.2, 0.1, 23.9, 0, 0, 38, GP_GW_WORK, GP_GW_WORK },
	{ "32 warps chasing pointers", 100, 24.2, 0, 0, 2.2, 3, 36, GP_GW_WORK, GP_GW_WORK },
	{ "GEMV, decode-like", 96, 57, 2.7, 0, 69.5, 88, 400, GP_GW_WORK, GP_GW_WORK },
	{ "GEMM 8192^3 fp16", 100, 96, 93, 0, 17.8, 25, 575, GP_GW_WORK, GP_GW_WORK },
	{ "no kernel", 0, 0, 0, 0, 0, 0, 0, GP_GW_IDLE, GP_GW_IDLE },
};

static void test_table(void **st)
{
	(void)st;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct row *r = &rows[i];
		struct gp_gpu_work_in in = { .have_occ = true, .occ_pct = r->occ, .have_gpm = true,
			.sm_util = r->sm_util, .tensor = r->tensor, .fp32 = r->fp32, .dram_bw = r->dram,
			.have_mem_util = true, .mem_util = r->mem_util, .have_power = true,
			.power_w = 120 + r->over_w, .have_floor = true, .floor_w = 120 };
		struct gp_gpu_work_out o;
		gp_gpu_work_judge(&in, &o);
		if (o.work != r->gpm)
			fail_msg("%s with GPM: %s", r->what, gp_gpu_work_name(o.work));
		assert_true(o.from_gpm || r->gpm == GP_GW_IDLE);
		in.have_gpm = false;
		gp_gpu_work_judge(&in, &o);
		if (o.work != r->classic)
			fail_msg("%s without GPM: %s", r->what, gp_gpu_work_name(o.work));
		assert_false(o.from_gpm);
		/* No floor and no GPM: a spin cannot be told from work by power. */
		in.have_floor = false;
		gp_gpu_work_judge(&in, &o);
		if (r->classic == GP_GW_SPIN)
			assert_int_equal(o.work, GP_GW_BUSY);
	}
	/* Measured on the H200 (2026-12-04): every SM polling reads INTEGER
	 * 0.7 %, 32 CTAs of an FMA loop FP32 5.7 % and INTEGER 1.4 %. */
	struct gp_gpu_work_in poll = { .have_occ = true, .occ_pct = 100, .have_gpm = true,
		.sm_util = 100, .integer = 0.7 };
	struct gp_gpu_work_out po;
	gp_gpu_work_judge(&poll, &po);
	assert_int_equal(po.work, GP_GW_SPIN);
	poll.integer = 6;   /* an integer kernel (a hash) is work */
	gp_gpu_work_judge(&poll, &po);
	assert_int_equal(po.work, GP_GW_WORK);
	struct gp_gpu_work_in none = { 0 };
	struct gp_gpu_work_out o;
	gp_gpu_work_judge(&none, &o);
	assert_int_equal(o.work, GP_GW_UNKNOWN);
	assert_int_equal(gp_gpu_work_from("spin"), GP_GW_SPIN);
	assert_int_equal(gp_gpu_work_from("nonsense"), GP_GW_UNKNOWN);
	assert_int_equal(gp_gpu_work_from(NULL), GP_GW_UNKNOWN);
}

#define N 61

/* 60 s at 1 Hz of a host asleep in the driver's sync, output flat, the
 * GPU read as row r (with or without GPM). */
static void trace_of(struct gp_point *p, const struct row *r, bool gpm)
{
	memset(p, 0, N * sizeof *p);
	for (int i = 0; i < N; i++) {
		p[i].t = i;
		p[i].state = 'S';
		p[i].threads = 4;
		p[i].rss_file = 100u << 20;
		p[i].rss_anon = 50u << 20;
		p[i].have = GP_PT_IO | GP_PT_WCHAN | GP_PT_SYSCALL | GP_PT_GPU_NVML;
		p[i].top_sc_nr = p[i].common_sc_nr = -2;
		p[i].gpu_act_known = true;
		p[i].gpu_act_busy = r->occ >= 50;
		p[i].gpu_act_pct = (float)r->occ;
		p[i].gpu_act_pid = 4242;
		struct gp_gpu_work_in in = { .have_occ = true, .occ_pct = r->occ, .have_gpm = gpm,
			.sm_util = r->sm_util, .tensor = r->tensor, .fp32 = r->fp32, .dram_bw = r->dram,
			.have_mem_util = true, .mem_util = r->mem_util, .have_power = true,
			.power_w = 120 + r->over_w, .have_floor = true, .floor_w = 120 };
		gp_gpu_work_point(&in, 132, &p[i].gw);
		p[i].gw_pid = 4242;
		strcpy(p[i].gw_comm, "python3");
	}
}

static const char *summary(const struct gp_verdict *v)
{
	static struct strbuf sb = STRBUF_INIT;
	strbuf_reset(&sb);
	gp_verdict_summary(&sb, v);
	return sb.buf;
}

static void judge(const struct row *r, bool gpm, struct gp_verdict *v)
{
	static struct gp_point p[N];
	trace_of(p, r, gpm);
	struct gp_verdict_opts o = { .hang_after = 30, .page_size = 4096 };
	gp_verdict_compute(p, N, &o, v);
}

static void test_spins_are_hang_gpu_spin(void **st)
{
	(void)st;
	static struct gp_verdict v;
	judge(&rows[1], true, &v);
	assert_string_equal(gp_class_name(v.cls), "hang-gpu-spin");
	assert_int_equal(v.confidence, GP_CONF_HIGH);
	const char *s = summary(&v);
	if (!strstr(s, "32 of 132 SMs: a collective's shape") || !strstr(s, "no math, no DRAM traffic")
	    || !strstr(s, "+14 W over its floor") || !strstr(s, "pid 4242 (python3)"))
		fail_msg("summary: %s", s);
	judge(&rows[2], true, &v);
	assert_string_equal(gp_class_name(v.cls), "hang-gpu-spin");
	if (!strstr(summary(&v), "every SM (132): a full-grid kernel"))
		fail_msg("summary: %s", summary(&v));
	judge(&rows[0], false, &v);   /* classic NVML: medium at most */
	assert_string_equal(gp_class_name(v.cls), "hang-gpu-spin");
	assert_true(v.confidence <= GP_CONF_MEDIUM);
}

static void test_work_is_progress(void **st)
{
	(void)st;
	static struct gp_verdict v;
	for (int k = 3; k <= 6; k++) {
		judge(&rows[k], true, &v);
		if (v.cls != GP_CLASS_PROGRESS)
			fail_msg("%s: %s, %s", rows[k].what, gp_class_name(v.cls), summary(&v));
		const char *s = summary(&v);
		if (!strstr(s, "GPU working: ") || strstr(s, "no progress"))
			fail_msg("%s: %s", rows[k].what, s);
	}
	judge(&rows[6], true, &v);
	if (!strstr(summary(&v), "tensor 93%, DRAM 18%, 695 W (+575 W over its floor)"))
		fail_msg("GEMM: %s", summary(&v));
	judge(&rows[4], false, &v);   /* pointer chase without GPM: power says work */
	assert_int_equal(v.cls, GP_CLASS_PROGRESS);
}

static void test_occupancy_alone(void **st)
{
	(void)st;
	static struct gp_point p[N];
	static struct gp_verdict v;
	trace_of(p, &rows[0], false);
	for (int i = 0; i < N; i++) {   /* no power floor, no util.memory: occupancy only */
		struct gp_gpu_work_in in = { .have_occ = true, .occ_pct = 100 };
		gp_gpu_work_point(&in, 0, &p[i].gw);
	}
	struct gp_verdict_opts o = { .hang_after = 30, .page_size = 4096 };
	gp_verdict_compute(p, N, &o, &v);
	assert_string_equal(gp_class_name(v.cls), "waiting-gpu");
	assert_int_equal(v.confidence, GP_CONF_LOW);
}

/* A context and no kernel, the host spinning inside libcuda's sync (the
 * H200's cuStreamWaitValue32 on a value nobody writes read
 * hang-busy-user): hang-blocked, "a completion that never came". */
static void test_no_kernel_host_in_sync(void **st)
{
	(void)st;
	static struct gp_point p[N];
	static struct gp_verdict v;
	static const struct row none = { "context, no kernel", 0, 0, 0, 0, 0, 0, 3, GP_GW_IDLE, GP_GW_IDLE };
	trace_of(p, &none, true);
	for (int i = 0; i < N; i++) {
		p[i].utime = i * 1.0;   /* one core, user space */
		p[i].top_tid = 4243;
		p[i].top_pid = 4242;
		p[i].top_cpu_pct = 100;
		p[i].top_sc_nr = -1;
		strcpy(p[i].top_comm, "python3");
		strcpy(p[i].top_frame, "libcuda.so.580.159.04+0xf9df00");
	}
	struct gp_verdict_opts o = { .hang_after = 30, .page_size = 4096 };
	gp_verdict_compute(p, N, &o, &v);
	if (v.cls != GP_CLASS_HANG_BLOCKED || !strstr(summary(&v), "a completion that never came"))
		fail_msg("%s: %s", gp_class_name(v.cls), summary(&v));
	/* The same host spinning in its own code: computing, as before. */
	for (int i = 0; i < N; i++)
		strcpy(p[i].top_frame, "matmul_kernel_host");
	gp_verdict_compute(p, N, &o, &v);
	assert_int_equal(v.cls, GP_CLASS_HANG_BUSY_USER);
}

/* A load (GPU memory rising 437 MiB/s) then a GEMM loop: progress, the
 * work named -- not "slow progress, 0 B/s, down from 437 MiB/s". */
static void test_load_then_work(void **st)
{
	(void)st;
	static struct gp_point p[N];
	static struct gp_verdict v;
	trace_of(p, &rows[6], true);
	for (int i = 0; i < N; i++) {
		p[i].have |= GP_PT_GPU_NVML;
		p[i].gpu_bytes = (uint64_t)(i < 5 ? i : 5) * (437ull << 20);
		if (i < 5)
			memset(&p[i].gw, 0, sizeof p[i].gw);
	}
	struct gp_verdict_opts o = { .hang_after = 30, .page_size = 4096 };
	gp_verdict_compute(p, N, &o, &v);
	if (v.cls != GP_CLASS_PROGRESS || !strstr(summary(&v), "GPU working: tensor 93%"))
		fail_msg("%s: %s", gp_class_name(v.cls), summary(&v));
}

/* A GPU time-sliced between two processes (issue 22; the H100 run of
 * 2026-12-05: a 32-CTA spinner beside a GEMM loop read SM 35 %, `idle`,
 * then `progress` from the GEMM's tensor %).  Device-wide readings say
 * "no work" for everyone, "work" only for the one whose share can hold it. */
static struct gp_gpu_work_in shared_in(double occ, double other, double tensor)
{
	return (struct gp_gpu_work_in){ .have_occ = true, .occ_pct = occ, .have_gpm = true,
		.sm_util = tensor ? 96 : 24.2, .tensor = tensor, .dram_bw = tensor ? 10 : 0,
		.have_power = true, .power_w = 400, .have_floor = true, .floor_w = 120,
		.have_others = true, .others = 1, .others_sm_pct = other, .other_pid = 777,
		.other_sm_pct = other };
}

static void test_shared_gpu(void **st)
{
	(void)st;
	struct gp_gpu_work_out o;
	struct gp_gpu_work_in in = shared_in(35, 60, 55);   /* the spinner beside a GEMM */
	gp_gpu_work_judge(&in, &o);
	assert_int_equal(o.work, GP_GW_BUSY);
	assert_true(o.shared);
	in = shared_in(60, 35, 55);   /* the GEMM beside the spinner: 55 > 35 + 5 */
	gp_gpu_work_judge(&in, &o);
	assert_int_equal(o.work, GP_GW_WORK);
	in = shared_in(48, 45, 40);   /* two GEMMs: neither share holds all of it */
	gp_gpu_work_judge(&in, &o);
	assert_int_equal(o.work, GP_GW_BUSY);
	in = shared_in(35, 60, 0);    /* two spinners: no work anywhere */
	gp_gpu_work_judge(&in, &o);
	assert_int_equal(o.work, GP_GW_SPIN);
	assert_true(o.from_gpm);
	in = shared_in(5, 90, 80);    /* a stray small kernel beside a GEMM */
	gp_gpu_work_judge(&in, &o);
	assert_int_equal(o.work, GP_GW_IDLE);
	in = shared_in(35, 10, 0);    /* the GPU not occupied: under 50 % together */
	gp_gpu_work_judge(&in, &o);
	assert_int_equal(o.work, GP_GW_IDLE);
	in = shared_in(35, 60, 55);   /* without GPM: power is the GPU's, not its */
	in.have_gpm = false;
	gp_gpu_work_judge(&in, &o);
	assert_int_equal(o.work, GP_GW_BUSY);
	in.others = 0;                /* alone at 35 %: idle, as before */
	gp_gpu_work_judge(&in, &o);
	assert_int_equal(o.work, GP_GW_IDLE);
	assert_false(o.shared);

	/* The verdict: the spinner's host in the sync beside a GEMM waits
	 * for a shared GPU, at low confidence -- never progress. */
	static struct gp_point p[N];
	static struct gp_verdict v;
	trace_of(p, &rows[1], true);
	for (int i = 0; i < N; i++) {
		in = shared_in(35, 60, 55);
		gp_gpu_work_point(&in, 132, &p[i].gw);
	}
	struct gp_verdict_opts vo = { .hang_after = 30, .page_size = 4096 };
	gp_verdict_compute(p, N, &vo, &v);
	if (v.cls != GP_CLASS_WAITING_GPU || v.confidence != GP_CONF_LOW ||
	    !strstr(summary(&v), "on a GPU shared with pid 777 (SM 60%)"))
		fail_msg("%s: %s", gp_class_name(v.cls), summary(&v));
	/* Two spinners sharing it: both hang, and the SMs are not counted. */
	for (int i = 0; i < N; i++) {
		in = shared_in(35, 60, 0);
		gp_gpu_work_point(&in, 132, &p[i].gw);
	}
	gp_verdict_compute(p, N, &vo, &v);
	if (v.cls != GP_CLASS_HANG_GPU_SPIN || strstr(summary(&v), "of 132 SMs") ||
	    !strstr(summary(&v), "shared with pid 777"))
		fail_msg("%s: %s", gp_class_name(v.cls), summary(&v));
}

UNIT_MAIN(cmocka_unit_test(test_shared_gpu), cmocka_unit_test(test_no_kernel_host_in_sync), cmocka_unit_test(test_load_then_work),
	  cmocka_unit_test(test_table), cmocka_unit_test(test_spins_are_hang_gpu_spin),
	  cmocka_unit_test(test_work_is_progress), cmocka_unit_test(test_occupancy_alone))
