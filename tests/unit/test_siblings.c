/* Siblings compared (src/verdict/siblings.c, its words
 * src/render/siblings_text.c, the processes' identities
 * src/model/proctab.c; issue 29): a job's rank apart from the others is
 * named with its frame and called the odd one out; a pool's workers and
 * other processes of one program are compared, never called ranks nor
 * the odd one out; a job where every rank waits in one place names none. */
#include "config.h"
#include "unit.h"
#include "proctab.h"
#include "samplein.h"
#include "siblings.h"
#include "gpuwork.h"
#include "siblings_text.h"

#include <jansson.h>
#include <string.h>

#define AR "all_reduce (distributed_c10d.py:1541)"

static struct gp_sibling sib(int pid, int ppid, int rank, const char *program, enum gp_sib_how how,
			     const char *frame)
{
	struct gp_sibling s;
	memset(&s, 0, sizeof s);
	s.pid = pid;
	s.ppid = ppid;
	s.rank = rank;
	s.world_size = rank >= 0 ? 4 : -1;
	s.job_env = rank >= 0;
	s.how = how;
	snprintf(s.program, sizeof s.program, "/usr/bin/python3.11 %s", program);
	snprintf(s.label, sizeof s.label, "%s", program);
	snprintf(s.frame, sizeof s.frame, "%s", frame ? frame : "");
	if (frame && !strcmp(frame, AR)) {
		s.in_coll = s.dist = true;
		snprintf(s.user, sizeof s.user, "step (job.py:30)");
	}
	return s;
}

static char words_buf[1024];
static const char *words(const struct gp_sibcmp *c, const char *const *hosts, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	gp_siblings_words(&sb, c, hosts, n);
	snprintf(words_buf, sizeof words_buf, "%s", sb.buf);
	strbuf_release(&sb);
	return words_buf;
}

/* Four ranks (RANK, WORLD_SIZE): three in all_reduce, rank 1 elsewhere. */
static void test_rank_apart(void **st)
{
	(void)st;
	struct gp_sibling s[] = {
		sib(1, 100, 0, "job.py", GP_SIB_WAITS, AR),
		sib(11, 100, 1, "job.py", GP_SIB_WAITS, "load_batch (job.py:14)"),
		sib(12, 100, 2, "job.py", GP_SIB_WAITS, AR),
		sib(13, 100, 3, "job.py", GP_SIB_WAITS, AR),
	};
	struct gp_sibcmp c;
	assert_true(gp_siblings_compare(s, 4, &c));
	assert_int_equal(c.kind, GP_SIBK_RANKS);
	assert_int_equal(c.story, GP_SIBS_ODD);
	assert_int_equal(c.nodd, 1);
	assert_int_equal(c.odd[0].rank, 1);
	assert_false(c.waits_for_exited);
	assert_string_equal(words(&c, NULL, 0),
			    "4 ranks of job.py: rank 1 (pid 11) is in load_batch (job.py:14) while ranks 0, 2, 3 "
			    "wait in " AR " called from step (job.py:30): the odd one out");
	/* At rest (idle), a rank apart is no culprit. */
	c.at_rest = true;
	assert_null(strstr(words(&c, NULL, 0), "odd one"));
}

/* One exited, one computes: each named so; ranks waiting in the
 * collective for one that exited is a hang. */
static void test_rank_exited_or_computing(void **st)
{
	(void)st;
	struct gp_sibling s[] = {
		sib(1, 100, 0, "job.py", GP_SIB_WAITS, AR),
		sib(11, 100, 1, "job.py", GP_SIB_WAITS, AR),
		sib(12, 100, 2, "job.py", GP_SIB_WAITS, AR),
		sib(13, 100, 3, "job.py", GP_SIB_EXITED, NULL),
	};
	s[3].ended = true;
	s[3].status = 1;
	s[3].exit_t = 4;
	struct gp_sibcmp c;
	assert_true(gp_siblings_compare(s, 4, &c));
	assert_true(c.waits_for_exited);
	assert_non_null(strstr(words(&c, NULL, 0), "rank 3 (pid 13) exited with status 1 at +4 s while ranks 0, 1, 2 wait in"));
	s[3] = sib(13, 100, 3, "job.py", GP_SIB_RUNS, "spin (job.py:40)");
	s[3].cpu = 99;
	assert_true(gp_siblings_compare(s, 4, &c));
	assert_false(c.waits_for_exited);
	assert_non_null(strstr(words(&c, NULL, 0), "rank 3 (pid 13) computes at 99% CPU in spin (job.py:40) while ranks 0, 1, 2"));
}

/* Every rank in one collective: no odd one, and (all of WORLD_SIZE) a hang. */
static void test_ranks_same(void **st)
{
	(void)st;
	struct gp_sibling s[4];
	for (int i = 0; i < 4; i++)
		s[i] = sib(10 + i, 100, i, "job.py", GP_SIB_WAITS, AR);
	struct gp_sibcmp c;
	assert_true(gp_siblings_compare(s, 4, &c));
	assert_int_equal(c.story, GP_SIBS_SAME);
	assert_true(c.all_wait);
	assert_string_equal(words(&c, NULL, 0), "all 4 ranks of job.py wait in " AR " called from step (job.py:30): no odd one");
	/* Two of four here (a node): no hang said, and none odd among them. */
	assert_true(gp_siblings_compare(s, 2, &c));
	assert_false(c.all_wait);
	assert_non_null(strstr(words(&c, NULL, 0), "the 2 ranks of job.py here (of 4 in the job) all wait in"));
	/* One whose stack was not read: not "no odd one". */
	s[2].how = GP_SIB_UNREAD;
	s[2].frame[0] = '\0';
	assert_true(gp_siblings_compare(s, 4, &c));
	assert_false(c.all_wait);
	const char *w = words(&c, NULL, 0);
	assert_null(strstr(w, "no odd one"));
	assert_non_null(strstr(w, "rank 2 (pid 12): its stack was not read"));
}

/* Two ranks without RANK in the environment (torch.distributed by its
 * frames): the one outside the collective is the late one; two ranks
 * each elsewhere are both named. */
static void test_two_ranks(void **st)
{
	(void)st;
	struct gp_sibling s[] = {
		sib(5, 100, -1, "gloo_ranks.py", GP_SIB_WAITS, AR),
		sib(6, 100, -1, "gloo_ranks.py", GP_SIB_WAITS, "load_next_batch (gloo_ranks.py:25)"),
	};
	s[1].dist = true; /* its gloo thread */
	struct gp_sibcmp c;
	assert_true(gp_siblings_compare(s, 2, &c));
	assert_int_equal(c.kind, GP_SIBK_RANKS);
	assert_int_equal(c.story, GP_SIBS_ODD);
	assert_int_equal(c.odd[0].pid, 6);
	assert_string_equal(words(&c, NULL, 0),
			    "2 ranks of gloo_ranks.py: pid 6 is in load_next_batch (gloo_ranks.py:25) while pid 5 "
			    "waits in " AR " called from step (job.py:30): the odd one out");
	s[0] = sib(5, 100, -1, "gloo_ranks.py", GP_SIB_WAITS, "read_config (gloo_ranks.py:9)");
	s[0].dist = true;
	assert_true(gp_siblings_compare(s, 2, &c));
	assert_int_equal(c.story, GP_SIBS_TWO);
	assert_non_null(strstr(words(&c, NULL, 0), "the 2 ranks of gloo_ranks.py differ: pid 5 waits in read_config"));
}

/* nginx's shape: a master and its workers, one program, no job.  The
 * workers at rest: nothing said; one apart: named as a worker, never as
 * a rank nor the odd one out. */
static void test_pool_workers(void **st)
{
	(void)st;
	struct gp_sibling s[] = {
		sib(50, 1, -1, "nginx", GP_SIB_WAITS, "__sigsuspend"),
		sib(51, 50, -1, "nginx", GP_SIB_WAITS, "epoll_wait"),
		sib(52, 50, -1, "nginx", GP_SIB_WAITS, "epoll_wait"),
		sib(53, 50, -1, "nginx", GP_SIB_WAITS, "epoll_wait"),
	};
	struct gp_sibcmp c;
	assert_false(gp_siblings_compare(s, 4, &c));
	s[3] = sib(53, 50, -1, "nginx", GP_SIB_WAITS, "ngx_shmtx_lock");
	assert_true(gp_siblings_compare(s, 4, &c));
	assert_int_equal(c.kind, GP_SIBK_WORKERS);
	assert_int_equal(c.parent_pid, 50);
	const char *w = words(&c, NULL, 0);
	assert_string_equal(w, "3 workers of pid 50 (nginx): pid 53 is in ngx_shmtx_lock while pids 51, 52 wait in epoll_wait");
	assert_null(strstr(w, "rank"));
	assert_null(strstr(w, "odd"));
	/* Processes of one program, no parent among them. */
	for (int i = 0; i < 4; i++)
		s[i].ppid = 1;
	s[0] = sib(50, 1, -1, "nginx", GP_SIB_WAITS, "epoll_wait");
	assert_true(gp_siblings_compare(s, 4, &c));
	assert_int_equal(c.kind, GP_SIBK_PROCESSES);
	assert_null(strstr(words(&c, NULL, 0), "odd"));
}

/* A rank's loader workers carry its RANK: they are not ranks.  Two jobs
 * of one program (each rank number twice) are not compared as one. */
static void test_rank_workers_and_two_jobs(void **st)
{
	(void)st;
	struct gp_sibling s[] = {
		sib(1, 100, 0, "job.py", GP_SIB_WAITS, AR),
		sib(11, 100, 1, "job.py", GP_SIB_WAITS, "load_batch (job.py:14)"),
		sib(12, 100, 2, "job.py", GP_SIB_WAITS, AR),
		sib(13, 100, 3, "job.py", GP_SIB_WAITS, AR),
		sib(21, 1, 0, "job.py", GP_SIB_WAITS, "worker_loop (worker.py:300)"),
		sib(22, 12, 2, "job.py", GP_SIB_WAITS, "worker_loop (worker.py:300)"),
	};
	struct gp_sibcmp c;
	assert_true(gp_siblings_compare(s, 6, &c));
	assert_int_equal(c.n, 4);
	assert_int_equal(c.odd[0].pid, 11);
	s[4].ppid = s[5].ppid = 200; /* another job's ranks 0 and 2 */
	assert_false(gp_siblings_compare(s, 6, &c));
}

/* Across results: each process named with its source's host. */
static void test_across_results(void **st)
{
	(void)st;
	struct gp_sibling s[] = {
		sib(1, 100, 0, "job.py", GP_SIB_WAITS, AR),
		sib(2, 100, 1, "job.py", GP_SIB_WAITS, "load_batch (job.py:14)"),
		sib(1, 100, 2, "job.py", GP_SIB_WAITS, AR),
		sib(2, 100, 3, "job.py", GP_SIB_WAITS, AR),
	};
	s[2].source = s[3].source = 1;
	static const char *const hosts[] = { "node-a (a.jsonl)", "node-b (b.jsonl)" };
	struct gp_sibcmp c;
	assert_true(gp_siblings_compare(s, 4, &c));
	assert_string_equal(words(&c, hosts, 2),
			    "4 ranks of job.py: rank 1 (pid 2 on node-a (a.jsonl)) is in load_batch (job.py:14) while "
			    "ranks 0, 2, 3 wait in " AR " called from step (job.py:30): the odd one out");
}

/* A rank whose GPU works while the others wait (issue 29): from the
 * snapshot and the table (gw WORK), it computes on its GPU. */
static void test_rank_gpu_works(void **st)
{
	(void)st;
	struct gp_stuck stuck;
	gp_stuck_init(&stuck);
	stuck.t = 10;
	struct gp_proctab t;
	gp_proctab_init(&t);
	for (int r = 0; r < 4; r++) {
		struct gp_stuck_proc *p = &stuck.proc[stuck.nproc++];
		memset(p, 0, sizeof *p);
		p->pid = 50 + r;
		snprintf(p->comm, sizeof p->comm, "python3");
		p->lead = true;
		p->state = 'S';
		snprintf(p->wait_frame, sizeof p->wait_frame, "%s", r == 2 ? "synchronize (job.py:40)" : AR);
		p->lead_dist = p->dist = r != 2;
		char rank[4];
		snprintf(rank, sizeof rank, "%d", r);
		json_t *tl = json_pack("{s:s, s:i, s:i, s:s, s:s, s:[s, s], s:{s:s, s:s}}", "type", "target",
				       "pid", 50 + r, "ppid", 40, "comm", "python3", "exe", "/usr/bin/python3.11",
				       "cmdline", "python3", "job.py", "job_env", "RANK", rank, "WORLD_SIZE", "4");
		gp_proctab_target(&t, tl);
		json_decref(tl);
	}
	gp_proctab_gpu(&t, 52, true, GP_GW_WORK);
	struct gp_sibling s[8];
	size_t n = gp_siblings_of(&stuck, &t, 0, 0, 0, s, 8);
	assert_int_equal(n, 4);
	struct gp_sibcmp c;
	assert_true(gp_siblings_compare(s, n, &c));
	assert_non_null(strstr(words(&c, NULL, 0), "rank 2 (pid 52) computes on its GPU, its main thread "
				"waiting in synchronize (job.py:40) while ranks 0, 1, 3 wait in " AR));
	gp_proctab_free(&t);
}

/* Target lines into the table: the program and its short name, the
 * job's variables, who left. */
/* The timeline (issue 29): rank 1 stopped 6 s before the others; one
 * stop not known: no timeline; a rank computing: the others stopped
 * while it went on.  And proctab's main-thread runs: a "same" record
 * did not run, a delta that moved run_ns did, the first listing is the
 * baseline, still_s dates one found still. */
static void test_timeline(void **st)
{
	(void)st;
	struct gp_sibling s[] = {
		sib(1, 100, 0, "job.py", GP_SIB_WAITS, AR),
		sib(11, 100, 1, "job.py", GP_SIB_WAITS, "load_batch (job.py:14)"),
		sib(12, 100, 2, "job.py", GP_SIB_WAITS, AR),
		sib(13, 100, 3, "job.py", GP_SIB_WAITS, AR),
	};
	double stops[] = { 8.0, 2.0, 8.5, 8.0 };
	for (int i = 0; i < 4; i++) {
		s[i].stop_t = stops[i];
		s[i].stop_known = true;
	}
	struct gp_sibcmp c;
	assert_true(gp_siblings_compare(s, 4, &c));
	assert_true(c.timeline);
	assert_int_equal(c.first.rank, 1);
	assert_true(c.first_odd);
	assert_true(c.rest_from == 8.0 && c.rest_to == 8.5);
	assert_non_null(strstr(words(&c, NULL, 0), "; timeline: rank 1 (pid 11) stopped first, at +2.0 s, "
				"6.0 s before the others (+8.0 to +8.5 s)"));
	/* within a sample's grain: no first */
	s[1].stop_t = 7.0;
	assert_true(gp_siblings_compare(s, 4, &c));
	assert_false(c.timeline);
	s[1].stop_t = 2.0;
	s[2].stop_known = false;
	assert_true(gp_siblings_compare(s, 4, &c));
	assert_false(c.timeline);
	s[2].stop_known = true;
	s[1] = sib(11, 100, 1, "job.py", GP_SIB_RUNS, "spin (job.py:40)");
	assert_true(gp_siblings_compare(s, 4, &c));
	assert_true(c.timeline && c.first_runs);
	assert_non_null(strstr(words(&c, NULL, 0), "; timeline: the others stopped between +8.0 and +8.5 s "
				"while rank 1 (pid 11) went on computing"));

	struct gp_proctab t;
	gp_proctab_init(&t);
	json_t *a = json_pack("{s:s, s:i, s:s, s:f}", "type", "target", "pid", 40, "comm", "python3",
			      "still_s", 30.0);
	json_t *b = json_pack("{s:s, s:i, s:s, s:f}", "type", "target", "pid", 41, "comm", "python3", "t", 0.0);
	gp_proctab_target(&t, a);
	gp_proctab_target(&t, b);
	assert_true(gp_proctab_find(&t, 40)->active_known && gp_proctab_find(&t, 40)->active_t == -30.0);
	assert_false(gp_proctab_find(&t, 41)->active_known);
	const char *lines[] = {
		"{\"type\":\"sample\",\"t\":0,\"pid\":40,\"proc\":{},\"threads\":[{\"tid\":40,\"new\":true,\"run_ns\":100}],"
		"\"procs\":[{\"pid\":41,\"proc\":{},\"threads\":[{\"tid\":41,\"new\":true,\"run_ns\":7},"
		"{\"tid\":42,\"new\":true,\"run_ns\":7}]}]}",
		"{\"type\":\"sample\",\"t\":1,\"pid\":40,\"proc\":{},\"threads\":[{\"tid\":40,\"same\":1}],"
		"\"procs\":[{\"pid\":41,\"proc\":{},\"threads\":[{\"tid\":41,\"delta\":1,\"add\":{\"run_ns\":5}}]}]}",
		"{\"type\":\"sample\",\"t\":2,\"pid\":40,\"proc\":{},\"threads\":[{\"tid\":40,\"same\":1}],"
		"\"procs\":[{\"pid\":41,\"proc\":{},\"threads\":[{\"tid\":41,\"delta\":1,\"state\":\"S\"},"
		"{\"tid\":42,\"delta\":1,\"add\":{\"run_ns\":9}}]}]}",
	};
	/* through model/samplein.c, as `report` reads a file: the thread
	 * arrays are read into records, resolved, and taken out of the
	 * json (a sample's main thread was once looked for there, and a
	 * saved file lost its timeline) */
	struct gp_samplein *si = gp_samplein_new();
	assert_non_null(si);
	for (size_t i = 0; i < 3; i++) {
		json_t *l = gp_samplein_parse(si, lines[i], strlen(lines[i]), NULL);
		assert_non_null(l);
		gp_proctab_sample(&t, l, si);
		json_decref(l);
	}
	gp_samplein_free(si);
	assert_true(gp_proctab_find(&t, 40)->active_t == -30.0); /* never ran: as still_s said */
	assert_true(gp_proctab_find(&t, 41)->active_known);
	assert_true(gp_proctab_find(&t, 41)->active_t == 1.0);   /* its helper thread 42 is not it */
	json_decref(a);
	json_decref(b);
	gp_proctab_free(&t);
}

static void test_proctab(void **st)
{
	(void)st;
	struct gp_proctab t;
	gp_proctab_init(&t);
	json_t *a = json_pack("{s:s, s:i, s:i, s:s, s:s, s:[s, s, s], s:{s:s, s:s, s:s, s:s}}", "type", "target",
			      "pid", 40, "ppid", 30, "comm", "python3", "exe", "/usr/bin/python3.11", "cmdline",
			      "python3", "-u", "/srv/job.py", "job_env", "RANK", "2", "WORLD_SIZE", "8",
			      "MASTER_ADDR", "10.0.0.1", "MASTER_PORT", "29500");
	json_t *b = json_pack("{s:s, s:i, s:s, s:s, s:[s, s, s, s]}", "type", "target", "pid", 41, "comm",
			      "python3", "exe", "/usr/bin/python3.11", "cmdline", "python3", "-m",
			      "torch.distributed.run", "x.py");
	json_t *c = json_pack("{s:s, s:i, s:s, s:s, s:[s]}", "type", "target", "pid", 42, "comm", "nginx", "exe",
			      "/usr/sbin/nginx", "cmdline", "nginx: worker process");
	json_t *d = json_pack("{s:s, s:i, s:s, s:s, s:[s, s], s:{s:s}}", "type", "target", "pid", 43, "comm",
			      "python3", "exe", "/usr/bin/python3.11", "cmdline", "python3", "-c", "job_env",
			      "RANK", "x1");
	gp_proctab_target(&t, c);
	gp_proctab_target(&t, a);
	gp_proctab_target(&t, d);
	gp_proctab_target(&t, b);
	const struct gp_proc_ident *p = gp_proctab_find(&t, 40);
	assert_non_null(p);
	assert_string_equal(p->program, "/usr/bin/python3.11 /srv/job.py");
	assert_string_equal(p->label, "job.py");
	assert_int_equal(p->ppid, 30);
	assert_int_equal(p->rank, 2);
	assert_int_equal(p->world_size, 8);
	assert_true(p->job_env);
	assert_string_equal(p->job, "10.0.0.1:29500");
	assert_string_equal(gp_proctab_find(&t, 41)->label, "torch.distributed.run");
	assert_string_equal(gp_proctab_find(&t, 42)->label, "nginx");
	p = gp_proctab_find(&t, 43);
	assert_string_equal(p->label, "python3.11 -c");
	assert_false(p->job_env); /* "x1" is no rank */
	assert_false(gp_proctab_changed(&t, a));
	/* Samples: 40 listed at 1 s, gone at 2 s (status 1). */
	json_t *s1 = json_pack("{s:s, s:f, s:i, s:{}, s:[{s:i}, {s:i}, {s:i}, {s:i}]}", "type", "sample", "t", 1.0,
			       "pid", 30, "proc", "procs", "pid", 40, "pid", 41, "pid", 42, "pid", 43);
	json_t *s2 = json_pack("{s:s, s:f, s:i, s:{}, s:[{s:i}, {s:i}, {s:i}], s:[{s:i, s:i}]}", "type", "sample",
			       "t", 2.0, "pid", 30, "proc", "procs", "pid", 41, "pid", 42, "pid", 43, "died", "pid",
			       40, "status", 1);
	gp_proctab_sample(&t, s1, NULL);
	gp_proctab_sample(&t, s2, NULL);
	p = gp_proctab_find(&t, 40);
	assert_true(p->gone);
	assert_true(p->gone_t == 2.0);
	assert_true(p->ended);
	assert_int_equal(p->status, 1);
	assert_false(gp_proctab_find(&t, 41)->gone);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	json_decref(d);
	json_decref(s1);
	json_decref(s2);
	gp_proctab_free(&t);
}

UNIT_MAIN(cmocka_unit_test(test_rank_apart), cmocka_unit_test(test_rank_exited_or_computing),
	  cmocka_unit_test(test_ranks_same), cmocka_unit_test(test_two_ranks),
	  cmocka_unit_test(test_pool_workers), cmocka_unit_test(test_rank_workers_and_two_jobs),
	  cmocka_unit_test(test_across_results), cmocka_unit_test(test_proctab),
	  cmocka_unit_test(test_timeline), cmocka_unit_test(test_rank_gpu_works))
