"""A torch process with the shapes of an inference server, for the no-stop
stacks on the H200 (issue 27): a GEMM thread that prints a line a step into
a pipe a slow reader drains (blocked in write() much of the time), an
asyncio loop in epoll_wait answering a local client over TCP, and the main
thread joining them.  Runs SECONDS (default 20) and exits 0 when every
line written was whole.
    python3 torch_serve.py [SECONDS]"""
import asyncio
import os
import socket
import sys
import threading
import time

import torch

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
END = time.time() + SECONDS
LINE = b"x" * 65535 + b"\n"


def gemm(wfd, bad):
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    while time.time() < END:
        (a @ a).sum().item()
        n = os.write(wfd, LINE)  # blocks while the reader sleeps
        if n != len(LINE):
            bad.append(n)
    os.close(wfd)


def reader(rfd):
    while True:
        d = os.read(rfd, 4096)
        if not d:
            return
        time.sleep(0.002)


async def handle(r, w):
    while True:
        d = await r.read(100)
        if not d:
            return
        w.write(d * 10)
        await w.drain()


async def serve(port_box, started):
    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    port_box.append(srv.sockets[0].getsockname()[1])
    started.set()
    await asyncio.sleep(SECONDS)


def client(port):
    s = socket.create_connection(("127.0.0.1", port))
    while time.time() < END:
        s.send(b"ping")
        s.recv(100)
        time.sleep(0.1)


def main():
    rfd, wfd = os.pipe()
    bad = []
    port_box, started = [], threading.Event()
    loop = threading.Thread(target=lambda: asyncio.run(serve(port_box, started)), name="loop")
    loop.start()
    started.wait()
    threads = [threading.Thread(target=gemm, args=(wfd, bad), name="gemm"),
               threading.Thread(target=reader, args=(rfd,), name="reader", daemon=True),
               threading.Thread(target=client, args=(port_box[0],), name="client", daemon=True)]
    for t in threads:
        t.start()
    threads[0].join()
    loop.join()
    print("torch_serve: short writes %d" % len(bad), flush=True)
    sys.exit(3 if bad else 0)


main()
