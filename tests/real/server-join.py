# A server whose main thread joins the serving thread, which waits in
# accept() for a client that never comes: idle (issue 20).
import socket, threading
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
def serve():
    while True:
        c, _ = s.accept()
        c.close()
t = threading.Thread(target=serve, name="server")
t.start()
t.join()
