#!/usr/bin/env python3
"""A threaded server whose batcher thread died (issue 32, row 4).

"api-server" (socketserver.ThreadingTCPServer: a new handler thread per
connection) reads each request, puts it on a queue with a Future, and
waits in future.result() for the answer; one "batcher" thread (its OS
name set with prctl) takes the queue every 20 ms, computes and answers.
"loadgen" (a child) sends 2 requests a second, each on a new connection.

  batcher_died.py [--die-after S] [--clients N]
  --die-after S   at +S s the batcher raises (an error on its path, as a
                  CUDA error does) and its thread ends: from then on every
                  handler waits on its future for ever while clients keep
                  connecting (and each new connection starts a new handler
                  thread that reads its request: reads that answer nobody).
  --die-after 0   the batcher dies before the first request.
  --clients 0     no load generator (the control at rest).

Truth: with --die-after: a hang (hang-blocked): every handler waits on a
condition only the dead batcher would signal; the verdict says that the
thread they wait for is gone (named "batcher" when it died during the
trace).  Without --die-after and with clients: progress.  With no
clients and a live batcher: idle (the batcher waits on its queue, the
server in accept's selector).
"""
import concurrent.futures, os, queue, socketserver, sys, threading, time
sys.dont_write_bytecode = True      # no __pycache__ beside the programs
from loadgen import die_with_parent, loadgen, name, opt

DIE_AFTER = opt("--die-after", -1.0)
CLIENTS = opt("--clients", 1)
START = time.monotonic()
jobs = queue.Queue()

def batcher():
    name("batcher")
    while True:
        if DIE_AFTER >= 0 and time.monotonic() - START >= DIE_AFTER:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        batch = []
        try:
            batch.append(jobs.get(timeout=0.02 if DIE_AFTER >= 0 else None))
            while True:
                batch.append(jobs.get_nowait())
        except queue.Empty:
            pass
        for data, fut in batch:
            fut.set_result(data[::-1][:64] * 16)

class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b""):
            pass
        fut = concurrent.futures.Future()
        jobs.put((line, fut))
        body = fut.result()
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    request_queue_size = 128

def main():
    server = Server(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    if CLIENTS and os.fork() == 0:
        die_with_parent()
        server.socket.close()
        loadgen(port)
    name("api-server")
    threading.excepthook = lambda a: (sys.stderr.write("batcher: %s\n" % a.exc_value), sys.stderr.flush())
    threading.Thread(target=batcher, name="batcher", daemon=True).start()
    server.serve_forever()

if __name__ == "__main__":
    main()
