/* Single-precision conjugate-gradient sweeps of implicit-feedback ALS (see
 * mathlearn/recommender/_implicit.py: ImplicitALS with dtype=np.float32).
 *
 * The sweeps of als_implicit_cg (_als.c) with the factors in float. A half-sweep updates
 * every row u of one side (the users, then the items) by `steps` CG iterations from X[u]
 * on the row's normal equations
 *
 *     (G + sum_e w_e y_e y_e^T) x = sum_e c_e y_e,     w_e = alpha r_e,  c_e = 1 + w_e,
 *
 * over the row's entries e (y_e = Y[indices[e]], the other side's factor row; r_e the
 * stored value), with G = Y^T Y + lam I formed once per half-sweep (k x k). The factors, G
 * and the CG vectors are floats. The stored values come as the container's doubles for the
 * users' half-sweep and as floats for the items' (the item-major copy, rounded): both
 * sides round r_e to float first, so each entry's weight w_e = fl(alpha fl(r_e)) is the
 * same number in both. The residual starts as
 * r = -G x + sum_e (c_e - w_e y_e . x) y_e = b - A x; each step takes
 * Ap = G p + sum_e w_e (y_e . p) y_e, a = r.r / p.Ap, x += a p, r -= a Ap,
 * p = r + (r.r new / r.r old) p.
 *
 * The objective after a sweep (history[s], in double) is
 *
 *     sum_u,i (x_u . y_i)^2 + sum_observed [c_ui (1 - s_ui)^2 - s_ui^2]
 *         + lam (||X||^2 + ||Y||^2),                    s_ui = x_u . y_i,
 *
 * the first sum being sum_i y_i^T (X^T X) y_i: with the items' base G = X^T X + lam I at
 * hand it is read as sum_i y_i^T G y_i - lam ||Y||^2, so one k x k buffer serves both
 * half-sweeps and the objective (the next sweep forms Y^T Y + lam I in it again).
 *
 * Dot products run as eight partial sums (lane j sums the coordinates a = j mod 8, the tail
 * beyond the last multiple of 8 into lane 0), added in a fixed order, whatever the row
 * (four rows' dot products go together only to share the loads). There is no fused
 * multiply-add, so the AVX2 clone and the SSE2 baseline (ML_CLONES) give the same bits;
 * only G, from SciPy's BLAS ssyrk where given, may differ between processors in its last
 * bits. */

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(ML_NO_CLONES)
#define ML_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ML_CLONES
#endif

ML_EXPORT int als32_abi_version(void) { return 2; }

/* C = alpha A A^T + beta C (uplo "U", trans "N"), column-major: SciPy's cython_blas ssyrk. */
typedef void (*ssyrk_fn)(char *uplo, char *trans, int *n, int *k, float *alpha, float *a,
                         int *lda, float *beta, float *c, int *ldc);

#define LANES 8

#if defined(__GNUC__) || defined(__clang__)
/* (GCC notes that passing such values between functions differs with and without AVX: these
 * helpers are inlined, so no call passes one.) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
/* Eight floats as one value (GCC's vector extension): one AVX register in the AVX2 clone,
 * two SSE ones in the baseline, the same arithmetic lane by lane in both. */
typedef float v8f __attribute__((vector_size(32)));

static inline __attribute__((always_inline)) v8f load8(const float *p) {
    v8f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline __attribute__((always_inline)) float lanes_sum(const v8f *v) {
    float s[LANES];
    memcpy(s, v, sizeof s);
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

static inline float dot(const float *x, const float *y, int64_t k) {
    v8f s = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    int64_t a = 0;
    for (; a + LANES <= k; a += LANES) s += load8(x + a) * load8(y + a);
    for (; a < k; ++a) s[0] += x[a] * y[a];
    return lanes_sum(&s);
}

/* d[j] = y[j] . v for four rows at once (four independent partial sums, v read once for
 * the four). */
static inline void dot_rows4(const float *const *y, const float *v, int64_t k, float *d) {
    v8f s0 = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, s1 = s0, s2 = s0, s3 = s0;
    const float *y0 = y[0], *y1 = y[1], *y2 = y[2], *y3 = y[3];
    int64_t a = 0;
    for (; a + LANES <= k; a += LANES) {
        v8f va = load8(v + a);
        s0 += load8(y0 + a) * va;
        s1 += load8(y1 + a) * va;
        s2 += load8(y2 + a) * va;
        s3 += load8(y3 + a) * va;
    }
    for (; a < k; ++a) {
        s0[0] += y0[a] * v[a];
        s1[0] += y1[a] * v[a];
        s2[0] += y2[a] * v[a];
        s3[0] += y3[a] * v[a];
    }
    d[0] = lanes_sum(&s0);
    d[1] = lanes_sum(&s1);
    d[2] = lanes_sum(&s2);
    d[3] = lanes_sum(&s3);
}
#else
/* The same lanes as arrays (compilers without GCC's vector extension). */
static inline float lanes_sum(const float *s) {
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

static inline float dot(const float *x, const float *y, int64_t k) {
    float s[LANES] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    int64_t a = 0;
    for (; a + LANES <= k; a += LANES)
        for (int j = 0; j < LANES; ++j) s[j] += x[a + j] * y[a + j];
    for (; a < k; ++a) s[0] += x[a] * y[a];
    return lanes_sum(s);
}

static inline void dot_rows4(const float *const *y, const float *v, int64_t k, float *d) {
    for (int j = 0; j < 4; ++j) d[j] = dot(y[j], v, k);
}
#endif

/* out += (f0 y0 + f1 y1) + (f2 y2 + f3 y3) */
static inline void axpy_rows4(const float *const *y, const float *f, int64_t k, float *out) {
    const float *y0 = y[0], *y1 = y[1], *y2 = y[2], *y3 = y[3];
    float f0 = f[0], f1 = f[1], f2 = f[2], f3 = f[3];
    for (int64_t a = 0; a < k; ++a)
        out[a] += (f0 * y0[a] + f1 * y1[a]) + (f2 * y2[a] + f3 * y3[a]);
}

/* out = G v for the full symmetric row-major k x k G: four rows' dot products at a time. */
static inline void symv(const float *G, const float *v, float *out, int64_t k) {
    int64_t a = 0;
    for (; a + 4 <= k; a += 4) {
        const float *rows[4] = {G + a * k, G + (a + 1) * k, G + (a + 2) * k, G + (a + 3) * k};
        dot_rows4(rows, v, k, out + a);
    }
    for (; a < k; ++a) out[a] = dot(G + a * k, v, k);
}

/* Entry e's weight fl(alpha fl(r_e)) from the double values r64, or from the float ones
 * r32 where r64 is NULL. */
static inline float weight(const double *r64, const float *r32, double alpha, int64_t e) {
    float r = (r64 != NULL) ? (float)r64[e] : r32[e];
    return (float)(alpha * (double)r);
}

/* out += sum_e f_e y_e over the entries [lo, hi) of a row, f_e = c_e - w_e (y_e . v) with
 * `target` (the residual's part), else w_e (y_e . v); four entries at a time, the last
 * block padded with the row's first entry at f = 0 (which adds nothing: the factors are
 * finite). */
static inline void rows_pass(const float *Y, const int32_t *indices, const double *r64,
                             const float *r32, int64_t lo, int64_t hi, int64_t k, double alpha,
                             const float *v, int target, float *out) {
    for (int64_t e = lo; e < hi; e += 4) {
        int64_t m = (hi - e < 4) ? hi - e : 4;
        const float *y[4];
        float d[4], f[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int64_t j = 0; j < 4; ++j) y[j] = Y + (int64_t)indices[j < m ? e + j : lo] * k;
        dot_rows4(y, v, k, d);
        for (int64_t j = 0; j < m; ++j) {
            float w = weight(r64, r32, alpha, e + j);
            f[j] = target ? (1.0f + w) - w * d[j] : w * d[j];
        }
        axpy_rows4(y, f, k, out);
    }
}

/* One half-sweep: every row's CG iterations, in place in X (n_rows x k); with terms given,
 * *terms receives sum_e c_e (1 - s_e)^2 - s_e^2 at the result (in double). work holds 3 k
 * floats. */
ML_CLONES static void half_sweep(int64_t n_rows, int64_t k, const int64_t *indptr,
                                 const int32_t *indices, const double *r64, const float *r32,
                                 double alpha, const float *Y, const float *G, float *X,
                                 int64_t steps, double *terms, float *work) {
    float *res = work, *p = work + k, *Ap = work + 2 * k;
    double total = 0.0;
    for (int64_t u = 0; u < n_rows; ++u) {
        int64_t lo = indptr[u], hi = indptr[u + 1];
        float *x = X + u * k;
        symv(G, x, res, k);
        for (int64_t a = 0; a < k; ++a) res[a] = -res[a];
        rows_pass(Y, indices, r64, r32, lo, hi, k, alpha, x, 1, res);
        memcpy(p, res, (size_t)k * sizeof(float));
        float rs = dot(res, res, k);
        for (int64_t it = 0; it < steps; ++it) {
            symv(G, p, Ap, k);
            rows_pass(Y, indices, r64, r32, lo, hi, k, alpha, p, 0, Ap);
            float pAp = dot(p, Ap, k);
            float step = (pAp > 0.0f) ? rs / pAp : 0.0f;
            for (int64_t a = 0; a < k; ++a) {
                x[a] += step * p[a];
                res[a] -= step * Ap[a];
            }
            float rs_new = dot(res, res, k);
            float beta = (rs > 0.0f) ? rs_new / rs : 0.0f;
            for (int64_t a = 0; a < k; ++a) p[a] = res[a] + beta * p[a];
            rs = rs_new;
        }
        if (terms != NULL)
            for (int64_t e = lo; e < hi; ++e) {
                double s = dot(Y + (int64_t)indices[e] * k, x, k);
                double c = 1.0f + weight(r64, r32, alpha, e);
                total += c * (1.0 - s) * (1.0 - s) - s * s;
            }
    }
    if (terms != NULL) *terms = total;
}

/* G = Y^T Y + lam I (full, row-major k x k) for the n x k row-major Y: SciPy's ssyrk where
 * given and n fits its integers (Y seen by the BLAS as the column-major k x n matrix, whose
 * A A^T this is), else a sum of outer products; then the triangle mirrored. */
static void gram(ssyrk_fn syrk, const float *Y, int64_t n, int64_t k, float lam, float *G) {
    if (syrk != NULL && n <= INT_MAX && n > 0) {
        char uplo = 'U', trans = 'N';
        int kk = (int)k, nn = (int)n;
        float one = 1.0f, zero = 0.0f;
        syrk(&uplo, &trans, &kk, &nn, &one, (float *)Y, &kk, &zero, G, &kk);
    } else {
        for (int64_t a = 0; a < k * k; ++a) G[a] = 0.0f;
        for (int64_t j = 0; j < n; ++j) {
            const float *y = Y + j * k;
            for (int64_t b = 0; b < k; ++b)
                for (int64_t a = 0; a <= b; ++a) G[b * k + a] += y[b] * y[a];
        }
    }
    /* The column-major upper triangle is the row-major lower one: mirror it. */
    for (int64_t b = 0; b < k; ++b)
        for (int64_t a = 0; a < b; ++a) G[a * k + b] = G[b * k + a];
    for (int64_t a = 0; a < k; ++a) G[a * k + a] += lam;
}

/* sum_i y_i^T G y_i over the n rows of Y (in double; tmp holds k floats). */
ML_CLONES static double quadratic_forms(const float *Y, int64_t n, int64_t k, const float *G,
                                        float *tmp) {
    double total = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const float *y = Y + i * k;
        symv(G, y, tmp, k);
        double s = 0.0;
        for (int64_t a = 0; a < k; ++a) s += (double)y[a] * tmp[a];
        total += s;
    }
    return total;
}

static double squared_norm(const float *X, int64_t n) {
    double s = 0.0;
    for (int64_t a = 0; a < n; ++a) s += (double)X[a] * X[a];
    return s;
}

/* The sweeps, in place on X (n_users x k) and Y (n_items x k): indptr_u, cols_u, r_u the
 * ratings in user-major order (r_u double), indptr_i, cols_i, r_i in item-major order (r_i
 * float). history[s] receives the objective after sweep s; with tol > 0 the sweeps stop
 * once it falls by at most tol times the previous one. G holds k^2 floats, work 4 k; syrk
 * (or NULL) is SciPy's ssyrk. Returns the sweeps run. */
ML_EXPORT int64_t als32_implicit_cg(int64_t n_users, int64_t n_items, int64_t k,
                                    const int64_t *indptr_u, const int32_t *cols_u,
                                    const double *r_u, const int64_t *indptr_i,
                                    const int32_t *cols_i, const float *r_i, double alpha,
                                    double lam, float *X, float *Y, int64_t steps,
                                    int64_t max_iter, double tol, double *history, float *G,
                                    float *work, ssyrk_fn syrk) {
    int64_t sweep = 0;
    while (sweep < max_iter) {
        double terms = 0.0;
        gram(syrk, Y, n_items, k, (float)lam, G); /* the users' base */
        half_sweep(n_users, k, indptr_u, cols_u, r_u, NULL, alpha, Y, G, X, steps, NULL, work);
        gram(syrk, X, n_users, k, (float)lam, G); /* the items' base */
        half_sweep(n_items, k, indptr_i, cols_i, NULL, r_i, alpha, X, G, Y, steps, &terms,
                   work);
        double obj = quadratic_forms(Y, n_items, k, G, work + 3 * k) + terms +
                     lam * squared_norm(X, n_users * k);
        history[sweep++] = obj;
        if (tol > 0.0 && sweep > 1 && history[sweep - 2] - obj <= tol * history[sweep - 2])
            break;
    }
    return sweep;
}
