// The precision-specific parts of the math library: constants, Cody-Waite splits, clamp
// bounds and polynomial fits, one traits type per floating-point format. The algorithms
// that are the same in both precisions (libm_core/exp_log.h, hyperbolic.h, trig.h, erf.h) take
// one of these as P; P::S is the scalar type every constant is written in, so T(S(c))
// builds the same constant as the single- or double-precision text did.
#pragma once

#include "math/namespace.h"

namespace numr::math::inline NUMR_MATH_ISA::libm_core {

struct Prec64 {
  using S = double;
  static constexpr double inf = __builtin_inf(), nan = __builtin_nan("");
  // ln 2 as a 53-bit head plus tail (for exp argument reduction through fma) and as a
  // 42-bit head plus tail (k * head is exact for |k| < 2^11, for the logarithms).
  static constexpr double ln2_hi = 0.6931471805599453, ln2_lo = 2.3190468138462996e-17;
  static constexpr double ln2_hi_k = 0.6931471805598903, ln2_lo_k = 5.497923018708371e-14;
  // The pair exp's reduction uses: double precision runs where fma is fused.
  static constexpr double exp_ln2_hi = ln2_hi, exp_ln2_lo = ln2_lo;
  static constexpr double log2e = 1.4426950408889634;
  static constexpr double inv_ln2_hi = 1.4426950408889634, inv_ln2_lo = 2.0355273740931033e-17;
  static constexpr double two_thirds = 0.6666666666666666;
  static constexpr double sqrt2 = 1.4142135623730951;

  // (e^r - 1 - r) / r^2 on |r| <= 0.36, degree 10, relative error 1.3e-17 (Chebyshev fit).
  static constexpr double exp_p[] = {0.5,
                                     0.16666666666666674,
                                     0.04166666666666667,
                                     0.008333333333323584,
                                     0.0013888888888881927,
                                     0.0001984126988339433,
                                     2.4801587331670256e-05,
                                     2.7557244942221745e-06,
                                     2.7557266175047446e-07,
                                     2.5109404672957823e-08,
                                     2.091767738180507e-09};
  // (2^r - 1) / r on |r| <= 1/2, degree 11, relative error 4.9e-17.
  static constexpr double exp2_q[] = {
      0.6931471805599453,     0.24022650695910072,    0.055504108664821625,
      0.00961812910762848,    0.001333355814640647,   0.00015403530393370734,
      1.5252733841556773e-05, 1.3215486808705563e-06, 1.0178057087733941e-07,
      7.0548973041554995e-09, 4.4558179083360645e-10, 2.5729324177362305e-11};
  // (2 atanh(s) - 2 s - 2 s^3 / 3) / s^5 as a function of z = s^2 on [0, 0.0296]
  // (|s| <= 0.1716, i.e. 1 + f in [sqrt(1/2), sqrt(2)]), degree 7, relative error 6.5e-17.
  static constexpr double log_r2[] = {0.4,
                                      0.28571428571429397,
                                      0.22222222221636845,
                                      0.18181818339697634,
                                      0.1538459450380989,
                                      0.13334829573906534,
                                      0.1170557189567721,
                                      0.1173010786189303};

  // exp's argument clamp (beyond it the result is 0 or inf anyway), exp2's, and expm1's
  // lower one (below it e^x - 1 rounds to -1).
  static constexpr double exp_lo = -746, exp_hi = 710;
  static constexpr double exp2_lo = -1080, exp2_hi = 1030;
  static constexpr double expm1_lo = -40;
  // The largest n with 2^n representable (expm1 scales by 2^(n-1) and then by 2 above it).
  static constexpr double max_exp = 1023;
  // decompose scales inputs below sub_min by 2^sub_shift into the normal range first.
  static constexpr double sub_min = 0x1p-1020, sub_scale = 0x1p54, sub_shift = 54;
  // sinh and cosh switch to (e^(|x|/2))^2 / 2 above hyp_huge, tanh is 1 past tanh_one,
  // and the three return x below hyp_tiny.
  static constexpr double hyp_huge = 709, tanh_one = 22, hyp_tiny = 0x1p-28;

  // 2/pi in two parts; pi/2 = pio2_1 + pio2_2 + pio2_3 to about 2^-160.
  static constexpr double two_over_pi_hi = 0.6366197723675814,
                          two_over_pi_lo = -3.935735335036497e-17;
  static constexpr double pio2_1 = 1.5707963267948966, pio2_2 = 6.123233995736766e-17,
                          pio2_3 = -1.4973849048591698e-33;
  static constexpr double pio4 = 0.7853981633974483;
  // sin, cos and tan are accurate for |x| below this (the quadrant n = round(2x/pi) is then
  // exact in a double and the 3-part Cody-Waite reduction keeps ~100 bits); above it they
  // stay in range (sin, cos in [-1, 1], tan finite) but are not meaningful.
  static constexpr double trig_limit = 0x1p52;
  // (sin r - r) / r^3 and (cos r - 1 + r^2/2) / r^4 in z = r^2 on [0, 0.63] (|r| <= 0.79),
  // degree 6 each, relative error 6e-17.
  static constexpr double sin_s[] = {-0.16666666666666666,    0.008333333333333331,
                                     -0.00019841269841264534, 2.7557319218930736e-06,
                                     -2.5052106092079693e-08, 1.6058509605642e-10,
                                     -7.585413158756367e-13};
  static constexpr double cos_c[] = {
      0.041666666666666664, -0.0013888888888888887, 2.480158730158435e-05, -2.7557319221175745e-07,
      2.08767557130385e-09, -1.147044864854107e-11, 4.745158038365112e-14};

  // erf(x) / x - 1, v = x^2 in [0, 1], s = (v - 0.5) / 0.5, relative error 4.81e-17.
  static constexpr double erf_small[] = {
      0.9654687386698673 - 1, -0.1405360890227171,    0.019852496688983708,
      -0.0022854855611440673, 0.00021751715604160108, -1.7537169441492004e-05,
      1.2233827383524026e-06, -7.511569160710623e-08, 4.115800597661665e-09,
      -2.03524938661036e-10,  9.167606748998164e-12,  -3.7910973708931526e-13,
      1.4548169783352384e-14, -5.16472878942302e-16};
  // erfc exponent P, v = t = 2 / (2 + z) in [0.0625, 1.0625], s = (v - erfc_center) / 0.5,
  // absolute error 4.44e-17.
  static constexpr double erfc_exp[] = {
      -0.5870676703001894,    0.6822147204281854,      0.0290091841319468,
      -0.05040443572447137,   -0.00410522015816634,    0.0093781476673201,
      -0.0002541009120035999, -0.0021472422632747594,  0.0004990986525725297,
      0.00044114029474029345, -0.0002491693444743133,  -4.8939231004298386e-05,
      8.337009267901265e-05,  -1.3418606640318255e-05, -1.8325670261426695e-05,
      1.00390670779052e-05,   1.292876856109458e-06,   -3.1035831810605418e-06,
      8.351992708600038e-07,  4.505520454360666e-07,   -3.790054283415213e-07,
      4.203092617597454e-08,  7.323099217831555e-08,   -3.499774047745637e-08,
      -4.877969912504366e-09, 6.836776290502662e-09,   -3.2632079840490705e-10,
      -4.771591408916171e-10};
  static constexpr double erfc_center = 0.5625;
  // erfc underflows to 0 past erfc_zero; below erfc_small it is 1 - erf.
  static constexpr double erfc_zero = 27.25, erfc_small = 1.0;
};

struct Prec32 {
  using S = float;
  static constexpr float inf = __builtin_inff(), nan = __builtin_nanf("");
  // ln 2 as a 24-bit head plus tail (exp reduction through fma), and as a 16-bit head
  // plus tail (k * head is exact for |k| < 2^8, for the logarithms).
  static constexpr float ln2_hi = 0.6931471824645996f, ln2_lo = -1.9046542121259336e-09f;
  static constexpr float ln2_hi_k = 0.693145751953125f, ln2_lo_k = 1.428606765330187e-06f;
  // The pair exp's reduction uses: the short head, whose products with n are exact, because
  // a WGSL fma may round twice (lavapipe's does) and the 24-bit head then loses n ulps.
  static constexpr float exp_ln2_hi = ln2_hi_k, exp_ln2_lo = ln2_lo_k;
  static constexpr float log2e = 1.4426950216293335f;
  static constexpr float inv_ln2_hi = 1.4426950216293335f, inv_ln2_lo = 1.925963033500011e-08f;
  static constexpr float two_thirds = 0.6666666865348816f;
  static constexpr float sqrt2 = 1.4142135381698608f;

  // (e^r - 1 - r) / r^2 on |r| <= 0.35: Taylor terms through r^7, truncation below 2^-27.
  static constexpr float exp_p[] = {0.5f, 1.0f / 6, 1.0f / 24, 1.0f / 120, 1.0f / 720, 1.0f / 5040};
  // (2^r - 1) / r on |r| <= 1/2: the Taylor series of degree 7 (ln2^(k+1) / (k+1)!).
  static constexpr float exp2_q[] = {0.6931471824645996f,     0.24022650718688965f,
                                     0.05550410971045494f,    0.009618128649890423f,
                                     0.0013333557872101665f,  0.0001540352968731895f,
                                     1.5252733646775596e-05f, 1.3215486660556053e-06f};
  // (2 atanh(s) - 2 s - 2 s^3 / 3) / s^5 in z = s^2 on [0, 0.0295]: Taylor terms through
  // s^11.
  static constexpr float log_r2[] = {2.0f / 5, 2.0f / 7, 2.0f / 9, 2.0f / 11};

  static constexpr float exp_lo = -104.0f, exp_hi = 89.0f;
  static constexpr float exp2_lo = -151.0f, exp2_hi = 129.0f;
  static constexpr float expm1_lo = -18.0f;
  static constexpr float max_exp = 127.0f;
  static constexpr float sub_min = 0x1p-120f, sub_scale = 0x1p24f, sub_shift = 24.0f;
  static constexpr float hyp_huge = 88.0f, tanh_one = 10.0f, hyp_tiny = 0x1p-12f;

  // 2/pi in two parts; pi/2 = pio2_1 + pio2_2 + pio2_3 to about 2^-72.
  static constexpr float two_over_pi_hi = 0.6366197466850281f,
                         two_over_pi_lo = 2.5682552973194106e-08f;
  static constexpr float pio2_1 = 1.5707963705062866f, pio2_2 = -4.371138828673793e-08f,
                         pio2_3 = -1.7151245100058819e-15f;
  static constexpr float pio4 = 0.7853981852531433f;
  // Accurate below this (see libm32.h); above it results stay in range.
  static constexpr float trig_limit = 0x1p17f;
  // (sin r - r) / r^3 and (cos r - 1 + r^2/2) / r^4 in z = r^2 for |r| <= 0.79: Taylor
  // terms through r^11 and r^12, truncation below 2^-28.
  static constexpr float sin_s[] = {-1.0f / 6, 1.0f / 120, -1.0f / 5040, 1.0f / 362880,
                                    -1.0f / 39916800};
  static constexpr float cos_c[] = {1.0f / 24, -1.0f / 720, 1.0f / 40320, -1.0f / 3628800,
                                    1.0f / 479001600};

  // erf(x) / x - 1, v = x^2 in [0, 1], s = (v - 0.5) / 0.5, relative error 3.64e-08.
  static constexpr float erf_small[] = {0.9654687643051147f - 1, -0.1405360847711563f,
                                        0.019852498546242714f,   -0.0022854856215417385f,
                                        0.00021751198801212013f, -1.7536915038363077e-05f,
                                        1.231639544130303e-06f,  -7.552378633590706e-08f};
  // erfc exponent P, v = t = 2 / (2 + z) in [0.125, 1.125], s = (v - erfc_center) / 0.5,
  // absolute error 3.37e-08.
  static constexpr float erfc_exp[] = {
      -0.501436710357666f,     0.6870836019515991f,      0.009903634898364544f,
      -0.051019057631492615f,  0.0015588749665766954f,   0.008550039492547512f,
      -0.0018498771823942661f, -0.001465623383410275f,   0.0007983713294379413f,
      0.00013555240002460778f, -0.00022009009262546897f, 2.6040232114610262e-05f,
      3.133490827167407e-05f,  -9.330637112725526e-06f};
  static constexpr float erfc_center = 0.625f;
  static constexpr float erfc_zero = 10.1f, erfc_small = 1.0f;
};

}  // namespace numr::math::inline NUMR_MATH_ISA::libm_core
