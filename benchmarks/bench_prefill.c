/* `pagedattn check|bench prefill`: prefill attention.
 *
 *   --variant prompt   (default) causal varlen prompt attention, no cache: every
 *                      sequence has --ctx tokens (a list sweeps)
 *   --variant encoder  the same, non-causal (encoder attention)
 *   --variant context  context (prefix) attention: --ctx cached tokens in the
 *                      paged cache plus --qlen new tokens (default 512) per sequence
 *   --variant cross    cross-attention (encoder/decoder models): --qlen decoder
 *                      tokens (default 512) over --ctx encoder tokens per sequence,
 *                      non-causal, no cache
 *
 * FLOPs are counted exactly, as 4 * head_size * num_heads * (visible query-key
 * pairs): two GEMM-like products (Q K^T and P V) of 2 FLOPs per multiply-add,
 * over the pairs the masks leave. A causal square prompt of n tokens has
 * n (n + 1) / 2 pairs, so it counts about 4 n^2 head_size heads / 2; masked work a
 * kernel still does (tile edges) is not counted. The roof is a cuBLAS GEMM's
 * TFLOP/s in the query dtype, measured in the same run; the baseline is the
 * cuBLAS-based attention (benchmarks/baseline.h) on the same problem.
 *
 * Without a GPU (or with --device cpu) the CPU reference is timed; with the
 * default shape that is reduced to a small one (2 sequences, 8/2 heads, 256
 * tokens) so it finishes in seconds. `check` compares the CUDA op with the CPU
 * reference (the same reduced default shape) under pa_tolerance_for. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "baseline.h"
#include "cli.h"
#include "prefill_problems.h"

enum { V_PROMPT, V_ENCODER, V_CONTEXT, V_CROSS }; /* cli.c's table of variant names */

typedef struct pf_shape {
    int variant;
    int seqs, heads, kv_heads, head_size, block_size, qlen;
    int iters, warmup;
} pf_shape;

static int parse_variant(const pa_op_opts *o, const char *cmd, int *v) {
    *v = o->variant ? pa_variant_index("prefill", o->variant) : V_PROMPT;
    if (*v < 0) {
        fprintf(stderr, "pagedattn %s prefill: unknown --variant '%s'; known: %s\n", cmd, o->variant,
                pa_variant_list("prefill"));
        return PA_CLI_EXIT_USAGE;
    }
    /* A --qlen, --layout, --cache-dtype or --block-size the variant would
     * ignore is refused before this (pagedattn.c, op_reads). */
    return 0;
}

/* The CLI's default shape (pa_op_opts_default) is a GPU-sized problem; on the
 * CPU reference it is swapped for a small one, but only when no shape option
 * (and no preset) was given: a shape the user asked for is run as given. */
static int is_default_shape(const pa_op_opts *o) {
    return !(o->given & (PA_OPT_SEQS | PA_OPT_HEADS | PA_OPT_HEAD_SIZE | PA_OPT_CTX | PA_OPT_QLEN)) && !o->preset;
}

static pf_shape shape_of_opts(const pa_op_opts *o, int variant, int small) {
    pf_shape s = {.variant = variant,
                  .seqs = o->seqs,
                  .heads = o->heads,
                  .kv_heads = o->kv_heads,
                  .head_size = o->head_size,
                  .block_size = o->block_size,
                  .qlen = o->qlen > 0 ? o->qlen : 512,
                  .iters = o->iters,
                  .warmup = o->warmup};
    if (small) { /* fewer iterations too, unless --iters or --warmup was given */
        s.seqs = 2;
        s.heads = 8;
        s.kv_heads = 2;
        s.qlen = o->qlen > 0 ? o->qlen : 64;
        s.iters = s.iters > 3 && !(o->given & PA_OPT_ITERS) ? 3 : s.iters;
        s.warmup = s.warmup > 1 && !(o->given & PA_OPT_WARMUP) ? 1 : s.warmup;
    }
    return s;
}

/* Visible (query, key) pairs of one sequence under the masks (prefill.h: a
 * window reaches both sides of a non-causal query). */
static double visible_pairs(int q_len, int k_len, int causal, int window) {
    double n = 0;
    for (int i = 0; i < q_len; i++) {
        const int qp = k_len - q_len + i;
        int hi = causal ? (qp < k_len - 1 ? qp : k_len - 1) : k_len - 1;
        if (!causal && window > 0 && (int64_t)qp + window - 1 < hi)
            hi = qp + window - 1;
        const int lo = window > 0 && qp - window + 1 > 0 ? qp - window + 1 : 0;
        n += hi >= lo ? hi - lo + 1 : 0;
    }
    return n;
}

/* ---- one problem: host data, optional device copies --------------------------------- */

typedef struct pf_problem {
    pf_shape sh;
    int ctx;
    pa_context_problem *cp; /* context variant */
    pa_prompt_problem *pp;  /* prompt / encoder variants */
    pa_context_attention_params dcp;
    pa_prompt_attention_params dpp;
    void *dev[16]; /* pf_up's copies: 13 for context attention with ALiBi and sinks */
    int ndev;
} pf_problem;

static void pf_free(pf_problem *p) {
    for (int i = 0; i < p->ndev; i++)
        cudaFree(p->dev[i]);
    pa_context_problem_free(p->cp);
    pa_prompt_problem_free(p->pp);
    memset(p, 0, sizeof *p);
}

static int pf_build(const pa_op_opts *o, const pf_shape *sh, int ctx, const char *cmd, int ref, pf_problem *p) {
    memset(p, 0, sizeof *p);
    p->sh = *sh;
    p->ctx = ctx;
    int *ql = malloc(sizeof(int) * (size_t)sh->seqs), *cl = malloc(sizeof(int) * (size_t)sh->seqs);
    if (!ql || !cl) {
        free(ql);
        free(cl);
        return PA_CLI_EXIT_FAIL;
    }
    const int has_qlen = sh->variant == V_CONTEXT || sh->variant == V_CROSS;
    for (int s = 0; s < sh->seqs; s++) {
        ql[s] = has_qlen ? sh->qlen : ctx;
        cl[s] = has_qlen ? ctx : 0; /* context tokens, or the encoder's keys */
    }
    /* Host memory, as the other ops count it: Q and O (check adds its copy of
     * the GPU's O and a float reference), the contiguous K and V (the
     * prompt's, the encoder's keys of cross, the new tokens of context),
     * context's cache (whole blocks of context and new tokens) and, where the
     * CPU reference runs (`ref`), its scratch: every KV head of the longest
     * sequence's keys and values in f32 and a double logit a key
     * (csrc/reference/prefill.c). */
    const double q_rows = (double)sh->seqs * ql[0] * sh->heads * sh->head_size;
    const double kv_rows =
        (double)sh->seqs * (sh->variant == V_CONTEXT ? sh->qlen : ctx) * sh->kv_heads * sh->head_size;
    const double esz = pa_dtype_size(o->dtype);
    double bytes = q_rows * (2.0 * esz + (strcmp(cmd, "check") ? 0.0 : 4.0 + esz)) + 2.0 * kv_rows * esz;
    if (sh->variant == V_CONTEXT)
        bytes += 2.0 * sh->seqs * floor(((double)ctx + sh->qlen + sh->block_size - 1) / sh->block_size) *
                 sh->block_size * sh->kv_heads * sh->head_size * pa_dtype_size(o->cache_dtype);
    if (ref) {
        const double max_k = (double)ctx + (sh->variant == V_CONTEXT ? sh->qlen : 0);
        bytes += max_k * (2.0 * 4.0 * sh->kv_heads * sh->head_size + 8.0);
    }
    int rc = 0;
    if (bytes > 8e9) {
        fprintf(stderr,
                "pagedattn %s prefill: the problem needs %.1f GB of host memory (Q, K, V, O%s%s); at most 8 GB\n", cmd,
                bytes / 1e9, sh->variant == V_CONTEXT ? ", cache" : "", ref ? ", the reference's scratch" : "");
        rc = PA_CLI_EXIT_USAGE;
    } else if (sh->variant == V_CONTEXT) {
        pa_context_problem_cfg c = {.seed = o->seed,
                                    .layout = o->layout,
                                    .q_dtype = o->dtype,
                                    .cache_dtype = o->cache_dtype,
                                    .num_seqs = sh->seqs,
                                    .num_heads = sh->heads,
                                    .num_kv_heads = sh->kv_heads,
                                    .head_size = sh->head_size,
                                    .block_size = sh->block_size,
                                    .query_lens = ql,
                                    .context_lens = cl,
                                    .with_alibi = o->alibi,
                                    .with_sinks = o->sinks,
                                    .skip_logical = 1,
                                    .scales_per_head = o->scales_per_head};
        p->cp = pa_context_problem_make(&c);
        if (p->cp) {
            p->cp->p.sliding_window = o->window;
            p->cp->p.soft_cap = o->soft_cap;
            if (pa_context_attention_validate(&p->cp->p) != PA_SUCCESS) {
                fprintf(stderr, "pagedattn %s prefill: %s\n", cmd, pa_last_error());
                rc = PA_CLI_EXIT_USAGE;
            }
        } else {
            rc = PA_CLI_EXIT_USAGE;
        }
    } else {
        pa_prompt_problem_cfg c = {.seed = o->seed,
                                   .dtype = o->dtype,
                                   .attn_type = sh->variant == V_PROMPT  ? PA_ATTN_DECODER
                                                : sh->variant == V_CROSS ? PA_ATTN_ENCODER_DECODER
                                                                         : PA_ATTN_ENCODER,
                                   .num_seqs = sh->seqs,
                                   .num_heads = sh->heads,
                                   .num_kv_heads = sh->kv_heads,
                                   .head_size = sh->head_size,
                                   .q_lens = ql,
                                   .k_lens = sh->variant == V_CROSS ? cl : NULL,
                                   .with_alibi = o->alibi,
                                   .with_sinks = o->sinks};
        if (o->cache_dtype != o->dtype)
            fprintf(stderr, "pagedattn %s prefill: prompt attention has no cache; --cache-dtype ignored\n", cmd);
        p->pp = pa_prompt_problem_make(&c);
        if (p->pp) {
            p->pp->p.sliding_window = o->window;
            p->pp->p.soft_cap = o->soft_cap;
            if (pa_prompt_attention_validate(&p->pp->p) != PA_SUCCESS) {
                fprintf(stderr, "pagedattn %s prefill: %s\n", cmd, pa_last_error());
                rc = PA_CLI_EXIT_USAGE;
            }
        } else {
            rc = PA_CLI_EXIT_USAGE;
        }
    }
    free(ql);
    free(cl);
    if (rc)
        pf_free(p);
    return rc;
}

/* Builds the problem (pf_build), its shape validated first on one sequence of
 * a few tokens, so a shape the op refuses is refused at once, not after
 * building a large problem. */
static int pf_make(const pa_op_opts *o, const pf_shape *sh, int ctx, const char *cmd, int ref, pf_problem *p) {
    pf_shape tiny = *sh;
    tiny.seqs = 1;
    tiny.qlen = sh->qlen < 4 ? sh->qlen : 4;
    const int tiny_ctx = ctx < 4 ? ctx : 4;
    if (tiny.seqs != sh->seqs || tiny.qlen != sh->qlen || tiny_ctx != ctx) {
        const int rc = pf_build(o, &tiny, tiny_ctx, cmd, ref, p);
        if (rc)
            return rc;
        pf_free(p);
    }
    return pf_build(o, sh, ctx, cmd, ref, p);
}

static void *pf_up(pf_problem *p, const void *h, size_t bytes, int *err) {
    return pa_bench_upload(p->dev, &p->ndev, (int)(sizeof p->dev / sizeof p->dev[0]), h, bytes, err, "prefill");
}

static int pf_upload(pf_problem *p) {
    int err = 0;
    if (p->cp) {
        const pa_context_problem *c = p->cp;
        const size_t qs = pa_dtype_size(c->p.q_dtype), cs = pa_dtype_size(c->p.kv.dtype);
        const int n = c->p.num_seqs;
        p->dcp = c->p;
        p->dcp.out = pf_up(p, c->out, c->out_elems * qs, &err);
        p->dcp.query = pf_up(p, c->q, c->q_elems * qs, &err);
        p->dcp.key = pf_up(p, c->k, c->kv_elems * qs, &err);
        p->dcp.value = pf_up(p, c->v, c->kv_elems * qs, &err);
        p->dcp.kv.key = pf_up(p, c->kc, c->kc_elems * cs, &err);
        p->dcp.kv.value = pf_up(p, c->vc, c->vc_elems * cs, &err);
        p->dcp.block_tables =
            pf_up(p, c->block_tables, sizeof(int32_t) * ((size_t)n * c->p.block_table_stride + 1), &err);
        p->dcp.seq_lens = pf_up(p, c->seq_lens, sizeof(int32_t) * ((size_t)n + 1), &err);
        p->dcp.query_start_loc = pf_up(p, c->qsl, sizeof(int32_t) * ((size_t)n + 1), &err);
        /* the one scale, or one per KV head (scales_per_head): the whole array */
        p->dcp.kv.k_scale = pf_up(p, c->p.kv.k_scale, pa_kv_scale_bytes(&c->p.kv), &err);
        p->dcp.kv.v_scale = pf_up(p, c->p.kv.v_scale, pa_kv_scale_bytes(&c->p.kv), &err);
        p->dcp.alibi_slopes = pf_up(p, c->alibi, sizeof(float) * (size_t)c->p.num_heads, &err);
        p->dcp.sinks = pf_up(p, c->sinks, sizeof(float) * (size_t)c->p.num_heads, &err);
    } else {
        const pa_prompt_problem *c = p->pp;
        const size_t es = pa_dtype_size(c->p.dtype);
        const int n = c->p.num_seqs;
        p->dpp = c->p;
        p->dpp.out = pf_up(p, c->out, c->q_elems * es, &err);
        p->dpp.query = pf_up(p, c->q, c->q_elems * es, &err);
        p->dpp.key = pf_up(p, c->k, c->k_elems * es, &err);
        p->dpp.value = pf_up(p, c->v, c->k_elems * es, &err);
        p->dpp.cu_seqlens_q = pf_up(p, c->cu_q, sizeof(int32_t) * ((size_t)n + 1), &err);
        p->dpp.cu_seqlens_k = pf_up(p, c->cu_k, sizeof(int32_t) * ((size_t)n + 1), &err);
        p->dpp.alibi_slopes = pf_up(p, c->alibi, sizeof(float) * (size_t)c->p.num_heads, &err);
        p->dpp.sinks = pf_up(p, c->sinks, sizeof(float) * (size_t)c->p.num_heads, &err);
    }
    return err;
}

static int run_gpu(void *ctx) {
    pf_problem *p = ctx;
    pa_status s = p->cp ? pa_context_attention(&p->dcp, NULL) : pa_prompt_attention(&p->dpp, NULL);
    if (s != PA_SUCCESS) {
        fprintf(stderr, "pagedattn prefill: %s\n", pa_last_error());
        return 1;
    }
    return 0;
}

static int run_ref(void *ctx) {
    pf_problem *p = ctx;
    pa_status s = p->cp ? pa_ref_context_attention(&p->cp->p) : pa_ref_prompt_attention(&p->pp->p);
    if (s != PA_SUCCESS) {
        fprintf(stderr, "pagedattn prefill (reference): %s\n", pa_last_error());
        return 1;
    }
    return 0;
}

static double pf_flops(const pf_problem *p) {
    const pf_shape *sh = &p->sh;
    const int q = sh->variant == V_CONTEXT || sh->variant == V_CROSS ? sh->qlen : p->ctx;
    const int k = sh->variant == V_CONTEXT ? p->ctx + sh->qlen : p->ctx;
    const int causal = sh->variant == V_PROMPT || sh->variant == V_CONTEXT;
    const int window = p->cp ? p->cp->p.sliding_window : p->pp->p.sliding_window;
    return 4.0 * sh->head_size * sh->heads * sh->seqs * visible_pairs(q, k, causal, window);
}

static void pf_row(const pa_op_opts *o, const pf_problem *p, int gpu, pa_bench_row *r) {
    memset(r, 0, sizeof *r);
    r->op = p->sh.variant == V_CONTEXT ? "prefill" : "prompt";
    r->impl = gpu ? "pa-prefill" : "cpu-ref";
    r->seqs = p->sh.seqs;
    r->heads = p->sh.heads;
    r->kv_heads = p->sh.kv_heads;
    r->head_size = p->sh.head_size;
    r->ctx = p->ctx;
    r->qlen = p->sh.variant == V_CONTEXT || p->sh.variant == V_CROSS ? p->sh.qlen : p->ctx;
    r->block_size = p->sh.block_size;
    r->dtype = o->dtype;
    r->cache_dtype = p->sh.variant == V_CONTEXT ? o->cache_dtype : o->dtype;
    r->layout = o->layout;
    r->no_cache = p->sh.variant != V_CONTEXT;
    r->flops = pf_flops(p);
    r->roof_tflops = gpu ? pa_bench_gemm_tflops(o->dtype) : 0.0;
    /* The FP8 path runs both products on e4m3 wgmma, about twice the 16-bit peak: its %roof is of
     * the 16-bit GEMM (cuBLAS's e4m3 GEMM is not measured), so up to 2x what an e4m3 roof gives. */
    const int fp8_path = gpu && p->sh.variant == V_CONTEXT && pa_get_prefill_path() == PA_PREFILL_PATH_HOPPER_FP8 &&
                         o->cache_dtype == PA_DTYPE_FP8_E4M3;
    r->note = p->sh.variant == V_ENCODER ? "encoder (non-causal)"
              : p->sh.variant == V_CROSS ? "cross-attention (non-causal)"
              : fp8_path ? "FP8 path asked (heads 97-128 on sm_90a): %roof of the 16-bit GEMM, e4m3's peak is ~2x"
                         : NULL;
}

static int bench(const pa_op_opts *o, int variant, int gpu) {
    const int small = !gpu && is_default_shape(o);
    const pf_shape sh = shape_of_opts(o, variant, small);
    if (small) {
        /* what each variant's 256 is: the prompt's tokens, the context before the new tokens, or the
         * encoder's keys the decoder tokens attend to */
        char what[96];
        if (variant == V_CONTEXT)
            snprintf(what, sizeof what, "a 256-token context and %d new tokens", sh.qlen);
        else if (variant == V_CROSS)
            snprintf(what, sizeof what, "%d decoder tokens over 256 encoder keys", sh.qlen);
        else
            snprintf(what, sizeof what, "256 tokens");
        fprintf(stderr,
                "pagedattn bench prefill: no shape given: the CPU reference runs a small one (%d seqs, heads %d/%d, "
                "%s a sequence, %d iterations); --seqs, --heads, --head-size, --ctx or --qlen set it\n",
                sh.seqs, sh.heads, sh.kv_heads, what, sh.iters);
    }
    int rc = 0;
    for (int k = 0; k < o->num_ctx && rc == 0; k++) {
        const int ctx = small ? 256 : o->ctx[k];
        if (o->num_ctx > 1)
            pa_bench_progress(k + 1, o->num_ctx, "prefill ctx=%d", ctx);
        pf_problem p;
        rc = pf_make(o, &sh, ctx, "bench", !gpu, &p);
        if (rc)
            break;
        pa_bench_row r;
        pf_row(o, &p, gpu, &r);
        if (gpu) {
            if (pf_upload(&p)) {
                rc = PA_CLI_EXIT_FAIL;
            } else if (pa_bench_time_gpu("prefill", run_gpu, &p, sh.warmup, sh.iters, &r.t) != 0) {
                rc = PA_CLI_EXIT_FAIL;
            } else {
                pa_baseline_problem pb;
                if (p.cp)
                    pa_baseline_from_context(&p.dcp, &pb);
                else
                    pa_baseline_from_prompt(&p.dpp, &pb);
                pa_bench_baseline(&pb, sh.warmup, sh.iters, &r);
                pa_bench_emit(o, &r);
            }
        } else if (pa_bench_time_cpu(run_ref, &p, sh.warmup, sh.iters, &r.t) != 0) {
            rc = PA_CLI_EXIT_FAIL;
        } else {
            pa_bench_emit(o, &r);
        }
        pf_free(&p);
    }
    return rc;
}

static int check(const pa_op_opts *o, int variant) {
    const int small = is_default_shape(o);
    const pf_shape sh = shape_of_opts(o, variant, small);
    int bad = 0;
    for (int k = 0; k < o->num_ctx; k++) {
        const int ctx = small ? 256 : o->ctx[k];
        pf_problem p;
        int rc = pf_make(o, &sh, ctx, "check", 1, &p);
        if (rc)
            return rc;
        if (pf_upload(&p) || run_gpu(&p) != 0 || cudaDeviceSynchronize() != cudaSuccess) {
            pf_free(&p);
            return PA_CLI_EXIT_FAIL;
        }
        const pa_dtype qd = o->dtype, cd = p.cp ? o->cache_dtype : o->dtype;
        const size_t n = p.cp ? p.cp->out_elems : p.pp->q_elems;
        void *got = malloc(n * pa_dtype_size(qd) + 16);
        const void *dout = p.cp ? p.dcp.out : p.dpp.out;
        if (!got || cudaMemcpy(got, dout, n * pa_dtype_size(qd), cudaMemcpyDeviceToHost) != cudaSuccess ||
            run_ref(&p) != 0) {
            free(got);
            pf_free(&p);
            return PA_CLI_EXIT_FAIL;
        }
        const void *ref_typed = p.cp ? p.cp->out : p.pp->out;
        float *ref = malloc(n * sizeof(float) + 4);
        for (size_t i = 0; ref && i < n; i++)
            ref[i] = pa_load_as_float(qd, ref_typed, i);
        pa_compare_result res;
        /* The FP8 path (PAGEDATTN_PREFILL_PATH=hopper-fp8) rounds Q and P to e4m3: its own tolerance. */
        const int fp8_path = pa_get_prefill_path() == PA_PREFILL_PATH_HOPPER_FP8 && cd == PA_DTYPE_FP8_E4M3;
        const pa_tolerance tol = fp8_path ? pa_tolerance_fp8_path(qd) : pa_tolerance_for(qd, cd);
        const int ok = ref && pa_compare(got, qd, ref, (int64_t)n, tol, &res);
        char buf[512];
        printf("check prefill %s ctx=%d q=%d%s: %s\n",
               variant == V_CONTEXT ? "context"
               : o->variant         ? o->variant
                                    : "prompt",
               ctx, variant == V_CONTEXT || variant == V_CROSS ? sh.qlen : ctx,
               p.cp && p.cp->p.kv.scales_per_head ? " scales/head" : "",
               ok ? "ok" : pa_compare_format(&res, tol, buf, sizeof buf));
        bad |= !ok;
        free(ref);
        free(got);
        pf_free(&p);
    }
    return bad ? PA_CLI_EXIT_FAIL : PA_CLI_EXIT_OK;
}

int pa_run_prefill(const pa_op_opts *o, int check_mode, int gpu) {
    int variant;
    const char *cmd = check_mode ? "check" : "bench";
    int e = parse_variant(o, cmd, &variant);
    if (e)
        return e;
    return check_mode ? check(o, variant) : bench(o, variant, gpu);
}

/* `check baseline`'s prefill cases: the cuBLAS baseline on this op's own
 * problems, built from their device params as the benches build it, against
 * the prefill references. Each variant at --qlen query tokens a sequence
 * (default 37: the whole prompt for prompt and encoder) and --ctx cached
 * tokens (context) or encoder keys (cross); the options' layout and cache
 * dtype for context, the query dtype elsewhere; --window on every variant
 * but cross-attention, which refuses one. Returns the number of cases
 * that failed or could not run. */
int pa_prefill_baseline_check(const pa_op_opts *o, pa_baseline_compare_fn cmp) {
    static const int variants[] = {V_CONTEXT, V_PROMPT, V_ENCODER, V_CROSS};
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        const int v = variants[i];
        pa_op_opts ov = *o;
        if (v != V_CONTEXT)
            ov.cache_dtype = ov.dtype; /* no cache */
        if (v == V_CROSS)
            ov.window = 0; /* cross-attention takes no window (prefill.h); the others check it */
        pf_shape sh = shape_of_opts(&ov, v, 0);
        sh.qlen = o->qlen > 0 ? o->qlen : 37;
        const int ctx = v == V_PROMPT || v == V_ENCODER ? sh.qlen : o->ctx[0];
        pf_problem p;
        const int rc = pf_make(&ov, &sh, ctx, "check baseline", 1, &p);
        if (rc == PA_CLI_EXIT_USAGE)
            return -1; /* the options describe a problem the op refuses */
        if (rc) {
            bad++;
            continue;
        }
        if (pf_upload(&p) || run_ref(&p) != 0) {
            printf("check baseline prefill %s: could not run\nFAIL\n", pa_variant_name("prefill", v));
            bad++;
            pf_free(&p);
            continue;
        }
        pa_baseline_problem pb;
        if (p.cp)
            pa_baseline_from_context(&p.dcp, &pb);
        else
            pa_baseline_from_prompt(&p.dpp, &pb);
        char what[200];
        snprintf(what, sizeof what, "prefill %s (%s%s%s/%s, %d seqs, %d queries over %d keys, heads %d/%d x %d%s%s)",
                 pa_variant_name("prefill", v), p.cp ? pa_kv_layout_name(ov.layout) : "", p.cp ? " " : "",
                 pa_dtype_name(ov.dtype), pa_dtype_name(ov.cache_dtype), sh.seqs,
                 v == V_PROMPT || v == V_ENCODER ? ctx : sh.qlen, v == V_CONTEXT ? ctx + sh.qlen : ctx, sh.heads,
                 sh.kv_heads, sh.head_size, o->sinks ? ", sinks" : "",
                 p.cp && p.cp->p.kv.scales_per_head ? ", scales per KV head" : "");
        double vmax;
        if (p.cp) { /* the cached values and the new ones */
            const pa_context_problem *c = p.cp;
            const double vc =
                pa_abs_max(c->p.kv.dtype, c->vc, c->vc_elems,
                           pa_dtype_is_fp8(c->p.kv.dtype) ? pa_kv_scale_max(&c->p.kv, c->p.kv.v_scale) : 1.0f);
            const double vn = pa_abs_max(c->p.q_dtype, c->v, c->kv_elems, 1.0f);
            vmax = vc > vn ? vc : vn;
        } else {
            vmax = pa_abs_max(p.pp->p.dtype, p.pp->v, p.pp->k_elems, 1.0f);
        }
        bad += !cmp(what, &pb, p.cp ? p.cp->out : p.pp->out, ov.dtype, ov.cache_dtype, vmax);
        pf_free(&p);
    }
    return bad;
}
