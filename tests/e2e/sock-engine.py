"""A frontend and its engine process (issue 32's model of an inference
server): handler threads read requests over TCP and wait for the engine's
answer over a unix socket.  Once the engine is SIGKILLed (it stays a
zombie: the frontend never reaps it), every request is read and never
answered.  Prints "PORT ENGINE_PID".
    python3 sock-engine.py            serve
    python3 sock-engine.py PORT       three clients, a request every 0.2 s each"""
import os, socket, sys, time, threading, queue
if len(sys.argv) > 1:
    port = int(sys.argv[1])
    def one():
        while True:
            s = socket.create_connection(("127.0.0.1", port)); s.send(b"q"); s.recv(1000); s.close(); time.sleep(0.2)
    for i in range(3): threading.Thread(target=one, daemon=True).start()
    time.sleep(1000)
a, b = socket.socketpair()
pid = os.fork()
if pid == 0:
    a.close()
    while True:
        d = b.recv(100)
        if not d: break
        b.send(d)
    os._exit(0)
b.close()
waiting = {}; lock = threading.Lock(); n = [0]
def reader():
    buf = b""
    while True:
        d = a.recv(100)
        if not d: return          # the engine is gone: nobody wakes the handlers
        for k in d.split(b";"):
            if k: waiting.pop(int(k)).put(1)
threading.Thread(target=reader, daemon=True).start()
def handle(c):
    c.recv(100)
    with lock: n[0] += 1; k = n[0]
    q = queue.Queue(); waiting[k] = q
    try: a.send(b"%d;" % k)
    except OSError: pass
    q.get()                       # for ever once the engine is dead
    c.send(b"answer " * 100)
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(64)
print(l.getsockname()[1], pid, flush=True)
while True:
    c, _ = l.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
