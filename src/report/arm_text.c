#include "config.h"
#include "arm_text.h"

#include <stdlib.h>
#include <string.h>

void gp_size_text(unsigned long long b, char *buf, size_t cap)
{
	char digits[32], grouped[48];
	snprintf(digits, sizeof digits, "%llu", b);
	size_t n = strlen(digits), k = 0;
	for (size_t i = 0; i < n && k + 2 < sizeof grouped; i++) {
		if (i && (n - i) % 3 == 0)
			grouped[k++] = ' ';
		grouped[k++] = digits[i];
	}
	grouped[k] = '\0';
	const char *unit = "KiB";
	double v = (double)b / 1024;
	if (b >= (1ull << 30)) {
		unit = "GiB";
		v = (double)b / (1ull << 30);
	} else if (b >= (1ull << 20)) {
		unit = "MiB";
		v = (double)b / (1ull << 20);
	}
	snprintf(buf, cap, "%.1f %s (%s B)", v, unit, grouped);
}

static const char *str(json_t *a, const char *k, const char *dflt)
{
	const char *s = json_string_value(json_object_get(a, k));
	return s ? s : dflt;
}

static double num(json_t *a, const char *k, bool *have)
{
	json_t *v = json_object_get(a, k);
	*have = json_is_number(v);
	return *have ? json_number_value(v) : 0;
}

#define NCOL 6
static void row(FILE *out, bool md, const int *w, char cells[][200], int ncol)
{
	for (int i = 0; i < ncol; i++) {
		if (md)
			fprintf(out, "| %s ", cells[i]);
		else if (i + 1 < ncol)
			fprintf(out, "%-*s  ", w[i], cells[i]);
		else
			fprintf(out, "%s", cells[i]);
	}
	fprintf(out, md ? "|\n" : "\n");
}

static void table(FILE *out, bool md, char (*cells)[NCOL][200], size_t nrows, int ncol)
{
	int w[NCOL] = { 0 };
	for (size_t r = 0; r < nrows; r++)
		for (int c = 0; c < ncol; c++) {
			int l = (int)strlen(cells[r][c]);
			if (l > w[c])
				w[c] = l;
		}
	for (size_t r = 0; r < nrows; r++) {
		row(out, md, w, cells[r], ncol);
		if (md && r == 0) {
			for (int c = 0; c < ncol; c++)
				fprintf(out, "|---");
			fprintf(out, "|\n");
		}
	}
}

void gp_arm_table(FILE *out, json_t *const *arms, size_t n, bool md)
{
	char (*cells)[NCOL][200] = calloc(n + 1, sizeof *cells);
	if (!cells)
		return;
	static const char *h1[NCOL] = { "arm", "call", "range", "prefault", "lock", "result" };
	static const char *h2[NCOL] = { "arm", "unlock", "VmPin", "dirtied/written", "file", "refault" };
	for (int c = 0; c < NCOL; c++)
		snprintf(cells[0][c], 200, "%s", h1[c]);
	for (size_t i = 0; i < n; i++) {
		json_t *a = arms[i];
		char (*r)[200] = cells[i + 1];
		bool h, h2x;
		snprintf(r[0], 200, "%s", str(a, "name", "?"));
		const char *pool = str(a, "pool", NULL);
		const char *fl = str(a, "flags", NULL);
		snprintf(r[1], 200, "%s%s%s%s%s", str(a, "call", "?"), pool ? " " : "", pool ? pool : "",
			 fl && strcmp(fl, "0") ? " flags=" : "", fl && strcmp(fl, "0") ? fl : "");
		char sz[64];
		gp_size_text((unsigned long long)num(a, "bytes", &h), sz, sizeof sz);
		snprintf(r[2], 200, "%s %s", sz, str(a, "mapping", ""));
		double pf = num(a, "prefault_s", &h), rate = num(a, "prefault_mib_s", &h2x);
		if (h)
			snprintf(r[3], 200, "%.3f s (%.0f MiB/s)", pf, rate);
		else
			snprintf(r[3], 200, "skipped");
		double ls = num(a, "lock_s", &h);
		const char *status = str(a, "status", "?");
		bool timeout = !strcmp(status, "timeout");
		snprintf(r[4], 200, h ? "%s%.3f s" : "-", timeout ? "> " : "", ls);
		json_t *code = json_object_get(a, "status_code");
		if (timeout) {
			json_t *st = json_object_get(a, "stuck");
			snprintf(r[5], 200, "timeout: never returned; wchan %s, %s",
				 str(st, "wchan", "?")[0] ? str(st, "wchan", "?") : "-",
				 str(st, "syscall", "?")[0] ? str(st, "syscall", "?") : "-");
		} else if (json_is_integer(code)) {
			long long c = json_integer_value(code);
			if (!strcmp(str(a, "runtime", ""), "hsa"))
				snprintf(r[5], 200, "0x%llx %s", c, status);
			else
				snprintf(r[5], 200, "%lld %s", c, status);
		} else {
			snprintf(r[5], 200, "%s", status);
		}
	}
	table(out, md, cells, n + 1, NCOL);
	fprintf(out, "\n");
	for (int c = 0; c < NCOL; c++)
		snprintf(cells[0][c], 200, "%s", h2[c]);
	for (size_t i = 0; i < n; i++) {
		json_t *a = arms[i];
		char (*r)[200] = cells[i + 1];
		bool h, hb;
		snprintf(r[0], 200, "%s", str(a, "name", "?"));
		double us = num(a, "unlock_s", &h);
		const char *ust = str(a, "unlock_status", NULL);
		if (h)
			snprintf(r[1], 200, "%.3f s%s%s", us, ust ? " " : "", ust ? ust : "");
		else
			snprintf(r[1], 200, "-");
		double pin = num(a, "vm_pin_mib", &h), lck = num(a, "vm_lck_mib", &hb);
		if (h || hb)
			snprintf(r[2], 200, "%.0f MiB (VmLck %.0f MiB)", pin, lck);
		else
			snprintf(r[2], 200, "-");
		double d = num(a, "dirtied_mib", &h), w = num(a, "written_mib", &hb);
		if (h)
			snprintf(r[3], 200, "%.1f / %.1f MiB", d, w);
		else
			snprintf(r[3], 200, "-");
		json_t *mc = json_object_get(a, "mtime_changed");
		snprintf(r[4], 200, "%s", json_is_boolean(mc)
			 ? (json_is_true(mc) ? "mtime CHANGED" : "mtime unchanged") : "-");
		int rt = (int)num(a, "refault_threads", &h);
		double rc = num(a, "refault_chunks", &hb);
		if (rt)
			snprintf(r[5], 200, "%d threads, %.0f chunks", rt, rc);
		else
			snprintf(r[5], 200, "-");
	}
	table(out, md, cells, n + 1, NCOL);
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		const char *note = str(arms[i], "note", NULL);
		if (note)
			fprintf(out, "%snote, %s: %s\n", first ? "\n" : "", str(arms[i], "name", "?"), note);
		if (note)
			first = false;
	}
	free(cells);
}
