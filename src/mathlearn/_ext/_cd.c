/* Cyclic coordinate descent for the lasso (see mathlearn/linear_model/_coordinate_descent.py).
 *
 * Problem (unscaled): P(w) = (1/2) ||y - X w||^2 + a ||w||_1 with a = N alpha, optionally
 * with w >= 0. Its dual is D(theta) = (1/2) ||y||^2 - (a^2/2) ||theta - y/a||^2 subject to
 * |x_j^T theta| <= 1 (x_j^T theta <= 1 with w >= 0). At the dual point
 * theta = c r / a, c = min(1, a / ||X^T r||_inf), r = y - X w, the duality gap is
 *
 *     G = (1/2)(1 + c^2) ||r||^2 + a ||w||_1 - c r^T y.
 *
 * A coordinate step sets w_j = S(x_j^T r + ||x_j||^2 w_j, a) / ||x_j||^2 (soft
 * thresholding). Sweeps stop when the duality gap is below tol ||y||^2; it is evaluated when
 * the largest weight change of a sweep falls below tol times the largest weight, and at the
 * last sweep.
 *
 * cd_residual keeps the residual r (O(N) per coordinate) and screens features by the gap
 * safe rule of Fercoq, Gramfort & Salmon (2015): D is a^2-strongly concave, so the dual
 * optimum lies within ||theta - theta*|| <= sqrt(2 G) / a of any feasible theta, and a
 * feature with c |x_j^T r| + sqrt(2 G) ||x_j|| < a has |x_j^T theta*| < 1, hence w_j* = 0: it
 * is set to 0 and left out of later sweeps. The gap of the problem restricted to the kept
 * features certifies the full problem as well (both have the same optimum); convergence is
 * nevertheless confirmed by the gap over all features, and should that fail (a feature
 * dropped by rounding) every feature is swept again. Optionally (along a path) sweeps over
 * the working set of nonzero weights run between full sweeps until those settle; max_iter
 * then bounds the work, a working-set sweep counting as its share of a full sweep.
 *
 * The elastic net's ridge term (b/2) ||w||^2 (b >= 0; 0 for the lasso) is the lasso on X
 * augmented by the rows sqrt(b) I with targets 0. cd_residual solves that lasso without
 * forming the rows: the caller passes the augmented squared norms ||x_j||^2 + b, the
 * augmented inner product is x_j . r - b w_j and the augmented residual's squared norm is
 * ||r||^2 + b ||w||^2 (its extra part is -sqrt(b) w).
 *
 * cd_gram sweeps on the Gram matrix G = X^T X and q = X^T r (O(D) per coordinate, for
 * N >= D); its gap uses ||r||^2 = y^T y - w^T X^T y - w^T q, whose rounding error is bounded
 * and compared with the tolerance: where the tolerance is within a factor 1000 of that
 * error the gap is recomputed from the residual itself when X is given. */

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

/* MSVC spells C99's restrict __restrict unless compiling as C11 or later. */
#if defined(_MSC_VER) && !defined(__clang__) && \
    (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L)
#define restrict __restrict
#endif

/* With GCC on x86-64 Linux, each exported solver is also compiled for AVX2 (four doubles per
 * vector instead of SSE2's two; the static helpers are inlined into each version) and the
 * loader picks the version the processor supports at the first call. Both round alike: the
 * order of every floating-point operation is fixed in the source (dot16), ISO C mode
 * (-std=c99) turns off contraction into fused multiply-adds, and the "avx2" target does not
 * enable FMA instructions anyway. Other compilers and processors get the baseline version;
 * so does a build with -DML_NO_CLONES (the test of that claim compiles one version at a time). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(ML_NO_CLONES)
#define ML_KERNEL ML_EXPORT __attribute__((target_clones("avx2", "default")))
#else
#define ML_KERNEL ML_EXPORT
#endif

/* Every helper below is inlined into each exported version, so that each is compiled for
 * that version's target: a helper left out of line (GCC does so with a large one called from
 * two exports, as residual_cd is) would run the baseline build from inside the AVX2 version. */
#if defined(__GNUC__)
#define ML_INLINE static inline __attribute__((always_inline))
#else
#define ML_INLINE static inline
#endif

#define EPS 2.220446049250313e-16
/* sweeps between two screenings of cd_residual; after a screening that removed no feature
 * the interval doubles (up to SCREEN_MAX), after one that removed some it starts again */
#define SCREEN_EVERY 10
#define SCREEN_MAX 1280

ML_EXPORT int cd_abi_version(void) { return 3; }

/* a . b with sixteen partial sums, s_k over the indices i = k (mod 16) of the unrolled part
 * (the remainder goes to s_0), combined pairwise in a fixed order. The order of every
 * addition is written here, so the compiler may keep the partial sums in SIMD registers (two
 * or four doubles per vector, enough independent sums to hide the adder's latency) without
 * reassociating anything: the result is the same in every build and on every CPU. */
ML_INLINE double dot16(const double *restrict a, const double *restrict b, int64_t n) {
    double s[16] = {0.0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; ++k) s[k] += a[i + k] * b[i + k];
    for (; i < n; ++i) s[0] += a[i] * b[i];
    for (int k = 0; k < 8; ++k) s[k] += s[k + 8];
    for (int k = 0; k < 4; ++k) s[k] += s[k + 4];
    return (s[0] + s[2]) + (s[1] + s[3]);
}

/* r += c x, then z . r with the updated r: the operations of axpy followed by dot16, in
 * the same order, in one pass over r */
ML_INLINE double axpy_dot16(double *restrict r, const double *restrict x, double c,
                                const double *restrict z, int64_t n) {
    double s[16] = {0.0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; ++k) {
            double ri = r[i + k] + c * x[i + k];
            r[i + k] = ri;
            s[k] += z[i + k] * ri;
        }
    for (; i < n; ++i) {
        double ri = r[i] + c * x[i];
        r[i] = ri;
        s[0] += z[i] * ri;
    }
    for (int k = 0; k < 8; ++k) s[k] += s[k + 8];
    for (int k = 0; k < 4; ++k) s[k] += s[k + 4];
    return (s[0] + s[2]) + (s[1] + s[3]);
}

/* r += c x (element by element: the same at any vector width) */
ML_INLINE void axpy(double *restrict r, const double *restrict x, double c, int64_t n) {
    for (int64_t i = 0; i < n; ++i) r[i] += c * x[i];
}

ML_INLINE double gap_value(double r2, double ry, double l1, double dual_norm, double a) {
    double c = 1.0, gap = r2;
    if (dual_norm > a) {
        c = a / dual_norm;
        gap = 0.5 * (r2 + r2 * c * c);
    }
    return gap + a * l1 - c * ry;
}

ML_INLINE double soft(double rho, double a, int positive) {
    if (rho > a) return rho - a;
    if (rho < -a && !positive) return rho + a;
    return 0.0;
}

/* r = y - X w from scratch (X column-major, n x m), over the nonzero weights only */
ML_INLINE void residual(int64_t n, int64_t m, const double *X, const double *y,
                            const double *w, double *r) {
    memcpy(r, y, (size_t)n * sizeof(double));
    for (int64_t j = 0; j < m; ++j)
        if (w[j] != 0.0) axpy(r, X + j * n, -w[j], n);
}

/* Gap at r over the features idx[0..k) (q[t] = x_idx[t] . r - b w_idx[t], the augmented
 * inner product); l1 over all weights; the augmented residual adds b ||w||^2 to ||r||^2. */
ML_INLINE double gap_over(int64_t n, int64_t m, const double *X, const double *y,
                              const double *r, const double *w, const int64_t *idx, int64_t k,
                              double a, double b, int positive, double *q,
                              double *dual_norm_out) {
    double dual_norm = 0.0, l1 = 0.0, w2 = 0.0;
    for (int64_t t = 0; t < k; ++t) {
        double s = dot16(X + idx[t] * n, r, n) - b * w[idx[t]];
        q[t] = s;
        double v = positive ? s : fabs(s);
        if (v > dual_norm) dual_norm = v;
    }
    for (int64_t j = 0; j < m; ++j) {
        l1 += fabs(w[j]);
        w2 += w[j] * w[j];
    }
    *dual_norm_out = dual_norm;
    return gap_value(dot16(r, r, n) + b * w2, dot16(r, y, n), l1, dual_norm, a);
}

/* One cyclic sweep over the features idx[0..k); returns the largest weight change and sets
 * *w_max to the largest weight magnitude. */
ML_INLINE double sweep(int64_t n, const double *X, const double *norms2, double *w,
                           double *r, const int64_t *idx, int64_t k, double a, double b,
                           int positive, double *w_max) {
    double d_w_max = 0.0, top = 0.0, pending = 0.0;
    /* the update of r by the previous feature, fused with the next dot product */
    const double *x_pending = NULL;
    for (int64_t t = 0; t < k; ++t) {
        int64_t j = idx[t];
        const double *xj = X + j * n;
        double wj = w[j];
        double xr = x_pending ? axpy_dot16(r, x_pending, -pending, xj, n) : dot16(xj, r, n);
        x_pending = NULL;
        double rho = (xr - b * wj) + norms2[j] * wj;
        double nw = soft(rho, a, positive) / norms2[j];
        double delta = nw - wj;
        if (delta != 0.0) {
            x_pending = xj;
            pending = delta;
            w[j] = nw;
        }
        if (fabs(delta) > d_w_max) d_w_max = fabs(delta);
        if (fabs(nw) > top) top = fabs(nw);
    }
    if (x_pending) axpy(r, x_pending, -pending, n);
    *w_max = top;
    return d_w_max;
}

/* active holds 2 m integers: the kept features, then the working set (nonzero weights).
 * screen: bit 0 screens features, bit 1 sweeps the working set between full sweeps (for
 * warm starts along a path, where the support changes little). */
ML_INLINE int64_t residual_cd(int64_t n, int64_t m, const double *X, const double *y,
                                  const double *norms2, double *w, double a, double b,
                                  int64_t max_iter, double tol, int positive, int screen,
                                  double *r, double *q, int64_t *active, double *gap_out) {
    double yty = dot16(y, y, n);
    double tol_abs = tol * (yty > 1e-300 ? yty : 1e-300);
    int64_t n_all = 0, n_active, n_iter = 0, since = 0, n_support = 0, every = SCREEN_EVERY;
    int64_t *support = active + m;
    int inner = 0;
    for (int64_t j = 0; j < m; ++j)
        if (norms2[j] > 0.0) active[n_all++] = j;
    n_active = n_all;
    residual(n, m, X, y, w, r);
    double gap = INFINITY, dual_norm;
    int do_check = 1; /* the warm start may already be optimal; first screening */
    /* max_iter bounds the work: a working-set sweep counts as its share of a full sweep */
    double used = 0.0;
    int first = 1, last = 0;
    while (!last) {
        if (!first) {
            double w_max, d_w_max;
            if (inner && n_active > 0) {
                /* working-set sweeps over the nonzero weights until they settle; then a
                 * sweep over every kept feature */
                d_w_max =
                    sweep(n, X, norms2, w, r, support, n_support, a, b, positive, &w_max);
                used += (double)n_support / (double)n_active;
                if (w_max == 0.0 || d_w_max / w_max < tol) inner = 0;
                if (used + 1.0 < (double)max_iter) continue;
                inner = 0;
            }
            d_w_max = sweep(n, X, norms2, w, r, active, n_active, a, b, positive, &w_max);
            used += 1.0;
            ++since;
            last = used >= (double)max_iter;
            int stop_test = w_max == 0.0 || d_w_max / w_max < tol || last;
            do_check = stop_test || (screen && since >= every);
            if (!stop_test && screen) {
                n_support = 0;
                for (int64_t t = 0; t < n_active; ++t)
                    if (w[active[t]] != 0.0) support[n_support++] = active[t];
                inner = (screen & 2) && n_support > 0 && 2 * n_support <= n_active;
            }
        }
        first = 0;
        if (!do_check) continue;
        since = 0;
        do_check = 0;
        /* from scratch, so that rounding drift cannot fake convergence */
        residual(n, m, X, y, w, r);
        gap = gap_over(n, m, X, y, r, w, active, n_active, a, b, positive, q, &dual_norm);
        if (gap < tol_abs) {
            if (n_active == n_all) break;
            /* the gap over every feature */
            n_active = 0;
            for (int64_t j = 0; j < m; ++j)
                if (norms2[j] > 0.0) active[n_active++] = j;
            gap = gap_over(n, m, X, y, r, w, active, n_active, a, b, positive, q, &dual_norm);
            if (gap < tol_abs) break;
            continue; /* a feature was dropped by rounding: sweep them all again */
        }
        if (!screen || !(gap >= 0.0) || last) continue;
        /* gap safe screening: keep j unless c |q_j| + sqrt(2 G) ||x_j|| < a, with G
         * enlarged by its rounding error and a small relative margin on the test */
        double c = dual_norm > a ? a / dual_norm : 1.0;
        double radius = sqrt(2.0 * (gap + 64.0 * EPS * yty));
        int64_t kept = 0;
        for (int64_t t = 0; t < n_active; ++t) {
            int64_t j = active[t];
            double v = positive ? q[t] : fabs(q[t]);
            if (c * v + radius * sqrt(norms2[j]) >= a * (1.0 - 1e-9)) {
                active[kept++] = j;
            } else if (w[j] != 0.0) {
                axpy(r, X + j * n, w[j], n);
                w[j] = 0.0;
            }
        }
        /* a gap evaluation costs about a sweep: while the gap is too large for the rule to
         * remove anything, evaluate it less and less often */
        if (kept == n_active)
            every = every < SCREEN_MAX ? 2 * every : SCREEN_MAX;
        else
            every = SCREEN_EVERY;
        n_active = kept;
    }
    if (n_active < n_all && !(gap < tol_abs)) {
        /* not converged: report the gap over every feature */
        n_active = 0;
        for (int64_t j = 0; j < m; ++j)
            if (norms2[j] > 0.0) active[n_active++] = j;
        residual(n, m, X, y, w, r);
        gap = gap_over(n, m, X, y, r, w, active, n_active, a, b, positive, q, &dual_norm);
    }
    *gap_out = gap;
    n_iter = (int64_t)ceil(used);
    return n_iter < max_iter ? n_iter : max_iter;
}

/* The lasso (norms2 = ||x_j||^2). */
ML_KERNEL int64_t cd_residual(int64_t n, int64_t m, const double *X, const double *y,
                              const double *norms2, double *w, double a, int64_t max_iter,
                              double tol, int positive, int screen, double *r, double *q,
                              int64_t *active, double *gap_out) {
    return residual_cd(n, m, X, y, norms2, w, a, 0.0, max_iter, tol, positive, screen, r, q,
                       active, gap_out);
}

/* The elastic net: the lasso plus (b/2) ||w||^2, b > 0 (norms2 = ||x_j||^2 + b). */
ML_KERNEL int64_t cd_residual_enet(int64_t n, int64_t m, const double *X, const double *y,
                                   const double *norms2, double *w, double a, double b,
                                   int64_t max_iter, double tol, int positive, int screen,
                                   double *r, double *q, int64_t *active, double *gap_out) {
    return residual_cd(n, m, X, y, norms2, w, a, b, max_iter, tol, positive, screen, r, q,
                       active, gap_out);
}

/* q = Xty - G w, and qa[j] = |Xty_j| + sum_k |G_jk w_k| (the scale of q_j's rounding) */
ML_INLINE void gram_q(int64_t m, const double *G, const double *Xty, const double *w,
                          double *q, double *qa) {
    for (int64_t j = 0; j < m; ++j) {
        q[j] = Xty[j];
        qa[j] = fabs(Xty[j]);
    }
    for (int64_t k = 0; k < m; ++k) {
        double wk = w[k];
        if (wk == 0.0) continue;
        const double *Gk = G + k * m; /* column k = row k */
        for (int64_t j = 0; j < m; ++j) {
            q[j] -= Gk[j] * wk;
            qa[j] += fabs(Gk[j] * wk);
        }
    }
}

ML_KERNEL int64_t cd_gram(int64_t m, const double *G, const double *Xty, double yty, double *w,
                          double a, int64_t max_iter, double tol, int positive, int64_t n,
                          const double *X, const double *y, double *q, double *qa, double *r,
                          double *gap_out) {
    double tol_abs = tol * (yty > 1e-300 ? yty : 1e-300);
    double gap = tol_abs + 1.0;
    int64_t n_iter = 0;
    gram_q(m, G, Xty, w, q, qa);
    for (int64_t it = 0; it < max_iter; ++it) {
        n_iter = it + 1;
        double w_max = 0.0, d_w_max = 0.0;
        for (int64_t j = 0; j < m; ++j) {
            const double *Gj = G + j * m;
            double gjj = Gj[j];
            if (gjj == 0.0) continue;
            double wj = w[j];
            double nw = soft(q[j] + gjj * wj, a, positive) / gjj;
            double delta = nw - wj;
            if (delta != 0.0) {
                axpy(q, Gj, -delta, m);
                w[j] = nw;
            }
            if (fabs(delta) > d_w_max) d_w_max = fabs(delta);
            if (fabs(nw) > w_max) w_max = fabs(nw);
        }
        if (!(w_max == 0.0 || d_w_max / w_max < tol || it == max_iter - 1)) continue;
        gram_q(m, G, Xty, w, q, qa);
        double wxty = 0.0, wq = 0.0, l1 = 0.0, dual_norm = 0.0, scale = yty;
        for (int64_t j = 0; j < m; ++j) {
            wxty += w[j] * Xty[j];
            wq += w[j] * q[j];
            l1 += fabs(w[j]);
            double v = positive ? q[j] : fabs(q[j]);
            if (v > dual_norm) dual_norm = v;
            scale += fabs(w[j]) * (fabs(Xty[j]) + qa[j]);
        }
        double r2 = yty - wxty - wq;
        gap = gap_value(r2 > 0.0 ? r2 : 0.0, yty - wxty, l1, dual_norm, a);
        /* rounding error of r2 and r^T y: about (m + 4) eps scale */
        double err = (double)(m + 4) * EPS * scale;
        if (X != NULL && gap < tol_abs && tol_abs < 1e3 * err) {
            residual(n, m, X, y, w, r);
            dual_norm = 0.0;
            for (int64_t j = 0; j < m; ++j) {
                double s = dot16(X + j * n, r, n);
                double v = positive ? s : fabs(s);
                if (v > dual_norm) dual_norm = v;
            }
            gap = gap_value(dot16(r, r, n), dot16(r, y, n), l1, dual_norm, a);
        }
        if (gap < tol_abs) break;
    }
    *gap_out = gap;
    return n_iter;
}
