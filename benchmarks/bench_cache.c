/* `pagedattn bench|check cache`: reshape_and_cache (every layout; the combined
 * layout is the ragged path's write_to_kv_cache).
 *
 * The problem: --seqs sequences each write --qlen new tokens (default 1: one
 * decode step) into their own blocks of a pool twice as large as needed, the
 * blocks in random order, each sequence starting at a random offset in its
 * first block. Every slot is written once per call: no reuse that flatters L2.
 * Bytes counted: K and V read once and written once, plus the slot mapping. */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cli.h"
#include "problems.h"

typedef struct cache_problem {
    pa_kv_input in;
    pa_kv_cache kv;
    int64_t *slots;
    void *k, *v, *kc, *vc;
    size_t in_elems, k_elems, v_elems;
    float k_scale, v_scale;     /* fp8 caches: the one scale, or the base of the scales per head */
    float *k_scales, *v_scales; /* --scales-per-head over fp8: one per KV head (kv.k_scale, kv.v_scale); else NULL */
    int64_t tokens;
} cache_problem;

static void cache_problem_free(cache_problem *c) {
    free(c->k_scales);
    free(c->v_scales);
    free(c->slots);
    free(c->k);
    free(c->v);
    free(c->kc);
    free(c->vc);
    memset(c, 0, sizeof *c);
}

/* Validates the shape (one line + exit code on failure) and builds the host problem. */
static int cache_problem_make(const pa_op_opts *o, const char *cmd, cache_problem *c) {
    memset(c, 0, sizeof *c);
    const int qlen = o->qlen > 0 ? o->qlen : 1, bs = o->block_size;
    c->tokens = (int64_t)o->seqs * qlen;
    if (o->dtype != PA_DTYPE_F32 && o->dtype != PA_DTYPE_F16 && o->dtype != PA_DTYPE_BF16) {
        fprintf(stderr, "pagedattn %s cache: input dtype %s unsupported; supported: f32, f16, bf16\n", cmd,
                pa_dtype_name(o->dtype));
        return PA_CLI_EXIT_USAGE;
    }
    if (o->cache_dtype != o->dtype && !pa_dtype_is_fp8(o->cache_dtype)) {
        fprintf(stderr, "pagedattn %s cache: %s -> %s unsupported; the cache dtype is the input's or fp8\n", cmd,
                pa_dtype_name(o->dtype), pa_dtype_name(o->cache_dtype));
        return PA_CLI_EXIT_USAGE;
    }
    const int64_t blocks_per_seq = (qlen + bs - 1) / bs + 1; /* +1: the random start offset */
    const int64_t num_blocks = 2 * (int64_t)o->seqs * blocks_per_seq;
    if (num_blocks > (1 << 30) || c->tokens > (1 << 28)) {
        fprintf(stderr, "pagedattn %s cache: %lld tokens is too many for this benchmark\n", cmd, (long long)c->tokens);
        return PA_CLI_EXIT_USAGE;
    }
    char dummy[16];
    c->kv = (pa_kv_cache){.layout = o->layout,
                          .dtype = o->cache_dtype,
                          .key = dummy,
                          .value = o->layout == PA_LAYOUT_COMBINED ? NULL : dummy,
                          .num_blocks = (int32_t)num_blocks,
                          .block_size = bs,
                          .num_kv_heads = o->kv_heads,
                          .head_size = o->head_size};
    int64_t ke = 0, ve = 0;
    if (pa_kv_cache_validate(&c->kv) != PA_SUCCESS || pa_kv_cache_elements(&c->kv, &ke, &ve) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn %s cache: %s\n", cmd, pa_last_error());
        return PA_CLI_EXIT_USAGE;
    }
    /* Host memory: the cache (twice for check: the GPU's copy back), K and V in, the slot mapping (8 B a
     * token) and the block permutation (8 B a block). */
    const double bytes = (double)ke * pa_dtype_size(o->cache_dtype) * (o->layout == PA_LAYOUT_COMBINED ? 1 : 2) *
                             (strcmp(cmd, "check") ? 1 : 2) +
                         2.0 * (double)c->tokens * o->kv_heads * o->head_size * pa_dtype_size(o->dtype) +
                         8.0 * (double)c->tokens + 8.0 * (double)num_blocks;
    if (bytes > 8e9) {
        fprintf(stderr, "pagedattn %s cache: the problem needs %.1f GB of host memory; at most 8 GB\n", cmd,
                bytes / 1e9);
        return PA_CLI_EXIT_USAGE;
    }
    pa_rng rng = pa_rng_make(o->seed);
    c->in_elems = (size_t)c->tokens * o->kv_heads * o->head_size;
    c->k = pa_random_buffer(&rng, o->dtype, c->in_elems, -2.0f, 2.0f);
    c->v = pa_random_buffer(&rng, o->dtype, c->in_elems, -2.0f, 2.0f);
    c->k_elems = (size_t)ke;
    c->v_elems = (size_t)ve;
    const size_t es = pa_dtype_size(o->cache_dtype);
    c->kc = malloc(c->k_elems * es + 16);
    c->vc = o->layout == PA_LAYOUT_COMBINED ? NULL : malloc(c->v_elems * es + 16);
    c->slots = malloc(sizeof(int64_t) * (size_t)c->tokens + 8);
    int64_t *perm = malloc(sizeof(int64_t) * (size_t)num_blocks);
    if (!c->kc || (o->layout != PA_LAYOUT_COMBINED && !c->vc) || !c->slots || !perm) {
        free(perm);
        cache_problem_free(c);
        fprintf(stderr, "pagedattn %s cache: out of host memory\n", cmd);
        return PA_CLI_EXIT_FAIL;
    }
    pa_fill_nan(o->cache_dtype, c->kc, c->k_elems);
    if (c->vc)
        pa_fill_nan(o->cache_dtype, c->vc, c->v_elems);
    for (int64_t i = 0; i < num_blocks; i++)
        perm[i] = i;
    for (int64_t i = num_blocks - 1; i > 0; i--) {
        int64_t j = (int64_t)(pa_rng_next(&rng) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int s = 0; s < o->seqs; s++) {
        const int start = pa_rng_int(&rng, 0, bs - 1);
        for (int j = 0; j < qlen; j++) {
            const int pos = start + j;
            c->slots[(int64_t)s * qlen + j] = perm[(int64_t)s * blocks_per_seq + pos / bs] * bs + pos % bs;
        }
    }
    free(perm);
    /* fp8 caches get scales != 1 so a missing scale shows. */
    c->k_scale = pa_dtype_is_fp8(o->cache_dtype) ? 0.05f : 1.0f;
    c->v_scale = pa_dtype_is_fp8(o->cache_dtype) ? 0.03f : 1.0f;
    c->kv.key = c->kc;
    c->kv.value = c->vc;
    c->kv.k_scale = &c->k_scale;
    c->kv.v_scale = &c->v_scale;
    if (o->scales_per_head && pa_dtype_is_fp8(o->cache_dtype)) { /* each KV head its own (problems.h) */
        c->k_scales = pa_kv_head_scales(c->k_scale, o->kv_heads, 0);
        c->v_scales = pa_kv_head_scales(c->v_scale, o->kv_heads, 1);
        c->kv.k_scale = c->k_scales;
        c->kv.v_scale = c->v_scales;
        c->kv.scales_per_head = 1;
    }
    c->in = (pa_kv_input){.key = c->k, .value = c->v, .dtype = o->dtype, .num_tokens = c->tokens};
    return 0;
}

/* Device copies of a host problem: same descriptors, device pointers. */
typedef struct cache_dev {
    pa_kv_input in;
    pa_kv_cache kv;
    int64_t *slots;
    void *k, *v, *kc, *vc;
    float *scales;
} cache_dev;

static void cache_dev_free(cache_dev *d) {
    cudaFree(d->slots);
    cudaFree(d->k);
    cudaFree(d->v);
    cudaFree(d->kc);
    cudaFree(d->vc);
    cudaFree(d->scales);
    memset(d, 0, sizeof *d);
}

static int cache_dev_make(const cache_problem *c, const char *cmd, cache_dev *d) {
    memset(d, 0, sizeof *d);
    const size_t ies = pa_dtype_size(c->in.dtype), ces = pa_dtype_size(c->kv.dtype);
    /* K's scales, then V's: the one each, or one per KV head (scales_per_head): the whole arrays */
    const size_t sb = pa_kv_scale_bytes(&c->kv), ns = sb / sizeof(float);
    int ok =
        cudaMalloc((void **)&d->slots, sizeof(int64_t) * (size_t)c->tokens + 8) == cudaSuccess &&
        cudaMalloc(&d->k, c->in_elems * ies + 16) == cudaSuccess &&
        cudaMalloc(&d->v, c->in_elems * ies + 16) == cudaSuccess &&
        cudaMalloc(&d->kc, c->k_elems * ces + 16) == cudaSuccess &&
        (!c->vc || cudaMalloc(&d->vc, c->v_elems * ces + 16) == cudaSuccess) &&
        cudaMalloc((void **)&d->scales, 2 * sb) == cudaSuccess &&
        cudaMemcpy(d->slots, c->slots, sizeof(int64_t) * (size_t)c->tokens, cudaMemcpyHostToDevice) == cudaSuccess &&
        cudaMemcpy(d->k, c->k, c->in_elems * ies, cudaMemcpyHostToDevice) == cudaSuccess &&
        cudaMemcpy(d->v, c->v, c->in_elems * ies, cudaMemcpyHostToDevice) == cudaSuccess &&
        cudaMemcpy(d->kc, c->kc, c->k_elems * ces, cudaMemcpyHostToDevice) == cudaSuccess &&
        (!c->vc || cudaMemcpy(d->vc, c->vc, c->v_elems * ces, cudaMemcpyHostToDevice) == cudaSuccess) &&
        cudaMemcpy(d->scales, c->kv.k_scale, sb, cudaMemcpyHostToDevice) == cudaSuccess &&
        cudaMemcpy(d->scales + ns, c->kv.v_scale, sb, cudaMemcpyHostToDevice) == cudaSuccess;
    if (!ok) {
        fprintf(stderr, "pagedattn %s cache: device allocation or copy failed: %s\n", cmd,
                cudaGetErrorString(cudaGetLastError()));
        cache_dev_free(d);
        return PA_CLI_EXIT_FAIL;
    }
    d->in = c->in;
    d->in.key = d->k;
    d->in.value = d->v;
    d->kv = c->kv;
    d->kv.key = d->kc;
    d->kv.value = d->vc;
    d->kv.k_scale = d->scales;
    d->kv.v_scale = d->scales + ns;
    return 0;
}

static int run_ref_cache(void *ctx) {
    cache_problem *c = ctx;
    if (pa_ref_reshape_and_cache(&c->in, c->slots, &c->kv) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn bench cache: %s\n", pa_last_error());
        return 1;
    }
    return 0;
}

static int run_gpu_cache(void *ctx) {
    cache_dev *d = ctx;
    if (pa_reshape_and_cache(&d->in, d->slots, &d->kv, NULL) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn bench cache: %s\n", pa_last_error());
        return 1;
    }
    return 0;
}

/* The GPU op against the CPU reference, byte for byte over the whole cache
 * (untouched slots must still hold their NaN pattern). */
static int check_cache(const pa_op_opts *o, cache_problem *c) {
    cache_dev d;
    int rc = cache_dev_make(c, "check", &d);
    if (rc)
        return rc;
    const size_t ces = pa_dtype_size(c->kv.dtype);
    unsigned char *gk = malloc(c->k_elems * ces + 16), *gv = c->vc ? malloc(c->v_elems * ces + 16) : NULL;
    rc = PA_CLI_EXIT_FAIL;
    if (!gk || (c->vc && !gv))
        goto done;
    if (run_gpu_cache(&d) || run_ref_cache(c))
        goto done;
    if (cudaMemcpy(gk, d.kc, c->k_elems * ces, cudaMemcpyDeviceToHost) != cudaSuccess ||
        (gv && cudaMemcpy(gv, d.vc, c->v_elems * ces, cudaMemcpyDeviceToHost) != cudaSuccess)) {
        fprintf(stderr, "pagedattn check cache: copy back failed\n");
        goto done;
    }
    size_t bad = 0;
    for (size_t i = 0; i < c->k_elems * ces; i++)
        bad += gk[i] != ((unsigned char *)c->kc)[i];
    for (size_t i = 0; gv && i < c->v_elems * ces; i++)
        bad += gv[i] != ((unsigned char *)c->vc)[i];
    printf("check cache %s %s->%s%s: %lld tokens, %zu cache bytes differ from the CPU reference: %s\n",
           pa_kv_layout_name(o->layout), pa_dtype_name(o->dtype), pa_dtype_name(o->cache_dtype),
           c->kv.scales_per_head ? " scales/head" : "", (long long)c->tokens, bad, bad ? "FAIL" : "PASS");
    rc = bad ? PA_CLI_EXIT_FAIL : 0;
done:
    free(gk);
    free(gv);
    cache_dev_free(&d);
    return rc;
}

int pa_run_cache(const pa_op_opts *o, int check, int gpu) {
    const char *cmd = check ? "check" : "bench";
    cache_problem c;
    int rc = cache_problem_make(o, cmd, &c);
    if (rc)
        return rc;
    if (check) {
        rc = check_cache(o, &c);
        cache_problem_free(&c);
        return rc;
    }
    pa_bench_row r = {.op = "reshape_and_cache",
                      .impl = gpu ? "pa" : "cpu-ref",
                      .seqs = o->seqs,
                      .heads = o->heads,
                      .kv_heads = o->kv_heads,
                      .head_size = o->head_size,
                      .ctx = 0,
                      .qlen = o->qlen > 0 ? o->qlen : 1,
                      .block_size = o->block_size,
                      .dtype = o->dtype,
                      .cache_dtype = o->cache_dtype,
                      .layout = o->layout};
    const double elems = (double)c.tokens * o->kv_heads * o->head_size;
    r.bytes = 2.0 * elems * (double)(pa_dtype_size(o->dtype) + pa_dtype_size(o->cache_dtype)) + 8.0 * c.tokens;
    if (gpu) {
        cache_dev d;
        rc = cache_dev_make(&c, cmd, &d);
        if (rc == 0) {
            r.roof_gbps = pa_bench_copy_bandwidth();
            rc = pa_bench_time_gpu("reshape_and_cache", run_gpu_cache, &d, o->warmup, o->iters, &r.t) ? 1 : 0;
            cache_dev_free(&d);
        }
    } else {
        rc = pa_bench_time_cpu(run_ref_cache, &c, o->warmup, o->iters, &r.t) ? 1 : 0;
    }
    if (rc == 0)
        pa_bench_emit(o, &r);
    cache_problem_free(&c);
    return rc ? PA_CLI_EXIT_FAIL : 0;
}
