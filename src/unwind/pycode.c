/* Code objects of a CPython process, read after the detach: their
 * names, files and line tables, cached and bounded; see pyframes_int.h. */
#include "config.h"
#include "pyframes_int.h"

#include <limits.h>
#include <stdlib.h>

static void code_free(struct gp_py *py, struct codeent *e)
{
	py->ncode--;
	py->code_bytes -= e->bytes;
	free(e->function);
	free(e->file);
	free(e->table);
	free(e);
}

/* Drops every cached code object but those the current gp_py_resolve
 * call uses (all of them with keep false). */
static void code_evict(struct gp_py *py, bool keep)
{
	for (size_t i = 0; i < CODE_BUCKETS; i++) {
		struct codeent **pp = &py->code[i], *e;
		while ((e = *pp)) {
			if (keep && e->gen == py->code_gen) {
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			code_free(py, e);
		}
	}
}

void gp_py_code_clear(struct gp_py *py)
{
	code_evict(py, false);
}

/* A str object as UTF-8 (malloc'd), or NULL. */
static char *read_str(const struct gp_py *py, uint64_t addr)
{
	const struct pyoffs *o = &py->o;
	unsigned char hdr[STR_BUF];
	size_t hl = o->u_compact_size;
	int64_t len;
	uint32_t state;
	if (!addr || hl > sizeof hdr || rd(py, addr, hdr, hl) < 0 ||
	    !field(hdr, hl, o->u_length, &len, 8) || !field(hdr, hl, o->u_state, &state, 4))
		return NULL;
	/* state: interned:2, kind:3, compact:1, ascii:1 (cpython/unicodeobject.h,
	 * the same bits in 3.11, 3.12 and 3.13). */
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (len < 0 || len > 4096 || !compact || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	uint64_t data = addr + (ascii ? o->u_ascii_size : o->u_compact_size);
	size_t raw = (size_t)len * kind;
	unsigned char *b = malloc(raw + 1);
	if (!b)
		return NULL;
	if (rd(py, data, b, raw) < 0) {
		free(b);
		return NULL;
	}
	if (ascii) {
		b[raw] = 0;
		for (size_t i = 0; i < raw; i++)
			if (b[i] >= 0x80 || !b[i])
				b[i] = '?';
		return (char *)b;
	}
	char *out = malloc((size_t)len * 4 + 1);
	if (!out) {
		free(b);
		return NULL;
	}
	size_t k = 0;
	for (int64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? b[i] : kind == 2 ? ((uint16_t *)b)[i] : ((uint32_t *)b)[i];
		if (!c || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			c = '?';
		if (c < 0x80) {
			out[k++] = (char)c;
		} else if (c < 0x800) {
			out[k++] = (char)(0xc0 | c >> 6);
			out[k++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			out[k++] = (char)(0xe0 | c >> 12);
			out[k++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[k++] = (char)(0x80 | (c & 0x3f));
		} else {
			out[k++] = (char)(0xf0 | c >> 18);
			out[k++] = (char)(0x80 | ((c >> 12) & 0x3f));
			out[k++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[k++] = (char)(0x80 | (c & 0x3f));
		}
	}
	out[k] = 0;
	free(b);
	return out;
}

/* The line of the instruction at byte offset addrq, from a 3.11+ location
 * table (Objects/locations.md; PyCode_Addr2Line and advance() in
 * Objects/codeobject.c, the same in 3.11, 3.12 and 3.13).  An entry:
 * 1CCCCLLL, code C, length L+1 code units; codes 13 (no column) and 14
 * (long) start with a signed varint line delta, 10-12 are deltas 0-2,
 * 15 means "no line", the others keep the line.  -1: no line. */
int gp_py_addr2line(const uint8_t *t, size_t n, int firstlineno, long addrq);
int gp_py_addr2line(const uint8_t *t, size_t n, int firstlineno, long addrq)
{
	if (addrq < 0)
		return firstlineno;
	long line = firstlineno, end = 0;
	size_t i = 0;
	while (i < n) {
		uint8_t b = t[i];
		if (!(b & 0x80))
			return -1; /* not at an entry: a table we do not understand */
		unsigned code = (b >> 3) & 15;
		long delta = 0;
		if (code == 13 || code == 14) {
			/* scan_signed_varint(ptr + 1) */
			size_t j = i + 1;
			unsigned long val = 0;
			unsigned shift = 0;
			uint8_t r;
			do {
				if (j >= n || shift > 30)
					return -1;
				r = t[j++];
				val |= (unsigned long)(r & 63) << shift;
				shift += 6;
			} while (r & 64);
			delta = (val & 1) ? -(long)(val >> 1) : (long)(val >> 1);
		} else if (code >= 10 && code <= 12) {
			delta = code - 10;
		}
		line += delta;
		end += ((b & 7) + 1) * 2;
		if (addrq < end)
			/* A line that is no int is a table that lies. */
			return code == 15 || line < 0 || line > INT_MAX ? -1 : (int)line;
		do
			i++;
		while (i < n && !(t[i] & 0x80));
	}
	return -1;
}

static struct codeent *code_get(struct gp_py *py, uint64_t addr)
{
	const struct pyoffs *o = &py->o;
	unsigned char hdr[CO_BUF];
	size_t hl = o->co_code_adaptive;
	uint64_t type, filename, qualname, name, linetable;
	int32_t first;
	if (hl > sizeof hdr || rd(py, addr, hdr, hl) < 0 || !field(hdr, hl, o->ob_type, &type, 8))
		return NULL;
	if (type != py->code_type)
		return NULL; /* not (or no longer) a code object */
	if (!field(hdr, hl, o->co_filename, &filename, 8) ||
	    !field(hdr, hl, o->co_qualname, &qualname, 8) ||
	    !field(hdr, hl, o->co_name, &name, 8) ||
	    !field(hdr, hl, o->co_linetable, &linetable, 8) ||
	    !field(hdr, hl, o->co_firstlineno, &first, 4))
		return NULL;
	unsigned h = (unsigned)((addr >> 4) * 0x9e3779b1u) % CODE_BUCKETS;
	for (struct codeent *e = py->code[h]; e; e = e->next)
		if (e->addr == addr && e->filename == filename && e->qualname == qualname &&
		    e->linetable == linetable) {
			e->gen = py->code_gen;
			return e;
		}
	if (py->ncode >= CODE_MAX || py->code_bytes >= CODE_BYTES) {
		code_evict(py, true);
		if (py->ncode >= CODE_MAX || py->code_bytes >= CODE_BYTES)
			return NULL; /* all in use by this call's frames */
	}
	struct codeent *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->addr = addr;
	e->filename = filename;
	e->qualname = qualname;
	e->linetable = linetable;
	e->firstlineno = first;
	e->gen = py->code_gen;
	e->function = read_str(py, qualname);
	if (!e->function)
		e->function = read_str(py, name);
	e->file = read_str(py, filename);
	e->bytes = sizeof *e + (e->function ? strlen(e->function) + 1 : 0) +
		   (e->file ? strlen(e->file) + 1 : 0);
	unsigned char bh[BY_BUF];
	int64_t sz = 0;
	if (o->by_sval > sizeof bh || rd(py, linetable, bh, o->by_sval) < 0 ||
	    !field(bh, o->by_sval, o->by_size, &sz, 8))
		sz = 0;
	if (sz > 0 && (uint64_t)sz <= TABLE_MAX && py->code_bytes + e->bytes + (size_t)sz <= CODE_BYTES) {
		e->table = malloc((size_t)sz);
		if (e->table && rd(py, linetable + o->by_sval, e->table, (size_t)sz) == 0) {
			e->ntable = (size_t)sz;
			e->bytes += (size_t)sz;
		} else {
			free(e->table);
			e->table = NULL;
		}
	}
	py->ncode++;
	py->code_bytes += e->bytes;
	e->next = py->code[h];
	py->code[h] = e;
	return e;
}

/* For tests/unit/test_pyhostile: the code-object cache's entries and bytes. */
void gp_py_code_cache(const struct gp_py *py, size_t *n, size_t *bytes);
void gp_py_code_cache(const struct gp_py *py, size_t *n, size_t *bytes)
{
	*n = py->ncode;
	*bytes = py->code_bytes;
}

void gp_py_resolve(struct gp_py *py, struct gp_pythread *pt)
{
	if (!py || !pt)
		return;
	py->code_gen++; /* the entries this call uses stay until the next */
	for (size_t i = 0; i < pt->n; i++) {
		struct gp_pyframe_raw *f = &pt->f[i];
		struct codeent *e = code_get(py, f->code);
		if (!e)
			continue;
		f->function = e->function;
		f->file = e->file;
		/* 3.11/3.12 prev_instr, 3.13 instr_ptr: both point at the
		 * instruction being executed (_PyInterpreterFrame_LASTI). */
		long lasti = (long)((int64_t)(f->instr - (f->code + py->o.co_code_adaptive)) / 2);
		f->line = e->ntable ? gp_py_addr2line(e->table, e->ntable, e->firstlineno, lasti * 2) : -1;
	}
}

