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
import asyncio, ctypes, hashlib, os, selectors, socket, sys, time

libc = ctypes.CDLL(None)
def name(s): libc.prctl(15, s.encode()[:15], 0, 0, 0)      # PR_SET_NAME
def die_with_parent(): libc.prctl(1, 9, 0, 0, 0)            # PR_SET_PDEATHSIG, SIGKILL

def loadgen(port, rate=2.0):
    """One request every 1/rate s, each on a new connection, each answer
    read whole: one thread, non-blocking sockets on a selector (so that the
    load generator itself starts no threads)."""
    name("loadgen")
    sel = selectors.DefaultSelector()
    due, i = time.monotonic(), 0
    while True:
        if time.monotonic() >= due:
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            req = b"GET /generate?i=%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % i
            sel.register(s, selectors.EVENT_WRITE, req)
            due, i = due + 1 / rate, i + 1
        for key, _ in sel.select(max(0.0, due - time.monotonic())):
            s = key.fileobj
            try:
                if key.data:                      # connected: send the request
                    s.send(key.data)
                    sel.modify(s, selectors.EVENT_READ, None)
                    continue
                if s.recv(65536):                 # the answer, until the server closes
                    continue
            except OSError:
                pass
            sel.unregister(s)
            s.close()

async def handle(reader, writer):
    try:
        req = await reader.readuntil(b"\r\n\r\n")
        h = req
        for _ in range(200):
            h = hashlib.sha256(h).digest()
        body = (h.hex().encode() * 16)[:1000]
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                     % len(body) + body)
        await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()

async def serve(sock):
    server = await asyncio.start_server(handle, sock=sock)
    async with server:
        await server.serve_forever()

def listener():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(128)
    return s

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
    asyncio.run(serve(sock))

if __name__ == "__main__":
    main()
