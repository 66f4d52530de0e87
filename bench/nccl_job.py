"""A real NCCL job for gpuprobe's odd-rank checks on the device (issue 29).

Each rank (RANK, WORLD_SIZE, MASTER_ADDR/PORT in its environment, as
torchrun sets them) takes GPU RANK, warms up with a few all_reduce calls,
says "ready", then:
  sleep: rank ODD sleeps in load_next_batch() (a data loader that never
         returns) while the others enter all_reduce: their NCCL kernels
         wait on the GPU for it;
  same:  every rank enters all_reduce on a tensor of its own size, rank ODD
         twice as large (a shape mismatch NCCL does not catch): all wait
         in the same collective -- no odd one on the host.
Usage: python3 nccl_job.py MODE ODD
"""
import os
import sys
import time

import torch
import torch.distributed as dist


def load_next_batch():
    time.sleep(3600)  # at: sleep


def reduce_grads(t):
    dist.all_reduce(t)  # at: all_reduce
    torch.cuda.synchronize()


def main():
    mode, odd = sys.argv[1], int(sys.argv[2])
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    t = torch.ones(1 << 20, device="cuda")
    for _ in range(3):
        dist.all_reduce(t)
    torch.cuda.synchronize()
    print("ready", rank, flush=True)
    if mode == "sleep" and rank == odd:
        load_next_batch()
    n = (2 << 20) if (mode == "same" and rank == odd) else (1 << 20)
    reduce_grads(torch.ones(n, device="cuda"))
    print("done", rank, flush=True)


if __name__ == "__main__":
    main()
