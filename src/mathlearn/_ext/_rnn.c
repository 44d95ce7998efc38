/* Pointwise steps of the recurrent cells in float32 (see mathlearn/autodiff/_nn_primitives.py).
 *
 * The matrix products of a recurrence stay with NumPy's BLAS; what is here is the
 * elementwise part of one time step, fused into one pass over the batch: the gate
 * nonlinearities, the cell update and, going back, the pre-activation gradients.
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

/* With GCC on x86-64, each exported kernel is also compiled for AVX2 (8 floats per vector
 * instead of SSE2's 4) and the loader picks the version the processor supports, at the first
 * call; without contraction into fused multiply-adds (ISO C mode), both versions round
 * alike. Other compilers and processors get the baseline version only. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define ML_KERNEL ML_EXPORT __attribute__((target_clones("avx2", "default")))
#else
#define ML_KERNEL ML_EXPORT
#endif

ML_EXPORT int rnn_abi_version(void) { return 1; }

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

/* The cell update of one row: c = f c_prev + i g, tc = tanh(c), h = o tc. (Each row's
 * loops take restrict pointers, which is what lets the compiler vectorise them.) */
static void lstm_cell_row(int64_t h, const float *restrict ig, const float *restrict fg,
                          const float *restrict og, const float *restrict gg,
                          const float *restrict cp, float *restrict c, float *restrict tc,
                          float *restrict h_out) {
    for (int64_t j = 0; j < h; ++j) {
        float cj = fg[j] * cp[j] + ig[j] * gg[j];
        c[j] = cj;
        float tj = tanh32(cj);
        tc[j] = tj;
        h_out[j] = og[j] * tj;
    }
}

static void lstm_gates_row(int64_t h, const float *restrict a, const float *restrict b,
                           float *restrict gates) {
    for (int64_t j = 0; j < 3 * h; ++j) gates[j] = 0.5f + 0.5f * tanh32(a[j] + b[j]);
    for (int64_t j = 3 * h; j < 4 * h; ++j) gates[j] = tanh32(a[j] + b[j]);
}

/* One LSTM step for n rows, gates in the order [i, f, o, g], pre-activations a + b (both
 * n x 4h: the recurrent product and the input projection; the sigmoid gates' halved) ->
 * gates (activations), c = f c_prev + i g, tc = tanh(c), h_out = o tc. */
ML_KERNEL void rnn_lstm_forward_f32(int64_t n, int64_t h, const float *a, const float *b,
                                    const float *c_prev, float *gates, float *c, float *tc,
                                    float *h_out) {
    int64_t g4 = 4 * h;
    for (int64_t row = 0; row < n; ++row) {
        float *gr = gates + row * g4;
        lstm_gates_row(h, a + row * g4, b + row * g4, gr);
        lstm_cell_row(h, gr, gr + h, gr + 2 * h, gr + 3 * h, c_prev + row * h, c + row * h,
                      tc + row * h, h_out + row * h);
    }
}

static void lstm_back_row(int64_t h, const float *restrict ig, const float *restrict fg,
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

/* One LSTM step back: given dh (the gradient on h_t, n x h) and dc (on c_t), writes the
 * pre-activation gradients da (n x 4h, order [i, f, o, g], with respect to the unhalved
 * pre-activations) and replaces dc by the gradient on c_{t-1}:
 * dc_t = dc + dh o (1 - tanh^2 c_t); da_i = dc_t g i (1 - i); da_f = dc_t c_{t-1} f (1 - f);
 * da_o = dh tanh(c_t) o (1 - o); da_g = dc_t i (1 - g^2); dc_{t-1} = dc_t f. */
ML_KERNEL void rnn_lstm_backward_f32(int64_t n, int64_t h, const float *dh, float *dc,
                                     const float *gates, const float *c_prev, const float *tc,
                                     float *da) {
    int64_t g4 = 4 * h;
    for (int64_t row = 0; row < n; ++row) {
        const float *gr = gates + row * g4;
        float *dr = da + row * g4;
        lstm_back_row(h, gr, gr + h, gr + 2 * h, gr + 3 * h, dh + row * h, c_prev + row * h,
                      tc + row * h, dc + row * h, dr, dr + h, dr + 2 * h, dr + 3 * h);
    }
}

static void gru_gates_row(int64_t h, const float *restrict a, const float *restrict hh,
                          const float *restrict b_hh, float *restrict gates) {
    for (int64_t j = 0; j < 2 * h; ++j)
        gates[j] = 0.5f + 0.5f * tanh32(0.5f * (a[j] + (hh[j] + b_hh[j])));
}

static void gru_new_row(int64_t h, const float *restrict an, const float *restrict hn,
                        const float *restrict b_hn, const float *restrict r,
                        const float *restrict z, const float *restrict hp,
                        float *restrict nn, float *restrict hhn, float *restrict h_out) {
    for (int64_t j = 0; j < h; ++j) {
        float hnj = hn[j] + b_hn[j];
        hhn[j] = hnj;
        float nj = tanh32(an[j] + r[j] * hnj);
        nn[j] = nj;
        h_out[j] = nj + z[j] * (hp[j] - nj);
    }
}

/* One GRU step for n rows, gates [r, z, n]: a (n x 3h, input side x W_ih^T + b_ih),
 * hh (n x 3h, recurrent product h W_hh^T), b_hh (3h) -> gates (activations),
 * hhn = hh_n + b_hn, and h_out = n + z (h_prev - n) with n = tanh(a_n + r hhn),
 * [r, z] = s(a + hh + b_hh) (as (1 + tanh(x / 2)) / 2). */
ML_KERNEL void rnn_gru_forward_f32(int64_t n, int64_t h, const float *a, const float *hh,
                                   const float *b_hh, const float *h_prev, float *gates,
                                   float *hhn, float *h_out) {
    int64_t g3 = 3 * h;
    for (int64_t row = 0; row < n; ++row) {
        const float *ar = a + row * g3;
        const float *hr = hh + row * g3;
        float *gr = gates + row * g3;
        gru_gates_row(h, ar, hr, b_hh, gr);
        gru_new_row(h, ar + 2 * h, hr + 2 * h, b_hh + 2 * h, gr, gr + h, h_prev + row * h,
                    gr + 2 * h, hhn + row * h, h_out + row * h);
    }
}
