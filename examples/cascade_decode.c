/* Cascade attention for a decode step, on the CPU reference: S sequences that
 * share a prompt prefix (the same physical blocks at the start of every block
 * table) decode one token each. The prefix is attended once for all of them,
 * as one context-attention sequence of S queries over the prefix's blocks
 * (cache_only: no mask), each sequence's own tokens by decode over its table
 * past the prefix, and the two partial states (output and log-sum-exp) are
 * merged. The result must equal one decode over every key. The decode's lse
 * goes into a [S, heads] array (FlashInfer's layout) through its strides, and
 * the merge reads both lse arrays at those strides.
 * Build: make -C examples (uses pkg-config). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <pagedattn/pagedattn.h>

enum { S = 3, HEADS = 4, KV_HEADS = 2, HEAD = 32, BLOCK = 8, PREFIX_BLOCKS = 3, BLOCKS = 16, MAX_BLOCKS = 6 };

static int check(pa_status s, const char *what) {
    if (s != PA_SUCCESS)
        fprintf(stderr, "%s: %s: %s\n", what, pa_status_string(s), pa_last_error());
    return s == PA_SUCCESS;
}

int main(void) {
    /* flash NHD layout: [blocks, block, kv_heads, head] */
    static float k[BLOCKS * BLOCK * KV_HEADS * HEAD], v[BLOCKS * BLOCK * KV_HEADS * HEAD];
    static float q[S * HEADS * HEAD], whole[S * HEADS * HEAD], pre[S * HEADS * HEAD], own[S * HEADS * HEAD],
        merged[S * HEADS * HEAD];
    float lse_pre[HEADS * S], lse_own[HEADS * S];
    for (int i = 0; i < BLOCKS * BLOCK * KV_HEADS * HEAD; i++) {
        k[i] = sinf(0.37f * (float)i);
        v[i] = cosf(0.11f * (float)i);
    }
    for (int i = 0; i < S * HEADS * HEAD; i++)
        q[i] = (float)((i * 5) % 11 - 5) * 0.15f;
    /* Blocks 0..2 hold the shared prefix (24 tokens); each sequence then has
     * its own blocks. Lengths 30, 41, 25: 6, 17 and 1 tokens past the prefix. */
    const int32_t lens[S] = {30, 41, 25}, prefix_len = PREFIX_BLOCKS * BLOCK;
    const int32_t tables[S][MAX_BLOCKS] = {{0, 1, 2, 3, 0, 0}, {0, 1, 2, 4, 5, 6}, {0, 1, 2, 7, 0, 0}};
    const pa_kv_cache kv = {.layout = PA_LAYOUT_FLASH_NHD,
                            .dtype = PA_DTYPE_F32,
                            .key = k,
                            .value = v,
                            .num_blocks = BLOCKS,
                            .block_size = BLOCK,
                            .num_kv_heads = KV_HEADS,
                            .head_size = HEAD};
    const float scale = 1.0f / sqrtf((float)HEAD);

    /* 1. The reference answer: one decode over every key. */
    pa_decode_params d;
    memset(&d, 0, sizeof d);
    d.out = whole;
    d.query = q;
    d.q_dtype = PA_DTYPE_F32;
    d.kv = kv;
    d.block_tables = &tables[0][0];
    d.block_table_stride = MAX_BLOCKS;
    d.seq_lens = lens;
    d.num_seqs = S;
    d.num_heads = HEADS;
    d.max_seq_len = 48;
    d.scale = scale;
    if (!check(pa_ref_paged_decode(&d), "decode over every key"))
        return 1;

    /* 2. The prefix once: all S queries as one sequence over its blocks. */
    const int32_t qsl[2] = {0, S}, prefix_lens[1] = {prefix_len};
    pa_context_attention_params c;
    memset(&c, 0, sizeof c);
    c.out = pre;
    c.query = q;
    c.q_dtype = PA_DTYPE_F32;
    c.kv = kv;
    c.block_tables = &tables[0][0];
    c.block_table_stride = MAX_BLOCKS;
    c.query_start_loc = qsl;
    c.seq_lens = prefix_lens;
    c.num_seqs = 1;
    c.num_heads = HEADS;
    c.num_tokens = S;
    c.max_query_len = S;
    c.max_seq_len = prefix_len;
    c.scale = scale;
    c.cache_only = 1;
    c.lse = lse_pre;
    c.lse_head_stride = 1; /* [S, HEADS] */
    c.lse_token_stride = HEADS;
    if (!check(pa_ref_context_attention(&c), "the shared prefix"))
        return 1;

    /* 3. Each sequence's own tokens: decode over its table past the prefix. */
    int32_t own_lens[S], own_tables[S][MAX_BLOCKS];
    memset(own_tables, 0, sizeof own_tables);
    for (int s = 0; s < S; s++) {
        own_lens[s] = lens[s] - prefix_len;
        for (int b = PREFIX_BLOCKS; b < MAX_BLOCKS; b++)
            own_tables[s][b - PREFIX_BLOCKS] = tables[s][b];
    }
    d.out = own;
    d.block_tables = &own_tables[0][0];
    d.seq_lens = own_lens;
    d.max_seq_len = 48 - prefix_len;
    d.lse = lse_own;
    d.lse_head_stride = 1; /* [S, HEADS], as the prefix's */
    d.lse_token_stride = HEADS;
    if (!check(pa_ref_paged_decode(&d), "each sequence's own tokens"))
        return 1;

    /* 4. Merge the two partial states. */
    pa_merge_attn_states_params m;
    memset(&m, 0, sizeof m);
    m.dtype = PA_DTYPE_F32;
    m.num_tokens = S;
    m.num_heads = HEADS;
    m.head_size = HEAD;
    m.output = merged;
    m.prefix_output = pre;
    m.suffix_output = own;
    m.prefix_lse = lse_pre;
    m.suffix_lse = lse_own;
    m.lse_head_stride = 1;
    m.lse_token_stride = HEADS;
    if (!check(pa_ref_merge_attn_states(&m), "merge"))
        return 1;

    double worst = 0.0;
    for (int i = 0; i < S * HEADS * HEAD; i++)
        worst = fmax(worst, fabs((double)merged[i] - (double)whole[i]));
    printf("cascade decode: %d sequences over a %d-token shared prefix; merged vs one decode: max |diff| %.2e\n", S,
           prefix_len, worst);
    return worst < 1e-5 ? 0 : 1;
}
