/* A small streaming JSON writer for the one hot spot of a trace: the
 * per-thread array of every sample.
 *
 * Why not jansson there: building a jansson object per thread (17 keys,
 * each an allocation and a hash insert) and dumping it cost about 7 us a
 * thread, as much as reading the thread's /proc files (perf, 1000-thread
 * target, Linux 6.18).  Written straight into one reused buffer it costs
 * well under 1 us.  Everything else is still built with jansson, and
 * every line is read back with jansson. */
#ifndef GP_JSONW_H
#define GP_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gp_jsonw {
	char *buf;
	size_t len, cap;
	uint64_t first;   /* bit d: the container at depth d has no member yet */
	unsigned depth;
	bool oom;
	bool after_key;
};

void gp_jw_reset(struct gp_jsonw *w);
void gp_jw_free(struct gp_jsonw *w);
void gp_jw_obj_begin(struct gp_jsonw *w);
void gp_jw_obj_end(struct gp_jsonw *w);
void gp_jw_arr_begin(struct gp_jsonw *w);
void gp_jw_arr_end(struct gp_jsonw *w);
/* A key inside an object; the next value call writes its value. */
void gp_jw_key(struct gp_jsonw *w, const char *key);
void gp_jw_str(struct gp_jsonw *w, const char *s);
void gp_jw_int(struct gp_jsonw *w, int64_t v);
void gp_jw_uint(struct gp_jsonw *w, uint64_t v);
void gp_jw_real(struct gp_jsonw *w, double v);
void gp_jw_bool(struct gp_jsonw *w, bool v);
void gp_jw_hex(struct gp_jsonw *w, uint64_t v); /* "0x1f" */

/* A member of the current object, key and value in one call. */
#define GP_JW_MEMBER(kind, type)							\
	static inline void gp_jw_k##kind(struct gp_jsonw *w, const char *key, type v)	\
	{										\
		gp_jw_key(w, key);							\
		gp_jw_##kind(w, v);							\
	}
GP_JW_MEMBER(str, const char *)
GP_JW_MEMBER(int, int64_t)
GP_JW_MEMBER(uint, uint64_t)
GP_JW_MEMBER(real, double)
GP_JW_MEMBER(bool, bool)
GP_JW_MEMBER(hex, uint64_t)
#undef GP_JW_MEMBER

#endif
