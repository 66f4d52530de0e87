# A parent waits on a unix socketpair for its child, and the child waits
# in accept() for a TCP client that never comes: the chain ends outside,
# idle (the socket edge must not make it a hang).
import os, socket
a, b = socket.socketpair()
if os.fork() == 0:
    a.close()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    c, _ = s.accept()
    b.send(b"x")
    os._exit(0)
b.close()
a.recv(1)
