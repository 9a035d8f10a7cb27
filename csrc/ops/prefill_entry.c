/* prefill: public GPU entries. Validate (csrc/ops/prefill.c), NVTX range, launch
 * (cuda/prefill/). Nothing is launched on invalid input; no allocation, sync or
 * host<->device copy happens here, so every entry is CUDA-graph safe. */
#include <stdint.h>

#include "decode_internal.h"
#include "internal.h"
#include "prefill_internal.h"

static pa_status done(int e, const char *what) {
    PA_RANGE_POP();
    if (e != 0)
        return pa_cuda_fail(e, what);
    pa_clear_error();
    return PA_SUCCESS;
}

/* Device pointers must be aligned to their element size (the kernels load whole
 * elements; 16-byte paths are chosen separately, by pa_prefill_kparams_*). */
static pa_status check_aligned(const char *op, const char *name, const void *ptr, pa_dtype t) {
    return pa_check_aligned(op, name, ptr, pa_dtype_size(t));
}

/* int32 / float arrays (lengths, tables, slopes, scales). */
static pa_status check_aligned4(const char *op, const char *name, const void *ptr) {
    return pa_check_aligned(op, name, ptr, 4);
}

static pa_status check_context_pointers(const char *op, const pa_context_attention_params *p) {
    PA_TRY(check_aligned(op, "out", p->out, p->q_dtype));
    PA_TRY(check_aligned(op, "query", p->query, p->q_dtype));
    PA_TRY(check_aligned(op, "key", p->key, p->q_dtype));
    PA_TRY(check_aligned(op, "value", p->value, p->q_dtype));
    PA_TRY(check_aligned(op, "kv.key", p->kv.key, p->kv.dtype));
    PA_TRY(check_aligned(op, "kv.value", p->kv.value, p->kv.dtype));
    PA_TRY(check_aligned4(op, "block_tables", p->block_tables));
    PA_TRY(check_aligned4(op, "seq_lens", p->seq_lens));
    PA_TRY(check_aligned4(op, "query_start_loc", p->query_start_loc));
    PA_TRY(check_aligned4(op, "alibi_slopes", p->alibi_slopes));
    PA_TRY(check_aligned4(op, "sinks", p->sinks));
    PA_TRY(pa_check_kv_scale_pointers(op, &p->kv, "kv.k_scale", "kv.v_scale"));
    return PA_SUCCESS;
}

pa_status pa_context_attention(const pa_context_attention_params *p, pa_stream stream) {
    PA_TRY(pa_context_attention_validate(p));
    PA_TRY(check_context_pointers("context_attention", p));
    if (p->num_seqs == 0 || p->max_query_len == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    pa_prefill_kparams k;
    pa_prefill_kparams_from_context(&k, p);
    PA_TRY(pa_no_pending_cuda_error("pa_context_attention"));
    PA_RANGE_PUSH("pa_context_attention");
    return done(pa_launch_prefill(&k, stream), "pa_context_attention launch");
}

pa_status pa_prompt_attention(const pa_prompt_attention_params *p, pa_stream stream) {
    const char *op = "prompt_attention";
    PA_TRY(pa_prompt_attention_validate(p));
    PA_TRY(check_aligned(op, "out", p->out, p->dtype));
    PA_TRY(check_aligned(op, "query", p->query, p->dtype));
    PA_TRY(check_aligned(op, "key", p->key, p->dtype));
    PA_TRY(check_aligned(op, "value", p->value, p->dtype));
    PA_TRY(check_aligned4(op, "cu_seqlens_q", p->cu_seqlens_q));
    PA_TRY(check_aligned4(op, "cu_seqlens_k", p->cu_seqlens_k));
    PA_TRY(check_aligned4(op, "alibi_slopes", p->alibi_slopes));
    PA_TRY(check_aligned4(op, "sinks", p->sinks));
    if (p->num_seqs == 0 || p->max_seqlen_q == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    pa_prefill_kparams k;
    pa_prefill_kparams_from_prompt(&k, p);
    PA_TRY(pa_no_pending_cuda_error("pa_prompt_attention"));
    PA_RANGE_PUSH("pa_prompt_attention");
    return done(pa_launch_prefill(&k, stream), "pa_prompt_attention launch");
}

pa_status pa_mixed_attention(const pa_mixed_attention_params *p, void *workspace, size_t workspace_bytes,
                             pa_stream stream) {
    const char *op = "mixed_attention";
    PA_TRY(pa_mixed_attention_validate(p));
    pa_context_attention_params pf;
    pa_decode_params dc;
    (void)pa_mixed_split(p, &pf, &dc); /* validated above */
    /* Everything the decode entry checks on the host is checked here first, so
     * nothing refuses after the prefill part was launched: the workspace, then
     * the decode launch itself as pa_paged_attention_decode will build it
     * (validation, pointer alignment, grid and CTA limits). The decode part's
     * pointers are offsets of the same buffers by whole rows. */
    PA_TRY(check_context_pointers(op, &pf));
    if (dc.num_seqs > 0) {
        size_t need = 0;
        PA_TRY(pa_paged_attention_decode_workspace_size(&dc, &need));
        if (workspace_bytes < need)
            return pa_fail(PA_ERR_WORKSPACE_TOO_SMALL, "%s: workspace of %zu bytes; the decode part needs %zu", op,
                           workspace_bytes, need);
        PA_REQUIRE(need == 0 || (workspace != NULL && (uintptr_t)workspace % 16 == 0),
                   "%s: workspace must be non-NULL and 16-byte aligned", op);
        /* The decode part checks its own lse rows against the workspace; the
         * prefill part's, written before the decode part runs, must miss it too. */
        pa_lse_strides ls = {0, 0, 0};
        (void)pa_lse_layout(op, p->num_heads, (int64_t)p->num_prefill_tokens + p->num_decode_tokens, p->lse_head_stride,
                            p->lse_token_stride, &ls); /* validated above */
        PA_REQUIRE(p->lse == NULL || !pa_ranges_overlap(p->lse, ls.bytes, workspace, (int64_t)need),
                   "%s: lse overlaps the workspace", op);
        PA_TRY(pa_mixed_apart(p, workspace, (int64_t)need));
        pa_dec_kparams kp;
        const pa_status st = pa_dec_kparams_make(&dc, PA_DEC_MODE_AUTO, workspace, workspace_bytes, &kp, NULL);
        if (st != PA_SUCCESS)
            return pa_error_context(st, PA_MIXED_DECODE_PART);
    }
    if (pf.num_seqs > 0 && pf.max_query_len > 0) {
        pa_prefill_kparams k;
        pa_prefill_kparams_from_context(&k, &pf);
        PA_TRY(pa_no_pending_cuda_error("pa_mixed_attention prefill"));
        PA_RANGE_PUSH("pa_mixed_attention prefill");
        PA_TRY(done(pa_launch_prefill(&k, stream), "pa_mixed_attention prefill launch"));
    }
    if (dc.num_seqs > 0) {
        PA_RANGE_PUSH("pa_mixed_attention decode"); /* pa_paged_attention_decode checks for a pending error */
        pa_status s = pa_paged_attention_decode(&dc, workspace, workspace_bytes, stream);
        PA_RANGE_POP();
        return s;
    }
    pa_clear_error();
    return PA_SUCCESS;
}
