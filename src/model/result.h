/* Saved results: JSON Lines, one object a line, each with a "type"
 * (DESIGN.md: header, target, sample, stacks, arm, exit, verdict).
 *
 * Each line is serialised whole, then written with one write() and the
 * file is never buffered: a run that is killed keeps every line it wrote
 * and at most one unterminated tail, which readers drop.
 *
 * A path ending in ".zst" is written zstd-compressed (one frame, flushed
 * after every line: the same guarantee, a cut block instead of a cut
 * line); model/rstream.h reads it, and gzip, back. */
#ifndef GP_RESULT_H
#define GP_RESULT_H

#include <jansson.h>
#include <stdint.h>
#include <stdbool.h>

struct gp_result;

/* Creates (truncates) path.  As root, a symlink is not followed.  NULL
 * with errno on failure. */
struct gp_result *gp_result_create(const char *path);
/* The one line for a gp_result_create() that failed with errno e. */
void gp_result_create_failed(const char *path, int e);
/* The result streamed to standard output ('-o -'): a dup of fd 1, not
 * an open of /dev/stdout (a symlink, which O_NOFOLLOW refuses as root,
 * and whose O_TRUNC would empty a file stdout appends to).  path is the
 * name the messages use. */
struct gp_result *gp_result_stdout(const char *path);
/* The result format's version, in every header (doc/result-format.md):
 * 1 before it was written (2026-12-02), 2 with process trees (`procs`,
 * a thread's `wait`, `stacks` lines' `why`, the verdict's `stuck`), 3
 * with a thread that has not run written as a reference to its last
 * record (2026-12-05, model/threadref.h). */
#define GP_RESULT_FORMAT 4

/* Writes and steals `line`.  -1 with errno on a write error; the error is
 * sticky (later writes fail too) so a full disk is never silent. */
int gp_result_write(struct gp_result *r, json_t *line);
/* As gp_result_write, with one more member appended to the object:
 * "key": raw, where raw is JSON text already serialised (gp_jsonw). */
int gp_result_write_raw(struct gp_result *r, json_t *line, const char *key,
			const char *raw, size_t rawlen);
/* As gp_result_write_raw, with several members. */
struct gp_raw {
	const char *key;
	const char *text;
	size_t len;
};
int gp_result_write_raws(struct gp_result *r, json_t *line, const struct gp_raw *raws,
			 size_t nraws);
/* Closes; -1 with errno if any write or the close failed. */
int gp_result_close(struct gp_result *r);
const char *gp_result_path(const struct gp_result *r);

/* {"type":"header","gpuprobe":VERSION,"command":..,"argv":[..],
 *  "started":ISO8601,"host":host} — steals host.  With "sampler_path"
 * (and "sampler_why") once a thread table was made (gp_result_note_sampler). */
json_t *gp_result_header(const char *command, int argc, char **argv, json_t *host);

/* How this gpuprobe's thread tables read threads (tracer/tasks.c): "bpf"
 * or "proc" and why not BPF.  A "proc" stands over an earlier "bpf" (the
 * header says the path was not BPF's for every process). */
void gp_result_note_sampler(const char *path, const char *why);



/* json_string() refuses invalid UTF-8 (a comm or cmdline may hold any
 * bytes): this one escapes such bytes as "\xNN" text instead of losing
 * the value. */
json_t *gp_json_string(const char *s);
/* "0x1234" text, for 64-bit addresses and arguments that JSON integers
 * (signed 64-bit in jansson) cannot all hold. */
json_t *gp_json_hex(unsigned long long v);
/* parent[name] as an object, added when absent; NULL when it cannot be
 * (parent NULL, no memory, or parent[name] not an object and not
 * replaceable). */
json_t *gp_json_child(json_t *parent, const char *name);
/* obj[key] = v, a JSON integer (the readers keep v <= INT64_MAX); no-op
 * when obj is NULL. */
void gp_json_set_u64(json_t *obj, const char *key, uint64_t v);
/* o[k] when it is a non-negative JSON integer. */
bool gp_json_get_u64(const json_t *o, const char *k, uint64_t *v);
#endif
