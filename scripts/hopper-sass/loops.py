#!/usr/bin/env python3
"""loops.py: the main loops of a Hopper GEMM in SASS, counted.

usage: loops.py PTXAS NVDISASM FILE.ptx KERNEL
Assembles FILE.ptx for sm_90a, disassembles KERNEL and prints, for every
loop (a backward branch) whose body holds an HGMMA (a consumer's k step)
or a UTMALDG (a producer's), the static instructions of its body, which a
k step executes once when no wait spins (the spin of an mbarrier wait is
its first instructions, or a block ptxas moved out of line), and their
mix; plus ptxas -v's registers and every USETMAXREG.
"""
import re, subprocess, sys, tempfile, os

ptxas, nvdisasm, ptx, kernel = sys.argv[1:5]
with tempfile.TemporaryDirectory() as td:
    cub = os.path.join(td, "x.cubin")
    p = subprocess.run([ptxas, "-arch=sm_90a", "-O3", "-v", ptx, "-o", cub], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(p.stderr[-2000:])
    regs, cur = None, None
    for line in p.stderr.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            cur = m.group(1)
        m = re.search(r"Used (\d+) registers", line)
        if m and cur == kernel:
            regs = int(m.group(1))
    dis = subprocess.run([nvdisasm, "-c", "-fun", kernel, cub], capture_output=True, text=True)
    if dis.returncode != 0:
        dis = subprocess.run([nvdisasm, "-c", cub], capture_output=True, text=True)
ins, labels, pend, inside = [], {}, [], False
for line in dis.stdout.splitlines():
    m = re.match(r"\s*\.section\s+\.text\.([A-Za-z0-9_$]+)", line)
    if m:
        inside = m.group(1) == kernel
        continue
    if not inside:
        continue
    m = re.match(r"^\s*(\.L_x_\d+):", line)
    if m:
        pend.append(m.group(1))
        continue
    m = re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
    if m:
        a = int(m.group(1), 16)
        for l in pend:
            labels[l] = a
        pend = []
        ins.append((a, m.group(2)))

def op(text):
    return re.sub(r"^@!?U?P[T0-9]+\s+", "", text).split()[0]

print("%s: %s registers (ptxas -v, sm_90a)" % (kernel, regs))
for a, t in ins:
    if op(t).startswith("USETMAXREG"):
        print("  %04x %s" % (a, t))
# A k step's loop closes with a predicated backward branch; an
# unpredicated one is the return from an out-of-line wait block, and a
# BRA.U.ANY closes the one-iteration loop around an ELECT: neither is a
# loop of the algorithm. For each kind the smallest loop is the k step.
best = {}
for a, t in ins:
    m = re.search(r"BRA.*?(\.L_x_\d+)", t)
    if not m or not t.startswith("@") or ".U.ANY" in t or labels.get(m.group(1), 1 << 60) > a:
        continue
    body = [(b, u) for b, u in ins if labels[m.group(1)] <= b <= a and op(u) != "NOP"]
    ops = [op(u) for _, u in body]
    kind = "consumer k step (HGMMA)" if any(o.startswith("HGMMA") for o in ops) else \
        "producer k step (UTMALDG)" if any(o.startswith("UTMALDG") for o in ops) else None
    if kind and (kind not in best or len(body) < len(best[kind][2])):
        best[kind] = (labels[m.group(1)], a, ops)
for kind, (start, end, ops) in sorted(best.items()):
    mix = {}
    for o in ops:
        base = o.split(".")[0]
        key = base if base in ("HGMMA", "UTMALDG", "SYNCS", "R2UR", "WARPGROUP", "BRA", "ELECT") else \
            "uniform" if base.startswith("U") else "other"
        mix[key] = mix.get(key, 0) + 1
    print("  loop %04x-%04x %s: %d instructions %s" % (start, end, kind, len(ops),
          " ".join("%s=%d" % kv for kv in sorted(mix.items()))))
