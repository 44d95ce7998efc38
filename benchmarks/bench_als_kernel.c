/* The CG kernel of ALS (src/mathlearn/_ext/_als.c, cg_rows) timed alone, in C: explicit ALS's
 * half-sweep shape (no base term, a ridge per row, the other side's biases taken off each
 * target) on synthetic rows of equal length. Prints the best of 30 runs of 100 half-sweeps
 * and the time per entry and product (each row takes steps + 1 passes over its entries).
 *
 *     gcc -O3 -std=gnu99 -o /tmp/bench_als_kernel benchmarks/bench_als_kernel.c -lm
 *     /tmp/bench_als_kernel ROWS PER_ROW N_OTHER K STEPS [SIMD]
 *
 * e.g. `101 10 20 33 3` is the items' half-sweep of the sweep's ALS case at 1 000 ratings and
 * `20 50 101 33 3` its users'; SIMD 0 forces the portable (SSE2) loops, 1 (the default) takes
 * AVX2 with FMA where the processor has them. No BLAS: with AVX2 the kernel calls none. */
#include "../src/mathlearn/_ext/_als.c"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double uniform(void) { return (double)rand() / RAND_MAX; }

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s ROWS PER_ROW N_OTHER K STEPS [SIMD]\n", argv[0]);
        return 2;
    }
    int64_t rows = atol(argv[1]), per = atol(argv[2]), other = atol(argv[3]);
    int64_t k = atol(argv[4]), steps = atol(argv[5]), n = rows * per;
    int level = als_simd(argc > 6 ? atoi(argv[6]) : 1);
    int64_t *indptr = malloc(sizeof(int64_t) * (rows + 1)), *idx = malloc(sizeof(int64_t) * n);
    double *Y = malloc(sizeof(double) * other * k), *c = malloc(sizeof(double) * n);
    double *shift = malloc(sizeof(double) * other), *reg = malloc(sizeof(double) * rows);
    double *X0 = malloc(sizeof(double) * rows * k), *X = malloc(sizeof(double) * rows * k);
    double *work = malloc(sizeof(double) * als_cg_work(k, per, 0));
    srand(1);
    for (int64_t i = 0; i < other * k; ++i) Y[i] = 0.3 * (uniform() - 0.5);
    for (int64_t i = 0; i < other; ++i) shift[i] = uniform();
    for (int64_t u = 0; u <= rows; ++u) indptr[u] = u * per;
    for (int64_t e = 0; e < n; ++e) {
        idx[e] = rand() % other;
        c[e] = 2.0 * uniform();
    }
    for (int64_t u = 0; u < rows; ++u) reg[u] = 0.02 * (double)per;
    for (int64_t i = 0; i < rows * k; ++i) X0[i] = 0.1 * (uniform() - 0.5);
    double best = 1e30;
    for (int rep = 0; rep < 30; ++rep) {
        double t0 = now();
        for (int it = 0; it < 100; ++it) {
            memcpy(X, X0, sizeof(double) * rows * k); /* the same start every time */
            cg_rows(rows, k, indptr, idx, Y, NULL, c, shift, (double)NAN, NULL, reg, X, steps,
                    NULL, NULL, work, 0, NULL, NULL);
        }
        double t = (now() - t0) / 100;
        if (t < best) best = t;
    }
    printf("simd %d, %ld rows of %ld, k %ld, %ld steps: %.1f us (%.2f ns an entry and product)\n",
           level, (long)rows, (long)per, (long)k, (long)steps, best * 1e6,
           best * 1e9 / (double)(n * (steps + 1)));
    return 0;
}
