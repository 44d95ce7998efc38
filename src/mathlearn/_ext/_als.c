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

/* y . x with four independent partial sums (a fixed order, so results do not depend on
 * the compiler; the chains let the processor overlap the multiply-adds). */
static double dot4(const double *y, const double *x, int64_t k) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t a = 0;
    for (; a + 4 <= k; a += 4) {
        s0 += y[a] * x[a];
        s1 += y[a + 1] * x[a + 1];
        s2 += y[a + 2] * x[a + 2];
        s3 += y[a + 3] * x[a + 3];
    }
    for (; a < k; ++a) s0 += y[a] * x[a];
    return (s0 + s1) + (s2 + s3);
}

/* out = B v for a symmetric B, as a sum of B's rows scaled by v (vectorisable updates). */
static void symv(const double *B, const double *v, double *out, int64_t k) {
    for (int64_t a = 0; a < k; ++a) out[a] = 0.0;
    for (int64_t b = 0; b < k; ++b) {
        const double *Bb = B + b * k;
        double vb = v[b];
        for (int64_t a = 0; a < k; ++a) out[a] += vb * Bb[a];
    }
}

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
            double s = Lj[j] - dot4(Lj, Lj, j);
            if (!(s > 0.0)) return u;
            double d = sqrt(s);
            Lj[j] = d;
            for (int64_t i = j + 1; i < k; ++i) {
                double *Li = G + i * k;
                Li[j] = (Li[j] - dot4(Li, Lj, j)) / d;
            }
        }
        for (int64_t i = 0; i < k; ++i) {
            const double *Li = G + i * k;
            y[i] = (rhs[i] - dot4(Li, y, i)) / Li[i];
        }
        for (int64_t i = k - 1; i >= 0; --i) {
            double r = y[i];
            for (int64_t p = i + 1; p < k; ++p) r -= G[p * k + i] * x[p];
            x[i] = r / G[i * k + i];
        }
        if (t != NULL) {
            for (int64_t e = lo; e < hi; ++e) {
                double r = t[e] - dot4(V + indices[e] * k, x, k);
                total += r * r;
            }
        }
    }
    *sse = total;
    return -1;
}

/* Conjugate-gradient iterations of implicit-feedback ALS (see
 * mathlearn/recommender/_implicit.py): for every row u, `steps` CG iterations from X[u] on
 *
 *     (base + sum_e w[e] y_e y_e^T) x = sum_e c[e] y_e,      y_e = Y[indices[e]],
 *
 * in place in X. base is a full symmetric k x k matrix. With terms given, *terms receives
 * sum_e c[e] (1 - s_e)^2 - s_e^2 at the result, s_e = y_e . X[u]. work holds 4 k doubles. */
ML_EXPORT void als_cg_rows(int64_t n_rows, int64_t k, const int64_t *indptr,
                           const int64_t *indices, const double *Y, const double *w,
                           const double *c, const double *base, double *X, int64_t steps,
                           double *terms, double *work) {
    double *r = work, *p = work + k, *Ap = work + 2 * k;
    double total = 0.0;
    for (int64_t u = 0; u < n_rows; ++u) {
        int64_t lo = indptr[u], hi = indptr[u + 1];
        double *x = X + u * k;
        /* r = rhs - A x */
        symv(base, x, r, k);
        for (int64_t a = 0; a < k; ++a) r[a] = -r[a];
        for (int64_t e = lo; e < hi; ++e) {
            const double *y = Y + indices[e] * k;
            double f = c[e] - w[e] * dot4(y, x, k);
            for (int64_t a = 0; a < k; ++a) r[a] += f * y[a];
        }
        double rs = 0.0;
        for (int64_t a = 0; a < k; ++a) {
            p[a] = r[a];
            rs += r[a] * r[a];
        }
        for (int64_t it = 0; it < steps; ++it) {
            symv(base, p, Ap, k);
            for (int64_t e = lo; e < hi; ++e) {
                const double *y = Y + indices[e] * k;
                double d = w[e] * dot4(y, p, k);
                for (int64_t a = 0; a < k; ++a) Ap[a] += d * y[a];
            }
            double pAp = 0.0;
            for (int64_t a = 0; a < k; ++a) pAp += p[a] * Ap[a];
            double alpha = (pAp > 0.0) ? rs / pAp : 0.0;
            double rs_new = 0.0;
            for (int64_t a = 0; a < k; ++a) {
                x[a] += alpha * p[a];
                r[a] -= alpha * Ap[a];
                rs_new += r[a] * r[a];
            }
            double beta = (rs > 0.0) ? rs_new / rs : 0.0;
            for (int64_t a = 0; a < k; ++a) p[a] = r[a] + beta * p[a];
            rs = rs_new;
        }
        if (terms != NULL) {
            for (int64_t e = lo; e < hi; ++e) {
                double s = dot4(Y + indices[e] * k, x, k);
                total += c[e] * (1.0 - s) * (1.0 - s) - s * s;
            }
        }
    }
    if (terms != NULL) *terms = total;
}
