/* The files watch and bundle write for others to read: the Prometheus
 * text file (metrics.c: labels escaped, one sample a process, hang as a
 * number), the ustar-over-gzip archive (tar.c: headers whose checksum
 * and fields any tar reads, data padded to 512, two zero blocks, written
 * to FILE.tmp and renamed), and a process's rotating record (spool.c:
 * at least span seconds kept, one header at the top of the export). */
#include "config.h"
#include "unit.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "metrics.h"
#include "part.h"
#include "spool.h"
#include "strbuf.h"
#include "tar.h"

static void test_metrics_text(void **st)
{
	(void)st;
	struct gp_metric_proc p[4] = {
		{ .pid = 42, .comm = "py\"th\\o\nn", .cls = "hang-blocked", .hang = 1,
		  .since_progress = 12.5, .cpu_cores = 0.25, .idle_cpu_cores = 0.25, .gpu = "spin",
		  .signature = "5b1f0a2c", .frame = "all_reduce (c10d.py:1) <- \"x\"", .dist_job = "h:29500",
		  .rank = 3 },
		{ .pid = 7, .comm = "ok", .cls = "progress", .since_progress = 0, .gpu = "work", .rank = -1 },
		{ .pid = 9, .comm = "n\xff\x1b[31m", .cls = "idle", .gpu = "idle", .signature = "00000001",
		  .frame = "f", .rank = -1 },
		{ .pid = 4321, .comm = "python3", .cls = "hang-blocked", .hang = 1, .gpu = "idle",
		  .since_progress = 400, .hang_since_unix = 1796560000.5, .rank = -1, .nspid = "1",
		  .container_id = "0123456789ab", .pod = "train-0", .pod_ns = "ml" },
	};
	gp_metrics_gpu_add(&p[3], "GPU-fa6e0000-0000-4000-8000-000000000000", NULL);
	gp_metrics_gpu_add(&p[3], NULL, "0000:03:00.0");
	gp_metrics_gpu_add(&p[3], NULL, "0000:03:00.0");
	struct gp_metrics_watch w = { .bundles = 3, .procs = 4, .now_unix = 1796560400.25 };
	struct strbuf sb = STRBUF_INIT;
	gp_metrics_text(&sb, &w, p, 4);
	/* Staleness, the hang's clock, where it lives, its GPUs (issue 28). */
	assert_non_null(strstr(sb.buf, "\ngpuprobe_watch_last_update_timestamp_seconds 1796560400.250\n"));
	assert_non_null(strstr(sb.buf, "\ngpuprobe_process_hang_since_timestamp_seconds{pid=\"4321\","
				       "comm=\"python3\",nspid=\"1\",container_id=\"0123456789ab\","
				       "pod=\"train-0\",namespace=\"ml\"} 1796560000.500\n"));
	assert_null(strstr(sb.buf, "gpuprobe_process_hang_since_timestamp_seconds{pid=\"7\""));
	assert_non_null(strstr(sb.buf, "gpuprobe_process_gpu_info{pid=\"4321\",comm=\"python3\",nspid=\"1\","
				       "container_id=\"0123456789ab\",pod=\"train-0\",namespace=\"ml\","
				       "UUID=\"GPU-fa6e0000-0000-4000-8000-000000000000\",pci_bus_id=\"\"} 1\n"));
	assert_non_null(strstr(sb.buf, ",UUID=\"\",pci_bus_id=\"0000:03:00.0\"} 1\n"));
	assert_int_equal(p[3].ngpus, 2);
	/* A comm is any bytes: the value is its safe text (common/safetext.h:
	 * a newline as \n, ESC as \x1b, a byte not UTF-8 as \xff), then
	 * quote and backslash escaped (exposition format, label_value). */
	assert_non_null(strstr(sb.buf, "gpuprobe_process_class{pid=\"42\",comm=\"py\\\"th\\\\o\\\\nn\","
				       "class=\"hang-blocked\"} 1\n"));
	assert_non_null(strstr(sb.buf, "gpuprobe_process_hang{pid=\"42\",comm=\"py\\\"th\\\\o\\\\nn\"} 1\n"));
	assert_non_null(strstr(sb.buf, "gpuprobe_process_hang{pid=\"7\",comm=\"ok\"} 0\n"));
	assert_non_null(strstr(sb.buf, "gpuprobe_process_seconds_since_progress{pid=\"42\",comm=\"py\\\"th\\\\o\\\\nn\"} 12.500\n"));
	assert_non_null(strstr(sb.buf, "gpuprobe_process_gpu{pid=\"7\",comm=\"ok\",state=\"work\"} 1\n"));
	assert_non_null(strstr(sb.buf, "gpuprobe_process_hang{pid=\"9\",comm=\"n\\\\xff\\\\x1b[31m\"} 0\n"));
	assert_non_null(strstr(sb.buf, "# TYPE gpuprobe_watch_bundles_total counter\ngpuprobe_watch_bundles_total 3\n"));
	/* where a flat process waits (issue 29): its job and rank, "" none */
	assert_non_null(strstr(sb.buf, "gpuprobe_process_wait_signature{pid=\"42\",comm=\"py\\\"th\\\\o\\\\nn\","
				       "dist_job=\"h:29500\",rank=\"3\",signature=\"5b1f0a2c\","
				       "frame=\"all_reduce (c10d.py:1) <- \\\"x\\\"\"} 1\n"));
	assert_non_null(strstr(sb.buf, "gpuprobe_process_wait_signature{pid=\"9\",comm=\"n\\\\xff\\\\x1b[31m\","
				       "dist_job=\"\",rank=\"\",signature=\"00000001\",frame=\"f\"} 1\n"));
	assert_null(strstr(sb.buf, "gpuprobe_process_wait_signature{pid=\"7\""));
	/* node_exporter refuses a file that is not UTF-8 or holds a control
	 * character but the newlines. */
	for (const unsigned char *c = (const unsigned char *)sb.buf; *c; c++)
		assert_true(*c == '\n' || (*c >= 0x20 && *c < 0x7f));
	/* Every line is a comment or a sample, every TYPE has its HELP first. */
	for (char *l = sb.buf, *e; *l; l = e + 1) {
		e = strchr(l, '\n');
		assert_non_null(e);
		assert_true(l[0] == '#' || !strncmp(l, "gpuprobe_", 9));
		if (!strncmp(l, "# TYPE ", 7))
			assert_true(l >= sb.buf + 7 && strstr(sb.buf, "# HELP ") < l);
	}
	strbuf_release(&sb);
}

static void test_metrics_write_atomic(void **st)
{
	(void)st;
	char dir[] = "/tmp/gp-unit-metrics.XXXXXX", path[64], tmp[72];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/m.prom", dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "gpuprobe_watch_up 1\n");
	assert_int_equal(gp_metrics_write(path, &sb), 0);
	assert_int_equal(access(tmp, F_OK), -1);
	FILE *f = fopen(path, "r");
	char buf[64] = "";
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof buf, f));
	fclose(f);
	assert_string_equal(buf, "gpuprobe_watch_up 1\n");
	strbuf_release(&sb);
	assert_int_equal(gp_metrics_write("/proc/no/such/dir/m.prom", &sb), -1);
	unlink(path);
	rmdir(dir);
}

/* A restarted watch reads the hangs its predecessor wrote: the lines
 * this file's own text makes; others, torn ones and nonsense are not
 * hangs; a FIFO is no file (never a blocked open or read). */
static void test_metrics_read_hangs(void **st)
{
	(void)st;
	char dir[] = "/tmp/gp-unit-hangs.XXXXXX", path[64], fifo[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/m.prom", dir);
	struct gp_metric_proc p[2];
	memset(p, 0, sizeof p);
	p[0].pid = 41;
	snprintf(p[0].comm, sizeof p[0].comm, "py \"x\"");
	snprintf(p[0].nspid, sizeof p[0].nspid, "1");
	p[0].cls = "hang-blocked";
	p[0].gpu = "none";
	p[0].hang = true;
	p[0].hang_since_unix = 1796572271.349;
	p[1] = p[0];
	p[1].pid = 42;
	p[1].hang = false;
	p[1].hang_since_unix = 0;
	struct gp_metrics_watch w = { 0 };
	struct strbuf sb = STRBUF_INIT;
	gp_metrics_text(&sb, &w, p, 2);
	strbuf_addstr(&sb, "gpuprobe_process_hang_since_timestamp_seconds{pid=\"7\"} nan\n"
		      "gpuprobe_process_hang_since_timestamp_seconds{pid=\"x\"} 5\n"
		      "gpuprobe_process_hang_since_timestamp_seconds{pid=\"8\"} 1796572271.3 junk\n"
		      "gpuprobe_process_hang_since_timestamp_seconds{pid=\"9\"");
	assert_int_equal(gp_metrics_write(path, &sb), 0);
	struct gp_metric_hang h[4];
	assert_int_equal(gp_metrics_read_hangs(path, h, 4), 1);
	assert_int_equal(h[0].pid, 41);
	assert_true(h[0].since_unix > 1796572271.348 && h[0].since_unix < 1796572271.350);
	assert_int_equal(gp_metrics_read_hangs(path, h, 0), 0);
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(gp_metrics_read_hangs(fifo, h, 4), 0);
	assert_int_equal(gp_metrics_read_hangs(dir, h, 4), 0);
	assert_int_equal(gp_metrics_read_hangs("/proc/no/such", h, 4), 0);
	assert_int_equal(gp_metrics_read_hangs(NULL, h, 4), 0);
	strbuf_release(&sb);
	unlink(fifo);
	unlink(path);
	rmdir(dir);
}

/* Reads the archive back block by block, as tar does. */
static void test_tar_roundtrip(void **st)
{
	(void)st;
	char dir[] = "/tmp/gp-unit-tar.XXXXXX", path[64], src[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/b.tar.gz", dir);
	snprintf(src, sizeof src, "%s/src", dir);
	FILE *f = fopen(src, "w");
	assert_non_null(f);
	for (int i = 0; i < 700; i++)
		fputc('a' + i % 26, f);
	fclose(f);
	struct gp_tar *t = gp_tar_open(path);
	assert_non_null(t);
	assert_int_equal(gp_tar_add_mem(t, "top/MANIFEST", "hello\n", 6), 0);
	assert_int_equal(gp_tar_add_file(t, "top/src", src), 0);
	/* a part that is not there is skipped, not an archive error */
	assert_int_equal(gp_tar_add_file(t, "top/none", "/no/such/file"), -1);
	char longname[120];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	assert_int_equal(gp_tar_add_mem(t, longname, "", 0), -1); /* sticky from here */
	assert_int_equal(access(path, F_OK), -1);  /* still PATH.tmp */
	assert_int_equal(gp_tar_close(t), -1);
	assert_int_equal(access(path, F_OK), -1);  /* an error: no archive */

	t = gp_tar_open(path);
	assert_non_null(t);
	assert_int_equal(gp_tar_add_mem(t, "top/MANIFEST", "hello\n", 6), 0);
	assert_int_equal(gp_tar_add_file(t, "top/src", src), 0);
	assert_int_equal(gp_tar_close(t), 0);

	gzFile gz = gzopen(path, "rb");
	assert_non_null(gz);
	unsigned char b[512 * 8];
	int n = gzread(gz, b, sizeof b);
	gzclose(gz);
	/* header, 1 data block; header, 2 data blocks (700 bytes); 2 zeros */
	assert_int_equal(n, 512 * 7);
	const unsigned char *h = b;
	assert_string_equal((const char *)h, "top/MANIFEST");
	assert_memory_equal(h + 257, "ustar\0" "00", 8);
	assert_int_equal(strtol((const char *)h + 124, NULL, 8), 6);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += i >= 148 && i < 156 ? ' ' : h[i];
	assert_int_equal(strtol((const char *)h + 148, NULL, 8), (long)sum);
	assert_memory_equal(b + 512, "hello\n", 6);
	h = b + 1024;
	assert_string_equal((const char *)h, "top/src");
	assert_int_equal(strtol((const char *)h + 124, NULL, 8), 700);
	assert_int_equal(b[1536 + 699], 'a' + 699 % 26);
	assert_int_equal(b[1536 + 700], 0);
	for (int i = 512 * 5; i < 512 * 7; i++)
		assert_int_equal(b[i], 0);
	unlink(path);
	unlink(src);
	rmdir(dir);
}

static int count_lines(const char *path, const char *type)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int n = 0;
	while (f && fgets(line, sizeof line, f))
		n += strstr(line, type) != NULL;
	if (f)
		fclose(f);
	return n;
}

static void test_spool_rotation(void **st)
{
	(void)st;
	char dir[] = "/tmp/gp-unit-spool.XXXXXX", out[64];
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof out, "%s/export.jsonl", dir);
	struct gp_spool s;
	assert_int_equal(gp_spool_open(&s, dir, 42, 1234, 10, 0,
				       json_pack("{s:s}", "type", "header"),
				       json_pack("{s:s}", "type", "target")), 0);
	/* 35 s at 1 Hz with a 10 s span: the files turn at 10, 20, 30; the
	 * export holds 20-34 (the stretch before and the current one). */
	for (int t = 0; t < 35; t++)
		gp_spool_write(&s, t, json_pack("{s:s, s:i}", "type", "sample", "t", t), NULL, 0);
	json_t *tail[2] = { json_pack("{s:s}", "type", "verdict"), NULL };
	assert_int_equal(gp_spool_export(&s, out, tail), 0);
	assert_int_equal(count_lines(out, "\"header\""), 1);
	assert_int_equal(count_lines(out, "\"target\""), 1);
	assert_int_equal(count_lines(out, "\"sample\""), 15);
	assert_int_equal(count_lines(out, "\"verdict\""), 1);
	FILE *f = fopen(out, "r");
	char first[256];
	assert_non_null(fgets(first, sizeof first, f));
	fclose(f);
	assert_non_null(strstr(first, "\"header\""));
	gp_spool_close(&s);
	unlink(out);
	assert_int_equal(rmdir(dir), 0); /* nothing of the record left */
}

static int part_says(void *arg)
{
	printf("out %s\n", (const char *)arg);
	fprintf(stderr, "gpuprobe: part: something was missing\n");
	return 3;
}

/* A wedged part: deaf to SIGTERM, it never returns. */
static int part_wedged(void *arg)
{
	(void)arg;
	signal(SIGTERM, SIG_IGN);
	for (;;)
		pause();
	return 0;
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_part_deadline(void **st)
{
	(void)st;
	char dir[] = "/tmp/gp-unit-part.XXXXXX", out[64];
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof out, "%s/p.txt", dir);
	struct gp_part_res res;
	assert_int_equal(gp_part_run(out, 5, part_says, (void *)"x", &res), 3);
	assert_true(res.reaped);
	assert_false(res.timed_out);
	assert_string_equal(res.err, "gpuprobe: part: something was missing\n");
	FILE *f = fopen(out, "r");
	char line[32] = "";
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof line, f));
	fclose(f);
	assert_string_equal(line, "out x\n");
	/* The deadline, then SIGTERM (ignored), 2 s, then SIGKILL. */
	double t0 = mono();
	assert_int_equal(gp_part_run(out, 0.3, part_wedged, NULL, &res), -1);
	double took = mono() - t0;
	assert_true(res.timed_out);
	assert_true(res.killed);
	assert_true(res.reaped);
	assert_true(took >= 2.3 && took < 4.0);
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1); /* no child left behind */
	unlink(out);
	rmdir(dir);
}

UNIT_MAIN(
	cmocka_unit_test(test_part_deadline),
	cmocka_unit_test(test_metrics_text),
	cmocka_unit_test(test_metrics_write_atomic),
	cmocka_unit_test(test_metrics_read_hangs),
	cmocka_unit_test(test_tar_roundtrip),
	cmocka_unit_test(test_spool_rotation))
