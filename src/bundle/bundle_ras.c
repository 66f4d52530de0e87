/* The bundle's ras.txt: NCCL/RCCL RAS status where the job listens.
 *
 * NCCL 2.24 and later run a RAS subsystem in every rank that answers
 * `ncclras` on a local TCP port (NCCL_RAS_ADDR, default localhost:28028)
 * with the state of every rank and communicator of the job.  The reader
 * of it is being written for issue 19 (src/gpu or src/tracer, branch
 * i19-ranks); until it is merged, this hook says so in the MANIFEST and
 * the bundle goes on.  When the reader lands, call it here: the part
 * already runs in a child with a deadline (part.h), so a RAS port that
 * accepts and never answers cannot hang the bundle. */
#include "config.h"
#include "bundle.h"

#include <stdio.h>

int gp_bundle_ras(int pid, FILE *out, char *why, size_t cap)
{
	(void)pid;
	(void)out;
	snprintf(why, cap, "RAS: not probed: this gpuprobe has no NCCL/RCCL RAS reader yet "
		 "(issue 19); run 'ncclras' on the node by hand");
	return 2;
}
