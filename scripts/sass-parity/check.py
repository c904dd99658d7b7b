#!/usr/bin/env python3
"""Check kern's SASS against clang's: the ratio gate CI runs.

usage: check.py LIMITS stats.jsonl
For each kernel and arch: loop = kern's SASS per source iteration of its hot loops (summed)
over clang's (int indices); size = kern's whole-kernel SASS over clang's. Instruction counts
are deterministic for a given ptxas, so this is a test, not a timing. LIMITS has one line per
kernel, `name loop_limit size_limit` ('-' for a kernel without a hot loop); a ratio above its
limit fails. The limits ratchet: lower them when kern improves. The goal (issue 8) is 1.15
and 1.3 everywhere. Prints a markdown table; exits 1 on any failure or missing kernel.
"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity import hot, fmt  # noqa: E402

GOAL_LOOP, GOAL_SIZE = 1.15, 1.3
limits = {}
for line in open(sys.argv[1]):
    f = line.split('#')[0].split()
    if f:
        limits[f[0]] = (None if f[1] == '-' else float(f[1]), float(f[2]))
rows = [json.loads(l) for l in open(sys.argv[2])]
get = {(r['kernel'], r['variant'], r['arch']): r for r in rows}
bad = []
print('| kernel | arch | hot loop SASS/iter kern : clang | ratio (limit) | kernel SASS kern : clang | ratio (limit) | regs kern : clang | spills |')
print('|---|---|---|---|---|---|---|---|')
for k, (lloop, lsize) in limits.items():
    for arch in ('sm_80', 'sm_90'):
        a, c = get.get((k, 'kern', arch)), get.get((k, 'clang', arch))
        if not a or not c or 'error' in a or 'error' in c:
            bad.append(f'{k} {arch}: no statistics ({(a or {}).get("error", "")}{(c or {}).get("error", "")})')
            continue
        ha, hc = hot(a), hot(c)
        la, lc = sum(h[0] for h in ha), sum(h[0] for h in hc)
        loop = la / lc if ha and hc else None
        size = a['counts']['total'] / c['counts']['total']
        cell = '—'
        if loop is not None:
            cell = f'{loop:.2f} ({lloop})'
            if lloop is not None and loop > lloop + 1e-9:
                bad.append(f'{k} {arch}: hot loop {loop:.3f}x clang > limit {lloop}')
        if size > lsize + 1e-9:
            bad.append(f'{k} {arch}: kernel size {size:.3f}x clang > limit {lsize}')
        if a.get('spill_st', 0) or a.get('spill_ld', 0):
            bad.append(f'{k} {arch}: kern spills')
        loops = ' + '.join(fmt(h[0]) for h in ha) or '—'
        loopc = ' + '.join(fmt(h[0]) for h in hc) or '—'
        print(f"| {k} | {arch} | {loops} : {loopc} | {cell} | {a['counts']['total']} : {c['counts']['total']} "
              f"| {size:.2f} ({lsize}) | {a['regs']} : {c['regs']} | {a.get('spill_st', 0)} |")
print(f'\ngoal: {GOAL_LOOP} per hot-loop iteration, {GOAL_SIZE} whole kernel')
for b in bad:
    print('FAIL', b)
sys.exit(1 if bad else 0)
