/* Epochs of the two stochastic-gradient rules of mathlearn.linear_model: the
 * least-mean-squares rule of SGDRegressor (see mathlearn/linear_model/_sgd.py) and the
 * perceptron rule of Perceptron (mathlearn/linear_model/_perceptron.py).
 *
 * Both visit the rows of a row-major matrix in the order given (the caller shuffles), one
 * IEEE operation at a time in the order written (C99, no contraction into fused
 * multiply-adds): the same arithmetic as the numba kernel of SGDRegressor, so the two routes
 * agree bit for bit. The dot products are sequential sums, as there. */

#include <stdint.h>

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int sgd_abi_version(void) { return 1; }

/* Part of an LMS pass: the visits order[0..n) (order NULL: rows 0..n) of the rows of X
 * (n_rows x d, row-major), in place on w and *b.
 *
 * For each minibatch of batch_size consecutive visits (the last may be shorter), with
 * r_i = y_i - b - sum_j X_ij w_j (j = 0, 1, ... in turn) for its rows i:
 *
 *     w_j <- w_j + eta_k (sum_i r_i X_ij / m - alpha w_j),   b <- b + eta_k sum_i r_i / m
 *
 * (b only with fit_intercept), eta_k = etas[k] for the k-th minibatch of this part. grad is
 * a workspace of d doubles (unused, and may be NULL, when batch_size is 1). 1/2 r_i^2 is added to *loss for every visit, in turn, each
 * residual taken before the update it drives. A pass may be cut into parts at minibatch
 * boundaries (the caller's step sizes then need only one part's memory): the updates and
 * the sum of losses are those of one call. */
ML_EXPORT void sgd_lms_epoch(int64_t n, int64_t d, const double *X, const double *y,
                             const int64_t *order, double *w, double *b, const double *etas,
                             double alpha, int fit_intercept, int64_t batch_size,
                             double *grad, double *loss) {
    double acc = *loss, bias = *b;
    int64_t k_batch = 0;
    for (int64_t start = 0; start < n; start += batch_size, ++k_batch) {
        int64_t stop = start + batch_size < n ? start + batch_size : n;
        double eta = etas[k_batch];
        if (stop - start == 1) {
            /* one row: the update without the gradient buffer (grad_j / 1 = r X_ij) */
            int64_t i = order ? order[start] : start;
            const double *x = X + i * d;
            double r = y[i] - bias;
            for (int64_t j = 0; j < d; ++j) r -= x[j] * w[j];
            acc += 0.5 * r * r;
            for (int64_t j = 0; j < d; ++j) w[j] += eta * (r * x[j] - alpha * w[j]);
            if (fit_intercept) bias += eta * r;
            continue;
        }
        double m = (double)(stop - start), grad_b = 0.0;
        for (int64_t j = 0; j < d; ++j) grad[j] = 0.0;
        for (int64_t k = start; k < stop; ++k) {
            int64_t i = order ? order[k] : k;
            const double *x = X + i * d;
            double r = y[i] - bias;
            for (int64_t j = 0; j < d; ++j) r -= x[j] * w[j];
            acc += 0.5 * r * r;
            for (int64_t j = 0; j < d; ++j) grad[j] += r * x[j];
            grad_b += r;
        }
        for (int64_t j = 0; j < d; ++j) w[j] += eta * (grad[j] / m - alpha * w[j]);
        if (fit_intercept) bias += eta * grad_b / m;
    }
    *b = bias;
    *loss = acc;
}

/* One perceptron pass over the rows order[0..n) (order NULL: 0..n) of X (n x d,
 * row-major), in place on w and *b, for the problem "class positive against the rest":
 * t_i = +1 where y[i] == positive, else -1. For each visited row i, with
 * s_i = b + sum_j X_ij w_j (b = 0 without fit_intercept; the sum from b, j = 0, 1, ... in
 * turn), if t_i s_i <= 0 (a mistake), w <- w + eta t_i X_i and b <- b + eta t_i. Returns
 * the number of mistakes. */
ML_EXPORT int64_t sgd_perceptron_epoch(int64_t n, int64_t d, const double *X, const int64_t *y,
                                       int64_t positive, const int64_t *order, double *w,
                                       double *b, double eta, int fit_intercept) {
    int64_t mistakes = 0;
    double bias = fit_intercept ? *b : 0.0;
    for (int64_t k = 0; k < n; ++k) {
        int64_t i = order ? order[k] : k;
        const double *x = X + i * d;
        double t = y[i] == positive ? 1.0 : -1.0, s = bias;
        for (int64_t j = 0; j < d; ++j) s += x[j] * w[j];
        if (t * s <= 0.0) {
            double c = eta * t;
            for (int64_t j = 0; j < d; ++j) w[j] += c * x[j];
            if (fit_intercept) bias += c;
            ++mistakes;
        }
    }
    if (fit_intercept) *b = bias;
    return mistakes;
}
