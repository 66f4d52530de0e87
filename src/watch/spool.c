/* watch's per-process record, two files in turn: see spool.h. */
#include "config.h"
#include "spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int begin(struct gp_spool *s, double t)
{
	s->cur = gp_result_create(s->path[s->which]);
	if (!s->cur)
		return -1;
	s->started = t;
	if (gp_result_write(s->cur, json_incref(s->head)) < 0
	    || gp_result_write(s->cur, json_incref(s->target)) < 0)
		s->failed = true;
	return 0;
}

int gp_spool_open(struct gp_spool *s, const char *dir, int pid, unsigned long long start,
		  double span, double t, json_t *head, json_t *target)
{
	memset(s, 0, sizeof *s);
	s->head = head;
	s->target = target;
	s->span = span;
	for (int i = 0; i < 2; i++)
		snprintf(s->path[i], sizeof s->path[i], "%s/%d-%llu.%c.jsonl", dir, pid, start, "ab"[i]);
	if (begin(s, t) < 0) {
		int e = errno;
		json_decref(s->head);
		json_decref(s->target);
		s->head = s->target = NULL;
		errno = e;
		return -1;
	}
	return 0;
}

bool gp_spool_due(const struct gp_spool *s, double t)
{
	return s->cur && !s->failed && t - s->started >= s->span;
}

void gp_spool_write(struct gp_spool *s, double t, json_t *line, const struct gp_raw *raws,
		    size_t nraws)
{
	if (gp_spool_due(s, t)) {
		gp_result_close(s->cur);
		s->which = !s->which;
		s->other_used = true;
		if (begin(s, t) < 0)
			s->failed = true;
	}
	if (!s->cur || s->failed) {
		json_decref(line);
		return;
	}
	if (gp_result_write_raws(s->cur, line, raws, nraws) < 0)
		s->failed = true;
}

static int append(int out, const char *src, int skip_lines)
{
	FILE *in = fopen(src, "re");
	if (!in)
		return -1;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;
	while ((n = getline(&buf, &cap, in)) > 0) {
		if (skip_lines > 0) {
			skip_lines--;
			continue;
		}
		if (buf[n - 1] != '\n')
			break; /* a line being written: not whole */
		if (write(out, buf, (size_t)n) != n) {
			rc = -1;
			break;
		}
	}
	free(buf);
	fclose(in);
	return rc;
}

int gp_spool_export(struct gp_spool *s, const char *dst, json_t **tail)
{
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	int rc = out < 0 ? -1 : 0;
	if (rc == 0 && s->other_used)
		rc = append(out, s->path[!s->which], 0);
	if (rc == 0)
		rc = append(out, s->path[s->which], s->other_used ? 2 : 0);
	for (size_t i = 0; tail && tail[i]; i++) {
		char *text = json_dumps(tail[i], JSON_COMPACT);
		json_decref(tail[i]);
		if (!text)
			continue;
		size_t len = strlen(text);
		if (rc == 0 && (write(out, text, len) != (ssize_t)len || write(out, "\n", 1) != 1))
			rc = -1;
		free(text);
	}
	if (out >= 0 && close(out) < 0)
		rc = -1;
	return rc;
}

void gp_spool_close(struct gp_spool *s)
{
	if (s->cur)
		gp_result_close(s->cur);
	s->cur = NULL;
	for (int i = 0; i < 2; i++)
		unlink(s->path[i]);
	json_decref(s->head);
	json_decref(s->target);
	s->head = s->target = NULL;
}
