#include "config.h"
#include "arms.h"
#include "doc.h"
#include "stacks_text.h"
#include "strbuf.h"
#include "units.h"

#include <stdlib.h>
#include <string.h>

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static double num(const json_t *o, const char *k, double dflt)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : dflt;
}

/* A count from the file as an int: out of range or NaN is 0, never a
 * cast of a double int cannot hold (undefined; tests/fuzz found
 * refault_threads 2.1e9, regress/report/refault-threads-huge). */
static int count(const json_t *o, const char *k)
{
	double v = num(o, k, 0);
	return v >= 0 && v <= 1e6 ? (int)v : 0;
}

static const char *mapping_text(const char *m, bool md)
{
	if (!m)
		return "?";
	if (!strcmp(m, "file-shared-ro"))
		return md ? "file, `MAP_SHARED`, read-only" : "file, MAP_SHARED, read-only";
	if (!strcmp(m, "file-shared-rw"))
		return md ? "file, `MAP_SHARED`, read-write" : "file, MAP_SHARED, read-write";
	if (!strcmp(m, "anon"))
		return "anonymous";
	return m;
}

/* "16.4 GiB (17 559 175 168 B)": the exact count, grouped, as the seed. */
static void range_text(char *buf, size_t cap, double bytes)
{
	char h[32], digits[32], g[48];
	gp_fmt_size(h, sizeof h, bytes);
	snprintf(digits, sizeof digits, "%.0f", bytes);
	size_t n = strlen(digits), o = 0;
	for (size_t i = 0; i < n && o + 2 < sizeof g; i++) {
		if (i && (n - i) % 3 == 0)
			g[o++] = ' ';
		g[o++] = digits[i];
	}
	g[o] = '\0';
	if (bytes >= 1024)
		snprintf(buf, cap, "%s (%s B)", h, g);
	else
		snprintf(buf, cap, "%s", h);
}

/* As the seed writes them: 0.128 s, 4.206 s, 20.1 s. */
static void secs(char *buf, size_t cap, double s)
{
	snprintf(buf, cap, s < 10 ? "%.3f s" : "%.1f s", s);
}

void gp_arm_cells(const json_t *a, bool md, struct gp_arm_cells *c)
{
	const char *q = md ? "`" : "";
	const char *call = str(a, "call"), *pool = str(a, "pool"), *flags = str(a, "flags");
	snprintf(c->arm, sizeof c->arm, "%s", str(a, "name") ? str(a, "name") : "?");
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s%s%s", q, call ? call : "?", q);
	if (pool && *pool)
		strbuf_addf(&sb, " (pool %s)", pool);
	if (flags && strcmp(flags, "0"))
		strbuf_addf(&sb, " flags=%s", flags);
	strbuf_copy_to(&sb, c->call, sizeof c->call);

	char r[96];
	range_text(r, sizeof r, num(a, "bytes", 0));
	int refault = count(a, "refault_threads");
	if (refault > 0)
		snprintf(c->range, sizeof c->range, "%s, %s, +%d thread%s re-faulting", r,
			 mapping_text(str(a, "mapping"), md), refault, refault == 1 ? "" : "s");
	else
		snprintf(c->range, sizeof c->range, "%s, %s", r, mapping_text(str(a, "mapping"), md));

	double pf = num(a, "prefault_s", -1), pr = num(a, "prefault_mib_s", -1);
	char pfs[24];
	secs(pfs, sizeof pfs, pf);
	if (pf < 0)
		snprintf(c->prefault, sizeof c->prefault, "none");
	else if (pr >= 0 && str(a, "prefault_kind") && !strcmp(str(a, "prefault_kind"), "mapping"))
		/* Pages already cached were only mapped: a mapping rate, which
		 * read "1 745 164 MiB/s" as if it were a read rate (issue 13). */
		snprintf(c->prefault, sizeof c->prefault, "%s (cached: mapped, not read)", pfs);
	else if (str(a, "prefault_kind") && !strcmp(str(a, "prefault_kind"), "read")
		 && num(a, "prefault_read_mib_s", -1) >= 0)
		snprintf(c->prefault, sizeof c->prefault, "%s (read %.0f MiB/s)", pfs,
			 num(a, "prefault_read_mib_s", -1));
	else if (pr >= 0)
		snprintf(c->prefault, sizeof c->prefault, "%s (%.0f MiB/s)", pfs, pr);
	else
		snprintf(c->prefault, sizeof c->prefault, "%s", pfs);

	double lk = num(a, "lock_s", -1);
	const char *status = str(a, "status");
	bool hung = status && (!strcmp(status, "hang") || !strcmp(status, "timeout"));
	char lks[24];
	secs(lks, sizeof lks, lk);
	if (lk < 0)
		snprintf(c->lock, sizeof c->lock, hung ? "never returned" : "-");
	else
		snprintf(c->lock, sizeof c->lock, hung ? "> %s (watchdog)" : "%s", lks);

	/* HSA codes read in hex (0x28, 0x1000: the seed's and ROCr's own
	 * spelling), CUDA's in decimal (cuGetErrorName's CUDA_ERROR_* = 1..999). */
	json_t *code = json_object_get(a, "status_code");
	bool hex = !(str(a, "runtime") && !strcmp(str(a, "runtime"), "cuda"));
	strbuf_reset(&sb);
	if (json_is_integer(code) && json_integer_value(code) == 0)
		strbuf_addf(&sb, "%src=0%s", q, q);
	else if (json_is_integer(code) && hex)
		strbuf_addf(&sb, "%s0x%llx = %s%s", q,
			    (unsigned long long)json_integer_value(code), status ? status : "?", q);
	else if (json_is_integer(code))
		strbuf_addf(&sb, "%s%lld = %s%s", q,
			    (long long)json_integer_value(code), status ? status : "?", q);
	else
		strbuf_addstr(&sb, status ? status : "?");
	if (hung) {
		const json_t *st = json_object_get(a, "stuck");
		const char *w = str(st, "wchan"), *sc = str(st, "syscall");
		if (st)
			strbuf_addf(&sb, ": stuck in %s, %s", w && *w ? w : "-", sc && *sc ? sc : "-");
	}
	double unl = num(a, "unlock_s", -1), dm = num(a, "dirtied_mib", -1), wm = num(a, "written_mib", -1);
	if (unl >= 0)
		strbuf_addf(&sb, ", unlock %.3f s", unl);
	if (dm > 0.5 || wm > 0.5)
		strbuf_addf(&sb, "; system dirtied %.0f MiB, wrote back %.0f MiB", dm, wm);
	if (json_is_true(json_object_get(a, "mtime_changed")))
		strbuf_addstr(&sb, md ? "; **file mtime changed**" : "; FILE MTIME CHANGED");
	strbuf_copy_to(&sb, c->result, sizeof c->result);
	strbuf_release(&sb);
}

/* One line on top for a result that is arms only. */
void gp_arms_summary(char *buf, size_t cap, const json_t *arms)
{
	size_t n = json_array_size(arms), ok = 0, hung = 0, i;
	double slow = -1;
	const char *slow_name = NULL, *fail_status = NULL;
	size_t fail_same = 0;
	const json_t *a;
	json_array_foreach(arms, i, a) {
		json_t *code = json_object_get(a, "status_code");
		const char *st = str(a, "status");
		if (json_is_integer(code) && json_integer_value(code) == 0) {
			ok++;
			double lk = num(a, "lock_s", -1);
			if (lk > slow) {
				slow = lk;
				slow_name = str(a, "name");
			}
		} else if (st && (!strcmp(st, "hang") || !strcmp(st, "timeout"))) {
			hung++;
		} else if (st) {
			if (!fail_status || !strcmp(fail_status, st)) {
				fail_status = st;
				fail_same++;
			}
		}
	}
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%zu arm%s: %zu returned 0", n, n == 1 ? "" : "s", ok);
	if (n - ok - hung)
		strbuf_addf(&sb, ", %zu failed%s%s%s", n - ok - hung,
			    fail_status ? " (" : "", fail_status ? fail_status : "",
			    fail_status ? (fail_same == n - ok - hung ? ")" : ", ...)") : "");
	if (hung)
		strbuf_addf(&sb, ", %zu never returned", hung);
	if (slow >= 0)
		strbuf_addf(&sb, "; slowest successful lock %.3f s (%s)", slow,
			    slow_name ? slow_name : "?");
	strbuf_copy_to(&sb, buf, cap);
	strbuf_release(&sb);
}

/* The probe's own notes: seed 004 lost two arms to its own mistakes (a GPU
 * agent's pool, an env knob); gpuprobe says so below the table. */
static void notes(FILE *out, const json_t *arms, bool md)
{
	size_t i;
	const json_t *a;
	bool any = false;
	json_array_foreach(arms, i, a) {
		const char *note = str(a, "note");
		if (!note)
			continue;
		any = true;
		fprintf(out, md ? "- %s: " : "note, %s: ", str(a, "name") ? str(a, "name") : "?");
		if (md)
			gp_md_cell(out, note);
		else
			fputs(note, out);
		fputc('\n', out);
	}
	if (any && md)
		fputc('\n', out);
}

/* A stuck call's thread, frames and kernel stack (arm.stuck, unwound
 * from outside by lockprobe/unwind.c), through the stacks renderer (a
 * `stacks` line of one thread): live and in `report` alike. */
static void stuck_frames(FILE *out, const json_t *arms, bool md)
{
	size_t i;
	json_t *a;
	json_array_foreach(arms, i, a) {
		json_t *st = json_object_get(a, "stuck");
		if (!json_is_object(st))
			continue;
		const char *call = json_string_value(json_object_get(a, "call"));
		const char *u = json_string_value(json_object_get(st, "unwind"));
		const char *why = json_string_value(json_object_get(st, "unwind_error"));
		fprintf(out, md ? "\n**Where %s waits** (arm %s):\n\n" : "\nWhere %s waits (arm %s):\n",
		       call ? call : "the call", json_string_value(json_object_get(a, "name")));
		bool frames = json_array_size(json_object_get(st, "frames")) > 0;
		if (u && strcmp(u, "ok") && !frames)
			fprintf(out, md ? "user frames not read: %s%s%s\n\n" : "  user frames not read: %s%s%s\n", u,
			       why ? ": " : "", why ? why : "");
		json_t *t = json_deep_copy(st);
		/* /proc/TID/stack's "[<0>] " prefix: the stacks line has none. */
		json_t *k = json_object_get(t, "kernel"), *kl;
		size_t ki;
		json_array_foreach(k, ki, kl) {
			const char *ks = json_string_value(kl), *e = ks ? strstr(ks, "] ") : NULL;
			if (ks && ks[0] == '[' && e)
				json_array_set_new(k, ki, json_string(e + 2));
		}
		json_t *line = json_pack("{s:s, s:f, s:I, s:[o]}", "type", "stacks", "t", 0.0, "pid",
					 json_integer_value(json_object_get(st, "pid")), "threads", t);
		struct gp_stacks_render_opts ro = { .format = md ? GP_STACKS_MARKDOWN : GP_STACKS_TEXT,
						    .hot_pct = 101, .comm = "gpuprobe", .max_frames = 24 };
		gp_render_stacks(out, line, &ro);
		json_decref(line);
	}
}

void gp_arms_markdown(FILE *out, const json_t *arms)
{
	if (!json_array_size(arms))
		return;
	fputs("| arm | call | range | prefault | lock | result |\n|---|---|---|---|---|---|\n", out);
	size_t i;
	const json_t *a;
	json_array_foreach(arms, i, a) {
		struct gp_arm_cells c;
		gp_arm_cells(a, true, &c);
		const char *cells[] = { c.arm, c.call, c.range, c.prefault, c.lock, c.result };
		for (size_t k = 0; k < sizeof cells / sizeof *cells; k++) {
			fputs(k ? " | " : "| ", out);
			gp_md_cell(out, cells[k]);
		}
		fputs(" |\n", out);
	}
	fputc('\n', out);
	notes(out, arms, true);
	stuck_frames(out, arms, true);
}

/* ---- text: aligned columns ------------------------------------------------- */

#define NCOL 6
typedef char row_t[NCOL][320];

static void aligned(FILE *out, row_t *rows, size_t nrows)
{
	int w[NCOL] = { 0 };
	for (size_t r = 0; r < nrows; r++)
		for (int c = 0; c < NCOL; c++) {
			int l = (int)strlen(rows[r][c]);
			if (l > w[c])
				w[c] = l;
		}
	for (size_t r = 0; r < nrows; r++)
		for (int c = 0; c < NCOL; c++) {
			if (c + 1 < NCOL)
				fprintf(out, "%-*s  ", w[c], rows[r][c]);
			else
				fprintf(out, "%s\n", rows[r][c]);
		}
}

static void effects_row(const json_t *a, row_t row)
{
	double us = num(a, "unlock_s", -1), pin = num(a, "vm_pin_mib", -1), lck = num(a, "vm_lck_mib", -1);
	double d = num(a, "dirtied_mib", -1), w = num(a, "written_mib", -1);
	const char *ust = str(a, "unlock_status");
	snprintf(row[0], sizeof row[0], "%s", str(a, "name") ? str(a, "name") : "?");
	if (us >= 0)
		snprintf(row[1], sizeof row[1], "%.3f s%s%s", us, ust ? " " : "", ust ? ust : "");
	else
		snprintf(row[1], sizeof row[1], "-");
	if (pin >= 0 || lck >= 0)
		snprintf(row[2], sizeof row[2], "%.0f MiB (VmLck %.0f MiB)", pin > 0 ? pin : 0, lck > 0 ? lck : 0);
	else
		snprintf(row[2], sizeof row[2], "-");
	if (d >= 0)
		snprintf(row[3], sizeof row[3], "%.1f / %.1f MiB", d, w > 0 ? w : 0);
	else
		snprintf(row[3], sizeof row[3], "-");
	json_t *mc = json_object_get(a, "mtime_changed");
	snprintf(row[4], sizeof row[4], "%s", json_is_boolean(mc)
		 ? (json_is_true(mc) ? "mtime CHANGED" : "mtime unchanged") : "-");
	int rt = count(a, "refault_threads");
	if (rt > 0)
		snprintf(row[5], sizeof row[5], "%d threads, %.0f chunks", rt, num(a, "refault_chunks", 0));
	else
		snprintf(row[5], sizeof row[5], "-");
}

void gp_arms_text(FILE *out, const json_t *arms)
{
	size_t n = json_array_size(arms);
	if (!n)
		return;
	row_t *rows = calloc(n + 1, sizeof *rows);
	if (!rows)
		return;
	static const char *const h1[NCOL] = { "arm", "call", "range", "prefault", "lock", "result" };
	static const char *const h2[NCOL] = { "arm", "unlock", "VmPin", "dirtied/written", "file",
					      "refault" };
	for (int c = 0; c < NCOL; c++)
		snprintf(rows[0][c], sizeof rows[0][c], "%s", h1[c]);
	for (size_t i = 0; i < n; i++) {
		struct gp_arm_cells c;
		gp_arm_cells(json_array_get(arms, i), false, &c);
		const char *cells[NCOL] = { c.arm, c.call, c.range, c.prefault, c.lock, c.result };
		for (int k = 0; k < NCOL; k++)
			snprintf(rows[i + 1][k], sizeof rows[i + 1][k], "%s", cells[k]);
	}
	aligned(out, rows, n + 1);
	fputc('\n', out);
	for (int c = 0; c < NCOL; c++)
		snprintf(rows[0][c], sizeof rows[0][c], "%s", h2[c]);
	for (size_t i = 0; i < n; i++)
		effects_row(json_array_get(arms, i), rows[i + 1]);
	aligned(out, rows, n + 1);
	bool any = false;
	for (size_t i = 0; i < n && !any; i++)
		any = str(json_array_get(arms, i), "note") != NULL;
	if (any)
		fputc('\n', out);
	notes(out, arms, false);
	stuck_frames(out, arms, false);
	free(rows);
}
