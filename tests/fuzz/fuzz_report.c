/* libFuzzer target, structure-aware: `gpuprobe report` of one or several
 * result files, in every format, through the code the command runs
 * (gp_doc_load, gp_render_report, gp_plot_first_trace).
 *
 * An input is JSON Lines; a line holding only a form feed ("\f") starts
 * the next file (at most MAX_FILES), so one input is `report A B C`.
 * Each file is loaded from a memfd by its /proc/self/fd path, as the
 * command loads a path; files that do not load are skipped with their
 * one-line reason, as the command does, and the rest are rendered as
 * Markdown, text and JSON into /dev/null or memory, and about one input
 * in 32 is also plotted (SVG, PNG one in 512, into /dev/null: cairo is slow).
 *
 * Oracles besides ASan/UBSan: a load error is one non-empty line; the
 * JSON format parses back as JSON.
 *
 * The custom mutator (LLVMFuzzerCustomMutator) parses the lines with
 * jansson and mutates their FIELDS: long strings and strings of Markdown
 * and printf specials, extreme numbers (1e308, -1e308, -0, 2^63, NaN-ish
 * text), wrong types, deep nesting, huge arrays, keys removed or copied,
 * lines shuffled, duplicated, dropped, files split and joined; then it
 * serializes them again.  A tenth of the time it leaves the structure
 * to libFuzzer's byte mutations, so half-written lines are fuzzed too.
 * Built by tests/fuzz/fuzz.sh; replayed by replay-main.c in make check. */
#define _GNU_SOURCE
#include "config.h"
#include "doc.h"
#include "render.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
				 uint8_t *out, size_t max_out, unsigned int seed);
/* libFuzzer's own byte mutations; weak, so that the replay build
 * (replay-main.c, no libFuzzer) links: there the mutator never runs. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size) __attribute__((weak));

#define MAX_FILES 4
#define SEP "\f"

/* ---- the target -------------------------------------------------------------------- */

static FILE *sink;
static char svg_path[64], png_path[64];
static int fds[MAX_FILES] = { -1, -1, -1, -1 };

static void setup(void)
{
	sink = fopen("/dev/null", "w");
	/* gp_plot picks SVG or PNG by the name: links to /dev/null with
	 * those names let it draw everything and write nothing. */
	snprintf(svg_path, sizeof svg_path, "/tmp/gpuprobe-fuzz-%ld.svg", (long)getpid());
	snprintf(png_path, sizeof png_path, "/tmp/gpuprobe-fuzz-%ld.png", (long)getpid());
	unlink(svg_path);
	unlink(png_path);
	if (symlink("/dev/null", svg_path) < 0 || symlink("/dev/null", png_path) < 0)
		svg_path[0] = png_path[0] = '\0';
	for (int i = 0; i < MAX_FILES; i++)
		fds[i] = memfd_create("gpuprobe-fuzz", MFD_CLOEXEC);
}

static void cleanup(void)
{
	if (svg_path[0])
		unlink(svg_path);
	if (png_path[0])
		unlink(png_path);
}

static uint32_t fnv(const uint8_t *d, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ d[i]) * 16777619u;
	return h;
}

/* The next file's bytes: up to a "\f" line or the end. */
static size_t next_file(const uint8_t *d, size_t n, size_t *skip)
{
	for (size_t i = 0; i < n; i++) {
		bool bol = i == 0 || d[i - 1] == '\n';
		if (bol && d[i] == '\f' && (i + 1 == n || d[i + 1] == '\n')) {
			*skip = i + 1 < n ? i + 2 : i + 1;
			return i;
		}
	}
	*skip = n;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!sink) {
		setup();
		atexit(cleanup);
	}
	struct gp_doc docs[MAX_FILES];
	memset(docs, 0, sizeof docs);
	struct gp_verdict_opts vo = { 0 };
	size_t n = 0, off = 0;
	uint32_t h = fnv(data, size);
	/* One input in four judges again with another --hang-after. */
	if ((h >> 8 & 3) == 0)
		vo.hang_after = (h >> 10 & 1) ? 0.5 : 600;
	for (int f = 0; f < MAX_FILES && off <= size; f++) {
		size_t skip, len = next_file(data + off, size - off, &skip);
		int fd = fds[f];
		if (fd < 0 || ftruncate(fd, 0) < 0 || pwrite(fd, data + off, len, 0) != (ssize_t)len)
			abort(); /* the harness, not a finding in gpuprobe */
		/* the doc keeps the path pointer, as report keeps argv's */
		static char paths[MAX_FILES][64];
		char err[256] = "";
		snprintf(paths[f], sizeof paths[f], "/proc/self/fd/%d", fd);
		if (gp_doc_load(paths[f], &vo, &docs[n], err, sizeof err) == 0) {
			n++;
		} else if (!err[0] || strchr(err, '\n')) {
			/* report prints "gpuprobe: FILE: REASON": one line, always */
			fprintf(stderr, "load error is not one line: '%s'\n", err);
			abort();
		}
		off += skip;
		if (off >= size)
			break;
	}

	gp_render_report(sink, "markdown", docs, n);
	gp_render_report(sink, "text", docs, n);
	char *js = NULL;
	size_t jn = 0;
	FILE *m = open_memstream(&js, &jn);
	if (m) {
		gp_render_report(m, "json", docs, n);
		fclose(m);
		json_error_t je;
		json_t *back = json_loadb(js, jn, 0, &je);
		if (!back) {
			fprintf(stderr, "report --format json is not JSON: %s (line %d)\n", je.text, je.line);
			abort();
		}
		json_decref(back);
		free(js);
	}
	/* SVG one input in 32, PNG one in 512: a plot costs several times a
	 * whole execution, mostly in cairo and libpng's deflate, not in
	 * gpuprobe (perf, 2026-12-03: with SVG one in sixteen and PNG one in
	 * sixteen, 35% of samples were in libpng, zlib and cairo; with PNG
	 * one in 128, gp_plot was still 37% of the executions' time). */
	if ((h & 31) == 0 && svg_path[0]) {
		char err[256];
		gp_plot_first_trace((h & 511) == 0 ? png_path : svg_path, docs, n, err, sizeof err);
	}
	for (size_t i = 0; i < n; i++)
		gp_doc_free(&docs[i]);
	return 0;
}

/* ---- the mutator ------------------------------------------------------------------- */

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (uint32_t)(rng % n) : 0;
}

/* Keys of real result lines (doc/result-format.md), for keys added. */
static const char *const keys[] = {
	"type", "t", "pid", "tid", "comm", "state", "wchan", "threads", "proc", "gpu", "vm", "frames",
	"kernel", "class", "since_s", "confidence", "summary", "evidence", "host", "runtimes", "hsa",
	"cuda", "path", "build_id", "build", "file_version", "version", "name", "call", "pool", "bytes",
	"mapping", "status", "status_code", "lock_s", "unlock_s", "prefault_s", "syscall", "nr", "args",
	"cpu_pct", "sys_pct", "rss_file", "rss_anon", "io", "drm", "kfd", "nvml", "signal", "reason",
	"samples", "module", "offset", "symbol", "file", "line", "pc", "unwind", "gpus", "env", "user",
	"groups", "devices", "wsl", "evidence", "memlock", "mem_available", "os", "cpu", "cpus",
	"metric", "scope", "first", "last", "slope_per_s", "role", "reads", "phases", "start_s",
	"end_s", "stuck", "refault_threads", "dirtied_mib", "written_mib", "mtime_changed", "argv",
	"cmdline", "started", "format", "command", "interval", "hang_after", "utime", "stime",
	"voluntary_ctxt_switches", "nonvoluntary_ctxt_switches", "runtime", "flags", "lib", "spinners",
};
static const char *const types[] = {
	"header", "target", "sample", "stacks", "kmsg", "arm", "exit", "verdict", "idle", "gpu",
	"pools", "", "sample ", "SAMPLE",
};
static const char *const specials[] = {
	"", "|", "`", "``|``", "\n", "\r\n", "<details>", "%s%s%s%n", "%99999999d", "\\", "**_*",
	"\xe2\x96\x88", "\xf0\x9f\x94\xa5", "NaN", "nan", "-nan", "inf", "-Infinity", "1e308",
	"0x", "0xffffffffffffffffff", "-1", "18446744073709551616", "?", " ", "\t", "R", "D", "T",
	"hang-blocked", "spin", "progress", "futex_do_wait", "[{", "libc.so.6", "/",
};
static const double reals[] = {
	1e308, -1e308, -0.0, 0.0, 9223372036854775808.0, -9223372036854775808.0,
	18446744073709551616.0, 4.9e-324, -4.9e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
	0.5, -0.5, 1e-9, 2147483648.0, 4294967296.0, 1e19, -1e19, 3.0e9, 0.1, 86400.0 * 365 * 1000,
};
static const json_int_t ints[] = {
	0, 1, -1, 2, 3, 7, 64, 255, 256, 65535, 65536, INT32_MAX, INT32_MIN, (json_int_t)UINT32_MAX,
	INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, 1LL << 53, -(1LL << 53), 4096, 1000000,
};

static json_t *long_string(size_t room)
{
	size_t n = 1 + rnd(rnd(4) == 0 ? 70000 : 300);
	if (n > room)
		n = room;
	char *s = malloc(n + 1);
	if (!s)
		return json_string("");
	const char *pat = specials[rnd(sizeof specials / sizeof *specials)];
	size_t pl = strlen(pat);
	for (size_t i = 0; i < n; i++)
		s[i] = pl && rnd(2) ? pat[i % pl] : "ab|`*_<>\\%0 \n"[rnd(14)];
	s[n] = '\0';
	/* Unchecked: a UTF-8 sequence cut in two goes out as such, and the
	 * loader meets a line jansson refuses, as in a file cut by hand. */
	json_t *j = json_stringn_nocheck(s, n);
	free(s);
	return j;
}

static json_t *random_scalar(size_t room)
{
	switch (rnd(9)) {
	case 0:
		return json_real(reals[rnd(sizeof reals / sizeof *reals)]);
	case 1:
		return json_integer(ints[rnd(sizeof ints / sizeof *ints)]);
	case 2:
		return json_string(specials[rnd(sizeof specials / sizeof *specials)]);
	case 3:
		return long_string(room);
	case 4:
		return json_null();
	case 5:
		return json_boolean(rnd(2));
	case 6:
		return json_object();
	case 7:
		return json_array();
	default:
		return json_string(types[rnd(sizeof types / sizeof *types)]);
	}
}

/* A random node of v (v itself included), and its parent. */
static json_t *pick(json_t *v, json_t **parent, const char **key, size_t *idx)
{
	*parent = NULL;
	*key = NULL;
	for (int depth = 0; depth < 12; depth++) {
		size_t n = json_is_object(v) ? json_object_size(v) : json_is_array(v) ? json_array_size(v) : 0;
		if (!n || rnd(4) == 0)
			return v;
		size_t k = rnd((uint32_t)n);
		*parent = v;
		if (json_is_array(v)) {
			*idx = k;
			*key = NULL;
			v = json_array_get(v, k);
		} else {
			void *it = json_object_iter(v);
			while (k-- && it)
				it = json_object_iter_next(v, it);
			if (!it)
				return v;
			*key = json_object_iter_key(it);
			v = json_object_iter_value(it);
		}
	}
	return v;
}

/* Puts nv where the node was (steals nv). */
static void put(json_t *parent, const char *key, size_t idx, json_t *nv)
{
	if (!nv)
		return;
	if (json_is_array(parent))
		json_array_set_new(parent, idx, nv);
	else if (json_is_object(parent) && key)
		json_object_set_new(parent, key, nv);
	else
		json_decref(nv);
}

static json_t *mutate_value(json_t *v, size_t room)
{
	switch (rnd(12)) {
	case 0: /* a number at an edge */
		if (json_is_integer(v) && rnd(2))
			return json_integer(ints[rnd(sizeof ints / sizeof *ints)]);
		return json_real(reals[rnd(sizeof reals / sizeof *reals)]);
	case 1: /* a number, off by a little or a lot */
		if (json_is_number(v)) {
			double x = json_number_value(v);
			double f[] = { -1, 2, 1000, 1e-3, 1e12, -1e12 };
			return json_real(x * f[rnd(6)] + (double)rnd(3));
		}
		return json_integer((json_int_t)rnd(100000) - 50000);
	case 2:
	case 3:
		return long_string(room);
	case 4: /* NaN-ish text where a number was */
		return json_string(specials[13 + rnd(9)]);
	case 5: { /* deep nesting */
		json_t *x = json_deep_copy(v);
		unsigned depth = 1 + rnd(rnd(3) ? 40 : 1500);
		for (unsigned i = 0; x && i < depth; i++) {
			json_t *w = rnd(2) ? json_array() : json_object();
			if (json_is_array(w))
				json_array_append_new(w, x);
			else
				json_object_set_new(w, keys[rnd(sizeof keys / sizeof *keys)], x);
			x = w;
		}
		return x;
	}
	case 6: { /* a huge array of one element */
		json_t *a = json_array();
		json_t *e = rnd(2) ? json_deep_copy(v) : random_scalar(64);
		size_t es = 8;
		char *s = json_dumps(e, JSON_COMPACT | JSON_ENCODE_ANY);
		if (s)
			es = strlen(s) + 1;
		free(s);
		size_t n = 1 + rnd(rnd(2) ? 5000 : 100);
		if (n * es > room)
			n = room / es + 1;
		for (size_t i = 0; i < n; i++)
			json_array_append(a, e);
		json_decref(e);
		return a;
	}
	default: /* a wrong type */
		return random_scalar(room);
	}
}

/* One structural change to one line (an object, usually). */
static void mutate_line(json_t *line, size_t room)
{
	json_t *parent;
	const char *key;
	size_t idx = 0;
	json_t *node = pick(line, &parent, &key, &idx);
	int op = rnd(10);
	if (op == 0 && json_is_object(node) && json_object_size(node)) {
		/* remove a key */
		void *it = json_object_iter(node);
		for (uint32_t k = rnd((uint32_t)json_object_size(node)); k && it; k--)
			it = json_object_iter_next(node, it);
		if (it)
			json_object_del(node, json_object_iter_key(it));
		return;
	}
	if (op == 1 && json_is_object(node)) {
		/* add a known key with any value */
		json_object_set_new(node, keys[rnd(sizeof keys / sizeof *keys)], random_scalar(room));
		return;
	}
	if (op == 2 && json_is_array(node) && json_array_size(node)) {
		/* duplicate or drop an element */
		size_t k = rnd((uint32_t)json_array_size(node));
		if (rnd(2))
			json_array_insert(node, k, json_array_get(node, k));
		else
			json_array_remove(node, k);
		return;
	}
	if (op == 3 && json_is_object(line)) {
		/* the line's type */
		json_object_set_new(line, "type", json_string(types[rnd(sizeof types / sizeof *types)]));
		return;
	}
	if (!parent) {
		/* the whole line: keep it an object, change one of its fields */
		if (json_is_object(line) && json_object_size(line)) {
			void *it = json_object_iter(line);
			for (uint32_t k = rnd((uint32_t)json_object_size(line)); k && it; k--)
				it = json_object_iter_next(line, it);
			if (it)
				json_object_set_new(line, json_object_iter_key(it),
						    mutate_value(json_object_iter_value(it), room));
		}
		return;
	}
	put(parent, key, idx, mutate_value(node, room));
}

struct lines {
	char **s;   /* each line, without its '\n'; malloc'd */
	size_t n, cap;
};

static void lines_push(struct lines *l, const char *s, size_t n)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 16;
		char **ns = realloc(l->s, nc * sizeof *ns);
		if (!ns)
			return;
		l->s = ns;
		l->cap = nc;
	}
	char *c = malloc(n + 1);
	if (!c)
		return;
	memcpy(c, s, n);
	c[n] = '\0';
	l->s[l->n++] = c;
}

static void lines_split(struct lines *l, const uint8_t *d, size_t n)
{
	size_t st = 0;
	for (size_t i = 0; i <= n; i++)
		if (i == n || d[i] == '\n') {
			if (i > st || i < n)
				lines_push(l, (const char *)d + st, i - st);
			st = i + 1;
		}
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->s[i]);
	free(l->s);
	memset(l, 0, sizeof *l);
}

/* Joins the lines into out; 0 when they do not fit in max. */
static size_t lines_join(const struct lines *l, uint8_t *out, size_t max)
{
	size_t o = 0;
	for (size_t i = 0; i < l->n; i++) {
		size_t k = strlen(l->s[i]);
		if (o + k + 1 > max)
			return 0;
		memcpy(out + o, l->s[i], k);
		o += k;
		out[o++] = '\n';
	}
	return o;
}

static void lines_set(struct lines *l, size_t i, char *s)
{
	free(l->s[i]);
	l->s[i] = s;
}

static size_t total(const struct lines *l)
{
	size_t t = 0;
	for (size_t i = 0; i < l->n; i++)
		t += strlen(l->s[i]) + 1;
	return t;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	rng = ((uint64_t)seed << 32 | seed) ^ 0x9e3779b97f4a7c15ull;
	if (!rng)
		rng = 1;
	if (!LLVMFuzzerMutate)
		return size;
	if (rnd(10) == 0 || size == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	struct lines l = { 0 };
	lines_split(&l, data, size);
	if (!l.n) {
		lines_free(&l);
		return LLVMFuzzerMutate(data, size, max_size);
	}
	size_t used = total(&l);
	size_t room = max_size > used ? max_size - used : 0;
	int rounds = 1 + (int)rnd(3);
	for (int r = 0; r < rounds; r++) {
		int op = (int)rnd(16);
		size_t i = rnd((uint32_t)l.n), j = rnd((uint32_t)l.n);
		if (op == 0 && l.n > 1) { /* swap two lines */
			char *t = l.s[i];
			l.s[i] = l.s[j];
			l.s[j] = t;
		} else if (op == 1) { /* duplicate a line */
			lines_push(&l, l.s[i], strlen(l.s[i]));
			char *t = l.s[l.n - 1];
			memmove(&l.s[j + 1], &l.s[j], (l.n - 1 - j) * sizeof *l.s);
			l.s[j] = t;
		} else if (op == 2 && l.n > 1) { /* drop a line */
			free(l.s[i]);
			memmove(&l.s[i], &l.s[i + 1], (l.n - i - 1) * sizeof *l.s);
			l.n--;
		} else if (op == 3) { /* shuffle */
			for (size_t k = l.n; k > 1; k--) {
				size_t q = rnd((uint32_t)k);
				char *t = l.s[k - 1];
				l.s[k - 1] = l.s[q];
				l.s[q] = t;
			}
		} else if (op == 4) { /* split into another file here, or join two */
			if (!strcmp(l.s[i], SEP)) {
				free(l.s[i]);
				memmove(&l.s[i], &l.s[i + 1], (l.n - i - 1) * sizeof *l.s);
				l.n--;
			} else {
				lines_push(&l, SEP, 1);
				char *t = l.s[l.n - 1];
				memmove(&l.s[i + 1], &l.s[i], (l.n - 1 - i) * sizeof *l.s);
				l.s[i] = t;
			}
		} else if (op == 5) { /* cut a line short (a killed run) */
			size_t k = strlen(l.s[i]);
			if (k)
				l.s[i][rnd((uint32_t)k)] = '\0';
		} else { /* a field of a line */
			json_error_t e;
			json_t *v = json_loads(l.s[i], JSON_DECODE_ANY, &e);
			if (!v)
				continue;
			mutate_line(v, room);
			size_t flags = JSON_COMPACT | JSON_ENCODE_ANY | (rnd(4) ? 0 : JSON_ENSURE_ASCII);
			char *s = json_dumps(v, flags);
			json_decref(v);
			if (s)
				lines_set(&l, i, s);
		}
		if (!l.n)
			break;
	}
	size_t n = lines_join(&l, data, max_size);
	lines_free(&l);
	if (!n)
		return LLVMFuzzerMutate(data, size, max_size);
	return n;
}

/* Lines of both inputs, in order, from one or the other: files combined. */
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
				 uint8_t *out, size_t max_out, unsigned int seed)
{
	rng = ((uint64_t)seed << 32 | seed) ^ 0x2545f4914f6cdd1dull;
	if (!rng)
		rng = 1;
	struct lines a = { 0 }, b = { 0 }, c = { 0 };
	lines_split(&a, d1, s1);
	lines_split(&b, d2, s2);
	if (rnd(2)) { /* report A B: the two as two files */
		for (size_t i = 0; i < a.n; i++)
			lines_push(&c, a.s[i], strlen(a.s[i]));
		lines_push(&c, SEP, 1);
		for (size_t i = 0; i < b.n; i++)
			lines_push(&c, b.s[i], strlen(b.s[i]));
	} else { /* one file, lines from both */
		size_t i = 0, j = 0;
		while (i < a.n || j < b.n) {
			if (j >= b.n || (i < a.n && rnd(2)))
				lines_push(&c, a.s[i], strlen(a.s[i])), i++;
			else
				lines_push(&c, b.s[j], strlen(b.s[j])), j++;
		}
	}
	size_t n = lines_join(&c, out, max_out);
	lines_free(&a);
	lines_free(&b);
	lines_free(&c);
	return n;
}
