/* The kernel log as a person reads it: the `kmsg` lines a trace kept
 * (doc.h, struct gp_klog) as the report's "Kernel log" section, in
 * Markdown and text; the driver errors in one line beside the verdict;
 * their words where the phases and the timeline mark them; and their
 * entry in the report's JSON.  Every field comes from a file, so every
 * field is checked for its type and written escaped. */
#ifndef GP_KLOG_H
#define GP_KLOG_H

#include "doc.h"
#include "strbuf.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* The section: a table of every kept line (time from the trace start,
 * driver, kind, Xid, pid, text), a row saying how many were left out
 * wherever lines were; nothing when the file has no kmsg line. */
void gp_klog_markdown(FILE *out, const struct gp_doc *d);
void gp_klog_text(FILE *out, const struct gp_doc *d);

/* Beside the verdict: the driver errors, judged phase first, at most
 * three named, and the records lost: "Xid 31 (MMU fault) at +12.3 s, pid
 * 4242; and 2 more; 1 of 3 in the judged phase".  Plain words (the
 * caller escapes them); false, and nothing added, when the log has no
 * error and lost nothing. */
bool gp_klog_verdict_words(struct strbuf *sb, const struct gp_doc *d);

/* The kept errors with from <= t < to (t <= to when last): "Xid 31 (MMU
 * fault) at +12.3 s, amdgpu ring timeout at +30.5 s", at most three and
 * "and N more"; returns how many. */
size_t gp_klog_span_words(struct strbuf *sb, const struct gp_doc *d, double from, double to,
			  bool last);

/* An error line in a few words: "Xid 31 (MMU fault)", "amdgpu ring
 * timeout", "OOM kill"; short: without the Xid's name. */
void gp_klog_label(struct strbuf *sb, const json_t *line, bool short_form);

/* Markdown: s with every ASCII punctuation that could be markup
 * backslash-escaped ('|' too: safe in a table cell) and control
 * characters as spaces. */
void gp_md_text(FILE *out, const char *s);

/* The report JSON's "kernel_log": lines, errors, errors_judged, lost,
 * left_out and the kept lines themselves ("shown"). */
json_t *gp_klog_json(const struct gp_doc *d);

#endif
