#!/usr/bin/env python3
"""A model of an inference server: an asyncio HTTP frontend, an engine
process behind it, and a load generator (issue 32, rows 1 and 2).

"api-server" (asyncio, streams: send()/recv() only) reads each request,
hands it to "EngineCore" (a process of its own) over a unix socketpair, or
over ZMQ PUSH/PULL on ipc:// sockets with --zmq (pyzmq: run it with
Debian's /usr/bin/python3 and python3-zmq), and answers the client with the
engine's result.  "loadgen" (a child) sends --rate requests a second, each
on a new connection, and waits for each answer.

  frontend_engine.py [--zmq] [--rate R] [--compute S] [--engine-dies-after S]

Truth:
  default             progress: every request answered within milliseconds,
                      every byte through sockets (send/recv, ZMQ's I/O thread).
  --compute 2.5 --rate 0.4
                      progress: the engine computes 2.5 s at 100 % CPU for each
                      request, then it is answered (one long request at a time).
  --engine-dies-after 3
                      a hang: at +3 s the engine is SIGKILLed (as the OOM killer
                      does) and left a zombie (nobody waits for it).  The frontend
                      does not notice: it goes on accepting and reading requests and
                      queues them for an engine that will never come back (unix:
                      a queue in memory; ZMQ: PUSH blocks with no peer), so every
                      client waits in recv() for ever.  The verdict must name the
                      engine's death (SIGKILL, the zombie).
"""
import asyncio, hashlib, os, signal, socket, sys, threading, time
sys.dont_write_bytecode = True      # no __pycache__ beside the programs
from loadgen import die_with_parent, listener, loadgen, name, opt, serve

ZMQ = "--zmq" in sys.argv
RATE = opt("--rate", 2.0)
COMPUTE = opt("--compute", 0.01)
DIES_AFTER = opt("--engine-dies-after", 0.0)
TAG = "gpuprobe-fe-%d" % os.getpid()

def compute(data, seconds):
    end = time.monotonic() + seconds
    h = data
    while True:
        for _ in range(100):
            h = hashlib.sha256(h).digest()
        if time.monotonic() >= end:
            return h.hex()

def engine(sock):
    name("EngineCore")
    if DIES_AFTER:
        threading.Timer(DIES_AFTER, os.kill, (os.getpid(), signal.SIGKILL)).start()
    if ZMQ:
        import zmq
        ctx = zmq.Context()
        pull = ctx.socket(zmq.PULL); pull.connect("ipc://@%s-in" % TAG)
        push = ctx.socket(zmq.PUSH); push.connect("ipc://@%s-out" % TAG)
        while True:
            rid, data = pull.recv_multipart()
            push.send_multipart([rid, compute(data, COMPUTE).encode()])
    f = sock.makefile("rb")
    for line in f:
        rid, data = line.split(b" ", 1)
        sock.sendall(rid + b" " + compute(data, COMPUTE).encode() + b"\n")
    os._exit(0)

class Frontend:
    def __init__(self, sock):
        self.sock = sock
        self.pending = {}     # request id -> future of the engine's answer
        self.queued = []      # requests held while the engine is away
        self.next = 0
        self.to_engine = None

    async def start(self):
        if ZMQ:
            import zmq, zmq.asyncio
            ctx = zmq.asyncio.Context()
            self.push = ctx.socket(zmq.PUSH); self.push.bind("ipc://@%s-in" % TAG)
            self.pull = ctx.socket(zmq.PULL); self.pull.bind("ipc://@%s-out" % TAG)
            asyncio.create_task(self.read_zmq())
        else:
            reader, self.to_engine = await asyncio.open_connection(sock=self.sock)
            asyncio.create_task(self.read_unix(reader))

    async def read_unix(self, reader):
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                rid, result = line.split(b" ", 1)
                self.pending.pop(int(rid)).set_result(result.strip())
        except ConnectionError:
            pass
        # The engine went away.  Bug (the shape): nothing fails the requests
        # in flight; new ones are queued for its return, silently.
        self.to_engine = None

    async def read_zmq(self):
        while True:
            rid, result = await self.pull.recv_multipart()
            self.pending.pop(int(rid)).set_result(result)

    async def generate(self, data):
        rid = self.next; self.next += 1
        fut = asyncio.get_running_loop().create_future()
        self.pending[rid] = fut
        if ZMQ:
            await self.push.send_multipart([b"%d" % rid, data])
        elif self.to_engine is None or self.to_engine.is_closing():
            self.queued.append((rid, data))
        else:
            self.to_engine.write(b"%d %s\n" % (rid, data.replace(b"\n", b" ")))
        return await fut

async def frontend(lsock, esock):
    fe = Frontend(esock)
    await fe.start()
    await serve(lsock, lambda req: fe.generate(req.split(b"\r\n", 1)[0]))

def main():
    lsock = listener(128)
    port = lsock.getsockname()[1]
    fe_sock, en_sock = socket.socketpair()
    if os.fork() == 0:
        die_with_parent()
        lsock.close(); fe_sock.close()
        engine(en_sock)
    en_sock.close()
    if os.fork() == 0:
        die_with_parent()
        lsock.close(); fe_sock.close()
        time.sleep(0.5)          # the frontend's ZMQ sockets bind first
        loadgen(port, RATE, b"POST /v1/completions")
    name("api-server")
    asyncio.run(frontend(lsock, fe_sock))

if __name__ == "__main__":
    main()
