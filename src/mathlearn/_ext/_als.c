/* Per-row ridge solves of alternating least squares (see mathlearn/recommender/_base.py).
 *
 * For every row u of a CSR pattern (entries e in [indptr[u], indptr[u+1]), columns
 * indices[e], 32-bit like every column index of the package's rating patterns), with
 * v_e = V[indices[e]] (k numbers):
 *
 *     G_u = base + sum_e w_e v_e v_e^T + reg[u] I,      b_u = sum_e coef[e] v_e,
 *
 * and X[u] solves G_u x = b_u by Cholesky (G_u = L L^T, then L y = b, L^T x = y). Rows with
 * no entry and no base term are left at 0. With t given, *sse receives
 * sum_u sum_e (t[e] - v_e . X[u])^2. Only lower triangles are formed.
 *
 * The caller may pass an optimised BLAS's dsyrk (Fortran interface, 32-bit integers: the one
 * SciPy exports in scipy.linalg.cython_blas): each row's sum_e w_e v_e v_e^T is then one
 * rank-n update on its gathered rows sqrt(w_e) v_e (rows with a negative weight, or fewer
 * than SYRK_MIN entries, keep the portable loop below). The BLAS picks its SIMD kernels for
 * the processor at run time, which portable flags cannot. */

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int als_abi_version(void) { return 12; }

/* C = beta C + alpha A A^T (trans "N"), column-major, on the triangle uplo. */
typedef void (*dsyrk_fn)(char *uplo, char *trans, int *n, int *k, double *alpha, double *a,
                         int *lda, double *beta, double *c, int *ldc);

/* Rows with fewer entries go through the portable loop (the call's overhead is not paid
 * back). */
#define SYRK_MIN 8

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

/* y = alpha op(A) x + beta y, column-major A (m x n), op "N" or "T". */
typedef void (*dgemv_fn)(char *trans, int *m, int *n, double *alpha, double *a, int *lda,
                         double *x, int *incx, double *beta, double *y, int *incy);

/* How many entries ahead gather() asks for the factor row it will copy (where the compiler
 * offers a prefetch hint): on large tables each row read is otherwise a cache miss waited
 * for in turn. */
#define PREFETCH_AHEAD 8

/* The k x n column-major matrix whose columns are Y[indices[e]], e in [lo, hi): the rows'
 * factors gathered into A (row-major n x k). Entries up to end (the pattern's last) may be
 * prefetched, so the next row's first reads are under way too. */
static void gather(const double *Y, const int32_t *indices, int64_t lo, int64_t hi, int64_t end,
                   int64_t k, double *A) {
    for (int64_t e = lo; e < hi; ++e) {
#if defined(__GNUC__)
        if (e + PREFETCH_AHEAD < end) {
            const char *next = (const char *)(Y + indices[e + PREFETCH_AHEAD] * k);
            for (int64_t b = 0; b < k * (int64_t)sizeof(double); b += 64)
                __builtin_prefetch(next + b);
        }
#else
        (void)end;
#endif
        memcpy(A + (e - lo) * k, Y + indices[e] * k, (size_t)k * sizeof(double));
    }
}

/* out = A^T v (trans "N": length k) or out = A v (trans "T": length n) for the gathered A
 * (column-major k x n). */
static void gemv_gathered(dgemv_fn gemv, char trans, const double *A, int64_t k, int64_t n,
                          const double *v, double *out) {
    int m = (int)k, nn = (int)n, one = 1;
    double a1 = 1.0, b0 = 0.0;
    gemv(&trans, &m, &nn, &a1, (double *)A, &m, (double *)v, &one, &b0, out, &one);
}

/* Adds sum_e w_e v_e v_e^T (lower triangle of the row-major G, which is the upper one of
 * the column-major G that the BLAS sees) and sets rhs = sum_e coef[e] v_e, through dsyrk on
 * the gathered rows A[e] = sqrt(w_e) v_e (A row-major n x k: column-major k x n, so A^T A is
 * the "N" product) and, without weights, dgemv. Returns 0 when a weight is negative
 * (nothing is added then). */
static int gram_syrk(dsyrk_fn syrk, dgemv_fn gemv, int64_t lo, int64_t hi, int64_t end,
                     int64_t k, const int32_t *indices, const double *V, const double *coef,
                     const double *w, double *G, double *rhs, double *A) {
    if (w != NULL) {
        for (int64_t e = lo; e < hi; ++e)
            if (!(w[e] >= 0.0)) return 0;
        for (int64_t e = lo; e < hi; ++e) {
            const double *v = V + indices[e] * k;
            double *a = A + (e - lo) * k, s = sqrt(w[e]), ce = coef[e];
            for (int64_t c = 0; c < k; ++c) {
                a[c] = s * v[c];
                rhs[c] += ce * v[c];
            }
        }
    } else {
        gather(V, indices, lo, hi, end, k, A);
        gemv_gathered(gemv, 'N', A, k, hi - lo, coef + lo, rhs);
    }
    char uplo = 'U', trans = 'N';
    int n = (int)k, m = (int)(hi - lo), ld = (int)k;
    double one = 1.0;
    syrk(&uplo, &trans, &n, &m, &one, A, &ld, &one, G, &ld);
    return 1;
}

/* Solves G x = rhs for the lower triangle of the row-major G (overwritten by its Cholesky
 * factor L, G = L L^T; Crout order), through y = L^{-1} rhs; inv holds the reciprocals of
 * L's diagonal (one division per column instead of one per element). Returns 0 when G is
 * not numerically positive definite. */
static int cholesky_solve(double *G, const double *rhs, double *y, double *x, double *inv,
                          int64_t k) {
    for (int64_t j = 0; j < k; ++j) {
        double *Lj = G + j * k;
        double s = Lj[j] - dot4(Lj, Lj, j);
        if (!(s > 0.0)) return 0;
        double d = sqrt(s);
        Lj[j] = d;
        inv[j] = 1.0 / d;
        for (int64_t i = j + 1; i < k; ++i) {
            double *Li = G + i * k;
            Li[j] = (Li[j] - dot4(Li, Lj, j)) * inv[j];
        }
    }
    for (int64_t i = 0; i < k; ++i) y[i] = (rhs[i] - dot4(G + i * k, y, i)) * inv[i];
    for (int64_t i = k - 1; i >= 0; --i) {
        double r = y[i];
        for (int64_t p = i + 1; p < k; ++p) r -= G[p * k + i] * x[p];
        x[i] = r * inv[i];
    }
    return 1;
}

/* Returns -1, or the first row whose matrix is not numerically positive definite (its
 * solution is then left unset). work holds k^2 + 3 k doubles, plus (k + 1) times the
 * largest row's number of entries when syrk and gemv are given (else both are NULL). */
ML_EXPORT int64_t als_ridge_rows(int64_t n_rows, int64_t k, const int64_t *indptr,
                                 const int32_t *indices, const double *V, const double *coef,
                                 const double *w, const double *base, const double *reg,
                                 const double *t, double *X, double *sse, double *work,
                                 dsyrk_fn syrk, dgemv_fn gemv) {
    double *G = work, *y = work + k * k, *rhs = y + k, *inv = rhs + k, *A = inv + k;
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
        int gathered = syrk != NULL && hi - lo >= SYRK_MIN &&
                       gram_syrk(syrk, gemv, lo, hi, indptr[n_rows], k, indices, V, coef, w,
                                 G, rhs, A);
        if (gathered) e = hi;
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
        if (!cholesky_solve(G, rhs, y, x, inv, k)) return u;
        if (t != NULL && gathered && w == NULL) {
            /* The fitted values A x by the BLAS (A holds the unweighted rows). */
            double *s = A + (hi - lo) * k;
            gemv_gathered(gemv, 'T', A, k, hi - lo, x, s);
            for (int64_t e = lo; e < hi; ++e) total += (t[e] - s[e - lo]) * (t[e] - s[e - lo]);
        } else if (t != NULL) {
            for (int64_t e = lo; e < hi; ++e) {
                double r = t[e] - dot4(V + indices[e] * k, x, k);
                total += r * r;
            }
        }
    }
    *sse = total;
    return -1;
}

/* out = (B + d I) v, with B = 0 where base is NULL. */
/* Rank from which the k x k product with base goes to the BLAS's dgemv (its SIMD kernels
 * for the processor) rather than the portable loop. */
#define SYMV_BLAS_MIN 16

static void shifted_symv(dgemv_fn gemv, const double *B, double d, const double *v, double *out,
                         int64_t k) {
    if (B != NULL && gemv != NULL && k >= SYMV_BLAS_MIN) {
        /* B is symmetric: its row-major layout is its column-major one. */
        char tr = 'N';
        int m = (int)k, one = 1;
        double a1 = 1.0, b0 = 0.0;
        gemv(&tr, &m, &m, &a1, (double *)B, &m, (double *)v, &one, &b0, out, &one);
    } else if (B != NULL) {
        symv(B, v, out, k);
    } else {
        for (int64_t a = 0; a < k; ++a) out[a] = d * v[a];
        return;
    }
    if (d != 0.0)
        for (int64_t a = 0; a < k; ++a) out[a] += d * v[a];
}

/* Four entries of a row at a time in the portable loop of rows_product: the four dot
 * products y_j . v run as independent chains (with SSE2, two two-lane partial sums per
 * entry, v loaded once for the four), then out += sum_j f_j y_j reads and writes out once
 * for the four. One entry at a time, a dot product of k terms is a chain of dependent
 * additions and the processor waits on each. */
#if defined(__SSE2__) || defined(_M_X64) || defined(_M_AMD64)
#include <emmintrin.h>

static void dot_rows4(const double *const *y, const double *v, int64_t k, double *d) {
    __m128d a0 = _mm_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
    __m128d b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    int64_t a = 0;
    for (; a + 4 <= k; a += 4) {
        __m128d v0 = _mm_loadu_pd(v + a), v1 = _mm_loadu_pd(v + a + 2);
        a0 = _mm_add_pd(a0, _mm_mul_pd(_mm_loadu_pd(y[0] + a), v0));
        b0 = _mm_add_pd(b0, _mm_mul_pd(_mm_loadu_pd(y[0] + a + 2), v1));
        a1 = _mm_add_pd(a1, _mm_mul_pd(_mm_loadu_pd(y[1] + a), v0));
        b1 = _mm_add_pd(b1, _mm_mul_pd(_mm_loadu_pd(y[1] + a + 2), v1));
        a2 = _mm_add_pd(a2, _mm_mul_pd(_mm_loadu_pd(y[2] + a), v0));
        b2 = _mm_add_pd(b2, _mm_mul_pd(_mm_loadu_pd(y[2] + a + 2), v1));
        a3 = _mm_add_pd(a3, _mm_mul_pd(_mm_loadu_pd(y[3] + a), v0));
        b3 = _mm_add_pd(b3, _mm_mul_pd(_mm_loadu_pd(y[3] + a + 2), v1));
    }
    double lanes[8][2];
    _mm_storeu_pd(lanes[0], a0);
    _mm_storeu_pd(lanes[1], b0);
    _mm_storeu_pd(lanes[2], a1);
    _mm_storeu_pd(lanes[3], b1);
    _mm_storeu_pd(lanes[4], a2);
    _mm_storeu_pd(lanes[5], b2);
    _mm_storeu_pd(lanes[6], a3);
    _mm_storeu_pd(lanes[7], b3);
    for (int j = 0; j < 4; ++j) {
        const double *l0 = lanes[2 * j], *l1 = lanes[2 * j + 1];
        double s = (l0[0] + l0[1]) + (l1[0] + l1[1]);
        for (int64_t t = a; t < k; ++t) s += y[j][t] * v[t];
        d[j] = s;
    }
}

static void axpy_rows4(const double *const *y, const double *f, int64_t k, double *out) {
    __m128d f0 = _mm_set1_pd(f[0]), f1 = _mm_set1_pd(f[1]);
    __m128d f2 = _mm_set1_pd(f[2]), f3 = _mm_set1_pd(f[3]);
    int64_t a = 0;
    for (; a + 2 <= k; a += 2) {
        __m128d s01 = _mm_add_pd(_mm_mul_pd(f0, _mm_loadu_pd(y[0] + a)),
                                 _mm_mul_pd(f1, _mm_loadu_pd(y[1] + a)));
        __m128d s23 = _mm_add_pd(_mm_mul_pd(f2, _mm_loadu_pd(y[2] + a)),
                                 _mm_mul_pd(f3, _mm_loadu_pd(y[3] + a)));
        _mm_storeu_pd(out + a, _mm_add_pd(_mm_loadu_pd(out + a), _mm_add_pd(s01, s23)));
    }
    for (; a < k; ++a)
        out[a] += (f[0] * y[0][a] + f[1] * y[1][a]) + (f[2] * y[2][a] + f[3] * y[3][a]);
}

/* *pa = p . a and *pb = p . b in one pass (two two-lane partial sums each). */
static void dot_pair(const double *p, const double *a_, const double *b_, int64_t k,
                     double *pa, double *pb) {
    __m128d a0 = _mm_setzero_pd(), a1 = a0, b0 = a0, b1 = a0;
    int64_t a = 0;
    for (; a + 4 <= k; a += 4) {
        __m128d p0 = _mm_loadu_pd(p + a), p1 = _mm_loadu_pd(p + a + 2);
        a0 = _mm_add_pd(a0, _mm_mul_pd(p0, _mm_loadu_pd(a_ + a)));
        a1 = _mm_add_pd(a1, _mm_mul_pd(p1, _mm_loadu_pd(a_ + a + 2)));
        b0 = _mm_add_pd(b0, _mm_mul_pd(p0, _mm_loadu_pd(b_ + a)));
        b1 = _mm_add_pd(b1, _mm_mul_pd(p1, _mm_loadu_pd(b_ + a + 2)));
    }
    double la[2][2], lb[2][2];
    _mm_storeu_pd(la[0], a0);
    _mm_storeu_pd(la[1], a1);
    _mm_storeu_pd(lb[0], b0);
    _mm_storeu_pd(lb[1], b1);
    double sa = (la[0][0] + la[0][1]) + (la[1][0] + la[1][1]);
    double sb = (lb[0][0] + lb[0][1]) + (lb[1][0] + lb[1][1]);
    for (; a < k; ++a) {
        sa += p[a] * a_[a];
        sb += p[a] * b_[a];
    }
    *pa = sa;
    *pb = sb;
}

/* A CG step's updates x += step p, r -= step Ap; returns the new r . r. */
static double cg_update(double *x, double *r, const double *p, const double *Ap, double step,
                        int64_t k) {
    __m128d st = _mm_set1_pd(step), s0 = _mm_setzero_pd(), s1 = s0;
    int64_t a = 0;
    for (; a + 4 <= k; a += 4) {
        __m128d r0 = _mm_sub_pd(_mm_loadu_pd(r + a), _mm_mul_pd(st, _mm_loadu_pd(Ap + a)));
        __m128d r1 =
            _mm_sub_pd(_mm_loadu_pd(r + a + 2), _mm_mul_pd(st, _mm_loadu_pd(Ap + a + 2)));
        __m128d x0 = _mm_add_pd(_mm_loadu_pd(x + a), _mm_mul_pd(st, _mm_loadu_pd(p + a)));
        __m128d x1 =
            _mm_add_pd(_mm_loadu_pd(x + a + 2), _mm_mul_pd(st, _mm_loadu_pd(p + a + 2)));
        _mm_storeu_pd(x + a, x0);
        _mm_storeu_pd(x + a + 2, x1);
        _mm_storeu_pd(r + a, r0);
        _mm_storeu_pd(r + a + 2, r1);
        s0 = _mm_add_pd(s0, _mm_mul_pd(r0, r0));
        s1 = _mm_add_pd(s1, _mm_mul_pd(r1, r1));
    }
    double l[2][2];
    _mm_storeu_pd(l[0], s0);
    _mm_storeu_pd(l[1], s1);
    double rr = (l[0][0] + l[0][1]) + (l[1][0] + l[1][1]);
    for (; a < k; ++a) {
        x[a] += step * p[a];
        r[a] -= step * Ap[a];
        rr += r[a] * r[a];
    }
    return rr;
}
#else
static void dot_pair(const double *p, const double *a_, const double *b_, int64_t k,
                     double *pa, double *pb) {
    *pa = dot4(p, a_, k);
    *pb = dot4(p, b_, k);
}

static double cg_update(double *x, double *r, const double *p, const double *Ap, double step,
                        int64_t k) {
    for (int64_t a = 0; a < k; ++a) {
        x[a] += step * p[a];
        r[a] -= step * Ap[a];
    }
    return dot4(r, r, k);
}

static void dot_rows4(const double *const *y, const double *v, int64_t k, double *d) {
    for (int j = 0; j < 4; ++j) d[j] = dot4(y[j], v, k);
}

static void axpy_rows4(const double *const *y, const double *f, int64_t k, double *out) {
    for (int64_t a = 0; a < k; ++a)
        out[a] += (f[0] * y[0][a] + f[1] * y[1][a]) + (f[2] * y[2][a] + f[3] * y[3][a]);
}
#endif

/* Entry e's weight w_e and target c_e. alpha NaN: w[e] (1 where w is NULL) and c[e], less
 * shift[indices[e]] where shift is given. Else implicit feedback's confidences, formed on the
 * fly from the stored values r (passed as both w and c): w_e = alpha r_e, c_e = 1 + w_e (the
 * same two roundings as forming those arrays first). */
static inline double entry_weight(const double *w, double alpha, int64_t e) {
    if (w == NULL) return 1.0;
    return (alpha == alpha) ? alpha * w[e] : w[e];
}

static inline double entry_target(const double *c, const double *shift, const int32_t *indices,
                                  double alpha, double we, int64_t e) {
    if (alpha == alpha) return 1.0 + we;
    return (shift != NULL) ? c[e] - shift[indices[e]] : c[e];
}

/* The portable loop of rows_product (below), four entries at a time with DOT and AXPY
 * (dot_rows4 and axpy_rows4 or their AVX2 forms). The last block of a row is padded with
 * its first entry, given f = 0 (adding 0 y_e leaves out as it is: the factor rows are
 * finite). */
#define DEFINE_ROWS_LOOP(NAME, ATTR, DOT, AXPY)                                                  \
    ATTR static double NAME(const double *Y, const int32_t *indices, int64_t lo, int64_t hi,   \
                            int64_t k, const double *w, const double *c, const double *shift, \
                            double alpha, const double *v, double *out) {                      \
        double sq = 0.0;                                                                       \
        for (int64_t e = lo; e < hi; e += 4) {                                                 \
            int64_t m = (hi - e < 4) ? hi - e : 4;                                             \
            const double *y[4];                                                                \
            double d[4] = {0.0, 0.0, 0.0, 0.0}, fe[4] = {0.0, 0.0, 0.0, 0.0};                  \
            for (int64_t j = 0; j < 4; ++j) y[j] = Y + indices[j < m ? e + j : lo] * k;        \
            if (v != NULL) DOT(y, v, k, d);                                                    \
            for (int64_t j = 0; j < m; ++j) {                                                  \
                double we = entry_weight(w, alpha, e + j);                                     \
                double ce =                                                                    \
                    (c != NULL) ? entry_target(c, shift, indices, alpha, we, e + j) : 0.0;     \
                fe[j] = (c != NULL) ? ce - we * d[j] : we * d[j];                              \
                sq += fe[j] * fe[j];                                                           \
            }                                                                                  \
            AXPY(y, fe, k, out);                                                               \
        }                                                                                      \
        return sq;                                                                             \
    }

DEFINE_ROWS_LOOP(rows_loop_portable, , dot_rows4, axpy_rows4)

/* A CG step's scalars and updates for one row, given Ap: the step length a = r.r / p.Ap,
 * the objective's change a^2 p.Ap - 2 a p.r (into *phi), x += a p, r -= a Ap, then
 * p = r + beta p with beta the ratio of the new r.r to the old (*rs, updated). */
#define DEFINE_CG_STEP(NAME, ATTR, DOT_PAIR, UPDATE, DIRECTION)                              \
    ATTR static void NAME(double *x, double *r, double *p, const double *Ap, int64_t k,     \
                          double *rs, double *phi) {                                         \
        double pAp, pr;                                                                      \
        DOT_PAIR(p, Ap, r, k, &pAp, &pr);                                                    \
        double step = (pAp > 0.0) ? *rs / pAp : 0.0;                                         \
        *phi += step * (step * pAp - 2.0 * pr);                                              \
        double rs_new = UPDATE(x, r, p, Ap, step, k);                                        \
        double beta = (*rs > 0.0) ? rs_new / *rs : 0.0;                                      \
        DIRECTION(p, r, beta, k);                                                            \
        *rs = rs_new;                                                                        \
    }

/* p = r + beta p */
static void cg_direction(double *p, const double *r, double beta, int64_t k) {
    for (int64_t a = 0; a < k; ++a) p[a] = r[a] + beta * p[a];
}

DEFINE_CG_STEP(cg_step_portable, , dot_pair, cg_update, cg_direction)

/* The start of a row's iterations: r = -r (r held (base + d I) x), *zero = 1 where x is 0;
 * returns x . x. */
static double cg_start_portable(const double *x, double *r, int64_t k, int *zero) {
    int z = 1;
    for (int64_t a = 0; a < k; ++a) {
        r[a] = -r[a];
        z &= (x[a] == 0.0);
    }
    *zero = z;
    return dot4(x, x, k);
}

/* p = r, the first direction; returns r . r. */
static double cg_first_portable(const double *r, double *p, int64_t k) {
    memcpy(p, r, (size_t)k * sizeof(double));
    return dot4(r, r, k);
}

/* With GCC or Clang on x86-64, the same loop in AVX2 with fused multiply-adds, taken where
 * the processor has them (checked once, at run time: the build flags stay portable). */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define ALS_AVX2 __attribute__((target("avx2,fma")))

/* (v0 + v1) + (v2 + v3): the four lanes of a partial sum, in a fixed order. */
ALS_AVX2 static inline double hsum_avx2(__m256d v) {
    double l[4];
    _mm256_storeu_pd(l, v);
    return (l[0] + l[1]) + (l[2] + l[3]);
}

/* d[j] = y[j] . v for four rows, each as two partial sums (the even and the odd groups of four
 * coordinates, added at the end): chains of dependent multiply-adds half as long, which the
 * processor overlaps (at k = 33, the explicit ALS sweeps of the size sweep's 1 000 ratings
 * took 275 against 292 us with one sum per row). */
ALS_AVX2 static inline void dot_rows4_avx2(const double *const *y, const double *v, int64_t k,
                                           double *d) {
    __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
    __m256d b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    int64_t a = 0;
    for (; a + 8 <= k; a += 8) {
        __m256d v0 = _mm256_loadu_pd(v + a), v1 = _mm256_loadu_pd(v + a + 4);
        a0 = _mm256_fmadd_pd(_mm256_loadu_pd(y[0] + a), v0, a0);
        a1 = _mm256_fmadd_pd(_mm256_loadu_pd(y[1] + a), v0, a1);
        a2 = _mm256_fmadd_pd(_mm256_loadu_pd(y[2] + a), v0, a2);
        a3 = _mm256_fmadd_pd(_mm256_loadu_pd(y[3] + a), v0, a3);
        b0 = _mm256_fmadd_pd(_mm256_loadu_pd(y[0] + a + 4), v1, b0);
        b1 = _mm256_fmadd_pd(_mm256_loadu_pd(y[1] + a + 4), v1, b1);
        b2 = _mm256_fmadd_pd(_mm256_loadu_pd(y[2] + a + 4), v1, b2);
        b3 = _mm256_fmadd_pd(_mm256_loadu_pd(y[3] + a + 4), v1, b3);
    }
    for (; a + 4 <= k; a += 4) {
        __m256d v0 = _mm256_loadu_pd(v + a);
        a0 = _mm256_fmadd_pd(_mm256_loadu_pd(y[0] + a), v0, a0);
        a1 = _mm256_fmadd_pd(_mm256_loadu_pd(y[1] + a), v0, a1);
        a2 = _mm256_fmadd_pd(_mm256_loadu_pd(y[2] + a), v0, a2);
        a3 = _mm256_fmadd_pd(_mm256_loadu_pd(y[3] + a), v0, a3);
    }
    d[0] = hsum_avx2(_mm256_add_pd(a0, b0));
    d[1] = hsum_avx2(_mm256_add_pd(a1, b1));
    d[2] = hsum_avx2(_mm256_add_pd(a2, b2));
    d[3] = hsum_avx2(_mm256_add_pd(a3, b3));
    for (int j = 0; j < 4; ++j)
        for (int64_t t = a; t < k; ++t) d[j] += y[j][t] * v[t];
}

ALS_AVX2 static inline void axpy_rows4_avx2(const double *const *y, const double *f, int64_t k,
                                            double *out) {
    __m256d f0 = _mm256_set1_pd(f[0]), f1 = _mm256_set1_pd(f[1]);
    __m256d f2 = _mm256_set1_pd(f[2]), f3 = _mm256_set1_pd(f[3]);
    int64_t a = 0;
    for (; a + 4 <= k; a += 4) {
        __m256d t = _mm256_loadu_pd(out + a);
        t = _mm256_fmadd_pd(f0, _mm256_loadu_pd(y[0] + a), t);
        t = _mm256_fmadd_pd(f1, _mm256_loadu_pd(y[1] + a), t);
        t = _mm256_fmadd_pd(f2, _mm256_loadu_pd(y[2] + a), t);
        t = _mm256_fmadd_pd(f3, _mm256_loadu_pd(y[3] + a), t);
        _mm256_storeu_pd(out + a, t);
    }
    for (; a < k; ++a)
        out[a] += (f[0] * y[0][a] + f[1] * y[1][a]) + (f[2] * y[2][a] + f[3] * y[3][a]);
}

DEFINE_ROWS_LOOP(rows_loop_avx2, ALS_AVX2, dot_rows4_avx2, axpy_rows4_avx2)

ALS_AVX2 static inline void dot_pair_avx2(const double *p, const double *a_, const double *b_,
                                          int64_t k, double *pa, double *pb) {
    __m256d sa = _mm256_setzero_pd(), sb = sa;
    int64_t a = 0;
    for (; a + 4 <= k; a += 4) {
        __m256d p0 = _mm256_loadu_pd(p + a);
        sa = _mm256_fmadd_pd(p0, _mm256_loadu_pd(a_ + a), sa);
        sb = _mm256_fmadd_pd(p0, _mm256_loadu_pd(b_ + a), sb);
    }
    double ta = hsum_avx2(sa), tb = hsum_avx2(sb);
    for (; a < k; ++a) {
        ta += p[a] * a_[a];
        tb += p[a] * b_[a];
    }
    *pa = ta;
    *pb = tb;
}

ALS_AVX2 static inline double cg_update_avx2(double *x, double *r, const double *p,
                                             const double *Ap, double step, int64_t k) {
    __m256d st = _mm256_set1_pd(step), nst = _mm256_set1_pd(-step), acc = _mm256_setzero_pd();
    int64_t a = 0;
    for (; a + 4 <= k; a += 4) {
        __m256d r0 = _mm256_fmadd_pd(nst, _mm256_loadu_pd(Ap + a), _mm256_loadu_pd(r + a));
        __m256d x0 = _mm256_fmadd_pd(st, _mm256_loadu_pd(p + a), _mm256_loadu_pd(x + a));
        _mm256_storeu_pd(x + a, x0);
        _mm256_storeu_pd(r + a, r0);
        acc = _mm256_fmadd_pd(r0, r0, acc);
    }
    double rr = hsum_avx2(acc);
    for (; a < k; ++a) {
        x[a] += step * p[a];
        r[a] -= step * Ap[a];
        rr += r[a] * r[a];
    }
    return rr;
}

ALS_AVX2 static inline void cg_direction_avx2(double *p, const double *r, double beta,
                                              int64_t k) {
    __m256d b = _mm256_set1_pd(beta);
    int64_t a = 0;
    for (; a + 4 <= k; a += 4)
        _mm256_storeu_pd(p + a, _mm256_fmadd_pd(b, _mm256_loadu_pd(p + a), _mm256_loadu_pd(r + a)));
    for (; a < k; ++a) p[a] = r[a] + beta * p[a];
}

DEFINE_CG_STEP(cg_step_avx2, ALS_AVX2, dot_pair_avx2, cg_update_avx2, cg_direction_avx2)

ALS_AVX2 static double cg_start_avx2(const double *x, double *r, int64_t k, int *zero) {
    __m256d sign = _mm256_set1_pd(-0.0), acc = _mm256_setzero_pd(), nz = acc;
    int64_t a = 0;
    for (; a + 4 <= k; a += 4) {
        __m256d xv = _mm256_loadu_pd(x + a);
        _mm256_storeu_pd(r + a, _mm256_xor_pd(_mm256_loadu_pd(r + a), sign));
        acc = _mm256_fmadd_pd(xv, xv, acc);
        nz = _mm256_or_pd(nz, _mm256_cmp_pd(xv, _mm256_setzero_pd(), _CMP_NEQ_UQ));
    }
    double xx = hsum_avx2(acc);
    int z = _mm256_movemask_pd(nz) == 0;
    for (; a < k; ++a) {
        r[a] = -r[a];
        z &= (x[a] == 0.0);
        xx += x[a] * x[a];
    }
    *zero = z;
    return xx;
}

ALS_AVX2 static double cg_first_avx2(const double *r, double *p, int64_t k) {
    __m256d acc = _mm256_setzero_pd();
    int64_t a = 0;
    for (; a + 4 <= k; a += 4) {
        __m256d rv = _mm256_loadu_pd(r + a);
        _mm256_storeu_pd(p + a, rv);
        acc = _mm256_fmadd_pd(rv, rv, acc);
    }
    double rr = hsum_avx2(acc);
    for (; a < k; ++a) {
        p[a] = r[a];
        rr += r[a] * r[a];
    }
    return rr;
}

static int simd_level = -1; /* -1: not yet checked; 0: portable; 1: AVX2 and FMA */

static int simd_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#else
static int simd_level = 0;

static int simd_available(void) { return 0; }
#endif

/* The instruction set of the CG kernel's loops: level -1 asks which is in use, 0 asks for
 * the portable one, 1 for AVX2 with FMA where the processor has them; returns the level in
 * use (the tests run both on the same data). */
ML_EXPORT int als_simd(int level) {
    if (level >= 0 || simd_level < 0) simd_level = (level != 0) && simd_available();
    return simd_level;
}

static double rows_loop(const double *Y, const int32_t *indices, int64_t lo, int64_t hi,
                        int64_t k, const double *w, const double *c, const double *shift,
                        double alpha, const double *v, double *out) {
#if defined(__GNUC__) && defined(__x86_64__)
    if (simd_level < 0) als_simd(-1);
    if (simd_level > 0) return rows_loop_avx2(Y, indices, lo, hi, k, w, c, shift, alpha, v, out);
#endif
    return rows_loop_portable(Y, indices, lo, hi, k, w, c, shift, alpha, v, out);
}

static double cg_start(const double *x, double *r, int64_t k, int *zero) {
#if defined(__GNUC__) && defined(__x86_64__)
    if (simd_level > 0) return cg_start_avx2(x, r, k, zero);
#endif
    return cg_start_portable(x, r, k, zero);
}

static double cg_first(const double *r, double *p, int64_t k) {
#if defined(__GNUC__) && defined(__x86_64__)
    if (simd_level > 0) return cg_first_avx2(r, p, k);
#endif
    return cg_first_portable(r, p, k);
}

static void cg_step(double *x, double *r, double *p, const double *Ap, int64_t k, double *rs,
                    double *phi) {
#if defined(__GNUC__) && defined(__x86_64__)
    if (simd_level > 0) {
        cg_step_avx2(x, r, p, Ap, k, rs, phi);
        return;
    }
#endif
    cg_step_portable(x, r, p, Ap, k, rs, phi);
}

/* The rows' part of a CG product: out += sum_e f(e) y_e, where f(e) = c_e - w_e (y_e . v)
 * (with c, the residual's; c_e = c[e] - shift[indices[e]], or c[e] where shift is NULL) or
 * f(e) = w_e (y_e . v) (c NULL), for the entries [lo, hi), v NULL standing for zero;
 * returns sum_e f(e)^2 (the squared error at v when w is NULL and c the targets). With A
 * (the gathered y_e, column-major k x n) the two products go to the BLAS's dgemv, with s
 * and f as scratch of n doubles each; else one pass of dot products and updates. */
static double rows_product(dgemv_fn gemv, const double *A, double *s, double *f,
                           const double *Y, const int32_t *indices, int64_t lo, int64_t hi,
                           int64_t k, const double *w, const double *c, const double *shift,
                           double alpha, const double *v, double *out) {
    double sq = 0.0;
    if (A != NULL) {
        int64_t n = hi - lo;
        if (v != NULL) {
            gemv_gathered(gemv, 'T', A, k, n, v, s);
        } else {
            for (int64_t e = 0; e < n; ++e) s[e] = 0.0;
        }
        for (int64_t e = 0; e < n; ++e) {
            double we = entry_weight(w, alpha, lo + e);
            double ce = 0.0;
            if (c != NULL) ce = entry_target(c, shift, indices, alpha, we, lo + e);
            f[e] = (c != NULL) ? ce - we * s[e] : we * s[e];
            sq += f[e] * f[e];
        }
        /* out += A f: the BLAS with beta = 1. */
        char tr = 'N';
        int m = (int)k, nn = (int)n, one = 1;
        double a1 = 1.0;
        gemv(&tr, &m, &nn, &a1, (double *)A, &m, f, &one, &a1, out, &one);
        return sq;
    }
    return rows_loop(Y, indices, lo, hi, k, w, c, shift, alpha, v, out);
}

/* Rows with at least this many entries are gathered (when dgemv is given and the AVX2 loops
 * are not in use) and each of their products is two dgemv calls; shorter rows keep the
 * portable loop, whose cost for a few entries is below the calls' overhead. */
#define CG_GEMV_MIN 16

/* At most this many rows go through the CG iterations together: step s of every row of the
 * block, then step s + 1. A row's step waits on its previous one (two reductions and a
 * division in a chain), and the other rows' independent steps fill that wait: the explicit
 * sweeps at 1 000 ratings (rows of 10 to 50 entries, k = 33) took 260 against 275 us row by
 * row. When there is a base term and dgemm is given, the products (base + d I) p of the
 * block's rows are also one dgemm (base read once for the block; with k = 64 about a
 * quarter of the time of one dgemv per row). */
#define CG_BLOCK 8

/* C = alpha op(A) op(B) + beta C, column-major. */
typedef void (*dgemm_fn)(char *transa, char *transb, int *m, int *n, int *k, double *alpha,
                         double *a, int *lda, double *b, int *ldb, double *beta, double *c,
                         int *ldc);

/* out[j] = (B + d[j] I) v[j] for the nb rows v[j] = V + j k (out[j] = out + j k), B NULL
 * standing for zero: one dgemm for the block where B and gemm are given and nb > 1 (B is
 * symmetric, so the column-major k x nb product B [v_0 ... v_nb-1] holds the rows B v_j),
 * else row by row. */
static void block_symv(dgemv_fn gemv, dgemm_fn gemm, const double *B, const double *d,
                       const double *V, double *out, int64_t nb, int64_t k) {
    if (B != NULL && gemm != NULL && nb > 1) {
        char tr = 'N';
        int m = (int)k, n = (int)nb;
        double a1 = 1.0, b0 = 0.0;
        gemm(&tr, &tr, &m, &n, &m, &a1, (double *)B, &m, (double *)V, &m, &b0, out, &m);
        for (int64_t j = 0; j < nb; ++j)
            if (d[j] != 0.0)
                for (int64_t a = 0; a < k; ++a) out[j * k + a] += d[j] * V[j * k + a];
    } else {
        for (int64_t j = 0; j < nb; ++j) shifted_symv(gemv, B, d[j], V + j * k, out + j * k, k);
    }
}

/* The doubles of work that cg_rows needs for rank k and rows of at most `longest` entries,
 * with (blas) or without SciPy's BLAS: no gather buffer with the AVX2 loops (for rank 64
 * and an item with 10^5 interactions, 53 MB fewer). */
ML_EXPORT int64_t als_cg_work(int64_t k, int64_t longest, int blas) {
    if (simd_level < 0) als_simd(-1);
    return 3 * CG_BLOCK * k + ((blas && simd_level <= 0) ? (k + 2) * longest : 0);
}

/* Conjugate-gradient iterations of ALS (see mathlearn/recommender/_implicit.py and
 * _als.py): for every row u, `steps` CG iterations from X[u] on
 *
 *     (base + reg[u] I + sum_e w[e] y_e y_e^T) x = sum_e c_e y_e,      y_e = Y[indices[e]],
 *
 * in place in X, where c_e = c[e] - shift[indices[e]] (c[e] where shift is NULL: the
 * explicit model's targets with the other side's biases taken off on the fly, instead of a
 * pass over the ratings before each half-sweep). base is a full symmetric k x k matrix or
 * NULL (zero), reg NULL (zero) or one number per row, w NULL (all ones) or one weight per
 * entry. With terms given, *terms receives, at the result (s_e = y_e . X[u]),
 * sum_e (t_e - s_e)^2 where t is given (the explicit model's squared error; t_e = c_e when
 * t is c, else t[e]), else sum_e c_e (1 - s_e)^2 - s_e^2 (the implicit model's
 * observed-pair terms). When t is c, w and base are NULL (explicit ALS), that
 * squared error is not recomputed at the result: the row's objective
 * phi(x) = sum_e (c_e - y_e . x)^2 + reg[u] ||x||^2 is taken at the start from the
 * residual pass, each CG step x += a p changes it by a^2 p^T M p - 2 a p^T r
 * (M the row's matrix, r = b - M x its residual before the step: both at hand), and the
 * squared error is phi - reg[u] ||x||^2 at the end.
 *
 * Consecutive rows go through the iterations together, up to CG_BLOCK of them and as many
 * as the gather buffer holds (see block_symv); every row's arithmetic is the same as alone
 * but, with base and gemm given, for the order of the sums in base p. work holds
 * als_cg_work(k, longest, gemv != NULL) doubles, longest at least the pattern's longest row
 * (the gather buffer then holds `longest` entries): with gemv (an optimised BLAS's dgemv,
 * see als_ridge_rows) and without the AVX2 loops, rows with at least CG_GEMV_MIN entries are
 * gathered once and each product is two dgemv calls on them (with the AVX2 loops, the
 * kernel's own loops are the faster at every length: 7.8 against 11-12 ns an entry and
 * product at k = 33, rows of 50 to 100). */
static void cg_rows(int64_t n_rows, int64_t k, const int64_t *indptr, const int32_t *indices,
                    const double *Y, const double *w, const double *c, const double *shift,
                    double alpha, const double *base, const double *reg, double *X,
                    int64_t steps, const double *t, double *terms, double *work,
                    int64_t longest, dgemv_fn gemv, dgemm_fn gemm) {
    double *R = work, *P = work + CG_BLOCK * k, *AP = work + 2 * CG_BLOCK * k;
    if (simd_level < 0) als_simd(-1);
    if (gemv == NULL || simd_level > 0) longest = 0; /* no gather buffer (als_cg_work) */
    double *s = AP + CG_BLOCK * k, *f = s + longest, *gathered = f + longest;
    int64_t block = CG_BLOCK;
    double total = 0.0, d[CG_BLOCK], rs[CG_BLOCK], phi[CG_BLOCK];
    double *A[CG_BLOCK];
    int track = terms != NULL && t != NULL && t == c && w == NULL && base == NULL;
    for (int64_t u0 = 0; u0 < n_rows;) {
        /* The block: rows u0 .. u0 + nb - 1, their gathered entries within the buffer. */
        int64_t nb = 0, used = 0;
        while (u0 + nb < n_rows && nb < block) {
            int64_t lo = indptr[u0 + nb], n = indptr[u0 + nb + 1] - lo;
            int64_t need = (longest > 0 && n >= CG_GEMV_MIN) ? n : 0;
            if (nb > 0 && used + need > longest) break;
            A[nb] = NULL;
            if (need) {
                A[nb] = gathered + used * k;
                gather(Y, indices, lo, lo + n, indptr[n_rows], k, A[nb]);
            }
            d[nb] = (reg != NULL) ? reg[u0 + nb] : 0.0;
            used += need;
            ++nb;
        }
        /* r = rhs - (base + d I) x - sum_e w_e (y_e . x) y_e */
        block_symv(gemv, gemm, base, d, X + u0 * k, R, nb, k);
        for (int64_t j = 0; j < nb; ++j) {
            int64_t lo = indptr[u0 + j], hi = indptr[u0 + j + 1];
            double *x = X + (u0 + j) * k, *r = R + j * k;
            int zero;
            double xx = cg_start(x, r, k, &zero);
            /* From x = 0 (the first sweep's users) the product with x is skipped. */
            phi[j] = rows_product(gemv, A[j], s, f, Y, indices, lo, hi, k, w, c, shift, alpha,
                                  zero ? NULL : x, r) + d[j] * xx;
            rs[j] = cg_first(r, P + j * k, k);
        }
        for (int64_t it = 0; it < steps; ++it) {
            block_symv(gemv, gemm, base, d, P, AP, nb, k);
            for (int64_t j = 0; j < nb; ++j) {
                int64_t lo = indptr[u0 + j], hi = indptr[u0 + j + 1];
                double *x = X + (u0 + j) * k, *r = R + j * k, *p = P + j * k, *Ap = AP + j * k;
                rows_product(gemv, A[j], s, f, Y, indices, lo, hi, k, w, NULL, NULL, alpha, p,
                             Ap);
                cg_step(x, r, p, Ap, k, rs + j, phi + j);
            }
        }
        for (int64_t j = 0; j < nb && terms != NULL; ++j) {
            int64_t lo = indptr[u0 + j], hi = indptr[u0 + j + 1];
            const double *x = X + (u0 + j) * k;
            if (track) {
                total += phi[j] - d[j] * dot4(x, x, k);
                continue;
            }
            if (A[j] != NULL) gemv_gathered(gemv, 'T', A[j], k, hi - lo, x, s);
            for (int64_t e = lo; e < hi; ++e) {
                double se = (A[j] != NULL) ? s[e - lo] : dot4(Y + indices[e] * k, x, k);
                double sh = (shift != NULL) ? shift[indices[e]] : 0.0;
                if (t != NULL) {
                    double te = (t == c) ? t[e] - sh : t[e];
                    total += (te - se) * (te - se);
                } else {
                    double ce = (alpha == alpha) ? 1.0 + alpha * c[e] : c[e] - sh;
                    total += ce * (1.0 - se) * (1.0 - se) - se * se;
                }
            }
        }
        u0 += nb;
    }
    if (terms != NULL) *terms = total;
}

/* The largest number of entries of a row of the n_rows x ? CSR pattern indptr. */
static int64_t longest_row(const int64_t *indptr, int64_t n_rows) {
    int64_t longest = 0;
    for (int64_t u = 0; u < n_rows; ++u)
        if (indptr[u + 1] - indptr[u] > longest) longest = indptr[u + 1] - indptr[u];
    return longest;
}

ML_EXPORT void als_cg_rows(int64_t n_rows, int64_t k, const int64_t *indptr,
                           const int32_t *indices, const double *Y, const double *w,
                           const double *c, const double *shift, const double *base,
                           const double *reg, double *X, int64_t steps, const double *t,
                           double *terms, double *work, dgemv_fn gemv, dgemm_fn gemm) {
    cg_rows(n_rows, k, indptr, indices, Y, w, c, shift, (double)NAN, base, reg, X, steps, t,
            terms, work, longest_row(indptr, n_rows), gemv, gemm);
}

/* Biases as the last of w = k + 1 coordinates: V[j] = [X[j, 0..k-1], 1] and shift[j] = X[j, k]
 * (the other side's rows and biases for a half-sweep); w = k copies X as it is. */
static void design_rows(const double *X, int64_t n, int64_t w, int biases, double *V,
                        double *shift) {
    for (int64_t j = 0; j < n; ++j) {
        const double *x = X + j * w;
        double *v = V + j * w;
        for (int64_t a = 0; a < w; ++a) v[a] = x[a];
        if (biases) {
            shift[j] = x[w - 1];
            v[w - 1] = 1.0;
        }
    }
}

/* sum_j reg[j] ||X[j]||^2 over the n rows of w numbers. */
static double penalty(const double *X, const double *reg, int64_t n, int64_t w) {
    double total = 0.0;
    for (int64_t j = 0; j < n; ++j) total += reg[j] * dot4(X + j * w, X + j * w, w);
    return total;
}

/* The doubles of scratch of als_explicit_cg (below) for w numbers per row: the targets of
 * both orders (2 N), the rows' penalties (n_users + n_items), the other side's design rows
 * and biases (m w + m, m = max(n_users, n_items)) and the CG kernel's work for the longest
 * row of either order (als_cg_work; blas: an optimised dgemv will be given). */
ML_EXPORT int64_t als_explicit_cg_scratch(int64_t n_users, int64_t n_items, int64_t w,
                                          const int64_t *indptr_u, const int64_t *indptr_i,
                                          int blas) {
    int64_t m = n_users > n_items ? n_users : n_items;
    int64_t lu = longest_row(indptr_u, n_users), li = longest_row(indptr_i, n_items);
    return 2 * indptr_u[n_users] + n_users + n_items + m * w + m +
           als_cg_work(w, lu > li ? lu : li, blas);
}

/* The sweeps of explicit ALS with the CG solver (mathlearn/recommender/_als.py, als_fit),
 * in one call. Xu (n_users x w) holds [p_u, b_u] (w = k + 1 with biases, else [p_u],
 * w = k) and Xi (n_items x w) [q_i, c_i]; both are updated in place. values_u / values_i
 * are the ratings in user-major / item-major order (indptr_*, cols_* the other side's
 * index); the targets are the ratings less the offset mu, and each row's penalty is lam
 * times its number of ratings (count) or lam. A sweep is the users' half-sweep,
 * als_cg_rows with the item rows [q_i, 1] and the item biases taken off each rating, then
 * the items' with [p_u, 1] and the user biases, which also returns the squared error;
 * history[s] receives the objective sse + sum_u reg_u ||Xu[u]||^2 + sum_i reg_i ||Xi[i]||^2
 * after sweep s. With tol > 0 the sweeps stop once the objective falls by at most tol times
 * its previous value. scratch holds als_explicit_cg_scratch(n_users, n_items, w, indptr_u,
 * indptr_i, gemv != NULL) doubles. Returns the sweeps run. */
ML_EXPORT int64_t als_explicit_cg(int64_t n_users, int64_t n_items, int64_t k, int biases,
                                  const int64_t *indptr_u, const int32_t *cols_u,
                                  const double *values_u, const int64_t *indptr_i,
                                  const int32_t *cols_i, const double *values_i, double offset,
                                  double lam_u, double lam_i, int count, double *Xu, double *Xi,
                                  int64_t steps, int64_t max_iter, double tol, double *history,
                                  double *scratch, dgemv_fn gemv) {
    int64_t w = biases ? k + 1 : k, sweep = 0, n = indptr_u[n_users];
    int64_t m = n_users > n_items ? n_users : n_items;
    double *c_u = scratch, *c_i = c_u + n, *reg_u = c_i + n, *reg_i = reg_u + n_users;
    double *V = reg_i + n_items, *shift = V + m * w, *work = shift + m;
    for (int64_t e = 0; e < n; ++e) {
        c_u[e] = values_u[e] - offset;
        c_i[e] = values_i[e] - offset;
    }
    for (int64_t u = 0; u < n_users; ++u)
        reg_u[u] = count ? (double)(indptr_u[u + 1] - indptr_u[u]) * lam_u : lam_u;
    for (int64_t i = 0; i < n_items; ++i)
        reg_i[i] = count ? (double)(indptr_i[i + 1] - indptr_i[i]) * lam_i : lam_i;
    const double *sh = biases ? shift : NULL;
    while (sweep < max_iter) {
        double sse = 0.0;
        design_rows(Xi, n_items, w, biases, V, shift);
        als_cg_rows(n_users, w, indptr_u, cols_u, V, NULL, c_u, sh, NULL, reg_u, Xu, steps,
                    NULL, NULL, work, gemv, NULL);
        design_rows(Xu, n_users, w, biases, V, shift);
        als_cg_rows(n_items, w, indptr_i, cols_i, V, NULL, c_i, sh, NULL, reg_i, Xi, steps,
                    c_i, &sse, work, gemv, NULL);
        double obj = sse + penalty(Xu, reg_u, n_users, w) + penalty(Xi, reg_i, n_items, w);
        history[sweep++] = obj;
        if (tol > 0.0 && sweep > 1 && history[sweep - 2] - obj <= tol * history[sweep - 2])
            break;
    }
    return sweep;
}

/* G = Y^T Y (full, row-major k x k) for the n x k row-major Y: one dsyrk (Y seen by the
 * BLAS as the column-major k x n matrix, whose A A^T this is) where given and n fits its
 * integers, else a sum of outer products; then the triangle mirrored. */
static void gram_of(dsyrk_fn syrk, const double *Y, int64_t n, int64_t k, double *G) {
    if (syrk != NULL && n <= INT_MAX && n > 0) {
        char uplo = 'U', trans = 'N';
        int kk = (int)k, nn = (int)n;
        double one = 1.0, zero = 0.0;
        syrk(&uplo, &trans, &kk, &nn, &one, (double *)Y, &kk, &zero, G, &kk);
    } else {
        for (int64_t a = 0; a < k * k; ++a) G[a] = 0.0;
        for (int64_t j = 0; j < n; ++j) {
            const double *y = Y + j * k;
            for (int64_t b = 0; b < k; ++b)
                for (int64_t a = 0; a <= b; ++a) G[b * k + a] += y[b] * y[a];
        }
    }
    /* The column-major upper triangle is the row-major lower one: mirror it. */
    for (int64_t b = 0; b < k; ++b)
        for (int64_t a = 0; a < b; ++a) G[a * k + b] = G[b * k + a];
}

/* The sweeps of implicit-feedback ALS with the CG solver (mathlearn/recommender/
 * _implicit.py, ImplicitALS.fit), in one call. X (n_users x k) and Y (n_items x k) are
 * updated in place: the users' rows by the CG rows with base Y^T Y + lam I and, from the
 * stored values r_u (user-major), weights alpha r and confidences 1 + alpha r formed entry
 * by entry (no arrays of them), then the items' with X^T X + lam I and r_i, which also
 * returns the observed pairs' terms. history[s] receives the objective after sweep s,
 *
 *     sum_i y_i^T (X^T X + lam I) y_i + terms + lam ||X||^2
 *       = tr(X^T X Y^T Y) + terms + lam (||X||^2 + ||Y||^2),
 *
 * read from the items' base still in G (one dgemv per item row where gemv is given), so
 * that one k x k buffer G serves both half-sweeps and the objective; with tol > 0 the
 * sweeps stop once it falls by at most tol times the previous one. work as for
 * als_cg_rows with the longest row of both orientations (its first k doubles also hold
 * G y_i for the objective); gemm (or NULL) serves the blocks of rows of cg_rows. Returns
 * the sweeps run. */
ML_EXPORT int64_t als_implicit_cg(int64_t n_users, int64_t n_items, int64_t k,
                                  const int64_t *indptr_u, const int32_t *cols_u,
                                  const double *r_u, const int64_t *indptr_i,
                                  const int32_t *cols_i, const double *r_i, double alpha,
                                  double lam, double *X, double *Y, int64_t steps,
                                  int64_t max_iter, double tol, double *history, double *G,
                                  double *work, dgemv_fn gemv, dsyrk_fn syrk,
                                  dgemm_fn gemm) {
    int64_t sweep = 0;
    /* work holds the longest row of either side: the shorter side's blocks gather more rows */
    int64_t longest_u = longest_row(indptr_u, n_users), longest_i = longest_row(indptr_i, n_items);
    int64_t longest = longest_u > longest_i ? longest_u : longest_i;
    while (sweep < max_iter) {
        double terms = 0.0, total = 0.0;
        gram_of(syrk, Y, n_items, k, G);
        for (int64_t a = 0; a < k; ++a) G[a * k + a] += lam; /* the users' base */
        cg_rows(n_users, k, indptr_u, cols_u, Y, r_u, r_u, NULL, alpha, G, NULL, X, steps,
                NULL, NULL, work, longest, gemv, gemm);
        gram_of(syrk, X, n_users, k, G);
        for (int64_t a = 0; a < k; ++a) G[a * k + a] += lam; /* the items' base */
        cg_rows(n_items, k, indptr_i, cols_i, X, r_i, r_i, NULL, alpha, G, NULL, Y, steps,
                NULL, &terms, work, longest, gemv, gemm);
        for (int64_t i = 0; i < n_items; ++i) {
            shifted_symv(gemv, G, 0.0, Y + i * k, work, k);
            total += dot4(Y + i * k, work, k);
        }
        double sq = 0.0;
        for (int64_t a = 0; a < n_users * k; ++a) sq += X[a] * X[a];
        double obj = total + terms + lam * sq;
        history[sweep++] = obj;
        if (tol > 0.0 && sweep > 1 && history[sweep - 2] - obj <= tol * history[sweep - 2])
            break;
    }
    return sweep;
}
