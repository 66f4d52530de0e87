#!/usr/bin/env python3
"""A healthy asyncio HTTP server answering its load generator (issue 32, row 1).

An asyncio server (streams: the transport moves every byte with send() and
recv(), never write()/read(), so /proc/PID/io's wchar stays flat) answers
each GET with 1000 bytes after a little hashing.  A load generator
("loadgen", a child process) sends 2 requests a second, each on a new
connection, and reads each answer whole.

Truth: progress -- every request is answered within milliseconds; the
bytes go out through sockets.

  asyncio_http.py                  server + its loadgen child (one tree)
  asyncio_http.py server PORTFILE  the server alone; writes its port to PORTFILE
  asyncio_http.py client PORT      the load generator alone
"""
import asyncio, hashlib, os, sys
sys.dont_write_bytecode = True      # no __pycache__ beside the programs
from loadgen import die_with_parent, listener, loadgen, name, serve

def hashed(req):
    """The answer: 1000 bytes after a little hashing of the request."""
    h = req
    for _ in range(200):
        h = hashlib.sha256(h).digest()
    return (h.hex().encode() * 16)[:1000]

def main():
    role = sys.argv[1] if len(sys.argv) > 1 else "tree"
    if role == "client":
        loadgen(int(sys.argv[2]))
    sock = listener()
    port = sock.getsockname()[1]
    if role == "server":
        with open(sys.argv[2] + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    elif os.fork() == 0:
        die_with_parent()
        sock.close()
        loadgen(port)
    name("api-server")
    asyncio.run(serve(sock, hashed))

if __name__ == "__main__":
    main()
