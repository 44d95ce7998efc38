/* Sequential minimal optimisation for the SVM duals, the compiled route of
 * mathlearn/svm/_smo.py (whose docstring states the problem and the method).
 *
 *     min_a 1/2 a^T Q a + p^T a,  0 <= a_t <= C_t,  s^T a = Delta (one equality, or one per
 *     sign of s: per_sign),  Q_tu = s_t s_u K(x_{pt(t)}, x_{pt(u)}).
 *
 * The solver keeps score_t = -s_t G_t (G = Q a + p) over the active variables. A step moves
 * a_i += s_i t, a_j -= s_j t; the pair is chosen by the second-order rule (i maximises the
 * score over the variables that can move up, j maximises b^2 / curvature over those that can
 * move down); the solver stops when the KKT gap max_up score - min_down score is below tol.
 * The sequence of steps, the shrinking schedule and the tie-breaking (first index) are those
 * of the NumPy route, so both routes reach the same solution.
 *
 * Kernel columns are evaluated here from the rows of X (linear, polynomial, RBF, sigmoid) or
 * read from a precomputed Gram matrix, and kept in a least-recently-used cache of whole
 * columns K[:, q] over the points, keyed by point (the two variables of a regression point
 * share theirs); a precomputed matrix's columns are its rows, read in place, not copied.
 * Shrinking compacts the active set in order; cached columns stay valid.
 *
 * With `single` set (the caller decides, from a rounding bound, that it cannot matter against
 * tol), evaluated columns are stored rounded to single precision, half the bytes, as libsvm
 * stores its own; every kernel value the solver uses is then the rounded one (the diagonal,
 * the columns, the rebuild's kernel rows and the start's), so the iterations are exactly
 * those of the problem with the rounded matrix, computed in double precision.
 *
 * To rebuild the score of the variables set aside, the solver keeps, for every point q,
 *     H_q = sum over variables u at their upper bound of s_u C_u K(x_q, x_pt(u)),
 * updated from the (cached) column of a variable that reaches or leaves its upper bound; a
 * rebuild then needs the columns of the free variables only, mostly already cached:
 *     score_t = -s_t p_t - H_pt(t) - sum over free u of s_u a_u K(x_pt(t), x_pt(u)).
 *
 * Plain C99 without the Python C API; loaded with ctypes (mathlearn/_ext/__init__.py). */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
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

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(ML_NO_CLONES)
#define ML_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ML_CLONES
#endif

/* Lets GCC vectorise a loop with comparisons (as selects) by not treating them as able to
 * trap: the floating-point results are the same; only the exception flags may differ. */
#if defined(__GNUC__) && !defined(__clang__)
#define ML_NO_TRAPS __attribute__((optimize("no-trapping-math")))
#else
#define ML_NO_TRAPS
#endif

#define SMO_ABI_VERSION 4
#define TAU 1e-12

enum { K_PRECOMPUTED = 0, K_LINEAR = 1, K_POLY = 2, K_RBF = 3, K_SIGMOID = 4 };
enum { OK = 0, ERR_MEMORY = -1, ERR_OVERFLOW = -2, ERR_ARGUMENT = -3 };

ML_EXPORT int smo_abi_version(void) { return SMO_ABI_VERSION; }

/* Kernel. */

typedef struct {
    int kind;
    int64_t n, d;
    const double *X;     /* n x d rows, or the n x n Gram matrix (symmetric) */
    const double *norms; /* squared row norms (RBF) */
    double gamma, coef0;
    int degree;
    int overflow;
} Kernel;

/* x . y with sixteen partial sums, s_k over the indices i = k (mod 16) of the unrolled part
 * (the remainder goes to s_0), combined pairwise in a fixed order (as dot16 of _cd.c). The
 * order of every addition is written here, so the compiler may keep the partial sums in SIMD
 * registers without reassociating anything: the result is the same in every build. */
static inline double dot(const double *restrict x, const double *restrict y, int64_t d)
{
    double s[16] = {0.0};
    int64_t i = 0;
    for (; i + 16 <= d; i += 16)
        for (int k = 0; k < 16; ++k) s[k] += x[i + k] * y[i + k];
    for (; i < d; ++i) s[0] += x[i] * y[i];
    for (int k = 0; k < 8; ++k) s[k] += s[k + 8];
    for (int k = 0; k < 4; ++k) s[k] += s[k + 4];
    return (s[0] + s[2]) + (s[1] + s[3]);
}

static double power(double v, int degree)
{
    if (degree == 1) return v;
    if (degree == 2) return v * v;
    return pow(v, (double)degree);
}

/* exp(v[k]) in place for k < len, for v[k] <= 0 (the RBF kernel's -gamma ||x - y||^2), in
 * operations the compiler can run four (AVX2) or two (SSE2) lanes at a time where libm's exp
 * is one call per entry: about half of a kernel column's time at 20 features.
 *
 * v = k ln2 + r with k = round(v / ln2) (the integer of v log2(e) by the 1.5 * 2^52 shift,
 * which leaves it in the low bits of the sum) and r = (v - k ln2_hi) - k ln2_lo, where ln2_hi
 * (fdlibm's, 21 trailing zero bits) makes k ln2_hi and the first difference exact for
 * |k| <= 1077, so |r| <= ln2 / 2 (1 + 2^-50). exp(r) is its Taylor polynomial of degree 13 by
 * Horner's rule: the truncation error is below r^14 / 14! < 4.3e-18 relative (2^-57.7), and
 * the roundings of r and of the evaluation (the last two steps, p r and 1 + p r, carry nearly
 * all of it; the terms after the first two are at most r^2 / 2 < 0.061) leave an absolute error
 * of about one unit of 2^-53 in the value, which lies in [0.70, 1.42]: under two units in
 * the last place of the result on either side of 1 (1.06 at most, measured against mpmath
 * over 85 000 arguments; libm's exp is within one). 2^k is built from its exponent bits, in two
 * factors below k = -1000 (2^(k + 600) 2^-600), so that results down to the subnormal range
 * take a single rounding there and v below -746 gives 0 (as exp does). Entries at or above 0
 * give 1: v = 0 (a point with itself) is exactly 1. No fused multiply-adds (ISO C mode turns
 * off contraction), so every build and processor gives the same bits. (_rnn.c's exp_neg is
 * the single-precision form of the same reduction, to degree 7; each library is one
 * standalone C file, so they do not share code.) */
ML_CLONES ML_NO_TRAPS static void exp_nonpositive(double *restrict v, int64_t len)
{
    const double log2e = 1.4426950408889634, shift = 6755399441055744.0; /* 1.5 * 2^52 */
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    int64_t shift_bits;
    memcpy(&shift_bits, &shift, sizeof shift_bits);
    for (int64_t i = 0; i < len; i++) {
        double x = v[i];
        x = x < -746.0 ? -746.0 : (x > 0.0 ? 0.0 : x);
        const double t = x * log2e + shift;
        const double kd = t - shift;
        int64_t k;
        memcpy(&k, &t, sizeof k);
        k -= shift_bits; /* round(x log2(e)), in [-1077, 0] */
        const double r = (x - kd * ln2_hi) - kd * ln2_lo;
        double p = 1.0 / 6227020800.0; /* 1 / 13! */
        p = p * r + 1.0 / 479001600.0;
        p = p * r + 1.0 / 39916800.0;
        p = p * r + 1.0 / 3628800.0;
        p = p * r + 1.0 / 362880.0;
        p = p * r + 1.0 / 40320.0;
        p = p * r + 1.0 / 5040.0;
        p = p * r + 1.0 / 720.0;
        p = p * r + 1.0 / 120.0;
        p = p * r + 1.0 / 24.0;
        p = p * r + 1.0 / 6.0;
        p = p * r + 0.5;
        p = p * r + 1.0;
        p = p * r + 1.0;
        const int64_t low = k < -1000;
        const int64_t k1 = k + 600 * low, k2 = -600 * low;
        const uint64_t b1 = (uint64_t)(k1 + 1023) << 52, b2 = (uint64_t)(k2 + 1023) << 52;
        double s1, s2;
        memcpy(&s1, &b1, sizeof s1);
        memcpy(&s2, &b2, sizeof s2);
        v[i] = (p * s1) * s2;
    }
}

/* Test hook: exp_nonpositive on a copy of x (len entries) into out. */
ML_EXPORT void smo_exp_nonpositive(const double *x, double *out, int64_t len)
{
    memcpy(out, x, (size_t)len * sizeof(double));
    exp_nonpositive(out, len);
}

/* out[k] = K(x_rows[k], x_q) for k < len. With GCC on x86-64 Linux also compiled for AVX2
 * (four doubles per vector instead of SSE2's two), picked at the first call where the
 * processor has it; both versions round alike: the order of every operation is fixed in the
 * source, ISO C mode (-std=c99) turns off contraction into fused multiply-adds, and the
 * "avx2" target does not enable FMA instructions. -DML_NO_CLONES builds the baseline only. */
ML_CLONES static void kernel_column(Kernel *K, const int64_t *rows, int64_t len, int64_t q, double *out)
{
    const int64_t d = K->d;
    const double *xq = K->X + q * d;
    switch (K->kind) {
    case K_PRECOMPUTED:
        for (int64_t k = 0; k < len; k++) out[k] = K->X[q * K->n + rows[k]];
        break;
    case K_LINEAR:
        for (int64_t k = 0; k < len; k++) out[k] = dot(K->X + rows[k] * d, xq, d);
        break;
    case K_POLY:
        for (int64_t k = 0; k < len; k++) {
            double v = dot(K->X + rows[k] * d, xq, d) * K->gamma + K->coef0;
            v = power(v, K->degree);
            if (!isfinite(v)) K->overflow = 1;
            out[k] = v;
        }
        break;
    case K_RBF:
        for (int64_t k = 0; k < len; k++) {
            const int64_t r = rows[k];
            double v = dot(K->X + r * d, xq, d) * -2.0;
            v += K->norms[r];
            v += K->norms[q];
            if (v < 0.0) v = 0.0;
            out[k] = v * -K->gamma;
        }
        exp_nonpositive(out, len);
        break;
    default: /* K_SIGMOID */
        for (int64_t k = 0; k < len; k++)
            out[k] = tanh(dot(K->X + rows[k] * d, xq, d) * K->gamma + K->coef0);
        break;
    }
}

/* The solver's state. */

typedef struct {
    Kernel K;
    int64_t l, n; /* variables, points */
    const int64_t *index;
    const double *sign, *p, *upper, *kdiag;
    double *alpha, *score; /* over all variables */
    double *H;             /* over points */
    int per_sign;

    /* active variables, in increasing order */
    int64_t na;
    int64_t *act;
    double *a, *sc, *s, *c, *dg;
    int64_t *pt;
    unsigned char *up, *low;

    /* column cache keyed by point: LRU list through prev/next, columns K[:, q] of length n,
     * of doubles, or of floats when single (never for a precomputed matrix) */
    void **col;
    int single;
    int64_t *prev, *next;
    int64_t head, tail, count, capacity;
    double budget;

    /* scratch */
    double *work;
    int64_t *iwork; /* 0, 1, ..., n - 1 */
} Solver;

static void set_flags(Solver *S, int64_t k)
{
    const double a = S->a[k], c = S->c[k];
    if (S->s[k] > 0) {
        S->up[k] = a < c;
        S->low[k] = a > 0;
    } else {
        S->up[k] = a > 0;
        S->low[k] = a < c;
    }
}

/* Entry q of a cached column, and a kernel value as the solver uses it (rounded to single
 * precision when the columns are stored so). */
static inline double kval(const void *col, int single, int64_t q)
{
    return single ? (double)((const float *)col)[q] : ((const double *)col)[q];
}

static inline double kround(int single, double v) { return single ? (double)(float)v : v; }

static void cache_unlink(Solver *S, int64_t q)
{
    if (S->prev[q] >= 0) S->next[S->prev[q]] = S->next[q];
    else S->head = S->next[q];
    if (S->next[q] >= 0) S->prev[S->next[q]] = S->prev[q];
    else S->tail = S->prev[q];
    S->prev[q] = S->next[q] = -1;
}

static void cache_push_front(Solver *S, int64_t q)
{
    S->prev[q] = -1;
    S->next[q] = S->head;
    if (S->head >= 0) S->prev[S->head] = q;
    S->head = q;
    if (S->tail < 0) S->tail = q;
}

static void cache_clear(Solver *S)
{
    int64_t q = S->head;
    while (q >= 0) {
        int64_t nx = S->next[q];
        if (S->K.kind != K_PRECOMPUTED) free(S->col[q]);
        S->col[q] = NULL;
        S->prev[q] = S->next[q] = -1;
        q = nx;
    }
    S->head = S->tail = -1;
    S->count = 0;
}

static void cache_set_capacity(Solver *S)
{
    double per = (S->single ? 4.0 : 8.0) * (double)S->n;
    double cap = floor(S->budget / per);
    /* Four columns at least: a step holds up to three (two candidates for i, one j). */
    S->capacity = cap < 4.0 ? 4 : (cap > 1e15 ? (int64_t)1e15 : (int64_t)cap);
}

/* K[:, q] over all points, computed on a miss; NULL when out of memory.
 *
 * A precomputed (symmetric) Gram matrix holds every column already, as its row q: the
 * cache then stores no copy and hands out that row. It still keeps its list of the points
 * it would hold, evicted alike, because rebuild_inactive chooses its route (and so the
 * rounding of the rebuilt scores) from how many free columns are missing from the cache. */
static const void *cache_column(Solver *S, int64_t q)
{
    void *c = S->col[q];
    if (c != NULL) {
        if (S->head != q) {
            cache_unlink(S, q);
            cache_push_front(S, q);
        }
        return c;
    }
    const int stored = S->K.kind == K_PRECOMPUTED;
    if (S->count >= S->capacity && S->tail >= 0) {
        int64_t victim = S->tail;
        c = S->col[victim];
        S->col[victim] = NULL;
        cache_unlink(S, victim);
        S->count--;
    } else if (!stored) {
        c = malloc((size_t)S->n * (S->single ? sizeof(float) : sizeof(double)));
        if (c == NULL) return NULL;
    }
    if (stored) { /* kernel_column's K_PRECOMPUTED case reads these entries */
        c = (void *)(S->K.X + q * S->n);
    } else if (S->single) {
        kernel_column(&S->K, S->iwork, S->n, q, S->work);
        float *f = (float *)c;
        for (int64_t r = 0; r < S->n; r++) f[r] = (float)S->work[r];
    } else {
        kernel_column(&S->K, S->iwork, S->n, q, (double *)c);
    }
    S->col[q] = c;
    cache_push_front(S, q);
    S->count++;
    return c;
}

/* Activate every variable, in order. */
static void activate_all(Solver *S)
{
    S->na = S->l;
    for (int64_t t = 0; t < S->l; t++) {
        S->act[t] = t;
        S->a[t] = S->alpha[t];
        S->sc[t] = S->score[t];
        S->s[t] = S->sign[t];
        S->c[t] = S->upper[t];
        S->dg[t] = kround(S->single, S->kdiag[S->index[t]]);
        S->pt[t] = S->index[t];
        set_flags(S, t);
    }
}

static void write_back(Solver *S)
{
    for (int64_t k = 0; k < S->na; k++) {
        S->alpha[S->act[k]] = S->a[k];
        S->score[S->act[k]] = S->sc[k];
    }
}

/* Scores of the variables outside the active set, from H and the free variables: through
 * the free points' cached columns, or kernel rows between the set-aside points and the free
 * ones when that is fewer evaluations (few points set aside, many free columns not cached). */
static int rebuild_inactive(Solver *S)
{
    const int64_t l = S->l, n = S->n;
    if (S->na == l) return OK;
    unsigned char *active = (unsigned char *)calloc((size_t)l, 1);
    double *wf = (double *)calloc((size_t)n, sizeof(double));
    int64_t *F = (int64_t *)malloc((size_t)n * sizeof(int64_t));
    int64_t *R = (int64_t *)malloc((size_t)n * sizeof(int64_t));
    unsigned char *in_r = (unsigned char *)calloc((size_t)n, 1);
    unsigned char *in_f = (unsigned char *)calloc((size_t)n, 1);
    double *sum = (double *)calloc((size_t)n, sizeof(double));
    int status = OK;
    if (!active || !wf || !F || !R || !in_r || !in_f || !sum) {
        status = ERR_MEMORY;
        goto done;
    }
    for (int64_t k = 0; k < S->na; k++) active[S->act[k]] = 1;
    int64_t nf = 0, nr = 0, missing = 0;
    for (int64_t u = 0; u < l; u++) {
        const double a = S->alpha[u];
        if (a > 0 && a < S->upper[u]) {
            const int64_t q = S->index[u];
            if (!in_f[q]) {
                in_f[q] = 1;
                F[nf++] = q;
                missing += S->col[q] == NULL;
            }
            wf[q] += S->sign[u] * a;
        }
    }
    for (int64_t t = 0; t < l; t++) {
        if (active[t]) continue;
        const int64_t q = S->index[t];
        if (!in_r[q]) {
            in_r[q] = 1;
            R[nr++] = q;
        }
    }
    if ((double)missing * (double)n <= (double)nr * (double)nf) {
        for (int64_t f = 0; f < nf; f++) {
            const void *col = cache_column(S, F[f]);
            if (col == NULL) {
                status = ERR_MEMORY;
                goto done;
            }
            const double w = wf[F[f]];
            const int single = S->single;
            for (int64_t k = 0; k < nr; k++) sum[R[k]] += w * kval(col, single, R[k]);
        }
    } else {
        for (int64_t k = 0; k < nr; k++) {
            kernel_column(&S->K, F, nf, R[k], S->work);
            double acc = 0.0;
            for (int64_t f = 0; f < nf; f++) acc += kround(S->single, S->work[f]) * wf[F[f]];
            sum[R[k]] = acc;
        }
    }
    for (int64_t t = 0; t < l; t++) {
        if (active[t]) continue;
        const int64_t q = S->index[t];
        S->score[t] = -S->sign[t] * S->p[t] - S->H[q] - sum[q];
    }
done:
    free(active);
    free(wf);
    free(F);
    free(R);
    free(in_r);
    free(in_f);
    free(sum);
    return status;
}

/* A variable reached (coef = s C) or left (coef = -s C) its upper bound; col = K[:, pt]. */
static void update_H(Solver *S, double coef, const void *col)
{
    double *H = S->H;
    const int single = S->single;
    for (int64_t q = 0; q < S->n; q++) H[q] += coef * kval(col, single, q);
}

/* The shrinking rule of the NumPy route: keep[k] for the active variables; returns the
 * largest gap m - M over the groups that have both sides (0 when none). */
static double shrink_mask(Solver *S, unsigned char *keep)
{
    const int64_t na = S->na;
    double m[2] = {-INFINITY, -INFINITY}, lo[2] = {INFINITY, INFINITY};
    int any_up[2] = {0, 0}, any_low[2] = {0, 0};
    for (int64_t k = 0; k < na; k++) {
        const int g = S->per_sign ? (S->s[k] > 0 ? 0 : 1) : 0;
        const double v = S->sc[k];
        if (S->up[k]) {
            any_up[g] = 1;
            if (v > m[g]) m[g] = v;
        }
        if (S->low[k]) {
            any_low[g] = 1;
            if (v < lo[g]) lo[g] = v;
        }
    }
    int valid[2];
    double gap = 0.0;
    int have = 0;
    for (int g = 0; g < 2; g++) {
        valid[g] = any_up[g] && any_low[g];
        if (valid[g]) {
            gap = have ? fmax(gap, m[g] - lo[g]) : m[g] - lo[g];
            have = 1;
        }
    }
    for (int64_t k = 0; k < na; k++) {
        keep[k] = 1;
        /* In single mode the NumPy route checks the one group; per sign, every group's
         * thresholds apply to its own members only (the masks are disjoint). */
        const int g = S->per_sign ? (S->s[k] > 0 ? 0 : 1) : 0;
        if (!valid[g]) continue;
        const double v = S->sc[k];
        if (S->low[k] && !S->up[k] && v > m[g]) keep[k] = 0;
        if (S->up[k] && !S->low[k] && v < lo[g]) keep[k] = 0;
    }
    return have ? gap : 0.0;
}

static int compact(Solver *S, const unsigned char *keep)
{
    const int64_t na = S->na;
    int64_t w = 0;
    for (int64_t k = 0; k < na; k++) {
        if (!keep[k]) {
            /* set aside: its value stays, its score is rebuilt before it comes back */
            S->alpha[S->act[k]] = S->a[k];
            S->score[S->act[k]] = S->sc[k];
            continue;
        }
        S->act[w] = S->act[k];
        S->a[w] = S->a[k];
        S->sc[w] = S->sc[k];
        S->s[w] = S->s[k];
        S->c[w] = S->c[k];
        S->dg[w] = S->dg[k];
        S->pt[w] = S->pt[k];
        S->up[w] = S->up[k];
        S->low[w] = S->low[k];
        w++;
    }
    S->na = w;
    return OK;
}

/* Second-order working-set selection; returns 1 with (i, j, column of pt(i)) or 0 when the
 * KKT gap is below tol (or nothing can move). *gap gets the largest group gap (-inf if none). */
static int select_pair(Solver *S, double tol, int64_t *out_i, int64_t *out_j,
                       const void **out_col, double *gap, int *error)
{
    const int64_t na = S->na;
    const int n_groups = S->per_sign ? 2 : 1;
    int64_t ibest[2] = {-1, -1};
    double gmax[2] = {-INFINITY, -INFINITY}, gmin[2] = {INFINITY, INFINITY};
    if (S->per_sign) {
        for (int64_t t = 0; t < na; t++) {
            const int g = S->s[t] > 0 ? 0 : 1;
            const double v = S->sc[t];
            if (S->up[t] && v > gmax[g]) {
                gmax[g] = v;
                ibest[g] = t;
            }
            if (S->low[t] && v < gmin[g]) gmin[g] = v;
        }
    } else {
        double gx = -INFINITY, gn = INFINITY;
        int64_t ib = -1;
        for (int64_t t = 0; t < na; t++) {
            const double v = S->sc[t];
            if (S->up[t] && v > gx) {
                gx = v;
                ib = t;
            }
            if (S->low[t] && v < gn) gn = v;
        }
        gmax[0] = gx;
        gmin[0] = gn;
        ibest[0] = ib;
    }
    int found = 0;
    double best_gain = 0.0;
    *gap = -INFINITY;
    for (int g = 0; g < n_groups; g++) {
        const int64_t i = ibest[g];
        if (i < 0 || !isfinite(gmin[g])) continue;
        if (gmax[g] - gmin[g] > *gap) *gap = gmax[g] - gmin[g];
        if (gmax[g] - gmin[g] < tol) continue;
        const void *ki = cache_column(S, S->pt[i]);
        if (ki == NULL) {
            *error = ERR_MEMORY;
            return 0;
        }
        const int single = S->single;
        const double gm = gmax[g], di = S->dg[i];
        int64_t j = -1;
        double bestg = -INFINITY;
        const int64_t *pt = S->pt;
        for (int64_t t = 0; t < na; t++) {
            if (!S->low[t]) continue;
            if (S->per_sign && (S->s[t] > 0 ? 0 : 1) != g) continue;
            const double b = gm - S->sc[t];
            if (!(b > 0)) continue;
            double curv = kval(ki, single, pt[t]) * -2.0;
            curv += S->dg[t];
            curv += di;
            if (curv <= 0) curv = TAU;
            double gain = b * b;
            gain /= curv;
            if (gain > bestg) {
                bestg = gain;
                j = t;
            }
        }
        if (j < 0) continue;
        if (!found || bestg > best_gain) {
            found = 1;
            best_gain = bestg;
            *out_i = i;
            *out_j = j;
            *out_col = ki;
        }
    }
    return found;
}

static void free_solver(Solver *S)
{
    if (S->col != NULL) cache_clear(S);
    free(S->H);
    free(S->act);
    free(S->a);
    free(S->sc);
    free(S->s);
    free(S->c);
    free(S->dg);
    free(S->pt);
    free(S->up);
    free(S->low);
    free(S->col);
    free(S->prev);
    free(S->next);
    free(S->work);
    free(S->iwork);
}

/* Initial scores -s p - K (s a) and H from a feasible start alpha. */
static int initial_scores(Solver *S)
{
    const int64_t l = S->l, n = S->n;
    double *w = (double *)calloc((size_t)n, sizeof(double));
    double *hw = (double *)calloc((size_t)n, sizeof(double));
    double *sum = (double *)calloc((size_t)n, sizeof(double));
    if (!w || !hw || !sum) {
        free(w);
        free(hw);
        free(sum);
        return ERR_MEMORY;
    }
    int any = 0;
    for (int64_t u = 0; u < l; u++) {
        const double a = S->alpha[u];
        if (a == 0.0) continue;
        any = 1;
        w[S->index[u]] += S->sign[u] * a;
        if (a >= S->upper[u]) hw[S->index[u]] += S->sign[u] * S->upper[u];
    }
    if (any) {
        for (int64_t q = 0; q < n; q++) {
            if (w[q] == 0.0 && hw[q] == 0.0) continue;
            kernel_column(&S->K, S->iwork, n, q, S->work);
            for (int64_t r = 0; r < n; r++) {
                const double k = kround(S->single, S->work[r]);
                sum[r] += k * w[q];
                S->H[r] += k * hw[q];
            }
        }
    }
    for (int64_t t = 0; t < l; t++) S->score[t] = -S->sign[t] * S->p[t] - sum[S->index[t]];
    free(w);
    free(hw);
    free(sum);
    return OK;
}

/* The entry point. alpha: in, a feasible start; out, the solution. score: out, -s G over all
 * variables. X: n x d rows (or the n x n Gram matrix for kind 0). start_score and start_H:
 * the start's scores (l) and H (n), when the caller has computed them (by matrix products,
 * with the kernel values rounded as `single` says); NULL: computed here. Returns 0, or a
 * negative error code (-1 memory, -2 kernel overflow, -3 bad argument). */
ML_EXPORT int smo_solve(int64_t l, int64_t n, const int64_t *index, const double *sign,
                        const double *p, const double *upper, const double *kdiag, double *alpha,
                        double *score, int kind, int64_t d, const double *X, const double *norms,
                        double gamma, double coef0, int degree, int per_sign, double tol,
                        int64_t max_iter, double cache_bytes, int shrinking, int single,
                        const double *start_score, const double *start_H, int64_t *n_iter_out,
                        int *converged_out, double *gap_out)
{
    Solver S;
    memset(&S, 0, sizeof(S));
    if (l < 1 || n < 1 || kind < K_PRECOMPUTED || kind > K_SIGMOID) return ERR_ARGUMENT;
    S.K.kind = kind;
    S.K.n = n;
    S.K.d = kind == K_PRECOMPUTED ? n : d;
    S.K.X = X;
    S.K.norms = norms;
    S.K.gamma = gamma;
    S.K.coef0 = coef0;
    S.K.degree = degree;
    S.l = l;
    S.n = n;
    S.index = index;
    S.sign = sign;
    S.p = p;
    S.upper = upper;
    S.kdiag = kdiag;
    S.alpha = alpha;
    S.score = score;
    S.per_sign = per_sign;
    S.budget = cache_bytes;
    S.single = single && kind != K_PRECOMPUTED;
    S.head = S.tail = -1;

    const size_t L = (size_t)l, N = (size_t)n;
    S.H = (double *)calloc(N, sizeof(double));
    S.act = (int64_t *)malloc(L * sizeof(int64_t));
    S.a = (double *)malloc(L * sizeof(double));
    S.sc = (double *)malloc(L * sizeof(double));
    S.s = (double *)malloc(L * sizeof(double));
    S.c = (double *)malloc(L * sizeof(double));
    S.dg = (double *)malloc(L * sizeof(double));
    S.pt = (int64_t *)malloc(L * sizeof(int64_t));
    S.up = (unsigned char *)malloc(L);
    S.low = (unsigned char *)malloc(L);
    S.col = (void **)calloc(N, sizeof(void *));
    S.prev = (int64_t *)malloc(N * sizeof(int64_t));
    S.next = (int64_t *)malloc(N * sizeof(int64_t));
    S.work = (double *)malloc(N * sizeof(double));
    S.iwork = (int64_t *)malloc(N * sizeof(int64_t));
    int status = OK;
    if (!S.H || !S.act || !S.a || !S.sc || !S.s || !S.c || !S.dg || !S.pt || !S.up || !S.low ||
        !S.col || !S.prev || !S.next || !S.work || !S.iwork) {
        status = ERR_MEMORY;
        goto done;
    }
    for (int64_t q = 0; q < n; q++) {
        S.prev[q] = S.next[q] = -1;
        S.iwork[q] = q;
    }
    for (int64_t t = 0; t < l; t++) {
        if (index[t] < 0 || index[t] >= n) {
            status = ERR_ARGUMENT;
            goto done;
        }
    }
    cache_set_capacity(&S);
    if (start_score != NULL && start_H != NULL) {
        memcpy(S.score, start_score, L * sizeof(double));
        memcpy(S.H, start_H, N * sizeof(double));
    } else {
        status = initial_scores(&S);
        if (status != OK) goto done;
    }
    activate_all(&S);

    const int64_t shrink_every = l < 1000 ? l : 1000;
    int64_t counter = shrink_every;
    int unshrunk = 0, converged = 0;
    int64_t n_iter = 0;
    double gap = INFINITY;
    unsigned char *keep = (unsigned char *)malloc(L);
    if (keep == NULL) {
        status = ERR_MEMORY;
        goto done;
    }

    while (n_iter < max_iter) {
        if (shrinking) {
            if (--counter == 0) {
                counter = shrink_every;
                double gap_now = shrink_mask(&S, keep);
                if (!unshrunk && gap_now <= 10 * tol) {
                    /* Close to the end: rebuild the scores and let every variable back once. */
                    unshrunk = 1;
                    if (S.na < l) {
                        write_back(&S);
                        status = rebuild_inactive(&S);
                        if (status != OK) break;
                        activate_all(&S);
                    }
                    shrink_mask(&S, keep);
                }
                int64_t n_keep = 0;
                for (int64_t k = 0; k < S.na; k++) n_keep += keep[k];
                /* Cutting the cached columns costs a pass over the cache: only worth it when
                 * a tenth of the active variables or more can go. */
                if (n_keep >= 2 && (double)n_keep <= 0.9 * (double)S.na) compact(&S, keep);
            }
        }
        int64_t i = -1, j = -1;
        const void *ki = NULL;
        int error = OK;
        int found = select_pair(&S, tol, &i, &j, &ki, &gap, &error);
        if (error == OK && S.K.overflow) error = ERR_OVERFLOW;
        if (error != OK) {
            status = error;
            break;
        }
        if (!found) {
            if (S.na == l) {
                converged = 1;
                break;
            }
            /* Converged on the active set: rebuild the scores of the others and go on with
             * every variable (the KKT check must hold for all of them). */
            write_back(&S);
            status = rebuild_inactive(&S);
            if (status != OK) break;
            activate_all(&S);
            unshrunk = 1;
            counter = shrink_every;
            continue;
        }
        const double si = S.s[i], sj = S.s[j], ai = S.a[i], aj = S.a[j];
        const double ci_up = S.c[i], cj_up = S.c[j];
        const int64_t *pt = S.pt;
        const int single = S.single;
        double curv = S.dg[i] + S.dg[j] - 2.0 * kval(ki, single, pt[j]);
        if (!(curv > 0)) curv = TAU;
        double step = (S.sc[i] - S.sc[j]) / curv;
        const double hi_i = si > 0 ? ci_up - ai : ai;
        const double hi_j = sj > 0 ? aj : cj_up - aj;
        const double hi = hi_j < hi_i ? hi_j : hi_i;
        if (hi < step) step = hi;
        double new_i = ai + si * step;
        double new_j = aj - sj * step;
        if (step == hi) {
            if (hi == hi_i) new_i = si > 0 ? ci_up : 0.0;
            if (hi == hi_j) new_j = sj > 0 ? 0.0 : cj_up;
        }
        const double di = (new_i - ai) * si;
        const double dj = (new_j - aj) * sj;
        S.a[i] = new_i;
        S.a[j] = new_j;
        const void *kj = cache_column(&S, S.pt[j]);
        if (kj == NULL || S.K.overflow) {
            status = kj == NULL ? ERR_MEMORY : ERR_OVERFLOW;
            break;
        }
        const int64_t na = S.na;
        double *sc = S.sc;
        for (int64_t t = 0; t < na; t++)
            sc[t] -= kval(ki, single, pt[t]) * di + kval(kj, single, pt[t]) * dj;
        set_flags(&S, i);
        set_flags(&S, j);
        /* H follows the variables that reached or left their upper bound. */
        const int was_i = ai >= ci_up, now_i = new_i >= ci_up;
        const int was_j = aj >= cj_up, now_j = new_j >= cj_up;
        if (was_i != now_i) update_H(&S, (now_i ? 1.0 : -1.0) * si * ci_up, ki);
        if (was_j != now_j) update_H(&S, (now_j ? 1.0 : -1.0) * sj * cj_up, kj);
        n_iter++;
    }
    free(keep);
    if (status == OK) {
        write_back(&S);
        status = rebuild_inactive(&S);
    }
    if (status == OK && S.K.overflow) status = ERR_OVERFLOW;
    *n_iter_out = n_iter;
    *converged_out = converged;
    *gap_out = gap;
done:
    free_solver(&S);
    return status;
}
