#!/usr/bin/env python3
"""kloop.py PTXAS NVDISASM ARCH FILE.ptx KERNEL [all]: the static SASS count
of a kernel's K loop, the innermost backward branch whose body holds an HMMA
(a tile kernel's K loop is not innermost: its Stage copy loops are, so
sass_stats.py's innermost loops miss it), with its HMMA, LDSM, BAR,
LDGSTS, ISETP and BRA. docs/performance.md's tile matmul rows use it:

    N=~/.cache/kern/nvidia/usr/bin
    scripts/sass-parity/kloop.py $N/ptxas $N/nvdisasm sm_80 \\
        ops/internal/tilemm/tilemm_kern_sm_80.ptx MatmulF16

With a sixth argument `all` it prints every backward branch holding an
HMMA (a kernel with a second, fallback K loop, as gpu/tile.DotK's, shows
both; the smallest is the one printed without it).
"""
import os, re, subprocess, sys, tempfile

ptxas, nvdisasm, arch, ptx, kernel = sys.argv[1:6]
show_all = sys.argv[6:7] == ["all"]
with tempfile.TemporaryDirectory() as d:
    cubin = os.path.join(d, "k.cubin")
    subprocess.run([ptxas, "-arch", arch, "-o", cubin, ptx], check=True)
    full = subprocess.run([nvdisasm, "-c", cubin], capture_output=True, text=True, check=True).stdout
sec = re.split(r"\n\s*\.section\s+\.text\.", full)
out = next(s for s in sec if re.match(re.escape(kernel) + r",", s))
ins, labels, pend = [], {}, []
for line in out.splitlines():
    m = re.match(r"\s*(\.L_x_\d+):", line)
    if m:
        pend.append(m.group(1))
        continue
    m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
    if m:
        for l in pend:
            labels[l] = len(ins)
        pend = []
        ins.append(m.group(2).strip())
def stats(body):
    ops = [x.split()[1] if x.startswith("@") else x.split()[0] for x in body]
    c = lambda p: sum(1 for o in ops if o.startswith(p))
    return (f"{len(body)} SASS, HMMA {c('HMMA')}, LDSM {c('LDSM')}, BAR {c('BAR')}, "
            f"LDGSTS {c('LDGSTS')}, ISETP {c('ISETP')}, BRA {c('BRA')}")

best = None
for i, txt in enumerate(ins):
    m = re.search(r"\bBRA\b.*`\((\.L_x_\d+)\)", txt)
    if not m or labels.get(m.group(1), i + 1) > i:
        continue  # not a backward branch
    body = ins[labels[m.group(1)]:i + 1]
    if not any("HMMA" in x for x in body):
        continue
    if show_all:
        print(f"{kernel} {arch}: loop at instruction {labels[m.group(1)]}: {stats(body)}")
    if best is None or len(body) < len(best):
        best = body
if best is None:
    sys.exit(f"{kernel}: no loop holds an HMMA")
if not show_all:
    print(f"{kernel} {arch}: {stats(best)}")
