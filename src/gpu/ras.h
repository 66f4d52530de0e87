/* NCCL's RAS service, asked from outside (issue 19): NCCL 2.24 and later
 * start a thread in every process that listens on localhost port 28028
 * (NCCL_RAS_ADDR changes it) and answers a text protocol
 * (github.com/NVIDIA/nccl, src/ras/client_support.cc,
 * rasClientEventLoop; the ncclras client, src/ras/client.cc):
 *   -> CLIENT PROTOCOL 2        <- SERVER PROTOCOL 2
 *   -> TIMEOUT 1                <- OK      (the wait for other processes' data)
 *   -> SET FORMAT json          <- OK      (2.28.7 and later; before: ERROR ...)
 *   -> VERBOSE STATUS           <- the job's state, then the server closes.
 * One read is one connection, bounded in time (GP_RAS_BUDGET_S): a
 * service that accepts and never answers costs the trace that, never a
 * hang.  What it read is a `ras` line (doc/result-format.md). */
#ifndef GP_RAS_H
#define GP_RAS_H

#include <jansson.h>

#define GP_RAS_PORT_DEFAULT 28028   /* NCCL_RAS_CLIENT_PORT, src/ras/ras_internal.h */
#define GP_RAS_BUDGET_S 3.0          /* a whole read: connect, handshake, answer */

/* One read of 127.0.0.1:port at trace time t: a `ras` line {type, t,
 * addr, state (ok, absent, no-answer, garbage), why (not ok), format,
 * nccl_version, comms, partial}.  budget_s bounds the whole exchange. */
json_t *gp_ras_read(int port, double t, double budget_s);

/* The port of NCCL_RAS_ADDR ("host:port") in pid's environment, else
 * GP_RAS_PORT_DEFAULT; where says which (cap bytes). */
struct gp_root;
int gp_ras_port_of(const struct gp_root *root, int pid, char *where, size_t cap);

#endif
