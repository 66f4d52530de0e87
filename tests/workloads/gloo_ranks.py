"""Two ranks of a real torch.distributed job, gloo on the CPU (issue 19).

Rank 0 reaches the collective and waits in all_reduce for its peer;
rank 1 never calls it: it is somewhere else (load_next_batch), the
shape of a job where one rank is late or lost.  Usage:
    python3 gloo_ranks.py RANK INIT_FILE
Both ranks print "rank N ready" once the process group is up.  The line
numbers of the two waits are the truth tests/e2e/trace-gloo-ranks.sh
checks: keep them where they are, or change the test with them.
"""
import ctypes
import datetime
import sys
import time

import torch
import torch.distributed as dist


def reduce_grads(t):
    dist.all_reduce(t)                  # line 21: rank 0 waits here


def load_next_batch():
    time.sleep(3600)                    # line 25: rank 1 never comes


def main():
    rank, init_file = int(sys.argv[1]), sys.argv[2]
    # Die with the launcher (prctl PR_SET_PDEATHSIG = 1, SIGKILL): a
    # test killed mid-way leaves no rank behind; rank 0 waits in C++,
    # where Python's own signal handling never runs.
    ctypes.CDLL(None, use_errno=True).prctl(1, 9)
    # file:// rendezvous: no port to pick, tests may run side by side.
    dist.init_process_group("gloo", init_method="file://" + init_file, rank=rank,
                            world_size=2, timeout=datetime.timedelta(seconds=600))
    print("rank %d ready" % rank, flush=True)
    t = torch.ones(4)
    if rank == 0:
        reduce_grads(t)
    else:
        load_next_batch()


main()
