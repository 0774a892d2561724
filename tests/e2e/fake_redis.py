#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# A Redis that answers wrongly on purpose, for tests/e2e/test_hostile_redis.sh:
# it speaks enough RESP2 for the agent (AUTH, SCRIPT LOAD, CLUSTER SLOTS as a
# node without cluster support, the GCRA calls, the heartbeat, ZREM), then
# misbehaves as MODE says:
#   errors      -ERR to every command, AUTH included
#   wrongtype   the calls and the heartbeat answered with a bulk string
#   moved       the calls answered MOVED to this very node, forever
#   noscript    EVALSHA and EVAL (the heartbeat's too) answered NOSCRIPT
#   huge        the calls answered *2000000000, then integers as fast as it can
#   bulk        the calls answered a 1 GB bulk string, streamed
#   deep        the calls answered arrays nested 100,000 deep
#   slots       CLUSTER SLOTS answered with 20,000 ranges on 20,000 nodes
#   slots-name  CLUSTER SLOTS answered with every slot on node NAME:PORT
#   moved-name  the calls answered MOVED to NAME:PORT
#   drip        every reply sent one byte every 200 ms
#   refused     the calls answered with a refused count of -1 for each key
#   hosts-int   the heartbeat answered :4294967297 (the calls well)
#   hosts-many  the heartbeat answered 5,000 names, this agent's among them
#   hosts-other the heartbeat answered two names, neither this agent's
#   hosts-cap   the heartbeat answered 1,001 names, this agent's among them
#   hosts-two   the heartbeat answered this agent and one other: N = 2
#   well        everything answered as Redis would (a control)
# Each command's name goes to LOG, one a line, as it arrives.
# Usage: fake_redis.py MODE ADDR PORT LOG
import asyncio
import hashlib
import sys

MODE, ADDR, PORT, LOG = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
HB_KEY = b"sluice:{hb}:agents"
# The node named in slots-name and moved-name: a name that the test's
# resolver never answers (test_hostile_redis.sh, "Host names").
NAME = b"redis.unanswered.test"
log = open(LOG, "a", buffering=1)


def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)


def array(items):
    return b"*%d\r\n" % len(items) + b"".join(items)


async def read_command(reader):
    """One command (an array of bulk strings), or None at the end."""
    line = await reader.readline()
    if not line:
        return None
    if not line.startswith(b"*"):
        return [w for w in line.split()]  # inline command
    args = []
    for _ in range(int(line[1:])):
        n = int((await reader.readline())[1:])
        args.append((await reader.readexactly(n + 2))[:-2])
    return args


def gcra_reply(args):
    """The GCRA script's shape: per key, TAT ahead (0) and refused (0)."""
    keys = int(args[2])
    return array([b":0\r\n"] * (2 * keys))


def heartbeat_reply(args):
    me = args[4]
    if MODE == "hosts-int":
        return b":4294967297\r\n"
    if MODE == "hosts-many":
        return array([bulk(me)] + [bulk(b"fake:%d" % i) for i in range(4999)])
    if MODE == "hosts-cap":
        return array([bulk(me)] + [bulk(b"fake:%d" % i) for i in range(1000)])
    if MODE == "hosts-other":
        return array([bulk(b"fake:1"), bulk(b"fake:2")])
    if MODE == "hosts-two":
        return array([bulk(me), bulk(b"other:eth0:1")])
    return array([bulk(me)])


def is_heartbeat(args):
    return len(args) > 4 and args[0].upper() == b"EVAL" and args[3] == HB_KEY


def answer(args):
    """The reply to one command: bytes, or a generator of chunks to stream."""
    cmd = args[0].upper()
    if MODE == "errors":
        return b"-ERR hostile\r\n"
    if cmd == b"AUTH":
        return b"+OK\r\n"
    if cmd == b"SCRIPT" and args[1].upper() == b"LOAD":
        return bulk(hashlib.sha1(args[2]).hexdigest().encode())
    if cmd == b"CLUSTER":
        if MODE == "slots":
            return array([array([b":%d\r\n" % i, b":%d\r\n" % i,
                                 array([bulk(b"10.0.%d.%d" % (i // 250, i % 250)), b":7000\r\n"])])
                          for i in range(20000)])
        if MODE == "slots-name":
            return array([array([b":0\r\n", b":16383\r\n", array([bulk(NAME), b":%d\r\n" % PORT])])])
        return b"-ERR This instance has cluster support disabled\r\n"
    if cmd in (b"EVAL", b"EVALSHA"):
        if MODE == "noscript":
            return b"-NOSCRIPT No matching script. Please use EVAL.\r\n"
        if is_heartbeat(args):
            return b"$5\r\nhello\r\n" if MODE == "wrongtype" else heartbeat_reply(args)
        return call_reply(args)
    if cmd == b"ZREM":
        return b":1\r\n"
    if cmd == b"PING":
        return b"+PONG\r\n"
    return b"+OK\r\n"


def call_reply(args):
    if MODE == "wrongtype":
        return b"$5\r\nhello\r\n"
    if MODE == "moved":
        return b"-MOVED 0 %s:%d\r\n" % (ADDR.encode(), PORT)
    if MODE == "moved-name":
        return b"-MOVED 0 %s:%d\r\n" % (NAME, PORT)
    if MODE == "huge":
        return endless(b"*2000000000\r\n", b":1\r\n" * 16384)
    if MODE == "bulk":
        return endless(b"$1000000000\r\n", b"x" * 65536)
    if MODE == "deep":
        return endless(b"", b"*1\r\n" * 100000, 1)
    if MODE == "refused":
        return array([b":0\r\n", b":-1\r\n"] * int(args[2]))
    return gcra_reply(args)


def endless(head, chunk, times=None):
    yield head
    n = 0
    while times is None or n < times:
        yield chunk
        n += 1


async def send(writer, reply):
    if isinstance(reply, bytes):
        reply = [reply]
    for chunk in reply:
        if MODE == "drip":
            for i in range(len(chunk)):
                writer.write(chunk[i:i + 1])
                await writer.drain()
                await asyncio.sleep(0.2)
        else:
            writer.write(chunk)
            await writer.drain()


async def serve(reader, writer):
    try:
        while True:
            args = await read_command(reader)
            if not args:
                break
            log.write(args[0].decode(errors="replace").upper() + "\n")
            await send(writer, answer(args))
    except (ConnectionError, asyncio.IncompleteReadError, ValueError, IndexError):
        pass
    finally:
        writer.close()


async def main():
    server = await asyncio.start_server(serve, ADDR, PORT)
    async with server:
        await server.serve_forever()


asyncio.run(main())
