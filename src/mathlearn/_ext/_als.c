/* Per-row ridge solves of alternating least squares (see mathlearn/recommender/_base.py).
 *
 * For every row u of a CSR pattern (entries e in [indptr[u], indptr[u+1]), columns
 * indices[e]), with v_e = V[indices[e]] (k numbers):
 *
 *     G_u = base + sum_e w_e v_e v_e^T + reg[u] I,      b_u = sum_e coef[e] v_e,
 *
 * and X[u] solves G_u x = b_u by Cholesky (G_u = L L^T, then L y = b, L^T x = y). Rows with
 * no entry and no base term are left at 0. With t given, *sse receives
 * sum_u sum_e (t[e] - v_e . X[u])^2. Only lower triangles are formed. */

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int als_abi_version(void) { return 1; }

/* Returns -1, or the first row whose matrix is not numerically positive definite (its
 * solution is then left unset). work holds 2 k^2 + 2 k doubles. */
ML_EXPORT int64_t als_ridge_rows(int64_t n_rows, int64_t k, const int64_t *indptr,
                                 const int64_t *indices, const double *V, const double *coef,
                                 const double *w, const double *base, const double *reg,
                                 const double *t, double *X, double *sse, double *work) {
    double *G = work, *y = work + k * k, *rhs = y + k;
    double total = 0.0;
    for (int64_t u = 0; u < n_rows; ++u) {
        int64_t lo = indptr[u], hi = indptr[u + 1];
        double *x = X + u * k;
        if (lo == hi && base == NULL) {
            memset(x, 0, (size_t)k * sizeof(double));
            continue;
        }
        if (base != NULL) {
            memcpy(G, base, (size_t)(k * k) * sizeof(double));
        } else {
            memset(G, 0, (size_t)(k * k) * sizeof(double));
        }
        memset(rhs, 0, (size_t)k * sizeof(double));
        int64_t e = lo;
        /* Four entries at a time: each element of G is loaded and stored once per four
         * rank-one updates. */
        for (; e + 4 <= hi; e += 4) {
            const double *v0 = V + indices[e] * k, *v1 = V + indices[e + 1] * k;
            const double *v2 = V + indices[e + 2] * k, *v3 = V + indices[e + 3] * k;
            double w0 = 1.0, w1 = 1.0, w2 = 1.0, w3 = 1.0;
            if (w != NULL) {
                w0 = w[e];
                w1 = w[e + 1];
                w2 = w[e + 2];
                w3 = w[e + 3];
            }
            for (int64_t a = 0; a < k; ++a) {
                double a0 = w0 * v0[a], a1 = w1 * v1[a], a2 = w2 * v2[a], a3 = w3 * v3[a];
                double *Ga = G + a * k;
                for (int64_t c = 0; c <= a; ++c)
                    Ga[c] += a0 * v0[c] + a1 * v1[c] + a2 * v2[c] + a3 * v3[c];
                rhs[a] += coef[e] * v0[a] + coef[e + 1] * v1[a] + coef[e + 2] * v2[a] +
                          coef[e + 3] * v3[a];
            }
        }
        for (; e < hi; ++e) {
            const double *v = V + indices[e] * k;
            double we = (w != NULL) ? w[e] : 1.0, ce = coef[e];
            for (int64_t a = 0; a < k; ++a) {
                double va = we * v[a];
                double *Ga = G + a * k;
                for (int64_t c = 0; c <= a; ++c) Ga[c] += va * v[c];
                rhs[a] += ce * v[a];
            }
        }
        for (int64_t a = 0; a < k; ++a) G[a * k + a] += reg[u];
        /* Cholesky-Crout in place on the lower triangle, row-major. */
        for (int64_t j = 0; j < k; ++j) {
            double *Lj = G + j * k;
            double s = Lj[j];
            for (int64_t p = 0; p < j; ++p) s -= Lj[p] * Lj[p];
            if (!(s > 0.0)) return u;
            double d = sqrt(s);
            Lj[j] = d;
            for (int64_t i = j + 1; i < k; ++i) {
                double *Li = G + i * k;
                double r = Li[j];
                for (int64_t p = 0; p < j; ++p) r -= Li[p] * Lj[p];
                Li[j] = r / d;
            }
        }
        for (int64_t i = 0; i < k; ++i) {
            const double *Li = G + i * k;
            double r = rhs[i];
            for (int64_t p = 0; p < i; ++p) r -= Li[p] * y[p];
            y[i] = r / Li[i];
        }
        for (int64_t i = k - 1; i >= 0; --i) {
            double r = y[i];
            for (int64_t p = i + 1; p < k; ++p) r -= G[p * k + i] * x[p];
            x[i] = r / G[i * k + i];
        }
        if (t != NULL) {
            for (int64_t e = lo; e < hi; ++e) {
                const double *v = V + indices[e] * k;
                double r = t[e];
                for (int64_t a = 0; a < k; ++a) r -= v[a] * x[a];
                total += r * r;
            }
        }
    }
    *sse = total;
    return -1;
}
