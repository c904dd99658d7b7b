"""What sass-parity counts: SASS per source iteration of a kernel's hot loops."""

# LDGs one source iteration of each hot loop performs (to undo clang's/ptxas's unrolling)
per_iter = {'SiluGate': [2], 'SumPartial': [1], 'RMSNorm': [1, 2], 'Softmax': [1, 1, 1], 'HistogramShared': [1], 'MatMul32': [8]}


def hot(r):
    """[(instructions per source iteration, unroll, counts)] of the loops that touch memory or tensor cores."""
    out, i = [], 0
    for lp in r['loops']:
        c = lp['counts']
        if not (c.get('LDG') or c.get('LDS') or c.get('HMMA')):
            continue  # cold loops (error path)
        if c.get('HMMA'):
            u = c['HMMA']
        else:
            exp = per_iter.get(r['kernel'], [1])
            u = max(1, round(c.get('LDG', 0) / exp[min(i, len(exp) - 1)]))
        out.append((c['total'] / u, u, c))
        i += 1
    return out


def fmt(x):
    return ('%.1f' % x).rstrip('0').rstrip('.')
