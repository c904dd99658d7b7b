#!/usr/bin/env python3
"""Where a kernel's main loop issues its global loads, in SASS.

usage: loadorder.py PTXAS NVDISASM ARCH FILE.ptx KERNEL [KERNEL...]

For each kernel, the main loop is the backward branch with the largest
span (an outer loop with its inner loops unrolled or nested inside). It
prints the loop's SASS count, its global loads (LDG) and where they sit
relative to the first math instruction that can consume one (HMMA, FFMA,
HADD2, HFMA2): a loop whose loads all come before that instruction waits
on memory once per iteration; loads after it are issued only once the
earlier ones have arrived. The last line per kernel is the loop as a
sequence: L = LDG, M = HMMA, F = FFMA, S = BAR, '.' anything else
(runs collapsed as xN).
"""
import re, subprocess, sys, tempfile, os

ptxas, nvdisasm, arch, ptx = sys.argv[1:5]
kernels = sys.argv[5:]
MATH = ('HMMA', 'FFMA', 'HADD2', 'HFMA2')

with tempfile.TemporaryDirectory() as td:
    cub = os.path.join(td, 'x.cubin')
    subprocess.run([ptxas, '-arch=' + arch, '-O3', ptx, '-o', cub], check=True)
    dis = subprocess.run([nvdisasm, '-c', cub], capture_output=True, text=True, check=True).stdout

funcs, cur = {}, None
for line in dis.splitlines():
    m = re.match(r'\s*\.section\s+\.text\.([A-Za-z0-9_$]+)', line)
    if m:
        cur = m.group(1); funcs[cur] = []; continue
    if cur is None:
        continue
    m = re.match(r'^(\.L_x_\d+):', line.strip())
    if m:
        funcs[cur].append(('label', m.group(1))); continue
    m = re.search(r'/\*([0-9a-f]{4,})\*/\s+(.*?);', line)
    if m:
        funcs[cur].append(('ins', int(m.group(1), 16), m.group(2).strip()))

for k in kernels:
    body = funcs.get(k)
    if body is None:
        print(k, 'not found'); continue
    labels, ins, pend = {}, [], []
    for e in body:
        if e[0] == 'label':
            pend.append(e[1])
        else:
            for l in pend:
                labels[l] = e[1]
            pend = []
            ins.append((e[1], e[2]))
    best = None
    for addr, text in ins:
        m = re.search(r'BRA.*?(\.L_x_\d+)', text)
        if m and labels.get(m.group(1), 1 << 60) < addr:
            span = (labels[m.group(1)], addr)
            if best is None or span[1] - span[0] > best[1] - best[0]:
                best = span
    if best is None:
        print(k, arch, 'no loop'); continue
    ops = []
    for addr, text in ins:
        if best[0] <= addr <= best[1]:
            t = re.sub(r'^@!?U?P[T0-9]+\s+', '', text)
            ops.append(t.split()[0].split('.')[0])
    first = next((i for i, o in enumerate(ops) if o in MATH), len(ops))
    ldg = [i for i, o in enumerate(ops) if o == 'LDG']
    after = sum(1 for i in ldg if i > first)
    print('%s %s: main loop %d SASS, %d LDG, %d of them after the first %s (SASS #%d)' % (
        k, arch, len(ops), len(ldg), after, ops[first] if first < len(ops) else '-', first))
    sym = {'LDG': 'L', 'HMMA': 'M', 'FFMA': 'F', 'BAR': 'S'}
    seq, prev, n = [], None, 0
    for o in ops + [None]:
        c = sym.get(o, '.') if o else None
        if c == prev:
            n += 1; continue
        if prev is not None:
            seq.append(prev + ('x%d' % n if n > 1 else ''))
        prev, n = c, 1
    print('  ' + ' '.join(seq))
