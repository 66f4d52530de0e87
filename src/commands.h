/* The command table's contract: each command is
 *     int cmd_NAME(int argc, char **argv, const struct gp_global *g)
 * in a file of its own; argv[0] is the command name.  It returns an exit
 * code from enum gp_exit (common/error.h). */
#ifndef GP_COMMANDS_H
#define GP_COMMANDS_H

#include <stdbool.h>

struct gp_global {
	bool quiet;
	const char *argv0;
	int argc;           /* the whole command line, for result headers */
	char **argv;
};

int cmd_trace(int argc, char **argv, const struct gp_global *g);
int cmd_report(int argc, char **argv, const struct gp_global *g);
int cmd_lock(int argc, char **argv, const struct gp_global *g);
int cmd_pools(int argc, char **argv, const struct gp_global *g);
int cmd_info(int argc, char **argv, const struct gp_global *g);
int cmd_demo(int argc, char **argv, const struct gp_global *g);
int cmd_workload(int argc, char **argv, const struct gp_global *g);
int cmd_idle(int argc, char **argv, const struct gp_global *g);
int cmd_idle_child(int argc, char **argv, const struct gp_global *g);
int cmd_stacks(int argc, char **argv, const struct gp_global *g);
int cmd_unwind(int argc, char **argv, const struct gp_global *g);
int cmd_bundle(int argc, char **argv, const struct gp_global *g);
int cmd_watch(int argc, char **argv, const struct gp_global *g);

#endif
