#!/usr/bin/env python3
"""Writes tests/data/special_oracle.inc: the special functions at fixed points, computed by
mpmath with 50 significant digits (SciPy gives the values at poles and domain edges, where
they are a convention, not a limit), as C++ initializers {"function", a, b, value} included
by tests/test_special_functions.cpp. Unary functions leave b = 0; polygamma's a is n.
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


def mp_value(name, a, b):
    a, b = mp.mpf(a), mp.mpf(b)
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


# SciPy at the edges (poles, infinities, outside the domain), where mpmath raises or
# returns complex values. torch.special agrees, except where docs/semantics.md says.
def edge_value(name, a, b):
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
UNARY_EDGES = {
    'expit': [INF, -INF, NAN],
    'logit': [0.0, 1.0, -0.1, 1.1, INF, NAN],
    'sinc': [0.0, INF, -INF, NAN],
    'lgamma': [0.0, -0.0, -1.0, -2.0, INF, -INF, NAN],
    'digamma': [0.0, -0.0, -1.0, -3.0, INF, -INF, NAN],
    'gamma': [0.0, -0.0, -1.0, -2.0, 172.0, INF, -INF, NAN],
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
BINARY_EDGES = {
    'polygamma': [(1, 0.0), (2, -1.0), (0, 0.0), (1, INF), (1, NAN)],
    'xlogy': [(0, 0), (0, NAN), (0, -1), (1, 0), (1, -1), (NAN, 1), (0, INF)],
    'beta': [(0, 1), (-1, 0.5), (-0.5, -0.5), (NAN, 1)],
    'zeta': [(1, 1), (0.5, 1), (2, 0), (2, -1), (2.5, -1.5), (2, INF), (NAN, 1), (2, NAN)],
}


def literal(v):
    if isinstance(v, float):
        if math.isnan(v):
            return 'kNaN'
        if math.isinf(v):
            return 'kInf' if v > 0 else '-kInf'
        return f'{v!r}L'
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
        rows += [(name, f32(x), 0.0, False) for x in xs]
        rows += [(name, x, 0.0, True) for x in UNARY_EDGES[name]]
    for name, ps in BINARY.items():
        rows += [(name, f32(a), f32(b), False) for a, b in ps]
        rows += [(name, a, b, True) for a, b in BINARY_EDGES[name]]
    for name, a, b, edge in rows:
        v = edge_value(name, a, b) if edge else mp_value(name, a, b)
        lines.append(f'{{"{name}", {arg(a)}, {arg(b)}, {literal(v)}}},')
    with open(out, 'w') as f:
        f.write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
