#!/usr/bin/env python3
"""Fits the polynomials of the erf family (src/math/libm_core/precision.h: Prec64 for double,
Prec32 for float; erfinv's in src/math/libm/erf.h and src/math/libm32/erf.h) with mpmath's
Chebyshev interpolation and prints them as C++
arrays, lowest degree first, with the measured maximum error after rounding the
coefficients. Each polynomial is in s = (v - c) / h on [-1, 1]; c and
1 / h are exact binary fractions where the float code computes s."""
import struct
import mpmath as mp

mp.mp.dps = 50


def f32(v):
    return struct.unpack('f', struct.pack('f', float(v)))[0]


def fit(name, g, a, b, n, rnd, rel):
    c = (mp.mpf(a) + b) / 2
    h = (mp.mpf(b) - a) / 2
    poly = mp.chebyfit(lambda s: g(c + h * s), [-1, 1], n)
    co = [rnd(p) for p in reversed(poly)]
    worst = 0
    for i in range(2001):
        s = mp.mpf(-1) + 2 * mp.mpf(i) / 2000
        p = mp.mpf(0)
        for k in reversed(co):
            p = p * s + k
        ref = g(c + h * s)
        worst = max(worst, abs(p - ref) / (abs(ref) if rel else 1))
    kind = 'float' if rnd is f32 else 'double'
    suffix = 'f' if rnd is f32 else ''
    print(f'// v in [{a}, {b}], s = (v - {float(c)!r}) / {float(h)!r}, '
          f'{"relative" if rel else "absolute"} error {float(worst):.2e}.')
    body = ', '.join(f'{x!r}{suffix}' for x in co)
    print(f'inline constexpr {kind} {name}[] = {{{body}}};')


def erf_over_x(z):  # erf(x) / x with z = x^2
    return mp.erf(mp.sqrt(z)) / mp.sqrt(z) if z > 0 else 2 / mp.sqrt(mp.pi)


def erfc_exponent(t):  # P(t) with erfc(z) = t exp(-z^2 + P(t)), t = 2 / (2 + z)
    z = 2 / t - 2
    return mp.log(mp.erfc(z) / t) + z * z


def erfinv_over_x(w):  # erfinv(x) / x with w = -log(1 - x^2)
    if w == 0:
        return mp.sqrt(mp.pi) / 2
    x = mp.sqrt(-mp.expm1(-w))
    return mp.erfinv(x) / x


def erfinv_over_x_sqrt(s):  # the same with s = sqrt(w)
    return erfinv_over_x(s * s)


print('// ---- float ----')
fit('kErfSmall', erf_over_x, 0, 1, 8, f32, True)
fit('kErfcExp', erfc_exponent, 0.125, 1.125, 14, f32, False)
fit('kErfinvCentral', erfinv_over_x, 0, 4, 11, f32, True)
fit('kErfinvTail', erfinv_over_x_sqrt, 2, 4, 11, f32, True)
print('// ---- double ----')
fit('kErfSmall', erf_over_x, 0, 1, 14, float, True)
fit('kErfcExp', erfc_exponent, 0.0625, 1.0625, 28, float, False)
fit('kErfinvTail', erfinv_over_x_sqrt, 2, 6.25, 12, float, True)
