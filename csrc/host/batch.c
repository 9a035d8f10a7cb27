/* Batch shaping on the host: decode/prefill reorder and split, chunked local
 * attention virtual batches. Every function validates the whole input first,
 * then writes; none allocates. */
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "pagedattn/batch.h"

/* ---- reorder ---------------------------------------------------------------- */

pa_status pa_reorder_batch_to_split_decodes_and_prefills(const int32_t *num_scheduled_tokens, int32_t num_reqs,
                                                         int32_t decode_threshold, pa_swap_fn swap, void *user,
                                                         int32_t *perm, int32_t *tokens_out, int *modified) {
    PA_REQUIRE(num_reqs >= 0, "reorder: num_reqs must be >= 0 (got %d)", num_reqs);
    PA_REQUIRE(decode_threshold >= 0, "reorder: decode_threshold must be >= 0 (got %d)", decode_threshold);
    PA_REQUIRE(num_reqs == 0 || num_scheduled_tokens != NULL, "reorder: num_scheduled_tokens is NULL");
    if (tokens_out && tokens_out != num_scheduled_tokens && num_reqs > 0) {
        /* In place (the same array) or disjoint; anything else would copy over
         * entries not yet read. Compared as integers: the arrays may be unrelated. */
        const uintptr_t in = (uintptr_t)num_scheduled_tokens, out = (uintptr_t)tokens_out;
        const uintptr_t bytes = (uintptr_t)num_reqs * sizeof *tokens_out;
        PA_REQUIRE(out >= in + bytes || in >= out + bytes,
                   "reorder: tokens_out partially overlaps num_scheduled_tokens (%d entries); pass the same array "
                   "for in place, or a disjoint one",
                   num_reqs);
    }
    if (perm && num_reqs > 0) {
        /* perm is swapped beside the tokens: sharing bytes with them, each
         * swap would be applied twice (undone) or change what is read. */
        const int64_t bytes = 4 * (int64_t)num_reqs;
        const pa_span in[1] = {{"num_scheduled_tokens", num_scheduled_tokens, bytes, NULL}},
                      o[2] = {{"perm", perm, bytes, NULL},
                              {"tokens_out", tokens_out, bytes, num_scheduled_tokens}}; /* in place */
        PA_TRY(pa_check_spans_apart("reorder", in, 1, o, 2));
    }
    int32_t num_decodes = 0;
    int64_t total = 0;
    for (int32_t i = 0; i < num_reqs; i++) {
        const int32_t t = num_scheduled_tokens[i];
        PA_REQUIRE(t >= 0, "reorder: request %d: num_scheduled_tokens must be >= 0 (got %d)", i, t);
        total += t;
        PA_REQUIRE(total <= INT32_MAX, "reorder: request %d: num_scheduled_tokens total overflows int32 (%lld)", i,
                   (long long)total);
        num_decodes += t <= decode_threshold;
    }
    const int32_t num_prefills = num_reqs - num_decodes;

    if (tokens_out && tokens_out != num_scheduled_tokens && num_reqs > 0)
        memcpy(tokens_out, num_scheduled_tokens, (size_t)num_reqs * sizeof *tokens_out);
    /* Read from the array we swap in. Safe: the back cursor only visits indices
     * >= num_decodes and the front cursor only indices < num_decodes, and each
     * visits an index before any swap touches it. */
    const int32_t *tok = tokens_out ? tokens_out : num_scheduled_tokens;
    const int32_t limit = num_decodes < num_prefills ? num_decodes : num_prefills;
    int32_t back = num_reqs; /* next decode from the back is below this */
    int32_t front = -1;      /* next prefill from the front is above this */
    int any = 0;
    for (int32_t i = 1; i <= limit; i++) {
        do
            back--;
        while (back >= num_decodes && tok[back] > decode_threshold);
        /* The i-th decode from the back lies below num_decodes (or we walked
         * past the region where one could be): vLLM stops here. */
        if (back < num_decodes)
            break;
        do
            front++;
        while (tok[front] <= decode_threshold);
        /* Counting argument: as many decodes sit at >= num_decodes as prefills
         * at < num_decodes, so front < num_decodes here. */
        if (swap)
            swap(user, front, back);
        if (perm) {
            int32_t t = perm[front];
            perm[front] = perm[back];
            perm[back] = t;
        }
        if (tokens_out) {
            int32_t t = tokens_out[front];
            tokens_out[front] = tokens_out[back];
            tokens_out[back] = t;
        }
        any = 1;
    }
    if (modified)
        *modified = any;
    pa_clear_error();
    return PA_SUCCESS;
}

/* ---- split ------------------------------------------------------------------ */

/* query_start_loc[0] == 0 and non-decreasing, naming the first bad request. */
static pa_status check_query_start_loc(const char *who, const int32_t *qsl, int32_t num_reqs) {
    PA_REQUIRE(num_reqs >= 0, "%s: num_reqs must be >= 0 (got %d)", who, num_reqs);
    if (num_reqs == 0 && qsl == NULL)
        return PA_SUCCESS;
    PA_REQUIRE(qsl != NULL, "%s: query_start_loc is NULL", who);
    PA_REQUIRE(qsl[0] == 0, "%s: query_start_loc[0] must be 0 (got %d)", who, qsl[0]);
    for (int32_t i = 0; i < num_reqs; i++)
        PA_REQUIRE(qsl[i + 1] >= qsl[i],
                   "%s: request %d: query length must be >= 0 (query_start_loc[%d] = %d < query_start_loc[%d] = %d)",
                   who, i, i + 1, qsl[i + 1], i, qsl[i]);
    return PA_SUCCESS;
}

pa_status pa_split_decodes_and_prefills(const int32_t *query_start_loc, int32_t num_reqs, int32_t decode_threshold,
                                        pa_batch_split *out) {
    PA_REQUIRE(out != NULL, "split: out is NULL");
    PA_REQUIRE(decode_threshold >= 0, "split: decode_threshold must be >= 0 (got %d)", decode_threshold);
    PA_TRY(check_query_start_loc("split", query_start_loc, num_reqs));
    int32_t first_prefill = num_reqs;
    for (int32_t i = 0; i < num_reqs; i++) {
        const int32_t q = query_start_loc[i + 1] - query_start_loc[i];
        if (q > decode_threshold) {
            if (first_prefill == num_reqs)
                first_prefill = i;
        } else if (first_prefill < num_reqs) {
            return pa_fail(PA_ERR_INVALID_ARGUMENT,
                           "split: request %d: query length %d <= decode_threshold %d follows prefill request %d; "
                           "the batch is not reordered (decodes must come first)",
                           i, q, decode_threshold, first_prefill);
        }
    }
    const int32_t total = num_reqs > 0 ? query_start_loc[num_reqs] : 0;
    const int32_t dec_tokens = num_reqs > 0 ? query_start_loc[first_prefill] : 0;
    out->num_decodes = first_prefill;
    out->num_prefills = num_reqs - first_prefill;
    out->num_decode_tokens = dec_tokens;
    out->num_prefill_tokens = total - dec_tokens;
    pa_clear_error();
    return PA_SUCCESS;
}

/* ---- local attention virtual batches ------------------------------------------ */

/* Division and remainder of non-negative values by the chunk (or block)
 * size: a shift and a mask when it is a power of two (Llama-4's 8192), which
 * is most of the cost of the per-request loops otherwise. */
typedef struct chunk_div {
    int32_t d, shift; /* shift < 0: not a power of two */
} chunk_div;
static inline chunk_div chunk_div_make(int32_t d) {
    chunk_div c = {d, -1};
    if ((d & (d - 1)) == 0)
        c.shift = __builtin_ctz((unsigned)d);
    return c;
}
static inline int32_t cdiv_q(chunk_div c, int32_t a) { return c.shift >= 0 ? a >> c.shift : a / c.d; }
static inline int32_t cdiv_r(chunk_div c, int32_t a) { return c.shift >= 0 ? a & (c.d - 1) : a % c.d; }

/* Queries of a request in its first chunk and the number of chunks they touch. */
static void local_counts(chunk_div cd, int32_t q, int32_t k, int32_t *first, int32_t *blocks) {
    const int32_t chunk = cd.d;
    const int32_t start = k - q; /* absolute position of the first query */
    const int32_t room = chunk - cdiv_r(cd, start);
    *first = room < q ? room : q;
    /* (q - first + chunk - 1) / chunk without the sum, which can pass INT32_MAX */
    const int32_t rest = q - *first;
    *blocks = 1 + cdiv_q(cd, rest) + (cdiv_r(cd, rest) != 0);
}

static pa_status local_validate(const pa_local_attention_params *p, int32_t *nv_out, int32_t *pages_out) {
    PA_REQUIRE(p != NULL, "local attention: params is NULL");
    PA_REQUIRE(p->attn_chunk_size > 0, "local attention: attn_chunk_size must be > 0 (got %d)", p->attn_chunk_size);
    PA_REQUIRE(p->block_size > 0, "local attention: block_size must be > 0 (got %d)", p->block_size);
    PA_REQUIRE(p->attn_chunk_size % p->block_size == 0,
               "local attention: attn_chunk_size %d is not a multiple of block_size %d", p->attn_chunk_size,
               p->block_size);
    PA_REQUIRE(p->num_reqs >= 0, "local attention: num_reqs must be >= 0 (got %d)", p->num_reqs);
    const int32_t n = p->num_reqs;
    if (n > 0) {
        PA_REQUIRE(p->query_start_loc && p->seq_lens && p->block_table,
                   "local attention: query_start_loc, seq_lens and block_table must not be NULL");
        /* Offsets of a cumulative array (a slice of a longer one is fine): from 0 or more, and
         * non-decreasing below, so each length b - a and their running sum (cu_seqlens_q_local,
         * at most query_start_loc[n] - query_start_loc[0]) fit int32. */
        PA_REQUIRE(p->query_start_loc[0] >= 0, "local attention: query_start_loc[0] must be >= 0 (got %d)",
                   p->query_start_loc[0]);
        PA_REQUIRE(p->block_table_width > 0, "local attention: block_table_width must be > 0 (got %d)",
                   p->block_table_width);
        PA_REQUIRE(p->block_table_stride == 0 || p->block_table_stride >= p->block_table_width,
                   "local attention: block_table_stride %d smaller than block_table_width %d", p->block_table_stride,
                   p->block_table_width);
    }
    int64_t nv = 0;
    const chunk_div cd = chunk_div_make(p->attn_chunk_size);
    for (int32_t i = 0; i < n; i++) {
        const int32_t a = p->query_start_loc[i], b = p->query_start_loc[i + 1];
        PA_REQUIRE(b >= a,
                   "local attention: request %d: query length must be >= 0 (query_start_loc[%d] = %d < "
                   "query_start_loc[%d] = %d)",
                   i, i + 1, b, i, a);
        const int32_t q = b - a, k = p->seq_lens[i];
        PA_REQUIRE(k >= 1, "local attention: request %d: seq_lens must be >= 1 (got %d)", i, k);
        PA_REQUIRE(k >= q, "local attention: request %d: seq_lens %d < query length %d", i, k, q);
        int32_t first, blocks;
        local_counts(cd, q, k, &first, &blocks);
        nv += blocks;
        PA_REQUIRE(nv < INT32_MAX, "local attention: request %d: number of virtual batches overflows int32", i);
    }
    const int32_t pages = p->attn_chunk_size / p->block_size;
    PA_REQUIRE(nv * pages <= INT32_MAX, "local attention: virtual block table (%lld x %d) overflows int32 indexing",
               (long long)nv, pages);
    *nv_out = (int32_t)nv;
    *pages_out = pages;
    return PA_SUCCESS;
}

pa_status pa_local_attention_size(const pa_local_attention_params *p, int32_t *num_virtual_batches,
                                  int32_t *pages_per_local_batch) {
    int32_t nv, pages;
    PA_TRY(local_validate(p, &nv, &pages));
    if (num_virtual_batches)
        *num_virtual_batches = nv;
    if (pages_per_local_batch)
        *pages_per_local_batch = pages;
    pa_clear_error();
    return PA_SUCCESS;
}

pa_status pa_make_local_attention_virtual_batches(const pa_local_attention_params *p, const pa_local_attention_out *out,
                                                  int32_t *num_virtual_batches) {
    int32_t nv, pages;
    PA_TRY(local_validate(p, &nv, &pages));
    PA_REQUIRE(out != NULL, "local attention: out is NULL");
    PA_REQUIRE(out->capacity >= nv,
               "local attention: output capacity %d < %d virtual batches (size it with "
               "pa_local_attention_size)",
               out->capacity, nv);
    PA_REQUIRE(out->cu_seqlens_q_local != NULL, "local attention: cu_seqlens_q_local is NULL");
    PA_REQUIRE(nv == 0 || (out->seqlens_q_local && out->seqlens_k_local && out->block_table_local),
               "local attention: seqlens_q_local, seqlens_k_local and block_table_local must not be NULL");
    PA_REQUIRE(out->table_fill == PA_LOCAL_TABLE_FULL || out->table_fill == PA_LOCAL_TABLE_USED,
               "local attention: table_fill must be PA_LOCAL_TABLE_FULL (0) or PA_LOCAL_TABLE_USED (1) (got %d)",
               out->table_fill);
    {
        /* The loop reads a request's inputs after writing earlier requests'
         * rows: an output sharing a byte with an input or another output
         * would change what was validated (nv, pages) under it. */
        const int64_t n = p->num_reqs, st = p->block_table_stride ? p->block_table_stride : p->block_table_width;
        int64_t bt_bytes = 0; /* 4 x ((n - 1) x stride + width), saturated */
        if (n > 0 && (!pa_mul_i64(n - 1, st, &bt_bytes) || !pa_add_i64(bt_bytes, p->block_table_width, &bt_bytes) ||
                      !pa_mul_i64(bt_bytes, 4, &bt_bytes)))
            bt_bytes = INT64_MAX;
        const pa_span in[3] = {{"query_start_loc", p->query_start_loc, 4 * (n + 1), NULL},
                               {"seq_lens", p->seq_lens, 4 * n, NULL},
                               {"block_table", p->block_table, bt_bytes, NULL}},
                      o[4] = {{"seqlens_q_local", out->seqlens_q_local, 4 * (int64_t)nv, NULL},
                              {"cu_seqlens_q_local", out->cu_seqlens_q_local, 4 * ((int64_t)nv + 1), NULL},
                              {"seqlens_k_local", out->seqlens_k_local, 4 * (int64_t)nv, NULL},
                              {"block_table_local", out->block_table_local, 4 * (int64_t)nv * pages, NULL}};
        PA_TRY(pa_check_spans_apart("local attention", in, 3, o, 4));
    }

    const int32_t chunk = p->attn_chunk_size;
    const chunk_div cd = chunk_div_make(chunk), bd = chunk_div_make(p->block_size);
    const int32_t width = p->block_table_width;
    const int64_t stride = p->block_table_stride ? p->block_table_stride : width;
    const int used_only = out->table_fill == PA_LOCAL_TABLE_USED;
    int32_t v = 0;
    int32_t cu = 0;
    out->cu_seqlens_q_local[0] = 0;
    for (int32_t i = 0; i < p->num_reqs; i++) {
        const int32_t q = p->query_start_loc[i + 1] - p->query_start_loc[i];
        const int32_t k = p->seq_lens[i];
        int32_t first, blocks;
        local_counts(cd, q, k, &first, &blocks);
        /* Keys in the request's last chunk: 1..chunk. */
        const int32_t kr = cdiv_r(cd, k), last_keys = kr == 0 ? chunk : kr;
        const int32_t v0 = v;
        for (int32_t j = 0; j < blocks; j++, v++) {
            int32_t ql;
            if (j == 0)
                ql = first;
            else {
                const int32_t rest = q - first - chunk * (j - 1);
                ql = rest < chunk ? rest : chunk;
            }
            out->seqlens_q_local[v] = ql;
            cu += ql;
            out->cu_seqlens_q_local[v + 1] = cu;
            out->seqlens_k_local[v] = j == blocks - 1 ? last_keys : chunk;
        }
        /* The block table: virtual batch j of the request starts at the page of
         * its chunk, k - last_keys - (blocks - 1 - j) * chunk, and the chunks
         * are consecutive, so the request's rows are one run of its block-table
         * row, [first_page, first_page + blocks * pages), with columns past the
         * last clipped to width - 1. One copy per request, not one per entry.
         * PA_LOCAL_TABLE_USED stops that run at the last column read: every
         * row but the last is read whole (chunk keys), the last up to its
         * ceil(last_keys / block_size) columns, so the written part is still
         * one prefix of the run. */
        const int32_t *row = p->block_table + (int64_t)i * stride;
        const int64_t chunk0 = (int64_t)k - last_keys - (int64_t)(blocks - 1) * chunk; /* >= 0 */
        const int64_t first_page = cdiv_q(bd, (int32_t)chunk0);
        const int64_t total = (int64_t)(blocks - 1) * pages + (used_only ? cdiv_q(bd, last_keys - 1) + 1 : pages);
        int32_t *dst = out->block_table_local + (int64_t)v0 * pages;
        int64_t in_row = width - first_page; /* columns before the clip */
        in_row = in_row < 0 ? 0 : in_row > total ? total : in_row;
        if (in_row > 0)
            memcpy(dst, row + first_page, sizeof(int32_t) * (size_t)in_row);
        const int32_t last = row[width - 1];
        for (int64_t c = in_row; c < total; c++)
            dst[c] = last;
    }
    if (num_virtual_batches)
        *num_virtual_batches = nv;
    pa_clear_error();
    return PA_SUCCESS;
}
