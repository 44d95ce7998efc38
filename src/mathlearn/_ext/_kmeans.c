/* The per-row parts of a k-means assignment step (see mathlearn/cluster/_kmeans_common.py).
 *
 * The cross terms V = X C^T of a block of m rows come from a BLAS product (NumPy); here,
 * for each row i of the block,
 *
 *     labels[i] = argmin_k (cnorm[k] - 2 V[i, k])      (ties: the lowest k),
 *     mind[i]   = that minimum                          (when mind is given),
 *
 * and, when sums is given, the M-step statistics of the new partition are accumulated:
 * sums[labels[i]] += w_i x_i and counts[labels[i]] += w_i (w_i = 1 without weights).
 * One pass over V and X: no N x K mask and no one-hot product. */

#include <stddef.h>
#include <stdint.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int kmeans_abi_version(void) { return 1; }

ML_EXPORT void kmeans_argmin_accumulate(int64_t m, int64_t k, int64_t d, const double *V,
                                        const double *cnorm, const double *X,
                                        const double *weight, int64_t *labels, double *mind,
                                        double *sums, double *counts) {
    for (int64_t i = 0; i < m; ++i) {
        const double *v = V + i * k;
        double best = cnorm[0] - 2.0 * v[0];
        int64_t arg = 0;
        for (int64_t c = 1; c < k; ++c) {
            double s = cnorm[c] - 2.0 * v[c];
            /* Branch-free select: the winner is unpredictable for clustered data. */
            int lt = s < best;
            arg = lt ? c : arg;
            best = lt ? s : best;
        }
        labels[i] = arg;
        if (mind != NULL) mind[i] = best;
        if (sums != NULL) {
            const double *x = X + i * d;
            double *acc = sums + arg * d;
            if (weight == NULL) {
                for (int64_t j = 0; j < d; ++j) acc[j] += x[j];
                counts[arg] += 1.0;
            } else {
                double w = weight[i];
                for (int64_t j = 0; j < d; ++j) acc[j] += w * x[j];
                counts[arg] += w;
            }
        }
    }
}

/* out[i] = ||x_i - C[labels[i]]||^2 from the differences (no cancellation). */
ML_EXPORT void kmeans_sq_dist_assigned(int64_t n, int64_t d, const double *X, const double *C,
                                       const int64_t *labels, double *out) {
    for (int64_t i = 0; i < n; ++i) {
        const double *x = X + i * d;
        const double *c = C + labels[i] * d;
        double s0 = 0.0, s1 = 0.0;
        int64_t j = 0;
        for (; j + 2 <= d; j += 2) {
            double r0 = x[j] - c[j], r1 = x[j + 1] - c[j + 1];
            s0 += r0 * r0;
            s1 += r1 * r1;
        }
        for (; j < d; ++j) {
            double r = x[j] - c[j];
            s0 += r * r;
        }
        out[i] = s0 + s1;
    }
}
