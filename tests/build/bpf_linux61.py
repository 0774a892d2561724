#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Finds what Linux 6.1's verifier refuses in BPF objects, and later ones take.

Loops: before Linux 6.3, check_cfg() takes a loop's way back only through a
jump: an instruction that is not a jump and falls through into an
instruction still on its depth-first walk is "back-edge from insn X to Y".
The compiler may lay a loop out that way (its latch just before its first
instruction). This walks every function as check_cfg() does (fall-through
edges first).

Stack: 6.1's check_max_stack_depth() rounds each frame of a call chain up
to 32 bytes and refuses a chain over 512 ("combined stack size of N calls
is M"). This sums every chain of calls from each program.

Prints each problem; exit 1 if any. Reads the code with llvm-objdump.
"""
import re
import struct
import subprocess
import sys

JMP, JMP32 = 5, 6
OP_JA, OP_CALL, OP_EXIT = 0x00, 0x80, 0x90
LD_IMM64 = 0x18


def disassemble(obj):
    """{name: {slot: 8-byte instruction}}, {name: callees}, {name: frame bytes}, programs."""
    out = subprocess.run(["llvm-objdump", "-dr", obj], capture_output=True, text=True,
                         check=True).stdout
    funcs, calls, frames, progs = {}, {}, {}, []
    cur, base, section, prev = None, 0, "", ""
    for line in out.splitlines():
        m = re.match(r"^Disassembly of section (\S+):", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:", line)
        if m:
            if not m.group(1).startswith("LBB"):
                cur, base = m.group(1), None
                funcs[cur], calls[cur], frames[cur] = {}, [], 0
                if section != ".text":
                    progs.append(cur)
            continue
        m = re.match(r"^\s*[0-9a-f]+:\s+R_BPF_64_32\s+(\S+)", line)
        if m and cur:
            calls[cur].append(m.group(1))
            continue
        m = re.match(r"^\s*([0-9]+):\s+((?:[0-9a-f]{2}[ \t]){8})(?:(?:[0-9a-f]{2}[ \t]){8})?\s*(.*)$",
                     line)
        if m and cur:
            slot = int(m.group(1))
            base = slot if base is None else base
            funcs[cur][slot - base] = bytes.fromhex(re.sub(r"\s", "", m.group(2)))
            text = m.group(3)
            # The frame: the deepest slot below r10, used directly or through a copy of r10.
            depth = re.search(r"r10 - (\d+)", text)
            if depth:
                frames[cur] = max(frames[cur], int(depth.group(1)))
            added = re.match(r"(r\d+) \+= -(\d+)", text)
            if added and prev == f"{added.group(1)} = r10":
                frames[cur] = max(frames[cur], int(added.group(2)))
            prev = text
    return funcs, calls, frames, progs


def deepest_chain(name, calls, frames, seen=()):
    """(bytes, chain) of the deepest call chain from name, frames rounded up to 32."""
    own = (max(frames.get(name, 0), 1) + 31) // 32 * 32
    best = (own, [name])
    for callee in calls.get(name, []):
        if callee in frames and callee not in seen:
            depth, chain = deepest_chain(callee, calls, frames, seen + (name,))
            if own + depth > best[0]:
                best = (own + depth, [name] + chain)
    return best


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


STACK_MAX = 512


def main(objs):
    bad = 0
    for obj in objs:
        funcs, calls, frames, progs = disassemble(obj)
        for name, code in funcs.items():
            for t, w in refused(code):
                print(f"{obj}: {name}: instruction {t} falls through into {w}, "
                      f"a loop Linux 6.1 refuses")
                bad += 1
        for prog in progs:
            depth, chain = deepest_chain(prog, calls, frames)
            if depth > STACK_MAX:
                print(f"{obj}: {' -> '.join(chain)}: {depth} bytes of stack "
                      f"(frames rounded up to 32), over Linux 6.1's {STACK_MAX}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
