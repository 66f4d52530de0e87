"""What the Python programs of tests/real/serving/ share (imported by
asyncio_http.py, loop_blocked.py, frontend_engine.py, batcher_died.py;
their folder is sys.path[0]): the load generator, the thread/process
name, a child that dies with its parent, a listening socket, options,
and an asyncio HTTP server (asyncio imported only by those that serve)."""
import ctypes, selectors, socket, sys, time

libc = ctypes.CDLL(None)
def name(s): libc.prctl(15, s.encode()[:15], 0, 0, 0)      # PR_SET_NAME
def die_with_parent(): libc.prctl(1, 9, 0, 0, 0)            # PR_SET_PDEATHSIG, SIGKILL

def opt(flag, default):
    """The value after FLAG on the command line, of DEFAULT's type."""
    return type(default)(sys.argv[sys.argv.index(flag) + 1]) if flag in sys.argv else default

def listener(backlog=128):
    """A TCP socket listening on 127.0.0.1, on a port the kernel picks."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(backlog)
    return s

def loadgen(port, rate=2.0, target=b"GET /generate"):
    """One request every 1/rate s, each on a new connection, each answer
    read whole: one thread, non-blocking sockets on a selector (so that the
    load generator itself starts no threads).  Named "loadgen"; never
    returns."""
    name("loadgen")
    sel = selectors.DefaultSelector()
    due, i = time.monotonic(), 0
    while True:
        if time.monotonic() >= due:
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            req = b"%s?i=%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % (target, i)
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

OK_CLOSE = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"

async def answer(reader, writer, body_for, head):
    """One connection: the request read up to its blank line, answered
    with HEAD % len(body) + body, body = body_for(request) (awaited when it
    is a coroutine), then closed; a client gone early is no error."""
    import asyncio
    try:
        req = await reader.readuntil(b"\r\n\r\n")
        body = body_for(req)
        if asyncio.iscoroutine(body):
            body = await body
        writer.write(head % len(body) + body)
        await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()

async def serve(sock, body_for, head=OK_CLOSE):
    """An asyncio (streams) server on the listening SOCK, for ever: each
    connection's request answered by answer()."""
    import asyncio
    server = await asyncio.start_server(lambda r, w: answer(r, w, body_for, head), sock=sock)
    async with server:
        await server.serve_forever()
