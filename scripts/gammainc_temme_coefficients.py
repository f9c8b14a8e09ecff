#!/usr/bin/env python3
"""Derives the coefficients of Temme's uniform asymptotic expansion of the regularized
incomplete gamma functions for large a, in exact rational arithmetic:

  Q(a, x) = erfc(eta sqrt(a / 2)) / 2 + e^(-a eta^2 / 2) / sqrt(2 pi a) sum_k C_k(eta) a^-k,
  P(a, x) = erfc(-eta sqrt(a / 2)) / 2 - (the same sum),

lambda = x / a, eta^2 / 2 = lambda - 1 - log(lambda), eta of the sign of lambda - 1. With
mu = lambda - 1 as a power series in eta (inverting the relation above),

  C_0 = 1 / mu - 1 / eta,   C_k = C_(k-1)' / eta + (-1)^k g_k / mu,

g_k the coefficients of Gamma*(a) = Gamma(a) / (sqrt(2 pi / a) (a / e)^a) = sum g_k a^-k
(from Stirling's series). Each C_k is a power series in eta: its 1 / eta terms cancel,
which the derivation asserts, and that is what ties the recurrence to Stirling's g_k.
The expansion is then checked against mpmath.gammainc at 40 digits.

src/math/special_coefficients.h takes the table from here (scripts/special_coefficients.py
calls temme_table); run alone, this prints the checks and the table:
  python3 scripts/gammainc_temme_coefficients.py"""
from fractions import Fraction

import mpmath as mp

# The region the table serves (src/math/special.h, gammainc_temme): a >= A_MIN and
# |eta| <= ETA_MAX. The series are cut where a term falls below 2^-60 there.
A_MIN = 150
ETA_MAX = 0.25
CUT = mp.mpf(2) ** -60
ORDER = 90  # power-series length carried through the derivation


# ---- truncated power series with Fraction coefficients (index = power of eta) ----
def mul(p, q, n=ORDER):
    r = [Fraction(0)] * n
    for i, pi in enumerate(p[:n]):
        if pi:
            for j, qj in enumerate(q[:n - i]):
                r[i + j] += pi * qj
    return r


def inverse(p, n=ORDER):
    """1 / p for p[0] != 0, as far as p is known."""
    n = min(n, len(p))
    r = [Fraction(0)] * n
    r[0] = 1 / p[0]
    for k in range(1, n):
        r[k] = -sum(p[j] * r[k - j] for j in range(1, k + 1)) / p[0]
    return r


def sqrt_series(p, n=ORDER):
    """sqrt(p) for p[0] = 1."""
    assert p[0] == 1
    r = [Fraction(0)] * n
    r[0] = Fraction(1)
    for k in range(1, n):
        # (r^2)[k] = p[k]: 2 r[0] r[k] + sum_{0<j<k} r[j] r[k-j] = p[k]
        s = sum(r[j] * r[k - j] for j in range(1, k))
        r[k] = (p[k] - s) / 2
    return r


def mu_of_eta(n=ORDER):
    """mu = lambda - 1 as a power series in eta, from eta = mu h(mu),
    h = sqrt(2 (mu - log(1 + mu)) / mu^2) = sqrt(sum_j 2 (-1)^j mu^j / (j + 2)), by Lagrange
    inversion: [eta^m] mu = [mu^(m-1)] h^-m / m."""
    h2 = [Fraction(2 * (-1) ** j, j + 2) for j in range(n)]
    hinv = inverse(sqrt_series(h2, n), n)
    mu = [Fraction(0)] * n
    power = [Fraction(1)] + [Fraction(0)] * (n - 1)  # h^-m, built up
    for m in range(1, n):
        power = mul(power, hinv, n)
        mu[m] = power[m - 1] / m
    return mu


def stirling_g(kmax):
    """g_k, k = 0..kmax: Gamma*(a) = exp(sum_j B_2j / (2j (2j - 1) a^(2j - 1))) in 1/a."""
    s = [Fraction(0)] * (kmax + 1)
    for j in range(1, kmax // 2 + 2):
        if 2 * j - 1 <= kmax:
            p, q = mp.bernfrac(2 * j)
            s[2 * j - 1] = Fraction(int(p), int(q)) / (2 * j * (2 * j - 1))
    # exp of a series with no constant term: g' = s' g, term by term.
    g = [Fraction(0)] * (kmax + 1)
    g[0] = Fraction(1)
    for k in range(1, kmax + 1):
        g[k] = sum(i * s[i] * g[k - i] for i in range(1, k + 1)) / k
    return g


def temme_series(kmax):
    """C_k(eta) as power series in eta, k = 0..kmax, exact."""
    mu = mu_of_eta()
    assert mu[0] == 0 and mu[1] == 1
    u_inv = inverse(mu[1:])  # eta / mu
    g = stirling_g(kmax)
    c = [u_inv[1:]]  # C_0 = (eta / mu - 1) / eta
    for k in range(1, kmax + 1):
        prev = c[-1]
        d = [i * prev[i] for i in range(1, len(prev))]  # C_(k-1)'
        sign = -1 if k % 2 else 1
        bracket = [d[i] + sign * g[k] * u_inv[i] for i in range(len(d))]
        # The 1 / eta term of C_k is bracket[0]: it cancels only with Stirling's g_k.
        assert bracket[0] == 0, f'C_{k}: 1/eta term {bracket[0]}'
        c.append(bracket[1:])
    return c


def temme_sum(c, a, eta):
    """sum_k C_k(eta) a^-k in mpmath arithmetic, from the series."""
    return mp.fsum(mp.polyval([mp.mpf(t.numerator) / t.denominator for t in reversed(ck)], eta)
                   / mp.mpf(a) ** k for k, ck in enumerate(c))


def eta_of(a, x):
    lam = mp.mpf(x) / a
    e = mp.sqrt(2 * (lam - 1 - mp.log(lam)))
    return e if lam >= 1 else -e


def temme_q(c, a, x):
    a = mp.mpf(a)
    eta = eta_of(a, x)
    r = mp.exp(-a * eta ** 2 / 2) / mp.sqrt(2 * mp.pi * a) * temme_sum(c, a, eta)
    return mp.erfc(eta * mp.sqrt(a / 2)) / 2 + r


def check_series(c):
    """The expansion with every derived term against mpmath.gammainc, where its error
    (the first omitted term, about C_(K+1) a^-(K+1)) lies far below double precision.
    Returns the largest relative error."""
    worst = mp.mpf(0)
    for a in [200, 1000, 1e4]:
        for lam in [0.75, 0.9, 0.99, 1, 1.01, 1.1, 1.3]:
            x = mp.mpf(a) * lam
            want = mp.gammainc(a, x, mp.inf, regularized=True)
            worst = max(worst, abs(temme_q(c, a, x) / want - 1))
    assert worst < mp.mpf(10) ** -24, worst
    return worst


def check_table(rows, a_min, eta_max):
    """The cut table, its coefficients rounded to double, against mpmath.gammainc for P and
    Q across the region (a >= a_min, |eta| <= eta_max) where they lie in the double range.
    Returns the largest relative error."""
    c = [[mp.mpf(float(v)) for v in r] for r in rows]
    worst = mp.mpf(0)
    for a in [a_min, 2 * a_min, 1000, 1e4, 1e6]:
        for f in [-1, -0.7, -0.3, -0.05, 0, 0.05, 0.3, 0.7, 1]:
            eta = mp.mpf(f) * eta_max
            w = a * eta ** 2 / 2
            if w > 700:
                continue
            # Digits enough for the smaller of P and Q, about e^-w, as 1 - the other.
            with mp.workdps(40 + int(w / 2.3)):
                # lambda from eta: lambda - 1 - log(lambda) = eta^2 / 2, on eta's side of 1.
                lam = mp.findroot(lambda v: v - 1 - mp.log(v) - eta ** 2 / 2,
                                  1 + eta + eta ** 2 / 3 + (mp.mpf(10) ** -30 if f == 0 else 0))
                a, x = mp.mpf(a), mp.mpf(a) * lam
                s = mp.fsum(mp.polyval(list(reversed(ck)), eta) / a ** k for k, ck in enumerate(c))
                r = mp.exp(-w) / mp.sqrt(2 * mp.pi * a) * s
                z = eta * mp.sqrt(a / 2)
                q, p = mp.erfc(z) / 2 + r, mp.erfc(-z) / 2 - r
                want_q = mp.gammainc(a, x, mp.inf, regularized=True)
                worst = max(worst, abs(q / want_q - 1), abs(p / (1 - want_q) - 1))
    return worst


def temme_table(a_min=A_MIN, eta_max=ETA_MAX, cut=CUT):
    """The coefficients to keep, as mpmath numbers: C_0, C_1, ... while some term of C_k
    a_min^-k at |eta| = eta_max reaches cut, each C_k's series up to its last term that does.
    Asserts the derivation and the cut table against mpmath.gammainc."""
    c = temme_series(20)
    rows = []
    for k, ck in enumerate(c):
        scale = mp.mpf(a_min) ** -k
        if max(abs(mp.mpf(t.numerator) / t.denominator) * mp.mpf(eta_max) ** n
               for n, t in enumerate(ck)) * scale < cut:
            break
        n = len(ck)
        while n > 1 and all(abs(mp.mpf(t.numerator) / t.denominator) * mp.mpf(eta_max) ** i
                            * scale < cut for i, t in enumerate(ck[n - 1:], n - 1)):
            n -= 1
        rows.append([mp.mpf(t.numerator) / t.denominator for t in ck[:n]])
    assert len(rows) < len(c) - 5, 'derive more C_k'
    assert all(len(r) < len(c[k]) - 5 for k, r in enumerate(rows)), 'carry a longer ORDER'
    with mp.workdps(40):
        assert check_series(c) < mp.mpf(10) ** -24
        assert check_table(rows, a_min, eta_max) < 2 * mp.mpf(2) ** -53
    return rows


def main():
    mp.mp.dps = 40
    c = temme_series(14)
    print(f'// the expansion to C_14 against mpmath.gammainc, 200 <= a <= 1e4, '
          f'0.75 <= x / a <= 1.3: relative error {mp.nstr(check_series(c), 3)}')
    rows = temme_table()
    print(f'// the table (C_0..C_{len(rows) - 1}, rounded to double) for a >= {A_MIN}, '
          f'|eta| <= {ETA_MAX}: relative error of P and Q '
          f'{mp.nstr(check_table(rows, A_MIN, ETA_MAX), 3)}')
    print(f'// C_k(eta) = sum_n d[k][n] eta^n; lengths {[len(r) for r in rows]}')
    for r in rows:
        print('{' + ', '.join(repr(float(v)) for v in r) + '},')


if __name__ == '__main__':
    main()
