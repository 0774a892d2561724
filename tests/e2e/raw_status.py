#!/usr/bin/env python3
"""raw_status.py PORT < TARGETS: sends each request target, one per line of
stdin with Python's byte escapes (\\x00, \\x1b), to 127.0.0.1:PORT exactly as
written (no client cleans it up first), and prints "STATUS TARGET" per line;
"none" when no status line came back."""
import codecs
import socket
import sys


def status_of(port, target):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        return s.recv(64).split(b" ")[1].decode()
    except (OSError, IndexError):
        return "none"
    finally:
        s.close()


def main():
    port = int(sys.argv[1])
    for line in sys.stdin.read().split("\n"):
        if line:
            target = codecs.escape_decode(line.encode())[0]
            print(status_of(port, target), line)


main()
