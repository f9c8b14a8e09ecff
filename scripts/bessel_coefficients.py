#!/usr/bin/env python3
"""Fits the float approximations of J0, J1, K0, K1, I0, I1 (and the Hankel P, Q that J0, J1
share with Y0, Y1 from 6.5 on) used by src/math/special.h where T computes in float, and prints
src/math/bessel_coefficients.h. Each polynomial is a Chebyshev interpolant (mpmath's
chebyfit, near-minimax) in high precision; the coefficients are rounded to float, as the
float code uses them, and the error of the rounded polynomial is measured against mpmath
over a dense grid, in units in the last place (float) of the amplitude min(1, sqrt(2/(pi x)))
of J and Y (docs/semantics.md's measure). Run as
  python3 scripts/bessel_coefficients.py | grep -v "^// [IJKY][01]" > src/math/bessel_coefficients.h
then clang-format the header.

  J0: x in [0, 1.5]: a polynomial in x^2. [1.5, 4] and [4, 8]: (x - j) p(x - j) about the
      zero j in the interval (x - j formed as (x - hi) - lo, exact near j), so the relative
      error stays bounded through the zero.
  J1: x in [0, 2]: x p(x^2); [2, 5.5] and [5.5, 8] as J0's about its zeros.
  x >= 6.5: J = A (P cos chi - Q sin chi), Y = A (P sin chi + Q cos chi), A = sqrt(2/(pi x)),
      chi = x - pi/4 (order 0), x - 3 pi/4 (order 1); P = p(t), Q = q(t) / x, t = 1 / x^2.
  K0, K1: x <= 1 their series' form with log(x/2) and I0, I1 apart; beyond e^-x / sqrt(x)
      times a polynomial in 1/x - 1/2. Their errors are relative, in float ulp of the value.
  I0, I1 (and the scaled e^-x I0, e^-x I1): x <= 2 I0 = 1 + z r0(z), I1 = x (1/2 + z r1(z)),
      z = x^2 (the rounding of z costs little there); (2, 8] e^-x I_nu as a polynomial in
      x - 5 (exact in float there); beyond e^-x I_nu sqrt(x) as a polynomial in 1/x. The
      constant terms of the last two are float hi + lo: rounded, each would cost up to half
      an ulp of the result. Besides the fit (exact arithmetic, coefficients as float), the
      error of the whole float evaluation is simulated (every operation rounded to float,
      exp and sqrt correctly rounded; the device's exp adds its own), relative, in float ulp.
"""
import math
import struct
import mpmath as mp

mp.mp.dps = 40


def f32(v):
    return struct.unpack('f', struct.pack('f', float(v)))[0]


def amp(x):
    return min(mp.mpf(1), mp.sqrt(2 / (mp.pi * x)))


def ulp_f32(v):
    e = mp.floor(mp.log(abs(v), 2))
    return mp.mpf(2) ** (e - 23)


def horner(co, t):
    p = mp.mpf(0)
    for c in reversed(co):
        p = p * t + c
    return p


def cheb(g, a, b, n):
    return [f32(c) for c in reversed(mp.chebyfit(g, [a, b], n))]


def check(name, f, approx, a, b, npts=4000):
    worst, at = 0, a
    for i in range(npts + 1):
        x = mp.mpf(a) + (mp.mpf(b) - a) * i / npts
        if x == 0:
            x = mp.mpf(1e-6)
        e = abs(approx(x) - f(x)) / ulp_f32(amp(x))
        if e > worst:
            worst, at = e, x
    print(f'// {name} on [{a}, {b}]: max error {float(worst):.3f} float ulp of the amplitude'
          f' (at {float(at):.4g}).')
    return worst


tables = []


def table(name, co):
    tables.append(f'inline constexpr double {name}[] = {{' + ', '.join(repr(c) for c in co) + '};')


def zero_split(j):
    hi = f32(j)
    lo = f32(j - hi)
    return hi, lo


J = [lambda x: mp.besselj(0, x), lambda x: mp.besselj(1, x)]
Y = [lambda x: mp.bessely(0, x), lambda x: mp.bessely(1, x)]

# Near 0.
c = cheb(lambda z: mp.besselj(0, mp.sqrt(z)), 0, mp.mpf(1.5) ** 2, 8)
check('J0 x^2 polynomial', J[0], lambda x: horner(c, x * x), 0, 1.5)
table('kJ0Small', c)
c = cheb(lambda z: mp.besselj(1, mp.sqrt(z)) / mp.sqrt(z), mp.mpf(1e-30), 4, 9)
check('J1 x p(x^2)', J[1], lambda x: x * horner(c, x * x), 0, 2)
table('kJ1Small', c)

# About the zeros.
zeros = []
for nu, k, a, b, n in [(0, 1, 1.5, 3.8, 12), (0, 2, 3.8, 6.5, 12), (1, 1, 2, 5, 12),
                       (1, 2, 5, 6.5, 12)]:
    j = mp.besseljzero(nu, k)
    hi, lo = zero_split(j)
    g = lambda d, j=j, nu=nu: mp.besselj(nu, j + d) / d
    poly = list(reversed(mp.chebyfit(g, [mp.mpf(a) - j, mp.mpf(b) - j], n)))
    # The leading coefficient J'(j) as float hi + lo: its rounding alone would cost up to
    # |x - j| half-ulps of the result.
    c0hi = f32(poly[0])
    c = [f32(poly[0] - c0hi)] + [f32(v) for v in poly[1:]]
    check(f'J{nu} about its zero {k}', J[nu],
          lambda x, c=c, j=j, h=c0hi: (x - j) * h + (x - j) * horner(c, x - j), a, b)
    table(f'kJ{nu}Zero{k}', c)
    zeros.append(f'inline constexpr double kJ{nu}Zero{k}Hi = {hi!r}, kJ{nu}Zero{k}Lo = {lo!r}, '
                 f'kJ{nu}Slope{k} = {c0hi!r};')

# Hankel P and Q from 6.5 on.
X0 = 6.5
for nu in (0, 1):
    chi = lambda x, nu=nu: x - (2 * nu + 1) * mp.pi / 4

    def pq(x, nu=nu, chi=chi):
        a = mp.sqrt(2 / (mp.pi * x))
        jv, yv = J[nu](x), Y[nu](x)
        cc, ss = mp.cos(chi(x)), mp.sin(chi(x))
        return (jv * cc + yv * ss) / a, (yv * cc - jv * ss) / a

    tmax = mp.mpf(1) / X0 ** 2
    p = cheb(lambda t: pq(1 / mp.sqrt(t))[0] if t > 0 else mp.mpf(1), 0, tmax, 7)
    q = cheb(lambda t: pq(1 / mp.sqrt(t))[1] / mp.sqrt(t) if t > 0 else
             mp.mpf(4 * nu * nu - 1) / 8, 0, tmax, 7)

    def jy(x, p=p, q=q, chi=chi):
        a = mp.sqrt(2 / (mp.pi * x))
        pp, qq = horner(p, 1 / x ** 2), horner(q, 1 / x ** 2) / x
        return (a * (pp * mp.cos(chi(x)) - qq * mp.sin(chi(x))),
                a * (pp * mp.sin(chi(x)) + qq * mp.cos(chi(x))))

    check(f'J{nu} Hankel', J[nu], lambda x, jy=jy: jy(x)[0], X0, 60)
    check(f'Y{nu} Hankel', Y[nu], lambda x, jy=jy: jy(x)[1], X0, 60)
    check(f'J{nu} Hankel far', J[nu], lambda x, jy=jy: jy(x)[0], 60, 3000, 2000)
    table(f'kHankelP{nu}', p)
    table(f'kHankelQ{nu}', q)

print('// Generated by scripts/bessel_coefficients.py: the float approximations of J0, J1, K0, K1')
print('// and I0, I1, and the Hankel P, Q of order 0 and 1 (src/math/special.h), lowest degree')
print('// first.')
print('#pragma once\n')
print('namespace numr::math::bessel_coef {\n')
print('// The zeros j = Hi + Lo of J0 and J1 about which [1.5, 6.5] is fitted, and the float')
print('// high part of J\'(j); the tables start with its low part.')
# K0 and K1 (relative error, float ulp of the value): for x <= 1 K0 = -log(x/2) I0 + a0(x^2),
# K1 = 1/x + log(x/2) x i1(x^2) + x a1(x^2), with I0 = i0(x^2); beyond,
# K_nu = e^-x / sqrt(x) c_nu(u), u = 1/x - 1/2 in (-1/2, 1/2].


def worst_ulp(f, approx, a, b, npts, at_zero, power=1):
    """The largest |approx - f| in float ulp of f over npts + 1 points of [a, b] (spaced as
    t^power), x = 0 replaced by at_zero; and where it is."""
    worst, at = 0, a
    for i in range(npts + 1):
        x = mp.mpf(a) + (mp.mpf(b) - a) * (mp.mpf(i) / npts) ** power
        if x == 0:
            x = mp.mpf(at_zero)
        v = f(x)
        e = abs(approx(x) - v) / ulp_f32(v)
        if e > worst:
            worst, at = e, x
    return worst, at


def check_rel(name, f, approx, a, b, npts=600):
    worst, at = worst_ulp(f, approx, a, b, npts, 1e-4)
    print(f'// {name} on [{a}, {b}]: max error {float(worst):.3f} float ulp (at {float(at):.4g}).')


K = [lambda x: mp.besselk(0, x), lambda x: mp.besselk(1, x)]
I = [lambda x: mp.besseli(0, x), lambda x: mp.besseli(1, x)]
i0 = cheb(lambda z: I[0](mp.sqrt(z)), 0, 1, 5)
a0 = cheb(lambda z: K[0](mp.sqrt(z)) + mp.log(mp.sqrt(z) / 2) * I[0](mp.sqrt(z)) if z > 0
          else -mp.euler, 0, 1, 6)
check_rel('K0 near 0', K[0], lambda x: -mp.log(x / 2) * horner(i0, x * x) + horner(a0, x * x),
          0, 1)
i1 = cheb(lambda z: I[1](mp.sqrt(z)) / mp.sqrt(z), mp.mpf(1e-30), 1, 5)
a1 = cheb(lambda z: (K[1](mp.sqrt(z)) - 1 / mp.sqrt(z) - mp.log(mp.sqrt(z) / 2) * I[1](mp.sqrt(z)))
          / mp.sqrt(z), mp.mpf(1e-30), 1, 6)
check_rel('K1 near 0', K[1], lambda x: 1 / x + mp.log(x / 2) * x * horner(i1, x * x) +
          x * horner(a1, x * x), 0, 1)
table('kI0Small', i0)
table('kK0Small', a0)
table('kI1Small', i1)
table('kK1Small', a1)
for nu in (0, 1):
    c = cheb(lambda u, nu=nu: K[nu](1 / (u + mp.mpf(0.5))) * mp.exp(1 / (u + mp.mpf(0.5))) *
             mp.sqrt(1 / (u + mp.mpf(0.5))) if u > -0.5 else mp.sqrt(mp.pi / 2),
             -mp.mpf(0.5), mp.mpf(0.5), 13)
    check_rel(f'K{nu} e^x sqrt(x)', lambda x, nu=nu: K[nu](x) * mp.exp(x) * mp.sqrt(x),
              lambda x, c=c: horner(c, 1 / x - mp.mpf(0.5)), 1, 120)
    table(f'kK{nu}Large', c)


# I0 and I1.
I_ROWS = [(0, 1, 0.5), (1, 3, 2), (3, 8, 5.5)]  # intervals of e^-x I_nu and their centres
I_NEAR_N = 13


def fl(v):
    return f32(v)


def horner_fl(co, t):
    p = fl(co[-1])
    for c in reversed(co[:-1]):
        p = fl(fl(p * t) + c)
    return p


def i_float(nu, x, tabs, scaled):
    """I_nu(x) or e^-x I_nu(x) as the float code computes it, x a float >= 0."""
    if not scaled and x <= 2:
        # c0 + w, w = z r(z); for I1 x c0 + x w.
        z = fl(x * x)
        w = fl(z * horner_fl(tabs['low'][1:], z))
        return fl(x * 0.5 + fl(x * w)) if nu else fl(1 + w)
    if x <= 8:
        k = 0 if x <= 1 else 1 if x <= 3 else 2
        d = fl(x - I_ROWS[k][2])
        g = fl(tabs['near_hi'][k] + horner_fl(tabs['near'][k], d))
        if nu == 1 and k == 0:
            g = fl(x * g)
        return g if scaled else fl(g * fl(math.exp(x)))
    g = fl(tabs['large_hi'] + horner_fl(tabs['large'], fl(1 / x)))
    ie = fl(g / fl(math.sqrt(x)))
    if scaled:
        return ie
    # e^x whole below 88 (where it is finite), else in two halves.
    if x < 88:
        return fl(ie * fl(math.exp(x)))
    h = fl(math.exp(x / 2)) if x < 170 else float('inf')
    return fl(fl(ie * h) * h)


def check_i(nu, tabs, a, b, npts, scaled_only=False):
    worst = [0, 0]
    at = [a, a]
    for i in range(npts + 1):
        # Denser towards a where the interval reaches far.
        x = fl(a + (b - a) * (i / npts) ** (3 if b > 50 else 1))
        if x == 0:
            x = fl(1e-6)
        xm = mp.mpf(x)
        want = I[nu](xm)
        for k, scaled in enumerate((True, False)):
            if scaled_only and not scaled:
                continue
            w = want * mp.exp(-xm) if scaled else want
            e = abs(i_float(nu, x, tabs, scaled) - w) / ulp_f32(w)
            if e > worst[k]:
                worst[k], at[k] = e, x
    line = f'// I{nu} on [{a}, {b}]: max error in float, I{nu}e {float(worst[0]):.3f} ulp' \
           f' (at {at[0]:.4g})'
    if not scaled_only:
        line += f', I{nu} {float(worst[1]):.3f} (at {at[1]:.4g})'
    print(line + '.')


def hi_lo(poly):
    hi = f32(poly[0])
    return hi, [f32(poly[0] - hi)] + [f32(v) for v in poly[1:]]


def check_fit(name, f, approx, a, b, npts=1000):
    worst, at = worst_ulp(f, approx, a, b, npts, 1e-6, 3 if b > 50 else 1)
    print(f'// {name} on [{a}, {b}]: max error of the fit {float(worst):.3f} float ulp'
          f' (at {float(at):.4g}).')


i_splits, i_tables = [], []
for nu in (0, 1):
    tabs = {'near': [], 'near_hi': []}
    c0 = mp.mpf(1) if nu == 0 else mp.mpf(0.5)
    # I_nu unscaled for x <= 2: c0 + z r(z), r fitted in z = x^2 (r(0) = 1/4 and 1/16).
    r = cheb(lambda z, nu=nu, c0=c0: (I[nu](mp.sqrt(z)) / (mp.sqrt(z) if nu else 1) - c0) / z
             if z > 0 else mp.mpf(1) / (4 if nu == 0 else 16), 0, 4, 5)
    tabs['low'] = [f32(c0)] + r
    ex = (lambda x: 1) if nu == 0 else (lambda x: x)
    check_fit(f'I{nu} fit as a polynomial in x^2', I[nu],
              lambda x, ex=ex, t=tabs: ex(x) * horner(t['low'], x * x), 0, 2)
    # e^-x I_nu up to 8 in d = x - c about the centre of each interval (exact in float
    # there), divided by x on the first for I1.
    ie = lambda x, nu=nu: I[nu](x) * mp.exp(-x)
    for k, (a, b, c) in enumerate(I_ROWS):
        div = nu == 1 and k == 0
        g = (lambda d, c=c: ie(c + d) / (c + d) if c + d != 0 else mp.mpf(0.5)) if div else \
            (lambda d, c=c: ie(c + d))
        hi, co = hi_lo(list(reversed(mp.chebyfit(g, [mp.mpf(a) - c, mp.mpf(b) - c], I_NEAR_N))))
        tabs['near_hi'].append(hi)
        tabs['near'].append(co)
        check_fit(f'I{nu} fit of e^-x I{nu} about {c}', ie, lambda x, hi=hi, co=co, c=c, div=div:
                  (x if div else 1) * (hi + horner(co, x - c)), a, b)
    # Beyond 8: e^-x I_nu sqrt(x) in t = 1/x (1/sqrt(2 pi) at t = 0).
    poly = list(reversed(mp.chebyfit(
        lambda t, nu=nu: I[nu](1 / t) * mp.exp(-1 / t) / mp.sqrt(t) if t > 0 else
        1 / mp.sqrt(2 * mp.pi), [0, mp.mpf(1) / 8], 7)))
    tabs['large_hi'], tabs['large'] = hi_lo(poly)
    check_fit(f'I{nu} fit of e^-x I{nu} sqrt(x) in 1/x', ie,
              lambda x, t=tabs: (t['large_hi'] + horner(t['large'], 1 / x)) / mp.sqrt(x), 8, 1000)
    for a, b in [(0, 1), (1, 2), (2, 3), (3, 8)]:
        check_i(nu, tabs, a, b, 2000)
    check_i(nu, tabs, 8, 91, 3000)
    check_i(nu, tabs, 91, 1e6, 1000, scaled_only=True)
    i_tables.append(f'inline constexpr double kI{nu}Low[] = {{' +
                    ', '.join(repr(v) for v in tabs['low']) + '};')
    i_tables.append(f'inline constexpr double kI{nu}Near[3][{I_NEAR_N}] = {{' + ', '.join(
        '{' + ', '.join(repr(v) for v in row) + '}' for row in tabs['near']) + '};')
    i_tables.append(f'inline constexpr double kI{nu}Large[] = {{' +
                    ', '.join(repr(v) for v in tabs['large']) + '};')
    i_splits.append(f'inline constexpr double kI{nu}NearHi[] = {{' +
                    ', '.join(repr(v) for v in tabs['near_hi']) + f'}}, kI{nu}LargeHi = '
                    f'{tabs["large_hi"]!r};')

print('\n'.join(zeros))
print('\n'.join(tables))
print('// The float I0 and I1: up to 2 polynomials in x^2 (Low); e^-x I_nu up to 8 about the')
print('// centres kINearCentre of three intervals ending at 1, 3 and 8 (Near, the first of I1')
print('// divided by x); beyond, e^-x I_nu sqrt(x) in 1/x (Large). The float high parts of their')
print('// constant terms stand apart (NearHi, LargeHi); the tables start with the low parts.')
print('inline constexpr double kINearCentre[] = {' + ', '.join(repr(float(r[2])) for r in I_ROWS) +
      '};')
print('\n'.join(i_splits))
print('\n'.join(i_tables))
print('\n}  // namespace numr::math::bessel_coef')
