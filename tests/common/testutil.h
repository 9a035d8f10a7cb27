/* Shared test helpers: deterministic random data, typed buffers, NaN fills,
 * and the GPU skip rule. Tolerances live in pa_tolerance_for (one place). */
#ifndef PA_TESTUTIL_H
#define PA_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "pagedattn/pagedattn.h"
#include "problems.h"

#ifdef __cplusplus
extern "C" {
#endif

/* n elements of dtype t, uniform in [lo, hi) (rounded to t). */
void *pa_test_random_buffer(pa_rng *r, pa_dtype t, size_t n, float lo, float hi);
/* Fill n elements of dtype t with NaN (for fp8 e4m3 the NaN code 0x7F). */
void pa_test_fill_nan(pa_dtype t, void *buf, size_t n);
/* Loads a typed buffer into a new float array. */
float *pa_test_to_float(pa_dtype t, const void *buf, size_t n);

/* Sizes a test chooses (sequence counts, query and context lengths), divided
 * by the environment's PA_TEST_SHRINK (an integer >= 1, default 1) and kept at
 * least 1: interpret mode runs the kernels about 1e5 times slower than a GPU,
 * so its suites shrink the large cases rather than skip them. The reference
 * comparisons stay as they are. n <= 1 is returned unchanged. */
int pa_test_shrink(int n);

/* Random-configuration tests (decode_random, prefill_random,
 * ragged_gpu/random_configurations, cache_ops/..._random_configurations).
 * pa_test_random_begin reads how many configurations to draw,
 * PA_TEST_RANDOM_CASES (default dflt), the first one, PA_TEST_RANDOM_FIRST
 * (default 0), and the seed they are drawn from, PA_TEST_RANDOM_SEED (default
 * 1, so CI draws the same ones every run; scripts/gpu-check.sh passes a fresh
 * seed and prints it); says on stderr what `test` draws; and returns the
 * count (i runs from *first). Configuration i of seed S comes from
 * pa_test_random_rng(S, i) alone, so PA_TEST_RANDOM_SEED=S
 * PA_TEST_RANDOM_FIRST=i PA_TEST_RANDOM_CASES=1 redraws exactly the one a
 * failure names. */
int pa_test_random_begin(const char *test, int dflt, uint64_t *seed, int *first);
pa_rng pa_test_random_rng(uint64_t seed, int i);
/* "redraw: PA_TEST_RANDOM_SEED=S PA_TEST_RANDOM_FIRST=i PA_TEST_RANDOM_CASES=1" into buf. */
void pa_test_random_redraw(char *buf, size_t len, uint64_t seed, int i);
/* Picks one of n values with the given integer weights. */
int pa_test_pick_weighted(pa_rng *r, const int *weights, int n);

/* 1 if a CUDA device is usable. Call only inside a test (after the fork). */
int pa_test_have_gpu(void);
/* Device helpers that abort the test on failure (cr_assert inside). */
void *pa_test_dev_alloc(size_t bytes);
void *pa_test_dev_upload(const void *host, size_t bytes);
void pa_test_dev_download(void *host, const void *dev, size_t bytes);
void pa_test_dev_free(void *dev);
void pa_test_dev_sync(void);

/* Assert only on failure: Criterion sends every passing assertion to the
 * runner, which random loops of millions of checks turn into minutes. */
#define CHK(cond, ...)                                                                                                 \
    do {                                                                                                               \
        if (!(cond))                                                                                                   \
            cr_assert(cond, ##__VA_ARGS__);                                                                            \
    } while (0)
#define CHK_EQ(a, b, ...)                                                                                              \
    do {                                                                                                               \
        if ((a) != (b))                                                                                                \
            cr_assert_eq(a, b, ##__VA_ARGS__);                                                                         \
    } while (0)
#define CHK_EMPTY(s) CHK((s)[0] == '\0', "expected an empty string, got '%s'", (s))

#define PA_SKIP_WITHOUT_GPU()                                                                                          \
    do {                                                                                                               \
        if (!pa_test_have_gpu())                                                                                       \
            cr_skip_test("no CUDA device on this machine");                                                            \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
