/* `pagedattn`: info, check, bench and plan.
 *
 * Every error is one line on stderr and a non-zero exit: 2 for usage, 3 when a
 * GPU is needed and there is none, 1 when a check or an op fails. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "baseline.h"
#include "bench_gpu.h"
#include "cli.h"
#include "pa_commit.h" /* PA_GIT_COMMIT: generated at each build (benchmarks/meson.build) */
#include "problems.h"
#ifdef PA_CLI_INTERP
void pa_prof_output(FILE *f); /* tests/interp/prof.cpp: where its report at exit goes */
#endif

static int want_help(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 1;
    return 0;
}

/* ---- info --------------------------------------------------------------- */

static const char *INFO_HELP = "usage: pagedattn info [--json]\n"
                               "  Library version, build, and the CUDA device (or a plain 'no CUDA device').\n";

static int cmd_info(int argc, char **argv) {
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(INFO_HELP, stdout);
            return 0;
        } else {
            fprintf(stderr, "pagedattn info: unknown option '%s' (try --help)\n", argv[i]);
            return PA_CLI_EXIT_USAGE;
        }
    }
    pa_device_props p;
    pa_status s = pa_device_info(0, &p);
    if (json) {
        printf("{\"version\": ");
        pa_cli_json_str(stdout, pa_version());
        printf(", \"commit\": ");
        pa_cli_json_str(stdout, PA_GIT_COMMIT);
        printf(", \"device\": ");
        if (s == PA_SUCCESS) {
            printf("{\"name\": ");
            pa_cli_json_str(stdout, p.name);
            printf(", \"sm_count\": %d, \"cc\": \"%d.%d\", \"smem_per_block_optin\": %zu, "
                   "\"l2_bytes\": %zu, \"total_mem_bytes\": %zu, \"driver\": %d, \"runtime\": %d}",
                   p.sm_count, p.cc_major, p.cc_minor, p.smem_per_block_optin, p.l2_bytes, p.total_mem_bytes,
                   p.driver_version, p.runtime_version);
        } else {
            printf("null, \"no_device_reason\": ");
            pa_cli_json_str(stdout, pa_last_error());
        }
        printf(", \"prefill_hopper\": %s}\n", pa_prefill_hopper_available() ? "true" : "false");
        return 0;
    }
    printf("libpagedattn %s (commit %s)\n", pa_version(), PA_GIT_COMMIT);
    if (s != PA_SUCCESS) {
        printf("%s\n", pa_last_error());
        printf("GPU commands (check, bench --device gpu) need one; the CPU reference runs with --device cpu.\n");
        return 0;
    }
    printf("device 0: %s, compute capability %d.%d, %d SMs\n", p.name, p.cc_major, p.cc_minor, p.sm_count);
    printf("  memory %.1f GiB, L2 %.1f MiB, shared memory per block (opt-in) %zu KiB\n",
           (double)p.total_mem_bytes / (1 << 30), (double)p.l2_bytes / (1 << 20), p.smem_per_block_optin / 1024);
    printf("  driver %d, runtime %d\n", p.driver_version, p.runtime_version);
    printf("  prefill: %s\n", pa_prefill_hopper_available()
                                  ? "the Hopper (sm_90a) kernel runs here (the default; PAGEDATTN_PREFILL_PATH=mma for "
                                    "mma.sync, hopper-fp8 for FP8 tensor cores over e4m3 caches)"
                                  : "mma.sync kernels (no Hopper path: needs an sm_90 GPU and a build for 90a)");
    return 0;
}

/* ---- convert (the first GPU op) ---------------------------------------------- */

typedef struct convert_ctx {
    void *dst;
    const void *src;
    pa_dtype dt, st;
    int64_t n;
} convert_ctx;

static int run_convert(void *ctx) {
    convert_ctx *c = ctx;
    return pa_convert(c->dst, c->dt, c->src, c->st, c->n, NULL, NULL) != PA_SUCCESS;
}

static int run_ref_convert(void *ctx) {
    convert_ctx *c = ctx;
    return pa_ref_convert(c->dst, c->dt, c->src, c->st, c->n, NULL) != PA_SUCCESS;
}

static int bench_convert(const pa_op_opts *o, int gpu) {
    const int64_t n = gpu ? (int64_t)64 << 20 : (int64_t)4 << 20;
    pa_rng rng = pa_rng_make(o->seed);
    void *src = pa_random_buffer(&rng, PA_DTYPE_F32, (size_t)n, -4.0f, 4.0f);
    void *dst = malloc((size_t)n * pa_dtype_size(o->dtype));
    int rc = PA_CLI_EXIT_FAIL;
    if (!dst) {
        free(src);
        return rc;
    }
    pa_timing t;
    double roof = 0.0;
    double bytes = (double)n * (4.0 + (double)pa_dtype_size(o->dtype));
    if (!gpu) {
        convert_ctx c = {dst, src, o->dtype, PA_DTYPE_F32, n};
        if (pa_bench_time_cpu(run_ref_convert, &c, o->warmup, o->iters, &t) == 0)
            rc = 0;
    } else {
        void *dsrc = NULL, *ddst = NULL;
        if (cudaMalloc(&dsrc, (size_t)n * 4) != cudaSuccess ||
            cudaMalloc(&ddst, (size_t)n * pa_dtype_size(o->dtype)) != cudaSuccess ||
            cudaMemcpy(dsrc, src, (size_t)n * 4, cudaMemcpyHostToDevice) != cudaSuccess) {
            fprintf(stderr, "pagedattn bench convert: device allocation failed\n");
        } else {
            roof = pa_bench_copy_bandwidth();
            convert_ctx c = {ddst, dsrc, o->dtype, PA_DTYPE_F32, n};
            if (pa_bench_time_gpu("convert", run_convert, &c, o->warmup, o->iters, &t) == 0)
                rc = 0;
        }
        cudaFree(dsrc);
        cudaFree(ddst);
    }
    if (rc == 0) { /* a row like every op's (and with --json, its JSON row) */
        char note[64];
        snprintf(note, sizeof note, "n=%lld f32->%s", (long long)n, pa_dtype_name(o->dtype));
        pa_bench_row r = {.op = "convert",
                          .impl = gpu ? "pa" : "cpu-ref",
                          .dtype = o->dtype,
                          .cache_dtype = o->dtype,
                          .no_cache = 1,
                          .t = t,
                          .bytes = bytes,
                          .roof_gbps = roof,
                          .note = note};
        pa_bench_emit(o, &r);
    }
    free(src);
    free(dst);
    return rc;
}

/* ---- merge_attn_states -------------------------------------------------------
 * Two partial attention outputs [tokens, heads, head size] merged by their
 * log-sum-exps (include/pagedattn/merge.h): --seqs tokens (default below),
 * --heads Q/KV's query heads (the attention output's rows; the KV count has no
 * part in it), --head-size and --dtype (f32, f16, bf16). Memory-bound: two rows
 * read and one written a (token, head), against the copy roof. */

#ifdef PA_CLI_INTERP /* interpret mode: about half a second of CPU at 32 heads x 128 */
#define MERGE_CHECK_TOKENS 512
#define MERGE_GPU_TOKENS 512
#else
#define MERGE_CHECK_TOKENS 4096
#define MERGE_GPU_TOKENS 8192
#endif
#define MERGE_CPU_TOKENS 1024

static int merge_tokens(const pa_op_opts *o, int dflt) { return o->given & PA_OPT_SEQS ? o->seqs : dflt; }

/* Tokens a merge run takes by default: check's; a bench's on the GPU or,
 * on the CPU, the reference's (gpu -1: the device not yet known, the fewer,
 * so that only what either device would refuse is refused before the probe). */
static int merge_default_tokens(const char *cmd, int gpu) {
    if (!strcmp(cmd, "check"))
        return MERGE_CHECK_TOKENS;
    if (gpu >= 0)
        return gpu ? MERGE_GPU_TOKENS : MERGE_CPU_TOKENS;
    return MERGE_CPU_TOKENS < MERGE_GPU_TOKENS ? MERGE_CPU_TOKENS : MERGE_GPU_TOKENS;
}

/* What merge refuses: a dtype it has no kernel for, a problem past the CLI's
 * host-memory bound at the tokens the run takes on `gpu` (1 the GPU, 0 the
 * CPU, -1 not yet known; bench checks again once the device is known). 0, or
 * one line and exit 2. */
static int merge_usage(const char *cmd, const pa_op_opts *o, int gpu) {
    if (o->dtype != PA_DTYPE_F32 && o->dtype != PA_DTYPE_F16 && o->dtype != PA_DTYPE_BF16) {
        fprintf(stderr, "pagedattn %s merge: --dtype %s: merge_attn_states merges f32, f16 or bf16 outputs\n", cmd,
                pa_dtype_name(o->dtype));
        return PA_CLI_EXIT_USAGE;
    }
    /* Host memory: the two parts and the output (check: the GPU's copy back too), their lse floats. */
    const int check = !strcmp(cmd, "check");
    const double rows = (double)merge_tokens(o, merge_default_tokens(cmd, gpu)) * o->heads;
    const double bytes = rows * (check ? 4 : 3) * ((double)o->head_size * (double)pa_dtype_size(o->dtype) + 4.0);
    if (bytes > 8e9) {
        fprintf(stderr, "pagedattn %s merge: the problem needs %.1f GB of host memory; at most 8 GB\n", cmd,
                bytes / 1e9);
        return PA_CLI_EXIT_USAGE;
    }
    return 0;
}

/* Row (t, h)'s lse pair. Without `edges`, finite values a few nats apart. With
 * them, also parts far apart, parts whose weight underflows to 0, empty parts
 * (-inf, or FlashAttention-2's +inf), both empty, and now and then a NaN.
 * Returns the parts of weight 0 (bit 0 the prefix, bit 1 the suffix): their
 * rows are NaN, which the op must leave out of the output. */
static int merge_draw_lse(pa_rng *rng, int edges, float *a, float *b) {
    static const float gaps[] = {0.0f, 1e-3f, 1.0f, 8.0f, 30.0f};
    *a = pa_rng_uniform(rng, -20.0f, 20.0f);
    *b = *a + pa_rng_uniform(rng, -1.0f, 1.0f);
    if (!edges)
        return 0;
    switch (pa_rng_int(rng, 0, 31)) {
    case 0: *a = -INFINITY; return 1;
    case 1: *b = -INFINITY; return 2;
    case 2: *b = INFINITY; return 2; /* read as -inf */
    case 3: *a = INFINITY; return 1;
    case 4: *a = *b = -INFINITY; return 3;
    case 5: *b = *a - pa_rng_uniform(rng, 120.0f, 200.0f); return 2; /* e^-120: 0 in f32 */
    case 6: *b = NAN; return 0;
    default: {
        const float g = gaps[pa_rng_int(rng, 0, 4)];
        *b = *a + (g > 0 ? pa_rng_uniform(rng, -g, g) : 0.0f);
        return 0;
    }
    }
}

typedef struct merge_problem {
    pa_merge_attn_states_params p; /* host pointers; lse [heads, tokens] */
    size_t rows, elems;            /* tokens x heads, times head_size */
} merge_problem;

static void merge_problem_free(merge_problem *m) {
    free((void *)m->p.prefix_output);
    free((void *)m->p.suffix_output);
    free(m->p.output);
    free((void *)m->p.prefix_lse);
    free((void *)m->p.suffix_lse);
    free(m->p.output_lse);
}

/* The parts and their lse drawn from --seed; the output and its lse NaN (a
 * value the op does not write shows). */
static void merge_problem_make(merge_problem *m, const pa_op_opts *o, int tokens, int edges) {
    const int H = o->heads, D = o->head_size;
    const size_t es = pa_dtype_size(o->dtype);
    memset(m, 0, sizeof *m);
    m->rows = (size_t)tokens * (size_t)H;
    m->elems = m->rows * (size_t)D;
    pa_rng rng = pa_rng_make(o->seed);
    unsigned char *pre = pa_random_buffer(&rng, o->dtype, m->elems, -2.0f, 2.0f);
    unsigned char *suf = pa_random_buffer(&rng, o->dtype, m->elems, -2.0f, 2.0f);
    void *out = pa_xmalloc(m->elems * es);
    float *pl = pa_xmalloc(m->rows * sizeof(float)), *sl = pa_xmalloc(m->rows * sizeof(float));
    float *ol = pa_xmalloc(m->rows * sizeof(float));
    pa_fill_nan(o->dtype, out, m->elems);
    pa_fill_nan(PA_DTYPE_F32, ol, m->rows);
    for (int t = 0; t < tokens; t++)
        for (int h = 0; h < H; h++) {
            const size_t li = (size_t)h * (size_t)tokens + (size_t)t, row = ((size_t)t * (size_t)H + (size_t)h) * D;
            const int dropped = merge_draw_lse(&rng, edges, &pl[li], &sl[li]);
            if (dropped & 1)
                pa_fill_nan(o->dtype, pre + row * es, (size_t)D);
            if (dropped & 2)
                pa_fill_nan(o->dtype, suf + row * es, (size_t)D);
        }
    m->p = (pa_merge_attn_states_params){.dtype = o->dtype,
                                         .num_tokens = tokens,
                                         .num_heads = H,
                                         .head_size = D,
                                         .output = out,
                                         .prefix_output = pre,
                                         .suffix_output = suf,
                                         .output_lse = ol,
                                         .prefix_lse = pl,
                                         .suffix_lse = sl};
}

/* Device copies of the problem's buffers (in slots[0..5]); 0, or a line and 1. */
static int merge_upload(const merge_problem *m, pa_merge_attn_states_params *d, void **slots, int *n, const char *who) {
    const size_t bytes = m->elems * pa_dtype_size(m->p.dtype), lb = m->rows * sizeof(float);
    int err = 0;
    *d = m->p;
    d->prefix_output = pa_bench_upload(slots, n, 6, m->p.prefix_output, bytes, &err, who);
    d->suffix_output = pa_bench_upload(slots, n, 6, m->p.suffix_output, bytes, &err, who);
    d->output = pa_bench_upload(slots, n, 6, m->p.output, bytes, &err, who);
    d->prefix_lse = pa_bench_upload(slots, n, 6, m->p.prefix_lse, lb, &err, who);
    d->suffix_lse = pa_bench_upload(slots, n, 6, m->p.suffix_lse, lb, &err, who);
    d->output_lse = pa_bench_upload(slots, n, 6, m->p.output_lse, lb, &err, who);
    return err;
}

static int run_merge(void *ctx) { return pa_merge_attn_states(ctx, NULL) != PA_SUCCESS; }

static int run_ref_merge(void *ctx) { return pa_ref_merge_attn_states(ctx) != PA_SUCCESS; }

static int bench_merge(const pa_op_opts *o, int gpu) {
    merge_problem m;
    merge_problem_make(&m, o, merge_tokens(o, merge_default_tokens("bench", gpu)), 0);
    void *slots[6];
    int ns = 0, rc = PA_CLI_EXIT_FAIL;
    pa_timing t;
    double roof = 0.0;
    /* Two rows read and one written a (token, head); two lse floats read, one written. */
    const double bytes = (double)m.rows * (3.0 * (double)m.p.head_size * (double)pa_dtype_size(o->dtype) + 12.0);
    if (!gpu) {
        if (pa_bench_time_cpu(run_ref_merge, &m.p, o->warmup, o->iters, &t) == 0)
            rc = 0;
        else
            fprintf(stderr, "pagedattn bench merge: %s\n", pa_last_error());
    } else {
        pa_merge_attn_states_params d;
        if (merge_upload(&m, &d, slots, &ns, "bench merge") == 0) {
            roof = pa_bench_copy_bandwidth();
            if (pa_bench_time_gpu("merge", run_merge, &d, o->warmup, o->iters, &t) == 0)
                rc = 0;
            else
                fprintf(stderr, "pagedattn bench merge: %s\n", pa_last_error());
        }
        for (int i = 0; i < ns; i++)
            cudaFree(slots[i]);
    }
    if (rc == 0) {
        char note[64];
        snprintf(note, sizeof note, "tokens=%d heads=%d head=%d", m.p.num_tokens, m.p.num_heads, m.p.head_size);
        pa_bench_row r = {.op = "merge",
                          .impl = gpu ? "pa" : "cpu-ref",
                          .seqs = m.p.num_tokens,
                          .heads = m.p.num_heads,
                          .kv_heads = m.p.num_heads,
                          .head_size = m.p.head_size,
                          .dtype = o->dtype,
                          .cache_dtype = o->dtype,
                          .no_cache = 1,
                          .t = t,
                          .bytes = bytes,
                          .roof_gbps = roof,
                          .note = note};
        pa_bench_emit(o, &r);
    }
    merge_problem_free(&m);
    return rc;
}

/* ---- check --------------------------------------------------------------- */

static int check_convert(const pa_op_opts *o) {
    const int64_t n = 1 << 20;
    pa_rng rng = pa_rng_make(o->seed);
    float *src = pa_random_buffer(&rng, PA_DTYPE_F32, (size_t)n, -600.0f, 600.0f);
    size_t es = pa_dtype_size(o->dtype);
    unsigned char *got = malloc((size_t)n * es), *want = malloc((size_t)n * es);
    void *dsrc = NULL, *ddst = NULL;
    int rc = PA_CLI_EXIT_FAIL;
    if (!got || !want)
        goto done;
    if (cudaMalloc(&dsrc, (size_t)n * 4) != cudaSuccess || cudaMalloc(&ddst, (size_t)n * es) != cudaSuccess ||
        cudaMemcpy(dsrc, src, (size_t)n * 4, cudaMemcpyHostToDevice) != cudaSuccess) {
        fprintf(stderr, "pagedattn check convert: device allocation failed\n");
        goto done;
    }
    if (pa_convert(ddst, o->dtype, dsrc, PA_DTYPE_F32, n, NULL, NULL) != PA_SUCCESS ||
        cudaMemcpy(got, ddst, (size_t)n * es, cudaMemcpyDeviceToHost) != cudaSuccess) {
        fprintf(stderr, "pagedattn check convert: %s\n", pa_last_error());
        goto done;
    }
    pa_ref_convert(want, o->dtype, src, PA_DTYPE_F32, n, NULL);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += memcmp(got + i * es, want + i * es, es) != 0;
    printf("check convert f32->%s: %lld elements, %lld differ from the CPU reference: %s\n", pa_dtype_name(o->dtype),
           (long long)n, (long long)bad, bad ? "FAIL" : "PASS");
    rc = bad ? PA_CLI_EXIT_FAIL : 0;
done:
    cudaFree(dsrc);
    cudaFree(ddst);
    free(src);
    free(got);
    free(want);
    return rc;
}

/* One rounding to dtype t near w: its unit in the last place there (the
 * subnormals' below the normal range). */
static float dtype_ulp(pa_dtype t, float w) {
    const int p = t == PA_DTYPE_F16 ? 10 : t == PA_DTYPE_BF16 ? 7 : 23, emin = t == PA_DTYPE_F16 ? -14 : -126;
    int e = 0;
    frexpf(w, &e); /* |w| = f 2^e, f in [0.5, 1) */
    return ldexpf(1.0f, (w == 0.0f || e - 1 < emin ? emin : e - 1) - p);
}

/* A merged element against the reference's: NaN where it has NaN, else within
 * one rounding to the dtype plus a few f32 units of the parts' values (the
 * device's expf, logf and division need not round as the host's). */
static int merge_elem_close(pa_dtype t, float got, float want, float a, float b) {
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got))
        return got == want;
    const float mag = (isnan(a) ? 0.0f : fabsf(a)) + (isnan(b) ? 0.0f : fabsf(b));
    return fabsf(got - want) <= dtype_ulp(t, want) + 8.0f * FLT_EPSILON * mag;
}

/* A merged lse: 1e-6 relative (absolute below 1); NaN and infinities as they are. */
static int merge_lse_close(float got, float want) {
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got))
        return got == want;
    return fabsf(got - want) <= 1e-6f * fmaxf(1.0f, fabsf(want));
}

static int check_merge(const pa_op_opts *o) {
    merge_problem m;
    merge_problem_make(&m, o, merge_tokens(o, MERGE_CHECK_TOKENS), 1);
    const pa_merge_attn_states_params *p = &m.p;
    const int T = p->num_tokens, H = p->num_heads, D = p->head_size;
    const size_t es = pa_dtype_size(o->dtype), bytes = m.elems * es;
    void *slots[6], *got = pa_xmalloc(bytes);
    float *got_lse = pa_xmalloc(m.rows * sizeof(float));
    int ns = 0, rc = PA_CLI_EXIT_FAIL;
    pa_merge_attn_states_params d;
    if (merge_upload(&m, &d, slots, &ns, "check merge"))
        goto done;
    if (pa_merge_attn_states(&d, NULL) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn check merge: %s\n", pa_last_error());
        goto done;
    }
    cudaError_t ce = cudaMemcpy(got, d.output, bytes, cudaMemcpyDeviceToHost);
    if (ce == cudaSuccess)
        ce = cudaMemcpy(got_lse, d.output_lse, m.rows * sizeof(float), cudaMemcpyDeviceToHost);
    if (ce != cudaSuccess) {
        fprintf(stderr, "pagedattn check merge: %s\n", cudaGetErrorString(ce));
        goto done;
    }
    if (pa_ref_merge_attn_states(p) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn check merge: the CPU reference: %s\n", pa_last_error());
        goto done;
    }
    long long bad = 0;
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++) {
            const size_t li = (size_t)h * (size_t)T + (size_t)t, row = ((size_t)t * (size_t)H + (size_t)h) * D;
            int k = merge_lse_close(got_lse[li], p->output_lse[li]) ? -1 : D; /* D: the lse differs */
            for (int e = 0; e < D && k < 0; e++)
                if (!merge_elem_close(o->dtype, pa_load_as_float(o->dtype, got, row + e),
                                      pa_load_as_float(o->dtype, p->output, row + e),
                                      pa_load_as_float(o->dtype, p->prefix_output, row + e),
                                      pa_load_as_float(o->dtype, p->suffix_output, row + e)))
                    k = e;
            if (k < 0)
                continue;
            if (!bad++) { /* the first differing row, to start from */
                if (k == D)
                    fprintf(stderr, "check merge: token %d head %d (lse %g, %g): merged lse %.9g, want %.9g\n", t, h,
                            (double)p->prefix_lse[li], (double)p->suffix_lse[li], (double)got_lse[li],
                            (double)p->output_lse[li]);
                else
                    fprintf(stderr, "check merge: token %d head %d (lse %g, %g): element %d is %.9g, want %.9g\n", t, h,
                            (double)p->prefix_lse[li], (double)p->suffix_lse[li], k,
                            (double)pa_load_as_float(o->dtype, got, row + k),
                            (double)pa_load_as_float(o->dtype, p->output, row + k));
            }
        }
    printf("check merge %s %dx%dx%d: %zu rows, %lld differ from the CPU reference: %s\n", pa_dtype_name(o->dtype), T, H,
           D, m.rows, bad, bad ? "FAIL" : "PASS");
    rc = bad ? PA_CLI_EXIT_FAIL : 0;
done:
    for (int i = 0; i < ns; i++)
        cudaFree(slots[i]);
    merge_problem_free(&m);
    free(got);
    free(got_lse);
    return rc;
}

static const char *CHECK_HELP =
    "usage: pagedattn check OP [options]\n"
    "  Runs the CUDA op on generated inputs and compares it with the CPU reference.\n"
    "  Needs a GPU (exit 3 without one). Takes the options below but bench's --device,\n"
    "  --iters, --warmup and --json; an option the op would ignore is refused (exit 2).\n"
    "  OP: convert, merge, decode, prefill, ragged, cache, blocks, baseline (the cuBLAS\n"
    "      baseline against the decode, ragged and prefill CPU references)\n"
    "  merge (merge_attn_states): --seqs N tokens (default 4096; 512 with --interp), the\n"
    "      query heads of --heads, --head-size, --dtype f32|f16|bf16; lse pairs at various\n"
    "      gaps, empty parts (-inf, +inf), NaN; each row within one rounding of --dtype\n";

static int known_op(const char *op) {
    return !strcmp(op, "convert") || !strcmp(op, "merge") || !strcmp(op, "decode") || !strcmp(op, "prefill") ||
           !strcmp(op, "ragged") || !strcmp(op, "cache") || !strcmp(op, "blocks");
}

/* The attention options (--sinks, --alibi, --window, --soft-cap) on an op
 * without attention (the cache ops, convert, merge, blocks) are refused, not
 * ignored: exit 2. A --preset sets some of them as part of a model's shape
 * and is taken on any op (a preset sweep applies them where they exist);
 * the ones the command line gives are refused with it too. */
static int refuses_attention_options(const char *cmd, const char *op, const pa_op_opts *o) {
    if (!strcmp(op, "decode") || !strcmp(op, "prefill") || !strcmp(op, "ragged") || !strcmp(op, "baseline"))
        return 0;
    const char *opt = o->given & PA_OPT_SINKS      ? "--sinks"
                      : o->given & PA_OPT_ALIBI    ? "--alibi"
                      : o->given & PA_OPT_WINDOW   ? "--window"
                      : o->given & PA_OPT_SOFT_CAP ? "--soft-cap"
                                                   : NULL;
    if (!opt)
        return 0;
    fprintf(stderr, "pagedattn %s %s: %s is an attention option (decode, prefill, ragged and the baseline)\n", cmd, op,
            opt);
    return 1;
}

/* The options each op reads (PA_OPT_*): any other one given is refused (exit
 * 2) rather than ignored. `check` runs once and prints PASS or FAIL, so it
 * reads no --device, --iters, --warmup or --json. A --preset is taken on any
 * op (its shape where the op has one); only the options the command line
 * gave are judged, not the preset's values. */
static unsigned op_reads(const char *op, const pa_op_opts *o, int check) {
    const unsigned shape = PA_OPT_SEQS | PA_OPT_HEADS | PA_OPT_HEAD_SIZE;
    const unsigned attn = PA_OPT_WINDOW | PA_OPT_SOFT_CAP | PA_OPT_ALIBI | PA_OPT_SINKS;
    const unsigned cache = PA_OPT_BLOCK_SIZE | PA_OPT_CACHE_DTYPE | PA_OPT_LAYOUT | PA_OPT_SCALES_PER_HEAD;
    unsigned r = PA_OPT_PRESET | PA_OPT_DTYPE | PA_OPT_SEED;
    if (!check)
        r |= PA_OPT_DEVICE | PA_OPT_ITERS | PA_OPT_WARMUP | PA_OPT_JSON;
    if (!strcmp(op, "decode"))
        r |= shape | attn | cache | PA_OPT_CTX | PA_OPT_VARIANT;
    else if (!strcmp(op, "prefill")) { /* a cache for context only; new tokens for context and cross */
        const char *v = o->variant ? o->variant : "prompt";
        r |= shape | attn | PA_OPT_CTX | PA_OPT_VARIANT;
        r |= !strcmp(v, "context") ? cache | PA_OPT_QLEN : !strcmp(v, "cross") ? PA_OPT_QLEN : 0;
    } else if (!strcmp(op, "ragged")) /* the combined layout only; no ALiBi (JAX's has none) */
        r |= (shape | attn | cache | PA_OPT_CTX | PA_OPT_QLEN | PA_OPT_DECODES) & ~PA_OPT_ALIBI &
             ~(o->layout != PA_LAYOUT_COMBINED ? PA_OPT_LAYOUT : 0u);
    else if (!strcmp(op, "cache")) /* --qlen new tokens per sequence, no context */
        r |= shape | cache | PA_OPT_QLEN;
    else if (!strcmp(op, "blocks")) { /* the cache's bytes: --dtype only as --cache-dtype auto's value; no scale */
        r |= (shape | cache | PA_OPT_CTX | PA_OPT_VARIANT | PA_OPT_LAYERS) & ~PA_OPT_SCALES_PER_HEAD;
        if (!o->cache_auto)
            r &= ~PA_OPT_DTYPE;
    } else if (!strcmp(op, "baseline"))
        r |= shape | attn | cache | PA_OPT_CTX | PA_OPT_QLEN;
    else if (!strcmp(op, "merge")) /* --seqs tokens, --heads' query heads, --head-size; no cache, no context */
        r |= shape;
    /* convert: f32 -> --dtype, nothing else */
    return r;
}

/* Why `op` does not read `bit`, where there is more to say than that. */
static const char *ignored_why(const char *op, unsigned bit, int check) {
    if (check && (bit & (PA_OPT_DEVICE | PA_OPT_ITERS | PA_OPT_WARMUP | PA_OPT_JSON)))
        return "check runs the op once on the GPU against the CPU reference and prints PASS or FAIL; it is a bench "
               "option";
    if (!strcmp(op, "prefill") && bit == PA_OPT_QLEN)
        return "--qlen is the new tokens of --variant context (the decoder tokens of cross); the prompt and encoder "
               "variants' prompts are --ctx tokens long";
    if (!strcmp(op, "prefill") &&
        (bit & (PA_OPT_BLOCK_SIZE | PA_OPT_CACHE_DTYPE | PA_OPT_LAYOUT | PA_OPT_SCALES_PER_HEAD)))
        return "only --variant context reads a cache (the other variants' K and V are contiguous, in --dtype)";
    if (!strcmp(op, "ragged") && bit == PA_OPT_LAYOUT)
        return "ragged attention reads the combined layout only (K and V heads interleaved in one cache)";
    if (!strcmp(op, "ragged") && bit == PA_OPT_ALIBI)
        return "ragged attention has no ALiBi (JAX's has none)";
    if (!strcmp(op, "blocks") && bit == PA_OPT_SCALES_PER_HEAD)
        return "swap_blocks and copy_blocks move the cache's bytes as they are: they read no fp8 scale, one or per "
               "KV head";
    if (!strcmp(op, "blocks") && bit == PA_OPT_DTYPE)
        return "swap_blocks and copy_blocks move cache blocks in --cache-dtype; --dtype is read only as the value of "
               "--cache-dtype auto";
    if (!strcmp(op, "merge"))
        return "merge_attn_states merges two attention outputs by their lse: it reads --seqs (tokens), --heads, "
               "--head-size and --dtype; no cache, no context";
    if (!strcmp(op, "cache") && bit == PA_OPT_CTX)
        return "reshape_and_cache writes --qlen new tokens per sequence (default 1); it has no context";
    return NULL;
}

/* --scales-per-head over a cache that is not fp8: the scales (one or per KV
 * head) are fp8 caches' alone (pagedattn/kv_cache.h), so the flag would change
 * nothing there. One line and 1 (a usage error), before any GPU probe. */
static int refuses_scales_per_head(const char *cmd, const char *op, const pa_op_opts *o) {
    if (!o->scales_per_head || pa_dtype_is_fp8(o->cache_dtype))
        return 0;
    fprintf(stderr,
            "pagedattn %s%s%s: --scales-per-head would be ignored, so it is refused: the scales (one or per KV head) "
            "apply to fp8 caches only (--cache-dtype fp8_e4m3 or fp8_e5m2), and this cache is %s\n",
            cmd, op ? " " : "", op ? op : "", pa_dtype_name(o->cache_dtype));
    return 1;
}

/* An option `op` would not read, a --variant it does not know, or a list of
 * lengths where it reads one: one line and 1 (a usage error), before any GPU
 * probe or allocation; else 0. */
static int refuses_ignored_options(const char *cmd, const char *op, const pa_op_opts *o, int check) {
    if (o->variant && pa_variant_list(op) && pa_variant_index(op, o->variant) < 0) {
        fprintf(stderr, "pagedattn %s %s: unknown --variant '%s'; known: %s\n", cmd, op, o->variant,
                pa_variant_list(op));
        return 1;
    }
    const unsigned extra = o->given & ~op_reads(op, o, check);
    if (extra) {
        const unsigned bit = extra & -extra;
        const char *why = ignored_why(op, bit, check);
        fprintf(stderr, "pagedattn %s %s: %s would be ignored, so it is refused: %s\n", cmd, op, pa_opt_name(bit),
                why ? why : "the op does not read it");
        return 1;
    }
    if (!strcmp(op, "baseline") && o->num_ctx > 1) {
        fprintf(stderr,
                "pagedattn %s baseline: --ctx takes one length here (the decode case's longest sequence, the "
                "ragged case's most cached keys)\n",
                cmd);
        return 1;
    }
    return refuses_scales_per_head(cmd, op, o);
}

static int cmd_check(int argc, char **argv) {
    if (want_help(argc, argv) || argc < 2) {
        fputs(CHECK_HELP, argc < 2 ? stderr : stdout);
        fputs(PA_OPT_HELP, argc < 2 ? stderr : stdout);
        return argc < 2 ? PA_CLI_EXIT_USAGE : 0;
    }
    const char *op = argv[1];
    if (!known_op(op) && strcmp(op, "baseline")) {
        fprintf(stderr,
                "pagedattn check: unknown op '%s'; known: convert, merge, decode, prefill, ragged, cache, blocks, "
                "baseline\n",
                op);
        return PA_CLI_EXIT_USAGE;
    }
    pa_op_opts o;
    pa_op_opts_default(&o);
    int e = pa_op_opts_parse("check", argc, argv, 2, &o);
    if (e)
        return e;
    if (refuses_attention_options("check", op, &o) || refuses_ignored_options("check", op, &o, 1))
        return PA_CLI_EXIT_USAGE;
    if (!strcmp(op, "baseline") && (e = pa_check_baseline_usage(&o)) != 0)
        return e;
    if (!strcmp(op, "merge") && (e = merge_usage("check", &o, 1)) != 0)
        return e;
    char why[512];
    if (!pa_cli_have_gpu(why, sizeof why)) {
        if (!strcmp(op, "baseline"))
            fprintf(stderr, "pagedattn check baseline: needs a CUDA GPU and there is none (%s)\n", why);
        else
            fprintf(stderr,
                    "pagedattn check %s: needs a CUDA GPU and there is none (%s); "
                    "the kernel runs on the CPU with: pagedattn check %s --interp; "
                    "the CPU reference alone with: pagedattn bench %s --device cpu\n",
                    op, why, op, op);
        return PA_CLI_EXIT_NO_DEVICE;
    }
    if (!strcmp(op, "convert"))
        return check_convert(&o);
    if (!strcmp(op, "merge"))
        return check_merge(&o);
    if (!strcmp(op, "decode"))
        return pa_run_decode(&o, 1, 1);
    if (!strcmp(op, "prefill"))
        return pa_run_prefill(&o, 1, 1);
    if (!strcmp(op, "cache"))
        return pa_run_cache(&o, 1, 1);
    if (!strcmp(op, "blocks"))
        return pa_run_blocks(&o, 1, 1);
    if (!strcmp(op, "baseline"))
        return pa_check_baseline(&o);
    return pa_run_ragged(&o, 1, 1);
}

/* ---- preset sweeps ----------------------------------------------------------
 * `bench --preset NAME` (or `bench all`: every preset) runs the decode, prefill,
 * ragged and cache ops over a grid of batch sizes and context lengths, one
 * pa_run_<op> call per point, so every row comes from the op's own benchmark.
 * What a point means per op (each op's bench defines --ctx and --qlen):
 *   decode    `batch` sequences of ctx keys, one query each
 *   prefill   `batch` prompts of ctx tokens (the prompt variant; qlen = ctx
 *             is what a context variant would take as its new tokens)
 *   ragged    one prefill chunk of qlen tokens (512; 32 on the CPU) beside
 *             batch - 1 decodes, each with ctx tokens already cached: a mixed
 *             serving step
 *   cache     reshape_and_cache of one decode step (batch tokens, one per
 *             sequence) and of one prefill chunk, in the chosen layout and
 *             the ragged path's combined layout
 * Points with batch * ctx above --max-tokens are left out (host-side problem
 * generation and memory stay bounded). Without a GPU the CPU references run
 * on a small grid: the numbers show the tooling works, not performance. */

enum { SW_DECODE = 1, SW_PREFILL = 2, SW_RAGGED = 4, SW_CACHE = 8, SW_ALL = 15 };

typedef struct sweep_grid {
    int batches[PA_MAX_CTX_LIST], nb;
    int ctx[PA_MAX_CTX_LIST], nc;
    int chunks[PA_MAX_CTX_LIST], nq; /* cache: prefill chunk sizes */
} sweep_grid;

typedef struct sweep_cfg {
    int ops;
    int user_batches[PA_MAX_CTX_LIST], n_user_batches;
    long long max_tokens;
    int user_max_tokens;
    int quick;
    int user_ctx, user_qlen, user_layout;
} sweep_cfg;

static void grid_set(int *dst, int *n, const int *src, int count) {
    memcpy(dst, src, sizeof(int) * (size_t)count);
    *n = count;
}

/* The default grid of one op, on the GPU or the CPU. */
static sweep_grid default_grid(int op, int gpu, int quick) {
    sweep_grid g;
    memset(&g, 0, sizeof g);
    if (!gpu) {
        static const int b14[] = {1, 4}, b1[] = {1}, c_dec[] = {256, 1024}, c_pre[] = {64, 256}, c_rag[] = {256},
                         b16[] = {16}, q256[] = {256};
        switch (op) {
        case SW_DECODE: grid_set(g.batches, &g.nb, b14, 2), grid_set(g.ctx, &g.nc, c_dec, 2); break;
        case SW_PREFILL: grid_set(g.batches, &g.nb, b1, 1), grid_set(g.ctx, &g.nc, c_pre, 2); break;
        case SW_RAGGED: grid_set(g.batches, &g.nb, b14, 2), grid_set(g.ctx, &g.nc, c_rag, 1); break;
        default: grid_set(g.batches, &g.nb, b16, 1), grid_set(g.chunks, &g.nq, q256, 1); break;
        }
        return g;
    }
    static const int b_dec[] = {1, 4, 16, 64, 256}, c_dec[] = {512, 2048, 8192, 32768};
    static const int b_pre[] = {1, 4}, c_pre[] = {512, 2048, 8192};
    static const int b_rag[] = {1, 16, 64}, c_rag[] = {2048, 8192};
    static const int b_cache[] = {1, 16, 64, 256}, q_cache[] = {512, 2048, 8192};
    switch (op) {
    case SW_DECODE: grid_set(g.batches, &g.nb, b_dec, 5), grid_set(g.ctx, &g.nc, c_dec, 4); break;
    case SW_PREFILL: grid_set(g.batches, &g.nb, b_pre, 2), grid_set(g.ctx, &g.nc, c_pre, 3); break;
    case SW_RAGGED: grid_set(g.batches, &g.nb, b_rag, 3), grid_set(g.ctx, &g.nc, c_rag, 2); break;
    default: grid_set(g.batches, &g.nb, b_cache, 4), grid_set(g.chunks, &g.nq, q_cache, 3); break;
    }
    if (quick) { /* run.sh: two batch sizes, two lengths */
        g.nb = g.nb > 2 ? 2 : g.nb;
        g.nc = g.nc > 2 ? 2 : g.nc;
        g.nq = g.nq > 1 ? 1 : g.nq;
    }
    return g;
}

static const char *sw_name(int op) {
    return op == SW_DECODE ? "decode" : op == SW_PREFILL ? "prefill" : op == SW_RAGGED ? "ragged" : "cache";
}

typedef struct sweep_point {
    int op, batch, ctx, qlen;
    pa_kv_layout layout;
} sweep_point;

/* Every point of one preset's sweep, in run order. Returns the count. */
static int sweep_points(const sweep_cfg *sw, const pa_op_opts *base, int gpu, sweep_point *pts, int cap, int *over) {
    int n = 0;
    for (int op = SW_DECODE; op <= SW_CACHE; op <<= 1) {
        if (!(sw->ops & op))
            continue;
        sweep_grid g = default_grid(op, gpu, sw->quick);
        if (sw->n_user_batches)
            grid_set(g.batches, &g.nb, sw->user_batches, sw->n_user_batches);
        if (sw->user_ctx)
            grid_set(g.ctx, &g.nc, base->ctx, base->num_ctx);
        if (op == SW_CACHE) {
            pa_kv_layout layouts[2] = {base->layout, PA_LAYOUT_COMBINED};
            const int nl = base->layout == PA_LAYOUT_COMBINED || sw->user_layout ? 1 : 2;
            if (sw->user_qlen) /* the user's chunk, once */
                g.nq = 1;
            for (int l = 0; l < nl; l++) {
                for (int b = 0; b < g.nb && n < cap; b++)
                    pts[n++] = (sweep_point){op, g.batches[b], 0, 1, layouts[l]};
                for (int q = 0; q < g.nq && n < cap; q++)
                    pts[n++] = (sweep_point){op, 1, 0, sw->user_qlen ? base->qlen : g.chunks[q], layouts[l]};
            }
            continue;
        }
        /* Prompts cost ctx^2: a tighter default bound keeps the sweep short. */
        const long long bound =
            op == SW_PREFILL && !sw->user_max_tokens && gpu && sw->max_tokens > 32768 ? 32768 : sw->max_tokens;
        int left_out = 0;
        for (int b = 0; b < g.nb; b++)
            for (int c = 0; c < g.nc && n < cap; c++) {
                if ((long long)g.batches[b] * g.ctx[c] > bound) {
                    left_out++;
                    continue;
                }
                int qlen = op == SW_DECODE ? 1 : op == SW_PREFILL ? g.ctx[c] : (gpu ? 512 : 32);
                if (op == SW_RAGGED && qlen > g.ctx[c]) /* the default chunk; the user's is taken as given */
                    qlen = g.ctx[c];
                if (sw->user_qlen && op != SW_DECODE)
                    qlen = base->qlen;
                pts[n++] = (sweep_point){op, g.batches[b], g.ctx[c], qlen, base->layout};
            }
        /* Said, and counted in the summary: a --ctx or --seqs the user gave
         * must not vanish without a word (it did until 2026-12-07). */
        if (left_out)
            fprintf(stderr,
                    "pagedattn bench: %s: %d point(s) of batch x ctx above %lld tokens left out (--max-tokens "
                    "raises the bound)\n",
                    sw_name(op), left_out, bound);
        *over += left_out;
    }
    return n;
}

/* Runs one preset's sweep; adds to the counters. */
static void run_sweep(const sweep_cfg *sw, const pa_op_opts *base, int gpu, int *failed, int *skipped, int *over) {
    /* Room for every point: decode, prefill and ragged take batches x lengths,
     * cache two layouts of batches and chunks (at most 3), each list at most
     * PA_MAX_CTX_LIST long; none is dropped. */
    enum { CAP = 3 * PA_MAX_CTX_LIST * PA_MAX_CTX_LIST + 2 * (PA_MAX_CTX_LIST + 3) };
    static sweep_point pts[CAP];
    const int n = sweep_points(sw, base, gpu, pts, CAP, over);
    int skip_op = 0;
    for (int i = 0; i < n; i++) {
        const sweep_point *pt = &pts[i];
        if (skip_op & pt->op) {
            ++*skipped;
            continue;
        }
        pa_op_opts o = *base;
        o.num_ctx = 1;
        o.ctx[0] = pt->ctx > 0 ? pt->ctx : 1;
        o.qlen = pt->op == SW_DECODE ? 0 : pt->qlen;
        o.layout = pt->layout;
        o.seqs = pt->batch;
        o.decodes = 0;
        o.given = 0;               /* the point's values are the sweep's (cmd_sweep refused the options no op reads) */
        if (pt->op == SW_RAGGED) { /* one prefill chunk beside batch - 1 decodes */
            o.seqs = 1;
            o.decodes = pt->batch - 1;
        }
        if (pt->op == SW_CACHE)
            pa_bench_progress(i + 1, n, "%s %s %s b=%d q=%d", o.preset, "reshape_and_cache",
                              pa_kv_layout_name(pt->layout), pt->batch, pt->qlen);
        else
            pa_bench_progress(i + 1, n, "%s %s b=%d ctx=%d q=%d", o.preset, sw_name(pt->op), pt->batch, pt->ctx,
                              pt->qlen);
        int rc = pt->op == SW_DECODE    ? pa_run_decode(&o, 0, gpu)
                 : pt->op == SW_PREFILL ? pa_run_prefill(&o, 0, gpu)
                 : pt->op == SW_RAGGED  ? pa_run_ragged(&o, 0, gpu)
                                        : pa_run_cache(&o, 0, gpu);
        if (rc == PA_CLI_EXIT_FAIL) {
            ++*failed;
        } else if (rc != 0) {
            ++*skipped;
            /* Not in this build, or the preset's shape is unsupported: the op
             * said why once; do not repeat it for every point. */
            if (i == 0 || pts[i - 1].op != pt->op) {
                fprintf(stderr, "pagedattn bench: skipping %s for %s\n", sw_name(pt->op), o.preset);
                skip_op |= pt->op;
            }
        }
    }
}

/* --ops LIST into SW_* bits: 0 and one line for an unknown or empty name. */
static int parse_ops(const char *val) {
    int ops = 0;
    for (const char *c = val;; c++) {
        const size_t len = strcspn(c, ",");
        int op = 0;
        for (int k = SW_DECODE; k <= SW_CACHE && len; k <<= 1)
            if (strlen(sw_name(k)) == len && !strncmp(c, sw_name(k), len))
                op = k;
        if (!op) {
            fprintf(stderr, "pagedattn bench: --ops: %s '%.*s' in '%s'; known: decode, prefill, ragged, cache\n",
                    len ? "unknown op" : "an empty name", (int)len, c, val);
            return 0;
        }
        ops |= op;
        c += len;
        if (!*c)
            return ops;
    }
}

/* The options a sweep would not use: one line and 1; else 0. Every option
 * must be read by at least one of the swept ops (as `bench OP` reads it);
 * the sweep sets --decodes (batch - 1 beside a ragged point's chunk) itself,
 * `bench all` each preset's heads and head size, and a --variant names one
 * op's kernel (--ops decode or --ops prefill alone). */
static int sweep_refuses(const sweep_cfg *sw, const pa_op_opts *o, int all) {
    const char *cmd = all ? "bench all" : "bench --preset";
    unsigned reads = 0;
    for (int op = SW_DECODE; op <= SW_CACHE; op <<= 1)
        if (sw->ops & op)
            reads |= op_reads(sw_name(op), o, 0);
    reads &= ~(PA_OPT_DECODES | PA_OPT_LAYERS);
    if (all)
        reads &= ~(PA_OPT_HEADS | PA_OPT_HEAD_SIZE | PA_OPT_PRESET);
    if (sw->ops != SW_DECODE && sw->ops != SW_PREFILL)
        reads &= ~PA_OPT_VARIANT;
    const unsigned extra = o->given & ~reads;
    if (extra) {
        const unsigned bit = extra & -extra;
        fprintf(stderr, "pagedattn %s: %s would be ignored, so it is refused: %s\n", cmd, pa_opt_name(bit),
                bit == PA_OPT_DECODES ? "a ragged point's decodes are its batch - 1"
                : bit == PA_OPT_VARIANT
                    ? "--variant names one op's kernel: give it with --ops decode or --ops prefill alone"
                : all && (bit & (PA_OPT_HEADS | PA_OPT_HEAD_SIZE | PA_OPT_PRESET))
                    ? "bench all runs every preset at its own shape (bench --preset NAME takes it)"
                    : "none of the swept ops (--ops) reads it");
        return 1;
    }
    if (refuses_scales_per_head(cmd, NULL, o))
        return 1;
    const char *op = sw->ops == SW_DECODE ? "decode" : "prefill";
    if (o->variant && pa_variant_index(op, o->variant) < 0) {
        fprintf(stderr, "pagedattn %s: unknown --variant '%s' for %s; known: %s\n", cmd, o->variant, op,
                pa_variant_list(op));
        return 1;
    }
    return 0;
}

static const char *SWEEP_HELP =
    "usage: pagedattn bench --preset NAME [options]     sweep one model's ops\n"
    "       pagedattn bench all [options]               sweep every preset\n"
    "  Runs decode, prefill, ragged and reshape_and_cache over batch sizes and context\n"
    "  lengths (GPU: batches 1..256, contexts 512..32768; without a GPU a small grid on\n"
    "  the CPU reference). One table row (and --json row) per point, the progress on stderr.\n"
    "  --ops LIST           subset of decode,prefill,ragged,cache (default all)\n"
    "  --batches N[,N...]   batch sizes (default per op); --seqs N is one batch size (not both)\n"
    "  --ctx N[,N...]       context lengths (default per op)\n"
    "  --max-tokens N       leave out points with batch * ctx above N (default on a GPU\n"
    "                       131072, prefill 32768; on the CPU 4096), named on stderr;\n"
    "                       no row at all is exit 2\n"
    "  --quick              two batch sizes and two lengths per op\n"
    "  and the op options below (--device, --dtype, --layout, --iters, --json, ...), each one\n"
    "  a swept op reads (else exit 2); --variant needs --ops decode or --ops prefill alone;\n"
    "  bench all takes no --heads or --head-size (each preset has its own).\n";

static int cmd_sweep(int argc, char **argv, int all) {
    sweep_cfg sw;
    memset(&sw, 0, sizeof sw);
    sw.ops = SW_ALL;
    sw.max_tokens = -1;
    char **rest = calloc((size_t)argc + 1, sizeof(char *));
    if (!rest)
        return PA_CLI_EXIT_FAIL;
    int nrest = 0, rc = 0, seqs_given = 0, batches_given = 0;
    rest[nrest++] = argv[0];
    long long v;
    for (int i = all ? 2 : 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--ops") || !strcmp(a, "--batches") || !strcmp(a, "--max-tokens")) {
            if (!val) {
                fprintf(stderr, "pagedattn bench: %s needs a value\n", a);
                rc = PA_CLI_EXIT_USAGE;
                goto out;
            }
            i++;
            if (!strcmp(a, "--ops")) {
                sw.ops = parse_ops(val);
                if (!sw.ops) {
                    rc = PA_CLI_EXIT_USAGE;
                    goto out;
                }
            } else if (!strcmp(a, "--batches")) {
                batches_given = 1;
                if (!pa_cli_parse_int_list("bench", "--batches", val, 1, 65536, sw.user_batches, PA_MAX_CTX_LIST,
                                           &sw.n_user_batches)) {
                    rc = PA_CLI_EXIT_USAGE;
                    goto out;
                }
            } else {
                if (!pa_cli_parse_int("--max-tokens", val, 1, 1LL << 40, &v)) {
                    rc = PA_CLI_EXIT_USAGE;
                    goto out;
                }
                sw.max_tokens = v;
                sw.user_max_tokens = 1;
            }
            continue;
        }
        if (!strcmp(a, "--quick")) {
            sw.quick = 1;
            continue;
        }
        seqs_given |= !strcmp(a, "--seqs");
        if (!strcmp(a, "--seqs") && pa_cli_peek_int(val, 1, 65536, &v)) { /* pa_op_opts_parse reports */
            sw.user_batches[0] = (int)v;
            sw.n_user_batches = 1;
        }
        rest[nrest++] = argv[i];
    }
    if (seqs_given && batches_given) { /* (each overwrote the other's batch sizes) */
        fprintf(stderr, "pagedattn bench: --seqs (one batch size) and --batches (a list) both given; give one\n");
        rc = PA_CLI_EXIT_USAGE;
        goto out;
    }
    pa_op_opts base;
    pa_op_opts_default(&base);
    rc = pa_op_opts_parse("bench", nrest, rest, 1, &base);
    if (rc)
        goto out;
    if (!all && !base.preset) {
        fprintf(stderr,
                "pagedattn bench: name an op (decode, prefill, ragged, cache, blocks, convert, merge, plan) or a sweep "
                "(--preset NAME, all); try --help\n");
        rc = PA_CLI_EXIT_USAGE;
        goto out;
    }
    if (sweep_refuses(&sw, &base, all)) {
        rc = PA_CLI_EXIT_USAGE;
        goto out;
    }
    sw.user_ctx = (base.given & PA_OPT_CTX) != 0;
    sw.user_qlen = (base.given & PA_OPT_QLEN) != 0;
    sw.user_layout = (base.given & PA_OPT_LAYOUT) != 0;
    char why[512];
    const int have = pa_cli_have_gpu(why, sizeof why);
    if (base.device_gpu == 1 && !have) {
        fprintf(stderr, "pagedattn bench --device gpu: no CUDA device (%s)\n", why);
        rc = PA_CLI_EXIT_NO_DEVICE;
        goto out;
    }
    rc = pa_cli_probe_json("bench", base.json);
    if (rc)
        goto out;
    const int gpu = base.device_gpu == -1 ? have : base.device_gpu;
    if (base.device_gpu == -1 && !have)
        fprintf(stderr, "pagedattn bench: no CUDA device (%s); sweeping the CPU reference on a small grid\n", why);
    if (!gpu) {
        if (!(base.given & PA_OPT_ITERS))
            base.iters = 3;
        if (!(base.given & PA_OPT_WARMUP))
            base.warmup = 1;
    }
    if (sw.max_tokens < 0)
        sw.max_tokens = gpu ? 131072 : 4096;
    if (gpu) /* the roofs once, before the first row, so no row's timing follows them */
        fprintf(stderr,
                "pagedattn bench: %s, read roof %.0f GB/s, copy roof %.0f GB/s, cuBLAS %s GEMM roof %.0f TFLOP/s\n",
                pa_bench_device_name(1), pa_bench_read_bandwidth(), pa_bench_copy_bandwidth(),
                pa_dtype_name(base.dtype), pa_bench_gemm_tflops(base.dtype));
    const double t0 = pa_cli_now();
    int failed = 0, skipped = 0, over = 0;
    for (int p = 0; p < PA_NUM_PRESETS; p++) {
        pa_op_opts o = base;
        if (all)
            pa_apply_preset(&o, &PA_PRESETS[p]);
        else if (p > 0)
            break;
        run_sweep(&sw, &o, gpu, &failed, &skipped, &over);
    }
    fprintf(stderr, "pagedattn bench: %d rows in %.1f s on %s; %d points skipped, %d left out, %d failed%s%s\n",
            pa_bench_rows_emitted(), pa_cli_now() - t0, gpu ? pa_bench_device_name(1) : "the CPU reference", skipped,
            over, failed, base.json ? "; rows appended to " : "", base.json ? base.json : "");
    /* No row at all with nothing failed: every point refused these options
     * or was left out by the bound, which is a usage error (exit 2), as
     * `bench OP` with the same options is; it exited 0 until 2026-12-07. */
    rc = failed ? PA_CLI_EXIT_FAIL : pa_bench_rows_emitted() == 0 ? PA_CLI_EXIT_USAGE : 0;
    if (rc == PA_CLI_EXIT_USAGE)
        fprintf(stderr, "pagedattn bench: no row: each point was skipped (see above) or left out\n");
out:
    free(rest);
    return rc;
}

/* ---- bench --------------------------------------------------------------- */

static const char *BENCH_HELP =
    "usage: pagedattn bench OP [options]\n"
    "  Times OP: CUDA events, warm-up, L2 flushed between iterations, unique cache blocks,\n"
    "  the device's read bandwidth (decode, ragged), pinned-host copy bandwidth in the swap's\n"
    "  direction (blocks swap-out, swap-in), copy bandwidth (the others) and a cuBLAS\n"
    "  GEMM's TFLOP/s measured in the same run as the roofs, median of --iters with min/max, the cuBLAS baseline "
    "beside attention\n"
    "  ops. --device cpu times the CPU reference (the default where there is no GPU).\n"
    "  --interp runs the GPU path once in interpret mode (the kernels and the baseline on\n"
    "  the CPU, timed on a simulated clock: tests/interp/README.md): a check of the\n"
    "  benchmark's own code and figures without a GPU.\n"
    "  OP: decode, prefill, ragged, cache (reshape_and_cache), blocks (swap_blocks out or in,\n"
    "      copy_blocks: --variant swap-out|swap-in|copy), convert, merge (merge_attn_states:\n"
    "      --seqs N tokens, default 8192 on a GPU, 1024 on the CPU, 512 with --interp; the query\n"
    "      heads of --heads; bytes against the copy roof), plan\n"
    "  Sweeps: pagedattn bench --preset NAME | all (see pagedattn bench --preset x --help)\n";

static int cmd_bench(int argc, char **argv) {
    if (argc < 2 || ((!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))) {
        fputs(BENCH_HELP, argc < 2 ? stderr : stdout);
        fputs(PA_OPT_HELP, argc < 2 ? stderr : stdout);
        return argc < 2 ? PA_CLI_EXIT_USAGE : 0;
    }
    const char *op = argv[1];
    if (!strcmp(op, "plan"))
        return pa_bench_plan(argc - 1, argv + 1);
    const int sweep = !strcmp(op, "all") || op[0] == '-';
#ifdef PA_CLI_INTERP
    if (sweep) { /* thousands of GPU-sized launches: days on the CPU */
        fprintf(stderr, "pagedattn bench: the preset sweeps are not for interpret mode; bench OP --interp runs one "
                        "op's GPU path once\n");
        return PA_CLI_EXIT_USAGE;
    }
#endif
    if (!sweep && (!known_op(op))) {
        fprintf(
            stderr,
            "pagedattn bench: unknown op '%s'; known: decode, prefill, ragged, cache, blocks, convert, merge, plan, "
            "all, --preset NAME\n",
            op);
        return PA_CLI_EXIT_USAGE;
    }
    if (want_help(argc, argv)) {
        fputs(sweep ? SWEEP_HELP : BENCH_HELP, stdout);
        fputs(PA_OPT_HELP, stdout);
        return 0;
    }
    if (sweep)
        return cmd_sweep(argc, argv, !strcmp(op, "all"));
    pa_op_opts o;
    pa_op_opts_default(&o);
    int e = pa_op_opts_parse("bench", argc, argv, 2, &o);
    if (e)
        return e;
    if (refuses_attention_options("bench", op, &o) || refuses_ignored_options("bench", op, &o, 0))
        return PA_CLI_EXIT_USAGE;
    if (!strcmp(op, "merge") && (e = merge_usage("bench", &o, o.device_gpu)) != 0)
        return e;
    char why[512];
    int gpu = pa_cli_have_gpu(why, sizeof why);
    if (o.device_gpu == 1 && !gpu) {
        fprintf(stderr, "pagedattn bench %s --device gpu: no CUDA device (%s)\n", op, why);
        return PA_CLI_EXIT_NO_DEVICE;
    }
    e = pa_cli_probe_json("bench", o.json);
    if (e)
        return e;
    if (o.device_gpu == -1 && !gpu)
        fprintf(stderr, "pagedattn bench %s: no CUDA device (%s); timing the CPU reference\n", op, why);
    int use_gpu = o.device_gpu == -1 ? gpu : o.device_gpu;
    if (!strcmp(op, "merge") && o.device_gpu == -1 && (e = merge_usage("bench", &o, use_gpu)) != 0)
        return e;
    if (!strcmp(op, "decode"))
        return pa_run_decode(&o, 0, use_gpu);
    if (!strcmp(op, "prefill"))
        return pa_run_prefill(&o, 0, use_gpu);
    if (!strcmp(op, "ragged"))
        return pa_run_ragged(&o, 0, use_gpu);
    if (!strcmp(op, "cache"))
        return pa_run_cache(&o, 0, use_gpu);
    if (!strcmp(op, "blocks"))
        return pa_run_blocks(&o, 0, use_gpu);
    if (!strcmp(op, "merge"))
        return bench_merge(&o, use_gpu);
    return bench_convert(&o, use_gpu);
}

/* ---- main ---------------------------------------------------------------- */

static const char *MAIN_HELP =
    "usage: pagedattn COMMAND [options]\n"
    "  info                 library and device information\n"
    "  check OP             run a CUDA op and compare it with the CPU reference (needs a GPU;\n"
    "                       with --interp the kernel runs on the CPU in interpret mode)\n"
    "  bench OP             time an op (GPU, or the CPU reference with --device cpu)\n"
    "  bench --preset NAME  sweep a model's ops over batch sizes and context lengths (bench all: every preset)\n"
    "  plan                 lay out a scheduler batch: print every metadata array as JSON\n"
    "  --version, --help\n"
    "Each command takes --help. Exit codes: 0 ok, 1 check/op failed, 2 usage, 3 no GPU.\n";

static int dispatch(int argc, char **argv) {
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(MAIN_HELP, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("pagedattn %s (commit %s)\n", pa_version(), PA_GIT_COMMIT);
        return 0;
    }
    if (!strcmp(cmd, "info"))
        return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "check"))
        return cmd_check(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return cmd_bench(argc - 1, argv + 1);
    if (!strcmp(cmd, "plan"))
        return pa_cmd_plan(argc - 1, argv + 1);
    fprintf(stderr, "pagedattn: unknown command '%s' (try --help)\n", cmd);
    return PA_CLI_EXIT_USAGE;
}

/* `check OP --interp`: the same command in pagedattn-interp, the CLI built on
 * the interpreter (tests/interp/), which runs the real kernel sources on the
 * CPU and prints memory-access proxies. Looked up beside this program, then in
 * the build tree it came from. Returns only when it cannot be started. */
static int take_interp_flag(int *argc, char **argv) {
    int found = 0, k = 0;
    for (int i = 0; i < *argc; i++) {
        if (!strcmp(argv[i], "--interp"))
            found = 1;
        else
            argv[k++] = argv[i];
    }
    argv[k] = NULL;
    *argc = k;
    return found;
}

#ifndef PA_CLI_INTERP
static int run_interp(char **argv) {
    char here[4096];
    const ssize_t n = readlink("/proc/self/exe", here, sizeof here - 64);
    if (n > 0) {
        here[n] = 0;
        char *slash = strrchr(here, '/');
        if (slash) {
            snprintf(slash + 1, 64, "pagedattn-interp");
            execv(here, argv);
        }
    }
#ifdef PA_INTERP_CLI_PATH
    execv(PA_INTERP_CLI_PATH, argv);
#endif
    fprintf(stderr, "pagedattn: --interp needs pagedattn-interp, built with -Dinterp=true (tests/interp/): %s\n",
            strerror(errno));
    return PA_CLI_EXIT_USAGE;
}
#endif

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(MAIN_HELP, stderr);
        return PA_CLI_EXIT_USAGE;
    }
    if (take_interp_flag(&argc, argv)) {
        if (argc < 2) { /* `pagedattn --interp` and nothing else */
            fputs(MAIN_HELP, stderr);
            return PA_CLI_EXIT_USAGE;
        }
        if (strcmp(argv[1], "check") != 0 && strcmp(argv[1], "bench") != 0) {
            fprintf(stderr, "pagedattn: --interp is for check and bench (pagedattn check OP --interp)\n");
            return PA_CLI_EXIT_USAGE;
        }
#ifndef PA_CLI_INTERP
        return run_interp(argv);
#endif
    }
#ifdef PA_CLI_INTERP
    /* With --json - the rows own stdout (report.c): this line and the
     * memory-access report at exit go to stderr then. */
    FILE *note = stdout;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--json") && !strcmp(argv[i + 1], "-"))
            note = stderr;
    pa_prof_output(note);
    fprintf(note,
            "interpret mode: the kernels run from their CUDA sources on the CPU (tests/interp); no GPU is used\n");
#endif
    int rc = dispatch(argc, argv);
    if (rc == 0 && pa_bench_json_errors() > 0) {
        fprintf(stderr, "pagedattn: %d JSON row(s) could not be written\n", pa_bench_json_errors());
        rc = PA_CLI_EXIT_FAIL;
    }
    /* What went to stdout (plan's arrays, info, tables, `--json -` rows) may
     * still sit in its buffer: a write that fails there (a full disk, a closed
     * pipe) fails the command rather than exiting 0 with the output lost. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "pagedattn: writing to standard output failed\n");
        if (rc == 0)
            rc = PA_CLI_EXIT_FAIL;
    }
    return rc;
}
