#!/usr/bin/env python3
"""Fits the float approximations of J0, J1, K0, K1 (and the Hankel P, Q that J0, J1 share with
Y0, Y1 from 6.5 on) used by src/math/special.h where T computes in float, and prints
src/math/bessel_coefficients.h. Each polynomial is a Chebyshev interpolant (mpmath's
chebyfit, near-minimax) in high precision; the coefficients are rounded to float, as the
float code uses them, and the error of the rounded polynomial is measured against mpmath
over a dense grid, in units in the last place (float) of the amplitude min(1, sqrt(2/(pi x)))
of J and Y (docs/semantics.md's measure). Run as
  python3 scripts/bessel_coefficients.py | grep -v "^// [JY]" > src/math/bessel_coefficients.h
then clang-format the header.

  J0: x in [0, 1.5]: a polynomial in x^2. [1.5, 4] and [4, 8]: (x - j) p(x - j) about the
      zero j in the interval (x - j formed as (x - hi) - lo, exact near j), so the relative
      error stays bounded through the zero.
  J1: x in [0, 2]: x p(x^2); [2, 5.5] and [5.5, 8] as J0's about its zeros.
  x >= 6.5: J = A (P cos chi - Q sin chi), Y = A (P sin chi + Q cos chi), A = sqrt(2/(pi x)),
      chi = x - pi/4 (order 0), x - 3 pi/4 (order 1); P = p(t), Q = q(t) / x, t = 1 / x^2.
  K0, K1: x <= 1 their series' form with log(x/2) and I0, I1 apart; beyond e^-x / sqrt(x)
      times a polynomial in 1/x - 1/2. Their errors are relative, in float ulp of the value.
"""
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
print('// and the Hankel P, Q of order 0 and 1 (src/math/special.h), lowest degree first.')
print('#pragma once\n')
print('namespace numr::math::bessel_coef {\n')
print('// The zeros j = Hi + Lo of J0 and J1 about which [1.5, 6.5] is fitted, and the float')
print('// high part of J\'(j); the tables start with its low part.')
# K0 and K1 (relative error, float ulp of the value): for x <= 1 K0 = -log(x/2) I0 + a0(x^2),
# K1 = 1/x + log(x/2) x i1(x^2) + x a1(x^2), with I0 = i0(x^2); beyond,
# K_nu = e^-x / sqrt(x) c_nu(u), u = 1/x - 1/2 in (-1/2, 1/2].


def check_rel(name, f, approx, a, b, npts=600):
    worst, at = 0, a
    for i in range(npts + 1):
        x = mp.mpf(a) + (mp.mpf(b) - a) * i / npts
        if x == 0:
            x = mp.mpf(1e-4)
        v = f(x)
        e = abs(approx(x) - v) / ulp_f32(v)
        if e > worst:
            worst, at = e, x
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

print('\n'.join(zeros))
print('\n'.join(tables))
print('\n}  // namespace numr::math::bessel_coef')
