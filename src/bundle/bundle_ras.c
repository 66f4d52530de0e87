/* The bundle's ras.txt: NCCL/RCCL RAS status where the job listens.
 *
 * NCCL 2.24 and later run a RAS subsystem in every rank that answers
 * `ncclras` on a local TCP port (NCCL_RAS_ADDR, default localhost:28028)
 * with the state of every rank and communicator of the job; gpu/ras.c
 * reads it (the trace asks it too).  Asked only when the process maps
 * libnccl or librccl, as trace does: a port that is no RAS costs a
 * connection and says nothing.  The part runs in a child with a deadline
 * (part.h), and gp_ras_read bounds its own exchange (GP_RAS_BUDGET_S),
 * so a RAS port that accepts and never answers cannot hang the bundle. */
#include "config.h"
#include "bundle.h"
#include "procfs.h"
#include "ras.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether pid maps NCCL or RCCL: 1, 0, or -1 (maps unreadable, why). */
static int maps_nccl(const struct gp_root *root, int pid, char *why, size_t cap)
{
	char path[64];
	size_t len = 0;
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	char *maps = gp_slurp(root, path, &len);
	if (!maps) {
		snprintf(why, cap, "RAS: not probed: %s: %s", path, strerror(errno));
		return -1;
	}
	int found = strstr(maps, "/libnccl") || strstr(maps, "/librccl");
	free(maps);
	return found;
}

int gp_bundle_ras(int pid, FILE *out, char *why, size_t cap)
{
	struct gp_root root;
	if (gp_root_open(&root, NULL) < 0) {
		snprintf(why, cap, "RAS: not probed: /: %s", strerror(errno));
		return 2;
	}
	int maps = maps_nccl(&root, pid, why, cap);
	if (maps <= 0) {
		if (maps == 0)
			snprintf(why, cap, "RAS: not probed: pid %d maps no libnccl or librccl", pid);
		gp_root_close(&root);
		return 2;
	}
	char where[160];
	int port = gp_ras_port_of(&root, pid, where, sizeof where);
	gp_root_close(&root);
	json_t *line = gp_ras_read(port, 0, GP_RAS_BUDGET_S);
	if (!line) {
		snprintf(why, cap, "RAS: 127.0.0.1:%d: out of memory", port);
		return 2;
	}
	const char *state = json_string_value(json_object_get(line, "state"));
	const char *said = json_string_value(json_object_get(line, "why"));
	fprintf(out, "NCCL/RCCL RAS of pid %d at 127.0.0.1:%d (%s): %s%s%s\n\n", pid, port, where,
		state ? state : "?", said ? ": " : "", said ? said : "");
	json_dumpf(line, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	int rc = 0;
	if (!state || strcmp(state, "ok")) {
		snprintf(why, cap, "RAS on 127.0.0.1:%d: %s%s%s", port, state ? state : "?",
			 said ? ": " : "", said ? said : "");
		rc = 2;
	}
	json_decref(line);
	return rc;
}
