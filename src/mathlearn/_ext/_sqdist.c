/* Squared Euclidean distances by direct differences (see mathlearn/kernels/_stationary.py,
 * _sqdist): the small problems, where the expansion through one matrix product costs more in
 * passes over the result than the arithmetic itself.
 *
 * Xt (d x n) and Yt (d x m) hold the points' coordinates by rows of features (the
 * transposes of the n x d and m x d point sets, contiguous), so that each feature's pass
 * runs over consecutive points (vectorisable). out (n x m, row-major) receives
 *
 *     q_ij = sum_{c = 0}^{d - 1} (y_jc - x_ic)^2,
 *
 * each sum in ascending order of c from 0: every build rounds alike (no contraction into
 * fused multiply-adds in ISO C mode), and the result errs by at most about (d + 1) eps q_ij
 * (the differences and squares round once each; no cancellation, unlike the expansion
 * ||x||^2 + ||y||^2 - 2 x^T y). With same != 0 (Y = X, m = n), only the pairs j > i are
 * summed, the lower triangle is their mirror (exactly symmetric) and the diagonal is 0. */

#include <stdint.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int sqdist_abi_version(void) { return 1; }

ML_EXPORT void sqdist_direct(int64_t n, int64_t m, int64_t d, const double *Xt,
                             const double *Yt, int same, double *out) {
    for (int64_t i = 0; i < n; ++i) {
        double *row = out + i * m;
        int64_t j0 = same ? i + 1 : 0;
        for (int64_t j = j0; j < m; ++j) row[j] = 0.0;
        for (int64_t c = 0; c < d; ++c) {
            const double *y = Yt + c * m;
            double x = Xt[c * n + i];
            for (int64_t j = j0; j < m; ++j) {
                double t = y[j] - x;
                row[j] += t * t;
            }
        }
        if (same) {
            row[i] = 0.0;
            for (int64_t j = 0; j < i; ++j) row[j] = out[j * m + i];
        }
    }
}
