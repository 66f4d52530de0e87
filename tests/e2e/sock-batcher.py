"""A threaded server whose batcher thread died (issue 32): each handler
puts its request on a queue and waits on its future for ever; clients keep
connecting, each sending a request and waiting for the answer.  It read
"progress, high" (new handler threads counted as output).  Prints its port.
    python3 sock-batcher.py          serve
    python3 sock-batcher.py PORT     a client connecting every 0.5 s"""
import queue
import socket
import sys
import threading
import time


def batcher():
    time.sleep(1.0)
    raise SystemExit  # the bug: the batcher ends, nobody takes the jobs


def handle(c, jobs):
    req = c.recv(100)
    fut = queue.Queue()
    jobs.put((req, fut))
    c.send(fut.get())


def serve():
    jobs = queue.Queue()
    threading.Thread(target=batcher, daemon=True).start()
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(64)
    print(lsock.getsockname()[1], flush=True)
    while True:
        c, _ = lsock.accept()
        threading.Thread(target=handle, args=(c, jobs), daemon=True).start()


def clients(port):
    held = []
    while True:
        s = socket.create_connection(("127.0.0.1", port))
        s.send(b"GET / HTTP/1.0\r\n\r\n")
        held.append(s)
        time.sleep(0.5)


if __name__ == "__main__":
    clients(int(sys.argv[1])) if len(sys.argv) > 1 else serve()
