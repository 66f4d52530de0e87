/* trace's result lines (-o FILE): see run.h. */
#include "config.h"
#include "run.h"
#include "commands.h"
#include "error.h"

#include <errno.h>

/* A write's outcome: the first error said once, the exit status set;
 * writing goes on (the sticky error of the writer says the rest). */
static void wrote(struct run *r, int rc)
{
	if (rc < 0) {
		if (r->rc == 0)
			gp_err_errno(errno, r->o->out.path, "cannot write the result");
		r->rc = GP_EXIT_ERROR;
	} else {
		r->lines++;
	}
}

void trace_write_line_raws(struct run *r, json_t *line, const struct gp_raw *raws, size_t n)
{
	if (!r->out) {
		json_decref(line);
		return;
	}
	wrote(r, gp_result_write_raws(r->out, line, raws, n));
}

void trace_write_line(struct run *r, json_t *line)
{
	if (!r->out) {
		json_decref(line);
		return;
	}
	wrote(r, gp_result_write(r->out, line));
}
