#include "config.h"
#include "ras_text.h"
#include "strbuf.h"

#include <string.h>

/* A row's cells, whatever the output: t, state, communicator, rank, pid,
 * what it read.  Every string is a stranger's (the file's). */
typedef void (*row_fn)(FILE *out, double t, const char *state, const char *comm, const char *rank,
		       const char *pid, const char *what);

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static void num(char *buf, size_t cap, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	if (json_is_integer(v))
		snprintf(buf, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else
		snprintf(buf, cap, "?");
}

/* "AllReduce 6, AllGather 2": the kinds it launched any of. */
static void counts_words(struct strbuf *sb, const json_t *counts)
{
	const char *op;
	json_t *v;
	json_object_foreach((json_t *)counts, op, v) {
		if (!json_is_integer(v) || json_integer_value(v) <= 0)
			continue;
		strbuf_addf(sb, "%s%.16s %" JSON_INTEGER_FORMAT, sb->len ? ", " : "", op,
			    json_integer_value(v));
	}
	if (!sb->len)
		strbuf_addstr(sb, "none launched");
}

/* At most this many rows a read: a job of 1024 ranks is a few lines
 * here, the rest counted. */
#define ROWS_PER_READ 16

static void one_read(FILE *out, const json_t *line, row_fn row)
{
	double t = json_number_value(json_object_get(line, "t"));
	const char *state = str(line, "state");
	if (strcmp(state, "ok")) {
		row(out, t, state, "", "", "", str(line, "why"));
		return;
	}
	size_t shown = 0, all = 0, i, j;
	json_t *c, *r;
	char rank[24], pid[24];
	json_array_foreach(json_object_get(line, "comms"), i, c) {
		const char *hash = str(c, "hash");
		json_array_foreach(json_object_get(c, "ranks"), j, r) {
			if (all++ >= ROWS_PER_READ)
				continue;
			struct strbuf sb = STRBUF_INIT;
			counts_words(&sb, json_object_get(r, "counts"));
			num(rank, sizeof rank, r, "rank");
			num(pid, sizeof pid, r, "pid");
			row(out, t, shown++ ? "" : "ok", hash, rank, pid, sb.buf);
			strbuf_release(&sb);
		}
		json_array_foreach(json_object_get(c, "missing"), j, r) {
			if (all++ >= ROWS_PER_READ)
				continue;
			num(rank, sizeof rank, r, "rank");
			num(pid, sizeof pid, r, "pid");
			row(out, t, shown++ ? "" : "ok", hash, rank, pid,
			    json_is_true(json_object_get(r, "dead")) ? "unreachable: considered dead"
								     : "unreachable (no data from it)");
		}
	}
	if (!all)
		row(out, t, "ok", "", "", "", "no communicator");
	if (all > ROWS_PER_READ) {
		char more[48];
		snprintf(more, sizeof more, "%zu more ranks", all - ROWS_PER_READ);
		row(out, t, "", "", "", "", more);
	}
}

static void md_row(FILE *out, double t, const char *state, const char *comm, const char *rank,
		   const char *pid, const char *what)
{
	fprintf(out, "| %+.1f s | ", t);
	gp_md_cell(out, state);
	fputs(" | ", out);
	gp_md_cell(out, comm);
	fprintf(out, " | %s | %s | ", rank, pid);
	gp_md_cell(out, what);
	fputs(" |\n", out);
}

/* A stranger's bytes for a terminal: printable only, at most max. */
static void printable(struct strbuf *sb, const char *s, size_t max)
{
	strbuf_reset(sb);
	for (; *s && sb->len < max; s++)
		strbuf_addch(sb, (*s >= 0x20 && *s < 0x7f) ? *s : '?');
}

static void text_row(FILE *out, double t, const char *state, const char *comm, const char *rank,
		     const char *pid, const char *what)
{
	struct strbuf st = STRBUF_INIT, co = STRBUF_INIT, wh = STRBUF_INIT;
	printable(&st, state, 9);
	printable(&co, comm, 18);
	printable(&wh, what, 200);
	fprintf(out, "  %+8.1f s  %-9s %-18s %5s %8s  %s\n", t, st.buf, co.buf, rank, pid, wh.buf);
	strbuf_release(&st);
	strbuf_release(&co);
	strbuf_release(&wh);
}

static const char *addr_of(const struct gp_doc *d)
{
	return str(json_array_get(d->ras, 0), "addr");
}

void gp_ras_markdown(FILE *out, const struct gp_doc *d)
{
	if (!json_array_size(d->ras))
		return;
	fputs("**NCCL RAS** (", out);
	gp_md_cell(out, addr_of(d));
	fputs(": each rank's collectives launched so far)\n\n", out);
	fputs("| t | read | communicator | rank | pid | collectives |\n|---:|---|---|---:|---:|---|\n", out);
	size_t i;
	json_t *line;
	json_array_foreach(d->ras, i, line)
		one_read(out, line, md_row);
	if (d->ras_more)
		fprintf(out, "| … | %lu more reads | | | | |\n", d->ras_more);
	fputc('\n', out);
}

void gp_ras_text(FILE *out, const struct gp_doc *d)
{
	if (!json_array_size(d->ras))
		return;
	struct strbuf a = STRBUF_INIT;
	printable(&a, addr_of(d), 40);
	fprintf(out, "NCCL RAS (%s):\n", a.buf);
	strbuf_release(&a);
	size_t i;
	json_t *line;
	json_array_foreach(d->ras, i, line)
		one_read(out, line, text_row);
	if (d->ras_more)
		fprintf(out, "  ... %lu more reads\n", d->ras_more);
}
