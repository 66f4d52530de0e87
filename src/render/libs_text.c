#include "config.h"
#include "libs_text.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

/* Rows drawn at most: a job of many ranks still gives a readable table;
 * the two-builds check sees every row the loader kept. */
#define ROWS_MAX 64

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* The first 12 hex digits of a build-id, with "…" where it goes on when
 * more is asked for (a sentence; the table's column is 12 wide); "?"
 * when it is not hex (a file from a stranger), "none" for null. */
static void short_id(char *buf, size_t cap, const char *id, bool more)
{
	size_t n = 0;
	if (!id) {
		snprintf(buf, cap, "none");
		return;
	}
	while (id[n] && isxdigit((unsigned char)id[n]) && n < 12 && n + 1 < cap)
		n++;
	if (!n || (id[n] && !isxdigit((unsigned char)id[n]))) {
		snprintf(buf, cap, "?");
		return;
	}
	snprintf(buf, cap, "%.*s%s", (int)n, id, id[n] && more ? "…" : "");
}

/* A library entry the table can show: an object with a soname. */
static bool shown(const json_t *lib)
{
	return json_is_object(lib) && str(lib, "soname");
}

/* Printable ASCII of s, at most cap-1 bytes: a name from the file. */
static void clean(char *buf, size_t cap, const char *s)
{
	size_t n = 0;
	for (; s && *s && n + 1 < cap; s++)
		buf[n++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
	buf[n] = '\0';
}

static size_t nlibs(const struct gp_doc *d)
{
	size_t n = 0;
	const char *k;
	json_t *row;
	json_object_foreach(d->libs, k, row) {
		size_t i;
		json_t *lib;
		json_array_foreach(json_object_get(row, "libs"), i, lib)
			n += shown(lib);
	}
	return n;
}

/* One sentence per soname mapped with two build-ids by two processes:
 * the first process to map it against the first that maps another. */
static void two_builds(struct strbuf *sb, const struct gp_doc *d)
{
	json_t *first = json_object(), *said = json_object();
	const char *k;
	json_t *row;
	json_object_foreach(d->libs, k, row) {
		size_t i;
		json_t *lib;
		json_int_t pid = json_integer_value(json_object_get(row, "pid"));
		json_array_foreach(json_object_get(row, "libs"), i, lib) {
			const char *so = str(lib, "soname"), *id = str(lib, "build_id");
			char sid[24];
			short_id(sid, sizeof sid, id, false);
			if (!so || !id || !strcmp(sid, "?"))
				continue;
			json_t *f = json_object_get(first, so);
			if (!f) {
				json_object_set_new(first, so, json_pack("{s:I, s:s}", "pid", pid, "id", id));
				continue;
			}
			json_int_t fpid = json_integer_value(json_object_get(f, "pid"));
			if (fpid == pid || !strcmp(str(f, "id"), id) || json_object_get(said, so))
				continue;
			json_object_set_new(said, so, json_true());
			char a[24], b[24], name[128];
			short_id(a, sizeof a, str(f, "id"), true);
			short_id(b, sizeof b, id, true);
			clean(name, sizeof name, so);
			strbuf_addf(sb, "pid %" JSON_INTEGER_FORMAT " and %" JSON_INTEGER_FORMAT
				    " map two builds of %s (%s vs %s): one version, two builds\n",
				    fpid, pid, name, a, b);
		}
	}
	json_decref(first);
	json_decref(said);
}

/* One row of the table, cleaned for printing. */
struct lib_row {
	json_int_t pid;
	char id[24], comm[32], so[128];
};

/* Calls put() for each library shown, ROWS_MAX at most; returns how many
 * were left out. */
static size_t each_lib(const struct gp_doc *d, FILE *out,
		       void (*put)(FILE *, const struct lib_row *))
{
	size_t rows = 0, more = 0;
	const char *k;
	json_t *row;
	json_object_foreach(d->libs, k, row) {
		size_t i;
		json_t *lib;
		json_array_foreach(json_object_get(row, "libs"), i, lib) {
			if (!shown(lib))
				continue;
			if (rows++ >= ROWS_MAX) {
				more++;
				continue;
			}
			struct lib_row r = { .pid = json_integer_value(json_object_get(row, "pid")) };
			short_id(r.id, sizeof r.id, str(lib, "build_id"), false);
			clean(r.comm, sizeof r.comm, str(row, "comm") ? str(row, "comm") : "?");
			clean(r.so, sizeof r.so, str(lib, "soname"));
			put(out, &r);
		}
	}
	return more;
}

static void md_row(FILE *out, const struct lib_row *r)
{
	fprintf(out, "| %" JSON_INTEGER_FORMAT " | ", r->pid);
	gp_md_cell(out, r->comm);
	fputs(" | ", out);
	gp_md_cell(out, r->so);
	fprintf(out, " | `%s` |\n", r->id);
}

static void text_row(FILE *out, const struct lib_row *r)
{
	fprintf(out, "  %-8" JSON_INTEGER_FORMAT " %-16s %-32s %s\n", r->pid, r->comm, r->so, r->id);
}

void gp_libs_markdown(FILE *out, const struct gp_doc *d)
{
	if (!nlibs(d))
		return;
	fputs("**Runtime libraries** (the GPU runtimes each process maps)\n\n", out);
	fputs("| pid | comm | soname | build-id |\n|---:|---|---|---|\n", out);
	size_t more = each_lib(d, out, md_row);
	if (more)
		fprintf(out, "| … | %zu more | | |\n", more);
	fputc('\n', out);
	struct strbuf sb = STRBUF_INIT;
	two_builds(&sb, d);
	for (char *line = sb.buf, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = '\0';
		fputs("> **", out);
		gp_md_cell(out, line);
		fputs(".**\n\n", out);
	}
	strbuf_release(&sb);
}

void gp_libs_text(FILE *out, const struct gp_doc *d)
{
	if (!nlibs(d))
		return;
	fputs("runtime libraries:\n", out);
	fprintf(out, "  %-8s %-16s %-32s %s\n", "pid", "comm", "soname", "build-id");
	size_t more = each_lib(d, out, text_row);
	if (more)
		fprintf(out, "  ... %zu more\n", more);
	struct strbuf sb = STRBUF_INIT;
	two_builds(&sb, d);
	for (char *line = sb.buf, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = '\0';
		fprintf(out, "  %s\n", line);
	}
	strbuf_release(&sb);
}
