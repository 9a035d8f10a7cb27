/* Host metadata: common metadata, the decode/prompt and ragged builders and
 * the KV-update slices. Expected values are worked out by hand from the seeds'
 * definitions, or come from a deliberately naive per-token reimplementation
 * below (no prefix-sum reuse, no block walking). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "pagedattn/pagedattn.h"
#include "testutil.h"

#define SENT ((int32_t)0x5A5A5A5A)

/* The tests' one RNG (pa_rng, benchmarks/problems.h): only the inputs come
 * from it; every expected value is computed here. */

static void fill_sent(int32_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        p[i] = SENT;
}
static int all_sent(const int32_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != SENT)
            return 0;
    return 1;
}
static void assert_arr(const int32_t *got, const int32_t *want, int n, const char *what) {
    for (int i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "%s[%d]: got %d want %d", what, i, got[i], want[i]);
}
/* Slot mappings are int64 (what pa_reshape_and_cache reads). */
#define SENT64 ((int64_t)0x5A5A5A5A5A5A5A5All)
static void fill_sent64(int64_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        p[i] = SENT64;
}
static int all_sent64(const int64_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != SENT64)
            return 0;
    return 1;
}
static void assert_slots(const int64_t *got, const int64_t *want, int n, const char *what) {
    for (int i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "%s[%d]: got %lld want %lld", what, i, (long long)got[i], (long long)want[i]);
}

/* Slices are field-major [3][cap]; want_rows is [n][3] as written by hand. */
static void assert_slices(const int32_t *s, int32_t cap, const int32_t *want_rows, int n) {
    for (int i = 0; i < n; i++)
        for (int f = 0; f < 3; f++)
            cr_assert_eq(s[f * cap + i], want_rows[3 * i + f], "slice %d field %d: got %d want %d", i, f,
                         s[f * cap + i], want_rows[3 * i + f]);
}

/* Output buffers big enough for the small hand examples. */
typedef struct bufs {
    int32_t qsl[64], sl[64], nc[64], ssl[64], esl[64], slices[512 * 3];
    int64_t slots[512], cross[512];
} bufs;

static pa_common_metadata common_for(bufs *b) {
    pa_common_metadata c;
    memset(&c, 0, sizeof c);
    c.query_start_loc = b->qsl;
    c.seq_lens = b->sl;
    c.num_computed_tokens = b->nc;
    c.slot_mapping = b->slots;
    c.slot_mapping_capacity = 512;
    return c;
}

/* ---- worked examples ------------------------------------------------------ */

/* Seed 002's local-attention example batch: q_seqlens [4, 10, 5], k_seqlens
 * [6, 17, 9], block_size 2, block table rows 0..9, 10..19, 20..29. Row r
 * holds block 10r + j at column j, so position p of request r is slot
 * (10r + p/2)*2 + p%2 = 20r + p. */
Test(metadata_examples, seed002_batch_common) {
    int32_t bt[30];
    for (int i = 0; i < 30; i++)
        bt[i] = i;
    const int32_t comp[3] = {2, 7, 4}, sched[3] = {4, 10, 5};
    pa_batch batch = {3, comp, sched, 2, bt, 10};
    bufs b;
    fill_sent64(b.slots, 512);
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 24, &c), PA_SUCCESS, "%s", pa_last_error());
    const int32_t qsl[4] = {0, 4, 14, 19}, sl[3] = {6, 17, 9};
    assert_arr(b.qsl, qsl, 4, "query_start_loc");
    assert_arr(b.sl, sl, 3, "seq_lens");
    assert_arr(b.nc, comp, 3, "num_computed_tokens");
    const int64_t slots[24] = {2,  3,  4,  5,  27, 28, 29, 30, 31, 32, 33, 34,
                               35, 36, 44, 45, 46, 47, 48, -1, -1, -1, -1, -1};
    assert_slots(b.slots, slots, 24, "slot_mapping");
    cr_assert_eq(b.slots[24], SENT64, "past padded_num_tokens must not be written");
    cr_assert_eq(c.num_reqs, 3);
    cr_assert_eq(c.num_actual_tokens, 19);
    cr_assert_eq(c.padded_num_tokens, 24);
    cr_assert_eq(c.max_query_len, 10);
    cr_assert_eq(c.max_seq_len, 17);
    cr_assert_str_eq(pa_last_error(), "");
}

/* vLLM's TPU slice test: requests at offset 9 (1 token, block 0), 0 (12 tokens,
 * block 5) and 0 (11 tokens, block 10), page size 16. */
Test(metadata_examples, tpu_runner_slices) {
    const int32_t bt[3] = {0, 5, 10}, comp[3] = {9, 0, 0}, sched[3] = {1, 12, 11};
    pa_batch batch = {3, comp, sched, 16, bt, 1};
    bufs b;
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS, "%s", pa_last_error());
    int32_t n = -1, np = -1;
    fill_sent(b.slices, 512 * 3);
    cr_assert_eq(pa_build_kv_update_slices(&c, 8, b.slices, 8, &n, &np), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(n, 3);
    cr_assert_eq(np, 8);
    const int32_t want[8 * 3] = {9, 0, 1, 80, 1, 12, 160, 13, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    assert_slices(b.slices, 8, want, 8);
    /* field-major: the kv_cache_start row is 9, 80, 160, then padding */
    cr_assert_eq(b.slices[1], 80);
    cr_assert_eq(b.slices[8 + 2], 13);
    cr_assert_eq(b.slices[24], SENT);
    /* a wider buffer (the graph-sized upper bound) gets the same slices at
     * its own row stride, padding zero to the end of every row */
    fill_sent(b.slices, 512 * 3);
    cr_assert_eq(pa_build_kv_update_slices(&c, 8, b.slices, 16, &n, &np), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(np, 8);
    assert_slices(b.slices, 16, want, 8);
    for (int f = 0; f < 3; f++)
        for (int i = 8; i < 16; i++)
            cr_assert_eq(b.slices[f * 16 + i], 0);
    cr_assert_eq(b.slices[48], SENT);
}

/* Slices of a request crossing several blocks: positions 13..45 with block
 * size 8 touch blocks 1..5: [13,16) [16,24) [24,32) [32,40) [40,46). */
Test(metadata_examples, slices_cross_several_blocks) {
    const int32_t bt[6] = {100, 7, 3, 50, 9, 11}, comp[1] = {13}, sched[1] = {33};
    pa_batch batch = {1, comp, sched, 8, bt, 6};
    bufs b;
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS, "%s", pa_last_error());
    int32_t n, np;
    cr_assert_eq(pa_build_kv_update_slices(&c, 4, b.slices, 8, &n, &np), PA_SUCCESS);
    cr_assert_eq(n, 5);
    cr_assert_eq(np, 8);
    const int32_t want[8 * 3] = {7 * 8 + 5, 0,  3, 3 * 8, 3, 8, 50 * 8, 11, 8, 9 * 8, 19, 8,
                                 11 * 8,    27, 6, 0,     0, 0, 0,      0,  0, 0,     0,  0};
    assert_slices(b.slices, 8, want, 8);
    /* slot mapping: 13 -> 7*8+5 = 61, ..., 45 -> 11*8+5 = 93 */
    cr_assert_eq(b.slots[0], 61);
    cr_assert_eq(b.slots[2], 63);
    cr_assert_eq(b.slots[3], 24);
    cr_assert_eq(b.slots[32], 93);
}

/* Seed 003's layout: prefills first, then decodes, in one flat query. */
Test(metadata_examples, prompt_decode_layout) {
    /* prefill chunks: (computed 0, new 5), (computed 16, new 4); decodes: (7,1), (33,1), (2, 2: spec) */
    const int32_t comp[5] = {0, 16, 7, 33, 2}, sched[5] = {5, 4, 1, 1, 2};
    int32_t bt[5 * 4];
    for (int i = 0; i < 20; i++)
        bt[i] = 40 + i;
    pa_batch batch = {5, comp, sched, 16, bt, 4};
    bufs b;
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS, "%s", pa_last_error());
    pa_prompt_decode_metadata m;
    memset(&m, 0, sizeof m);
    m.seq_start_loc = b.ssl;
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 2, NULL, &m), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(m.num_prefills, 2);
    cr_assert_eq(m.num_prefill_tokens, 9);
    cr_assert_eq(m.num_decode_tokens, 4);
    cr_assert_eq(m.max_prefill_seq_len, 20);
    cr_assert_eq(m.max_decode_seq_len, 34);
    cr_assert_eq(m.max_query_len, 5);
    cr_assert_eq(m.max_decode_query_len, 2);
    const int32_t ssl[6] = {0, 5, 25, 33, 67, 71};
    assert_arr(b.ssl, ssl, 6, "seq_start_loc");
    cr_assert_eq(m.context_lens[3], 33);
    cr_assert_eq(m.prefill.num_seqs, 2);
    cr_assert_eq(m.prefill.num_tokens, 9);
    cr_assert_eq(m.prefill.max_query_len, 5);
    cr_assert_eq(m.decode.first_seq, 2);
    cr_assert_eq(m.decode.num_seqs, 3);
    cr_assert_eq(m.decode.first_token, 9);
    cr_assert_eq(m.decode.num_tokens, 4);
    cr_assert_eq(m.decode.seq_lens[0], 8);
    cr_assert_eq(m.decode.query_start_loc[0], 9);
    cr_assert_eq(m.decode.query_start_loc[3], 13);
    cr_assert_eq(m.decode.seq_start_loc[0], 25);
    cr_assert_eq(m.decode.block_tables[0], 48); /* row 2, column 0 */
    /* decode 0 (row 2 = blocks 48..51) writes position 7: slot 48*16+7 */
    cr_assert_eq(m.decode.slot_mapping[0], 48 * 16 + 7);
    /* prefill 1 (row 1 = 44..47) writes positions 16..19 in block 45 */
    cr_assert_eq(m.prefill.slot_mapping[5], 45 * 16);
    cr_assert_eq(m.encoder_seq_lens, NULL);
    cr_assert_eq(m.num_encoder_tokens, 0);
}

/* Encoder/decoder: cross slots for the prefills' encoder tokens only. */
Test(metadata_examples, cross_attention_fields) {
    const int32_t comp[3] = {0, 0, 2}, sched[3] = {3, 2, 1};
    const int32_t bt[3] = {1, 2, 3};
    const int32_t enc_lens[3] = {5, 0, 7};
    const int32_t cross_bt[3 * 2] = {10, 11, 20, 21, 30, 31};
    pa_batch batch = {3, comp, sched, 4, bt, 1};
    bufs b;
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS, "%s", pa_last_error());
    pa_encoder_batch enc = {enc_lens, cross_bt, 2};
    pa_prompt_decode_metadata m;
    memset(&m, 0, sizeof m);
    m.seq_start_loc = b.ssl;
    m.encoder_seq_start_loc = b.esl;
    m.cross_slot_mapping = b.cross;
    m.cross_slot_mapping_capacity = 5;
    fill_sent64(b.cross, 512);
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 2, &enc, &m), PA_SUCCESS, "%s", pa_last_error());
    const int32_t esl[4] = {0, 5, 5, 12};
    assert_arr(b.esl, esl, 4, "encoder_seq_start_loc");
    cr_assert_eq(m.num_encoder_tokens, 12);
    cr_assert_eq(m.max_encoder_seq_len, 7);
    cr_assert_eq(m.num_cross_slots, 5);
    const int64_t cross[5] = {40, 41, 42, 43, 44};
    assert_slots(b.cross, cross, 5, "cross_slot_mapping");
    cr_assert_eq(b.cross[5], SENT64);
    cr_assert_eq(m.cross_block_tables, cross_bt);
    cr_assert_eq(m.cross_block_table_stride, 2);
}

Test(metadata_examples, ragged_views) {
    const int32_t comp[2] = {3, 0}, sched[2] = {1, 6};
    const int32_t bt[4] = {2, 0, 5, 6};
    pa_batch batch = {2, comp, sched, 4, bt, 2};
    bufs b;
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 8, &c), PA_SUCCESS, "%s", pa_last_error());
    pa_ragged_metadata r;
    memset(&r, 0, sizeof r);
    r.slices = b.slices;
    r.slices_capacity = 4;
    cr_assert_eq(pa_build_ragged_metadata(&c, 2, &r), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(r.num_seqs, 2);
    cr_assert_eq(r.num_slices, 3);
    cr_assert_eq(r.num_slices_padded, 4);
    const int32_t want[12] = {11, 0, 1, 20, 1, 4, 24, 5, 2, 0, 0, 0};
    assert_slices(b.slices, 4, want, 4);
    /* ragged context_lens are the K/V lengths: computed + new */
    cr_assert_eq(r.context_lens[0], 4);
    cr_assert_eq(r.context_lens[1], 6);
    cr_assert_eq(r.query_start_loc[2], 7);
    const int64_t slots[8] = {11, 20, 21, 22, 23, 24, 25, -1};
    assert_slots(r.slot_mapping, slots, 8, "slot_mapping");
}

/* ---- edge cases ----------------------------------------------------------- */

Test(metadata_edges, empty_batch) {
    pa_batch batch = {0, NULL, NULL, 16, NULL, 0};
    bufs b;
    fill_sent64(b.slots, 8);
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 4, &c), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(b.qsl[0], 0);
    cr_assert_eq(c.num_actual_tokens, 0);
    cr_assert_eq(c.max_query_len, 0);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(b.slots[i], -1);
    cr_assert_eq(b.slots[4], SENT64);
    pa_prompt_decode_metadata m;
    memset(&m, 0, sizeof m);
    m.seq_start_loc = b.ssl;
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 0, NULL, &m), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(b.ssl[0], 0);
    cr_assert_eq(m.prefill.num_seqs, 0);
    cr_assert_eq(m.decode.num_seqs, 0);
    int32_t n = -1, np = -1;
    cr_assert_eq(pa_build_kv_update_slices(&c, 8, NULL, 0, &n, &np), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(n, 0);
    cr_assert_eq(np, 0);
}

Test(metadata_edges, one_token_and_exact_block_fill) {
    /* one token at position 0 */
    const int32_t bt[2] = {9, 4};
    int32_t comp[1] = {0}, sched[1] = {1};
    pa_batch batch = {1, comp, sched, 16, bt, 2};
    bufs b;
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS);
    cr_assert_eq(b.slots[0], 144);
    int32_t n, np;
    cr_assert_eq(pa_build_kv_update_slices(&c, 1, b.slices, 1, &n, &np), PA_SUCCESS);
    cr_assert_eq(n, 1);
    cr_assert_eq(np, 1);
    cr_assert_eq(b.slices[0], 144);
    cr_assert_eq(b.slices[2], 1);
    /* tokens 16..31 exactly fill block 1 (id 4): one full slice, and a table
     * of width 2 is enough for seq_len 32 */
    comp[0] = 16;
    sched[0] = 16;
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(b.slots[0], 64);
    cr_assert_eq(b.slots[15], 79);
    cr_assert_eq(pa_build_kv_update_slices(&c, 1, b.slices, 1, &n, &np), PA_SUCCESS);
    cr_assert_eq(n, 1);
    const int32_t want[3] = {64, 0, 16};
    assert_slices(b.slices, 1, want, 1);
    /* one more token needs a third column */
    sched[0] = 17;
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "request 0: block_table row too narrow") != NULL, "%s", pa_last_error());
}

/* The two orders: this builder wants prefills first (seed 003); reorder and
 * split leave decodes first (seed 002). A decodes-first batch, or a wrong
 * num_prefills, gives a decode longer than a prefill: refused, nothing
 * written. */
Test(metadata_bad, prompt_decode_refuses_decodes_first_order) {
    const int32_t comp[4] = {7, 33, 0, 16}, sched[4] = {1, 1, 5, 4}; /* decodes first, as reorder leaves it */
    int32_t bt[4 * 4];
    for (int i = 0; i < 16; i++)
        bt[i] = 40 + i;
    pa_batch batch = {4, comp, sched, 16, bt, 4};
    bufs b;
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS, "%s", pa_last_error());
    pa_batch_split sp;
    cr_assert_eq(pa_split_decodes_and_prefills(b.qsl, 4, 1, &sp), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(sp.num_decodes, 2);
    cr_assert_eq(sp.num_prefills, 2);
    pa_prompt_decode_metadata m;
    memset(&m, 0, sizeof m);
    fill_sent(b.ssl, 64);
    m.seq_start_loc = b.ssl;
    m.num_prefills = SENT;
    /* split's num_prefills (2) read as prefills-first: requests 2, 3 (5 and 4
     * tokens) would be decodes behind one-token prefills; 1 and 3 are wrong too */
    const int32_t wrong[3] = {2, 1, 3};
    const char *msg[3] = {"request 2: decode query length 5 > query length 1 of prefill request 0",
                          "request 2: decode query length 5 > query length 1 of prefill request 0",
                          "request 3: decode query length 4 > query length 1 of prefill request 0"};
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(pa_build_prompt_decode_metadata(&c, wrong[k], NULL, &m), PA_ERR_INVALID_ARGUMENT,
                     "num_prefills %d accepted on a decodes-first batch", wrong[k]);
        cr_assert(strstr(pa_last_error(), msg[k]), "%s", pa_last_error());
        cr_assert(strstr(pa_last_error(), "prefills first"), "%s", pa_last_error());
        cr_assert(all_sent(b.ssl, 64), "rejected call wrote seq_start_loc");
        cr_assert_eq(m.num_prefills, SENT);
    }
    /* all four as prefills is a consistent labelling (nothing is a decode) */
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 4, NULL, &m), PA_SUCCESS, "%s", pa_last_error());

    /* the same requests in seed 003's order are accepted, a 2-token
     * speculative decode included, and a one-token prefill chunk */
    const int32_t comp2[5] = {0, 16, 0, 7, 33}, sched2[5] = {5, 4, 2, 1, 2};
    pa_batch batch2 = {5, comp2, sched2, 16, bt, 3};
    c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch2, 0, &c), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 3, NULL, &m), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(m.num_decode_tokens, 3);
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 2, NULL, &m), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(m.max_decode_query_len, 2);
    /* num_prefills 4 makes the 1-token request a prefill and leaves a
     * 2-token decode behind it: refused */
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 4, NULL, &m), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "request 4: decode query length 2 > query length 1 of prefill request 3"), "%s",
              pa_last_error());
}

Test(metadata_edges, all_decodes_and_all_prefills) {
    const int32_t comp[3] = {5, 9, 31}, sched1[3] = {1, 1, 1}, schedp[3] = {7, 3, 2};
    int32_t bt[3 * 3];
    for (int i = 0; i < 9; i++)
        bt[i] = 8 - i;
    bufs b;
    pa_prompt_decode_metadata m;
    for (int k = 0; k < 2; k++) {
        pa_batch batch = {3, comp, k ? schedp : sched1, 16, bt, 3};
        pa_common_metadata c = common_for(&b);
        cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS, "%s", pa_last_error());
        memset(&m, 0, sizeof m);
        m.seq_start_loc = b.ssl;
        cr_assert_eq(pa_build_prompt_decode_metadata(&c, k ? 3 : 0, NULL, &m), PA_SUCCESS);
        if (k == 0) {
            cr_assert_eq(m.num_prefill_tokens, 0);
            cr_assert_eq(m.num_decode_tokens, 3);
            cr_assert_eq(m.max_prefill_seq_len, 0);
            cr_assert_eq(m.max_decode_seq_len, 32);
            cr_assert_eq(m.decode.num_seqs, 3);
            cr_assert_eq(m.prefill.num_seqs, 0);
        } else {
            cr_assert_eq(m.num_prefill_tokens, 12);
            cr_assert_eq(m.num_decode_tokens, 0);
            cr_assert_eq(m.max_prefill_seq_len, 33);
            cr_assert_eq(m.max_decode_seq_len, 0);
            cr_assert_eq(m.max_decode_query_len, 0);
            cr_assert_eq(m.decode.num_seqs, 0);
            cr_assert_eq(m.decode.first_token, 12);
        }
    }
}

Test(metadata_edges, zero_token_request_has_no_slots_or_slices) {
    const int32_t comp[3] = {5, 8, 0}, sched[3] = {2, 0, 1}, bt[3] = {1, 2, 3};
    pa_batch batch = {3, comp, sched, 16, bt, 1};
    bufs b;
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS, "%s", pa_last_error());
    const int32_t qsl[4] = {0, 2, 2, 3};
    const int64_t slots[3] = {21, 22, 48};
    assert_arr(b.qsl, qsl, 4, "query_start_loc");
    assert_slots(b.slots, slots, 3, "slot_mapping");
    int32_t n, np;
    cr_assert_eq(pa_build_kv_update_slices(&c, 3, b.slices, 3, &n, &np), PA_SUCCESS);
    cr_assert_eq(n, 2);
    cr_assert_eq(np, 3);
    const int32_t want[9] = {21, 0, 2, 48, 2, 1, 0, 0, 0};
    assert_slices(b.slices, 3, want, 3);
}

Test(metadata_edges, null_slices_with_capacity_is_rejected) {
    /* No request has new tokens, so the padded slice count is 0; a NULL slices
     * buffer that claims capacity 16 must still be rejected, never written. */
    const int32_t comp[2] = {5, 8}, sched[2] = {0, 0}, bt[2] = {1, 2};
    pa_batch batch = {2, comp, sched, 16, bt, 1};
    bufs b;
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS, "%s", pa_last_error());
    int32_t n = -7, np = -7;
    cr_assert_eq(pa_build_kv_update_slices(&c, 8, NULL, 16, &n, &np), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "slices is NULL") != NULL, "%s", pa_last_error());
    cr_assert(n == -7 && np == -7, "outputs written on a rejected call");
    pa_ragged_metadata rg;
    memset(&rg, 0, sizeof rg);
    rg.slices = NULL;
    rg.slices_capacity = 16;
    rg.num_slices = -7;
    cr_assert_eq(pa_build_ragged_metadata(&c, 8, &rg), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "slices is NULL") != NULL, "%s", pa_last_error());
    cr_assert_eq(rg.num_slices, -7, "outputs written on a rejected call");
    /* NULL with capacity 0 is the legitimate empty case */
    cr_assert_eq(pa_build_kv_update_slices(&c, 8, NULL, 0, &n, &np), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(n == 0 && np == 0);
    rg.slices_capacity = 0;
    cr_assert_eq(pa_build_ragged_metadata(&c, 8, &rg), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(rg.num_slices == 0 && rg.num_slices_padded == 0);
}

Test(metadata_edges, upper_bound) {
    int32_t u;
    cr_assert_eq(pa_kv_update_slices_upper_bound(4, 100, 16, 8, &u), PA_SUCCESS);
    cr_assert_eq(u, 16); /* min(100, 6 + 8) = 14 -> 16 */
    cr_assert_eq(pa_kv_update_slices_upper_bound(4, 3, 16, 8, &u), PA_SUCCESS);
    cr_assert_eq(u, 8); /* min(3, 8) = 3 -> 8 */
    cr_assert_eq(pa_kv_update_slices_upper_bound(0, 0, 16, 8, &u), PA_SUCCESS);
    cr_assert_eq(u, 0);
    cr_assert_eq(pa_kv_update_slices_upper_bound(1, 1, 0, 8, &u), PA_ERR_INVALID_ARGUMENT);
}

/* ---- randomised differential test against a naive per-token model --------- */

typedef struct rbatch {
    int n, bs, stride, padded, spb, num_prefills;
    int32_t *comp, *sched, *bt, *enc, *cbt;
    int cstride;
} rbatch;

static void rbatch_free(rbatch *r) {
    free(r->comp);
    free(r->sched);
    free(r->bt);
    free(r->enc);
    free(r->cbt);
}

static rbatch random_batch(pa_rng *g) {
    static const int sizes[] = {1, 2, 3, 4, 5, 8, 16, 32};
    rbatch r;
    memset(&r, 0, sizeof r);
    r.n = pa_rng_int(g, 0, 6) == 0 ? pa_rng_int(g, 0, 2) : pa_rng_int(g, 1, 40);
    r.bs = sizes[pa_rng_int(g, 0, 7)];
    r.comp = malloc(sizeof(int32_t) * (size_t)(r.n + 1));
    r.sched = malloc(sizeof(int32_t) * (size_t)(r.n + 1));
    r.enc = malloc(sizeof(int32_t) * (size_t)(r.n + 1));
    int maxb = 1, maxe = 1, total = 0;
    /* prefills first: requests past num_prefills are decodes (query <= 1) */
    r.num_prefills = pa_rng_int(g, 0, r.n);
    for (int i = 0; i < r.n; i++) {
        int kind = pa_rng_int(g, 0, 9);
        r.comp[i] = pa_rng_int(g, 0, 3) == 0 ? 0 : pa_rng_int(g, 0, 300);
        r.sched[i] = kind < 6 ? 1 : kind < 7 ? 0 : pa_rng_int(g, 1, 120);
        if (i >= r.num_prefills && r.sched[i] > 1)
            r.sched[i] = 1;
        r.enc[i] = pa_rng_int(g, 0, 40);
        int nb = (r.comp[i] + r.sched[i] + r.bs - 1) / r.bs;
        int ne = (r.enc[i] + r.bs - 1) / r.bs;
        maxb = nb > maxb ? nb : maxb;
        maxe = ne > maxe ? ne : maxe;
        total += r.sched[i];
    }
    r.stride = maxb + pa_rng_int(g, 0, 3);
    r.cstride = maxe + pa_rng_int(g, 0, 2);
    r.bt = malloc(sizeof(int32_t) * (size_t)(r.n * r.stride + 1));
    r.cbt = malloc(sizeof(int32_t) * (size_t)(r.n * r.cstride + 1));
    for (int i = 0; i < r.n * r.stride; i++)
        r.bt[i] = pa_rng_int(g, 0, 20000);
    for (int i = 0; i < r.n * r.cstride; i++)
        r.cbt[i] = pa_rng_int(g, 0, 20000);
    r.padded = pa_rng_int(g, 0, 2) == 0 ? 0 : total + pa_rng_int(g, 0, 9);
    r.spb = pa_rng_int(g, 1, 9);
    return r;
}

/* Naive slot of position pos of a row: the definition, with divisions. */
static int64_t naive_slot(const int32_t *row, int pos, int bs) { return (int64_t)row[pos / bs] * bs + pos % bs; }

Test(metadata_random, differential_1000_batches_per_function) {
    pa_rng g = pa_rng_make(20250611);
    for (int it = 0; it < 1500; it++) {
        rbatch r = random_batch(&g);
        const int n = r.n;
        /* naive token list: for every token its request, position and slot */
        int total = 0;
        for (int i = 0; i < n; i++)
            total += r.sched[i];
        int32_t *treq = malloc(sizeof(int32_t) * (size_t)(total + 1));
        int32_t *tpos = malloc(sizeof(int32_t) * (size_t)(total + 1));
        int64_t *tslot = malloc(sizeof(int64_t) * (size_t)(total + 1));
        int t = 0;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < r.sched[i]; k++) {
                treq[t] = i;
                tpos[t] = r.comp[i] + k;
                tslot[t] = naive_slot(r.bt + i * r.stride, r.comp[i] + k, r.bs);
                t++;
            }
        const int padded = r.padded ? r.padded : total;

        int32_t *qsl = malloc(sizeof(int32_t) * (size_t)(n + 1)), *sl = malloc(sizeof(int32_t) * (size_t)(n + 1));
        int32_t *nc = malloc(sizeof(int32_t) * (size_t)(n + 1));
        int64_t *slots = malloc(sizeof(int64_t) * (size_t)(padded + 2));
        fill_sent64(slots, (size_t)padded + 2);
        pa_batch batch = {n, r.comp, r.sched, r.bs, r.bt, r.stride};
        pa_common_metadata c;
        memset(&c, 0, sizeof c);
        c.query_start_loc = qsl;
        c.seq_lens = sl;
        c.num_computed_tokens = nc;
        c.slot_mapping = slots;
        c.slot_mapping_capacity = padded + 1;
        cr_assert_eq(pa_build_common_metadata(&batch, r.padded, &c), PA_SUCCESS, "it %d: %s", it, pa_last_error());

        /* common: every field recomputed from the token list */
        cr_assert_eq(c.num_actual_tokens, total);
        cr_assert_eq(c.padded_num_tokens, padded);
        int maxq = 0, maxs = 0;
        for (int i = 0; i < n; i++) {
            int before = 0;
            for (int k = 0; k < total; k++)
                before += treq[k] < i;
            cr_assert_eq(qsl[i], before, "it %d qsl[%d]", it, i);
            cr_assert_eq(sl[i], r.comp[i] + r.sched[i]);
            cr_assert_eq(nc[i], r.comp[i]);
            maxq = r.sched[i] > maxq ? r.sched[i] : maxq;
            maxs = sl[i] > maxs ? sl[i] : maxs;
        }
        cr_assert_eq(qsl[n], total);
        cr_assert_eq(c.max_query_len, maxq);
        cr_assert_eq(c.max_seq_len, maxs);
        for (int k = 0; k < padded; k++)
            cr_assert_eq(slots[k], k < total ? tslot[k] : -1, "it %d slot %d", it, k);
        cr_assert_eq(slots[padded], SENT64);

        /* slices: group consecutive tokens of one request in one block */
        int32_t *want = malloc(sizeof(int32_t) * 3 * (size_t)(total + r.spb + 1));
        int ns = 0;
        for (int k = 0; k < total; k++) {
            int fresh = k == 0 || treq[k] != treq[k - 1] || tpos[k] / r.bs != tpos[k - 1] / r.bs;
            if (fresh) {
                want[3 * ns] = (int32_t)tslot[k];
                want[3 * ns + 1] = k;
                want[3 * ns + 2] = 0;
                ns++;
            }
            want[3 * (ns - 1) + 2]++;
        }
        int nsp = ns;
        while (nsp % r.spb)
            nsp++;
        for (int k = ns; k < nsp; k++)
            want[3 * k] = want[3 * k + 1] = want[3 * k + 2] = 0;
        int32_t cnt = -1, cntp = -1;
        cr_assert_eq(pa_kv_update_slices_count(&c, r.spb, &cnt, &cntp), PA_SUCCESS);
        cr_assert_eq(cnt, ns);
        cr_assert_eq(cntp, nsp);
        /* metadata.h: either output may be NULL */
        cnt = cntp = -1;
        cr_assert_eq(pa_kv_update_slices_count(&c, r.spb, &cnt, NULL), PA_SUCCESS, "%s", pa_last_error());
        cr_assert_eq(pa_kv_update_slices_count(&c, r.spb, NULL, &cntp), PA_SUCCESS, "%s", pa_last_error());
        cr_assert_eq(pa_kv_update_slices_count(&c, r.spb, NULL, NULL), PA_SUCCESS, "%s", pa_last_error());
        cr_assert(cnt == ns && cntp == nsp);
        int32_t ub = 0;
        cr_assert_eq(pa_kv_update_slices_upper_bound(n, total, r.bs, r.spb, &ub), PA_SUCCESS);
        cr_assert(ub >= nsp, "it %d: upper bound %d < %d", it, ub, nsp);
        int32_t *sls = malloc(sizeof(int32_t) * 3 * (size_t)(ub + 1));
        fill_sent(sls, 3 * (size_t)(nsp + 1));
        pa_ragged_metadata rg;
        memset(&rg, 0, sizeof rg);
        rg.slices = sls;
        rg.slices_capacity = nsp;
        cr_assert_eq(pa_build_ragged_metadata(&c, r.spb, &rg), PA_SUCCESS, "it %d: %s", it, pa_last_error());
        cr_assert_eq(rg.num_slices, ns);
        cr_assert_eq(rg.num_slices_padded, nsp);
        cr_assert_eq(rg.num_seqs, n);
        for (int k = 0; k < nsp; k++)
            for (int f = 0; f < 3; f++)
                CHK_EQ(sls[f * nsp + k], want[3 * k + f], "it %d slice %d field %d: %d vs %d", it, k, f,
                       sls[f * nsp + k], want[3 * k + f]);
        cr_assert_eq(sls[3 * nsp], SENT);
        /* at the upper bound's row stride, as a graph-captured step uses it */
        fill_sent(sls, 3 * (size_t)(ub + 1));
        cr_assert_eq(pa_build_kv_update_slices(&c, r.spb, sls, ub, &cnt, &cntp), PA_SUCCESS);
        for (int k = 0; k < ub; k++)
            for (int f = 0; f < 3; f++)
                CHK_EQ(sls[f * ub + k], k < nsp ? want[3 * k + f] : 0, "it %d slice %d field %d (stride %d)", it, k, f,
                       ub);
        cr_assert_eq(sls[3 * ub], SENT);

        /* decode/prompt builder with encoder fields */
        int32_t *ssl = malloc(sizeof(int32_t) * (size_t)(n + 1)), *esl = malloc(sizeof(int32_t) * (size_t)(n + 1));
        int cross_total = 0;
        for (int i = 0; i < r.num_prefills; i++)
            cross_total += r.enc[i];
        int64_t *cross = malloc(sizeof(int64_t) * (size_t)(cross_total + 1));
        fill_sent64(cross, (size_t)cross_total + 1);
        pa_encoder_batch enc = {r.enc, r.cbt, r.cstride};
        pa_prompt_decode_metadata m;
        memset(&m, 0, sizeof m);
        m.seq_start_loc = ssl;
        m.encoder_seq_start_loc = esl;
        m.cross_slot_mapping = cross;
        m.cross_slot_mapping_capacity = cross_total;
        const int use_enc = it % 2;
        cr_assert_eq(pa_build_prompt_decode_metadata(&c, r.num_prefills, use_enc ? &enc : NULL, &m), PA_SUCCESS,
                     "it %d: %s", it, pa_last_error());
        int pt = 0, mps = 0, mds = 0, mdq = 0;
        for (int i = 0; i < n; i++) {
            int s = 0;
            for (int j = 0; j < i; j++)
                s += r.comp[j] + r.sched[j];
            cr_assert_eq(ssl[i], s);
            if (i < r.num_prefills) {
                pt += r.sched[i];
                mps = sl[i] > mps ? sl[i] : mps;
            } else {
                mds = sl[i] > mds ? sl[i] : mds;
                mdq = r.sched[i] > mdq ? r.sched[i] : mdq;
            }
        }
        cr_assert_eq(m.num_prefills, r.num_prefills);
        cr_assert_eq(m.num_prefill_tokens, pt);
        cr_assert_eq(m.num_decode_tokens, total - pt);
        cr_assert_eq(m.max_prefill_seq_len, mps);
        cr_assert_eq(m.max_decode_seq_len, mds);
        cr_assert_eq(m.max_decode_query_len, mdq);
        cr_assert_eq(m.max_query_len, maxq);
        cr_assert_eq(m.decode.num_seqs, n - r.num_prefills);
        cr_assert_eq(m.decode.num_tokens, total - pt);
        cr_assert_eq(m.decode.max_seq_len, mds);
        if (m.decode.num_seqs > 0) {
            cr_assert_eq(m.decode.seq_lens[0], r.comp[r.num_prefills] + r.sched[r.num_prefills]);
            cr_assert_eq(m.decode.block_tables[0], r.bt[r.num_prefills * r.stride]);
        }
        if (m.decode.num_tokens > 0)
            cr_assert_eq(m.decode.slot_mapping[0], tslot[pt]);
        if (use_enc) {
            int e = 0, me = 0, ct = 0;
            for (int i = 0; i < n; i++) {
                cr_assert_eq(esl[i], e);
                e += r.enc[i];
                me = r.enc[i] > me ? r.enc[i] : me;
                if (i < r.num_prefills)
                    for (int k = 0; k < r.enc[i]; k++, ct++)
                        cr_assert_eq(cross[ct], naive_slot(r.cbt + i * r.cstride, k, r.bs), "it %d cross %d", it, ct);
            }
            cr_assert_eq(esl[n], e);
            cr_assert_eq(m.num_encoder_tokens, e);
            cr_assert_eq(m.max_encoder_seq_len, me);
            cr_assert_eq(m.num_cross_slots, ct);
            cr_assert_eq(cross[ct], SENT64);
        }
        free(ssl);
        free(esl);
        free(cross);
        free(sls);
        free(want);
        free(qsl);
        free(sl);
        free(nc);
        free(slots);
        free(treq);
        free(tpos);
        free(tslot);
        rbatch_free(&r);
    }
}

/* ---- bad input: status, message, and nothing written ----------------------- */

typedef struct bad_case {
    int32_t comp[3], sched[3], bs, stride, padded, cap;
    int32_t bt[9];
    const char *msg;
} bad_case;

Test(metadata_bad, common_rejects_and_writes_nothing) {
    const bad_case cases[] = {
        {{0, 5, 17}, {4, -1, 3}, 16, 3, 0, 64, {0}, "request 1: num_scheduled_tokens -1 < 0"},
        {{0, -2, 17}, {4, 1, 3}, 16, 3, 0, 64, {0}, "request 1: num_computed_tokens -2 < 0"},
        {{0, 5, 17}, {4, 1, 3}, 0, 3, 0, 64, {0}, "block_size 0 <= 0"},
        {{0, 5, 17}, {4, 1, 3}, -4, 3, 0, 64, {0}, "block_size -4 <= 0"},
        {{0, 5, 47}, {4, 1, 3}, 16, 3, 0, 64, {0}, "request 2: block_table row too narrow"},
        {{0, 5, 17}, {4, 1, 3}, 16, 3, 5, 64, {0}, "padded_num_tokens 5 < num_actual_tokens 8"},
        {{0, 5, 17}, {4, 1, 3}, 16, 3, 0, 7, {0}, "slot_mapping_capacity 7 < padded_num_tokens 8"},
        /* 8 new tokens padded to 10: a capacity of 9 holds the tokens but not the padding */
        {{0, 5, 17}, {4, 1, 3}, 16, 3, 10, 9, {0}, "slot_mapping_capacity 9 < padded_num_tokens 10"},
        {{0, 5, 17}, {4, 1, 3}, 16, 3, 0, 64, {0, 0, 0, 0, 0, 0, 0, -3, 0}, "request 2: block_table[1] = -3"},
        {{0, 5, 2147483600}, {4, 1, 100}, 16, 3, 0, 64, {0}, "request 2: seq_len 2147483700"},
        {{0, 0, 0}, {2147483000, 1000, 0}, 1 << 30, 3, 0, 64, {0}, "request 1: total scheduled tokens"},
        {{0, 5, 17}, {4, 1, 3}, 16, 0, 0, 64, {0}, "block_table_stride 0 < 1"},
        {{0, 5, 17}, {4, 1, 3}, 16, 3, -1, 64, {0}, "padded_num_tokens -1 < 0"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const bad_case *bc = &cases[k];
        pa_batch batch = {3, bc->comp, bc->sched, bc->bs, bc->bt, bc->stride};
        bufs b;
        fill_sent(b.qsl, 64);
        fill_sent(b.sl, 64);
        fill_sent(b.nc, 64);
        fill_sent64(b.slots, 512);
        pa_common_metadata c = common_for(&b);
        c.slot_mapping_capacity = bc->cap;
        c.num_actual_tokens = SENT;
        c.max_query_len = SENT;
        pa_status s = pa_build_common_metadata(&batch, bc->padded, &c);
        cr_assert_eq(s, PA_ERR_INVALID_ARGUMENT, "case %zu", k);
        cr_assert(strstr(pa_last_error(), bc->msg) != NULL, "case %zu: '%s' lacks '%s'", k, pa_last_error(), bc->msg);
        cr_assert(all_sent(b.qsl, 64) && all_sent(b.sl, 64) && all_sent(b.nc, 64) && all_sent64(b.slots, 512),
                  "case %zu wrote outputs", k);
        cr_assert_eq(c.num_actual_tokens, SENT);
        cr_assert_eq(c.max_query_len, SENT);
    }
}

/* Outputs that share bytes with the inputs or each other are refused before
 * anything is written: query_start_loc over num_scheduled_tokens shifted by
 * one came back PA_SUCCESS with a wrong prefix sum (the loop writes qsl[r + 1]
 * before reading sched[r + 1]). The output num_computed_tokens may be the input
 * array itself; that batch's values are worked out by hand. */
Test(metadata_bad, common_refuses_overlapping_outputs) {
    int32_t arena[64];
    int64_t slots[64];
    const int32_t bt[2] = {3, 9};
    for (int k = 0; k < 5; k++) {
        fill_sent(arena, 64);
        int32_t *comp = arena, *sched = arena + 8, *qsl = arena + 16, *sl = arena + 24, *nc = arena + 32;
        comp[0] = 2, comp[1] = 0, sched[0] = 3, sched[1] = 4;
        const char *want = NULL;
        if (k == 0) { /* query_start_loc one past num_scheduled_tokens' first entry */
            qsl = sched + 1;
            want = "output query_start_loc overlaps the input num_scheduled_tokens";
        } else if (k == 1) {
            sl = comp + 1;
            want = "output seq_lens overlaps the input num_computed_tokens";
        } else if (k == 2) {
            sl = qsl + 2;
            want = "outputs query_start_loc and seq_lens overlap";
        } else if (k == 3) {
            nc = comp + 1;
            want = "output num_computed_tokens overlaps the input num_computed_tokens";
        } else {
            nc = comp; /* the same array: allowed */
        }
        int32_t before[64];
        memcpy(before, arena, sizeof arena);
        fill_sent64(slots, 64);
        pa_batch batch = {2, comp, sched, 8, bt, 1};
        pa_common_metadata c = {.query_start_loc = qsl,
                                .seq_lens = sl,
                                .num_computed_tokens = nc,
                                .slot_mapping = slots,
                                .slot_mapping_capacity = 64};
        pa_status st = pa_build_common_metadata(&batch, 0, &c);
        if (want) {
            cr_assert_eq(st, PA_ERR_INVALID_ARGUMENT, "case %d", k);
            cr_assert(strstr(pa_last_error(), want) != NULL, "case %d: '%s' lacks '%s'", k, pa_last_error(), want);
            cr_assert(memcmp(before, arena, sizeof arena) == 0 && all_sent64(slots, 64), "case %d wrote", k);
            continue;
        }
        cr_assert_eq(st, PA_SUCCESS, "%s", pa_last_error());
        const int32_t want_qsl[3] = {0, 3, 7}, want_sl[2] = {5, 4}, want_nc[2] = {2, 0};
        assert_arr(qsl, want_qsl, 3, "query_start_loc");
        assert_arr(sl, want_sl, 2, "seq_lens");
        assert_arr(nc, want_nc, 2, "num_computed_tokens");
        /* request 0: positions 2..4 of block 3 (block size 8); request 1: 0..3 of block 9 */
        const int64_t want_slots[7] = {26, 27, 28, 72, 73, 74, 75};
        for (int t = 0; t < 7; t++)
            cr_assert_eq(slots[t], want_slots[t], "slot %d: got %lld want %lld", t, (long long)slots[t],
                         (long long)want_slots[t]);
    }
}

/* The later builders read the common metadata (and the encoder batch) while
 * they write: seq_start_loc over encoder_seq_lens fed the running seq_lens
 * sum back as encoder lengths and ran cross_slot_mapping past its capacity;
 * seq_start_loc over the common query_start_loc rewrote the caller's
 * metadata and returned PA_SUCCESS. Every such sharing is refused, naming
 * both arrays, with nothing written; the batch is cross_attention_fields'. */
Test(metadata_bad, later_builders_refuse_outputs_over_inputs) {
    const int32_t comp[3] = {0, 0, 2}, sched[3] = {3, 2, 1};
    const int32_t bt[3] = {1, 2, 3};
    const int32_t cross_bt[3 * 2] = {10, 11, 20, 21, 30, 31};
    for (int k = 0; k < 6; k++) {
        bufs b;
        fill_sent(b.ssl, 64);
        fill_sent(b.esl, 64);
        fill_sent64(b.cross, 512);
        fill_sent(b.slices, 512 * 3);
        pa_batch batch = {3, comp, sched, 4, bt, 1};
        pa_common_metadata c = common_for(&b);
        cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS, "%s", pa_last_error());
        int32_t enc_lens[8] = {5, 0, 7};
        pa_encoder_batch enc = {enc_lens, cross_bt, 2};
        pa_prompt_decode_metadata m;
        memset(&m, 0, sizeof m);
        m.seq_start_loc = b.ssl;
        m.encoder_seq_start_loc = b.esl;
        m.cross_slot_mapping = b.cross;
        m.cross_slot_mapping_capacity = 5;
        const char *want = NULL;
        if (k == 0) {
            m.seq_start_loc = enc_lens + 1; /* the audit's case */
            want = "output seq_start_loc overlaps the input encoder_seq_lens";
        } else if (k == 1) {
            m.seq_start_loc = b.qsl;
            want = "output seq_start_loc overlaps the input query_start_loc";
        } else if (k == 2) {
            m.cross_slot_mapping = b.slots + 2;
            want = "output cross_slot_mapping overlaps the input slot_mapping";
        } else if (k == 3) {
            m.encoder_seq_start_loc = b.ssl + 3;
            want = "outputs seq_start_loc and encoder_seq_start_loc overlap";
        }
        int32_t qsl0[64], sl0[64], nc0[64], enc0[8];
        int64_t slots0[512];
        memcpy(qsl0, b.qsl, sizeof qsl0);
        memcpy(sl0, b.sl, sizeof sl0);
        memcpy(nc0, b.nc, sizeof nc0);
        memcpy(slots0, b.slots, sizeof slots0);
        memcpy(enc0, enc_lens, sizeof enc0);
        if (k <= 4) {
            const pa_status st = pa_build_prompt_decode_metadata(&c, 2, &enc, &m);
            if (k == 4) { /* apart: cross_attention_fields' values */
                cr_assert_eq(st, PA_SUCCESS, "%s", pa_last_error());
                const int64_t cross[5] = {40, 41, 42, 43, 44};
                assert_slots(b.cross, cross, 5, "cross_slot_mapping");
                continue;
            }
            cr_assert_eq(st, PA_ERR_INVALID_ARGUMENT, "case %d", k);
        } else { /* the slices over the common seq_lens */
            cr_assert_eq(pa_build_kv_update_slices(&c, 1, b.sl + 1, 8, NULL, NULL), PA_ERR_INVALID_ARGUMENT);
            want = "output slices overlaps the input seq_lens";
        }
        cr_assert(strstr(pa_last_error(), want) != NULL, "case %d: '%s' lacks '%s'", k, pa_last_error(), want);
        cr_assert(!memcmp(qsl0, b.qsl, sizeof qsl0) && !memcmp(sl0, b.sl, sizeof sl0) &&
                      !memcmp(nc0, b.nc, sizeof nc0) && !memcmp(slots0, b.slots, sizeof slots0) &&
                      !memcmp(enc0, enc_lens, sizeof enc0) && all_sent(b.ssl, 64) && all_sent(b.esl, 64) &&
                      all_sent64(b.cross, 512) && all_sent(b.slices, 512 * 3),
                  "case %d: written on a rejected call", k);
    }
}

/* The output num_computed_tokens may be the input array itself, and nothing
 * more: the same array is refused where it shares bytes with another input
 * (num_scheduled_tokens one entry further on). */
Test(metadata_bad, computed_tokens_in_place_still_apart_from_the_other_inputs) {
    int32_t arena[3] = {0, 2, 1}; /* num_computed_tokens {0, 2}, num_scheduled_tokens {2, 1} */
    const int32_t bt[2] = {0, 1};
    bufs b;
    fill_sent(b.qsl, 64);
    fill_sent(b.sl, 64);
    fill_sent64(b.slots, 512);
    pa_batch batch = {2, arena, arena + 1, 4, bt, 1};
    pa_common_metadata c = common_for(&b);
    c.num_computed_tokens = arena;
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "output num_computed_tokens overlaps the input num_scheduled_tokens"), "%s",
              pa_last_error());
    cr_assert(all_sent(b.qsl, 64) && all_sent(b.sl, 64) && all_sent64(b.slots, 512), "written on a rejected call");
}

/* The spans the builders check cover whole arrays: all three fields of the
 * slices ([3][capacity] int32, so 12 * capacity bytes), and the common slot
 * mapping up to padded_num_tokens, not num_actual_tokens (the padding entries
 * are the caller's array too). Batch: blocks of 4, requests (0 + 3), (0 + 2),
 * (2 + 1): one slice each, 6 tokens padded to 8. */
Test(metadata_bad, overlap_checks_span_every_slice_field_and_the_padding) {
    const int32_t comp[3] = {0, 0, 2}, sched[3] = {3, 2, 1};
    const int32_t bt[3] = {1, 2, 3};
    bufs b;
    fill_sent64(b.slots, 512);
    pa_batch batch = {3, comp, sched, 4, bt, 1};
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 8, &c), PA_SUCCESS, "%s", pa_last_error());

    /* slices [3][8] over arena[0, 24); seq_lens moved to arena[20, 23): inside field 2 only */
    int32_t arena[32];
    fill_sent(arena, 32);
    memcpy(arena + 20, b.sl, 3 * sizeof(int32_t));
    int32_t before[32];
    memcpy(before, arena, sizeof arena);
    pa_common_metadata moved = c;
    moved.seq_lens = arena + 20;
    int32_t n = SENT, np = SENT;
    cr_assert_eq(pa_build_kv_update_slices(&moved, 1, arena, 8, &n, &np), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "output slices overlaps the input seq_lens"), "%s", pa_last_error());
    cr_assert(!memcmp(before, arena, sizeof arena) && n == SENT && np == SENT, "written on a rejected call");

    /* seq_start_loc in the slot mapping's padding: slots[6] and slots[7] */
    int64_t slots0[512];
    memcpy(slots0, b.slots, sizeof slots0);
    pa_prompt_decode_metadata m;
    memset(&m, 0, sizeof m);
    m.seq_start_loc = (int32_t *)(b.slots + 6);
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 1, NULL, &m), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "output seq_start_loc overlaps the input slot_mapping"), "%s", pa_last_error());
    cr_assert(!memcmp(slots0, b.slots, sizeof slots0), "written on a rejected call");
}

/* The slot mapping is int64, as pa_reshape_and_cache and vLLM read it: a
 * block id whose slots pass 2^31 is valid for the common metadata and the
 * cross slots (only the int32 KV-update slices refuse it), and the builder's
 * buffer feeds the cache write with no conversion. */
Test(metadata_edges, slots_past_int32_are_written_as_int64) {
    const int32_t comp[2] = {14, 0}, sched[2] = {4, 2};
    const int32_t bt[4] = {3, 200000000, 2147483647, 0}; /* request 0 crosses into block 200000000 */
    pa_batch batch = {2, comp, sched, 16, bt, 2};
    bufs b;
    fill_sent64(b.slots, 512);
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 8, &c), PA_SUCCESS, "%s", pa_last_error());
    /* positions 14, 15 in block 3; 16, 17 in block 200000000; request 1's 0, 1 in block 2^31 - 1 */
    const int64_t want[8] = {
        3 * 16 + 14, 3 * 16 + 15, 200000000ll * 16, 200000000ll * 16 + 1, 2147483647ll * 16, 2147483647ll * 16 + 1,
        -1,          -1};
    assert_slots(b.slots, want, 8, "slot_mapping");
    cr_assert_eq(b.slots[8], SENT64);
    /* the slices store kv_cache_start as int32 and still refuse it */
    cr_assert_eq(pa_build_kv_update_slices(&c, 1, b.slices, 512, NULL, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "gives slots past int32"), "%s", pa_last_error());
    /* cross slots: the same int64 slots */
    const int32_t enc_lens[2] = {2, 0}, cbt[2] = {1000000000, 0};
    pa_encoder_batch enc = {enc_lens, cbt, 1};
    pa_prompt_decode_metadata m;
    memset(&m, 0, sizeof m);
    m.seq_start_loc = b.ssl;
    m.encoder_seq_start_loc = b.esl;
    m.cross_slot_mapping = b.cross;
    m.cross_slot_mapping_capacity = 2;
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 2, &enc, &m), PA_SUCCESS, "%s", pa_last_error());
    const int64_t cross[2] = {16000000000ll, 16000000001ll};
    assert_slots(b.cross, cross, 2, "cross_slot_mapping");
    /* a negative block id is still refused */
    const int32_t bt_neg[4] = {3, -1, 0, 0};
    batch.block_table = bt_neg;
    cr_assert_eq(pa_build_common_metadata(&batch, 8, &c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "request 0: block_table[1] = -1 is negative"), "%s", pa_last_error());
}

/* The KV-update slices store kv_cache_start as int32, so a block may be used
 * only if all its slots fit: id * block_size + (block_size - 1) <= INT32_MAX,
 * i.e. id <= (INT32_MAX - (block_size - 1)) / block_size. For a power-of-two
 * block size that equals INT32_MAX / block_size; for block_size 3 it does not:
 * INT32_MAX = 2147483647 = 3 * 715827882 + 1, so block 715827882 holds slots
 * 2147483646, 2147483647 and 2147483648 (past int32), and block 715827881
 * (slots 2147483643..2147483645) is the last one allowed. A token at offset 2
 * of block 715827882 would be a slice starting at slot 2^31. */
Test(metadata_edges, slices_refuse_blocks_past_int32_at_a_block_size_of_3) {
    const int32_t comp[1] = {2}, sched[1] = {1}; /* position 2: offset 2 of block column 0 */
    int32_t bt[1] = {715827882};
    pa_batch batch = {1, comp, sched, 3, bt, 1};
    bufs b;
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(b.slots[0], 2147483648ll, "the int64 slot mapping holds it: %lld", (long long)b.slots[0]);
    fill_sent(b.slices, 3 * 4);
    int32_t num = -7, padded = -7;
    cr_assert_eq(pa_build_kv_update_slices(&c, 1, b.slices, 4, &num, &padded), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "request 0: block_table[0] = 715827882 gives slots past int32 (block_size 3)"),
              "%s", pa_last_error());
    cr_assert(all_sent(b.slices, 3 * 4) && num == -7 && padded == -7, "written despite the error");
    cr_assert_eq(pa_kv_update_slices_count(&c, 1, &num, &padded), PA_ERR_INVALID_ARGUMENT);
    pa_ragged_metadata rg = {.slices = b.slices, .slices_capacity = 4};
    cr_assert_eq(pa_build_ragged_metadata(&c, 1, &rg), PA_ERR_INVALID_ARGUMENT);
    /* one block lower: slot 715827881 * 3 + 2 = 2147483645 fits */
    bt[0] = 715827881;
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(pa_build_kv_update_slices(&c, 1, b.slices, 4, &num, &padded), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(num == 1 && padded == 1, "num %d padded %d", num, padded);
    const int32_t want[4 * 3] = {2147483645, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}; /* rows (start, new_start, len) */
    assert_slices(b.slices, 4, want, 4);
}

/* pa_batch: "Entries the new tokens land in must be >= 0", and the cost is
 * O(blocks touched): the columns holding only a request's context are neither
 * read for slots nor checked, so they may hold anything (here -1 and -7, as
 * for blocks a sliding window has released). Request 0 (8 computed, 3 new,
 * block size 4) writes positions 8..10, all in column 2 (block 12): slots 48,
 * 49, 50. Request 1 (5 computed, 2 new) writes positions 5, 6 in column 1
 * (block 4): slots 17, 18. */
Test(metadata_edges, context_columns_of_the_block_table_are_not_checked) {
    const int32_t comp[2] = {8, 5}, sched[2] = {3, 2};
    const int32_t bt[2 * 3] = {-1, -7, 12, -1, 4, 0};
    pa_batch batch = {2, comp, sched, 4, bt, 3};
    bufs b;
    fill_sent64(b.slots, 512);
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(&batch, 6, &c), PA_SUCCESS, "%s", pa_last_error());
    const int64_t want_slots[6] = {48, 49, 50, 17, 18, -1};
    assert_slots(b.slots, want_slots, 6, "slot_mapping");
    cr_assert_eq(b.slots[6], SENT64);
    int32_t num = 0, padded = 0;
    cr_assert_eq(pa_build_kv_update_slices(&c, 1, b.slices, 2, &num, &padded), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(num == 2 && padded == 2, "num %d padded %d", num, padded);
    const int32_t want[2 * 3] = {48, 0, 3, 17, 3, 2};
    assert_slices(b.slices, 2, want, 2);
    /* the column a new token lands in is checked */
    const int32_t bt_bad[2 * 3] = {-1, -7, 12, -1, -4, 0};
    batch.block_table = bt_bad;
    cr_assert_eq(pa_build_common_metadata(&batch, 6, &c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "request 1: block_table[1] = -4 is negative"), "%s", pa_last_error());
}

Test(metadata_bad, null_pointers) {
    const int32_t comp[1] = {0}, sched[1] = {1}, bt[1] = {0};
    pa_batch batch = {1, comp, sched, 16, bt, 1};
    bufs b;
    pa_common_metadata c = common_for(&b);
    cr_assert_eq(pa_build_common_metadata(NULL, 0, &c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "batch is NULL"));
    cr_assert_eq(pa_build_common_metadata(&batch, 0, NULL), PA_ERR_INVALID_ARGUMENT);
    batch.num_scheduled_tokens = NULL;
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "num_scheduled_tokens is NULL"), "%s", pa_last_error());
    batch.num_scheduled_tokens = sched;
    batch.block_table = NULL;
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "block_table is NULL"), "%s", pa_last_error());
    batch.block_table = bt;
    c.slot_mapping = NULL;
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "slot_mapping is NULL"), "%s", pa_last_error());
    c = common_for(&b);
    c.seq_lens = NULL;
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "seq_lens is NULL"), "%s", pa_last_error());
    /* builders */
    pa_prompt_decode_metadata m;
    memset(&m, 0, sizeof m);
    cr_assert_eq(pa_build_prompt_decode_metadata(NULL, 0, NULL, &m), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "common metadata is NULL"));
    cr_assert_eq(pa_build_ragged_metadata(NULL, 8, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pa_kv_update_slices_count(NULL, 8, NULL, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pa_kv_update_slices_upper_bound(1, 1, 16, 8, NULL), PA_ERR_INVALID_ARGUMENT);
}

static pa_common_metadata good_common(bufs *b, const int32_t *comp, const int32_t *sched, const int32_t *bt) {
    pa_batch batch = {3, comp, sched, 4, bt, 3};
    pa_common_metadata c = common_for(b);
    cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS, "%s", pa_last_error());
    return c;
}

/* Prompt/decode outputs over b's buffers, every one filled with sentinels. */
static pa_prompt_decode_metadata pd_outputs(bufs *b) {
    pa_prompt_decode_metadata m;
    memset(&m, 0, sizeof m);
    fill_sent(b->ssl, 64);
    fill_sent(b->esl, 64);
    fill_sent64(b->cross, 512);
    m.seq_start_loc = b->ssl;
    m.encoder_seq_start_loc = b->esl;
    m.cross_slot_mapping = b->cross;
    m.cross_slot_mapping_capacity = 512;
    return m;
}

Test(metadata_bad, builders_reject_and_write_nothing) {
    const int32_t comp[3] = {0, 5, 7}, sched[3] = {9, 1, 1};
    const int32_t bt[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    bufs b;
    pa_common_metadata c = good_common(&b, comp, sched, bt);

    pa_prompt_decode_metadata m = pd_outputs(&b);
    m.num_prefills = SENT;
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 4, NULL, &m), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "num_prefills 4 outside [0, num_reqs 3]"), "%s", pa_last_error());
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, -1, NULL, &m), PA_ERR_INVALID_ARGUMENT);
    const int32_t enc_bad[3] = {3, -2, 1}, enc_wide[3] = {3, 2, 13}, enc_ok[3] = {8, 0, 1};
    const int32_t cbt[6] = {1, 2, 3, 4, 5, 6};
    pa_encoder_batch enc = {enc_bad, cbt, 2};
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 1, &enc, &m), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "request 1: encoder_seq_lens -2 < 0"), "%s", pa_last_error());
    enc.encoder_seq_lens = enc_wide;
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 1, &enc, &m), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "request 2: cross_block_table row too narrow"), "%s", pa_last_error());
    enc.encoder_seq_lens = enc_ok;
    m.cross_slot_mapping_capacity = 7;
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 1, &enc, &m), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "cross_slot_mapping_capacity 7 < encoder tokens of the prefills 8"), "%s",
              pa_last_error());
    m.seq_start_loc = NULL;
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 1, NULL, &m), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "seq_start_loc is NULL"), "%s", pa_last_error());
    cr_assert(all_sent(b.ssl, 64) && all_sent(b.esl, 64) && all_sent64(b.cross, 512));
    cr_assert_eq(m.num_prefills, SENT);

    /* a corrupted common struct is caught, naming the request */
    pa_common_metadata bad = c;
    int32_t sl_bad[3] = {9, 6, 99};
    bad.seq_lens = sl_bad;
    cr_assert_eq(pa_build_prompt_decode_metadata(&bad, 1, NULL, &m), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "request 2: seq_len 99"), "%s", pa_last_error());

    /* slices: capacity too small, bad slices_per_block */
    pa_ragged_metadata rg;
    memset(&rg, 0, sizeof rg);
    fill_sent(b.slices, 512 * 3);
    rg.slices = b.slices;
    rg.slices_capacity = 3; /* needs 3 + 1 + 1 = 5 -> padded 8 */
    rg.num_slices = SENT;
    cr_assert_eq(pa_build_ragged_metadata(&c, 4, &rg), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "slices_capacity 3 < padded slice count 8"), "%s", pa_last_error());
    rg.slices_capacity = 5; /* all 5 slices, not the padding to 8 */
    cr_assert_eq(pa_build_ragged_metadata(&c, 4, &rg), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "slices_capacity 5 < padded slice count 8"), "%s", pa_last_error());
    cr_assert_eq(pa_build_ragged_metadata(&c, 0, &rg), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "slices_per_block 0 < 1"), "%s", pa_last_error());
    int32_t n = SENT, np = SENT;
    cr_assert_eq(pa_build_kv_update_slices(&c, 4, b.slices, 7, &n, &np), PA_ERR_INVALID_ARGUMENT);
    cr_assert(all_sent(b.slices, 512 * 3));
    cr_assert_eq(rg.num_slices, SENT);
    cr_assert_eq(n, SENT);
    cr_assert_eq(np, SENT);
    /* success afterwards clears the error */
    rg.slices_capacity = 8;
    cr_assert_eq(pa_build_ragged_metadata(&c, 4, &rg), PA_SUCCESS);
    cr_assert_str_eq(pa_last_error(), "");
    cr_assert_eq(rg.num_slices, 5);
}

/* The builders' outputs feed the cache ops as they are: the same new K/V
 * written through the KV-update slices (field-major, at the upper bound's row
 * stride, slice count read from an int) and through the slot mapping must
 * leave identical combined caches. Catches any disagreement between the
 * builder's slice layout and what pa_kv_cache_update reads. */
Test(metadata_random, slices_and_slot_mapping_write_the_same_cache) {
    pa_rng g = pa_rng_make(777);
    const int kvh = 1, hs = 4, nblocks = 20001;
    for (int it = 0; it < 150; it++) {
        rbatch r = random_batch(&g);
        /* distinct block ids, shuffled: as a scheduler gives them, no cache row
         * is written twice in a step (cache_ops.h: one writer a place, which
         * the references hold the slot mapping and the slices to) */
        for (int i = 0; i < r.n * r.stride; i++)
            r.bt[i] = i;
        for (int i = r.n * r.stride - 1; i > 0; i--) {
            const int j = pa_rng_int(&g, 0, i), t = r.bt[i];
            r.bt[i] = r.bt[j];
            r.bt[j] = t;
        }
        int total = 0;
        for (int i = 0; i < r.n; i++)
            total += r.sched[i];
        int32_t *qsl = malloc(sizeof(int32_t) * (size_t)(r.n + 1)), *sl = malloc(sizeof(int32_t) * (size_t)(r.n + 1));
        int32_t *nc = malloc(sizeof(int32_t) * (size_t)(r.n + 1));
        int64_t *slots = malloc(sizeof(int64_t) * (size_t)(total + 1));
        pa_batch batch = {r.n, r.comp, r.sched, r.bs, r.bt, r.stride};
        pa_common_metadata c;
        memset(&c, 0, sizeof c);
        c.query_start_loc = qsl;
        c.seq_lens = sl;
        c.num_computed_tokens = nc;
        c.slot_mapping = slots;
        c.slot_mapping_capacity = total;
        cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_SUCCESS, "it %d: %s", it, pa_last_error());
        int32_t ub = 0;
        cr_assert_eq(pa_kv_update_slices_upper_bound(r.n, total, r.bs, r.spb, &ub), PA_SUCCESS);
        int32_t *sls = malloc(sizeof(int32_t) * 3 * (size_t)(ub + 1));
        pa_ragged_metadata rg;
        memset(&rg, 0, sizeof rg);
        rg.slices = sls;
        rg.slices_capacity = ub;
        cr_assert_eq(pa_build_ragged_metadata(&c, r.spb, &rg), PA_SUCCESS, "it %d: %s", it, pa_last_error());

        const size_t row = (size_t)2 * kvh * hs, cache_elems = (size_t)nblocks * (size_t)r.bs * row;
        float *new_kv = malloc(sizeof(float) * (row * (size_t)total + 1));
        for (size_t i = 0; i < row * (size_t)total; i++)
            new_kv[i] = (float)(pa_rng_next(&g) % 1000) - 500.0f;
        float *a = calloc(cache_elems, sizeof(float)), *b = calloc(cache_elems, sizeof(float));
        pa_kv_cache ca = {.layout = PA_LAYOUT_COMBINED,
                          .dtype = PA_DTYPE_F32,
                          .key = a,
                          .num_blocks = nblocks,
                          .block_size = r.bs,
                          .num_kv_heads = kvh,
                          .head_size = hs};
        pa_kv_cache cb = ca;
        cb.key = b;
        const int32_t live = rg.num_slices;
        cr_assert_eq(pa_ref_kv_cache_update(new_kv, PA_DTYPE_F32, total, 0, sls, &live, ub, &ca), PA_SUCCESS,
                     "it %d: %s", it, pa_last_error());
        pa_kv_input in = {.key = new_kv,
                          .value = new_kv + hs,
                          .dtype = PA_DTYPE_F32,
                          .num_tokens = total,
                          .key_token_stride = (int64_t)row,
                          .key_head_stride = 2 * hs,
                          .value_token_stride = (int64_t)row,
                          .value_head_stride = 2 * hs};
        cr_assert_eq(pa_ref_reshape_and_cache(&in, slots, &cb), PA_SUCCESS, "it %d: %s", it, pa_last_error());
        cr_assert(memcmp(a, b, cache_elems * sizeof(float)) == 0, "it %d: the two cache writes differ", it);
        free(a);
        free(b);
        free(new_kv);
        free(sls);
        free(qsl);
        free(sl);
        free(nc);
        free(slots);
        rbatch_free(&r);
    }
}

/* Every refusal the builders make of their input that no other test reached
 * (scripts/refusal-coverage.py): a good common struct with one field broken at
 * a time, each refused by every builder with its own message and nothing
 * written; the common builder's remaining NULL and negative inputs; the
 * int32 sums of the prompt/decode builder and the slice counts one step past
 * their range (no large buffer needed: the lengths are only summed). */
Test(metadata_bad, builders_recheck_each_field_of_common) {
    const int32_t comp[3] = {0, 5, 7}, sched[3] = {9, 1, 1};
    const int32_t bt[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    bufs b;
    const pa_common_metadata good = good_common(&b, comp, sched, bt);
    int32_t qsl_bad0[4] = {1, 9, 10, 11}, qsl_down[4] = {0, 9, 8, 11}, nc_neg[3] = {0, -1, 7};
    enum { N_CASES = 17 };
    for (int k = 0; k < N_CASES; k++) {
        pa_common_metadata c = good;
        const char *want = NULL;
        switch (k) {
        case 0: c.num_reqs = -1, want = "common metadata: num_reqs -1 < 0"; break;
        case 1: c.block_size = 0, want = "common metadata: block_size 0 <= 0"; break;
        case 2: c.query_start_loc = NULL, want = "common metadata: query_start_loc is NULL"; break;
        case 3: c.num_actual_tokens = -1, want = "common metadata: num_actual_tokens -1 < 0"; break;
        case 4: c.padded_num_tokens = 10, want = "common metadata: padded_num_tokens 10 < num_actual_tokens 11"; break;
        case 5: c.slot_mapping = NULL, want = "common metadata: slot_mapping is NULL"; break;
        case 6: c.query_start_loc = qsl_bad0, want = "common metadata: query_start_loc[0] = 1, not 0"; break;
        case 7: c.num_reqs = 0, want = "common metadata: num_actual_tokens 11 in an empty batch"; break;
        case 8: c.seq_lens = NULL, want = "common metadata: seq_lens is NULL"; break;
        case 9: c.num_computed_tokens = NULL, want = "common metadata: num_computed_tokens is NULL"; break;
        case 10: c.block_table = NULL, want = "common metadata: block_table is NULL"; break;
        case 11: c.block_table_stride = 0, want = "common metadata: block_table_stride 0 < 1"; break;
        case 12: c.query_start_loc = qsl_down, want = "request 1: query length -1 < 0"; break;
        case 13: c.num_computed_tokens = nc_neg, want = "request 1: num_computed_tokens -1 < 0"; break;
        case 14:
            /* request 0 alone: seq_len 9 needs 3 blocks of 4; a row of stride 1 has 1 */
            c.num_reqs = 1, c.num_actual_tokens = good.query_start_loc[1], c.block_table_stride = 1;
            want = "request 0: block_table row too narrow";
            break;
        case 15:
            c.num_actual_tokens = 10, want = "common metadata: query_start_loc[3] = 11 != num_actual_tokens 10";
            break;
        default: /* the other side: more tokens than the queries hold (padded 12 keeps the padding check quiet) */
            c.num_actual_tokens = 12, c.padded_num_tokens = 12;
            want = "common metadata: query_start_loc[3] = 11 != num_actual_tokens 12";
            break;
        }
        for (int builder = 0; builder < 4; builder++) {
            pa_prompt_decode_metadata m;
            memset(&m, 0, sizeof m);
            fill_sent(b.ssl, 64);
            m.seq_start_loc = b.ssl;
            pa_ragged_metadata rg;
            memset(&rg, 0, sizeof rg);
            fill_sent(b.slices, 512 * 3);
            rg.slices = b.slices;
            rg.slices_capacity = 512;
            int32_t n = SENT, np = SENT;
            pa_status s = builder == 0   ? pa_build_prompt_decode_metadata(&c, 1, NULL, &m)
                          : builder == 1 ? pa_build_ragged_metadata(&c, 4, &rg)
                          : builder == 2 ? pa_build_kv_update_slices(&c, 4, b.slices, 512, &n, &np)
                                         : pa_kv_update_slices_count(&c, 4, &n, &np);
            cr_assert_eq(s, PA_ERR_INVALID_ARGUMENT, "case %d builder %d accepted", k, builder);
            cr_assert(strstr(pa_last_error(), want) != NULL, "case %d builder %d: '%s' lacks '%s'", k, builder,
                      pa_last_error(), want);
            cr_assert(all_sent(b.ssl, 64) && all_sent(b.slices, 512 * 3) && n == SENT && np == SENT,
                      "case %d builder %d wrote", k, builder);
        }
    }
    pa_common_metadata c = good;
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 1, NULL, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "output metadata is NULL"), "%s", pa_last_error());
    cr_assert_eq(pa_build_ragged_metadata(&c, 4, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "output metadata is NULL"), "%s", pa_last_error());
}

Test(metadata_bad, common_builder_null_and_negative_inputs) {
    const int32_t comp[2] = {0, 3}, sched[2] = {2, 1}, bt[2] = {0, 1};
    bufs b;
    fill_sent(b.qsl, 64);
    fill_sent(b.sl, 64);
    fill_sent(b.nc, 64);
    for (int k = 0; k < 4; k++) {
        pa_batch batch = {2, comp, sched, 16, bt, 1};
        pa_common_metadata c = common_for(&b);
        const char *want;
        if (k == 0)
            batch.num_reqs = -1, want = "num_reqs -1 < 0";
        else if (k == 1)
            c.query_start_loc = NULL, want = "output query_start_loc is NULL";
        else if (k == 2)
            batch.num_computed_tokens = NULL, want = "num_computed_tokens is NULL";
        else
            c.num_computed_tokens = NULL, want = "output num_computed_tokens is NULL";
        cr_assert_eq(pa_build_common_metadata(&batch, 0, &c), PA_ERR_INVALID_ARGUMENT, "case %d", k);
        cr_assert(strstr(pa_last_error(), want) != NULL, "case %d: '%s' lacks '%s'", k, pa_last_error(), want);
        cr_assert(all_sent(b.qsl, 64) && all_sent(b.sl, 64) && all_sent(b.nc, 64), "case %d wrote", k);
    }
}

Test(metadata_bad, prompt_decode_sums_and_encoder_inputs) {
    /* Two requests of 2^31 - 1 tokens each (one new): each fits int32, their sum
     * (seq_start_loc's last entry) does not. Blocks of 2^30 tokens: 2 a row. */
    const int32_t big = INT32_MAX;
    int32_t qsl[3] = {0, 1, 2}, sl[2] = {big, big}, nc[2] = {big - 1, big - 1}, bt[4] = {0, 1, 2, 3};
    int64_t slots[2] = {0, 0};
    pa_common_metadata c;
    memset(&c, 0, sizeof c);
    c.num_reqs = 2;
    c.block_size = 1 << 30;
    c.query_start_loc = qsl;
    c.seq_lens = sl;
    c.num_computed_tokens = nc;
    c.block_table = bt;
    c.block_table_stride = 2;
    c.num_actual_tokens = c.padded_num_tokens = 2;
    c.slot_mapping = slots;
    c.slot_mapping_capacity = 2;
    bufs b;
    pa_prompt_decode_metadata m;
    memset(&m, 0, sizeof m);
    fill_sent(b.ssl, 64);
    m.seq_start_loc = b.ssl;
    cr_assert_eq(pa_build_prompt_decode_metadata(&c, 0, NULL, &m), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "request 1: sum of seq_lens 4294967294 overflows int32"), "%s", pa_last_error());
    cr_assert(all_sent(b.ssl, 64));

    /* The encoder inputs, over a small batch: request 0 a prefill */
    const int32_t comp[3] = {0, 5, 7}, sched[3] = {9, 1, 1}, bt3[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const pa_common_metadata g = good_common(&b, comp, sched, bt3);
    const int32_t enc_lens[3] = {3, 2, 1}, cbt[3] = {4, 5, 6};
    const int32_t enc_huge[3] = {big, big, 0};
    for (int k = 0; k < 6; k++) {
        pa_encoder_batch enc = {enc_lens, cbt, 1};
        m = pd_outputs(&b);
        pa_common_metadata cc = g;
        const char *want;
        if (k == 0)
            m.encoder_seq_start_loc = NULL, want = "output encoder_seq_start_loc is NULL";
        else if (k == 1)
            enc.encoder_seq_lens = NULL, want = "encoder_seq_lens is NULL";
        else if (k == 2)
            enc.cross_block_table = NULL, want = "cross_block_table is NULL";
        else if (k == 3)
            enc.cross_block_table_stride = 0, want = "cross_block_table_stride 0 < 1";
        else if (k == 4)
            m.cross_slot_mapping = NULL, want = "output cross_slot_mapping is NULL";
        else {
            /* 2^31 - 1 encoder tokens twice, in blocks of 2^30 (cross rows of 2) */
            enc.encoder_seq_lens = enc_huge, enc.cross_block_table_stride = 2;
            cc.block_size = 1 << 30;
            want = "request 1: total encoder tokens 4294967294 overflow int32";
        }
        const int32_t cbt2[6] = {0, 1, 2, 3, 4, 5};
        if (k == 5)
            enc.cross_block_table = cbt2;
        cr_assert_eq(pa_build_prompt_decode_metadata(&cc, 1, &enc, &m), PA_ERR_INVALID_ARGUMENT, "case %d", k);
        cr_assert(strstr(pa_last_error(), want) != NULL, "case %d: '%s' lacks '%s'", k, pa_last_error(), want);
        cr_assert(all_sent(b.ssl, 64) && all_sent(b.esl, 64) && all_sent64(b.cross, 512), "case %d wrote", k);
    }
}

/* (The builders' own padded count, count_slices, passes int32 only past 2^30
 * slices: a block table of gigabytes. Left to the fuzzer.) */
Test(metadata_bad, slice_counts_past_int32) {
    int32_t out = SENT;
    cr_assert_eq(pa_kv_update_slices_upper_bound(-1, 8, 16, 1, &out), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "num_reqs -1 < 0"), "%s", pa_last_error());
    cr_assert_eq(pa_kv_update_slices_upper_bound(1, -8, 16, 1, &out), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "num_tokens -8 < 0"), "%s", pa_last_error());
    cr_assert_eq(pa_kv_update_slices_upper_bound(1, 8, 16, 0, &out), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "slices_per_block 0 < 1"), "%s", pa_last_error());
    /* 2^31 - 1 one-token blocks, padded to a multiple of 2: 2^31 */
    cr_assert_eq(pa_kv_update_slices_upper_bound(4, INT32_MAX, 1, 2, &out), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "slice bound 2147483648 overflows int32"), "%s", pa_last_error());
    cr_assert_eq(out, SENT);
    /* the same bound one token less fits */
    cr_assert_eq(pa_kv_update_slices_upper_bound(4, INT32_MAX - 1, 1, 2, &out), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(out, INT32_MAX - 1);
}
