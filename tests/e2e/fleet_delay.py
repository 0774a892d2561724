#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# A TCP relay that holds every reply for DELAY_MS before passing it on: the
# fleet test's network delay where the kernel has no tc netem.
# Usage: fleet_delay.py DELAY_MS LISTEN_PORT UPSTREAM_PORT ADDR...
import asyncio
import sys

DELAY = int(sys.argv[1]) / 1000.0
LISTEN = int(sys.argv[2])
UPSTREAM = int(sys.argv[3])
ADDRS = sys.argv[4:]


async def pipe(reader, writer, delay):
    loop = asyncio.get_running_loop()
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            due = loop.time() + delay
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def serve(addr):
    async def handle(cr, cw):
        try:
            ur, uw = await asyncio.open_connection(addr, UPSTREAM)
        except OSError:
            cw.close()
            return
        await asyncio.gather(pipe(cr, uw, 0), pipe(ur, cw, DELAY))

    server = await asyncio.start_server(handle, addr, LISTEN)
    await server.serve_forever()


async def main():
    await asyncio.gather(*(serve(a) for a in ADDRS))


asyncio.run(main())
