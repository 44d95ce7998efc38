/* One sweep of hierarchical alternating least squares (HALS) for NMF (see
 * mathlearn/decomposition/_nmf.py).
 *
 * For min_{W >= 0} 0.5 ||X - W H||_F^2 with G = H H^T (k x k) and B = X H^T (n x k) given,
 * the components t = 0..k-1 are updated in turn, each exactly (the problem in column t
 * alone is separable over the rows and has the closed-form solution):
 *
 *     g_i = sum_r G[t, r] W[i, r] - B[i, t]               (the gradient in W[i, t])
 *     W[i, t] <- max(W[i, t] - g_i / G[t, t], 0)          (skipped when G[t, t] = 0)
 *
 * with the columns already updated in this sweep used for the later ones (Gauss-Seidel).
 * Returns the sum over all entries of the projected gradient |pg| (pg = min(g, 0) where
 * W[i, t] = 0, else g) before each update: the stopping measure. W is n x k, row-major. */

#include <math.h>
#include <stdint.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int nmf_abi_version(void) { return 1; }


ML_EXPORT double nmf_hals_sweep(int64_t n, int64_t k, double *W, const double *G,
                                const double *B) {
    /* Column t outer, rows inner: the rows' updates are independent, so the processor
     * overlaps them (row by row, each update would wait for the previous one). */
    double violation = 0.0;
    for (int64_t t = 0; t < k; ++t) {
        const double *g_t = G + t * k;
        double hess = g_t[t];
        for (int64_t i = 0; i < n; ++i) {
            double *w = W + i * k;
            double grad = -B[i * k + t];
            for (int64_t r = 0; r < k; ++r) grad += g_t[r] * w[r];
            double pg = (w[t] == 0.0 && grad > 0.0) ? 0.0 : grad;
            violation += fabs(pg);
            if (hess != 0.0) {
                double v = w[t] - grad / hess;
                w[t] = v > 0.0 ? v : 0.0;
            }
        }
    }
    return violation;
}

/* Solve G[idx, idx] z = c[idx] for the first p entries of idx by Cholesky (L: k x k work). */
static void solve_passive(int64_t k, const double *G, const double *c, const int64_t *idx,
                          int64_t p, double *L, double *z) {
    for (int64_t a = 0; a < p; ++a) {
        for (int64_t b = 0; b <= a; ++b) {
            double v = G[idx[a] * k + idx[b]];
            for (int64_t q = 0; q < b; ++q) v -= L[a * k + q] * L[b * k + q];
            if (a == b)
                L[a * k + a] = sqrt(v > 1e-300 ? v : 1e-300);
            else
                L[a * k + b] = v / L[b * k + b];
        }
    }
    for (int64_t a = 0; a < p; ++a) { /* L y = c */
        double v = c[idx[a]];
        for (int64_t q = 0; q < a; ++q) v -= L[a * k + q] * z[q];
        z[a] = v / L[a * k + a];
    }
    for (int64_t a = p - 1; a >= 0; --a) { /* L^T z = y */
        double v = z[a];
        for (int64_t q = a + 1; q < p; ++q) v -= L[q * k + a] * z[q];
        z[a] = v / L[a * k + a];
    }
}

/* Lawson-Hanson active set on the normal equations (Bro & De Jong's fast NNLS):
 * x = argmin_{x >= 0} 0.5 x^T G x - c^T x for a positive definite G (k x k). With
 * G = H H^T and c = H y this is argmin_{x >= 0} ||y - H^T x||. Returns 1 when the active
 * set settled within maxiter inner steps, else 0. work: k^2 + 3k doubles, iwork: 2k. */
static int fnnls_row(int64_t k, const double *G, const double *c, int64_t maxiter, double *x,
                     int warm, double *work, int64_t *iwork) {
    double *L = work, *z = work + k * k, *grad = z + k;
    int64_t *passive = iwork, *idx = iwork + k;
    double cmax = 1e-300;
    int start_inner = 0;
    for (int64_t t = 0; t < k; ++t) {
        if (!warm || !(x[t] > 0.0)) x[t] = 0.0;
        passive[t] = x[t] > 0.0;
        start_inner |= (int)passive[t];
        grad[t] = c[t];
        double a = fabs(c[t]);
        if (a > cmax) cmax = a;
    }
    /* Dual feasibility up to rounding in c - G x (both terms of the size of max|c|). */
    double tol = 10.0 * (double)k * 2.220446049250313e-16 * cmax;
    int64_t steps = 0;
    for (;;) {
        if (!start_inner) {
            int64_t j = -1;
            double best = tol;
            for (int64_t t = 0; t < k; ++t)
                if (!passive[t] && grad[t] > best) {
                    best = grad[t];
                    j = t;
                }
            if (j < 0) return 1;
            passive[j] = 1;
        }
        /* A warm start (x > 0 exactly on the passive set, a feasible point) enters here
         * directly, with its positive entries as the passive set. */
        start_inner = 0;
        for (;;) {
            if (++steps > maxiter) return 0;
            int64_t p = 0;
            for (int64_t t = 0; t < k; ++t)
                if (passive[t]) idx[p++] = t;
            solve_passive(k, G, c, idx, p, L, z);
            int feasible = 1;
            for (int64_t q = 0; q < p; ++q)
                if (z[q] <= 0.0) feasible = 0;
            if (feasible) {
                for (int64_t t = 0; t < k; ++t) x[t] = 0.0;
                for (int64_t q = 0; q < p; ++q) x[idx[q]] = z[q];
                break;
            }
            /* Move towards z until the first passive coordinate reaches zero; drop it. */
            double alpha = INFINITY;
            for (int64_t q = 0; q < p; ++q)
                if (z[q] <= 0.0) {
                    int64_t t = idx[q];
                    double a = x[t] / (x[t] - z[q]);
                    if (a < alpha) alpha = a;
                }
            double xmax = 0.0;
            for (int64_t q = 0; q < p; ++q) {
                int64_t t = idx[q];
                x[t] += alpha * (z[q] - x[t]);
                if (x[t] > xmax) xmax = x[t];
            }
            for (int64_t q = 0; q < p; ++q) {
                int64_t t = idx[q];
                if (x[t] <= 1e-14 * xmax) {
                    x[t] = 0.0;
                    passive[t] = 0;
                }
            }
        }
        for (int64_t t = 0; t < k; ++t) {
            double v = c[t];
            for (int64_t q = 0; q < k; ++q) v -= G[t * k + q] * x[q];
            grad[t] = v;
        }
    }
}

/* Row i of X (n x k, row-major) solves the problem with c = C[i]; ok[i] says whether its
 * active set settled (the caller re-solves the others another way). With warm != 0, X holds
 * a non-negative starting point on entry (e.g. the weights of the last iteration), whose
 * positive entries are the first passive set: near the solution, one solve per row. */
ML_EXPORT void nmf_nnls_rows(int64_t n, int64_t k, const double *G, const double *C,
                             int64_t maxiter, double *X, int8_t *ok, int64_t warm,
                             double *work, int64_t *iwork) {
    for (int64_t i = 0; i < n; ++i)
        ok[i] = (int8_t)fnnls_row(k, G, C + i * k, maxiter, X + i * k, (int)warm, work, iwork);
}
