/* What `gpuprobe report` writes for a set of loaded results, in one place
 * so that the command and its fuzz target (tests/fuzz/fuzz_report.c) run
 * the same code: the merged JSON document, the text blocks, or the
 * Markdown section, and the plot of the first trace. */
#include "config.h"
#include "render.h"
#include "error.h"
#include "result.h"
#include "safetext.h"
#include "siblings_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* JSON_REAL_PRECISION(10) prints DBL_MAX as 1.797693135e308, past
 * DBL_MAX: no JSON reader takes that back (jansson: "real number
 * overflow"; found by tests/fuzz/fuzz_report, regress/report/real-max).
 * No result holds such a value honestly: beyond +-1e308 it is written as
 * +-1e308.  clamp false: true when v holds one; clamp true: clamps them
 * (in a copy: the document shares its objects with the loaded lines). */
static bool reals_over(json_t *v, bool clamp)
{
	if (json_is_real(v)) {
		double x = json_real_value(v);
		if (!(fabs(x) > 1e308))
			return false;
		if (clamp)
			json_real_set(v, copysign(1e308, x));
		return true;
	}
	if (json_is_array(v)) {
		size_t i;
		json_t *e;
		json_array_foreach(v, i, e)
			if (reals_over(e, clamp) && !clamp)
				return true;
	} else if (json_is_object(v)) {
		const char *k;
		json_t *e;
		json_object_foreach(v, k, e)
			if (reals_over(e, clamp) && !clamp)
				return true;
	}
	return clamp;
}

static void render_words(FILE *out, const char *format, const struct gp_doc *docs, size_t n)
{
	if (!strcmp(format, "text")) {
		/* A job traced apart (its nodes): its ranks compared across
		 * the files (issue 29). */
		struct strbuf sb = STRBUF_INIT;
		if (n > 1 && gp_report_siblings(&sb, docs, n))
			fprintf(out, "across the files: %s\n\n", sb.buf);
		strbuf_release(&sb);
		for (size_t i = 0; i < n; i++) {
			if (i)
				fputc('\n', out);
			gp_render_text(out, &docs[i]);
		}
	} else if (n) {
		gp_render_markdown(out, docs, n);
	}
}

void gp_render_report(FILE *out, const char *format, const struct gp_doc *docs, size_t n)
{
	if (!strcmp(format, "json")) {
		json_t *res = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(res, gp_render_json(&docs[i]));
		json_t *doc = json_pack("{s:s, s:o}", "gpuprobe", PACKAGE_VERSION, "results", res);
		/* A job traced apart: its ranks compared across the files. */
		struct strbuf sb = STRBUF_INIT;
		if (n > 1 && gp_report_siblings(&sb, docs, n))
			json_object_set_new(doc, "across_files", gp_json_string(sb.buf));
		strbuf_release(&sb);
		if (reals_over(doc, false)) {
			json_t *c = json_deep_copy(doc);
			json_decref(doc);
			doc = c;
			reals_over(doc, true);
		}
		json_dumpf(doc, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		fputc('\n', out);
		json_decref(doc);
	} else {
		/* Text and Markdown quote a stranger's strings (a comm, a
		 * symbol, a file's name, a kernel log line) in many places: the
		 * whole is written as safe text, so that none of them reaches a
		 * terminal as an escape sequence or a byte that is not UTF-8
		 * (common/safetext.h; a name with a newline is made one line
		 * where it is quoted).  Rendered to memory first, then written. */
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		render_words(m ? m : out, format, docs, n);
		if (m && fclose(m) == 0)
			gp_safe_lines(out, buf, len);
		else if (m)
			gp_err(NULL, "out of memory");
		free(buf);
	}
}

int gp_plot_first_trace(const char *path, const struct gp_doc *docs, size_t n, char *err,
			size_t errcap)
{
	size_t k = 0;
	while (k < n && !docs[k].is_trace)
		k++;
	if (k == n) {
		snprintf(err, errcap, "no trace to plot (no file with samples)");
		return -1;
	}
	return gp_plot(path, &docs[k], err, errcap);
}
