#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Finds the loops Linux 6.1's verifier refuses in BPF objects.

Before Linux 6.3, check_cfg() takes a loop's way back only through a jump:
an instruction that is not a jump and falls through into an instruction
still on its depth-first walk is "back-edge from insn X to Y", and the
program does not load. The compiler may lay a loop out that way (its latch
just before its first instruction). This walks every function of each
object as check_cfg() does (fall-through edges first) and prints each such
edge; exit 1 if any. Reads the code with llvm-objdump.
"""
import re
import struct
import subprocess
import sys

JMP, JMP32 = 5, 6
OP_JA, OP_CALL, OP_EXIT = 0x00, 0x80, 0x90
LD_IMM64 = 0x18


def functions(obj):
    """{name: {slot: 8-byte instruction}} for each function symbol."""
    out = subprocess.run(["llvm-objdump", "-d", obj], capture_output=True, text=True,
                         check=True).stdout
    funcs, cur, base = {}, None, 0
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:", line)
        if m:
            if not m.group(1).startswith("LBB"):
                cur, base = m.group(1), None
                funcs[cur] = {}
            continue
        m = re.match(r"^\s*([0-9]+):\s+((?:[0-9a-f]{2}[ \t]){8})", line)
        if m and cur:
            slot = int(m.group(1))
            base = slot if base is None else base
            funcs[cur][slot - base] = bytes.fromhex(re.sub(r"\s", "", m.group(2)))
    return funcs


def edges(code, t):
    """(successor, taken by a jump) of instruction t, as check_cfg visits them."""
    insn = code.get(t)
    if insn is None:
        return []
    op, off = insn[0], struct.unpack("<h", insn[2:4])[0]
    if op == LD_IMM64:
        return [(t + 2, False)]
    if op & 7 not in (JMP, JMP32):
        return [(t + 1, False)]
    kind = op & 0xF0
    if kind == OP_EXIT:
        return []
    if kind == OP_CALL:
        return [(t + 1, False)]
    if kind == OP_JA:
        return [(t + off + 1, True)]
    return [(t + 1, True), (t + off + 1, True)]


def refused(code):
    """The fall-through back-edges of one function, depth first from its entry."""
    on_walk, done, found = set([0]), set(), []
    stack, nexts = [0], {0: 0}
    while stack:
        t = stack[-1]
        succ = edges(code, t)
        k = nexts[t]
        if k == len(succ):
            on_walk.discard(t)
            done.add(t)
            stack.pop()
            continue
        nexts[t] = k + 1
        w, jump = succ[k]
        if w not in code:
            continue
        if w not in on_walk and w not in done:
            on_walk.add(w)
            stack.append(w)
            nexts[w] = 0
        elif w in on_walk and not jump:
            found.append((t, w))
    return found


def main(objs):
    bad = 0
    for obj in objs:
        for name, code in functions(obj).items():
            for t, w in refused(code):
                print(f"{obj}: {name}: instruction {t} falls through into {w}, "
                      f"a loop Linux 6.1 refuses")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
