/* One sweep of hierarchical alternating least squares (HALS) for NMF (see
 * mathlearn/decomposition/_nmf.py).
 *
 * For min_{W >= 0} 0.5 ||X - W H||_F^2 with G = H H^T (k x k) and B = X H^T (m x k) given,
 * the components t = 0..k-1 are updated in turn, each exactly (the problem in column t
 * alone is separable over the rows and has the closed-form solution):
 *
 *     g_i = sum_r G[t, r] W[i, r] - B[i, t]               (the gradient in W[i, t])
 *     W[i, t] <- max(W[i, t] - g_i / G[t, t], 0)          (skipped when G[t, t] = 0)
 *
 * with the columns already updated in this sweep used for the later ones (Gauss-Seidel).
 * Returns the sum over all entries of the projected gradient |pg| (pg = min(g, 0) where
 * W[i, t] = 0, else g) before each update: the stopping measure.
 *
 * W is held component-major, as its transpose F = W^T: entry (i, t) at F[t * ldf + i]. B is
 * read at B[i * bi + t * bt], so that B itself (row-major: bi = k, bt = 1) and its transpose
 * (row-major: bi = 1, bt = its row length) are both read where their product left them.
 *
 * Each row's updates read that row alone (and G), so the rows are taken in blocks of BLOCK:
 * within a block, every component in turn, each gradient summed over r in order for all the
 * block's rows at once. The inner loops then run over contiguous, independent entries (the
 * compiler vectorises them), where a row at a time would wait on a chain of k dependent
 * additions. Each gradient is still summed in the same order, so the updates are those of a
 * row at a time; only the stopping measure is added up in another order. */

#include <math.h>
#include <stdint.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int nmf_abi_version(void) { return 2; }


#define BLOCK 256

ML_EXPORT double nmf_hals_sweep(int64_t m, int64_t k, double *F, int64_t ldf, const double *G,
                                const double *B, int64_t bi, int64_t bt) {
    double violation = 0.0;
    double grad[BLOCK];
    for (int64_t i0 = 0; i0 < m; i0 += BLOCK) {
        int64_t len = m - i0 < BLOCK ? m - i0 : BLOCK;
        for (int64_t t = 0; t < k; ++t) {
            const double *g_t = G + t * k;
            const double *b_t = B + t * bt + i0 * bi;
            double hess = g_t[t];
            for (int64_t i = 0; i < len; ++i) grad[i] = -b_t[i * bi];
            for (int64_t r = 0; r < k; ++r) {
                const double g = g_t[r];
                const double *f_r = F + r * ldf + i0;
                for (int64_t i = 0; i < len; ++i) grad[i] += g * f_r[i];
            }
            double *f_t = F + t * ldf + i0;
            for (int64_t i = 0; i < len; ++i) {
                double w = f_t[i];
                double pg = (w == 0.0 && grad[i] > 0.0) ? 0.0 : grad[i];
                violation += fabs(pg);
                if (hess != 0.0) {
                    double v = w - grad[i] / hess;
                    f_t[i] = v > 0.0 ? v : 0.0;
                }
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
