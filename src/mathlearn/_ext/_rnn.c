/* The recurrences of the LSTM, GRU and Elman cells in float32, forward and back (see
 * mathlearn/autodiff/_nn_primitives.py).
 *
 * One call runs every time step of a block of sequences: per step, the recurrent matrix
 * product through the sgemm that the caller passes (SciPy's BLAS, on one thread) and one
 * fused pass over the rows for the elementwise part (the gate nonlinearities, the cell
 * update and, going back, the pre-activation gradients). A Python thread running a block
 * thus makes one foreign call for the whole sequence, without the interpreter lock, and
 * the threads of a split batch never wait for each other.
 *
 * tanh and exp are computed here, in float32, by formulas that the compiler can vectorise
 * (no call into the maths library, no branch), since the library's scalar float32 tanh
 * costs more per entry than the step's matrix product:
 *
 *   exp(y): y = k ln 2 + r with k = round(y / ln 2) and |r| <= ln(2) / 2 (ln 2 split in
 *   two parts, so that k ln 2 is subtracted exactly), exp(r) by its Taylor polynomial to
 *   degree 7 (remainder below |r|^8 / 8! < 5e-9, under a tenth of float32's unit
 *   roundoff), and 2^k written directly into the exponent field.
 *
 *   tanh(x) = sign(x) (1 - u) / (1 + u) with u = exp(-2 |x|) for |x| >= 0.3; below that,
 *   its odd Taylor polynomial to degree 13 (remainder below 1.5e-3 |x|^15 < 1e-10), which
 *   avoids the cancellation in 1 - u. |x| is clamped at 40 (tanh is 1 in float32 well
 *   before that).
 *
 * The error is a few units in the last place of float32 (the tests bound it against
 * double-precision tanh), below what a float32 network can resolve. The sigmoid gates use
 * s(a) = (1 + tanh(a / 2)) / 2, their weights having been halved beforehand, so each step
 * makes one tanh pass over all its gates. */

#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
/* Results are unchanged (nothing here traps); it only lets GCC turn the selects below into
 * vector blends, which under the default -ftrapping-math it refuses to do. */
#pragma GCC optimize("no-trapping-math")
#endif

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

/* With GCC on x86-64, each exported kernel is also compiled for AVX2 and AVX-512 (8 and 16
 * floats per vector instead of SSE2's 4) and the loader picks the version the processor
 * supports, at the first call; without contraction into fused multiply-adds (ISO C mode),
 * every version rounds alike (tests/nn/test_rnn_builds.py). Other compilers and processors
 * get the baseline version, and so does a build with -DML_NO_CLONES. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(ML_NO_CLONES)
#define ML_KERNEL ML_EXPORT __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ML_KERNEL ML_EXPORT
#endif

/* The row functions below are inlined into each exported kernel, so that every clone
 * compiles them for its own target (a call would run the baseline version). */
#if defined(__GNUC__)
#define ML_ROW static inline __attribute__((always_inline))
#else
#define ML_ROW static inline
#endif

ML_EXPORT int rnn_abi_version(void) { return 2; }

static inline float exp_neg(float y) {
    /* exp(y) for -80 <= y <= 0. */
    const float log2e = 1.44269504088896341f;
    const float ln2_hi = 0.693145751953125f; /* 12 significant bits: k ln2_hi is exact */
    const float ln2_lo = 1.42860682030941723e-6f;
    const float shifter = 12582912.0f;       /* 1.5 * 2^23: adding it rounds to an integer */
    float kf = (y * log2e + shifter) - shifter;
    float r = (y - kf * ln2_hi) - kf * ln2_lo;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int32_t bits = ((int32_t)kf + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

static inline float tanh32(float x) {
    float ax = x < 0.0f ? -x : x;
    ax = ax < 40.0f ? ax : 40.0f;
    float u = exp_neg(-2.0f * ax);
    float big = (1.0f - u) / (1.0f + u);
    float x2 = ax * ax;
    /* tanh x = x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835 - 1382x^11/155925
     *          + 21844x^13/6081075 - ... */
    float q = 21844.0f / 6081075.0f;
    q = q * x2 - 1382.0f / 155925.0f;
    q = q * x2 + 62.0f / 2835.0f;
    q = q * x2 - 17.0f / 315.0f;
    q = q * x2 + 2.0f / 15.0f;
    q = q * x2 - 1.0f / 3.0f;
    float small = ax + ax * x2 * q;
    float t = ax < 0.3f ? small : big;
    return x < 0.0f ? -t : t;
}

/* out[j] = tanh(a[j]) for j < len. */
ML_KERNEL void rnn_tanh_f32(int64_t len, const float *a, float *out) {
    for (int64_t j = 0; j < len; ++j) out[j] = tanh32(a[j]);
}

/* C = beta C + alpha op(A) op(B), column-major, 32-bit integers: the Fortran interface that
 * SciPy exports in scipy.linalg.cython_blas. */
typedef void (*sgemm_fn)(char *transa, char *transb, int *m, int *n, int *k, float *alpha,
                         float *a, int *lda, float *b, int *ldb, float *beta, float *c,
                         int *ldc);

/* Row-major C (rows x cols, leading dimension ldc) = beta C + A (rows x inner) B (inner x
 * cols): the column-major BLAS computes C^T = B^T A^T, so B is its left factor. */
static void matmul(sgemm_fn gemm, int64_t rows, int64_t cols, int64_t inner, const float *a,
                   int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                   int64_t ldc) {
    char no = 'N';
    int m = (int)cols, n = (int)rows, k = (int)inner;
    int la = (int)ldb, lb = (int)lda, lc = (int)ldc;
    float one = 1.0f;
    gemm(&no, &no, &m, &n, &k, &one, (float *)b, &la, (float *)a, &lb, &beta, c, &lc);
}

/* A block of n rows (sequences) runs every step of its recurrence in one call, with no
 * interpreter in the loop: per step one sgemm (the BLAS pointer passed by the caller, which
 * runs it on one thread) and one pass over the rows for the pointwise part. Arrays are
 * time-major and contiguous per block: a[k] is the n x width slab of step k. A mask (t x n,
 * 1 on real steps, 0 on the padding after a sequence's end) may be NULL; a padded step
 * carries the state unchanged and, going back, passes its gradients through unchanged with
 * zero pre-activation gradients. */

/* The LSTM's gates of one row in place, order [i, f, o, g]: activations of the
 * pre-activations gates + b (sigmoid ones halved); then c = f c_prev + i g, tc = tanh(c),
 * h_out = o tc. */
ML_ROW void lstm_cell_row(int64_t h, float *restrict gates, const float *restrict b,
                          const float *restrict cp, float *restrict c, float *restrict tc,
                          float *restrict h_out) {
    for (int64_t j = 0; j < 3 * h; ++j) gates[j] = 0.5f + 0.5f * tanh32(gates[j] + b[j]);
    for (int64_t j = 3 * h; j < 4 * h; ++j) gates[j] = tanh32(gates[j] + b[j]);
    const float *ig = gates, *fg = gates + h, *og = gates + 2 * h, *gg = gates + 3 * h;
    for (int64_t j = 0; j < h; ++j) {
        float cj = fg[j] * cp[j] + ig[j] * gg[j];
        c[j] = cj;
        float tj = tanh32(cj);
        tc[j] = tj;
        h_out[j] = og[j] * tj;
    }
}

/* LSTM forward over t steps: gates (t x n x 4h) holds on entry the input projection
 * x_k W_in and receives the activations of that + h_{k-1} W_hh^T + b; hs, cs
 * (t + 1 x n x h) hold h_0, c_0 in their first slab and receive the states; tcs
 * (t x n x h) tanh(c_k). whh_t (h x 4h), W_in and b are permuted to the order
 * [i, f, o, g], their sigmoid rows halved. */
ML_KERNEL void rnn_lstm_forward_seq_f32(int64_t t, int64_t n, int64_t h, sgemm_fn gemm,
                                        const float *whh_t, const float *b, float *gates,
                                        float *hs, float *cs, float *tcs, const float *mask) {
    int64_t g4 = 4 * h, sh = n * h;
    for (int64_t k = 0; k < t; ++k) {
        float *gk = gates + k * n * g4;
        const float *hp = hs + k * sh, *cp = cs + k * sh;
        float *hn = hs + (k + 1) * sh, *cn = cs + (k + 1) * sh, *tk = tcs + k * sh;
        matmul(gemm, n, g4, h, hp, h, whh_t, g4, 1.0f, gk, g4);
        for (int64_t row = 0; row < n; ++row) {
            int64_t o = row * h;
            if (mask != NULL && mask[k * n + row] == 0.0f) {
                memcpy(hn + o, hp + o, (size_t)h * sizeof(float));
                memcpy(cn + o, cp + o, (size_t)h * sizeof(float));
                continue;
            }
            lstm_cell_row(h, gk + row * g4, b, cp + o, cn + o, tk + o, hn + o);
        }
    }
}

ML_ROW void lstm_back_row(int64_t h, const float *restrict ig, const float *restrict fg,
                          const float *restrict og, const float *restrict gg,
                          const float *restrict dh, const float *restrict cp,
                          const float *restrict tc, float *restrict dc, float *restrict da_i,
                          float *restrict da_f, float *restrict da_o, float *restrict da_g) {
    for (int64_t j = 0; j < h; ++j) {
        float t = tc[j];
        float dct = dc[j] + dh[j] * og[j] * (1.0f - t * t);
        da_i[j] = dct * gg[j] * ig[j] * (1.0f - ig[j]);
        da_f[j] = dct * cp[j] * fg[j] * (1.0f - fg[j]);
        da_o[j] = dh[j] * t * og[j] * (1.0f - og[j]);
        da_g[j] = dct * ig[j] * (1.0f - gg[j] * gg[j]);
        dc[j] = dct * fg[j];
    }
}

ML_ROW void add_row(int64_t h, float *restrict y, const float *restrict x) {
    for (int64_t j = 0; j < h; ++j) y[j] += x[j];
}

/* LSTM backward through time over the block's t steps. dh, dc (n x h) hold on entry the
 * gradients on h_t, c_t and receive those on h_0, c_0; dy (the gradient on the output of
 * step k, rows of h floats) is at dy + k dy_step; da (t x n x 4h) receives the gradients
 * with respect to the (unhalved) pre-activations, order [i, f, o, g]; w_hh (4h x h) is
 * W_hh in that order. Per step: dh_k = dh + dy_k, dc_t = dc + dh_k o (1 - tanh^2 c_t),
 * da_i = dc_t g i (1 - i), da_f = dc_t c_{t-1} f (1 - f), da_o = dh_k tanh(c_t) o (1 - o),
 * da_g = dc_t i (1 - g^2), dc <- dc_t f, dh <- da W_hh. */
ML_KERNEL void rnn_lstm_backward_seq_f32(int64_t t, int64_t n, int64_t h, sgemm_fn gemm,
                                         const float *w_hh, const float *gates, const float *cs,
                                         const float *tcs, const float *dy, int64_t dy_step,
                                         const float *mask, float *dh, float *dc, float *da) {
    int64_t g4 = 4 * h, sh = n * h;
    for (int64_t k = t - 1; k >= 0; --k) {
        const float *gk = gates + k * n * g4, *cp = cs + k * sh, *tk = tcs + k * sh;
        const float *dyk = dy + k * dy_step;
        float *dak = da + k * n * g4;
        for (int64_t row = 0; row < n; ++row) {
            int64_t o = row * h;
            float *dr = dak + row * g4;
            if (mask != NULL && mask[k * n + row] == 0.0f) {
                memset(dr, 0, (size_t)g4 * sizeof(float));
                continue;
            }
            const float *gr = gk + row * g4;
            add_row(h, dh + o, dyk + o);
            lstm_back_row(h, gr, gr + h, gr + 2 * h, gr + 3 * h, dh + o, cp + o, tk + o,
                          dc + o, dr, dr + h, dr + 2 * h, dr + 3 * h);
            /* A padded row keeps dh (added to below); a real one is replaced. */
            if (mask != NULL) memset(dh + o, 0, (size_t)h * sizeof(float));
        }
        matmul(gemm, n, h, g4, dak, g4, w_hh, h, mask != NULL ? 1.0f : 0.0f, dh, h);
    }
}

/* The GRU's step for one row, gates [r, z, n]: on entry gates holds the input product
 * x W_ih^T, hh the recurrent one h W_hh^T; with a = x W_ih^T + b_ih, [r, z] =
 * s(a + hh + b_hh) (as (1 + tanh(x / 2)) / 2), hhn = hh_n + b_hn, n = tanh(a_n + r hhn),
 * h_out = n + z (h_prev - n). */
ML_ROW void gru_row(int64_t h, float *restrict gates, const float *restrict b_ih,
                    const float *restrict hh, const float *restrict b_hh,
                    const float *restrict hp, float *restrict hhn, float *restrict h_out) {
    for (int64_t j = 0; j < 2 * h; ++j)
        gates[j] = 0.5f + 0.5f * tanh32(0.5f * ((gates[j] + b_ih[j]) + (hh[j] + b_hh[j])));
    const float *r = gates, *z = gates + h;
    float *nn = gates + 2 * h;
    const float *hn = hh + 2 * h, *bn = b_hh + 2 * h, *bi = b_ih + 2 * h;
    for (int64_t j = 0; j < h; ++j) {
        float hnj = hn[j] + bn[j];
        hhn[j] = hnj;
        float nj = tanh32((nn[j] + bi[j]) + r[j] * hnj);
        nn[j] = nj;
        h_out[j] = nj + z[j] * (hp[j] - nj);
    }
}

/* GRU forward over t steps: gates (t x n x 3h) holds on entry x_k W_ih^T and receives
 * the activations; hhn (t x n x h) receives h W_hn^T + b_hn (needed going back); hs
 * (t + 1 x n x h) holds h_0 and receives the states; whh_t (h x 3h) is W_hh^T; work holds
 * n x 3h floats. */
ML_KERNEL void rnn_gru_forward_seq_f32(int64_t t, int64_t n, int64_t h, sgemm_fn gemm,
                                       const float *whh_t, const float *b_ih,
                                       const float *b_hh, float *gates, float *hhn, float *hs,
                                       const float *mask, float *work) {
    int64_t g3 = 3 * h, sh = n * h;
    for (int64_t k = 0; k < t; ++k) {
        float *gk = gates + k * n * g3, *nk = hhn + k * sh;
        const float *hp = hs + k * sh;
        float *hn = hs + (k + 1) * sh;
        matmul(gemm, n, g3, h, hp, h, whh_t, g3, 0.0f, work, g3);
        for (int64_t row = 0; row < n; ++row) {
            int64_t o = row * h;
            if (mask != NULL && mask[k * n + row] == 0.0f) {
                memcpy(hn + o, hp + o, (size_t)h * sizeof(float));
                continue;
            }
            gru_row(h, gk + row * g3, b_ih, work + row * g3, b_hh, hp + o, nk + o, hn + o);
        }
    }
}

/* One GRU row back: with dh the gradient on h_k (dy added), da_n = dh (1 - z) (1 - n^2);
 * input side dx = [da_n hhn r (1 - r), dh (h_prev - n) z (1 - z), da_n], recurrent side
 * dhh = [the same two, da_n r]; dh <- dh z (the direct path; dhh W_hh is added after). */
ML_ROW void gru_back_row(int64_t h, const float *restrict gates, const float *restrict hhn,
                         const float *restrict hp, float *restrict dh, float *restrict dx,
                         float *restrict dhh) {
    const float *r = gates, *z = gates + h, *nn = gates + 2 * h;
    for (int64_t j = 0; j < h; ++j) {
        float d = dh[j];
        float dan = d * (1.0f - z[j]) * (1.0f - nn[j] * nn[j]);
        float dar = dan * hhn[j] * (r[j] * (1.0f - r[j]));
        float daz = d * (hp[j] - nn[j]) * (z[j] * (1.0f - z[j]));
        dx[j] = dar;
        dx[h + j] = daz;
        dx[2 * h + j] = dan;
        dhh[j] = dar;
        dhh[h + j] = daz;
        dhh[2 * h + j] = dan * r[j];
        dh[j] = d * z[j];
    }
}

/* GRU backward through time: dh (n x h) holds the gradient on h_t and receives that on
 * h_0; dy as for the LSTM; dxa, dha (t x n x 3h) receive the pre-activation gradients on
 * the input and on the recurrent side; w_hh (3h x h). dh <- dh z + dha_k W_hh per step. */
ML_KERNEL void rnn_gru_backward_seq_f32(int64_t t, int64_t n, int64_t h, sgemm_fn gemm,
                                        const float *w_hh, const float *gates,
                                        const float *hhn, const float *hs, const float *dy,
                                        int64_t dy_step, const float *mask, float *dh,
                                        float *dxa, float *dha) {
    int64_t g3 = 3 * h, sh = n * h;
    for (int64_t k = t - 1; k >= 0; --k) {
        const float *gk = gates + k * n * g3, *nk = hhn + k * sh, *hp = hs + k * sh;
        const float *dyk = dy + k * dy_step;
        float *dxk = dxa + k * n * g3, *dhk = dha + k * n * g3;
        for (int64_t row = 0; row < n; ++row) {
            int64_t o = row * h;
            if (mask != NULL && mask[k * n + row] == 0.0f) {
                memset(dxk + row * g3, 0, (size_t)g3 * sizeof(float));
                memset(dhk + row * g3, 0, (size_t)g3 * sizeof(float));
                continue;
            }
            add_row(h, dh + o, dyk + o);
            gru_back_row(h, gk + row * g3, nk + o, hp + o, dh + o, dxk + row * g3,
                         dhk + row * g3);
        }
        matmul(gemm, n, h, g3, dhk, g3, w_hh, h, 1.0f, dh, h);
    }
}

/* Elman forward: hs (t + 1 x n x h) holds h_0 in its first slab and x_k W_ih^T in slab
 * k + 1, which receives h_{k+1} = tanh(that + h_k W_hh^T + b); whh_t (h x h) is W_hh^T. */
ML_KERNEL void rnn_elman_forward_seq_f32(int64_t t, int64_t n, int64_t h, sgemm_fn gemm,
                                         const float *whh_t, const float *b, float *hs,
                                         const float *mask) {
    int64_t sh = n * h;
    for (int64_t k = 0; k < t; ++k) {
        const float *hp = hs + k * sh;
        float *hn = hs + (k + 1) * sh;
        matmul(gemm, n, h, h, hp, h, whh_t, h, 1.0f, hn, h);
        for (int64_t row = 0; row < n; ++row) {
            int64_t o = row * h;
            if (mask != NULL && mask[k * n + row] == 0.0f) {
                memcpy(hn + o, hp + o, (size_t)h * sizeof(float));
                continue;
            }
            float *y = hn + o;
            for (int64_t j = 0; j < h; ++j) y[j] = tanh32(y[j] + b[j]);
        }
    }
}

ML_ROW void elman_back_row(int64_t h, const float *restrict hk, float *restrict dh,
                           const float *restrict dy, float *restrict da) {
    for (int64_t j = 0; j < h; ++j) da[j] = (dh[j] + dy[j]) * (1.0f - hk[j] * hk[j]);
}

/* Elman backward: dh (n x h) holds the gradient on h_t and receives that on h_0; da
 * (t x n x h) receives da_k = (dh + dy_k) (1 - h_{k+1}^2); dh <- da_k W_hh. */
ML_KERNEL void rnn_elman_backward_seq_f32(int64_t t, int64_t n, int64_t h, sgemm_fn gemm,
                                          const float *w_hh, const float *hs, const float *dy,
                                          int64_t dy_step, const float *mask, float *dh,
                                          float *da) {
    int64_t sh = n * h;
    for (int64_t k = t - 1; k >= 0; --k) {
        const float *hk = hs + (k + 1) * sh, *dyk = dy + k * dy_step;
        float *dak = da + k * sh;
        for (int64_t row = 0; row < n; ++row) {
            int64_t o = row * h;
            if (mask != NULL && mask[k * n + row] == 0.0f) {
                memset(dak + o, 0, (size_t)h * sizeof(float));
                continue;
            }
            elman_back_row(h, hk + o, dh + o, dyk + o, dak + o);
            if (mask != NULL) memset(dh + o, 0, (size_t)h * sizeof(float));
        }
        matmul(gemm, n, h, h, dak, h, w_hh, h, mask != NULL ? 1.0f : 0.0f, dh, h);
    }
}
