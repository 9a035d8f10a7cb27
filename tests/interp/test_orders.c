/* Outputs do not depend on inter-CTA timing: every launch of a step gives the
 * same bytes whatever order the interpreter runs its CTAs in (forward,
 * reverse, shuffled), how many it keeps under way at once (1 to 3, taking
 * turns at their barriers: ragged's work then spreads over CTAs and a tile's
 * chunks are merged by whichever CTA finishes last) and whether cp.async
 * copies land at issue or at their wait. Covers the paths where CTAs meet:
 * decode splits and their merge (v2 and the recommended entry) and ragged kv
 * splits merged by the last CTA. The interpreter reads PA_INTERP_ORDER,
 * PA_INTERP_CTAS and PA_INTERP_CP at every launch. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "problems.h"
#include "ragged_problem.h"
#include "testutil.h"

static const char *const orders[][3] = {{"forward", "wait", "1"},  {"reverse", "wait", "1"},  {"shuffle", "issue", "1"},
                                        {"forward", "issue", "1"}, {"reverse", "issue", "1"}, {"forward", "wait", "3"},
                                        {"reverse", "issue", "2"}, {"shuffle", "wait", "3"}};
enum { N_ORDERS = sizeof orders / sizeof orders[0] };

static void set_order(int i) {
    setenv("PA_INTERP_ORDER", orders[i][0], 1);
    setenv("PA_INTERP_CP", orders[i][1], 1);
    setenv("PA_INTERP_CTAS", orders[i][2], 1);
}

/* Runs `launch` under every order and landing policy, the output poisoned
 * first each time (0xFF and 0x00 bytes in turn, so a byte the launch leaves
 * unwritten differs between runs), and asserts its bytes never change;
 * restores the defaults. */
typedef pa_status (*launch_fn)(void *ctx);
static void same_bytes_in_every_order(launch_fn launch, void *ctx, void *out, size_t bytes, const char *what) {
    unsigned char *first = malloc(bytes), *got = malloc(bytes);
    cr_assert(first && got);
    for (int o = 0; o < N_ORDERS; o++) {
        set_order(o);
        cr_assert_eq(cudaMemset(out, o % 2 ? 0x00 : 0xFF, bytes), cudaSuccess);
        cr_assert_eq(launch(ctx), PA_SUCCESS, "%s", pa_last_error());
        pa_test_dev_download(o ? got : first, out, bytes);
        if (o)
            cr_assert(memcmp(first, got, bytes) == 0,
                      "%s: CTA order %s, cp.async at %s, %s CTAs under way changed the output", what, orders[o][0],
                      orders[o][1], orders[o][2]);
    }
    free(first);
    free(got);
    setenv("PA_INTERP_ORDER", "forward", 1);
    setenv("PA_INTERP_CP", "wait", 1);
    setenv("PA_INTERP_CTAS", "1", 1);
}

typedef struct decode_run {
    const pa_decode_params *p;
    void *ws;
    size_t ws_bytes;
} decode_run;
static pa_status run_v2(void *ctx) {
    const decode_run *r = ctx;
    return pa_paged_attention_v2(r->p, r->ws, r->ws_bytes, NULL);
}
static pa_status run_recommended(void *ctx) {
    const decode_run *r = ctx;
    return pa_paged_attention_decode(r->p, r->ws, r->ws_bytes, NULL);
}

typedef struct ragged_run {
    const pa_ragged_params *p;
    void *ws;
    size_t ws_bytes;
} ragged_run;
static pa_status run_ragged(void *ctx) {
    const ragged_run *r = ctx;
    return pa_ragged_paged_attention(r->p, r->ws, r->ws_bytes, NULL);
}

static void *dev_copy(const void *host, size_t bytes) { return host ? pa_test_dev_upload(host, bytes) : NULL; }

Test(orders, decode_splits_and_merge_are_bitwise_stable) {
    static const int lens[4] = {1500, 3, 700, 2100};
    pa_decode_problem_cfg c = {.seed = 77,
                               .layout = PA_LAYOUT_FLASH_NHD,
                               .q_dtype = PA_DTYPE_BF16,
                               .cache_dtype = PA_DTYPE_BF16,
                               .num_seqs = 4,
                               .num_heads = 8,
                               .num_kv_heads = 2,
                               .head_size = 128,
                               .block_size = 16,
                               .seq_lens = lens,
                               .extra_blocks = 3,
                               .skip_logical = 1};
    pa_decode_problem *pr = pa_decode_problem_make(&c);
    cr_assert(pr);
    pa_decode_params p = pr->p;
    const size_t qs = pa_dtype_size(c.q_dtype), cs = pa_dtype_size(c.cache_dtype);
    p.query = dev_copy(pr->q, pr->q_elems * qs);
    p.out = pa_test_dev_alloc(pr->out_elems * qs);
    p.kv.key = dev_copy(pr->kc, pr->k_elems * cs);
    p.kv.value = dev_copy(pr->vc, pr->v_elems * cs);
    p.block_tables = dev_copy(pr->block_tables, sizeof(int32_t) * (size_t)p.num_seqs * (size_t)p.block_table_stride);
    p.seq_lens = dev_copy(pr->seq_lens, sizeof(int32_t) * (size_t)p.num_seqs);
    const size_t out_bytes = pr->out_elems * qs;
    for (int entry = 0; entry < 2; entry++) {
        size_t ws_bytes = 0;
        cr_assert_eq(entry ? pa_paged_attention_decode_workspace_size(&p, &ws_bytes)
                           : pa_paged_attention_v2_workspace_size(&p, &ws_bytes),
                     PA_SUCCESS, "%s", pa_last_error());
        decode_run r = {&p, pa_test_dev_alloc(ws_bytes ? ws_bytes : 16), ws_bytes};
        same_bytes_in_every_order(entry ? run_recommended : run_v2, &r, p.out, out_bytes,
                                  entry ? "recommended decode" : "v2");
        pa_test_dev_free(r.ws);
    }
    pa_decode_problem_free(pr);
}

Test(orders, ragged_split_merges_are_bitwise_stable) {
    static const int ql[5] = {1, 90, 1, 40, 1}, kl[5] = {700, 400, 33, 300, 1200};
    rg_problem_cfg c = {.seed = 78,
                        .q_dtype = PA_DTYPE_F16,
                        .cache_dtype = PA_DTYPE_F16,
                        .num_seqs = 5,
                        .num_q_heads = 8,
                        .num_kv_heads = 2,
                        .head_size = 64,
                        .page_size = 16,
                        .q_lens = ql,
                        .kv_lens = kl,
                        .skip_logical = 1};
    rg_problem *pr = rg_problem_make(&c);
    cr_assert(pr);
    pa_ragged_params p = pr->p;
    p.kv_split_tokens = 64; /* every long span splits: partial rows merged by the last CTA of each tile */
    p.q = dev_copy(pr->q, pr->q_bytes);
    p.out = pa_test_dev_alloc(pr->q_bytes);
    p.kv.key = dev_copy(pr->cache, pr->cache_bytes);
    p.kv_lens = dev_copy(pr->kv_lens, sizeof(int32_t) * (size_t)pr->num_seqs);
    p.page_indices = dev_copy(pr->page_indices, sizeof(int32_t) * (size_t)pr->num_seqs * (size_t)p.pages_per_seq);
    p.cu_q_lens = dev_copy(pr->cu_q_lens, sizeof(int32_t) * (size_t)(pr->num_seqs + 1));
    p.num_seqs = dev_copy(&pr->num_seqs, sizeof(int32_t));
    size_t ws_bytes = 0;
    cr_assert_eq(pa_ragged_workspace_size(&p, &ws_bytes), PA_SUCCESS, "%s", pa_last_error());
    ragged_run r = {&p, pa_test_dev_alloc(ws_bytes), ws_bytes};
    same_bytes_in_every_order(run_ragged, &r, p.out, pr->q_bytes, "ragged");
    pa_test_dev_free(r.ws);
    rg_problem_free(pr);
}
