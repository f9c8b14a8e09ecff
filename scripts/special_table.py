#!/usr/bin/env python3
"""Writes tests/data/special_oracle.inc: the special functions at fixed points, computed by
mpmath with 50 significant digits (SciPy gives the values at poles and domain edges, where
they are a convention, not a limit), as C++ initializers {"function", a, b, c, value} included
by tests/test_special_functions.cpp. Unary functions leave b = c = 0, binary ones c = 0;
polygamma's a is n; betainc's arguments are (a, b, x).
Also tests/data/gammainc_large_a_oracle.inc, the same form: gammainc and gammaincc for large
a, near x = a (x = a + k sqrt(a)) and in the tails.
Every argument is exactly representable in float, so the same rows test F32 and F64.

Run with the Debian python3 (python3-mpmath, python3-scipy):
  /usr/bin/python3 scripts/special_table.py"""
import math
import os
import struct

import mpmath as mp
import numpy as np
import scipy.special as sc

mp.mp.dps = 50
INF = float('inf')
NAN = float('nan')


def f32(v):
    return struct.unpack('f', struct.pack('f', float(v)))[0]


def mp_value(name, a, b, c=0.0):
    a, b, c = mp.mpf(a), mp.mpf(b), mp.mpf(c)
    bessel = {'bessel_j0': (mp.besselj, 0), 'bessel_j1': (mp.besselj, 1),
              'bessel_y0': (mp.bessely, 0), 'bessel_y1': (mp.bessely, 1),
              'bessel_i0': (mp.besseli, 0), 'bessel_i1': (mp.besseli, 1),
              'bessel_k0': (mp.besselk, 0), 'bessel_k1': (mp.besselk, 1)}
    if name in bessel:
        f, n = bessel[name]
        return f(n, a)
    if name == 'bessel_i0e':
        return mp.besseli(0, a) * mp.exp(-abs(a))
    if name == 'bessel_i1e':
        return mp.besseli(1, a) * mp.exp(-abs(a))
    if name == 'ellipk':
        return mp.ellipk(a)
    if name == 'ellipe':
        return mp.ellipe(a)
    if name in ('gammainc', 'gammaincc') and a > 300:
        return gammainc_large_a(a, b, name == 'gammaincc')
    if name == 'gammainc':
        return mp.gammainc(a, 0, b, regularized=True)
    if name == 'gammaincc':
        return mp.gammainc(a, b, mp.inf, regularized=True)
    if name == 'betainc':
        return mp.betainc(a, b, 0, c, regularized=True)
    if name == 'expit':
        return 1 / (1 + mp.exp(-a))
    if name == 'logit':
        return mp.log(a / (1 - a))
    if name == 'sinc':
        return mp.sinpi(a) / (mp.pi * a) if a != 0 else mp.mpf(1)
    if name == 'lgamma':
        return mp.log(abs(mp.gamma(a)))
    if name == 'digamma':
        return mp.digamma(a)
    if name == 'gamma':
        return mp.gamma(a)
    if name == 'polygamma':
        return mp.polygamma(int(a), b)
    if name == 'xlogy':
        return a * mp.log(b)
    if name == 'beta':
        return mp.beta(a, b)
    if name == 'zeta':
        return mp.zeta(a, b)
    raise ValueError(name)


# mpmath's lower incomplete gamma gives up (NoConvergence) for large a near x = a, and its
# upper one is slow far below a. So the smaller of P and Q directly, the other as 1 - it:
# below a, P from its series x^a e^-x / gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n)),
# summed here until the terms vanish; from a on, Q from mpmath.
def gammainc_large_a(a, x, upper):
    with mp.workdps(60):
        if x < a:
            term = total = mp.mpf(1)
            n = 0
            while term > total * mp.mpf(10) ** -55:
                n += 1
                term *= x / (a + n)
                total += term
            small = mp.exp(a * mp.log(x) - x - mp.loggamma(a + 1)) * total
        else:
            small = mp.gammainc(a, x, mp.inf, regularized=True)
        return +(1 - small if upper == (x < a) else small)


# SciPy at the edges (poles, infinities, outside the domain), where mpmath raises or
# returns complex values. torch.special agrees, except where docs/semantics.md says.
def edge_value(name, a, b, c=0.0):
    # J, Y, I at ±inf: their limits (SciPy 1.10 gives NaN for some; docs/semantics.md).
    if name in ('bessel_j0', 'bessel_j1', 'bessel_i0e', 'bessel_i1e') and math.isinf(a):
        return 0.0
    if name in ('bessel_y0', 'bessel_y1') and a == INF:
        return 0.0
    if name == 'bessel_i0' and math.isinf(a):
        return INF
    if name == 'bessel_i1' and math.isinf(a):
        return a
    if name.startswith('bessel_') or name in ('ellipk', 'ellipe'):
        return float(getattr(sc, name.replace('bessel_', ''))(a))
    if name == 'gammainc':
        return float(sc.gammainc(a, b))
    if name == 'gammaincc':
        return float(sc.gammaincc(a, b))
    if name == 'betainc':
        return float(sc.betainc(a, b, c))
    if name == 'expit':
        return float(sc.expit(a))
    if name == 'logit':
        return float(sc.logit(a))
    if name == 'sinc':
        return NAN if math.isinf(a) or math.isnan(a) else float(np.sinc(a))
    if name == 'lgamma':
        # PyTorch: lgamma(-inf) = inf (SciPy's gammaln gives -inf).
        return INF if a == -INF else float(sc.gammaln(a))
    if name == 'digamma':
        return float(sc.psi(a))
    if name == 'gamma':
        # gamma(-inf): NaN here, -inf in SciPy (docs/semantics.md).
        return NAN if a == -INF else float(sc.gamma(a))
    if name == 'polygamma':
        return float(sc.polygamma(int(a), b))
    if name == 'xlogy':
        return float(sc.xlogy(a, b))
    if name == 'beta':
        return float(sc.beta(a, b))
    if name == 'zeta':
        return float(sc.zeta(a, b))
    raise ValueError(name)


UNARY = {
    'expit': [-700, -100, -30, -10, -3, -1, -1e-3, 0, 1e-8, 0.5, 1, 5, 20, 40, 100, 800],
    'logit': [1e-30, 1e-8, 1e-3, 0.1, 0.25, 0.3, 0.49, 0.5, 0.51, 0.7, 0.75, 0.9, 0.999,
              1 - 2.0**-20],
    'sinc': [1e-20, 1e-4, 0.1, 0.5, 0.9, 1, 1.5, 2.25, 3, 10.3, 100.7, 1e4 + 0.25, -0.3, -2.7,
             -7.5, 1e20],
    'lgamma': [1e-30, 1e-8, 1e-3, 0.1, 0.5, 0.9, 0.99, 1.01, 1.1, 1.4, 1.5, 1.6, 1.9, 1.99,
               2.01, 2.1, 2.4, 2.5, 2.6, 3, 4.5, 7, 9.9, 10, 10.5, 15, 30, 100, 1e3, 1e5,
               1e10, 1e30, -1e-8, -0.5, -1.5, -3.7, -10.3, -100.5, -1e4 - 0.25],
    'digamma': [1e-8, 1e-3, 0.1, 0.5, 0.9, 1, 1.2, 1.4, 1.46, 1.4616321, 1.47, 1.5, 1.7, 1.8,
                2, 3, 5, 9.9, 10, 12, 50, 1e3, 1e8, 1e30, -1e-8, -0.5, -1.5, -2.3, -10.7],
    'gamma': [1e-8, 0.1, 0.5, 1, 1.5, 2, 2.5, 3, 5, 10, 20, 30, 34.5, 50, 100, 170, 171.5,
              -0.5, -1.5, -2.5, -10.5, -20.3],
}
JY = [1e-8, 1e-3, 0.1, 0.5, 1, 2, 2.4048, 3, 3.8317, 5, 5.52, 7.0156, 8, 10, 14.93, 19.9, 20.1, 24.9,
      25.1, 30, 50, 100, 1e3, 1e4]
IK = [1e-8, 1e-3, 0.1, 0.5, 1, 2.5, 5, 10, 15, 19.9, 20.1, 30, 50, 100, 500, 700]
K = [1e-30, 1e-8, 1e-3, 0.1, 0.5, 0.99, 1.01, 2, 5, 10, 19.9, 20.1, 30, 50, 80]
ELLIP = [-1e30, -1e10, -100, -3, -1, -0.25, 0, 1e-8, 0.1, 0.5, 0.75, 0.9, 0.99, 0.999999,
         1 - 2.0**-24]
UNARY.update({
    'bessel_j0': JY + [-1, -7.5], 'bessel_j1': JY + [-1, -7.5],
    'bessel_y0': JY + [0.8936, 3.9577], 'bessel_y1': JY + [2.197, 5.4297],
    'bessel_i0': IK + [-0.7, -3, -25], 'bessel_i0e': IK + [-0.7, -3, -25],
    'bessel_i1': IK + [-0.7, -3, -25], 'bessel_i1e': IK + [-0.7, -3, -25],
    'bessel_k0': K, 'bessel_k1': K,
    'ellipk': ELLIP, 'ellipe': ELLIP,
})
BESSEL_EDGES = [0.0, INF, -INF, NAN]
UNARY_EDGES = {
    'expit': [INF, -INF, NAN],
    'logit': [0.0, 1.0, -0.1, 1.1, INF, NAN],
    'sinc': [0.0, INF, -INF, NAN],
    'lgamma': [0.0, -0.0, -1.0, -2.0, INF, -INF, NAN],
    'digamma': [0.0, -0.0, -1.0, -3.0, INF, -INF, NAN],
    'gamma': [0.0, -0.0, -1.0, -2.0, 172.0, INF, -INF, NAN],
    'bessel_j0': BESSEL_EDGES, 'bessel_j1': BESSEL_EDGES, 'bessel_y0': BESSEL_EDGES + [-1.0],
    'bessel_y1': BESSEL_EDGES + [-1.0], 'bessel_i0': BESSEL_EDGES, 'bessel_i0e': BESSEL_EDGES,
    'bessel_i1': BESSEL_EDGES, 'bessel_i1e': BESSEL_EDGES, 'bessel_k0': BESSEL_EDGES + [-1.0],
    'bessel_k1': BESSEL_EDGES + [-1.0], 'ellipk': [1.0, 1.5, -INF, INF, NAN],
    'ellipe': [1.0, 1.5, -INF, INF, NAN],
}
BINARY = {
    'polygamma': [(1, 0.1), (1, 0.5), (1, 1), (1, 2.5), (1, 10), (1, 100), (1, 1e4), (1, -0.5),
                  (1, -1.5), (1, -2.5), (2, 0.2), (2, 1), (2, 3.3), (2, 20), (2, -0.7),
                  (3, 0.5), (3, 5), (5, 1.5), (5, 12), (10, 2), (10, 0.9), (0, 1.5), (0, 3),
                  (0, 0.1)],
    'xlogy': [(2, 3), (-1.5, 0.25), (1e-3, 1e5), (3, 1 + 2.0**-20), (1e30, 1e30), (0.5, 1e-30)],
    'beta': [(0.5, 0.5), (1, 1), (2, 3), (0.1, 10), (10, 0.1), (5.5, 7.25), (30, 40), (1e-5, 1),
             (100, 0.5), (-0.5, 0.3), (-1.5, 2.25), (0.25, 0.75)],
    'zeta': [(2, 1), (3, 1), (1.5, 1), (1.001, 1), (10, 1), (2, 0.5), (2, 10), (2, 1e3),
             (4, 0.01), (30, 2), (3, -1.5), (2, -0.5), (6, 0.3), (2.5, 25)],
}
GAMMAINC = [(0.5, 0.5), (1, 1), (2, 3), (0.01, 0.5), (0.01, 2), (0.3, 0.2), (0.9, 1.5),
            (5, 2), (5, 10), (10, 10), (20, 15), (50, 55), (100, 90), (100, 110), (150, 300),
            (0.5, 50), (3, 1e-5), (1e-3, 1e-3), (200, 180), (30, 1), (0.02, 1.5), (7.5, 1e3)]
BINARY['gammainc'] = GAMMAINC
BINARY['gammaincc'] = GAMMAINC
# Large a: x = a + k sqrt(a), and in the tails x = lambda a (results below the double range
# included, which must come out 0).
GAMMAINC_LARGE_A = []
for a in [160, 500, 1500, 1e4, 1e5, 1e6, 1e8]:
    GAMMAINC_LARGE_A += [(a, a + k * math.sqrt(a))
                         for k in (0, 0.5, -0.5, 1, -1, 2, -2, 3, -3, 5, -5, 10, -10, 20, -20,
                                   30, -30)]
    GAMMAINC_LARGE_A += [(a, lam * a) for lam in (0.5, 0.8, 0.9, 1.1, 1.25, 1.6, 2.0)]
GAMMAINC_LARGE_A = [(a, x) for a, x in GAMMAINC_LARGE_A if x > 0]
GAMMAINC_EDGES = [(0, 1), (0, 0), (-1, 1), (1, -1), (1, 0), (1, INF), (INF, 1), (NAN, 1),
                  (1, NAN)]
TERNARY = {
    'betainc': [(1, 1, 0.5), (2, 3, 0.4), (0.5, 0.5, 0.1), (0.5, 0.5, 0.9), (5, 5, 0.5),
                (10, 2, 0.8), (0.1, 10, 0.01), (50, 50, 0.45), (100, 20, 0.8), (0.01, 0.01, 0.3),
                (2, 0.5, 0.999), (20, 30, 0.3), (3, 4, 1e-6), (1.5, 2.5, 0.7), (200, 300, 0.41)],
}
TERNARY_EDGES = {
    'betainc': [(1, 1, 0), (1, 1, 1), (1, 1, -0.1), (1, 1, 1.1), (0, 1, 0.5), (1, 0, 0.5),
                (-1, 1, 0.5), (NAN, 1, 0.5), (1, 1, NAN)],
}
BINARY_EDGES = {
    'polygamma': [(1, 0.0), (2, -1.0), (0, 0.0), (1, INF), (1, NAN)],
    'xlogy': [(0, 0), (0, NAN), (0, -1), (1, 0), (1, -1), (NAN, 1), (0, INF)],
    'beta': [(0, 1), (-1, 0.5), (-0.5, -0.5), (NAN, 1)],
    'zeta': [(1, 1), (0.5, 1), (2, 0), (2, -1), (2.5, -1.5), (2, INF), (NAN, 1), (2, NAN)],
    'gammainc': GAMMAINC_EDGES, 'gammaincc': GAMMAINC_EDGES,
}


def literal(v):
    if isinstance(v, float):
        if math.isnan(v):
            return 'kNaN'
        if math.isinf(v):
            return 'kInf' if v > 0 else '-kInf'
        return f'{v!r}L'
    if v != 0 and abs(v) < mp.mpf('1e-4900'):  # below the long double range
        return '0.0L'
    return f'{mp.nstr(v, 25, min_fixed=1, max_fixed=0)}L'


def arg(v):
    if math.isnan(v):
        return 'kNaN'
    if math.isinf(v):
        return 'kInf' if v > 0 else '-kInf'
    return repr(v)


def main():
    out = os.path.join(os.path.dirname(__file__), '..', 'tests', 'data', 'special_oracle.inc')
    lines = ['// Generated by scripts/special_table.py (mpmath, 50 digits; SciPy at the edges); '
             'do not edit.']
    rows = []
    for name, xs in UNARY.items():
        rows += [(name, f32(x), 0.0, 0.0, False) for x in xs]
        rows += [(name, x, 0.0, 0.0, True) for x in UNARY_EDGES[name]]
    for name, ps in BINARY.items():
        rows += [(name, f32(a), f32(b), 0.0, False) for a, b in ps]
        rows += [(name, a, b, 0.0, True) for a, b in BINARY_EDGES[name]]
    for name, ps in TERNARY.items():
        rows += [(name, f32(a), f32(b), f32(c), False) for a, b, c in ps]
        rows += [(name, a, b, c, True) for a, b, c in TERNARY_EDGES[name]]
    for name, a, b, c, edge in rows:
        v = edge_value(name, a, b, c) if edge else mp_value(name, a, b, c)
        lines.append(f'{{"{name}", {arg(a)}, {arg(b)}, {arg(c)}, {literal(v)}}},')
    with open(out, 'w') as f:
        f.write('\n'.join(lines) + '\n')

    out = os.path.join(os.path.dirname(__file__), '..', 'tests', 'data',
                       'gammainc_large_a_oracle.inc')
    lines = ['// Generated by scripts/special_table.py (mpmath, 50 digits); do not edit.']
    for name in ('gammainc', 'gammaincc'):
        for a, x in GAMMAINC_LARGE_A:
            a, x = f32(a), f32(x)
            v = mp_value(name, a, x)
            lines.append(f'{{"{name}", {arg(a)}, {arg(x)}, 0.0, {literal(v)}}},')
    with open(out, 'w') as f:
        f.write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
