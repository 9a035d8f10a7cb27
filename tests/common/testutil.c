#include "testutil.h"

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <fcntl.h>
#include <unistd.h>

void *pa_test_random_buffer(pa_rng *r, pa_dtype t, size_t n, float lo, float hi) {
    void *b = pa_random_buffer(r, t, n, lo, hi);
    cr_assert(b != NULL);
    return b;
}

void pa_test_fill_nan(pa_dtype t, void *buf, size_t n) { pa_fill_nan(t, buf, n); }

int64_t pa_test_fp8_midpoint_inputs(pa_dtype t, float scale, int steps, float *out, int64_t cap) {
    cr_assert(pa_dtype_is_fp8(t));
    const int top = t == PA_DTYPE_FP8_E4M3 ? 0x7E : 0x7B; /* the largest finite code of one sign */
    int64_t n = 0;
    for (int c = 0; c < top; c++)
        for (int sign = 0; sign < 2; sign++) {
            const uint8_t lo_code = (uint8_t)c, hi_code = (uint8_t)(c + 1);
            const double mid = ((double)pa_load_as_float(t, &lo_code, 0) + (double)pa_load_as_float(t, &hi_code, 0)) /
                               2 * (sign ? -1 : 1);
            const float x0 = (float)(mid * (double)scale); /* its quotient is about mid */
            if (!isfinite(x0) || fabsf(x0) >= 0x1p127f)
                continue; /* past float's range (the steps would reach NaNs) */
            uint32_t u;
            memcpy(&u, &x0, sizeof u);
            for (int k = -steps; k <= steps && n < cap; k++) {
                const int64_t mag = (int64_t)(u & 0x7FFFFFFFu) + k; /* k steps of x0's magnitude */
                if (mag < 0)
                    continue;
                const uint32_t v = (u & 0x80000000u) | (uint32_t)mag;
                memcpy(&out[n++], &v, sizeof v);
            }
        }
    return n;
}
const pa_test_soft_cap pa_test_soft_caps[PA_TEST_SOFT_CAPS] = {
    {0.0f, 1, "0 (off)"},
    {-0.0f, 1, "-0 (off)"},
    {0x1p-126f, 1, "FLT_MIN"},
    {30.0f, 1, "30 (Gemma 2)"},
    {0x1p126f, 1, "2^126"},
    {0x1p-127f, 0, "2^-127 (subnormal: 1 / cap is +inf)"},
    {1e-40f, 0, "1e-40 (subnormal)"},
    {0x1.000002p126f, 0, "just past 2^126"},
    {1e38f, 0, "1e38"},
    {INFINITY, 0, "+inf"},
    {NAN, 0, "NaN"},
    {-1.0f, 0, "-1"},
    {-0x1p-126f, 0, "-FLT_MIN"},
};

float *pa_test_nan_floats(size_t n) {
    float *a = pa_xmalloc(sizeof(float) * (n + 1));
    pa_fill_nan(PA_DTYPE_F32, a, n + 1);
    return a;
}

float *pa_test_to_float(pa_dtype t, const void *buf, size_t n) {
    float *f = malloc(n * sizeof(float) + 4);
    cr_assert(f != NULL);
    for (size_t i = 0; i < n; i++)
        f[i] = pa_load_as_float(t, buf, i);
    return f;
}

void pa_test_scale_in_place(pa_dtype t, void *buf, size_t first, size_t n, float s) {
    for (size_t i = first; i < first + n; i++)
        pa_store_from_float(t, buf, i, pa_load_as_float(t, buf, i) * s);
}

void pa_test_head_scales(float base, int n, int salt, float *out) {
    for (int h = 0; h < n; h++)
        out[h] = base * pa_kv_head_scale_factor(h, salt);
}

/* The first element of got [rows][heads][hs] whose head's row differs from
 * per_kv[head / group]'s, or -1. */
static int64_t heads_differ(const void *got, const void *const *per_kv, size_t rows, int heads, int kv_heads, int hs,
                            size_t esz) {
    const int group = heads / kv_heads;
    for (size_t r = 0; r < rows; r++)
        for (int h = 0; h < heads; h++) {
            const size_t at = (r * (size_t)heads + (size_t)h) * (size_t)hs * esz;
            if (memcmp((const char *)got + at, (const char *)per_kv[h / group] + at, (size_t)hs * esz) != 0)
                return (int64_t)(at / esz);
        }
    return -1;
}

int64_t pa_test_scales_per_head_oracle(pa_status (*ref)(const void *), const void *params, pa_kv_cache *kv,
                                       float *k_one, float *v_one, float *ks, float *vs, const void *out, size_t bytes,
                                       size_t rows, int heads, int hs, size_t esz) {
    const int nkv = kv->num_kv_heads;
    void **per = calloc((size_t)nkv, sizeof(void *));
    int64_t at = per ? 0 : -2;
    kv->k_scale = k_one;
    kv->v_scale = v_one;
    kv->scales_per_head = 0;
    for (int j = 0; j < nkv && at == 0; j++) { /* KV head j's scales as the one scale */
        *k_one = ks[j];
        *v_one = vs[j];
        per[j] = malloc(bytes);
        if (!per[j] || ref(params) != PA_SUCCESS)
            at = -2;
        else
            memcpy(per[j], out, bytes);
    }
    kv->k_scale = ks;
    kv->v_scale = vs;
    kv->scales_per_head = 1;
    if (at == 0)
        at = ref(params) != PA_SUCCESS ? -2 : heads_differ(out, (const void *const *)per, rows, heads, nkv, hs, esz);
    for (int j = 0; per && j < nkv; j++)
        free(per[j]);
    free(per);
    return at;
}

int pa_test_shrink(int n) {
    const char *e = getenv("PA_TEST_SHRINK");
    const long f = e ? strtol(e, NULL, 10) : 1;
    if (n <= 1 || f <= 1)
        return n;
    const long m = n / f;
    return m < 1 ? 1 : (int)m;
}

int pa_test_races_only(void) {
    const char *e = getenv("PA_TEST_RACES_ONLY");
    return e && strcmp(e, "1") == 0;
}

static long env_long(const char *name, long dflt, long lo) {
    const char *e = getenv(name);
    if (!e || !*e)
        return dflt;
    char *end = NULL;
    const long v = strtol(e, &end, 10);
    cr_assert(end && *end == '\0' && v >= lo, "%s='%s': want an integer >= %ld", name, e, lo);
    return v;
}

pa_rng pa_test_random_rng(uint64_t seed, int i) {
    pa_rng r = pa_rng_make(seed * 0x100000001B3ull + (uint64_t)i); /* splitmix64 mixes the rest */
    (void)pa_rng_next(&r);
    return r;
}

int pa_test_random_begin(const char *test, int dflt, uint64_t *seed, int *first) {
    const char *e = getenv("PA_TEST_RANDOM_SEED");
    *seed = 1;
    if (e && *e) {
        char *end = NULL;
        *seed = (uint64_t)strtoull(e, &end, 10);
        cr_assert(end && *end == '\0', "PA_TEST_RANDOM_SEED='%s': want an unsigned integer", e);
    }
    *first = (int)env_long("PA_TEST_RANDOM_FIRST", 0, 0);
    const int n = (int)env_long("PA_TEST_RANDOM_CASES", dflt, 0);
    fprintf(stderr, "%s: %d configurations from PA_TEST_RANDOM_SEED=%llu, the first %d\n", test, n,
            (unsigned long long)*seed, *first);
    return n;
}

void pa_test_random_redraw(char *buf, size_t len, uint64_t seed, int i) {
    snprintf(buf, len, "redraw: PA_TEST_RANDOM_SEED=%llu PA_TEST_RANDOM_FIRST=%d PA_TEST_RANDOM_CASES=1",
             (unsigned long long)seed, i);
}

int pa_test_pick_weighted(pa_rng *r, const int *weights, int n) {
    int total = 0;
    for (int i = 0; i < n; i++)
        total += weights[i];
    int x = pa_rng_int(r, 0, total - 1);
    for (int i = 0; i < n; i++) {
        if (x < weights[i])
            return i;
        x -= weights[i];
    }
    return n - 1;
}

int pa_test_have_gpu(void) { return pa_device_count() > 0; }

void *pa_test_dev_alloc(size_t bytes) {
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    cr_assert_eq(e, cudaSuccess, "cudaMalloc(%zu): %s", bytes, cudaGetErrorString(e));
    return p;
}

void *pa_test_dev_upload_at(const void *host, size_t bytes, size_t shift) {
    char *p = pa_test_dev_alloc(shift + bytes);
    cudaError_t e = shift ? cudaMemset(p, 0, shift) : cudaSuccess;
    cr_assert_eq(e, cudaSuccess, "upload: %s", cudaGetErrorString(e));
    e = cudaMemcpy(p + shift, host, bytes, cudaMemcpyHostToDevice);
    cr_assert_eq(e, cudaSuccess, "upload: %s", cudaGetErrorString(e));
    return p;
}

void *pa_test_dev_upload(const void *host, size_t bytes) { return pa_test_dev_upload_at(host, bytes, 0); }

void pa_test_dev_download(void *host, const void *dev, size_t bytes) {
    cudaError_t e = cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost);
    cr_assert_eq(e, cudaSuccess, "download: %s", cudaGetErrorString(e));
}

void pa_test_dev_free(void *dev) { cudaFree(dev); }

int64_t pa_test_far_lead(size_t unit, size_t esz) {
    /* past 2^31 elements and 2^32 bytes, and a unit more so no block starts exactly there */
    const uint64_t need = ((uint64_t)1 << 31) * (esz > 2 ? esz : 2) + (1u << 20);
    cr_assert(unit > 0);
    return (int64_t)((need + unit - 1) / unit + 1);
}

/* One far test at a time on the machine: the GPU test programs run side by
 * side with many jobs each, and an 80 GB H100 has run out of memory that way
 * before; a far test takes up to 16 GiB. The lock (a file lock, so a process
 * that dies drops it) is taken at the first far upload and held until
 * pa_test_far_done or the end of the process. */
static int far_fd = -1;

static void far_lock(void) {
    if (far_fd >= 0)
        return;
    far_fd = open("/tmp/pagedattn-far-test.lock", O_CREAT | O_RDWR, 0666);
    if (far_fd >= 0 && flock(far_fd, LOCK_EX) != 0) {
        close(far_fd);
        far_fd = -1;
    }
}

void pa_test_far_done(void) {
    if (far_fd >= 0) {
        flock(far_fd, LOCK_UN);
        close(far_fd);
        far_fd = -1;
    }
}

void *pa_test_dev_upload_far(const void *host, size_t bytes, size_t unit, int64_t lead) {
    cr_assert(unit > 0 && lead > 0, "far upload: a lead of whole units");
    far_lock();
    const size_t off = (size_t)lead * unit;
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, off + bytes);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        cr_skip_test("cannot allocate %.1f GiB of device address space for a cache past 2^32 bytes (%s)",
                     (double)(off + bytes) / (double)(1u << 30), cudaGetErrorString(e));
    }
    e = cudaMemcpy((char *)p + off, host, bytes, cudaMemcpyHostToDevice);
    cr_assert_eq(e, cudaSuccess, "far upload: %s", cudaGetErrorString(e));
    return p;
}

int64_t pa_test_far_cache(const pa_kv_cache *host, pa_kv_cache *dev) {
    int64_t ke = 0, ve = 0;
    cr_assert_eq(pa_kv_cache_elements(host, &ke, &ve), PA_SUCCESS, "%s", pa_last_error());
    const int64_t nb = host->num_blocks;
    cr_assert(host->block_stride == 0 && ke % nb == 0 && ve % nb == 0, "far caches: contiguous blocks");
    const size_t es = pa_dtype_size(host->dtype), kb = (size_t)(ke / nb) * es, vb = (size_t)(ve / nb) * es;
    const int64_t lead = pa_test_far_lead(vb && vb < kb ? vb : kb, es);
    dev->key = pa_test_dev_upload_far(host->key, (size_t)ke * es, kb, lead);
    dev->value = ve ? pa_test_dev_upload_far(host->value, (size_t)ve * es, vb, lead) : NULL;
    dev->num_blocks = (int32_t)(nb + lead);
    return lead;
}

int32_t *pa_test_shift_ids(const int32_t *ids, size_t n, int32_t nb, int64_t lead) {
    cr_assert(lead + nb <= INT32_MAX, "far block ids fit in int32");
    int32_t *o = malloc(n * sizeof *o + 1);
    cr_assert(o != NULL);
    for (size_t i = 0; i < n; i++)
        o[i] = ids[i] >= 0 && ids[i] < nb ? (int32_t)(ids[i] + lead) : ids[i];
    return o;
}

void pa_test_dev_sync(void) {
    cudaError_t e = cudaDeviceSynchronize();
    cr_assert_eq(e, cudaSuccess, "sync: %s", cudaGetErrorString(e));
}

int pa_test_graph = 0;

/* Interpret mode's count of work run at once beside a capture (tests/interp/interp.cpp);
 * absent from the GPU programs. */
extern unsigned long pa_interp_work_beside_capture(void) __attribute__((weak));

pa_status pa_test_launch(pa_test_launch_fn fn, void *ctx) {
    if (!pa_test_graph)
        return fn(ctx, NULL);
    const unsigned long beside = pa_interp_work_beside_capture ? pa_interp_work_beside_capture() : 0;
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreate(&s), cudaSuccess);
    cudaGraph_t g = NULL;
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    const pa_status st = fn(ctx, (pa_stream)s);
    const cudaError_t e = cudaStreamEndCapture(s, &g);
    cr_assert_eq(e, cudaSuccess,
                 "the launch broke its CUDA-graph capture (%s: %s): it synchronised, allocated, or issued work on "
                 "the legacy stream (entry status %d: %s)",
                 cudaGetErrorName(e), cudaGetErrorString(e), (int)st, st == PA_SUCCESS ? "" : pa_last_error());
    cr_assert(!pa_interp_work_beside_capture || pa_interp_work_beside_capture() == beside,
              "the launch issued %lu launches or copies on a stream other than its caller's: they ran at once, "
              "outside the CUDA graph, and a replay would not run them",
              pa_interp_work_beside_capture ? pa_interp_work_beside_capture() - beside : 0ul);
    if (st == PA_SUCCESS) {
        cudaGraphExec_t x;
        cr_assert_eq(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
        cr_assert_eq(cudaGraphLaunch(x, s), cudaSuccess);
        cr_assert_eq(cudaStreamSynchronize(s), cudaSuccess);
        cudaGraphExecDestroy(x);
    }
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
    return st;
}

void pa_test_expect_lse(const float *got, const float *want, size_t n, const char *what) {
    for (size_t i = 0; i < n; i++) {
        if (isinf(want[i])) {
            CHK(got[i] == want[i], "%s: lse[%zu] = %g, want %g", what, i, (double)got[i], (double)want[i]);
            continue;
        }
        CHK(fabsf(got[i] - want[i]) <= 2e-6f * fmaxf(1.0f, fabsf(want[i])), "%s: lse[%zu] = %.9g, want %.9g", what, i,
            (double)got[i], (double)want[i]);
    }
}

void pa_test_set_far_sinks(float *sinks, int heads) {
    if (heads > 1)
        sinks[1] = 100.0f;
    if (heads > 2)
        sinks[2] = 800.0f;
}

float *pa_test_sinks(int heads, uint64_t seed, int far) {
    float *s = pa_sink_logits(heads, seed);
    if (far)
        pa_test_set_far_sinks(s, heads);
    return s;
}

void pa_test_expect_merged_is_whole(int sinks, int T, int H, int hs, const float *out_a, const float *lse_a,
                                    const float *out_b, const float *lse_b, const float *whole,
                                    const float *whole_lse) {
    const size_t n = (size_t)H * (size_t)T, ne = n * (size_t)hs;
    float *out_m = pa_test_nan_floats(ne), *lse_m = pa_test_nan_floats(n);
    const pa_merge_attn_states_params mp = {.dtype = PA_DTYPE_F32,
                                            .num_tokens = T,
                                            .num_heads = H,
                                            .head_size = hs,
                                            .output = out_m,
                                            .prefix_output = out_a,
                                            .suffix_output = out_b,
                                            .output_lse = lse_m,
                                            .prefix_lse = lse_a,
                                            .suffix_lse = lse_b};
    cr_assert_eq(pa_ref_merge_attn_states(&mp), PA_SUCCESS, "%s", pa_last_error());
    for (size_t i = 0; i < ne; i++)
        CHK(fabsf(out_m[i] - whole[i]) <= 2e-6f, "sinks %d: element %zu merged %.9g, whole %.9g", sinks, i,
            (double)out_m[i], (double)whole[i]);
    pa_test_expect_lse(lse_m, whole_lse, n, "merged lse");
    free(out_m);
    free(lse_m);
}

int32_t *pa_test_tables_past(const int32_t *tables, int num_seqs, int stride, const int *skip, int block_size) {
    int32_t *tab = malloc(sizeof(int32_t) * (size_t)num_seqs * (size_t)stride + 1);
    cr_assert(tab != NULL);
    for (int s = 0; s < num_seqs; s++)
        for (int b = 0; b < stride; b++) {
            const int from = b + skip[s] / block_size;
            tab[(size_t)s * stride + b] = from < stride ? tables[(size_t)s * stride + from] : 0;
        }
    return tab;
}

pa_test_lse_view pa_test_lse_view_nth(int k, int heads, int tokens) {
    pa_test_lse_view v = {0, 0, tokens, 1, 0, 0, "[heads, tokens]"};
    if (k % 3 == 1)
        v = (pa_test_lse_view){1, heads, 1, heads, 0, 0, "[tokens, heads]"};
    else if (k % 3 == 2)
        v = (pa_test_lse_view){2 * (int64_t)tokens + 5, 2, 2 * (int64_t)tokens + 5, 2, 3, 0, "padded view"};
    const int64_t last = heads > 0 && tokens > 0 ? v.off + (heads - 1) * v.hs + (tokens - 1) * v.ts : v.off - 1;
    v.n = (size_t)(last + 1 + 16);
    return v;
}

float *pa_test_lse_sentinels(size_t n) {
    float *a = pa_xmalloc(sizeof(float) * (n + 1));
    const uint32_t bits = PA_TEST_LSE_SENTINEL;
    for (size_t i = 0; i <= n; i++)
        memcpy(&a[i], &bits, sizeof bits);
    return a;
}

float *pa_test_lse_gather(const float *buf, const pa_test_lse_view *v, int heads, int tokens, const char *what) {
    const size_t n = (size_t)heads * (size_t)tokens;
    float *out = pa_xmalloc(sizeof(float) * (n + 1));
    char *mine = calloc(v->n + 1, 1);
    cr_assert(mine != NULL);
    for (int h = 0; h < heads; h++)
        for (int t = 0; t < tokens; t++) {
            const size_t i = (size_t)(v->off + h * v->hs + t * v->ts);
            cr_assert(i < v->n, "%s: lse view %s puts (%d, %d) past its buffer", what, v->name, h, t);
            out[(size_t)h * (size_t)tokens + (size_t)t] = buf[i];
            mine[i] = 1;
        }
    for (size_t i = 0; i < v->n; i++) {
        uint32_t bits;
        memcpy(&bits, &buf[i], sizeof bits);
        CHK(mine[i] || bits == PA_TEST_LSE_SENTINEL, "%s: lse (%s) float %zu, outside the layout, written: %g", what,
            v->name, i, (double)buf[i]);
    }
    free(mine);
    return out;
}

void pa_test_lse_views_match(pa_test_lse_run run, void *ctx, int k0, int heads, int tokens, const float *want,
                             int exact, const char *what) {
    const size_t n = (size_t)heads * (size_t)tokens;
    for (int k = k0; k < 3; k++) {
        const pa_test_lse_view v = pa_test_lse_view_nth(k, heads, tokens);
        char w[200];
        snprintf(w, sizeof w, "%s, lse as %s", what, v.name);
        float *buf = pa_test_lse_sentinels(v.n);
        const pa_status st = run(ctx, buf + v.off, v.head_stride, v.token_stride);
        cr_assert_eq(st, PA_SUCCESS, "%s: %s", w, pa_last_error());
        float *got = pa_test_lse_gather(buf, &v, heads, tokens, w);
        if (exact)
            cr_assert(memcmp(got, want, sizeof(float) * n) == 0, "%s: lse values differ from the default layout's", w);
        else
            pa_test_expect_lse(got, want, n, w);
        free(got), free(buf);
    }
}
