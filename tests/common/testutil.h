/* Shared test helpers: deterministic random data, typed buffers, NaN fills,
 * and the GPU skip rule. Tolerances live in pa_tolerance_for (one place). */
#ifndef PA_TESTUTIL_H
#define PA_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "launch_status.h" /* pa_smem_limit_knob */
#include "pagedattn/pagedattn.h"
#include "problems.h"

#ifdef __cplusplus
extern "C" {
#endif

/* n elements of dtype t, uniform in [lo, hi) (rounded to t). */
void *pa_test_random_buffer(pa_rng *r, pa_dtype t, size_t n, float lo, float hi);
/* f32 values x whose quotient x / scale lies within `steps` f32 steps either
 * side of a midpoint between two values of the fp8 dtype t: every midpoint of
 * one sign and the other, x stepped through the float patterns around
 * RN(midpoint * scale) (values past float's range left out). Where the last
 * bit of the quotient decides the fp8 code: a product with RN(1 / scale) in
 * place of the division stores other codes for some of them, which random
 * data meets about once in 10^6 values. Writes at most cap values to out and
 * returns how many it wrote (2 * 127 * (2 * steps + 1) at the most). */
int64_t pa_test_fp8_midpoint_inputs(pa_dtype t, float scale, int steps, float *out, int64_t cap);
/* Fill n elements of dtype t with NaN (for fp8 e4m3 the NaN code 0x7F). */
void pa_test_fill_nan(pa_dtype t, void *buf, size_t n);
/* n + 1 floats on the heap, all NaN (the last a canary past an n-float output). */
float *pa_test_nan_floats(size_t n);
/* Loads a typed buffer into a new float array. */
float *pa_test_to_float(pa_dtype t, const void *buf, size_t n);
/* Elements [first, first + n) of a typed buffer times s, stored back in t
 * (the fp8_null_scales tests re-encode a cache at scale 1 with it). */
void pa_test_scale_in_place(pa_dtype t, void *buf, size_t first, size_t n, float s);
/* Per-KV-head fp8 scales (pa_kv_cache.scales_per_head): out[h] = base times
 * pa_kv_head_scale_factor(h, salt) (problems.h: from 1/2 to 4, different for
 * neighbouring heads, so a kernel reading another head's scale, or the first,
 * is visibly off; the CLI's --scales-per-head problems use the same rule). A
 * cache's scale bytes: pa_kv_scale_bytes (problems.h). */
void pa_test_head_scales(float base, int n, int salt, float *out);
/* The per-head scales' oracle for the attention references: ref(params) run once per KV head j with *k_one = ks[j] and
 * *v_one = vs[j] as the one scale (kv's k_scale / v_scale pointing at k_one,
 * v_one, scales_per_head 0), then once with kv pointing at ks and vs,
 * scales_per_head 1; out (bytes) holds the output [rows][heads][hs] after each
 * run. Each head h's rows of the last run must equal those of KV head
 * h / (heads / num_kv_heads)'s one-scale run, byte for byte. Leaves kv with
 * the scales per head. Returns the first element that differs, -1 if none, or
 * -2 if a run failed (pa_last_error says why). */
int64_t pa_test_scales_per_head_oracle(pa_status (*ref)(const void *), const void *params, pa_kv_cache *kv,
                                       float *k_one, float *v_one, float *ks, float *vs, const void *out, size_t bytes,
                                       size_t rows, int heads, int hs, size_t esz);

/* Sizes a test chooses (sequence counts, query and context lengths), divided
 * by the environment's PA_TEST_SHRINK (an integer >= 1, default 1) and kept at
 * least 1: interpret mode runs the kernels about 1e5 times slower than a GPU,
 * so its suites shrink the large cases rather than skip them. The reference
 * comparisons stay as they are. n <= 1 is returned unchanged. */
int pa_test_shrink(int n);

/* PA_TEST_RACES_ONLY=1 (the interp-race and interp-tsan suites, tests/interp/meson.build):
 * the suite looks for data races and barrier misuse, which do not depend on a
 * case's numbers, so a test that repeats one code path over other numbers
 * (persistent CTA counts, sequence lengths) may run one of them. */
int pa_test_races_only(void);

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

/* An address for validation alone (never read or written): k-th of up to 64,
 * 1 TiB apart, so a problem whose sizes no real buffer of the test backs
 * (validation limits, huge caches) gives each pointer a range of its own and
 * the entries' overlap checks (an output sharing a byte with an input) pass. */
static inline void *pa_test_addr(int k) { return (void *)(((uintptr_t)k + 1) << 40); }

/* 1 if a CUDA device is usable. Call only inside a test (after the fork). */
int pa_test_have_gpu(void);
/* Device helpers that abort the test on failure (cr_assert inside). */
void *pa_test_dev_alloc(size_t bytes);
void *pa_test_dev_upload(const void *host, size_t bytes);
/* pa_test_dev_upload with host's bytes `shift` bytes into the allocation (a
 * view that is not 16-byte aligned, say): returns the allocation (to free);
 * the copy starts at its byte shift, the bytes before it zeros. */
void *pa_test_dev_upload_at(const void *host, size_t bytes, size_t shift);
void pa_test_dev_download(void *host, const void *dev, size_t bytes);
void pa_test_dev_free(void *dev);
void pa_test_dev_sync(void);

/* One launch of an entry, eagerly or from a CUDA graph. README promises that no
 * entry allocates, synchronises or copies between host and device behind the
 * caller's back, so that every launch can be captured. With pa_test_graph set
 * (by a test, which sets it back to 0), pa_test_launch begins a capture on a new
 * blocking stream, calls fn(ctx, that stream), ends the capture, replays the graph
 * once and waits for it: an entry that synchronised, allocated or issued work on
 * the legacy stream fails the capture (on a GPU and in interpret mode alike) and
 * with it the test, and the replay's results are what the caller then checks. In
 * interpret mode work it issued on any other stream fails it too: that work ran at
 * once, outside the graph, where the replay's results would still look right.
 * Unset, fn(ctx, NULL) runs eagerly. Returns fn's status. */
typedef pa_status (*pa_test_launch_fn)(void *ctx, pa_stream stream);
extern int pa_test_graph;
pa_status pa_test_launch(pa_test_launch_fn fn, void *ctx);

/* Cache offsets past 32 bits. A serving cache is one tensor of many GiB (vLLM
 * allocates a layer's K/V as one), so block offsets pass 2^31 elements and
 * 2^32 bytes early. pa_test_far_lead: how many units (a cache block's or
 * page's bytes) put a unit's offset past both, for elements of esz bytes.
 * pa_test_dev_upload_far: a device buffer of lead units and then bytes, whose
 * first lead units are never written (on the GPU they are not even touched;
 * interpret mode maps them without backing), host's bytes after them; the
 * test names block b of its problem lead + b. Skips the test (with the reason)
 * when the address space cannot be had. What it catches: an offset in int32
 * elements or in int32 / uint32 bytes; not one in uint32 elements of 2 or 4
 * bytes (that needs 2^32 elements, 8 or 16 GiB a buffer). */
int64_t pa_test_far_lead(size_t unit, size_t esz);
void *pa_test_dev_upload_far(const void *host, size_t bytes, size_t unit, int64_t lead);
/* A far copy of a cache in host memory (contiguous blocks; the combined layout's
 * one buffer too): dev's key and value become such device buffers (value NULL
 * for the combined layout) and its num_blocks lead + host's. Returns lead. */
int64_t pa_test_far_cache(const pa_kv_cache *host, pa_kv_cache *dev);
/* The far uploads take a machine-wide lock (one far test at a time: they take
 * up to 16 GiB each, and the GPU test programs run side by side); a test drops
 * it here once it has freed its far buffers (or by ending). */
void pa_test_far_done(void);
/* A block table (or any list of block ids) with lead added to each entry in
 * [0, nb): ids outside stay as they are (padding, garbage). malloc'd. */
int32_t *pa_test_shift_ids(const int32_t *ids, size_t n, int32_t nb, int64_t lead);
/* Block tables ([num_seqs, stride]) whose row s starts skip[s] / block_size
 * blocks into tables' row s (the keys past a cut of skip[s] tokens, a whole
 * number of blocks), 0 past the row's end. malloc'd. */
int32_t *pa_test_tables_past(const int32_t *tables, int num_seqs, int stride, const int *skip, int block_size);

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

/* A reference's lse (got, n floats) against plain attention's (want,
 * pa_plain_opts.lse: its own softmax in double): equal to float rounding and
 * a few ulps of summation order (2e-6 of the magnitude, at least 1); -inf and
 * +inf only where want has them. */
void pa_test_expect_lse(const float *got, const float *want, size_t n, const char *what);
/* Moves heads 1 and 2's sinks (where there are such heads) to 100 and 800:
 * far above the problems' logits (about 13), so that e^(sink - max)
 * overflows f32 (past about 88) and, at 800, double (past 709). Those heads'
 * rows are zeros to the float, and their lse is the sink: log(e^s + sum_j
 * e^x_j) = s + log1p(sum_j e^(x_j - s)), the second term below 2^-100 here. */
void pa_test_set_far_sinks(float *sinks, int heads);
/* pa_sink_logits(heads, seed), with `far` moved by pa_test_set_far_sinks.
 * malloc'd; never NULL. */
float *pa_test_sinks(int heads, uint64_t seed, int far);

/* Merges two f32 attention states over disjoint keys ([T, H, hs] outputs, [H,
 * T] lse) with pa_ref_merge_attn_states and holds the result to the whole
 * call's output (within 2e-6) and lse (pa_test_expect_lse); `sinks` only
 * names the case in a failure. */
void pa_test_expect_merged_is_whole(int sinks, int T, int H, int hs, const float *out_a, const float *lse_a,
                                    const float *out_b, const float *lse_b, const float *whole, const float *whole_lse);

/* lse layouts for the tests (decode.h, prefill.h, merge.h): (head h, token
 * t) at off + h * hs + t * ts floats of a buffer of n floats, the rest of
 * which holds a sentinel (PA_TEST_LSE_SENTINEL, a NaN payload no kernel or
 * reference makes) that must survive the call. Layout k % 3: 0 the default
 * (strides given as 0: [heads, tokens]); 1 FlashInfer's [tokens, heads]
 * (head stride 1, token stride heads); 2 a padded view into a wider array
 * (token stride 2, head stride 2 * tokens + 5, 3 floats in). The positions
 * come from this definition, not from the library. 16 floats follow the last. */
#define PA_TEST_LSE_SENTINEL 0x7fc5a5a5u
typedef struct pa_test_lse_view {
    int64_t head_stride, token_stride; /* for the params (0: the default) */
    int64_t hs, ts, off;               /* where (h, t) sits */
    size_t n;                          /* floats in the buffer */
    const char *name;
} pa_test_lse_view;
pa_test_lse_view pa_test_lse_view_nth(int k, int heads, int tokens);
/* n floats (malloc'd) of the sentinel. */
float *pa_test_lse_sentinels(size_t n);
/* The [heads, tokens] floats (malloc'd, + 1) that buf (v.n floats) holds under
 * v; fails (CHK) when any float outside the layout lost its sentinel. An
 * unwritten (h, t) reads as the sentinel, a NaN. */
float *pa_test_lse_gather(const float *buf, const pa_test_lse_view *v, int heads, int tokens, const char *what);

/* For the references' tests: run(ctx, lse, head_stride, token_stride) writes
 * an lse of heads x tokens into lse under those strides; for layouts k0..2
 * of pa_test_lse_view_nth it runs it into a buffer of sentinels and holds
 * what lands there (pa_test_lse_gather) to want ([heads, tokens]): bit for
 * bit when exact, else pa_test_expect_lse. */
typedef pa_status (*pa_test_lse_run)(void *ctx, float *lse, int64_t head_stride, int64_t token_stride);
void pa_test_lse_views_match(pa_test_lse_run run, void *ctx, int k0, int heads, int tokens, const float *want,
                             int exact, const char *what);

/* A test of a device whose CTAs hold 99 KiB of shared memory (compute
 * capability 8.6, 8.9, 12.x), run where one is at hand: interpret mode, which
 * stands in for it under PA_INTERP_SMEM_OPTIN=101376 (set by the test after
 * any warm-up; *interp 1), a GPU that is one, or a larger GPU whose limit
 * PAGEDATTN_SMEM_LIMIT lowers as far (the library's own knob,
 * csrc/shared/launch_status.h: scripts/gpu-check.sh runs these tests so on an
 * H100; *interp 0). On a GPU whose CTAs hold 112 KiB or more (the full tiles
 * with their static bytes) under neither it skips the test. */
#define PA_SKIP_UNLESS_99_KIB_DEVICE(interp)                                                                           \
    do {                                                                                                               \
        pa_device_props dp_;                                                                                           \
        cr_assert_eq(pa_device_info(0, &dp_), PA_SUCCESS);                                                             \
        *(interp) = strstr(dp_.name, "interpreter") != NULL;                                                           \
        int capped_ = 0; /* the library's own reading of PAGEDATTN_SMEM_LIMIT */                                       \
        const int limit_ = pa_smem_limit_knob((int)dp_.smem_per_block_optin, &capped_);                                \
        if (!*(interp) && limit_ >= 114688)                                                                            \
            cr_skip_test("this device holds the full tiles; the compact ones run where a CTA holds 99 KiB "            \
                         "(or under PAGEDATTN_SMEM_LIMIT=101376)");                                                    \
    } while (0)

/* Soft caps at and around the accepted range, 0 (off) or [FLT_MIN, 2^126]
 * (decode.h), written as literals: whether each entry must accept it. */
typedef struct pa_test_soft_cap {
    float cap;
    int ok;
    const char *what;
} pa_test_soft_cap;
#define PA_TEST_SOFT_CAPS 13
extern const pa_test_soft_cap pa_test_soft_caps[PA_TEST_SOFT_CAPS];

#define PA_SKIP_WITHOUT_GPU()                                                                                          \
    do {                                                                                                               \
        if (!pa_test_have_gpu())                                                                                       \
            cr_skip_test("no CUDA device on this machine");                                                            \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
