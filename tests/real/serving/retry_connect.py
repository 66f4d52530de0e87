#!/usr/bin/env python3
"""A client that retries a refused connection every second, for ever,
printing nothing (issue 32, rows 5 and 6).

It reserves a port nobody listens on (bound, never listen()ed: a connect
to it is refused with RST at once) unless PORT is given, then:
  --how socket   socket.create_connection(): ECONNREFUSED, sleep 1, again
  --how urllib   urllib.request.urlopen(): URLError (refused), sleep 1, again
  --how curl     subprocess.run(["curl", "-sf", URL]): curl exits 7, sleep 1, again
The program's own flow repeats the same failing attempt from the same frame.

Truth: a hang that is retrying, said with what is retried and how it
fails ("connect to 127.0.0.1:PORT refused N times", "curl exits 7, N
times") -- never idle, and the curl children that start and end are not
output.

  retry_connect.py [--how socket|urllib|curl] [PORT]
"""
import socket, subprocess, sys, time, urllib.error, urllib.request

HOW = sys.argv[sys.argv.index("--how") + 1] if "--how" in sys.argv else "socket"
args = [a for a in sys.argv[1:] if a not in ("--how", HOW)]
if args:
    port = int(args[0])
else:
    hold = socket.socket()
    hold.bind(("127.0.0.1", 0))
    port = hold.getsockname()[1]
url = "http://127.0.0.1:%d/health" % port

def connect_to_server():
    while True:
        try:
            if HOW == "socket":
                return socket.create_connection(("127.0.0.1", port))
            if HOW == "urllib":
                return urllib.request.urlopen(url, timeout=5)
            if subprocess.run(["curl", "-sf", "-o", "/dev/null", url]).returncode == 0:
                return None
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(1)

connect_to_server()
