"""A real torch.distributed job, gloo on the CPU, one rank apart (issue 29).

Each rank is one process, started as a launcher starts it (torchrun,
srun, mpirun): RANK and WORLD_SIZE in its environment.  Every rank but
ODD reaches the collective and waits in all_reduce (reduce_grads); rank
ODD does what MODE says:
    sleep    it is somewhere else: asleep in load_next_batch
    other    it calls another collective: broadcast, in sync_params
    exit     it exits with status 1 before it joins (the others wait in
             init_process_group for it: gloo's peers of a rank that dies
             after joining see its sockets close and fail at once, so a
             dead rank hangs a gloo job at the rendezvous)
    compute  it computes for ever on the CPU, in spin
    same     no rank is apart: every rank waits in recv for the next rank,
             which is itself in recv (the input never comes)
Usage:
    RANK=N WORLD_SIZE=W python3 gloo_job.py MODE ODD INIT_FILE
Each rank prints "started" once torch is imported and "ready" once the
process group is up.  The tests find the lines by their "# at:" marks.
"""
import ctypes
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist


def reduce_grads(t):
    dist.all_reduce(t)                      # at: all_reduce


def load_next_batch():
    time.sleep(3600)                        # at: sleep


def sync_params(t):
    dist.broadcast(t, src=0)                # at: broadcast


def spin():
    x = 0
    while True: x += 1                      # at: spin


def wait_for_input(t, rank, world):
    dist.recv(t, src=(rank + 1) % world)    # at: recv


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    mode, odd, init_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    # Die with the launcher (prctl PR_SET_PDEATHSIG = 1, SIGKILL): a
    # rank waits in C++, where Python's own signal handling never runs.
    ctypes.CDLL(None, use_errno=True).prctl(1, 9)
    print("rank %d started" % rank, flush=True)
    if mode == "exit" and rank == odd:
        sys.exit(1)
    # file:// rendezvous: no port to pick, tests may run side by side.
    dist.init_process_group("gloo", init_method="file://" + init_file, rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=600))
    print("rank %d ready" % rank, flush=True)
    t = torch.ones(4)
    if mode == "same":
        wait_for_input(t, rank, world)
    elif rank == odd and mode == "sleep":
        load_next_batch()
    elif rank == odd and mode == "other":
        sync_params(t)
    elif rank == odd and mode == "compute":
        spin()
    reduce_grads(t)


main()
