/* `pagedattn check|bench decode`: paged decode attention.
 *
 *   --variant auto (default)  the recommended entry, pa_paged_attention_decode
 *   --variant v1 | v2         vLLM's PagedAttention v1 / v2 entries
 *   --variant all             the three, one row each
 *
 * check: the variant(s) on the GPU against the CPU reference, PASS/FAIL with
 * pa_compare_format. bench: CUDA-event timings (pa_bench_time_gpu: warm-up, L2
 * flushed) on the GPU, or the CPU reference with --device cpu. Bytes are the
 * HBM bytes the op must touch: K and V of the attended tokens (min(ctx,
 * window) per sequence), Q and O; the roof is the measured read bandwidth
 * (pa_bench_read_bandwidth: the op reads the cache and writes little); the
 * cuBLAS baseline (benchmarks/baseline.h) runs on the same problem. Every
 * sequence has --ctx tokens in unique, scattered cache blocks. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "cli.h"
#include "problems.h"

enum { VAR_V1 = 0, VAR_V2 = 1, VAR_AUTO = 2, VAR_ALL = 3 }; /* cli.c's table of variant names */
static const char *var_name(int v) { return pa_variant_name("decode", v); }
static const char *const var_impl[3] = {"pa-v1", "pa-v2", "pa-decode"};

/* Variants to run, in order; returns the count or 0 (message printed). */
static int parse_variants(const pa_op_opts *o, const char *cmd, int *list) {
    const int v = o->variant ? pa_variant_index("decode", o->variant) : VAR_AUTO;
    if (v == VAR_ALL) {
        list[0] = VAR_V1;
        list[1] = VAR_V2;
        list[2] = VAR_AUTO;
        return 3;
    }
    if (v >= 0) {
        list[0] = v;
        return 1;
    }
    fprintf(stderr, "pagedattn %s decode: unknown --variant '%s'; known: %s\n", cmd, o->variant,
            pa_variant_list("decode"));
    return 0;
}

/* ---- problems ---------------------------------------------------------------- */

static pa_decode_problem *make_decode_problem(const pa_op_opts *o, int ctx_len, const char *cmd) {
    int *lens = malloc(sizeof(int) * (size_t)o->seqs);
    if (!lens)
        return NULL;
    for (int s = 0; s < o->seqs; s++)
        lens[s] = ctx_len;
    pa_decode_problem_cfg cfg = {.seed = o->seed,
                                 .layout = o->layout,
                                 .q_dtype = o->dtype,
                                 .cache_dtype = o->cache_dtype,
                                 .num_seqs = o->seqs,
                                 .num_heads = o->heads,
                                 .num_kv_heads = o->kv_heads,
                                 .head_size = o->head_size,
                                 .block_size = o->block_size,
                                 .seq_lens = lens,
                                 .with_alibi = o->alibi,
                                 .with_sinks = o->sinks,
                                 .skip_logical = 1,
                                 .scales_per_head = o->scales_per_head};
    /* Validate the shape before allocating anything large. */
    pa_decode_params probe;
    memset(&probe, 0, sizeof probe);
    char dummy[16];
    probe.q_dtype = o->dtype;
    probe.num_heads = o->heads;
    probe.kv = (pa_kv_cache){.layout = o->layout,
                             .dtype = o->cache_dtype,
                             .key = dummy,
                             .value = dummy,
                             .num_blocks = 1,
                             .block_size = o->block_size,
                             .num_kv_heads = o->kv_heads,
                             .head_size = o->head_size,
                             .scales_per_head = o->scales_per_head && pa_dtype_is_fp8(o->cache_dtype)};
    probe.scale = 1.0f;
    probe.soft_cap = o->soft_cap;
    probe.sliding_window = o->window;
    if (pa_decode_validate(&probe) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn %s decode: %s\n", cmd, pa_last_error());
        free(lens);
        return NULL;
    }
    /* Host memory: the cache (whole blocks), Q and O (and check's copy of the GPU's O and its float reference). */
    const double blocks = ((double)ctx_len + o->block_size - 1) / o->block_size;
    const double cache_bytes =
        2.0 * o->seqs * floor(blocks) * o->block_size * o->kv_heads * o->head_size * pa_dtype_size(o->cache_dtype);
    const double qo_bytes =
        (double)o->seqs * o->heads * o->head_size *
        (2.0 * pa_dtype_size(o->dtype) + (strcmp(cmd, "check") ? 0.0 : 4.0 + pa_dtype_size(o->dtype)));
    if (cache_bytes + qo_bytes > 8e9) {
        fprintf(stderr, "pagedattn %s decode: the problem needs %.1f GB of host memory (cache, Q, O); at most 8 GB\n",
                cmd, (cache_bytes + qo_bytes) / 1e9);
        free(lens);
        return NULL;
    }
    pa_decode_problem *pr = pa_decode_problem_make(&cfg);
    free(lens);
    if (pr) {
        pr->p.sliding_window = o->window;
        pr->p.soft_cap = o->soft_cap;
    }
    return pr;
}

/* HBM bytes the op must touch: K and V of the attended tokens, Q and O. */
static double decode_bytes(const pa_op_opts *o, int ctx_len) {
    const int kv_tokens = o->window > 0 && o->window < ctx_len ? o->window : ctx_len;
    double kv = 2.0 * o->seqs * (double)kv_tokens * o->kv_heads * o->head_size * pa_dtype_size(o->cache_dtype);
    double qo = 2.0 * o->seqs * (double)o->heads * o->head_size * pa_dtype_size(o->dtype);
    return kv + qo;
}

/* ---- device copy ---------------------------------------------------------------- */

typedef struct gpu_decode {
    pa_decode_params p; /* device pointers */
    void *dev[12];
    int ndev;
    void *ws;
    size_t ws_bytes;
    int variant;
} gpu_decode;

static void *up(gpu_decode *g, const void *h, size_t bytes, int *err) {
    return pa_bench_upload(g->dev, &g->ndev, (int)(sizeof g->dev / sizeof g->dev[0]), h, bytes, err, "decode");
}

static void gpu_decode_free(gpu_decode *g) {
    for (int i = 0; i < g->ndev; i++)
        cudaFree(g->dev[i]);
    cudaFree(g->ws);
    memset(g, 0, sizeof *g);
}

static int gpu_decode_make(const pa_decode_problem *pr, gpu_decode *g) {
    memset(g, 0, sizeof *g);
    int err = 0;
    const pa_decode_params *p = &pr->p;
    const size_t qs = pa_dtype_size(p->q_dtype), cs = pa_dtype_size(p->kv.dtype);
    g->p = *p;
    g->p.query = up(g, pr->q, pr->q_elems * qs, &err);
    g->p.out = up(g, pr->out, pr->out_elems * qs, &err);
    g->p.kv.key = up(g, pr->kc, pr->k_elems * cs, &err);
    g->p.kv.value = up(g, pr->vc, pr->v_elems * cs, &err);
    g->p.block_tables = up(g, pr->block_tables, sizeof(int32_t) * (size_t)p->num_seqs * p->block_table_stride, &err);
    g->p.seq_lens = up(g, pr->seq_lens, sizeof(int32_t) * (size_t)p->num_seqs, &err);
    /* the one scale, or one per KV head (scales_per_head): the whole array */
    g->p.kv.k_scale = up(g, p->kv.k_scale, pa_kv_scale_bytes(&p->kv), &err);
    g->p.kv.v_scale = up(g, p->kv.v_scale, pa_kv_scale_bytes(&p->kv), &err);
    g->p.alibi_slopes = up(g, pr->alibi, sizeof(float) * (size_t)p->num_heads, &err);
    g->p.sinks = up(g, pr->sinks, sizeof(float) * (size_t)p->num_heads, &err);
    if (err)
        gpu_decode_free(g);
    return err;
}

/* Workspace for `variant` (kept across calls, grown when needed). */
static int gpu_decode_prepare(gpu_decode *g, int variant) {
    size_t need = 0;
    pa_status s = PA_SUCCESS;
    if (variant == VAR_V2)
        s = pa_paged_attention_v2_workspace_size(&g->p, &need);
    else if (variant == VAR_AUTO)
        s = pa_paged_attention_decode_workspace_size(&g->p, &need);
    if (s != PA_SUCCESS) {
        fprintf(stderr, "pagedattn decode: %s\n", pa_last_error());
        return 1;
    }
    if (need > g->ws_bytes) {
        cudaFree(g->ws);
        g->ws = NULL;
        g->ws_bytes = 0;
        if (cudaMalloc(&g->ws, need) != cudaSuccess) {
            fprintf(stderr, "pagedattn decode: workspace of %zu bytes does not fit on the device\n", need);
            return 1;
        }
        g->ws_bytes = need;
    }
    g->variant = variant;
    return 0;
}

static int run_gpu_decode(void *ctx) {
    gpu_decode *g = ctx;
    pa_status s;
    if (g->variant == VAR_V1)
        s = pa_paged_attention_v1(&g->p, NULL);
    else if (g->variant == VAR_V2)
        s = pa_paged_attention_v2(&g->p, g->ws, g->ws_bytes, NULL);
    else
        s = pa_paged_attention_decode(&g->p, g->ws, g->ws_bytes, NULL);
    if (s != PA_SUCCESS) {
        fprintf(stderr, "pagedattn decode %s: %s\n", var_name(g->variant), pa_last_error());
        return 1;
    }
    return 0;
}

static int run_ref_decode(void *ctx) {
    pa_decode_problem *pr = ctx;
    if (pa_ref_paged_decode(&pr->p) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn bench decode: %s\n", pa_last_error());
        return 1;
    }
    return 0;
}

static void fill_row(const pa_op_opts *o, int ctx_len, const char *impl, pa_bench_row *r) {
    memset(r, 0, sizeof *r);
    r->op = "decode";
    r->impl = impl;
    r->seqs = o->seqs;
    r->heads = o->heads;
    r->kv_heads = o->kv_heads;
    r->head_size = o->head_size;
    r->ctx = ctx_len;
    r->qlen = 1;
    r->block_size = o->block_size;
    r->dtype = o->dtype;
    r->cache_dtype = o->cache_dtype;
    r->layout = o->layout;
    r->bytes = decode_bytes(o, ctx_len);
}

/* ---- check: GPU against the CPU reference --------------------------------------- */

static int check_decode(const pa_op_opts *o) {
    int vars[3];
    const int nv = parse_variants(o, "check", vars);
    if (!nv)
        return PA_CLI_EXIT_USAGE;
    int rc = PA_CLI_EXIT_OK;
    for (int k = 0; k < o->num_ctx && rc != PA_CLI_EXIT_USAGE; k++) {
        pa_decode_problem *pr = make_decode_problem(o, o->ctx[k], "check");
        if (!pr)
            return PA_CLI_EXIT_USAGE;
        gpu_decode g;
        if (gpu_decode_make(pr, &g)) {
            pa_decode_problem_free(pr);
            return PA_CLI_EXIT_FAIL;
        }
        if (pa_ref_paged_decode(&pr->p) != PA_SUCCESS) {
            fprintf(stderr, "pagedattn check decode: reference: %s\n", pa_last_error());
            gpu_decode_free(&g);
            pa_decode_problem_free(pr);
            return PA_CLI_EXIT_FAIL;
        }
        float *ref = malloc(sizeof(float) * pr->out_elems + 4);
        void *got = malloc(pr->out_elems * pa_dtype_size(o->dtype) + 4);
        for (size_t i = 0; i < pr->out_elems; i++)
            ref[i] = pa_load_as_float(o->dtype, pr->out, i);
        const pa_tolerance tol = pa_tolerance_for(o->dtype, o->cache_dtype);
        for (int v = 0; v < nv; v++) {
            if (gpu_decode_prepare(&g, vars[v]) || run_gpu_decode(&g) ||
                cudaMemcpy(got, g.p.out, pr->out_elems * pa_dtype_size(o->dtype), cudaMemcpyDeviceToHost) !=
                    cudaSuccess) {
                fprintf(stderr, "pagedattn check decode %s: the GPU run failed\n", var_name(vars[v]));
                rc = PA_CLI_EXIT_FAIL;
                continue;
            }
            pa_compare_result res;
            char buf[1024];
            const int ok = pa_compare(got, o->dtype, ref, (int64_t)pr->out_elems, tol, &res);
            printf("%s decode %s seqs=%d heads=%d/%d head=%d block=%d ctx=%d %s/%s %s%s: %s\n", ok ? "PASS" : "FAIL",
                   var_name(vars[v]), o->seqs, o->heads, o->kv_heads, o->head_size, o->block_size, o->ctx[k],
                   pa_dtype_name(o->dtype), pa_dtype_name(o->cache_dtype), pa_kv_layout_name(o->layout),
                   pr->p.kv.scales_per_head ? " scales/head" : "", pa_compare_format(&res, tol, buf, sizeof buf));
            if (!ok)
                rc = PA_CLI_EXIT_FAIL;
        }
        free(ref);
        free(got);
        gpu_decode_free(&g);
        pa_decode_problem_free(pr);
    }
    return rc;
}

/* ---- bench -------------------------------------------------------------------------- */

static int bench_decode(const pa_op_opts *o, int gpu) {
    int vars[3];
    const int nv = parse_variants(o, "bench", vars); /* checked on the CPU path too */
    if (!nv)
        return PA_CLI_EXIT_USAGE;
    if (!gpu && o->variant) { /* one CPU reference serves every entry: the option would be ignored */
        fprintf(stderr,
                "pagedattn bench decode: --variant %s picks a GPU entry; the CPU reference is the same computation "
                "for all of them (leave --variant out, or run on a GPU)\n",
                o->variant);
        return PA_CLI_EXIT_USAGE;
    }
    int rc = 0;
    for (int k = 0; k < o->num_ctx && rc == 0; k++) {
        if (o->num_ctx > 1)
            pa_bench_progress(k + 1, o->num_ctx, "decode ctx=%d", o->ctx[k]);
        pa_decode_problem *pr = make_decode_problem(o, o->ctx[k], "bench");
        if (!pr) {
            rc = PA_CLI_EXIT_USAGE;
            break;
        }
        pa_bench_row r;
        if (!gpu) {
            fill_row(o, o->ctx[k], "cpu-ref", &r);
            if (pa_bench_time_cpu(run_ref_decode, pr, o->warmup, o->iters, &r.t) != 0)
                rc = PA_CLI_EXIT_FAIL;
            else
                pa_bench_emit(o, &r);
            pa_decode_problem_free(pr);
            continue;
        }
        gpu_decode g;
        const int err = gpu_decode_make(pr, &g);
        pa_decode_problem_free(pr); /* the device copy is all the timing needs */
        if (err) {
            rc = PA_CLI_EXIT_FAIL;
            break;
        }
        double baseline_us = -1.0;
        const char *baseline_note = NULL;
        for (int v = 0; v < nv && rc == 0; v++) {
            fill_row(o, o->ctx[k], var_impl[vars[v]], &r);
            r.roof_gbps = pa_bench_read_bandwidth();
            r.roof_name = "read";
            if (gpu_decode_prepare(&g, vars[v]) ||
                pa_bench_time_gpu(var_impl[vars[v]], run_gpu_decode, &g, o->warmup, o->iters, &r.t) != 0) {
                rc = PA_CLI_EXIT_FAIL;
                break;
            }
            if (baseline_us < 0) { /* once per shape: every variant's row shows it */
                pa_baseline_problem pb;
                pa_baseline_from_decode(&g.p, &pb);
                pa_bench_baseline(&pb, o->warmup, o->iters, &r);
                baseline_us = r.baseline_us;
                baseline_note = r.note;
            }
            r.baseline_us = baseline_us;
            r.note = baseline_note;
            pa_bench_emit(o, &r);
        }
        gpu_decode_free(&g);
    }
    return rc;
}

int pa_run_decode(const pa_op_opts *o, int check, int gpu) {
    if (check)
        return check_decode(o);
    return bench_decode(o, gpu);
}
