/* Small, strict parsers shared by the /proc readers and the command line.
 * Pure functions: no I/O, tested with hostile input in tests/unit. */
#ifndef GP_PARSE_H
#define GP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decimal unsigned 64-bit; leading blanks skipped.  Fails (false) on no
 * digits or overflow.  *end (optional) gets the first unparsed char. */
bool gp_parse_u64(const char *s, uint64_t *out, const char **end);
bool gp_parse_i64(const char *s, int64_t *out, const char **end);
/* "0x..." hex or decimal, as /proc/PID/syscall writes its arguments. */
bool gp_parse_x64(const char *s, uint64_t *out, const char **end);

/* For each line "KEY<sep>VALUE" (sep: ':' and/or blanks; blanks and tabs
 * after the key are skipped, including amdgpu's stray tab) calls
 * cb(key, keylen, value, ctx), value pointing at the first non-blank
 * character and running to the end of the line (not NUL-terminated:
 * parse with the gp_parse_* functions, which stop at the newline).
 * A line without a value is skipped.  A non-zero return from cb stops
 * the walk and is returned. */
typedef int (*gp_kv_fn)(const char *key, size_t klen, const char *val,
			void *ctx);
int gp_kv_each(const char *buf, gp_kv_fn cb, void *ctx);

/* "1234 kB", "5 KiB", "3 MiB", "17" (bytes) -> bytes.  The kernel's
 * meminfo/status write "kB" meaning KiB; drm-usage-stats allows
 * KiB and MiB (Documentation/gpu/drm-usage-stats.rst). */
bool gp_parse_mem_value(const char *s, uint64_t *bytes);

/* True when key (of length klen) equals the NUL-terminated word. */
bool gp_key_is(const char *key, size_t klen, const char *word);

/* Command-line values: one parser per kind, each taking the whole string
 * or failing (false): no blanks, signs, exponents, hex, inf, nan, trailing
 * junk or overflow.  src/common/opts.h wraps them for argp (exit 64 with
 * the option's name); these are the pure part, tested in tests/unit.
 *
 * Sizes: digits, then K/M/G/T/P/E (binary) with an optional "i", "iB" or
 * "B": "16G", "16GiB", "16Gi", "4096".
 * Durations: a decimal number of seconds with up to 9 fraction digits,
 * then an optional unit: ms, s, m, h or d (timeout(1)'s, and ms):
 * "0.05", "1.5s", "250ms", "2m".  Integer nanoseconds, exact (no strtod):
 * a deadline is an integer count of ns on CLOCK_MONOTONIC.
 * Percentages: a decimal number with an optional '%'.
 * Counts: decimal digits. */
bool gp_parse_size(const char *s, uint64_t *bytes);
bool gp_parse_duration(const char *s, int64_t *ns);
bool gp_parse_percent(const char *s, double *pct);
bool gp_parse_count(const char *s, uint64_t *n);
/* gp_parse_duration, in seconds (at most 1e9 s). */
bool gp_parse_seconds(const char *s, double *secs);
/* A PID: 1..INT_MAX decimal, nothing else. */
bool gp_parse_pid(const char *s, int *pid);

/* Copies at most cap-1 bytes and always terminates (truncation is
 * intended: comm and wchan are cut to fit compact records), never inside
 * a UTF-8 character. */
void gp_strlcpy(char *dst, const char *src, size_t cap);

#endif
