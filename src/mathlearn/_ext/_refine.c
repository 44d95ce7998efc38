/* Doubled-precision residuals of LinearRegression's iterative refinement (see
 * mathlearn/linear_model/_refinement.py).
 *
 * f = y - r - A x - x0 (x0 the intercept's coefficient, when there is one) and g = -A^T r
 * (with -sum_i r_i last, for the intercept), each as accurate as if computed in twice the
 * working precision and rounded: every product is split exactly into a float64 product and
 * its rounding error (Dekker's TwoProduct with Veltkamp's splitting, no fused multiply-add
 * needed), every addition into a sum and its rounding error (Knuth's TwoSum), and the errors
 * are accumulated in plain arithmetic (Ogita, Rump & Oishi's Dot2). The caller scales y, r
 * and x by powers of two so that no split can overflow. Compiled as ISO C99, so no
 * expression is contracted into a fused multiply-add and the transformations stay exact. */

#include <stdint.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

#define SPLITTER 134217729.0 /* 2^27 + 1 */

ML_EXPORT int refine_abi_version(void) { return 1; }

static void split(double a, double *hi, double *lo) {
    double c = SPLITTER * a;
    double h = c - (c - a);
    *hi = h;
    *lo = a - h;
}

/* s + p with its rounding error added to *e */
static double two_sum(double s, double p, double *e) {
    double u = s + p;
    double z = u - s;
    *e += (s - (u - z)) + (p - z);
    return u;
}

/* A: n x m row-major; x: m + intercept coefficients; r enters f, rg (r under its own power
 * of two scaling) enters g; work: 2 (m + 1) numbers; f: n outputs, g: m + intercept. On
 * return work holds g unrounded: its sums (m + 1), then their errors (m + 1); the Dask path
 * adds these pairs across row blocks. */
ML_EXPORT void refine_residuals(int64_t n, int64_t m, const double *A, const double *y,
                                const double *r, const double *x, const double *rg,
                                int intercept, double *f, double *g, double *work) {
    double *gh = work, *gl = work + m + 1;
    double x0 = intercept ? x[m] : 0.0;
    for (int64_t j = 0; j <= m; ++j) gh[j] = gl[j] = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double *a = A + i * m;
        double e = 0.0;
        double s = two_sum(y[i], -r[i], &e);
        s = two_sum(s, -x0, &e);
        double rh, rl;
        split(rg[i], &rh, &rl);
        for (int64_t j = 0; j < m; ++j) {
            double ah, al, xh, xl;
            split(a[j], &ah, &al);
            split(x[j], &xh, &xl);
            /* -a_j x_j exactly as p + q */
            double p = a[j] * x[j];
            double q = ((ah * xh - p) + ah * xl + al * xh) + al * xl;
            s = two_sum(s, -p, &e);
            e -= q;
            /* g_j -= a_j r_i */
            double pg = a[j] * rg[i];
            double qg = ((ah * rh - pg) + ah * rl + al * rh) + al * rl;
            gh[j] = two_sum(gh[j], -pg, &gl[j]);
            gl[j] -= qg;
        }
        if (intercept) gh[m] = two_sum(gh[m], -rg[i], &gl[m]);
        f[i] = s + e;
    }
    for (int64_t j = 0; j < m + (intercept ? 1 : 0); ++j) g[j] = gh[j] + gl[j];
}
