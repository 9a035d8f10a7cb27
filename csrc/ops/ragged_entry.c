/* ragged: public GPU entry. Validate (csrc/ops/ragged.c), size-check the
 * workspace, NVTX range, launch the planner and the attention kernel
 * (cuda/ragged/ragged.cu). Nothing is launched on invalid input; no
 * allocation, sync or host<->device copy happens here. */
#include "internal.h"
#include "ragged_internal.h"

pa_status pa_ragged_paged_attention(const pa_ragged_params *p, void *workspace, size_t workspace_bytes,
                                    pa_stream stream) {
    pa_lse_strides ls;
    PA_TRY(pa_rg_validate(p, &ls));
    if (pa_rg_empty(p)) { /* nothing to launch; the workspace (0 bytes) may be NULL */
        pa_clear_error();
        return PA_SUCCESS;
    }
    pa_rg_ws_layout wl;
    pa_rg_ws_layout_make(p, &wl);
    /* The size first, as the decode and mixed entries: a short workspace is
     * PA_ERR_WORKSPACE_TOO_SMALL whatever its pointer (ragged.h). */
    if ((int64_t)workspace_bytes < wl.total)
        return pa_fail(PA_ERR_WORKSPACE_TOO_SMALL, "ragged: workspace of %zu bytes; this problem needs %lld",
                       workspace_bytes, (long long)wl.total);
    PA_REQUIRE(workspace != NULL, "ragged: workspace is NULL (pa_ragged_workspace_size gives the size)");
    PA_REQUIRE(((uintptr_t)workspace & 255u) == 0, "ragged: workspace must be 256-byte aligned");
    PA_REQUIRE(!pa_ranges_overlap(p->lse, ls.bytes, workspace, wl.total), "ragged: lse overlaps the workspace");
    PA_TRY(pa_rg_apart(p, ls.bytes, workspace, wl.total));

    pa_rg_launch l;
    l.out = p->out;
    l.q = p->q;
    l.kv = p->kv.key;
    l.kv_lens = p->kv_lens;
    l.page_indices = p->page_indices;
    l.cu_q_lens = p->cu_q_lens;
    l.num_seqs = p->num_seqs;
    l.k_scale = pa_kv_scale_ptr(&p->kv, p->kv.k_scale);
    l.v_scale = pa_kv_scale_ptr(&p->kv, p->kv.v_scale);
    l.scale_hs = p->kv.scales_per_head ? 1 : 0;
    l.sinks = p->sinks;
    l.ws = workspace;
    l.wl = wl;
    l.q_dtype = (int32_t)p->q_dtype;
    l.kv_dtype = (int32_t)p->kv.dtype;
    l.max_num_seqs = p->max_num_seqs;
    l.max_tokens = p->max_num_batched_tokens;
    l.pages_per_seq = p->pages_per_seq;
    l.num_q_heads = p->num_q_heads;
    l.num_kv_heads = p->kv.num_kv_heads;
    l.head_size = p->kv.head_size;
    l.page_size = p->kv.block_size;
    l.num_pages = p->kv.num_blocks;
    l.page_shift = -1;
    for (int32_t sh = 0; sh < 31; sh++)
        if ((int32_t)1 << sh == p->kv.block_size)
            l.page_shift = sh;
    l.group_div = pa_kv_divider_make(p->num_q_heads / p->kv.num_kv_heads);
    l.window = p->sliding_window;
    l.hard_mask = pa_rg_hard_mask(p);
    l.split_tokens = p->kv_split_tokens;
    l.tile_rows = pa_rg_tile_rows(l.q_dtype, l.head_size);
    l.sm_scale = p->sm_scale;
    l.soft_cap = p->soft_cap;
    l.mask_value = pa_rg_mask_value(p);
    l.lse = p->lse;
    l.lse_hs = ls.head;
    l.lse_ts = ls.token;

    PA_TRY(pa_no_pending_cuda_error("pa_ragged_paged_attention"));
    PA_RANGE_PUSH("pa_ragged_paged_attention");
    const int e = pa_launch_ragged(&l, stream);
    PA_RANGE_POP();
    if (e != 0)
        return pa_cuda_fail(e, "pa_ragged_paged_attention launch");
    pa_clear_error();
    return PA_SUCCESS;
}
