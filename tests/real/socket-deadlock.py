# A parent and its child joined by a unix socketpair, each reading first:
# each waits for the other, a deadlock through a socket (issue 20: read
# as "idle, 2 on input" before the socket's peer was looked up).
import os, socket
a, b = socket.socketpair()
if os.fork() == 0:
    a.close()
    b.recv(1)          # the child waits for the parent
    os._exit(0)
b.close()
a.recv(1)              # the parent waits for the child
