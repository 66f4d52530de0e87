"""A server that answers over send(), never write(): /proc/PID/io's wchar
stays 0 while it works (issue 32).  It prints its port, then answers each
request of 3 bytes with 1 000 bytes, one thread a connection.
    python3 sock-server.py            serve
    python3 sock-server.py PORT       the client: a request every 0.5 s"""
import socket
import sys
import threading
import time


def serve(c):
    while True:
        d = c.recv(100)
        if not d:
            return
        c.send(b"x" * 1000)


def server():
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)
    print(lsock.getsockname()[1], flush=True)
    while True:
        c, _ = lsock.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


def client(port):
    s = socket.create_connection(("127.0.0.1", port))
    while True:
        s.send(b"GET")
        s.recv(2000)
        time.sleep(0.5)


if __name__ == "__main__":
    client(int(sys.argv[1])) if len(sys.argv) > 1 else server()
