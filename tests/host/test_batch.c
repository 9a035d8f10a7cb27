/* Batch shaping: decode/prefill reorder and split, local-attention virtual
 * batches. The seed's worked example first, then randomised differential tests
 * against naive reimplementations written here from the vLLM semantics (list
 * based reorder, argmax split, per-token local attention), edge cases and bad
 * input. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pagedattn/pagedattn.h"

#include "testutil.h"

/* ---- the tests' one RNG (pa_rng, benchmarks/problems.h) ------------------- */
static pa_rng rng_state;
static void rng_seed(uint64_t s) { rng_state = pa_rng_make(s); }
static uint32_t rng_next(void) { return (uint32_t)(pa_rng_next(&rng_state) >> 32); }
/* Uniform in [lo, hi]. */
static int32_t rng_range(int32_t lo, int32_t hi) { return lo + (int32_t)(rng_next() % (uint32_t)(hi - lo + 1)); }

#define SENTINEL ((int32_t)0x5A5A5A5A)
static void fill_sentinel(int32_t *a, size_t n) {
    for (size_t i = 0; i < n; i++)
        a[i] = SENTINEL;
}
static int all_sentinel(const int32_t *a, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != SENTINEL)
            return 0;
    return 1;
}

/* ======================= local attention ===================================== */

static const int32_t example_expected_bt[8][2] = {{0, 1},   {2, 3},   {12, 13}, {14, 15},
                                                  {16, 17}, {18, 19}, {22, 23}, {24, 25}};

Test(local_attention, seed_worked_example) {
    /* attn_chunk_size 4, q_seqlens [4,10,5], k_seqlens [6,17,9], block_size 2. */
    const int32_t qsl[4] = {0, 4, 14, 19};
    const int32_t seq_lens[3] = {6, 17, 9};
    int32_t bt[30];
    for (int i = 0; i < 30; i++)
        bt[i] = i;
    pa_local_attention_params p = {.attn_chunk_size = 4,
                                   .block_size = 2,
                                   .num_reqs = 3,
                                   .query_start_loc = qsl,
                                   .seq_lens = seq_lens,
                                   .block_table = bt,
                                   .block_table_width = 10};
    int32_t nv = -1, pages = -1;
    CHK_EQ(pa_local_attention_size(&p, &nv, &pages), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(nv, 8);
    CHK_EQ(pages, 2);
    int32_t sq[8], cu[9], sk[8], btl[16];
    pa_local_attention_out o = {8, sq, cu, sk, btl, PA_LOCAL_TABLE_FULL};
    int32_t got_nv = -1;
    CHK_EQ(pa_make_local_attention_virtual_batches(&p, &o, &got_nv), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(got_nv, 8);
    const int32_t esq[8] = {2, 2, 1, 4, 4, 1, 4, 1};
    const int32_t ecu[9] = {0, 2, 4, 5, 9, 13, 14, 18, 19};
    const int32_t esk[8] = {4, 2, 4, 4, 4, 1, 4, 1};
    for (int v = 0; v < 8; v++) {
        CHK_EQ(sq[v], esq[v], "seqlens_q_local[%d] = %d, expected %d", v, sq[v], esq[v]);
        CHK_EQ(sk[v], esk[v], "seqlens_k_local[%d] = %d, expected %d", v, sk[v], esk[v]);
        CHK_EQ(btl[2 * v], example_expected_bt[v][0], "block_table_local[%d][0]", v);
        CHK_EQ(btl[2 * v + 1], example_expected_bt[v][1], "block_table_local[%d][1]", v);
    }
    for (int v = 0; v < 9; v++)
        CHK_EQ(cu[v], ecu[v], "cu_seqlens_q_local[%d] = %d, expected %d", v, cu[v], ecu[v]);
    CHK_EMPTY(pa_last_error());
}

/* Per-token brute force: query token at absolute position pos lies in chunk
 * pos / C. Consecutive tokens in one chunk form a virtual request; it attends
 * the keys of its chunk up to its last query token. A request with no query
 * tokens yields one virtual request for the chunk of its last key. */
typedef struct naive_local {
    int32_t nv;
    int32_t sq[4096], cu[4097], sk[4096], bt[4096 * 8];
} naive_local;

static void naive_emit(const pa_local_attention_params *p, naive_local *r, int32_t req, int32_t chunk, int32_t nq,
                       int32_t last_pos) {
    const int32_t C = p->attn_chunk_size, B = p->block_size, pages = C / B;
    const int32_t stride = p->block_table_stride ? p->block_table_stride : p->block_table_width;
    const int32_t v = r->nv++;
    cr_assert(v < 4096 && (int64_t)(v + 1) * pages <= 4096 * 8, "naive_local holds %d x %d pages at most", v + 1,
              pages);
    r->sq[v] = nq;
    r->sk[v] = last_pos - chunk * C + 1;
    r->cu[v + 1] = r->cu[v] + nq;
    for (int32_t j = 0; j < pages; j++) {
        int32_t col = chunk * C / B + j;
        if (col >= p->block_table_width)
            col = p->block_table_width - 1;
        r->bt[v * pages + j] = p->block_table[req * stride + col];
    }
}

static void naive_local_attention(const pa_local_attention_params *p, naive_local *r) {
    const int32_t C = p->attn_chunk_size;
    r->nv = 0;
    r->cu[0] = 0;
    for (int32_t i = 0; i < p->num_reqs; i++) {
        const int32_t q = p->query_start_loc[i + 1] - p->query_start_loc[i], k = p->seq_lens[i];
        if (q == 0) {
            naive_emit(p, r, i, (k - 1) / C, 0, k - 1);
            continue;
        }
        int32_t cur = -1, nq = 0;
        for (int32_t pos = k - q; pos < k; pos++) {
            if (pos / C != cur) {
                if (cur >= 0)
                    naive_emit(p, r, i, cur, nq, pos - 1);
                cur = pos / C;
                nq = 0;
            }
            nq++;
        }
        naive_emit(p, r, i, cur, nq, k - 1);
    }
}

/* n random requests for chunk C and block size bs: query lengths 0..3C+1
 * (one in `decode_odds` forced to a single decode token), keys past them up to
 * 4C+3 more, and a random block table of `width` columns (`stride` apart, 0 =
 * width). */
static pa_local_attention_params random_requests(int32_t C, int32_t bs, int32_t n, int32_t width, int32_t stride,
                                                 int32_t decode_odds, int32_t *qsl, int32_t *seq, int32_t *table) {
    qsl[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t q = rng_range(0, 7) == 0 ? 0 : rng_range(1, 3 * C + 2);
        if (rng_range(0, decode_odds) == 0)
            q = 1; /* decodes */
        const int32_t k = q + rng_range(q == 0 ? 1 : 0, 4 * C + 3);
        qsl[i + 1] = qsl[i] + q;
        seq[i] = k;
    }
    const int32_t rs = stride ? stride : width;
    for (int32_t i = 0; i < n * rs; i++)
        table[i] = (int32_t)(rng_next() % 100000);
    pa_local_attention_params p = {C, bs, n, qsl, seq, table, width, stride};
    return p;
}

static void check_local_against_naive(const pa_local_attention_params *p) {
    static naive_local ref;
    static int32_t sq[4100], cu[4101], sk[4100], bt[4100 * 8 + 8];
    naive_local_attention(p, &ref);
    int32_t nv = -1, pages = -1;
    CHK_EQ(pa_local_attention_size(p, &nv, &pages), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(nv, ref.nv, "nv %d, naive %d", nv, ref.nv);
    CHK_EQ(pages, p->attn_chunk_size / p->block_size);
    fill_sentinel(sq, 4100);
    fill_sentinel(cu, 4101);
    fill_sentinel(sk, 4100);
    fill_sentinel(bt, 4100 * 8 + 8);
    pa_local_attention_out o = {nv, sq, cu, sk, bt, PA_LOCAL_TABLE_FULL};
    int32_t got = -1;
    CHK_EQ(pa_make_local_attention_virtual_batches(p, &o, &got), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(got, nv);
    for (int32_t v = 0; v < nv; v++) {
        CHK_EQ(sq[v], ref.sq[v], "seqlens_q_local[%d] = %d, naive %d", v, sq[v], ref.sq[v]);
        CHK_EQ(sk[v], ref.sk[v], "seqlens_k_local[%d] = %d, naive %d", v, sk[v], ref.sk[v]);
        for (int32_t j = 0; j < pages; j++)
            CHK_EQ(bt[v * pages + j], ref.bt[v * pages + j], "block_table_local[%d][%d]", v, j);
    }
    for (int32_t v = 0; v <= nv; v++)
        CHK_EQ(cu[v], ref.cu[v], "cu_seqlens_q_local[%d]", v);
    /* nothing past the outputs */
    CHK_EQ(sq[nv], SENTINEL);
    CHK_EQ(cu[nv + 1], SENTINEL);
    CHK_EQ(bt[nv * pages], SENTINEL);
}

Test(local_attention, random_against_per_token_brute_force) {
    static int32_t qsl[65], seq[64], table[64 * 80];
    rng_seed(11);
    for (int iter = 0; iter < 2000; iter++) {
        const int32_t bs = 1 << rng_range(0, 4);                   /* 1..16 */
        const int32_t C = bs * rng_range(1, 8 / (bs > 4 ? 2 : 1)); /* multiple of bs, <= 8 pages */
        const int32_t n = rng_range(0, 12);
        int32_t width = rng_range(1, 80);
        const int32_t stride = rng_range(0, 1) ? 0 : width + rng_range(0, 3);
        pa_local_attention_params p = random_requests(C, bs, n, width, stride, 5, qsl, seq, table);
        check_local_against_naive(&p);
    }
}

/* The per-request block-table copy and the shift/mask division: block and
 * chunk sizes that are not powers of two (division path) and powers of two
 * (shift path), rows narrower than a request's run of pages (clipped to the
 * last column, in part or whole). The brute force holds up to 8 pages. */
Test(local_attention, block_sizes_chunks_and_clipping_against_brute_force) {
    static int32_t qsl[33], seq[32], table[32 * 40];
    rng_seed(29);
    static const int32_t bss[] = {3, 5, 16, 1, 12, 2};
    for (int iter = 0; iter < 1200; iter++) {
        const int32_t bs = bss[iter % 6];
        const int32_t mult = iter % 3 == 0 ? 1 << rng_range(0, 3) : rng_range(1, 8); /* pow2 chunks too */
        const int32_t C = bs * mult;
        const int32_t n = rng_range(1, 32);
        const int32_t width = rng_range(1, 40);
        qsl[0] = 0;
        for (int32_t i = 0; i < n; i++) {
            const int32_t q = rng_range(0, 3) == 0 ? 1 : rng_range(0, 2 * C + 3);
            seq[i] = q + rng_range(q == 0 ? 1 : 0, 3 * C + 5);
            qsl[i + 1] = qsl[i] + q;
        }
        for (int32_t i = 0; i < n * width; i++)
            table[i] = (int32_t)(rng_next() % 100000);
        pa_local_attention_params p = {C, bs, n, qsl, seq, table, width, 0};
        check_local_against_naive(&p);
    }
}

Test(local_attention, edge_cases) {
    static int32_t table[4 * 16];
    for (int i = 0; i < 64; i++)
        table[i] = 1000 + i;
    /* empty batch: nv 0, cu = [0] */
    {
        pa_local_attention_params p = {8, 4, 0, NULL, NULL, NULL, 0, 0};
        int32_t nv = -1, cu[2] = {SENTINEL, SENTINEL};
        CHK_EQ(pa_local_attention_size(&p, &nv, NULL), PA_SUCCESS, "%s", pa_last_error());
        CHK_EQ(nv, 0);
        pa_local_attention_out o = {0, NULL, cu, NULL, NULL, PA_LOCAL_TABLE_FULL};
        CHK_EQ(pa_make_local_attention_virtual_batches(&p, &o, &nv), PA_SUCCESS, "%s", pa_last_error());
        CHK_EQ(cu[0], 0);
        CHK_EQ(cu[1], SENTINEL);
    }
    /* one token (a decode) at position 0; a request exactly filling its last
     * block and chunk (k = 16, chunk 8, block 4); a whole-chunk prefill. */
    {
        const int32_t qsl[4] = {0, 1, 4, 20};
        const int32_t seq[3] = {1, 16, 16};
        pa_local_attention_params p = {8, 4, 3, qsl, seq, table, 16, 0};
        check_local_against_naive(&p);
        int32_t sq[8], cu[9], sk[8], bt[16];
        pa_local_attention_out o = {8, sq, cu, sk, bt, PA_LOCAL_TABLE_FULL};
        int32_t nv;
        CHK_EQ(pa_make_local_attention_virtual_batches(&p, &o, &nv), PA_SUCCESS, "%s", pa_last_error());
        CHK_EQ(nv, 4);
        /* request 0: one query, one key, pages 0,1 of row 0 */
        CHK_EQ(sq[0], 1);
        CHK_EQ(sk[0], 1);
        CHK_EQ(bt[0], 1000);
        CHK_EQ(bt[1], 1001);
        /* request 1: queries 13..15, full last chunk of 8 keys starting at 8 -> pages 2,3 */
        CHK_EQ(sq[1], 3);
        CHK_EQ(sk[1], 8);
        CHK_EQ(bt[2], 1016 + 2);
        CHK_EQ(bt[3], 1016 + 3);
        /* request 2: 16 queries 0..15, two full chunks */
        CHK_EQ(sq[2], 8);
        CHK_EQ(sk[2], 8);
        CHK_EQ(sq[3], 8);
        CHK_EQ(sk[3], 8);
        CHK_EQ(bt[6], 1032 + 2);
        CHK_EQ(cu[4], 20);
    }
    /* clip: a 1-column table repeats its only column */
    {
        const int32_t qsl[2] = {0, 9};
        const int32_t seq[1] = {9};
        pa_local_attention_params p = {4, 2, 1, qsl, seq, table, 1, 0};
        check_local_against_naive(&p);
        int32_t sq[3], cu[4], sk[3], bt[6];
        pa_local_attention_out o = {3, sq, cu, sk, bt, PA_LOCAL_TABLE_FULL};
        CHK_EQ(pa_make_local_attention_virtual_batches(&p, &o, NULL), PA_SUCCESS, "%s", pa_last_error());
        for (int i = 0; i < 6; i++)
            CHK_EQ(bt[i], 1000);
        CHK_EQ(sk[2], 1);
    }
}

/* ---- PA_LOCAL_TABLE_USED: only the columns a kernel reads ------------------- */

/* Columns of virtual request v that a kernel reads: the pages holding its
 * seqlens_k_local keys, from the brute force's key count. */
static int32_t used_columns(int32_t keys, int32_t block_size) { return (keys + block_size - 1) / block_size; }

/* The builder with PA_LOCAL_TABLE_USED into sentinel-filled arrays against the
 * per-token brute force: the lengths as in the default fill, the first
 * ceil(seqlens_k_local / block_size) columns of each row equal to the brute
 * force's (vLLM's) row, every other column still the sentinel. */
static void check_used_against_naive(const pa_local_attention_params *p) {
    static naive_local ref;
    static int32_t sq[4100], cu[4101], sk[4100], bt[4096 * 8 + 8];
    naive_local_attention(p, &ref);
    int32_t nv = -1, pages = -1;
    CHK_EQ(pa_local_attention_size(p, &nv, &pages), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(nv, ref.nv, "nv %d, naive %d", nv, ref.nv);
    fill_sentinel(sq, 4100);
    fill_sentinel(cu, 4101);
    fill_sentinel(sk, 4100);
    fill_sentinel(bt, 4096 * 8 + 8);
    pa_local_attention_out o = {nv, sq, cu, sk, bt, PA_LOCAL_TABLE_USED};
    int32_t got = -1;
    CHK_EQ(pa_make_local_attention_virtual_batches(p, &o, &got), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(got, nv);
    for (int32_t v = 0; v < nv; v++) {
        CHK_EQ(sq[v], ref.sq[v], "seqlens_q_local[%d] = %d, naive %d", v, sq[v], ref.sq[v]);
        CHK_EQ(sk[v], ref.sk[v], "seqlens_k_local[%d] = %d, naive %d", v, sk[v], ref.sk[v]);
        const int32_t used = used_columns(ref.sk[v], p->block_size);
        CHK(used >= 1 && used <= pages, "virtual %d: %d keys, %d used columns of %d", v, ref.sk[v], used, pages);
        for (int32_t j = 0; j < used; j++)
            CHK_EQ(bt[v * pages + j], ref.bt[v * pages + j], "block_table_local[%d][%d] (read by a kernel)", v, j);
        for (int32_t j = used; j < pages; j++)
            CHK_EQ(bt[v * pages + j], SENTINEL, "block_table_local[%d][%d] is past the %d keys' %d pages: written", v,
                   j, ref.sk[v], used);
    }
    for (int32_t v = 0; v <= nv; v++)
        CHK_EQ(cu[v], ref.cu[v], "cu_seqlens_q_local[%d]", v);
    CHK_EQ(sq[nv], SENTINEL);
    CHK_EQ(cu[nv + 1], SENTINEL);
    CHK_EQ(sk[nv], SENTINEL);
    CHK(all_sentinel(bt + (int64_t)nv * pages, 8), "written past the last row");
}

Test(local_attention, used_columns_random_against_per_token_brute_force) {
    static int32_t qsl[65], seq[64], table[64 * 80];
    rng_seed(47);
    for (int iter = 0; iter < 2000; iter++) {
        const int32_t bs = iter % 5 == 4 ? rng_range(2, 7) : 1 << rng_range(0, 4); /* 1..16, some not pow2 */
        const int32_t C = bs * rng_range(1, 8 / (bs > 4 ? 2 : 1));                 /* <= 8 pages */
        const int32_t n = rng_range(0, 12);
        /* wide enough for every key most of the time; narrow (clipped) the rest */
        int32_t width = rng_range(0, 3) ? 80 : rng_range(1, 80);
        const int32_t stride = rng_range(0, 1) ? 0 : width + rng_range(0, 3);
        pa_local_attention_params p = random_requests(C, bs, n, width, stride, 3, qsl, seq, table);
        check_used_against_naive(&p);
    }
}

/* Llama-4's sizes (attn_chunk_size 8192, block_size 16: 512 columns a row):
 * a decode reads a fraction of its row, a request whose last chunk holds one
 * key reads one column, a prefill across chunks reads its full rows whole. */
Test(local_attention, used_columns_llama4_sizes) {
    enum { NR = 6, W = 1300 };
    static int32_t table[NR * W];
    for (int32_t i = 0; i < NR * W; i++)
        table[i] = 7 + i;
    /* decode at 2,000 keys; decode at 8,193 keys (its chunk holds one key);
     * a prefill of 12,000 queries over 20,000 keys (chunks 0..2, the last of
     * 3,616 keys); a padding request (0 queries, 5 keys); a decode at exactly
     * 8,192 keys; a decode at 20,000 keys in a row 1,200 columns wide (its
     * last chunk's 226 pages run past column 1,199: clipped). */
    const int32_t q[NR] = {1, 1, 12000, 0, 1, 1};
    const int32_t k[NR] = {2000, 8193, 20000, 5, 8192, 20000};
    int32_t qsl[NR + 1] = {0};
    for (int i = 0; i < NR; i++)
        qsl[i + 1] = qsl[i] + q[i];
    pa_local_attention_params p = {8192, 16, NR - 1, qsl, k, table, W, 0};
    check_used_against_naive(&p);
    /* the clipped one on its own: width 1200 (stride W) */
    pa_local_attention_params clip = {8192, 16, 1, qsl + 5, k + 5, table + 5 * W, 1200, W};
    check_used_against_naive(&clip);
    /* and by hand, the columns written for the first request and the clipped one */
    static int32_t sq[8], cu[9], sk[8], bt[8 * 512];
    fill_sentinel(bt, 8 * 512);
    pa_local_attention_out o = {8, sq, cu, sk, bt, PA_LOCAL_TABLE_USED};
    int32_t nv = -1;
    CHK_EQ(pa_make_local_attention_virtual_batches(&p, &o, &nv), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(nv, 1 + 1 + 3 + 1 + 1);
    for (int32_t j = 0; j < 125; j++) /* 2,000 keys: 125 pages of row 0 */
        CHK_EQ(bt[j], 7 + j);
    CHK(all_sentinel(bt + 125, 512 - 125));
    CHK_EQ(bt[512], 7 + W + 512); /* 8,193 keys: chunk 1's one key is in page 512 */
    CHK(all_sentinel(bt + 513, 511));
    fill_sentinel(bt, 512);
    CHK_EQ(pa_make_local_attention_virtual_batches(&clip, &o, &nv), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(nv, 1);
    CHK_EQ(sk[0], 20000 - 16384);
    for (int32_t j = 0; j < 226; j++) /* chunk 2 starts at page 1024; columns >= 1200 clip to 1199 */
        CHK_EQ(bt[j], 7 + 5 * W + (1024 + j < 1200 ? 1024 + j : 1199), "column %d", j);
    CHK(all_sentinel(bt + 226, 512 - 226));
}

/* The default (table_fill 0, as a zero-initialised out gives) is unchanged:
 * every column, as vLLM. */
Test(local_attention, default_fill_writes_every_column) {
    static int32_t table[2 * 40];
    for (int32_t i = 0; i < 80; i++)
        table[i] = 100 + i;
    const int32_t qsl[3] = {0, 1, 2};
    const int32_t seq[2] = {5, 33}; /* chunk 16, block 4: 2 of 4 columns used; then 1 of 4 */
    pa_local_attention_params p = {16, 4, 2, qsl, seq, table, 40, 0};
    int32_t sq[2], cu[3], sk[2], full[8], used[8];
    fill_sentinel(full, 8);
    fill_sentinel(used, 8);
    pa_local_attention_out o = {.capacity = 2,
                                .seqlens_q_local = sq,
                                .cu_seqlens_q_local = cu,
                                .seqlens_k_local = sk,
                                .block_table_local = full};
    CHK_EQ(o.table_fill, PA_LOCAL_TABLE_FULL);
    CHK_EQ(pa_make_local_attention_virtual_batches(&p, &o, NULL), PA_SUCCESS, "%s", pa_last_error());
    const int32_t efull[8] = {100, 101, 102, 103, 148, 149, 150, 151};
    for (int j = 0; j < 8; j++)
        CHK_EQ(full[j], efull[j], "full[%d]", j);
    o.block_table_local = used;
    o.table_fill = PA_LOCAL_TABLE_USED;
    CHK_EQ(pa_make_local_attention_virtual_batches(&p, &o, NULL), PA_SUCCESS, "%s", pa_last_error());
    const int32_t eused[8] = {100, 101, SENTINEL, SENTINEL, 148, SENTINEL, SENTINEL, SENTINEL};
    for (int j = 0; j < 8; j++)
        CHK_EQ(used[j], eused[j], "used[%d]", j);
}

/* Every bad input: the status, a message naming the field (and request), and
 * sentinel outputs untouched. */
static void expect_make_error(const pa_local_attention_params *p, int32_t cap, int32_t table_fill, const char *substr) {
    int32_t sq[16], cu[17], sk[16], bt[64], nv = SENTINEL;
    fill_sentinel(sq, 16);
    fill_sentinel(cu, 17);
    fill_sentinel(sk, 16);
    fill_sentinel(bt, 64);
    pa_local_attention_out o = {cap, sq, cu, sk, bt, table_fill};
    pa_status s = pa_make_local_attention_virtual_batches(p, &o, &nv);
    CHK_EQ(s, PA_ERR_INVALID_ARGUMENT, "expected invalid argument for '%s' (table_fill %d), got %d", substr, table_fill,
           s);
    CHK(strstr(pa_last_error(), substr) != NULL, "message '%s' lacks '%s'", pa_last_error(), substr);
    CHK(all_sentinel(sq, 16) && all_sentinel(cu, 17) && all_sentinel(sk, 16) && all_sentinel(bt, 64),
        "table_fill %d: an output was written on error '%s'", table_fill, substr);
    CHK_EQ(nv, SENTINEL);
}

/* The builder's error in both table fills, and the size query's. */
static void expect_local_error(const pa_local_attention_params *p, int32_t cap, const char *substr) {
    int32_t nv = SENTINEL, pages = SENTINEL;
    pa_status s;
    expect_make_error(p, cap, PA_LOCAL_TABLE_FULL, substr);
    expect_make_error(p, cap, PA_LOCAL_TABLE_USED, substr);
    if (cap >= 16) { /* a capacity error is not a size-query error */
        s = pa_local_attention_size(p, &nv, &pages);
        CHK_EQ(s, PA_ERR_INVALID_ARGUMENT);
        CHK(strstr(pa_last_error(), substr) != NULL, "message '%s' lacks '%s'", pa_last_error(), substr);
        CHK_EQ(nv, SENTINEL);
        CHK_EQ(pages, SENTINEL);
    }
}

Test(local_attention, bad_input) {
    int32_t table[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int32_t qsl[3] = {0, 2, 5};
    int32_t seq[2] = {4, 5};
    pa_local_attention_params good = {4, 2, 2, qsl, seq, table, 4, 0};
    pa_local_attention_params p;
    p = good;
    p.attn_chunk_size = 6;
    p.block_size = 4;
    expect_local_error(&p, 16, "not a multiple of block_size");
    p = good;
    p.block_size = 0;
    expect_local_error(&p, 16, "block_size must be > 0");
    p = good;
    p.block_size = -2;
    expect_local_error(&p, 16, "block_size must be > 0");
    p = good;
    p.attn_chunk_size = 0;
    expect_local_error(&p, 16, "attn_chunk_size must be > 0");
    p = good;
    p.num_reqs = -1;
    expect_local_error(&p, 16, "num_reqs");
    {
        int32_t bad_seq[2] = {4, 2}; /* request 1: 3 queries, 2 keys */
        p = good;
        p.seq_lens = bad_seq;
        expect_local_error(&p, 16, "request 1: seq_lens 2 < query length 3");
    }
    {
        int32_t neg_seq[2] = {-4, 5};
        p = good;
        p.seq_lens = neg_seq;
        expect_local_error(&p, 16, "request 0: seq_lens must be >= 1");
    }
    {
        /* no query and no key: a request needs a key even without new tokens */
        int32_t empty_qsl[3] = {0, 0, 3}, zero_seq[2] = {0, 5};
        p = good;
        p.query_start_loc = empty_qsl;
        p.seq_lens = zero_seq;
        expect_local_error(&p, 16, "request 0: seq_lens must be >= 1 (got 0)");
    }
    {
        int32_t bad_qsl[3] = {0, 3, 2}; /* request 1 has a negative length */
        p = good;
        p.query_start_loc = bad_qsl;
        expect_local_error(&p, 16, "request 1: query length must be >= 0");
    }
    {
        /* Starting below 0: a length b - a and the lengths' running sum
         * (cu_seqlens_q_local) could pass INT32_MAX. Once these gave success with
         * a length of -1, and with cu_seqlens_q_local going negative. */
        int32_t wide_qsl[2] = {INT32_MIN, INT32_MAX}, wide_seq[1] = {16};
        p = good;
        p.num_reqs = 1;
        p.query_start_loc = wide_qsl;
        p.seq_lens = wide_seq;
        expect_local_error(&p, 16, "query_start_loc[0] must be >= 0 (got -2147483648)");
        int32_t sum_qsl[3] = {-2000000000, 0, 2000000000}, sum_seq[2] = {2000000000, 2000000000};
        p = good;
        p.attn_chunk_size = p.block_size = 1 << 30;
        p.query_start_loc = sum_qsl;
        p.seq_lens = sum_seq;
        expect_local_error(&p, 16, "query_start_loc[0] must be >= 0");
    }
    p = good;
    p.seq_lens = NULL;
    expect_local_error(&p, 16, "must not be NULL");
    p = good;
    p.block_table = NULL;
    expect_local_error(&p, 16, "must not be NULL");
    p = good;
    p.block_table_width = 0;
    expect_local_error(&p, 16, "block_table_width");
    p = good;
    p.block_table_stride = 2;
    expect_local_error(&p, 16, "block_table_stride");
    /* capacity too small: 2 + 2 = 4 virtual requests needed... */
    int32_t nv;
    CHK_EQ(pa_local_attention_size(&good, &nv, NULL), PA_SUCCESS);
    expect_local_error(&good, nv - 1, "capacity");
    CHK_EQ(pa_make_local_attention_virtual_batches(NULL, NULL, NULL), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(pa_make_local_attention_virtual_batches(&good, NULL, NULL), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "out is NULL"));
    /* a table fill that is neither of the two, on good input */
    expect_make_error(&good, 16, 2, "table_fill");
    expect_make_error(&good, 16, -1, "table_fill");
    expect_make_error(&good, 16, INT32_MIN, "table_fill");
    /* an empty batch is checked too */
    {
        pa_local_attention_params empty = {8, 4, 0, NULL, NULL, NULL, 0, 0};
        expect_make_error(&empty, 0, 7, "table_fill");
    }
}

/* ======================= reorder ============================================= */

#define MAXR 64

/* vLLM's algorithm, literally: build the two index lists, then walk them. */
static int naive_reorder(const int32_t *tokens, int32_t n, int32_t thr, int32_t swaps[][2], int32_t *nswaps) {
    int32_t decodes[MAXR], prefills[MAXR], nd = 0, np = 0;
    for (int32_t i = 0; i < n; i++) {
        if (tokens[i] <= thr)
            decodes[nd++] = i;
        else
            prefills[np++] = i;
    }
    int modified = 0;
    *nswaps = 0;
    const int32_t m = nd < np ? nd : np;
    for (int32_t i = 1; i <= m; i++) {
        int32_t decode_idx = decodes[nd - i];
        if (decode_idx < nd)
            break;
        swaps[*nswaps][0] = prefills[i - 1];
        swaps[*nswaps][1] = decode_idx;
        (*nswaps)++;
        modified = 1;
    }
    return modified;
}

typedef struct swap_log {
    int32_t n;
    int32_t s[MAXR][2];
} swap_log;

static void record_swap(void *user, int32_t a, int32_t b) {
    swap_log *l = user;
    cr_assert_lt(l->n, MAXR);
    l->s[l->n][0] = a;
    l->s[l->n][1] = b;
    l->n++;
}

Test(reorder, random_against_vllm_list_algorithm) {
    rng_seed(7);
    for (int iter = 0; iter < 3000; iter++) {
        const int32_t n = rng_range(0, MAXR);
        const int32_t thr = rng_range(0, 4);
        int32_t tokens[MAXR], perm[MAXR], out[MAXR], inplace[MAXR];
        const int mode = rng_range(0, 3); /* mostly decodes, mostly prefills, mixed, appended prefills */
        for (int32_t i = 0; i < n; i++) {
            int dec;
            switch (mode) {
            case 0: dec = rng_range(0, 9) != 0; break;
            case 1: dec = rng_range(0, 9) == 0; break;
            case 2: dec = rng_range(0, 1); break;
            default: dec = i < n / 2 ? rng_range(0, 5) != 0 : rng_range(0, 5) == 0; break;
            }
            tokens[i] = dec ? rng_range(0, thr) : rng_range(thr + 1, thr + 600);
            perm[i] = i;
        }
        int32_t swaps[MAXR][2], ns;
        const int exp_mod = naive_reorder(tokens, n, thr, swaps, &ns);
        swap_log log = {0};
        int mod = -1;
        memcpy(inplace, tokens, sizeof tokens);
        fill_sentinel(out, MAXR);
        CHK_EQ(pa_reorder_batch_to_split_decodes_and_prefills(tokens, n, thr, record_swap, &log, perm, out, &mod),
               PA_SUCCESS, "%s", pa_last_error());
        CHK_EQ(mod, exp_mod);
        CHK_EQ(log.n, ns, "iter %d: %d swaps, vLLM %d", iter, log.n, ns);
        for (int32_t s = 0; s < ns; s++) {
            CHK_EQ(log.s[s][0], swaps[s][0]);
            CHK_EQ(log.s[s][1], swaps[s][1]);
        }
        /* Apply vLLM's swaps (swap_states) to the tokens and an identity permutation. */
        int32_t exp_tokens[MAXR], exp_perm[MAXR];
        for (int32_t i = 0; i < n; i++) {
            exp_tokens[i] = tokens[i];
            exp_perm[i] = i;
        }
        for (int32_t s = 0; s < ns; s++) {
            const int32_t a = swaps[s][0], b = swaps[s][1];
            int32_t t = exp_tokens[a];
            exp_tokens[a] = exp_tokens[b];
            exp_tokens[b] = t;
            t = exp_perm[a];
            exp_perm[a] = exp_perm[b];
            exp_perm[b] = t;
        }
        for (int32_t i = 0; i < n; i++) {
            CHK_EQ(out[i], exp_tokens[i]);
            CHK_EQ(perm[i], exp_perm[i]);
            CHK_EQ(tokens[perm[i]], out[i]);
        }
        CHK(all_sentinel(out + n, (size_t)(MAXR - n)));
        /* Decodes first afterwards: split of the reordered batch agrees. */
        int32_t qsl[MAXR + 1];
        qsl[0] = 0;
        int32_t nd = 0;
        for (int32_t i = 0; i < n; i++) {
            qsl[i + 1] = qsl[i] + out[i];
            nd += out[i] <= thr;
        }
        pa_batch_split sp;
        CHK_EQ(pa_split_decodes_and_prefills(qsl, n, thr, &sp), PA_SUCCESS, "%s", pa_last_error());
        CHK_EQ(sp.num_decodes, nd);
        /* In place, without callback or perm: same result. */
        int mod2 = -1;
        CHK_EQ(pa_reorder_batch_to_split_decodes_and_prefills(inplace, n, thr, NULL, NULL, NULL, inplace, &mod2),
               PA_SUCCESS);
        CHK_EQ(mod2, exp_mod);
        CHK_EQ(memcmp(inplace, exp_tokens, (size_t)n * sizeof(int32_t)), 0);
    }
}

Test(reorder, edge_cases) {
    int mod = -1;
    /* empty batch */
    CHK_EQ(pa_reorder_batch_to_split_decodes_and_prefills(NULL, 0, 1, NULL, NULL, NULL, NULL, &mod), PA_SUCCESS);
    CHK_EQ(mod, 0);
    /* all decodes / all prefills / one token: nothing moves */
    const int32_t dec[4] = {1, 1, 0, 1}, pre[3] = {5, 9, 2}, one[1] = {1};
    swap_log log = {0};
    CHK_EQ(pa_reorder_batch_to_split_decodes_and_prefills(dec, 4, 1, record_swap, &log, NULL, NULL, &mod), PA_SUCCESS);
    CHK_EQ(mod, 0);
    CHK_EQ(pa_reorder_batch_to_split_decodes_and_prefills(pre, 3, 1, record_swap, &log, NULL, NULL, &mod), PA_SUCCESS);
    CHK_EQ(mod, 0);
    CHK_EQ(pa_reorder_batch_to_split_decodes_and_prefills(one, 1, 1, record_swap, &log, NULL, NULL, &mod), PA_SUCCESS);
    CHK_EQ(mod, 0);
    CHK_EQ(log.n, 0);
    /* hand example: [P, D, P, D, D] with threshold 1: 3 decodes; the decodes at
     * 4 and 3 go to the prefills at 0 and 2. */
    const int32_t t[5] = {7, 1, 3, 1, 1};
    int32_t perm[5] = {0, 1, 2, 3, 4}, out[5];
    CHK_EQ(pa_reorder_batch_to_split_decodes_and_prefills(t, 5, 1, record_swap, &log, perm, out, &mod), PA_SUCCESS);
    CHK_EQ(mod, 1);
    CHK_EQ(log.n, 2);
    CHK(log.s[0][0] == 0 && log.s[0][1] == 4);
    CHK(log.s[1][0] == 2 && log.s[1][1] == 3);
    const int32_t eo[5] = {1, 1, 1, 3, 7}, ep[5] = {4, 1, 3, 2, 0};
    for (int i = 0; i < 5; i++) {
        CHK_EQ(out[i], eo[i]);
        CHK_EQ(perm[i], ep[i]);
    }
    /* modified may be NULL */
    CHK_EQ(pa_reorder_batch_to_split_decodes_and_prefills(t, 5, 1, NULL, NULL, NULL, NULL, NULL), PA_SUCCESS);
}

static void never_called(void *user, int32_t a, int32_t b) {
    (void)user;
    (void)a;
    (void)b;
    cr_assert_fail("swap callback called on bad input");
}

static void expect_reorder_error(const int32_t *tokens, int32_t n, int32_t thr, const char *substr) {
    int32_t perm[8], out[8];
    int mod = SENTINEL;
    fill_sentinel(perm, 8);
    fill_sentinel(out, 8);
    pa_status s = pa_reorder_batch_to_split_decodes_and_prefills(tokens, n, thr, never_called, NULL, perm, out, &mod);
    CHK_EQ(s, PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), substr) != NULL, "message '%s' lacks '%s'", pa_last_error(), substr);
    CHK(all_sentinel(perm, 8) && all_sentinel(out, 8));
    CHK_EQ(mod, SENTINEL);
}

Test(reorder, bad_input) {
    const int32_t neg[4] = {5, 1, -3, 1};
    expect_reorder_error(neg, 4, 1, "request 2: num_scheduled_tokens must be >= 0");
    const int32_t big[4] = {1, INT32_MAX - 5, 3, 7};
    expect_reorder_error(big, 4, 1, "request 3: num_scheduled_tokens total overflows int32");
    expect_reorder_error(NULL, 3, 1, "num_scheduled_tokens is NULL");
    const int32_t ok[2] = {1, 2};
    expect_reorder_error(ok, -1, 1, "num_reqs");
    expect_reorder_error(ok, 2, -1, "decode_threshold");
}

Test(reorder, partial_overlap_of_tokens_out_is_rejected) {
    /* [P, D, P, D, D] (the hand example above) with tokens_out shifted one entry
     * either way inside the same buffer: rejected, nothing written, no swap. */
    for (int shift = -1; shift <= 1; shift += 2) {
        int32_t buf[7] = {SENTINEL, 7, 1, 3, 1, 1, SENTINEL};
        const int32_t before[7] = {SENTINEL, 7, 1, 3, 1, 1, SENTINEL};
        int32_t perm[5] = {0, 1, 2, 3, 4};
        int mod = SENTINEL;
        pa_status s = pa_reorder_batch_to_split_decodes_and_prefills(buf + 1, 5, 1, never_called, NULL, perm,
                                                                     buf + 1 + shift, &mod);
        CHK_EQ(s, PA_ERR_INVALID_ARGUMENT, "shift %d", shift);
        CHK(strstr(pa_last_error(), "overlaps") != NULL, "%s", pa_last_error());
        CHK_EQ(memcmp(buf, before, sizeof buf), 0, "shift %d: buffer written on a rejected call", shift);
        for (int i = 0; i < 5; i++)
            CHK_EQ(perm[i], i);
        CHK_EQ(mod, SENTINEL);
    }
    /* the arrays touching end to start are disjoint: accepted */
    int32_t buf[10] = {7, 1, 3, 1, 1};
    CHK_EQ(pa_reorder_batch_to_split_decodes_and_prefills(buf, 5, 1, NULL, NULL, NULL, buf + 5, NULL), PA_SUCCESS, "%s",
           pa_last_error());
    const int32_t eo[5] = {1, 1, 1, 3, 7};
    CHK_EQ(memcmp(buf + 5, eo, sizeof eo), 0);
    /* exact aliasing stays the documented in-place mode */
    CHK_EQ(pa_reorder_batch_to_split_decodes_and_prefills(buf, 5, 1, NULL, NULL, NULL, buf, NULL), PA_SUCCESS);
    CHK_EQ(memcmp(buf, eo, sizeof eo), 0);
}

/* perm sharing bytes with the tokens: each swap was applied to both names of
 * one array, undoing it (PA_SUCCESS, tokens unchanged). Refused, nothing
 * written, no callback; perm beside them (touching) is fine. */
Test(reorder, perm_sharing_the_tokens_is_refused) {
    for (int k = 0; k < 3; k++) {
        int32_t buf[12] = {5, 5, 1, 1, SENTINEL, SENTINEL, SENTINEL, SENTINEL, SENTINEL, SENTINEL};
        int32_t before[12];
        memcpy(before, buf, sizeof buf);
        int32_t *tokens_out = k == 2 ? buf + 4 : NULL, *perm = k == 0 ? buf : k == 1 ? buf + 2 : buf + 5;
        pa_status s =
            pa_reorder_batch_to_split_decodes_and_prefills(buf, 4, 1, never_called, NULL, perm, tokens_out, NULL);
        CHK_EQ(s, PA_ERR_INVALID_ARGUMENT, "case %d", k);
        CHK(strstr(pa_last_error(), k == 2 ? "outputs perm and tokens_out overlap"
                                           : "output perm overlaps the input num_scheduled_tokens") != NULL,
            "case %d: %s", k, pa_last_error());
        CHK_EQ(memcmp(buf, before, sizeof buf), 0, "case %d: written on a rejected call", k);
    }
    int32_t buf[8] = {5, 5, 1, 1, 0, 1, 2, 3}; /* perm right after the tokens, in place */
    CHK_EQ(pa_reorder_batch_to_split_decodes_and_prefills(buf, 4, 1, NULL, NULL, buf + 4, buf, NULL), PA_SUCCESS, "%s",
           pa_last_error());
    const int32_t want[8] = {1, 1, 5, 5, 3, 2, 1, 0};
    CHK_EQ(memcmp(buf, want, sizeof want), 0);
}

/* The virtual-batch builder reads request r's query_start_loc, seq_lens and
 * block-table row after writing earlier rows: seqlens_k_local over seq_lens
 * (a persistent buffer reused in place) made request 1 read back 1 key, so
 * 4 virtual batches were written where 3 were validated (past capacity) and
 * block_table[-1] read. Every output over an input, and two outputs over one
 * another, are refused naming them, nothing written. */
Test(local_attention, outputs_sharing_inputs_are_refused) {
    int32_t qsl[3] = {0, 5, 9};
    const int32_t bt[2][4] = {{10, 11, 12, 13}, {20, 21, 22, 23}};
    for (int k = 0; k < 5; k++) {
        int32_t arena[64];
        for (int i = 0; i < 64; i++)
            arena[i] = SENTINEL;
        int32_t *kl = arena + 8, *sl = arena, *q = arena + 16, *cu = arena + 24, *t = arena + 32;
        sl[0] = 5, sl[1] = 8;
        const char *want = NULL;
        const int32_t *qp = qsl;
        if (k == 0) {
            kl = sl; /* the audit's case */
            want = "output seqlens_k_local overlaps the input seq_lens";
        } else if (k == 1) {
            cu = qsl;
            want = "output cu_seqlens_q_local overlaps the input query_start_loc";
        } else if (k == 2) {
            t = (int32_t *)&bt[1][0];
            want = "output block_table_local overlaps the input block_table";
        } else if (k == 3) {
            q = cu + 2;
            want = "outputs seqlens_q_local and cu_seqlens_q_local overlap";
        }
        int32_t qcopy[3] = {0, 5, 9};
        if (k == 1)
            qp = qsl;
        else
            qp = qcopy;
        const pa_local_attention_params p = {.attn_chunk_size = 4,
                                             .block_size = 4,
                                             .num_reqs = 2,
                                             .query_start_loc = qp,
                                             .seq_lens = sl,
                                             .block_table = &bt[0][0],
                                             .block_table_width = 4};
        int32_t nv = 0, pages = 0;
        CHK_EQ(pa_local_attention_size(&p, &nv, &pages), PA_SUCCESS, "%s", pa_last_error());
        CHK(nv == 3 && pages == 1, "nv %d pages %d", nv, pages);
        pa_local_attention_out o = {.capacity = 3,
                                    .seqlens_q_local = q,
                                    .cu_seqlens_q_local = cu,
                                    .seqlens_k_local = kl,
                                    .block_table_local = t};
        int32_t before[64], qbefore[3];
        memcpy(before, arena, sizeof arena);
        memcpy(qbefore, qsl, sizeof qsl);
        int32_t got_nv = -1;
        pa_status s = pa_make_local_attention_virtual_batches(&p, &o, &got_nv);
        if (!want) {
            /* apart: request 0's 5 keys in chunks of 4 are 4 + 1, request 1's 8 keys with queries 5..8 one chunk */
            CHK_EQ(s, PA_SUCCESS, "%s", pa_last_error());
            const int32_t wq[3] = {4, 1, 4}, wcu[4] = {0, 4, 5, 9}, wk[3] = {4, 1, 4}, wt[3] = {10, 11, 21};
            CHK(got_nv == 3 && !memcmp(q, wq, sizeof wq) && !memcmp(cu, wcu, sizeof wcu) &&
                    !memcmp(kl, wk, sizeof wk) && !memcmp(t, wt, sizeof wt),
                "apart: nv %d q %d %d %d k %d %d %d t %d %d %d", got_nv, q[0], q[1], q[2], kl[0], kl[1], kl[2], t[0],
                t[1], t[2]);
            continue;
        }
        CHK_EQ(s, PA_ERR_INVALID_ARGUMENT, "case %d", k);
        CHK(strstr(pa_last_error(), want) != NULL, "case %d: '%s' lacks '%s'", k, pa_last_error(), want);
        CHK(!memcmp(arena, before, sizeof arena) && !memcmp(qsl, qbefore, sizeof qsl) && got_nv == -1,
            "case %d: written on a rejected call", k);
    }
}

/* The virtual block table's span is all of its nv x pages entries: with two
 * pages a row, an input lying in its second half is refused too. Chunks of 4,
 * blocks of 2: request 0 (queries at 2, 3 of 4 keys) is one virtual request,
 * request 1 (queries at 2, 3, 4 of 5 keys) two, so nv 3 and the table 6 ints;
 * seq_lens sits at its entries 4 and 5. */
Test(local_attention, an_input_in_the_later_rows_of_the_table_is_refused) {
    int32_t arena[64];
    for (int i = 0; i < 64; i++)
        arena[i] = SENTINEL;
    const int32_t qsl[3] = {0, 2, 5}, bt[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int32_t *q = arena, *cu = arena + 8, *kl = arena + 16, *t = arena + 32, *sl = arena + 36;
    sl[0] = 4, sl[1] = 5;
    const pa_local_attention_params p = {4, 2, 2, qsl, sl, bt, 4, 0};
    int32_t nv = 0, pages = 0;
    CHK_EQ(pa_local_attention_size(&p, &nv, &pages), PA_SUCCESS, "%s", pa_last_error());
    CHK(nv == 3 && pages == 2, "nv %d pages %d", nv, pages);
    for (int fill = PA_LOCAL_TABLE_FULL; fill <= PA_LOCAL_TABLE_USED; fill++) {
        pa_local_attention_out o = {3, q, cu, kl, t, (pa_local_table_fill)fill};
        int32_t before[64];
        memcpy(before, arena, sizeof arena);
        int32_t got_nv = -1;
        CHK_EQ(pa_make_local_attention_virtual_batches(&p, &o, &got_nv), PA_ERR_INVALID_ARGUMENT, "fill %d", fill);
        CHK(strstr(pa_last_error(), "output block_table_local overlaps the input seq_lens") != NULL, "%s",
            pa_last_error());
        CHK(!memcmp(arena, before, sizeof arena) && got_nv == -1, "fill %d: written on a rejected call", fill);
    }
}

/* ======================= split =============================================== */

/* vLLM's split, literally: fast path on max_query_len, else argmax of
 * is_prefill, then the two asserts (returned as 0 = assertion failed). */
static int naive_split(const int32_t *qsl, int32_t n, int32_t thr, int32_t res[4]) {
    int32_t maxq = 0;
    for (int32_t i = 0; i < n; i++)
        if (qsl[i + 1] - qsl[i] > maxq)
            maxq = qsl[i + 1] - qsl[i];
    const int32_t total = n ? qsl[n] : 0;
    if (maxq <= thr) {
        res[0] = n, res[1] = 0, res[2] = total, res[3] = 0;
        return 1;
    }
    int32_t first = -1;
    for (int32_t i = 0; i < n && first < 0; i++)
        if (qsl[i + 1] - qsl[i] > thr)
            first = i;
    for (int32_t i = first; i < n; i++)
        if (!(qsl[i + 1] - qsl[i] > thr))
            return 0;
    for (int32_t i = 0; i < first; i++)
        if (!(qsl[i + 1] - qsl[i] <= thr))
            return 0;
    res[0] = first, res[1] = n - first, res[2] = qsl[first], res[3] = total - qsl[first];
    return 1;
}

Test(split, random_against_vllm) {
    rng_seed(3);
    int n_ok = 0, n_bad = 0;
    for (int iter = 0; iter < 3000; iter++) {
        const int32_t n = rng_range(0, 40);
        const int32_t thr = rng_range(0, 3);
        int32_t lens[40];
        const int sorted = rng_range(0, 1);
        const int32_t nd = rng_range(0, n);
        for (int32_t i = 0; i < n; i++) {
            const int dec = sorted ? i < nd : rng_range(0, 1);
            lens[i] = dec ? rng_range(0, thr) : rng_range(thr + 1, thr + 300);
        }
        int32_t qsl[41];
        qsl[0] = 0;
        for (int32_t i = 0; i < n; i++)
            qsl[i + 1] = qsl[i] + lens[i];
        int32_t exp[4];
        const int ok = naive_split(qsl, n, thr, exp);
        pa_batch_split sp = {SENTINEL, SENTINEL, SENTINEL, SENTINEL};
        pa_status s = pa_split_decodes_and_prefills(qsl, n, thr, &sp);
        if (ok) {
            n_ok++;
            CHK_EQ(s, PA_SUCCESS, "%s", pa_last_error());
            CHK_EQ(sp.num_decodes, exp[0]);
            CHK_EQ(sp.num_prefills, exp[1]);
            CHK_EQ(sp.num_decode_tokens, exp[2]);
            CHK_EQ(sp.num_prefill_tokens, exp[3]);
        } else {
            n_bad++;
            CHK_EQ(s, PA_ERR_INVALID_ARGUMENT);
            CHK(strstr(pa_last_error(), "not reordered") != NULL, "%s", pa_last_error());
            CHK(sp.num_decodes == SENTINEL && sp.num_prefills == SENTINEL && sp.num_decode_tokens == SENTINEL &&
                sp.num_prefill_tokens == SENTINEL);
        }
    }
    CHK(n_ok > 500 && n_bad > 500, "ok %d bad %d", n_ok, n_bad);
}

Test(split, edge_cases_and_bad_input) {
    pa_batch_split sp;
    CHK_EQ(pa_split_decodes_and_prefills(NULL, 0, 1, &sp), PA_SUCCESS);
    CHK(sp.num_decodes == 0 && sp.num_prefills == 0 && sp.num_decode_tokens == 0 && sp.num_prefill_tokens == 0);
    const int32_t all_dec[4] = {0, 1, 2, 3};
    CHK_EQ(pa_split_decodes_and_prefills(all_dec, 3, 1, &sp), PA_SUCCESS);
    CHK(sp.num_decodes == 3 && sp.num_prefills == 0 && sp.num_decode_tokens == 3 && sp.num_prefill_tokens == 0);
    const int32_t all_pre[3] = {0, 5, 12};
    CHK_EQ(pa_split_decodes_and_prefills(all_pre, 2, 1, &sp), PA_SUCCESS);
    CHK(sp.num_decodes == 0 && sp.num_prefills == 2 && sp.num_decode_tokens == 0 && sp.num_prefill_tokens == 12);
    const int32_t mixed[5] = {0, 1, 2, 9, 20};
    CHK_EQ(pa_split_decodes_and_prefills(mixed, 4, 1, &sp), PA_SUCCESS);
    CHK(sp.num_decodes == 2 && sp.num_prefills == 2 && sp.num_decode_tokens == 2 && sp.num_prefill_tokens == 18);
    /* not reordered: request 2 is a decode after prefill 1 */
    const int32_t unordered[4] = {0, 1, 5, 6};
    pa_batch_split keep = {SENTINEL, SENTINEL, SENTINEL, SENTINEL};
    CHK_EQ(pa_split_decodes_and_prefills(unordered, 3, 1, &keep), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "request 2") && strstr(pa_last_error(), "prefill request 1"), "%s", pa_last_error());
    CHK_EQ(keep.num_decodes, SENTINEL);
    const int32_t negative[4] = {0, 4, 3, 6};
    CHK_EQ(pa_split_decodes_and_prefills(negative, 3, 1, &keep), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "request 1: query length must be >= 0"), "%s", pa_last_error());
    const int32_t nonzero[3] = {2, 3, 4};
    CHK_EQ(pa_split_decodes_and_prefills(nonzero, 2, 1, &keep), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "query_start_loc[0]"), "%s", pa_last_error());
    CHK_EQ(pa_split_decodes_and_prefills(NULL, 2, 1, &keep), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(pa_split_decodes_and_prefills(mixed, 4, -1, &keep), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(pa_split_decodes_and_prefills(mixed, -4, 1, &keep), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(pa_split_decodes_and_prefills(mixed, 4, 1, NULL), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(keep.num_decodes, SENTINEL);
    CHK_EQ(keep.num_prefill_tokens, SENTINEL);
    /* success clears the error */
    CHK_EQ(pa_split_decodes_and_prefills(mixed, 4, 1, &sp), PA_SUCCESS);
    CHK_EMPTY(pa_last_error());
}

/* The refusals no other test reached (scripts/refusal-coverage.py): the
 * virtual-batch count and the virtual block table one step past int32 (one
 * request of 2^31 - 1 queries: lengths only, no large buffer), and the
 * builder's NULL output arrays. Nothing is written. */
Test(local_attention, counts_past_int32_and_null_outputs) {
    int32_t table[1] = {0}, qsl[2] = {0, INT32_MAX}, seq[1] = {INT32_MAX};
    /* chunks of one token: 2^31 - 1 virtual requests */
    pa_local_attention_params p = {1, 1, 1, qsl, seq, table, 1, 0};
    expect_local_error(&p, 16, "request 0: number of virtual batches overflows int32");
    /* chunks of 2^16 one-token blocks: 2^15 virtual requests of 2^16 pages, 2^31 entries */
    p.attn_chunk_size = 1 << 16;
    expect_local_error(&p, 16, "virtual block table (32768 x 65536) overflows int32 indexing");
    /* one chunk fewer fits: 2^31 - 2^16 queries */
    int32_t nv = SENTINEL, pages = SENTINEL;
    qsl[1] = seq[0] = INT32_MAX - (1 << 16) + 1;
    CHK_EQ(pa_local_attention_size(&p, &nv, &pages), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(nv, 32767);
    CHK_EQ(pages, 65536);
    /* exactly 2^31 - 1 entries still index in int32: one request, one chunk of
     * 2^31 - 1 one-token blocks (2^31 - 1 is prime: no other split reaches it) */
    int32_t q1[2] = {0, 1}, s1[1] = {1};
    pa_local_attention_params edge = {INT32_MAX, 1, 1, q1, s1, table, 1, 0};
    nv = pages = SENTINEL;
    CHK_EQ(pa_local_attention_size(&edge, &nv, &pages), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(nv, 1);
    CHK_EQ(pages, INT32_MAX);

    int32_t t8[8] = {0, 1, 2, 3, 4, 5, 6, 7}, q2[3] = {0, 2, 5}, s2[2] = {4, 5};
    pa_local_attention_params good = {4, 2, 2, q2, s2, t8, 4, 0};
    int32_t sq[16], cu[17], sk[16], bt[64];
    for (int k = 0; k < 4; k++) {
        fill_sentinel(sq, 16);
        fill_sentinel(cu, 17);
        fill_sentinel(sk, 16);
        fill_sentinel(bt, 64);
        pa_local_attention_out o = {16, sq, cu, sk, bt, PA_LOCAL_TABLE_FULL};
        const char *want = "seqlens_q_local, seqlens_k_local and block_table_local must not be NULL";
        if (k == 0)
            o.cu_seqlens_q_local = NULL, want = "cu_seqlens_q_local is NULL";
        else if (k == 1)
            o.seqlens_q_local = NULL;
        else if (k == 2)
            o.seqlens_k_local = NULL;
        else
            o.block_table_local = NULL;
        nv = SENTINEL;
        CHK_EQ(pa_make_local_attention_virtual_batches(&good, &o, &nv), PA_ERR_INVALID_ARGUMENT, "case %d", k);
        CHK(strstr(pa_last_error(), want) != NULL, "case %d: '%s' lacks '%s'", k, pa_last_error(), want);
        CHK(all_sentinel(sq, 16) && all_sentinel(cu, 17) && all_sentinel(sk, 16) && all_sentinel(bt, 64),
            "case %d wrote", k);
        CHK_EQ(nv, SENTINEL);
    }
}
