/* libFuzzer target for the host layer: decodes the input into batches and runs
 * the validation + builders on them, checking invariants:
 *   success  -> outputs consistent (prefix sums monotonic, sums match, sizes
 *               within the declared capacity, nothing written past it);
 *   failure  -> a non-empty pa_last_error() and untouched outputs.
 * Invariants use FUZZ_CHECK (abort), not assert(): release builds define NDEBUG. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagedattn/pagedattn.h"

#if defined(__has_include)
#if __has_include("pagedattn/metadata.h")
#include "pagedattn/metadata.h"
#define FUZZ_HAVE_METADATA 1
#endif
#endif

#define FUZZ_CHECK(cond)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: invariant failed: %s (last error: '%s')\n", __FILE__, __LINE__, #cond,             \
                    pa_last_error());                                                                                  \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

#define MAXR 48
#define MAXV 2048
#define SENT ((int32_t)0x5A5A5A5A)

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t rd_u8(reader *r) {
    if (r->n == 0)
        return 0;
    r->n--;
    return *r->p++;
}

static int32_t rd_i32(reader *r) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)rd_u8(r) << (8 * i);
    return (int32_t)v;
}

/* Mostly small values, sometimes raw 32-bit ones (negative, huge). */
static int32_t rd_len(reader *r, int32_t small_max) {
    const uint8_t tag = rd_u8(r);
    if (tag < 240)
        return (int32_t)(tag % (uint32_t)(small_max + 1));
    if (tag < 250)
        return -(int32_t)(tag - 239);
    return rd_i32(r);
}

static int all_sent(const int32_t *a, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != SENT)
            return 0;
    return 1;
}

static void fill(int32_t *a, size_t n) {
    for (size_t i = 0; i < n; i++)
        a[i] = SENT;
}

/* Slot mappings are int64. */
static int all_sent64(const int64_t *a, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != SENT)
            return 0;
    return 1;
}

static void fill64(int64_t *a, size_t n) {
    for (size_t i = 0; i < n; i++)
        a[i] = SENT;
}

static void fuzz_reorder_and_split(reader *r) {
    int32_t n = rd_len(r, MAXR);
    if (n > MAXR)
        n = MAXR;
    const int32_t thr = rd_len(r, 4);
    int32_t tok[MAXR], perm[MAXR], out[MAXR];
    const int32_t cnt = n > 0 ? n : 0;
    for (int32_t i = 0; i < cnt; i++) {
        tok[i] = rd_len(r, 12);
        perm[i] = i;
    }
    fill(out, MAXR);
    int mod = -1;
    pa_status s = pa_reorder_batch_to_split_decodes_and_prefills(cnt ? tok : NULL, n, thr, NULL, NULL, perm, out, &mod);
    if (s != PA_SUCCESS) {
        FUZZ_CHECK(pa_last_error()[0] != '\0');
        FUZZ_CHECK(all_sent(out, MAXR) && mod == -1);
        for (int32_t i = 0; i < cnt; i++)
            FUZZ_CHECK(perm[i] == i);
    } else {
        FUZZ_CHECK(pa_last_error()[0] == '\0');
        FUZZ_CHECK(mod == 0 || mod == 1);
        /* perm is a permutation, out = tok permuted, decodes first */
        int seen[MAXR] = {0};
        int32_t nd = 0, moved = 0;
        for (int32_t i = 0; i < n; i++) {
            FUZZ_CHECK(perm[i] >= 0 && perm[i] < n && !seen[perm[i]]);
            seen[perm[i]] = 1;
            FUZZ_CHECK(out[i] == tok[perm[i]]);
            nd += tok[i] <= thr;
            moved += perm[i] != i;
        }
        FUZZ_CHECK(mod == (moved > 0));
        for (int32_t i = 0; i < n; i++)
            FUZZ_CHECK((out[i] <= thr) == (i < nd));
        FUZZ_CHECK(all_sent(out + n, (size_t)(MAXR - n)));
        /* split the reordered batch */
        int32_t qsl[MAXR + 1];
        qsl[0] = 0;
        for (int32_t i = 0; i < n; i++)
            qsl[i + 1] = qsl[i] + out[i];
        pa_batch_split sp;
        FUZZ_CHECK(pa_split_decodes_and_prefills(qsl, n, thr, &sp) == PA_SUCCESS);
        FUZZ_CHECK(sp.num_decodes == nd && sp.num_decodes + sp.num_prefills == n);
        FUZZ_CHECK(sp.num_decode_tokens == qsl[nd] && sp.num_decode_tokens + sp.num_prefill_tokens == qsl[n]);
    }
    /* split on the raw (maybe unordered, maybe invalid) batch */
    int32_t qsl[MAXR + 1];
    qsl[0] = rd_u8(r) == 255 ? rd_i32(r) : 0;
    for (int32_t i = 0; i < cnt; i++)
        qsl[i + 1] = (int32_t)((uint32_t)qsl[i] + (uint32_t)tok[i]);
    pa_batch_split sp = {SENT, SENT, SENT, SENT};
    s = pa_split_decodes_and_prefills(cnt ? qsl : NULL, n, thr, &sp);
    if (s != PA_SUCCESS) {
        FUZZ_CHECK(pa_last_error()[0] != '\0');
        FUZZ_CHECK(sp.num_decodes == SENT && sp.num_prefills == SENT && sp.num_decode_tokens == SENT &&
                   sp.num_prefill_tokens == SENT);
    } else {
        FUZZ_CHECK(sp.num_decodes >= 0 && sp.num_prefills >= 0 && sp.num_decodes + sp.num_prefills == n);
        for (int32_t i = 0; i < n; i++) {
            const int32_t q = qsl[i + 1] - qsl[i];
            FUZZ_CHECK(q >= 0);
            FUZZ_CHECK((q <= thr) == (i < sp.num_decodes));
        }
        FUZZ_CHECK(sp.num_decode_tokens + sp.num_prefill_tokens == (n ? qsl[n] : 0));
    }
}

static void fuzz_local_attention(reader *r) {
    static int32_t table[MAXR * 64];
    static int32_t sq[MAXV + 1], cu[MAXV + 2], sk[MAXV + 1], bt[MAXV * 16 + 16];
    int32_t n = rd_len(r, 16);
    if (n > 16)
        n = 16;
    pa_local_attention_params p;
    memset(&p, 0, sizeof p);
    p.block_size = rd_len(r, 8);
    p.attn_chunk_size = rd_len(r, 32);
    p.num_reqs = n;
    int32_t qsl[17], seq[16];
    qsl[0] = 0;
    const int32_t cnt = n > 0 ? n : 0;
    for (int32_t i = 0; i < cnt; i++) {
        const int32_t q = rd_len(r, 40);
        qsl[i + 1] = (int32_t)((uint32_t)qsl[i] + (uint32_t)q);
        seq[i] = (int32_t)((uint32_t)(q > 0 ? q : 0) + (uint32_t)rd_len(r, 60));
    }
    p.block_table_width = rd_len(r, 64);
    if (p.block_table_width > 64)
        p.block_table_width = 64;
    p.block_table_stride = (rd_u8(r) & 1) ? 64 : 0;
    for (int32_t i = 0; i < MAXR * 64; i++)
        table[i] = i;
    p.query_start_loc = qsl;
    p.seq_lens = seq;
    p.block_table = table;
    int32_t nv = SENT, pages = SENT;
    pa_status s = pa_local_attention_size(&p, &nv, &pages);
    if (s != PA_SUCCESS) {
        FUZZ_CHECK(pa_last_error()[0] != '\0' && nv == SENT && pages == SENT);
        return;
    }
    FUZZ_CHECK(nv >= cnt && pages >= 1 && (int64_t)pages * p.block_size == p.attn_chunk_size);
    if (nv > MAXV || pages > 16)
        return;
    fill(sq, MAXV + 1);
    fill(cu, MAXV + 2);
    fill(sk, MAXV + 1);
    fill(bt, MAXV * 16 + 16);
    /* sometimes too small: must fail without writing */
    const int32_t cap = (rd_u8(r) == 7 && nv > 0) ? nv - 1 : nv;
    pa_local_attention_out o = {cap, sq, cu, sk, bt};
    int32_t got = SENT;
    s = pa_make_local_attention_virtual_batches(&p, &o, &got);
    if (cap < nv) {
        FUZZ_CHECK(s == PA_ERR_INVALID_ARGUMENT && pa_last_error()[0] != '\0');
        FUZZ_CHECK(got == SENT && all_sent(cu, MAXV + 2) && all_sent(sq, MAXV + 1));
        return;
    }
    FUZZ_CHECK(s == PA_SUCCESS && got == nv);
    FUZZ_CHECK(cu[0] == 0 && sq[nv] == SENT && cu[nv + 1] == SENT && sk[nv] == SENT);
    FUZZ_CHECK(bt[(int64_t)nv * pages] == SENT);
    const int32_t stride = p.block_table_stride ? p.block_table_stride : p.block_table_width;
    int32_t v = 0;
    for (int32_t i = 0; i < n; i++) {
        const int32_t q = qsl[i + 1] - qsl[i];
        int32_t qsum = 0;
        const int32_t first = v;
        /* the request's virtual batches: q's sum to q, k's are full chunks but the last */
        do {
            FUZZ_CHECK(v < nv);
            FUZZ_CHECK(cu[v + 1] - cu[v] == sq[v]);
            FUZZ_CHECK(sq[v] >= 0 && sq[v] <= p.attn_chunk_size && sq[v] <= sk[v]);
            FUZZ_CHECK(sk[v] >= 1 && sk[v] <= p.attn_chunk_size);
            for (int32_t j = 0; j < pages; j++) {
                const int32_t b = bt[(int64_t)v * pages + j];
                FUZZ_CHECK(b >= i * stride && b < i * stride + p.block_table_width);
            }
            qsum += sq[v];
            v++;
        } while (qsum < q);
        for (int32_t w = first; w < v - 1; w++)
            FUZZ_CHECK(sk[w] == p.attn_chunk_size);
        FUZZ_CHECK(qsum == q);
        /* keys of the last chunk end at seq_len */
        FUZZ_CHECK((seq[i] - sk[v - 1]) % p.attn_chunk_size == 0);
    }
    FUZZ_CHECK(v == nv);
    FUZZ_CHECK(cu[nv] == (n ? qsl[n] : 0));
}

static void fuzz_heuristics(reader *r) {
    const int32_t a = rd_len(r, 20000), b = rd_len(r, 600), c = rd_len(r, 128), d = rd_len(r, 16);
    const int32_t e = rd_len(r, 300), f = rd_len(r, 256);
    pa_decode_plan pl;
    memset(&pl, 0x5A, sizeof pl);
    if (pa_decode_make_plan(b, c, d, e, f, a, &pl) == PA_SUCCESS) {
        FUZZ_CHECK(pl.use_v1 == pa_decode_use_v1(a, b, c));
        FUZZ_CHECK(pl.max_num_partitions == ((int64_t)a + 511) / 512);
        FUZZ_CHECK(pl.use_v1 ? pl.tmp_out_elems == 0 : pl.tmp_out_elems == pl.exp_sums_elems * e);
    } else {
        FUZZ_CHECK(pa_last_error()[0] != '\0' && pl.use_v1 == SENT);
    }
    int32_t ps = SENT;
    const int64_t L = (int64_t)rd_i32(r) * (rd_u8(r) & 1 ? 1 : 4096);
    if (pa_get_page_size(L, &ps) == PA_SUCCESS)
        FUZZ_CHECK(ps >= 16 && ps <= 256 && (ps & (ps - 1)) == 0);
    else
        FUZZ_CHECK(ps == SENT && pa_last_error()[0] != '\0');
    int32_t mp = SENT;
    if (pa_cuda_min_page_size(L, b, (size_t)(uint32_t)rd_i32(r), &mp) == PA_SUCCESS)
        FUZZ_CHECK(mp >= 1 && (mp & (mp - 1)) == 0);
    else
        FUZZ_CHECK(mp == SENT && pa_last_error()[0] != '\0');
    int64_t dims[PA_MAX_SHAPE_RANK];
    int32_t rank = SENT;
    const pa_kv_layout lay = (pa_kv_layout)(rd_u8(r) % 5);
    const pa_dtype dt = (pa_dtype)(rd_u8(r) % 6);
    const pa_kv_shape_part part = (pa_kv_shape_part)(rd_u8(r) % 4);
    if (pa_kv_cache_shape(lay, dt, rd_len(r, 100), d, c, e, part, dims, &rank) == PA_SUCCESS) {
        FUZZ_CHECK(rank >= 3 && rank <= PA_MAX_SHAPE_RANK);
        for (int i = 0; i < rank; i++)
            FUZZ_CHECK(dims[i] > 0);
    } else {
        FUZZ_CHECK(rank == SENT && pa_last_error()[0] != '\0');
    }
}

#ifdef FUZZ_HAVE_METADATA
static void fuzz_common_metadata(reader *r) {
    static int32_t comp[MAXR], sched[MAXR], table[MAXR * 32];
    static int32_t qsl[MAXR + 2], seq[MAXR + 1], ncomp[MAXR + 1];
    static int64_t slots[4096];
    int32_t n = rd_len(r, MAXR);
    if (n > MAXR)
        n = MAXR;
    const int32_t cnt = n > 0 ? n : 0;
    pa_batch b;
    memset(&b, 0, sizeof b);
    b.num_reqs = n;
    b.block_size = rd_len(r, 16);
    b.block_table_stride = rd_len(r, 32);
    if (b.block_table_stride > 32)
        b.block_table_stride = 32;
    for (int32_t i = 0; i < cnt; i++) {
        comp[i] = rd_len(r, 100);
        sched[i] = rd_len(r, 40);
    }
    for (int32_t i = 0; i < MAXR * 32; i++)
        table[i] = (rd_u8(r) == 3) ? -1 : i;
    b.num_computed_tokens = comp;
    b.num_scheduled_tokens = sched;
    b.block_table = table;
    pa_common_metadata c;
    memset(&c, 0, sizeof c);
    fill(qsl, MAXR + 2);
    fill(seq, MAXR + 1);
    fill(ncomp, MAXR + 1);
    fill64(slots, 4096);
    c.query_start_loc = qsl;
    c.seq_lens = seq;
    c.num_computed_tokens = ncomp;
    c.slot_mapping = slots;
    c.slot_mapping_capacity = 4000;
    const int32_t padded = rd_len(r, 4000);
    pa_status s = pa_build_common_metadata(&b, padded, &c);
    if (s != PA_SUCCESS) {
        FUZZ_CHECK(pa_last_error()[0] != '\0');
        FUZZ_CHECK(all_sent(qsl, MAXR + 2) && all_sent(seq, MAXR + 1) && all_sent64(slots, 4096));
        return;
    }
    FUZZ_CHECK(c.num_reqs == n && qsl[0] == 0);
    int32_t maxq = 0, maxs = 0;
    for (int32_t i = 0; i < n; i++) {
        FUZZ_CHECK(qsl[i + 1] - qsl[i] == sched[i]);
        FUZZ_CHECK((int64_t)seq[i] == (int64_t)comp[i] + sched[i]);
        maxq = sched[i] > maxq ? sched[i] : maxq;
        maxs = seq[i] > maxs ? seq[i] : maxs;
    }
    FUZZ_CHECK(c.num_actual_tokens == qsl[n] && c.max_query_len == maxq && c.max_seq_len == maxs);
    FUZZ_CHECK(c.padded_num_tokens >= c.num_actual_tokens && c.padded_num_tokens <= 4000);
    for (int32_t t = c.num_actual_tokens; t < c.padded_num_tokens; t++)
        FUZZ_CHECK(slots[t] == PA_PAD_SLOT_ID);
    FUZZ_CHECK(all_sent64(slots + c.padded_num_tokens, (size_t)(4096 - c.padded_num_tokens)));
    /* KV-update slices, field-major at the upper bound's row stride: they
     * cover the new tokens in order, one block each, zero padding after. */
    static int32_t sl[3 * 4200 + 16];
    const int32_t spb = 1 + rd_len(r, 8);
    int32_t ub = 0, ns = 0, nsp = 0;
    if (pa_kv_update_slices_upper_bound(n, c.num_actual_tokens, b.block_size, spb, &ub) == PA_SUCCESS && ub <= 4200) {
        fill(sl, (size_t)(3 * ub + 16));
        FUZZ_CHECK(pa_build_kv_update_slices(&c, spb, sl, ub, &ns, &nsp) == PA_SUCCESS);
        FUZZ_CHECK(ns <= nsp && nsp <= ub && nsp % spb == 0);
        int64_t covered = 0;
        for (int32_t i = 0; i < ub; i++) {
            const int32_t kv0 = sl[i], nk = sl[ub + i], len = sl[2 * ub + i];
            if (i >= ns) {
                FUZZ_CHECK(kv0 == 0 && nk == 0 && len == 0);
                continue;
            }
            FUZZ_CHECK(len >= 1 && len <= b.block_size && kv0 % b.block_size + len <= b.block_size);
            FUZZ_CHECK(nk == covered && kv0 == slots[nk] && kv0 + len - 1 == slots[nk + len - 1]);
            covered += len;
        }
        FUZZ_CHECK(covered == c.num_actual_tokens);
        FUZZ_CHECK(all_sent(sl + 3 * ub, 16));
    }
    /* then split the batch the metadata describes (may be unordered) */
    pa_batch_split sp;
    if (pa_split_decodes_and_prefills(qsl, n, 1, &sp) == PA_SUCCESS)
        FUZZ_CHECK(sp.num_decode_tokens + sp.num_prefill_tokens == c.num_actual_tokens);
    else
        FUZZ_CHECK(pa_last_error()[0] != '\0');
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size};
    const uint8_t which = rd_u8(&r);
    switch (which % 4) {
    case 0: fuzz_reorder_and_split(&r); break;
    case 1: fuzz_local_attention(&r); break;
    case 2: fuzz_heuristics(&r); break;
    case 3:
#ifdef FUZZ_HAVE_METADATA
        fuzz_common_metadata(&r);
#else
        fuzz_reorder_and_split(&r);
#endif
        break;
    }
    return 0;
}
