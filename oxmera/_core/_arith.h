/* NumPy's add, subtract, multiply, true_divide and negative on small float
 * arrays, as plain C loops, for autograd.pyx (_small_arith).
 *
 * Why: on 16 elements NumPy's ufunc call costs ~4,300 instructions, of which
 * the arithmetic is ~50; the rest is dispatch (argument parsing, override
 * checks, dtype resolution, loop selection, the output's wrap). A training
 * step of small tensors runs a few such calls per op, forward and backward.
 *
 * The results are NumPy's bit for bit: each element is one IEEE operation,
 * correctly rounded, in the operands' own dtype, whatever the loop's
 * vectorization (a lone operation cannot be contracted into an FMA). A
 * scalar operand (a Python number beside a float32 array) is rounded to the
 * array's dtype first, as NumPy's weak scalars are.
 *
 * NumPy reports a division by zero, overflow, underflow or invalid operation
 * as its errstate says (a warning by default). These loops do not: they
 * return nonzero when any of those flags was raised, and the caller then
 * discards the result and makes NumPy's call, which computes the same values
 * and reports them as NumPy would.
 */
#ifndef OXMERA_ARITH_H
#define OXMERA_ARITH_H

#include <fenv.h>
#include <stddef.h>

enum {
    OXMERA_ARITH_NONE = 0,
    OXMERA_ARITH_ADD = 1,
    OXMERA_ARITH_SUB = 2,
    OXMERA_ARITH_MUL = 3,
    OXMERA_ARITH_DIV = 4,
    OXMERA_ARITH_NEG = 5
};

#define OXMERA_ARITH_FLAGS (FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID)

/* out[i] = a[i] OP b[i], where an operand not full (a_full/b_full 0: a
 * scalar, or an array of one value broadcast, all its strides 0) is its
 * first element for every i. */
#define OXMERA_ARITH_LOOPS(T, OP)                                              \
    if (a_full && b_full) {                                                    \
        for (i = 0; i < n; i++) out[i] = a[i] OP b[i];                         \
    } else if (a_full) {                                                       \
        const T y = b[0];                                                      \
        for (i = 0; i < n; i++) out[i] = a[i] OP y;                            \
    } else if (b_full) {                                                       \
        const T x = a[0];                                                      \
        for (i = 0; i < n; i++) out[i] = x OP b[i];                            \
    } else {                                                                   \
        const T x = a[0], y = b[0];                                            \
        const T z = x OP y;                                                    \
        for (i = 0; i < n; i++) out[i] = z;                                    \
    }

#define OXMERA_DEFINE_ARITH(T, NAME)                                           \
static int NAME(int code, const T *a, int a_full, const T *b, int b_full,      \
                T *out, Py_ssize_t n)                                          \
{                                                                              \
    Py_ssize_t i;                                                              \
    if (n == 0) return 0;   /* (an empty operand's first element is not there) */\
    feclearexcept(OXMERA_ARITH_FLAGS);                                         \
    switch (code) {                                                            \
    case OXMERA_ARITH_ADD: OXMERA_ARITH_LOOPS(T, +) break;                     \
    case OXMERA_ARITH_SUB: OXMERA_ARITH_LOOPS(T, -) break;                     \
    case OXMERA_ARITH_MUL: OXMERA_ARITH_LOOPS(T, *) break;                     \
    case OXMERA_ARITH_DIV: OXMERA_ARITH_LOOPS(T, /) break;                     \
    case OXMERA_ARITH_NEG:                                                     \
        if (a_full) {                                                          \
            for (i = 0; i < n; i++) out[i] = -a[i];                            \
        } else {                                                               \
            const T z = -a[0];                                                 \
            for (i = 0; i < n; i++) out[i] = z;                                \
        }                                                                      \
        break;                                                                 \
    default:                                                                   \
        return -1;                                                             \
    }                                                                          \
    /* The results are stored before this opaque call reads the flags. */     \
    return fetestexcept(OXMERA_ARITH_FLAGS) != 0;                              \
}

OXMERA_DEFINE_ARITH(double, oxmera_arith_float64)
OXMERA_DEFINE_ARITH(float, oxmera_arith_float32)

/* A Python float rounded to float32 as NumPy rounds a weak scalar; nonzero
 * when that raised a flag (overflow to inf, underflow), which NumPy reports. */
static int oxmera_arith_to_float32(double value, float *out)
{
    volatile double v = value;      /* a conversion at run time, flags and all */
    feclearexcept(OXMERA_ARITH_FLAGS);
    *out = (float)v;
    return fetestexcept(OXMERA_ARITH_FLAGS) != 0;
}

#endif
