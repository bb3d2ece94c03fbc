/* Gather and scatter loops of the convolutions and max pooling, for _kernels.pyx.
 *
 * NumPy does im2col as one strided copy per kernel position and col2im as one
 * strided add per kernel position; on small images (a digits CNN's 8x8 and
 * 4x4 planes) every such call walks rows of 4 to 8 elements, and its time is
 * the per-row overhead of NumPy's iterator (measured: 1 ms for the col2im of a
 * (128, 16, 4, 4) gradient, where the data is 0.3 MB). These loops do the
 * same work in one pass, with the padding handled by bounds, not by a padded
 * copy of the input.
 *
 * Geometry is always 3-D, (D, H, W): the 1-D and 2-D convolutions pass 1 for
 * the dims they lack. Strides are in elements. A column matrix holds element
 * (n, c, kd, kh, kw, od, oh, ow) at
 *     n * col_n + (c * K + (kd * KH + kh) * KW + kw) * col_row + (od * OH + oh) * OW + ow,
 * K = KD * KH * KW: col_n = C * K * P, col_row = P is the per-sample layout
 * (N, C*K, P); col_n = P, col_row = N * P the batch layout (C*K, N*P). The
 * input position of a column element is od * sd - pd + kd * dd (and so on);
 * outside the input it reads as 0 (im2col) or is dropped (col2im). A negative
 * pd crops, as a padding of the transposed convolution's gradient may.
 */
#ifndef OXMERA_CONV_KERNELS_H
#define OXMERA_CONV_KERNELS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "_kernels.h"   /* OXMERA_CLONES, OXMERA_RESTRICT */

typedef struct {
    ptrdiff_t n, c, size[3];        /* batch, channels, input size (D, H, W) */
    ptrdiff_t in_stride[5];         /* element strides of the input (N, C, D, H, W) */
    ptrdiff_t kernel[3], out[3], stride[3], pad[3], dilation[3];
    ptrdiff_t col_n, col_row;       /* the column matrix's layout (see above) */
} oxmera_conv_geometry;

/* The output positions o in [*lo, *hi) whose input position o * s - p + k * d
 * lies in [0, size). */
static inline void oxmera_valid_range(ptrdiff_t size, ptrdiff_t out, ptrdiff_t s, ptrdiff_t p,
                                      ptrdiff_t offset, ptrdiff_t *lo, ptrdiff_t *hi)
{
    ptrdiff_t shift = offset - p;              /* input = o * s + shift */
    ptrdiff_t first = shift >= 0 ? 0 : (-shift + s - 1) / s;
    ptrdiff_t end = size - shift <= 0 ? 0 : (size - shift + s - 1) / s;
    *lo = first < out ? first : out;
    *hi = end < out ? end : out;
    if (*hi < *lo)
        *hi = *lo;
}

/* The offsets of the input elements of output positions [p0, p0 + count),
 * for every kernel position (kernel-major: K rows of `count`), from the start
 * of their (D, H, W) volume, or OXMERA_OUTSIDE where they fall in the
 * padding. The gathers below walk such a table: each output element costs a
 * table read, not the bookkeeping of the short row it belongs to (a row
 * loop spent 6x longer than this on 32x32 images, more on smaller ones). */
#define OXMERA_OUTSIDE PTRDIFF_MIN

static void oxmera_conv_table(const oxmera_conv_geometry *g, ptrdiff_t p0, ptrdiff_t count,
                              ptrdiff_t *table)
{
    const ptrdiff_t OH = g->out[1], OW = g->out[2];
    for (ptrdiff_t kd = 0; kd < g->kernel[0]; kd++)
    for (ptrdiff_t kh = 0; kh < g->kernel[1]; kh++)
    for (ptrdiff_t kw = 0; kw < g->kernel[2]; kw++) {
        ptrdiff_t od = p0 / (OH * OW), oh = p0 / OW % OH, ow = p0 % OW;
        for (ptrdiff_t t = 0; t < count; t++) {
            ptrdiff_t id = od * g->stride[0] - g->pad[0] + kd * g->dilation[0];
            ptrdiff_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dilation[1];
            ptrdiff_t iw = ow * g->stride[2] - g->pad[2] + kw * g->dilation[2];
            int inside = id >= 0 && id < g->size[0] && ih >= 0 && ih < g->size[1]
                         && iw >= 0 && iw < g->size[2];
            *table++ = inside
                ? id * g->in_stride[2] + ih * g->in_stride[3] + iw * g->in_stride[4]
                : OXMERA_OUTSIDE;
            if (++ow == OW) {                   /* the next position, no division */
                ow = 0;
                if (++oh == OH) {
                    oh = 0;
                    od++;
                }
            }
        }
    }
}

/* dst[s * dst_stride + p] = src[s * src_stride + offsets[p]] (0 at OXMERA_OUTSIDE)
 * for `samples` samples: branch-free (a select, not a jump) and out of line,
 * with restrict pointers, so it vectorizes (AVX2 and AVX-512 gathers in the
 * cloned versions). */
#define OXMERA_GATHER(T)                                                                     \
OXMERA_CLONES                                                                                \
static void oxmera_gather_##T(const T *OXMERA_RESTRICT src, ptrdiff_t src_stride,            \
                              const ptrdiff_t *OXMERA_RESTRICT offsets,                      \
                              T *OXMERA_RESTRICT dst, ptrdiff_t dst_stride, ptrdiff_t count, \
                              ptrdiff_t samples)                                             \
{                                                                                            \
    for (ptrdiff_t s = 0; s < samples; s++, src += src_stride, dst += dst_stride)            \
        for (ptrdiff_t p = 0; p < count; p++) {                                              \
            ptrdiff_t o = offsets[p];                                                        \
            T v = src[o != OXMERA_OUTSIDE ? o : 0];                                          \
            dst[p] = o != OXMERA_OUTSIDE ? v : (T)0;                                         \
        }                                                                                    \
}

/* The adjoint: out[s * out_stride + offsets[p]] += col[s * col_stride + p]. */
#define OXMERA_SCATTER(T)                                                                    \
static void oxmera_scatter_##T(const T *OXMERA_RESTRICT col, ptrdiff_t col_stride,           \
                               const ptrdiff_t *OXMERA_RESTRICT offsets, T *out,             \
                               ptrdiff_t out_stride, ptrdiff_t count, ptrdiff_t samples)     \
{                                                                                            \
    for (ptrdiff_t s = 0; s < samples; s++, col += col_stride, out += out_stride)            \
        for (ptrdiff_t p = 0; p < count; p++)                                                \
            if (offsets[p] != OXMERA_OUTSIDE)                                                \
                out[offsets[p]] += col[p];                                                   \
}

/* Positions per table: K * this many entries stay in the L2 cache. */
#define OXMERA_TABLE_ENTRIES ((ptrdiff_t)1 << 15)

/* im2col (FROM_TO = a gather, from the input `x` to the columns `cols`) and
 * col2im (a scatter, the other way; its arguments in the gather's order),
 * over tables of a run of output positions
 * each. In the batch layout one call per row (channel and kernel position)
 * takes every sample, so the columns are walked in order; per sample one call
 * per (sample, channel) takes its K rows when a table holds every position.
 * Returns 0, or -1 when out of memory. */
#define OXMERA_CONV_PASS(g, x, cols, FROM_TO)                                                    \
    do {                                                                                     \
        const ptrdiff_t K = g->kernel[0] * g->kernel[1] * g->kernel[2];                      \
        const ptrdiff_t P = g->out[0] * g->out[1] * g->out[2];                               \
        ptrdiff_t run = OXMERA_TABLE_ENTRIES / K > 0 ? OXMERA_TABLE_ENTRIES / K : 1;         \
        run = run < P ? run : P;                                                             \
        ptrdiff_t *table = (ptrdiff_t *)malloc((K * run > 0 ? K * run : 1) * sizeof(ptrdiff_t)); \
        if (!table)                                                                          \
            return -1;                                                                       \
        for (ptrdiff_t p0 = 0; p0 < P; p0 += run) {                                          \
            const ptrdiff_t count = P - p0 < run ? P - p0 : run;                             \
            oxmera_conv_table(g, p0, count, table);                                          \
            if (g->col_n < g->col_row)                                                       \
                for (ptrdiff_t c = 0; c < g->c; c++)                                         \
                for (ptrdiff_t k = 0; k < K; k++) {                                          \
                    FROM_TO(x + c * g->in_stride[1], g->in_stride[0], table + k * count,     \
                            cols + (c * K + k) * g->col_row + p0, P, count, g->n);           \
                }                                                                            \
            else                                                                             \
                for (ptrdiff_t n = 0; n < g->n; n++)                                         \
                for (ptrdiff_t c = 0; c < g->c; c++) {                                       \
                    if (count == P)     /* the K rows are one contiguous block */            \
                        FROM_TO(x + n * g->in_stride[0] + c * g->in_stride[1], 0, table,     \
                                cols + n * g->col_n + c * K * P, 0, K * P, 1);               \
                    else                                                                     \
                        for (ptrdiff_t k = 0; k < K; k++)                                    \
                            FROM_TO(x + n * g->in_stride[0] + c * g->in_stride[1], 0,        \
                                    table + k * count,                                       \
                                    cols + n * g->col_n + (c * K + k) * P + p0, 0, count, 1);\
                }                                                                            \
        }                                                                                    \
        free(table);                                                                         \
        return 0;                                                                            \
    } while (0)

/* The row pass, for unit stride along the last dim in both the input and the
 * output positions (almost every convolution) and rows of 16 outputs or more:
 * a column row of OW elements is then one contiguous run of an input row,
 * shifted by kw * dw - pw, with the part in the padding zeroed (im2col) or
 * dropped (col2im). It walks rows, not elements: no table, and the copy or
 * add of a run vectorizes (the table scatter of a (32, 16, 32, 32) float32
 * col2im took 5.4 ms, a block of nine NumPy strided adds 5.7 ms; by rows
 * 1.3 ms). The columns are walked in memory order in both layouts.
 * ROW(x_offset, col_offset, inside, lo, hi) handles one row (of elements of
 * type row_t): elements [lo, hi) of it lie in the input when `inside` (its
 * (d, h) input row exists), and x_offset is then where the row's element 0
 * would read. */
static inline int oxmera_rows_apply(const oxmera_conv_geometry *g)
{
    /* Rows of 16 and more: per row, the bounds and the loop's start cost more
     * than the table's reads on short rows (a (128, 16, 8, 8) float32 im2col:
     * 0.99 ms by rows, 0.63 ms by the table; (8, 64, 16, 16): 0.59 against
     * 1.13 ms, (32, 16, 32, 32): 1.35 against 3.8 ms) */
    return g->stride[2] == 1 && g->in_stride[4] == 1 && g->out[2] >= 16;
}

/* One (sample n, channel c, kernel position k) block of column rows, every
 * output (d, h) row of it (K_ is the pass's kernel size, see below). */
#define OXMERA_ROW_BLOCK(g, n, c, k, ROW)                                                    \
    do {                                                                                     \
        const ptrdiff_t kd_ = (k) / (g->kernel[1] * g->kernel[2]);                           \
        const ptrdiff_t kh_ = (k) / g->kernel[2] % g->kernel[1], kw_ = (k) % g->kernel[2];   \
        const ptrdiff_t shift_ = kw_ * g->dilation[2] - g->pad[2];                           \
        ptrdiff_t lo_, hi_;                                                                  \
        oxmera_valid_range(g->size[2], g->out[2], 1, g->pad[2], kw_ * g->dilation[2],        \
                           &lo_, &hi_);                                                      \
        ptrdiff_t col_ = (n) * g->col_n + ((c) * K_ + (k)) * g->col_row;                     \
        const ptrdiff_t plane_ = (n) * g->in_stride[0] + (c) * g->in_stride[1];              \
        for (ptrdiff_t od_ = 0; od_ < g->out[0]; od_++) {                                    \
            const ptrdiff_t id_ = od_ * g->stride[0] - g->pad[0] + kd_ * g->dilation[0];     \
            for (ptrdiff_t oh_ = 0; oh_ < g->out[1]; oh_++, col_ += g->out[2]) {             \
                const ptrdiff_t ih_ = oh_ * g->stride[1] - g->pad[1] + kh_ * g->dilation[1]; \
                const int inside_ = id_ >= 0 && id_ < g->size[0] && ih_ >= 0                 \
                                    && ih_ < g->size[1];                                     \
                ROW((inside_ ? plane_ + id_ * g->in_stride[2] + ih_ * g->in_stride[3]        \
                     + shift_ : 0), col_, inside_, lo_, hi_);                                \
            }                                                                                \
        }                                                                                    \
    } while (0)

#define OXMERA_ROW_PASS(g, ROW)                                                              \
    do {                                                                                     \
        const ptrdiff_t K_ = g->kernel[0] * g->kernel[1] * g->kernel[2];                     \
        if (g->col_n < g->col_row)      /* batch layout: rows (c, k), then samples */        \
            for (ptrdiff_t c = 0; c < g->c; c++)                                             \
            for (ptrdiff_t k = 0; k < K_; k++)                                               \
            for (ptrdiff_t n = 0; n < g->n; n++)                                             \
                OXMERA_ROW_BLOCK(g, n, c, k, ROW);                                           \
        else                                                                                 \
            for (ptrdiff_t n = 0; n < g->n; n++)                                             \
            for (ptrdiff_t c = 0; c < g->c; c++)                                             \
            for (ptrdiff_t k = 0; k < K_; k++)                                               \
                OXMERA_ROW_BLOCK(g, n, c, k, ROW);                                           \
    } while (0)

/* im2col's row: zeros before lo, the input's run, zeros from hi (all zeros
 * for a row in the padding). */
#define OXMERA_COPY_ROW(x_at, col_at, inside, lo, hi)                                        \
    do {                                                                                     \
        row_t *OXMERA_RESTRICT dst_ = cols + (col_at);                                       \
        const ptrdiff_t zeros_to_ = (inside) ? (lo) : g->out[2];                             \
        const ptrdiff_t zeros_from_ = (inside) ? (hi) : g->out[2];                           \
        for (ptrdiff_t ow = 0; ow < zeros_to_; ow++)                                         \
            dst_[ow] = 0;                                                                    \
        if (inside) {                                                                        \
            const row_t *OXMERA_RESTRICT src_ = x + (x_at);                                  \
            for (ptrdiff_t ow = (lo); ow < (hi); ow++)                                       \
                dst_[ow] = src_[ow];                                                         \
        }                                                                                    \
        for (ptrdiff_t ow = zeros_from_; ow < g->out[2]; ow++)                               \
            dst_[ow] = 0;                                                                    \
    } while (0)

/* col2im's row: the run inside the input added to it. */
#define OXMERA_ADD_ROW(x_at, col_at, inside, lo, hi)                                         \
    do {                                                                                     \
        if (inside) {                                                                        \
            row_t *OXMERA_RESTRICT dst_ = out + (x_at);                                      \
            const row_t *OXMERA_RESTRICT src_ = cols + (col_at);                             \
            for (ptrdiff_t ow = (lo); ow < (hi); ow++)                                       \
                dst_[ow] += src_[ow];                                                        \
        }                                                                                    \
    } while (0)

/* A pass's entry point: the row pass when it applies, else the table's
 * (`volume` is the (N, C, D, H, W) side, `cols` the column matrix). */
#define OXMERA_PASS_ENTRY(NAME, T, IN, OUT, VOLUME, COLS, ROW, FROM_TO)                      \
OXMERA_CLONES                                                                                \
static void NAME##_rows(const T *IN, T *OUT, const oxmera_conv_geometry *g)                  \
{                                                                                            \
    typedef T row_t;                                                                         \
    OXMERA_ROW_PASS(g, ROW);                                                                 \
}                                                                                            \
static int NAME(const T *IN, T *OUT, const oxmera_conv_geometry *g)                          \
{                                                                                            \
    if (oxmera_rows_apply(g)) {                                                              \
        NAME##_rows(IN, OUT, g);                                                             \
        return 0;                                                                            \
    }                                                                                        \
    OXMERA_CONV_PASS(g, VOLUME, COLS, FROM_TO);                                              \
}

/* im2col is a copy: one loop per element size serves every dtype. */
#define OXMERA_IM2COL(T)                                                                     \
OXMERA_GATHER(T)                                                                             \
OXMERA_PASS_ENTRY(oxmera_im2col_##T, T, x, cols, x, cols, OXMERA_COPY_ROW, oxmera_gather_##T)

OXMERA_IM2COL(uint16_t)
OXMERA_IM2COL(uint32_t)
OXMERA_IM2COL(uint64_t)

/* col2im, the adjoint: adds every in-bounds column element to its input
 * position of `out` (strides in g->in_stride), which the caller zeroed.
 * Sequential, so overlapping windows add in a fixed order. */
#define OXMERA_SCATTER_SWAPPED(T)                                                            \
static inline void oxmera_scatter_swapped_##T(T *out, ptrdiff_t out_stride,                  \
                                              const ptrdiff_t *offsets, const T *col,        \
                                              ptrdiff_t col_stride, ptrdiff_t count,         \
                                              ptrdiff_t samples)                             \
{                                                                                            \
    oxmera_scatter_##T(col, col_stride, offsets, out, out_stride, count, samples);           \
}
#define OXMERA_COL2IM(T)                                                                     \
OXMERA_SCATTER(T)                                                                            \
OXMERA_SCATTER_SWAPPED(T)                                                                    \
OXMERA_PASS_ENTRY(oxmera_col2im_##T, T, cols, out, out, cols, OXMERA_ADD_ROW,                \
                  oxmera_scatter_swapped_##T)

OXMERA_COL2IM(float)
OXMERA_COL2IM(double)

/* 2-D max pooling of planes (N, C, H, W) (element strides in_stride[4]) into
 * contiguous values and int64 indices (N, C, OH, OW): a window's value is
 * its first maximum in window order (row-major over the kernel), or its last
 * NaN, as PyTorch's kernel finds them (`v > best || isnan(v)`); taps outside
 * the input are skipped, so padding never wins. Every window holds at least
 * one input element (the caller checks). The index is flat in the (H, W)
 * plane. pad is the padding before (top, left). */
#define OXMERA_MAX_POOL2D(T)                                                                 \
OXMERA_CLONES                                                                                \
static void oxmera_max_pool_tap_##T(const T *OXMERA_RESTRICT x, ptrdiff_t plane_step,        \
                                    ptrdiff_t row_step, ptrdiff_t col_step,                  \
                                    T *OXMERA_RESTRICT best, int64_t *OXMERA_RESTRICT where, \
                                    ptrdiff_t planes, ptrdiff_t out_plane, ptrdiff_t rows,   \
                                    ptrdiff_t cols, ptrdiff_t out_row, int64_t first,        \
                                    int64_t index_row_step, int64_t index_col_step)          \
{                                                                                            \
    /* one kernel position for a block of outputs of every plane: selects, not jumps   */   \
    /* (on data a branch cannot predict, the mispredictions were most of the time)     */   \
    for (ptrdiff_t q = 0; q < planes; q++)                                                   \
    for (ptrdiff_t r = 0; r < rows; r++) {                                                   \
        const T *row = x + q * plane_step + r * row_step;                                    \
        T *b = best + q * out_plane + r * out_row;                                           \
        int64_t *w = where + q * out_plane + r * out_row;                                    \
        const int64_t start = first + r * index_row_step;                                    \
        for (ptrdiff_t o = 0; o < cols; o++) {                                               \
            T v = row[o * col_step];                                                         \
            int take = (w[o] < 0) | (v > b[o]) | (v != v);                                   \
            b[o] = take ? v : b[o];                                                          \
            w[o] = take ? start + o * index_col_step : w[o];                                 \
        }                                                                                    \
    }                                                                                        \
}                                                                                            \
                                                                                             \
static int oxmera_max_pool2d_##T(const T *x, T *values, int64_t *indices, ptrdiff_t n,       \
                                 ptrdiff_t c, ptrdiff_t h, ptrdiff_t w,                      \
                                 const ptrdiff_t *in_stride, const ptrdiff_t *kernel,        \
                                 const ptrdiff_t *out, const ptrdiff_t *stride,              \
                                 const ptrdiff_t *pad, const ptrdiff_t *dilation)            \
{                                                                                            \
    const ptrdiff_t OH = out[0], OW = out[1];                                                \
    for (ptrdiff_t t = 0; t < n * c * OH * OW; t++)                                          \
        indices[t] = -1;                                                                     \
    for (ptrdiff_t i = 0; i < n; i++)                                                        \
    for (ptrdiff_t kh = 0; kh < kernel[0]; kh++) {                                           \
        ptrdiff_t rlo, rhi, lo, hi;                                                          \
        oxmera_valid_range(h, OH, stride[0], pad[0], kh * dilation[0], &rlo, &rhi);         \
        ptrdiff_t ih = rlo * stride[0] - pad[0] + kh * dilation[0];                          \
        for (ptrdiff_t kw = 0; kw < kernel[1]; kw++) {                                       \
            oxmera_valid_range(w, OW, stride[1], pad[1], kw * dilation[1], &lo, &hi);       \
            ptrdiff_t iw = lo * stride[1] - pad[1] + kw * dilation[1];                       \
            if (rlo < rhi && lo < hi)                                                        \
                oxmera_max_pool_tap_##T(                                                     \
                    x + i * in_stride[0] + ih * in_stride[2] + iw * in_stride[3],            \
                    in_stride[1], stride[0] * in_stride[2], stride[1] * in_stride[3],        \
                    values + (i * c * OH + rlo) * OW + lo,                                   \
                    indices + (i * c * OH + rlo) * OW + lo, c, OH * OW, rhi - rlo, hi - lo,  \
                    OW, ih * w + iw, stride[0] * w, stride[1]);                              \
        }                                                                                    \
    }                                                                                        \
    return 0;                                                                                \
}

OXMERA_MAX_POOL2D(float)
OXMERA_MAX_POOL2D(double)

/* max pooling's gradient: out[p, indices[p, o]] += grad[p, o] for `planes`
 * planes of `outputs` gradients and `plane_size` elements (all contiguous;
 * out zeroed, indices checked in range by the caller). */
#define OXMERA_PLANE_SCATTER(T)                                                              \
static void oxmera_plane_scatter_##T(const T *grad, const int64_t *indices, T *out,          \
                                     ptrdiff_t planes, ptrdiff_t outputs,                    \
                                     ptrdiff_t plane_size)                                   \
{                                                                                            \
    for (ptrdiff_t p = 0; p < planes; p++) {                                                 \
        T *dst = out + p * plane_size;                                                       \
        const T *g = grad + p * outputs;                                                     \
        const int64_t *idx = indices + p * outputs;                                          \
        for (ptrdiff_t o = 0; o < outputs; o++)                                              \
            dst[idx[o]] += g[o];                                                             \
    }                                                                                        \
}

OXMERA_PLANE_SCATTER(float)
OXMERA_PLANE_SCATTER(double)

#endif
