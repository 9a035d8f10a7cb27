/* Host-side attention metadata: common metadata, the decode/prompt and ragged
 * builders, and the KV-update slices.
 *
 * Every entry validates its whole input first (O(requests + blocks touched))
 * and only then writes, so a rejected call leaves the caller's buffers as they
 * were. The write passes walk block by block, not token by token, so there is
 * one division per block touched, none per token. */
#include <limits.h>
#include <stddef.h>

#include "internal.h"
#include "pagedattn/metadata.h"

static inline int64_t cdiv64(int64_t a, int64_t b) { return (a + b - 1) / b; }
/* Division of a validated non-negative int32-range value by the block size.
 * Block sizes are powers of two in practice: a shift then (a division costs
 * more than the rest of a decode request's work); 32-bit unsigned division
 * otherwise, several times cheaper than 64-bit signed on x86. */
static inline uint32_t udiv32u(uint32_t a, uint32_t b) { return (b & (b - 1)) == 0 ? a >> __builtin_ctz(b) : a / b; }
static inline int64_t udiv32(int64_t a, int32_t b) { return (int64_t)udiv32u((uint32_t)a, (uint32_t)b); }

/* Checks the block-table entries that the new tokens [start, end) of request r
 * land in: non-negative and at most max_id. max_id is INT32_MAX for an int64
 * slot mapping (any non-negative id) and max_block_id(block_size) where the
 * slot is stored as int32 (the KV-update slices' kv_cache_start). The fast
 * path is one unsigned compare per block (a negative id wraps above the
 * limit); the message is worked out only on failure. */
static pa_status report_bad_block(const char *table, int32_t r, const int32_t *row, int64_t first, int64_t last,
                                  int32_t block_size, uint32_t max_id) {
    for (int64_t b = first; b <= last; b++) {
        const int64_t id = row[b];
        PA_REQUIRE(id >= 0, "request %d: %s[%lld] = %lld is negative", (int)r, table, (long long)b, (long long)id);
        PA_REQUIRE(id <= (int64_t)max_id, "request %d: %s[%lld] = %lld gives slots past int32 (block_size %d)", (int)r,
                   table, (long long)b, (long long)id, (int)block_size);
    }
    return pa_fail(PA_ERR_INTERNAL, "request %d: block check disagrees with its report", (int)r);
}

static inline uint32_t max_block_id(int32_t block_size) {
    return (uint32_t)(((int64_t)INT32_MAX - (block_size - 1)) / block_size);
}

static inline pa_status check_touched_blocks(const char *table, int32_t r, const int32_t *row, int64_t start,
                                             int64_t end, int32_t block_size, uint32_t max_id) {
    if (end <= start)
        return PA_SUCCESS;
    const int64_t first = udiv32(start, block_size), last = udiv32(end - 1, block_size);
    uint32_t bad = 0;
    for (int64_t b = first; b <= last; b++)
        bad |= (uint32_t)row[b] > max_id;
    return bad ? report_bad_block(table, r, row, first, last, block_size, max_id) : PA_SUCCESS;
}

/* Slots of positions [start, end) of one block-table row, written to dst
 * (int64, as pa_reshape_and_cache reads them). */
static inline void write_slots(int64_t *dst, const int32_t *row, int32_t start, int32_t end, int32_t block_size) {
    int32_t pos = start;
    while (pos < end) {
        const int32_t blk = (int32_t)udiv32u((uint32_t)pos, (uint32_t)block_size), off = pos - blk * block_size;
        int32_t n = block_size - off;
        if (n > end - pos)
            n = end - pos;
        const int64_t base = (int64_t)row[blk] * block_size + off;
        for (int32_t i = 0; i < n; i++)
            dst[i] = base + i;
        dst += n;
        pos += n;
    }
}

/* ---- common metadata ----------------------------------------------------- */

static pa_status validate_batch(const pa_batch *b, int32_t padded, const pa_common_metadata *out, int32_t *total_out,
                                int32_t *padded_out) {
    PA_REQUIRE(b != NULL, "batch is NULL");
    PA_REQUIRE(out != NULL, "output metadata is NULL");
    PA_REQUIRE(b->num_reqs >= 0, "num_reqs %d < 0", (int)b->num_reqs);
    PA_REQUIRE(b->block_size > 0, "block_size %d <= 0", (int)b->block_size);
    PA_REQUIRE(padded >= 0, "padded_num_tokens %d < 0", (int)padded);
    PA_REQUIRE(out->query_start_loc != NULL, "output query_start_loc is NULL");
    const int32_t n = b->num_reqs, bs = b->block_size;
    if (n > 0) {
        PA_REQUIRE(b->num_computed_tokens != NULL, "num_computed_tokens is NULL");
        PA_REQUIRE(b->num_scheduled_tokens != NULL, "num_scheduled_tokens is NULL");
        PA_REQUIRE(b->block_table != NULL, "block_table is NULL");
        PA_REQUIRE(b->block_table_stride >= 1, "block_table_stride %d < 1", (int)b->block_table_stride);
        PA_REQUIRE(out->seq_lens != NULL, "output seq_lens is NULL");
        PA_REQUIRE(out->num_computed_tokens != NULL, "output num_computed_tokens is NULL");
    }
    int64_t total = 0;
    for (int32_t r = 0; r < n; r++) {
        const int64_t c = b->num_computed_tokens[r], q = b->num_scheduled_tokens[r];
        PA_REQUIRE(c >= 0, "request %d: num_computed_tokens %lld < 0", (int)r, (long long)c);
        PA_REQUIRE(q >= 0, "request %d: num_scheduled_tokens %lld < 0", (int)r, (long long)q);
        const int64_t s = c + q;
        PA_REQUIRE(s <= INT32_MAX,
                   "request %d: seq_len %lld (num_computed_tokens + num_scheduled_tokens) overflows int32", (int)r,
                   (long long)s);
        total += q;
        PA_REQUIRE(total <= INT32_MAX, "request %d: total scheduled tokens %lld overflow int32", (int)r,
                   (long long)total);
        const int64_t need = s == 0 ? 0 : udiv32(s - 1, bs) + 1;
        PA_REQUIRE(need <= b->block_table_stride,
                   "request %d: block_table row too narrow: seq_len %lld needs %lld blocks of %d, stride %d", (int)r,
                   (long long)s, (long long)need, (int)bs, (int)b->block_table_stride);
        /* Slots are int64: any non-negative block id gives a valid slot. */
        PA_TRY(check_touched_blocks("block_table", r, b->block_table + (size_t)r * (size_t)b->block_table_stride, c, s,
                                    bs, INT32_MAX));
    }
    if (padded == 0)
        padded = (int32_t)total;
    PA_REQUIRE(padded >= total, "padded_num_tokens %d < num_actual_tokens %lld", (int)padded, (long long)total);
    PA_REQUIRE(out->slot_mapping_capacity >= padded, "slot_mapping_capacity %d < padded_num_tokens %d",
               (int)out->slot_mapping_capacity, (int)padded);
    PA_REQUIRE(padded == 0 || out->slot_mapping != NULL, "output slot_mapping is NULL");
    /* The loop writes query_start_loc[r + 1] before it reads request r + 1 and
     * a request's slots before the next one's row: an output sharing bytes with
     * an input (or another output) would come out wrong. Only the output
     * num_computed_tokens may be the input array itself (an element copy). */
    int64_t bt_bytes = INT64_MAX;
    if (!pa_mul_i64((int64_t)n * b->block_table_stride, 4, &bt_bytes))
        bt_bytes = INT64_MAX;
    const pa_span in[3] = {{"num_computed_tokens", b->num_computed_tokens, 4 * (int64_t)n, NULL},
                           {"num_scheduled_tokens", b->num_scheduled_tokens, 4 * (int64_t)n, NULL},
                           {"block_table", b->block_table, bt_bytes, NULL}},
                  o[4] = {{"query_start_loc", out->query_start_loc, 4 * ((int64_t)n + 1), NULL},
                          {"seq_lens", out->seq_lens, 4 * (int64_t)n, NULL},
                          {"num_computed_tokens", out->num_computed_tokens, 4 * (int64_t)n, b->num_computed_tokens},
                          {"slot_mapping", out->slot_mapping, 8 * (int64_t)padded, NULL}};
    PA_TRY(pa_check_spans_apart(NULL, in, 3, o, 4));
    *total_out = (int32_t)total;
    *padded_out = padded;
    return PA_SUCCESS;
}

pa_status pa_build_common_metadata(const pa_batch *b, int32_t padded_num_tokens, pa_common_metadata *out) {
    int32_t total = 0, padded = 0;
    PA_TRY(validate_batch(b, padded_num_tokens, out, &total, &padded));

    const int32_t n = b->num_reqs, bs = b->block_size, stride = b->block_table_stride;
    const int32_t *comp = b->num_computed_tokens, *sched = b->num_scheduled_tokens;
    int32_t *qsl = out->query_start_loc, *sl = out->seq_lens, *nc = out->num_computed_tokens;
    int64_t *slots = out->slot_mapping;
    int32_t acc = 0, max_q = 0, max_s = 0;
    qsl[0] = 0;
    for (int32_t r = 0; r < n; r++) {
        const int32_t c = comp[r], q = sched[r], s = c + q;
        nc[r] = c;
        sl[r] = s;
        if (q > 0)
            write_slots(slots + acc, b->block_table + (size_t)r * (size_t)stride, c, s, bs);
        acc += q;
        qsl[r + 1] = acc;
        max_q = q > max_q ? q : max_q;
        max_s = s > max_s ? s : max_s;
    }
    for (int32_t t = total; t < padded; t++)
        slots[t] = PA_PAD_SLOT_ID;

    out->num_reqs = n;
    out->num_actual_tokens = total;
    out->padded_num_tokens = padded;
    out->max_query_len = max_q;
    out->max_seq_len = max_s;
    out->block_size = bs;
    out->block_table = b->block_table;
    out->block_table_stride = stride;
    pa_clear_error();
    return PA_SUCCESS;
}

/* A builder's input: common metadata as pa_build_common_metadata makes it.
 * Re-checked (O(requests)) so a stale or hand-made struct cannot make a
 * builder read or write out of bounds. */
static pa_status validate_common(const pa_common_metadata *c) {
    PA_REQUIRE(c != NULL, "common metadata is NULL");
    PA_REQUIRE(c->num_reqs >= 0, "common metadata: num_reqs %d < 0", (int)c->num_reqs);
    PA_REQUIRE(c->block_size > 0, "common metadata: block_size %d <= 0", (int)c->block_size);
    PA_REQUIRE(c->query_start_loc != NULL, "common metadata: query_start_loc is NULL");
    PA_REQUIRE(c->num_actual_tokens >= 0, "common metadata: num_actual_tokens %d < 0", (int)c->num_actual_tokens);
    PA_REQUIRE(c->padded_num_tokens >= c->num_actual_tokens,
               "common metadata: padded_num_tokens %d < num_actual_tokens %d", (int)c->padded_num_tokens,
               (int)c->num_actual_tokens);
    PA_REQUIRE(c->padded_num_tokens == 0 || c->slot_mapping != NULL, "common metadata: slot_mapping is NULL");
    PA_REQUIRE(c->query_start_loc[0] == 0, "common metadata: query_start_loc[0] = %d, not 0",
               (int)c->query_start_loc[0]);
    const int32_t n = c->num_reqs;
    if (n == 0) {
        PA_REQUIRE(c->num_actual_tokens == 0, "common metadata: num_actual_tokens %d in an empty batch",
                   (int)c->num_actual_tokens);
        return PA_SUCCESS;
    }
    PA_REQUIRE(c->seq_lens != NULL, "common metadata: seq_lens is NULL");
    PA_REQUIRE(c->num_computed_tokens != NULL, "common metadata: num_computed_tokens is NULL");
    PA_REQUIRE(c->block_table != NULL, "common metadata: block_table is NULL");
    PA_REQUIRE(c->block_table_stride >= 1, "common metadata: block_table_stride %d < 1", (int)c->block_table_stride);
    for (int32_t r = 0; r < n; r++) {
        const int64_t q = (int64_t)c->query_start_loc[r + 1] - c->query_start_loc[r];
        const int64_t k = c->num_computed_tokens[r], s = c->seq_lens[r];
        PA_REQUIRE(q >= 0, "request %d: query length %lld < 0 (query_start_loc not monotonic)", (int)r, (long long)q);
        PA_REQUIRE(k >= 0, "request %d: num_computed_tokens %lld < 0", (int)r, (long long)k);
        PA_REQUIRE(s == k + q, "request %d: seq_len %lld != num_computed_tokens %lld + query length %lld", (int)r,
                   (long long)s, (long long)k, (long long)q);
        PA_REQUIRE(s <= INT32_MAX && (s == 0 ? 0 : udiv32(s - 1, c->block_size) + 1) <= c->block_table_stride,
                   "request %d: block_table row too narrow: seq_len %lld needs %lld blocks of %d, stride %d", (int)r,
                   (long long)s, (long long)cdiv64(s, c->block_size), (int)c->block_size, (int)c->block_table_stride);
    }
    PA_REQUIRE(c->query_start_loc[n] == c->num_actual_tokens,
               "common metadata: query_start_loc[%d] = %d != num_actual_tokens %d", (int)n, (int)c->query_start_loc[n],
               (int)c->num_actual_tokens);
    return PA_SUCCESS;
}

/* The common metadata's arrays, as a builder's inputs (in[5]). */
static void common_spans(const pa_common_metadata *c, pa_span *in) {
    const int64_t n = c->num_reqs;
    int64_t bt_bytes = INT64_MAX;
    if (!pa_mul_i64(n * c->block_table_stride, 4, &bt_bytes))
        bt_bytes = INT64_MAX;
    in[0] = (pa_span){"query_start_loc", c->query_start_loc, 4 * (n + 1), NULL};
    in[1] = (pa_span){"seq_lens", c->seq_lens, 4 * n, NULL};
    in[2] = (pa_span){"num_computed_tokens", c->num_computed_tokens, 4 * n, NULL};
    in[3] = (pa_span){"block_table", c->block_table, bt_bytes, NULL};
    in[4] = (pa_span){"slot_mapping", c->slot_mapping, 8 * (int64_t)c->padded_num_tokens, NULL};
}

/* ---- decode/prompt builder ----------------------------------------------- */

static void fill_view(pa_seq_view *v, const pa_common_metadata *c, const pa_prompt_decode_metadata *m, int32_t first,
                      int32_t count, int32_t max_q, int32_t max_s) {
    const int32_t *qsl = c->query_start_loc;
    v->first_seq = first;
    v->num_seqs = count;
    v->first_token = qsl[first];
    v->num_tokens = qsl[first + count] - qsl[first];
    v->max_query_len = max_q;
    v->max_seq_len = max_s;
    v->seq_lens = c->seq_lens ? c->seq_lens + first : NULL;
    v->context_lens = c->num_computed_tokens ? c->num_computed_tokens + first : NULL;
    v->query_start_loc = qsl + first;
    v->seq_start_loc = m->seq_start_loc + first;
    v->block_tables = c->block_table ? c->block_table + (size_t)first * (size_t)c->block_table_stride : NULL;
    v->slot_mapping = c->slot_mapping ? c->slot_mapping + qsl[first] : NULL;
}

pa_status pa_build_prompt_decode_metadata(const pa_common_metadata *c, int32_t num_prefills,
                                          const pa_encoder_batch *enc, pa_prompt_decode_metadata *out) {
    PA_TRY(validate_common(c));
    PA_REQUIRE(out != NULL, "output metadata is NULL");
    const int32_t n = c->num_reqs, bs = c->block_size;
    PA_REQUIRE(num_prefills >= 0 && num_prefills <= n, "num_prefills %d outside [0, num_reqs %d]", (int)num_prefills,
               (int)n);
    PA_REQUIRE(out->seq_start_loc != NULL, "output seq_start_loc is NULL");
    /* Prefills first (seed 003's order): requests [0, num_prefills) are
     * prefills, the rest decodes, and no decode may have a longer query than a
     * prefill (requests with no new token are neutral). A batch that breaks it
     * is in the other order (decodes first, as reorder and split leave it) or
     * has a wrong num_prefills: refused, not mislabelled. */
    {
        const int32_t *qsl = c->query_start_loc;
        int32_t min_pre = INT32_MAX, min_pre_r = -1, max_dec = 0, max_dec_r = -1;
        for (int32_t r = 0; r < n; r++) {
            const int32_t q = qsl[r + 1] - qsl[r];
            if (q == 0)
                continue;
            if (r < num_prefills && q < min_pre)
                min_pre = q, min_pre_r = r;
            if (r >= num_prefills && q > max_dec)
                max_dec = q, max_dec_r = r;
        }
        PA_REQUIRE(max_dec_r < 0 || min_pre_r < 0 || max_dec <= min_pre,
                   "request %d: decode query length %d > query length %d of prefill request %d (num_prefills %d); "
                   "this builder wants prefills first (decodes first is the order of reorder/split)",
                   (int)max_dec_r, (int)max_dec, (int)min_pre, (int)min_pre_r, (int)num_prefills);
    }
    int64_t kv_total = 0;
    for (int32_t r = 0; r < n; r++) {
        kv_total += c->seq_lens[r];
        PA_REQUIRE(kv_total <= INT32_MAX, "request %d: sum of seq_lens %lld overflows int32 (seq_start_loc)", (int)r,
                   (long long)kv_total);
    }
    int64_t enc_total = 0, cross_slots = 0;
    if (enc != NULL) {
        PA_REQUIRE(out->encoder_seq_start_loc != NULL, "output encoder_seq_start_loc is NULL");
        if (n > 0) {
            PA_REQUIRE(enc->encoder_seq_lens != NULL, "encoder_seq_lens is NULL");
            PA_REQUIRE(enc->cross_block_table != NULL, "cross_block_table is NULL");
            PA_REQUIRE(enc->cross_block_table_stride >= 1, "cross_block_table_stride %d < 1",
                       (int)enc->cross_block_table_stride);
        }
        for (int32_t r = 0; r < n; r++) {
            const int64_t e = enc->encoder_seq_lens[r];
            PA_REQUIRE(e >= 0, "request %d: encoder_seq_lens %lld < 0", (int)r, (long long)e);
            enc_total += e;
            PA_REQUIRE(enc_total <= INT32_MAX, "request %d: total encoder tokens %lld overflow int32", (int)r,
                       (long long)enc_total);
            PA_REQUIRE(cdiv64(e, bs) <= enc->cross_block_table_stride,
                       "request %d: cross_block_table row too narrow: encoder_seq_len %lld needs %lld blocks of %d, "
                       "stride %d",
                       (int)r, (long long)e, (long long)cdiv64(e, bs), (int)bs, (int)enc->cross_block_table_stride);
            if (r < num_prefills) {
                cross_slots += e;
                PA_TRY(check_touched_blocks("cross_block_table", r,
                                            enc->cross_block_table + (size_t)r * (size_t)enc->cross_block_table_stride,
                                            0, e, bs, INT32_MAX));
            }
        }
        PA_REQUIRE(out->cross_slot_mapping_capacity >= cross_slots,
                   "cross_slot_mapping_capacity %d < encoder tokens of the prefills %lld",
                   (int)out->cross_slot_mapping_capacity, (long long)cross_slots);
        PA_REQUIRE(cross_slots == 0 || out->cross_slot_mapping != NULL, "output cross_slot_mapping is NULL");
    }
    /* The writes below read the common and encoder arrays after writing
     * seq_start_loc: no output may share a byte with them or with another. */
    {
        pa_span in[7];
        common_spans(c, in);
        int64_t cbt_bytes = INT64_MAX;
        if (enc && !pa_mul_i64((int64_t)n * enc->cross_block_table_stride, 4, &cbt_bytes))
            cbt_bytes = INT64_MAX;
        in[5] = (pa_span){"encoder_seq_lens", enc ? enc->encoder_seq_lens : NULL, 4 * (int64_t)n, NULL};
        in[6] = (pa_span){"cross_block_table", enc ? enc->cross_block_table : NULL, cbt_bytes, NULL};
        const pa_span o[3] = {
            {"seq_start_loc", out->seq_start_loc, 4 * ((int64_t)n + 1), NULL},
            {"encoder_seq_start_loc", enc ? out->encoder_seq_start_loc : NULL, 4 * ((int64_t)n + 1), NULL},
            {"cross_slot_mapping", enc ? out->cross_slot_mapping : NULL, 8 * cross_slots, NULL}};
        PA_TRY(pa_check_spans_apart(NULL, in, 7, o, 3));
    }

    /* Write. */
    const int32_t *qsl = c->query_start_loc, *sl = c->seq_lens;
    int32_t *ssl = out->seq_start_loc;
    int32_t acc = 0, max_q = 0, max_pre_s = 0, max_pre_q = 0, max_dec_s = 0, max_dec_q = 0;
    ssl[0] = 0;
    for (int32_t r = 0; r < n; r++) {
        const int32_t q = qsl[r + 1] - qsl[r], s = sl[r];
        acc += s;
        ssl[r + 1] = acc;
        max_q = q > max_q ? q : max_q;
        if (r < num_prefills) {
            max_pre_s = s > max_pre_s ? s : max_pre_s;
            max_pre_q = q > max_pre_q ? q : max_pre_q;
        } else {
            max_dec_s = s > max_dec_s ? s : max_dec_s;
            max_dec_q = q > max_dec_q ? q : max_dec_q;
        }
    }
    out->num_reqs = n;
    out->num_prefills = num_prefills;
    out->num_prefill_tokens = qsl[num_prefills];
    out->num_decode_tokens = c->num_actual_tokens - qsl[num_prefills];
    out->max_query_len = max_q;
    out->max_prefill_seq_len = max_pre_s;
    out->max_decode_seq_len = max_dec_s;
    out->max_decode_query_len = max_dec_q;
    out->seq_lens = c->seq_lens;
    out->context_lens = c->num_computed_tokens;
    out->query_start_loc = c->query_start_loc;
    out->block_tables = c->block_table;
    out->block_table_stride = c->block_table_stride;
    out->slot_mapping = c->slot_mapping;
    fill_view(&out->prefill, c, out, 0, num_prefills, max_pre_q, max_pre_s);
    fill_view(&out->decode, c, out, num_prefills, n - num_prefills, max_dec_q, max_dec_s);

    if (enc != NULL) {
        int32_t *esl = out->encoder_seq_start_loc;
        int32_t eacc = 0, max_e = 0, cacc = 0;
        esl[0] = 0;
        for (int32_t r = 0; r < n; r++) {
            const int32_t e = enc->encoder_seq_lens[r];
            eacc += e;
            esl[r + 1] = eacc;
            max_e = e > max_e ? e : max_e;
            if (r < num_prefills && e > 0) {
                write_slots(out->cross_slot_mapping + cacc,
                            enc->cross_block_table + (size_t)r * (size_t)enc->cross_block_table_stride, 0, e, bs);
                cacc += e;
            }
        }
        out->encoder_seq_lens = enc->encoder_seq_lens;
        out->max_encoder_seq_len = max_e;
        out->num_encoder_tokens = eacc;
        out->num_cross_slots = cacc;
        out->cross_block_tables = enc->cross_block_table;
        out->cross_block_table_stride = enc->cross_block_table_stride;
    } else {
        out->encoder_seq_lens = NULL;
        out->max_encoder_seq_len = 0;
        out->num_encoder_tokens = 0;
        out->num_cross_slots = 0;
        out->cross_block_tables = NULL;
        out->cross_block_table_stride = 0;
    }
    pa_clear_error();
    return PA_SUCCESS;
}

/* ---- KV-update slices and the ragged builder ----------------------------- */

/* Counts slices and checks the blocks they read; common already validated. */
static pa_status count_slices(const pa_common_metadata *c, int32_t spb, int32_t *num, int32_t *padded) {
    PA_REQUIRE(spb >= 1, "slices_per_block %d < 1", (int)spb);
    const int32_t bs = c->block_size;
    int64_t total = 0;
    const uint32_t max_id = max_block_id(bs);
    for (int32_t r = 0; r < c->num_reqs; r++) {
        const int64_t start = c->num_computed_tokens[r], end = c->seq_lens[r];
        if (end <= start)
            continue; /* no new tokens, no slice */
        total += udiv32(end - 1, bs) - udiv32(start, bs) + 1;
        PA_TRY(check_touched_blocks("block_table", r, c->block_table + (size_t)r * (size_t)c->block_table_stride, start,
                                    end, bs, max_id));
    }
    const int64_t p = cdiv64(total, spb) * spb;
    PA_REQUIRE(p <= INT32_MAX, "padded slice count %lld overflows int32", (long long)p);
    *num = (int32_t)total;
    *padded = (int32_t)p;
    return PA_SUCCESS;
}

/* Field-major, as pa_kv_cache_update reads them: slices[f * stride + i] is
 * field f of slice i; entries [num, stride) of each field are zero (padding
 * slices of length 0). */
static void write_slices(const pa_common_metadata *c, int32_t num, int32_t stride, int32_t *slices) {
    if (slices == NULL) /* capacity 0 (metadata.h), so num is 0: nothing to write, no offsets to form */
        return;
    const int32_t bs = c->block_size;
    int32_t *kv_start = slices, *new_start = slices + stride, *len = slices + 2 * (size_t)stride;
    int32_t i = 0;
    for (int32_t r = 0; r < c->num_reqs; r++) {
        const int32_t start = c->num_computed_tokens[r], end = c->seq_lens[r];
        if (end <= start)
            continue;
        const int32_t *row = c->block_table + (size_t)r * (size_t)c->block_table_stride;
        const int32_t first = (int32_t)udiv32(start, bs), last = (int32_t)udiv32(end - 1, bs);
        int32_t new_kv = c->query_start_loc[r];
        for (int32_t blk = first; blk <= last; blk++, i++) {
            const int32_t lo = blk == first ? start - first * bs : 0;
            const int32_t hi = blk == last ? (end - 1) - last * bs + 1 : bs;
            kv_start[i] = row[blk] * bs + lo;
            new_start[i] = new_kv;
            len[i] = hi - lo;
            new_kv += hi - lo;
        }
    }
    for (int32_t f = 0; f < PA_SLICE_FIELDS; f++)
        for (int32_t k = num; k < stride; k++)
            slices[(size_t)f * (size_t)stride + (size_t)k] = 0;
}

/* write_slices reads the common arrays while it writes the slices. */
static pa_status slices_apart(const pa_common_metadata *c, const int32_t *slices, int32_t capacity) {
    pa_span in[5];
    common_spans(c, in);
    const pa_span o = {"slices", slices, 4 * (int64_t)PA_SLICE_FIELDS * capacity, NULL};
    return pa_check_spans_apart(NULL, in, 5, &o, 1);
}

pa_status pa_kv_update_slices_count(const pa_common_metadata *c, int32_t spb, int32_t *num_slices,
                                    int32_t *num_slices_padded) {
    PA_TRY(validate_common(c));
    int32_t num = 0, padded = 0;
    PA_TRY(count_slices(c, spb, &num, &padded));
    if (num_slices)
        *num_slices = num;
    if (num_slices_padded)
        *num_slices_padded = padded;
    pa_clear_error();
    return PA_SUCCESS;
}

pa_status pa_kv_update_slices_upper_bound(int32_t num_reqs, int32_t num_tokens, int32_t block_size, int32_t spb,
                                          int32_t *out) {
    PA_REQUIRE(out != NULL, "output is NULL");
    PA_REQUIRE(num_reqs >= 0, "num_reqs %d < 0", (int)num_reqs);
    PA_REQUIRE(num_tokens >= 0, "num_tokens %d < 0", (int)num_tokens);
    PA_REQUIRE(block_size > 0, "block_size %d <= 0", (int)block_size);
    PA_REQUIRE(spb >= 1, "slices_per_block %d < 1", (int)spb);
    int64_t n = (int64_t)num_tokens / block_size + 2 * (int64_t)num_reqs;
    if (n > num_tokens)
        n = num_tokens;
    n = cdiv64(n, spb) * spb;
    PA_REQUIRE(n <= INT32_MAX, "slice bound %lld overflows int32", (long long)n);
    *out = (int32_t)n;
    pa_clear_error();
    return PA_SUCCESS;
}

pa_status pa_build_kv_update_slices(const pa_common_metadata *c, int32_t spb, int32_t *slices, int32_t capacity,
                                    int32_t *num_slices, int32_t *num_slices_padded) {
    PA_TRY(validate_common(c));
    int32_t num = 0, padded = 0;
    PA_TRY(count_slices(c, spb, &num, &padded));
    PA_REQUIRE(capacity >= padded, "slices capacity %d < padded slice count %d", (int)capacity, (int)padded);
    /* Every one of the capacity entries of each field is written (padding). */
    PA_REQUIRE(capacity == 0 || slices != NULL, "output slices is NULL with capacity %d", (int)capacity);
    PA_TRY(slices_apart(c, slices, capacity));
    write_slices(c, num, capacity, slices);
    if (num_slices)
        *num_slices = num;
    if (num_slices_padded)
        *num_slices_padded = padded;
    pa_clear_error();
    return PA_SUCCESS;
}

pa_status pa_build_ragged_metadata(const pa_common_metadata *c, int32_t spb, pa_ragged_metadata *out) {
    PA_TRY(validate_common(c));
    PA_REQUIRE(out != NULL, "output metadata is NULL");
    int32_t num = 0, padded = 0;
    PA_TRY(count_slices(c, spb, &num, &padded));
    PA_REQUIRE(out->slices_capacity >= padded, "slices_capacity %d < padded slice count %d", (int)out->slices_capacity,
               (int)padded);
    PA_REQUIRE(out->slices_capacity == 0 || out->slices != NULL, "output slices is NULL with slices_capacity %d",
               (int)out->slices_capacity);
    PA_TRY(slices_apart(c, out->slices, out->slices_capacity));
    write_slices(c, num, out->slices_capacity, out->slices);
    out->num_seqs = c->num_reqs;
    out->num_slices = num;
    out->num_slices_padded = padded;
    out->slot_mapping = c->slot_mapping;
    out->block_tables = c->block_table;
    out->block_table_stride = c->block_table_stride;
    out->context_lens = c->seq_lens;
    out->query_start_loc = c->query_start_loc;
    pa_clear_error();
    return PA_SUCCESS;
}
