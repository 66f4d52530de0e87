#!/usr/bin/env python3
"""Short-lived connections, for tests/e2e/trace-sock-bpf.sh.

  sock-short.py serve            a server: each connection reads one request
                                 (up to b"\\n"), answers ANSWER bytes by
                                 send(), closes; prints its port
  sock-short.py client PORT N    N connections, one every 0.2 s, each sends
                                 REQUEST bytes by send() and reads the answer
                                 whole; prints "sent S received R"
  sock-short.py refused PORT     connect() every 0.3 s, for ever, to PORT
                                 (nothing listens there); prints nothing
Every connection lives a few milliseconds: between two samples of a trace.
"""
import socket
import sys
import time

ANSWER = 1000
REQUEST = 100


def serve():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    print(s.getsockname()[1], flush=True)
    while True:
        c, _ = s.accept()
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = c.recv(4096)
            if not chunk:
                break
            buf += chunk
        c.sendall(b"a" * ANSWER)
        c.close()


def client(port, n):
    sent = received = 0
    for _ in range(n):
        c = socket.create_connection(("127.0.0.1", port))
        c.sendall(b"r" * (REQUEST - 1) + b"\n")
        sent += REQUEST
        while True:
            chunk = c.recv(4096)
            if not chunk:
                break
            received += len(chunk)
        c.close()
        time.sleep(0.2)
    print("sent %d received %d" % (sent, received), flush=True)


def refused(port):
    while True:
        try:
            socket.create_connection(("127.0.0.1", port)).close()
        except OSError:
            pass
        time.sleep(0.3)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve()
    elif sys.argv[1] == "client":
        client(int(sys.argv[2]), int(sys.argv[3]))
    else:
        refused(int(sys.argv[2]))
