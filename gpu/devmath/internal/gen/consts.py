"""Split constants for package devmath's range reductions.

Run: python3 consts.py   (needs mpmath from PyPI)

A Cody–Waite constant c is split as hi + lo (+ lo2 ...) where hi keeps
only its leading bits, so that k·hi is exact for the integers k the
reduction meets; each part is printed as a Go hex float literal.
"""

import mpmath as mp

mp.mp.dps = 120


def trunc_bits(x, bits):
    """x rounded to nearest with at most bits significant bits."""
    if x == 0:
        return mp.mpf(0)
    e = int(mp.floor(mp.log(abs(x), 2))) + 1
    scale = mp.mpf(2) ** (bits - e)
    return mp.nint(x * scale) / scale


def hexf(x):
    return float(x).hex()


def split(name, c, bits_list):
    rest = mp.mpf(c)
    out = []
    for b in bits_list:
        part = trunc_bits(rest, b)
        out.append(part)
        rest -= part
    print('%s = %s  (parts %s, residual %s)' % (name, mp.nstr(c, 25), ' + '.join(hexf(p) for p in out), mp.nstr(rest, 3)))


ln2 = mp.log(2)
pio2 = mp.pi / 2
split('ln2 (exp64: k·hi exact for |k| < 2^11)', ln2, [42, 53])
print('1/ln2 =', hexf(1 / ln2))
split('ln2 (exp2/log: full 53-bit hi)', ln2, [53, 53])
split('1/ln2 (log2)', 1 / ln2, [53, 53])
split('pi/2 (sin/cos: k·hi exact for |k| < 2^20)', pio2, [33, 53, 53])
print('2/pi =', hexf(2 / mp.pi))
split('ln2 float32 (k·hi exact for |k| < 2^8)', ln2, [16, 24])
print('1/ln2 float32 ~', hexf(1 / ln2))
