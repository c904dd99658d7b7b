"""Minimax polynomial coefficients for package devmath.

Run: python3 remez.py [name ...]   (needs mpmath from PyPI)

Each approximation is a weighted minimax fit found by the Remez exchange
algorithm in 80-digit arithmetic: minimise max |w(t)·(f(t) - Σ c_i t^p_i)|
over [a, b], where the weight w is 1/f (relative error) unless given.
The coefficients are then rounded to the target format and the error of
the rounded polynomial (exact arithmetic) is printed next to them. The
generated constants are pasted into the Go sources by hand; the Go tests,
not this script, are what hold the routines to their bounds.
"""

import sys
import mpmath as mp

mp.mp.dps = 80


def cheb_nodes(a, b, n):
    return [a + (b - a) * (1 - mp.cos(mp.pi * j / (n - 1))) / 2 for j in range(n)]


def remez(f, a, b, powers, w=None, iters=40, grid=6000):
    a, b = mp.mpf(a), mp.mpf(b)
    if w is None:
        w = lambda t: 1 / f(t)
    n = len(powers)
    xs = cheb_nodes(a, b, n + 1)
    dense = cheb_nodes(a, b, grid)
    fd = [f(t) for t in dense]
    wd = [w(t) for t in dense]
    best = None
    for _ in range(iters):
        A = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for j, t in enumerate(xs):
            for i, p in enumerate(powers):
                A[j, i] = t ** p
            A[j, n] = (-1) ** j / w(t)
            rhs[j] = f(t)
        sol = mp.lu_solve(A, rhs)
        c = [sol[i] for i in range(n)]
        err = [wd[k] * (fd[k] - sum(ci * dense[k] ** p for ci, p in zip(c, powers))) for k in range(grid)]
        # Local extrema with alternating signs.
        ext = []
        for k in range(grid):
            e = err[k]
            left = err[k - 1] if k > 0 else None
            right = err[k + 1] if k < grid - 1 else None
            if (left is None or abs(e) >= abs(left)) and (right is None or abs(e) >= abs(right)):
                if ext and mp.sign(err[ext[-1]]) == mp.sign(e):
                    if abs(e) > abs(err[ext[-1]]):
                        ext[-1] = k
                else:
                    ext.append(k)
        while len(ext) > n + 1:
            if abs(err[ext[0]]) < abs(err[ext[-1]]):
                ext.pop(0)
            else:
                ext.pop()
        maxerr = max(abs(e) for e in err)
        best = (c, maxerr)
        if len(ext) < n + 1:
            break
        xs = [dense[k] for k in ext]
        minerr = min(abs(err[k]) for k in ext)
        if maxerr - minerr < maxerr * mp.mpf('1e-6'):
            break
    return best


def rounded_error(f, a, b, powers, c, w=None, grid=6000):
    if w is None:
        w = lambda t: 1 / f(t)
    dense = cheb_nodes(mp.mpf(a), mp.mpf(b), grid)
    return max(abs(w(t) * (f(t) - sum(ci * t ** p for ci, p in zip(c, powers)))) for t in dense)


def to64(x):
    return mp.mpf(float(x))


def to32(x):
    import struct
    return mp.mpf(struct.unpack('f', struct.pack('f', float(x)))[0])


def lim(g, v, eps=mp.mpf('1e-40')):
    """g with its limit v at 0 (where g is 0/0)."""
    return lambda t: v if abs(t) < eps else g(t)


sq = mp.sqrt

# name: (f, a, b, powers, target format, weight)
FITS = {
    # e^r = 1 + r + r²·Q(r), |r| ≤ ln2/2.
    'exp64': (lim(lambda r: (mp.exp(r) - 1 - r) / r ** 2, mp.mpf(1) / 2), -mp.log(2) / 2 - 1e-4, mp.log(2) / 2 + 1e-4, range(10), to64, None),
    # log(1+f) = f - s·(f - z·R(z)), s = f/(2+f), z = s², |s| ≤ 3-2√2.
    'log64': (lim(lambda z: (2 * mp.atanh(sq(z)) / sq(z) - 2) / z, mp.mpf(2) / 3), 0, (3 - 2 * sq(2)) ** 2 * 1.0001, range(7), to64, None),
    # sin r = r + r·z·S(z), z = r², |r| ≤ π/4.
    'sin64': (lim(lambda z: (mp.sin(sq(z)) / sq(z) - 1) / z, -mp.mpf(1) / 6), 0, (mp.pi / 4 * 1.001) ** 2, range(6), to64, None),
    # cos r = 1 - z/2 + z²·C(z).
    'cos64': (lim(lambda z: (mp.cos(sq(z)) - 1 + z / 2) / z ** 2, mp.mpf(1) / 24), 0, (mp.pi / 4 * 1.001) ** 2, range(6), to64, None),
    # tanh x = x + x·z·P(z), z = x², |x| ≤ 0.55 (float64) or 0.6 (float32).
    'tanh64': (lim(lambda z: (mp.tanh(sq(z)) / sq(z) - 1) / z, -mp.mpf(1) / 3), 0, mp.mpf(0.55) ** 2, range(11), to64, None),
    'tanh32': (lim(lambda z: (mp.tanh(sq(z)) / sq(z) - 1) / z, -mp.mpf(1) / 3), 0, mp.mpf(0.6) ** 2, range(5), to32, None),
    # e^r = 1 + r + r²·Q(r), |r| ≤ ln2/2, for float32.
    'exp32': (lim(lambda r: (mp.exp(r) - 1 - r) / r ** 2, mp.mpf(1) / 2), -mp.log(2) / 2 - 1e-3, mp.log(2) / 2 + 1e-3, range(5), to32, None),
    # erf x = x·E(z), z = x², |x| ≤ 1.
    'erf64': (lim(lambda z: mp.erf(sq(z)) / sq(z), 2 / sq(mp.pi)), 0, 1, range(12), to64, None),
    'erf32': (lim(lambda z: mp.erf(sq(z)) / sq(z), 2 / sq(mp.pi)), 0, 1, range(7), to32, None),
    # erfc x = exp(-x²)·G(t), t = (x-3)/(x+3), 1 ≤ x ≤ 6, weighted by
    # exp(-x²): the error that reaches erf = 1 - erfc.
    'erfc64': (lambda t: mp.erfc(3 * (1 + t) / (1 - t)) * mp.exp((3 * (1 + t) / (1 - t)) ** 2), mp.mpf(-2) / 4, mp.mpf(3) / 9, range(16), to64,
               lambda t: mp.exp(-(3 * (1 + t) / (1 - t)) ** 2)),
    # erf(c + t) directly, absolute error, c = 0.9375, 0.625 ≤ x ≤ 1.25
    # (float64; the constant term is split, see main).
    'erfmid64': (lambda t: mp.erf(t + mp.mpf(0.9375)), -0.3125, 0.3125, range(15), to64, lambda t: 1),
    # erfc(c + t) directly, absolute error, for float32 on [1, 2.25] and [2.25, 4].
    'erfc32a': (lambda t: mp.erfc(t + mp.mpf(1.625)), -0.625, 0.625, range(11), to32, lambda t: 1),
    'erfc32b': (lambda t: mp.erfc(t + mp.mpf(3.125)), -0.875, 0.875, range(9), to32, lambda t: 1),
}


def tanh_fit(T, deg, fmt):
    return (lim(lambda z: (mp.tanh(sq(z)) / sq(z) - 1) / z, -mp.mpf(1) / 3), 0, mp.mpf(T) ** 2, range(deg), fmt, None)


def erf_fit(T, deg, fmt):
    return (lim(lambda z: mp.erf(sq(z)) / sq(z), 2 / sq(mp.pi)), 0, mp.mpf(T) ** 2, range(deg), fmt, None)


def main(names):
    for name in names:
        f, a, b, powers, fmt, w = FITS[name]
        powers = list(powers)
        c, e = remez(f, a, b, powers, w)
        cr = [fmt(x) for x in c]
        er = rounded_error(f, a, b, powers, cr, w)
        print('%s on [%s, %s]: minimax error %s (2^%.1f), rounded %s (2^%.1f)' % (
            name, mp.nstr(a, 6), mp.nstr(b, 6), mp.nstr(e, 3), float(mp.log(e, 2)), mp.nstr(er, 3), float(mp.log(er, 2))))
        for p, x in zip(powers, cr):
            print('\tt^%d: %s' % (p, repr(float(x))))
        if powers[0] == 0:
            print('\tt^0 low part: %s' % float(c[0] - cr[0]).hex())


if __name__ == '__main__':
    main(sys.argv[1:] or list(FITS))
