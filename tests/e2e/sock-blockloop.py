"""An asyncio server whose handler makes a blocking call on the event loop
(time.sleep), so that no other connection is ever accepted (issue 32: read
"idle, high: 1 on a timer" while clients piled up unaccepted).
    python3 sock-blockloop.py          serve (prints its port)
    python3 sock-blockloop.py PORT N   N clients, one every 0.5 s, each
                                       sending a request and waiting"""
import asyncio
import socket
import sys
import time


async def handle(reader, writer):
    await reader.read(100)
    time.sleep(1000)  # the bug: a blocking call on the loop
    writer.write(b"ok")
    await writer.drain()


async def serve():
    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(srv.sockets[0].getsockname()[1], flush=True)
    async with srv:
        await srv.serve_forever()


def clients(port, n):
    held = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.send(b"GET / HTTP/1.0\r\n\r\n")
        held.append(s)
        time.sleep(0.5)
    time.sleep(1000)


if __name__ == "__main__":
    if len(sys.argv) > 2:
        clients(int(sys.argv[1]), int(sys.argv[2]))
    else:
        asyncio.run(serve())
