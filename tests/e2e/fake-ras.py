"""A stand-in for NCCL's RAS service (tests/e2e/trace-ras.sh): the client
protocol as NCCL's source defines it (github.com/NVIDIA/nccl,
src/ras/client_support.cc, rasClientEventLoop: "CLIENT PROTOCOL n" ->
"SERVER PROTOCOL 2", "TIMEOUT n" -> "OK", "SET FORMAT json" -> "OK" from
2.28.7 on, "ERROR: Unknown command ..." before; "VERBOSE STATUS" -> the
job's state, then the connection is closed), the answer in the shapes of
jsonWriteHeader/jsonWriteRankData and of rasClientRunComms' text.
Usage: fake-ras.py MODE PORTFILE
  json     NCCL 2.29: rank 0's AllReduce count grows by one a query, rank
           1's stays at 6 (the rank that lags)
  text     NCCL 2.26: text only; rank 1 at 6, rank 0 at 7, neither moves
  silent   accepts, reads, never answers
  garbage  another service: answers the handshake with an SSH banner
  badjson  a RAS handshake, then an answer that is no JSON
Listens on 127.0.0.1, port chosen by the kernel, written to PORTFILE."""
import json
import os
import socket
import sys
import threading

mode, portfile = sys.argv[1], sys.argv[2]
queries = 0
held = []   # silent: connections kept open, never answered


def answer_json():
    global queries
    queries += 1
    ranks = [
        {"rank": r, "host": "127.0.0.1", "pid": 4242 + r, "cuda_dev": r, "nvml_dev": r,
         "status": {"init_state": 0, "async_error": 0, "finalize_called": False,
                    "destroy_flag": False, "abort_flag": False},
         "collective_counts": {"Broadcast": 0, "Reduce": 0, "AllGather": 2,
                               "ReduceScatter": 0, "AllReduce": n}}
        for r, n in ((0, 6 + queries), (1, 6))]
    doc = {"nccl_version": "2.29.1", "cuda_runtime_version": 13000,
           "cuda_driver_version": 13000, "timestamp": "2026-12-05 04:00:00",
           "communicators_count": 1,
           "communicators": [{"hash": "0xae94423cfbb2ef4a",
                              "secondary_hash": "0xb7e7187447156001:0xb8242ed28a71381e",
                              "size": 2, "ranks_count": 2, "missing_ranks_count": 0,
                              "ranks": ranks, "missing_ranks": []}],
           "ras": {"collection_time_sec": 0.0, "timeouts_count": 0}}
    return json.dumps(doc, indent=2) + "\n"


TEXT = """NCCL version 2.26.2+cuda12.2 compiled with CUDA 12.2
CUDA runtime version 12020, driver version 12080

Job summary
===========

  Nodes  Processes         GPUs  Processes     GPUs
(total)   per node  per process    (total)  (total)
      1          2            1          2        2

Communicators... (0.001s)
=============

Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors
    #  in group  per comm  per node  per comm  in group
    0         1         1         2         2         2   RUNNING  MISMATCH

Errors
======

Warnings
========

#0-0 (27a079b828ff1a75) MISMATCH
  Communicator ranks have different AllReduce operation counts
  Rank 0 has launched up to operation 7 -- GPU 0 managed by process 4242 on node 127.0.0.1
  Rank 1 has launched up to operation 6 -- GPU 1 managed by process 4243 on node 127.0.0.1

"""


def serve(conn):
    fmt_json = False
    buf = b""
    try:
        while True:
            data = conn.recv(4096)
            if not data:
                return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                cmd = line.decode(errors="replace").strip().lower()
                if mode == "silent":
                    continue
                if mode == "garbage":
                    conn.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")
                    continue
                if cmd.startswith("client protocol "):
                    conn.sendall(b"SERVER PROTOCOL 2\n")
                elif cmd.startswith("timeout "):
                    conn.sendall(b"OK\n")
                elif cmd.startswith("set format "):
                    if mode == "text":
                        conn.sendall(b"ERROR: Unknown command " + line.strip() + b"\n")
                    else:
                        fmt_json = True
                        conn.sendall(b"OK\n")
                elif cmd in ("status", "verbose status"):
                    if mode == "badjson":
                        conn.sendall(b"{\"nccl_version\": \"2.29.1\", \x00\xff garbage\n")
                    elif mode == "json" and fmt_json:
                        conn.sendall(answer_json().encode())
                    else:
                        conn.sendall(TEXT.encode())
                    conn.close()   # NCCL: RAS_CLIENT_FINISHED, then terminated
                    return
                else:
                    conn.sendall(b"ERROR: Unknown command " + line.strip() + b"\n")
    except OSError:
        pass
    finally:
        if mode != "silent":
            conn.close()


s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
os.rename(portfile + ".tmp", portfile)
while True:
    c, _ = s.accept()
    if mode == "silent":
        held.append(c)
    threading.Thread(target=serve, args=(c,), daemon=True).start()
