#!/usr/bin/env python3
"""Idle: wait in select() for input on standard input, a pipe.

Truth: idle.  The runner starts it as `sleep 1000 | python3 select-idle.py`:
the only writer of the pipe is `sleep`, outside the traced process, and it
never writes.  One thread, in select(), no timeout, no CPU.
"""
import select, sys

while True:
    r, _, _ = select.select([sys.stdin], [], [])
    if not sys.stdin.buffer.read1(65536):
        break
