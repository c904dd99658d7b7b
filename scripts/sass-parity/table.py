#!/usr/bin/env python3
"""Markdown tables from results/stats.jsonl (written by sass_stats.py via run.sh)."""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity import hot, fmt  # noqa: E402
rows = [json.loads(l) for f in sys.argv[1:] for l in open(f)]
order = ['SiluGate', 'SumPartial', 'RMSNorm', 'Softmax', 'TransposePadded', 'HistogramShared', 'MatMul32', 'MatMulMMA']
variants = ['kern', 'kernnb', 'clang', 'clang64', 'nvcc', 'kaio']
vname = {'kern': 'kern', 'kernnb': 'kern nobounds', 'clang': 'clang (int idx)', 'clang64': 'clang (64-bit idx)', 'kaio': 'KAIO 0.5.0', 'nvcc': 'nvcc 13.5 (int idx)'}
get = {(r['kernel'], r['variant'], r['arch']): r for r in rows}

print('### A. Resources and size (ptxas 12.4 -O3)\n')
print('| kernel | variant | regs sm_80/sm_90 | spill B | smem B | SASS total sm_80/sm_90 | hot loop(s), SASS per source iteration sm_80 / sm_90 |')
print('|---|---|---|---|---|---|---|')
for k in order:
    for v in variants:
        if (k, v, 'sm_80') not in get: continue
        a, b = get[(k, v, 'sm_80')], get[(k, v, 'sm_90')]
        ha, hb = hot(a), hot(b)
        lp = ' + '.join(fmt(h[0]) + ('' if h[1] == 1 else ' (x%d unrolled)' % h[1]) for h in ha) or '—'
        lpb = ' + '.join(fmt(h[0]) for h in hb) or '—'
        print(f"| {k} | {vname[v]} | {a['regs']}/{b['regs']} | {a['spill_st']}/{b['spill_st']} | {a['smem']} | {a['counts']['total']}/{b['counts']['total']} | {lp} / {lpb} |")
print('\n### B. Instruction mix, sm_80: whole kernel (hot loops per source iteration in brackets)\n')
cols = [('LDG', 'LDG'), ('STG', 'STG'), ('LDS', 'LDS'), ('INT', 'int ALU'), ('ISETP', 'ISETP'), ('BRA.pred', '@P BRA'),
        ('FFMA', 'FFMA'), ('FMUL', 'FMUL'), ('FADD', 'FADD'), ('MUFU', 'MUFU'), ('HMMA', 'HMMA'), ('BAR', 'BAR'), ('SHFL', 'SHFL'), ('ATOMS', 'ATOMS')]
print('| kernel | variant | ' + ' | '.join(c[1] for c in cols) + ' | load widths |')
print('|---|---|' + '---|' * len(cols) + '---|')
for k in order:
    for v in variants:
        if (k, v, 'sm_80') not in get: continue
        r = get[(k, v, 'sm_80')]
        c, hs = r['counts'], hot(r)
        cells = []
        for key, _ in cols:
            s = str(c.get(key, 0))
            if hs and any(h[2].get(key, 0) for h in hs):
                s += ' [' + '+'.join(fmt(h[2].get(key, 0) / h[1]) for h in hs) + ']'
            cells.append(s)
        widths = ' '.join(f"{kk}×{c[kk]}" for kk in sorted(c) if kk.startswith(('LDG.', 'STG.', 'LDS.', 'STS.')))
        print(f"| {k} | {vname[v]} | " + ' | '.join(cells) + f" | {widths} |")
