#!/usr/bin/env python3
"""An asyncio server whose handler blocks the event loop (issue 32, row 3).

"api-server" answers its first requests; from +2 s the handler of the next
request calls, on the event loop itself, a blocking function:
  --how sleep   reload_model(): time.sleep(3600) (a blocking sleep)
  --how poll    wait_for_weights(): while the file is missing, time.sleep(0.2)
                (it never appears: a polling wait that never ends)
The loop never comes back to its selector: nothing is accepted or read
again.  "loadgen" (a child) keeps connecting, 2 a second: the listening
socket's backlog fills (listen(8)), later connects wait in the kernel,
and every accepted client waits in recv() for ever.

Truth: a hang (hang-blocked): inputs wait unanswered while the loop thread
is asleep in reload_model / wait_for_weights, not in its selector; the
verdict names that frame.
"""
import asyncio, ctypes, os, selectors, socket, sys, time

libc = ctypes.CDLL(None)
def name(s): libc.prctl(15, s.encode()[:15], 0, 0, 0)      # PR_SET_NAME
def die_with_parent(): libc.prctl(1, 9, 0, 0, 0)            # PR_SET_PDEATHSIG, SIGKILL

HOW = sys.argv[sys.argv.index("--how") + 1] if "--how" in sys.argv else "sleep"
START = time.monotonic()

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

def reload_model():
    time.sleep(3600)

def wait_for_weights(path="/nonexistent/gpuprobe/weights.safetensors"):
    while not os.path.exists(path):
        time.sleep(0.2)

async def handle(reader, writer):
    try:
        await reader.readuntil(b"\r\n\r\n")
        if time.monotonic() - START > 2:
            reload_model() if HOW == "sleep" else wait_for_weights()
        body = b"x" * 1000
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()

async def serve(sock):
    server = await asyncio.start_server(handle, sock=sock)
    async with server:
        await server.serve_forever()

def main():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    if os.fork() == 0:
        die_with_parent()
        port = sock.getsockname()[1]
        sock.close()
        loadgen(port)
    name("api-server")
    asyncio.run(serve(sock))

if __name__ == "__main__":
    main()
