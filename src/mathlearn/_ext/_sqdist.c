/* Squared Euclidean distances by direct differences (see mathlearn/kernels/_stationary.py,
 * _sqdist): the small problems, where the expansion through one matrix product costs more in
 * passes over the result than the arithmetic itself.
 *
 * Xt (d x n, rows ldx apart: a block of rows of a larger transpose) and Yt (d x m) hold the
 * points' coordinates by rows of features (the transposes of the n x d and m x d point sets),
 * so that each feature's pass runs over consecutive points (vectorisable). out (n x m,
 * row-major) receives
 *
 *     q_ij = sum_{c = 0}^{d - 1} ((y_jc - x_ic) w_c)^2       (w_c = 1 where w is NULL),
 *
 * each sum in ascending order of c from 0: every build rounds alike (no contraction into
 * fused multiply-adds in ISO C mode), and the result errs by at most about (d + 2) eps q_ij
 * relative to the same sum with the w_c as given (the differences, products and squares
 * round once each; no cancellation, unlike the expansion ||x||^2 + ||y||^2 - 2 x^T y, and
 * points near each other subtract exactly, wherever they lie). With same != 0 (Y = X,
 * m = n), only the pairs j > i are summed, the lower triangle is their mirror and the
 * diagonal is 0. Computing both triangles of X with itself (same = 0) gives the same matrix,
 * bit for bit: (a - b)^2 and (b - a)^2 round alike; the mirror's column reads only pay on a
 * matrix that stays in cache. Returns 1 when a sum overflowed to infinity, else 0. */

#include <float.h>
#include <stddef.h>
#include <stdint.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int sqdist_abi_version(void) { return 3; }

/* MSVC spells C99's restrict __restrict unless compiling as C11 or later. */
#if defined(_MSC_VER) && !defined(__clang__) && \
    (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L)
#define restrict __restrict
#endif

/* With GCC on x86-64 Linux, the kernel is also compiled for AVX2 (four doubles per vector
 * instead of SSE2's two: 0.65 of the baseline's time at 100 points of 10 features, 0.55 at
 * 256; AVX-512 measured no better) and the loader picks the version the processor supports
 * at the first call. Every version rounds alike: the order of the operations on
 * each pair is fixed in the source and ISO C mode (-std=c99) turns off contraction into
 * fused multiply-adds (tests/kernels/test_sqdist_builds.py). Other compilers and
 * processors get the baseline version; so does a build with -DML_NO_CLONES. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(ML_NO_CLONES)
#define ML_KERNEL ML_EXPORT __attribute__((target_clones("avx2", "default")))
#else
#define ML_KERNEL ML_EXPORT
#endif

ML_KERNEL int sqdist_direct(int64_t n, int64_t m, int64_t d, const double *Xt, int64_t ldx,
                            const double *Yt, const double *w, int same, double *out) {
    int overflow = 0;
    for (int64_t i = 0; i < n; ++i) {
        double *restrict row = out + i * m;
        int64_t j0 = same ? i + 1 : 0;
        for (int64_t j = j0; j < m; ++j) row[j] = 0.0;
        /* one feature at a time over the row (long, vectorisable runs) */
        for (int64_t c = 0; c < d; ++c) {
            const double *restrict y = Yt + c * m;
            double x = Xt[c * ldx + i], wc = (w != NULL) ? w[c] : 1.0;
            for (int64_t j = j0; j < m; ++j) {
                double t = (y[j] - x) * wc;
                row[j] += t * t;
            }
        }
        for (int64_t j = j0; j < m; ++j) overflow |= !(row[j] <= DBL_MAX);
        if (same) {
            row[i] = 0.0;
            for (int64_t k = 0; k < i; ++k) row[k] = out[k * m + i];
        }
    }
    return overflow;
}
