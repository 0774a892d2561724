#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A small Chrome DevTools Protocol client on the standard library alone,
for test_page.sh to drive a headless Chromium's page:

  cdp.py PORT eval EXPRESSION   prints the expression's value as JSON
  cdp.py PORT shot FILE.png     saves a screenshot of the page
  cdp.py PORT colours FILE.png  prints how many distinct colours the PNG has

PORT is Chromium's --remote-debugging-port; the first page target is used.
"""
import base64
import json
import os
import socket
import struct
import sys
import urllib.request
import zlib


def page_ws(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
        targets = json.load(r)
    pages = [t for t in targets if t.get("type") == "page"]
    return pages[0]["webSocketDebuggerUrl"]


class WebSocket:
    """Just what CDP needs: text frames, masked from the client, no extensions."""

    def __init__(self, url):
        rest = url.split("://", 1)[1]
        hostport, path = rest.split("/", 1)
        host, port = hostport.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\n"
             f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
             "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise OSError("websocket handshake: connection closed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise OSError("websocket handshake: " + head.split(b"\r\n", 1)[0].decode())

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            head = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(head + mask + body)

    def _exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise OSError("websocket: connection closed")
            buf += chunk
        return buf

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._exact(8))[0]
            payload = self._exact(n)
            if b0 & 0x0F in (0x9, 0xA):  # ping, pong: not part of a message
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()


def call(ws, method, params):
    ws.send(json.dumps({"id": 1, "method": method, "params": params}))
    while True:
        reply = json.loads(ws.recv())
        if reply.get("id") == 1:
            if "error" in reply:
                raise OSError(f"{method}: {reply['error']}")
            return reply["result"]


def png_colours(path):
    """Distinct RGB(A) colours of an 8-bit RGB or RGBA PNG, filters undone."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack("!I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack("!IIBB", chunk[:10])
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    if depth != 8 or ctype not in (2, 6):
        raise ValueError(f"PNG of depth {depth}, colour type {ctype}")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours = set()
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xFF
        for x in range(0, stride, bpp):
            colours.add(bytes(line[x:x + bpp]))
        prev = line
    return len(colours)


def main():
    port, what, arg = sys.argv[1], sys.argv[2], sys.argv[3]
    if what == "colours":
        print(png_colours(arg))
        return
    ws = WebSocket(page_ws(port))
    if what == "eval":
        r = call(ws, "Runtime.evaluate", {"expression": arg, "returnByValue": True})
        if "exceptionDetails" in r:
            raise SystemExit("eval: " + json.dumps(r["exceptionDetails"])[:300])
        print(json.dumps(r["result"].get("value")))
    elif what == "shot":
        r = call(ws, "Page.captureScreenshot", {"format": "png"})
        with open(arg, "wb") as f:
            f.write(base64.b64decode(r["data"]))
    else:
        raise SystemExit("cdp.py PORT eval EXPR | shot FILE | colours FILE")


if __name__ == "__main__":
    main()
