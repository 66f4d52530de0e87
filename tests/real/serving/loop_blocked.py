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
import asyncio, os, sys, time
sys.dont_write_bytecode = True      # no __pycache__ beside the programs
from loadgen import die_with_parent, listener, loadgen, name, opt, serve

HOW = opt("--how", "sleep")
START = time.monotonic()

def reload_model():
    time.sleep(3600)

def wait_for_weights(path="/nonexistent/gpuprobe/weights.safetensors"):
    while not os.path.exists(path):
        time.sleep(0.2)

def reply(req):
    """The answer, computed on the event loop's thread (from +2 s: never)."""
    if time.monotonic() - START > 2:
        reload_model() if HOW == "sleep" else wait_for_weights()
    return b"x" * 1000

def main():
    sock = listener(8)
    if os.fork() == 0:
        die_with_parent()
        port = sock.getsockname()[1]
        sock.close()
        loadgen(port)
    name("api-server")
    asyncio.run(serve(sock, reply, b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n"))

if __name__ == "__main__":
    main()
