/* Elementwise kernels NumPy has no ufunc for (erf, gelu's VJP), for _kernels.pyx.
 *
 * float32 erf is evaluated in double by a branch-free formula, so the compiler
 * vectorizes the loop (SciPy's and libm's erf branch on the argument's range:
 * ~11 ns an element on random data, the one expensive pass of gelu). On x86-64
 * Linux the loop is also compiled for x86-64-v3 (AVX2, FMA) and v4 (AVX-512),
 * one picked at load time (target_clones): wheels are built for the baseline
 * x86-64 (SSE2) only. `restrict` keeps GCC from a runtime aliasing check that
 * sent the cloned loops down their scalar path.
 *
 *   |x| < 1:       erf(x) = x * A(x^2)
 *   1 <= |x|:      erf(x) = 1 - exp(-c^2) * B((c - 2.5) / 1.5),  c = min(|x|, 4)
 *
 * A and B are Chebyshev interpolants (degree 7 in x^2, degree 14 in the scaled
 * |x|) of erf(x)/x on [0, 1] and erfcx(x) = exp(x^2) erfc(x) on [1, 4], with
 * relative errors below 4e-11 and 2.1e-10 (against mpmath): far below half a
 * float32 ulp, so the float32 result is erf rounded once, bar the rare ties.
 * From 3.84 on erfc(x) < 2.98e-8 (half an ulp of 1): erf rounds to 1, and at
 * the clamp c = 4 the formula gives 1 - 1.5e-8, which rounds to 1 as well.
 * x^2 is exact in double for float32 x; exp is a Cody-Waite reduction and a
 * degree-9 Taylor polynomial (relative error < 1e-11 on the range used).
 *
 * float64 erf and erfc call libm (C99; glibc's is fdlibm's, within one ulp):
 * a double-precision branch-free formula would need far higher degrees.
 */
#ifndef OXMERA_KERNELS_H
#define OXMERA_KERNELS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(_MSC_VER)
#define OXMERA_RESTRICT __restrict
#else
#define OXMERA_RESTRICT restrict
#endif

#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__) && !defined(OXMERA_NO_CLONES)
#define OXMERA_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OXMERA_CLONES
#endif

static const double oxmera_erf_small[8] = {   /* erf(x)/x in x^2, highest degree first */
    -9.667043434542967e-06, 0.0001126595863889324, -0.000848408035381751,
    0.005221031804441309, -0.026865430726532063, 0.1128378249521988,
    -0.3761263846802797, 1.1283791670615435};

static const double oxmera_erfcx_mid[15] = {  /* erfcx in (|x| - 2.5) / 1.5 */
    1.7581153339458654e-06, -5.053533447190937e-06, 7.665299142771713e-06,
    -2.0504708222395655e-05, 6.340933429209542e-05, -0.00016447866432008797,
    0.0004087379848525981, -0.0010047997000092823, 0.0024037214513409357,
    -0.005570925693663485, 0.012489367000778788, -0.02700527618973718,
    0.056110493629759305, -0.11152102073476153, 0.21080636406114364};

/* exp(y) for y in [-1022 ln 2, 709] (relative error < 1e-11; nan for nan):
 * no overflow or underflow handling (the callers stay in range).
 * Branch-free, so it vectorizes. */
static inline double oxmera_exp_in_range(double y)
{
    const double shift = 6755399441055744.0;            /* 1.5 * 2^52 */
    double kd = y * 1.4426950408889634 + shift;          /* round(y / ln 2) */
    double k = kd - shift;
    double r = y - k * 0.6931471803691238;               /* ln 2, high bits */
    r -= k * 1.9082149292705877e-10;                     /* ln 2, the rest */
    double p = 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    uint64_t bits, shift_bits;
    memcpy(&bits, &kd, sizeof bits);
    memcpy(&shift_bits, &shift, sizeof shift_bits);
    bits = (bits - shift_bits + 1023) << 52;             /* 2^k */
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

static inline double oxmera_erf_narrow(double x)
{
    double ax = fabs(x);
    double t = x * x;
    double small = oxmera_erf_small[0];
    for (int i = 1; i < 8; i++)
        small = small * t + oxmera_erf_small[i];
    small *= ax;
    double c = ax < 4.0 ? ax : 4.0;
    double u = (c - 2.5) * (1.0 / 1.5);
    double mid = oxmera_erfcx_mid[0];
    for (int i = 1; i < 15; i++)
        mid = mid * u + oxmera_erfcx_mid[i];
    double large = 1.0 - oxmera_exp_in_range(-(c * c)) * mid;
    double value = copysign(ax < 1.0 ? small : large, x);
    return x != x ? x : value;
}

OXMERA_CLONES
static void oxmera_erf_float32(const float *OXMERA_RESTRICT x, float *OXMERA_RESTRICT out,
                               ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++)
        out[i] = (float)oxmera_erf_narrow((double)x[i]);
}

/* gelu's VJP (approximate='none') from the CDF its forward kept, float32, in
 * one pass: grad * (cdf + x * exp(-x^2 / 2) / sqrt(2 pi)), evaluated in double.
 * Below -700 (|x| > 37) the density is 0 (exp would leave the range of
 * oxmera_exp_in_range): at x = +-inf the product is then inf * 0 = nan, as
 * NumPy's and PyTorch's formula give. */
OXMERA_CLONES
static void oxmera_gelu_backward_float32(const float *OXMERA_RESTRICT grad,
                                         const float *OXMERA_RESTRICT x,
                                         const float *OXMERA_RESTRICT cdf,
                                         float *OXMERA_RESTRICT out, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double v = (double)x[i];
        double y = -0.5 * (v * v);
        double in_range = y < -700.0 ? -700.0 : y;
        double density = oxmera_exp_in_range(in_range) * 0.3989422804014327;
        density = y < -700.0 ? 0.0 : density;
        out[i] = (float)((double)grad[i] * ((double)cdf[i] + v * density));
    }
}

static void oxmera_erf_float64(const double *x, double *out, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++)
        out[i] = erf(x[i]);
}

static void oxmera_erfc_float64(const double *x, double *out, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++)
        out[i] = erfc(x[i]);
}

#endif
