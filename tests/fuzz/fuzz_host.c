/* libFuzzer target for the host layer: decodes the input into batches, cache
 * descriptors and op parameters, and runs the validators, builders and CPU
 * references on them, checking:
 *   heuristics -> exact values of the documented formulas (heuristics.h);
 *   kv caches  -> accepted iff kv_cache.h's written definition says valid,
 *                 with the element count it gives;
 *   ops (decode, context prefill, prompt, mixed, ragged, reshape_and_cache,
 *       kv_cache_update, swap/copy blocks, merge_attn_states, convert)
 *            -> accepted implies the CPU reference ran on buffers
 *                 sized from the headers' shapes (ASan/UBSan watch every
 *                 access); rejected implies every output byte untouched;
 *   success  -> outputs consistent (prefix sums monotonic, sums match, sizes
 *               within the declared capacity, nothing written past it);
 *   failure  -> a non-empty pa_last_error() and untouched outputs.
 * Invariants use FUZZ_CHECK (abort), not assert(): release builds define NDEBUG. */
#include <math.h>
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

/* rd_len for a small_max of 240 or more: its small branch takes two bytes, so
 * it reaches the whole range (rd_len's one byte stops at 239). */
static int32_t rd_len_wide(reader *r, int32_t small_max) {
    const uint8_t tag = rd_u8(r);
    if (tag < 240)
        return (int32_t)(((uint32_t)tag | (uint32_t)rd_u8(r) << 8) % (uint32_t)(small_max + 1));
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
    const int32_t fill = (rd_u8(r) & 1) ? PA_LOCAL_TABLE_USED : PA_LOCAL_TABLE_FULL;
    pa_local_attention_out o = {cap, sq, cu, sk, bt, fill};
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
            /* PA_LOCAL_TABLE_USED: the pages of the virtual batch's keys only */
            const int32_t used = fill == PA_LOCAL_TABLE_USED ? (sk[v] + p.block_size - 1) / p.block_size : pages;
            for (int32_t j = 0; j < pages; j++) {
                const int32_t b = bt[(int64_t)v * pages + j];
                if (j < used)
                    FUZZ_CHECK(b >= i * stride && b < i * stride + p.block_table_width);
                else
                    FUZZ_CHECK(b == SENT);
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

/* ---- validators of the ops: accepted -> the CPU reference runs on buffers
 * sized from the headers' written shapes (ASan/UBSan watch every access);
 * rejected -> a message and every output byte as it was. ------------------- */

#define OP_LIMIT ((int64_t)1 << 18) /* largest buffer (elements) a case allocates */
#define SENT_BYTE 0x5A

/* Deterministic values from a seed read from the input, so big tables cost
 * four input bytes, not one per entry. */
typedef struct prng {
    uint64_t s;
} prng;
static uint64_t pr_next(prng *g) {
    uint64_t z = (g->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* uniform in [lo, hi] (hi >= lo, both small) */
static int64_t pr_range(prng *g, int64_t lo, int64_t hi) {
    return lo + (int64_t)(pr_next(g) % (uint64_t)(hi - lo + 1));
}

static int esize(int dt) {
    switch (dt) {
    case PA_DTYPE_F32: return 4;
    case PA_DTYPE_F16:
    case PA_DTYPE_BF16: return 2;
    case PA_DTYPE_FP8_E4M3:
    case PA_DTYPE_FP8_E5M2: return 1;
    }
    return 0;
}

/* A buffer of n elements of e bytes, sentinel-filled; NULL when n is out of
 * [0, OP_LIMIT] (the case is then too big to run, or nonsense). */
static void *sent_buf(int64_t n, int e) {
    if (n < 0 || n > OP_LIMIT || e <= 0)
        return NULL;
    void *p = malloc((size_t)(n * e) + 1); /* +1: malloc(0) */
    if (p)
        memset(p, SENT_BYTE, (size_t)(n * e) + 1);
    return p;
}
static int untouched(const void *p, size_t bytes) {
    const unsigned char *b = p;
    for (size_t i = 0; i < bytes; i++)
        if (b[i] != SENT_BYTE)
            return 0;
    return 1;
}

/* An int32 field: mostly small, sometimes 0, negative or raw. */
static int32_t rd_field(reader *r, int32_t small_max) { return rd_len(r, small_max); }

/* A stride: mostly 0 (contiguous), sometimes small, sometimes raw 64-bit. */
static int64_t rd_stride(reader *r) {
    const uint8_t t = rd_u8(r);
    if (t < 170)
        return 0;
    if (t < 240)
        return (int64_t)(t - 170) - 4;
    const int64_t hi = rd_i32(r), lo = (uint32_t)rd_i32(r);
    return (int64_t)(((uint64_t)hi << 32) | (uint64_t)lo);
}

/* An lse layout (decode.h, prefill.h) by the harness's own arithmetic: (h, t)
 * at h * hs + t * ts floats, a 0 stride taking its default (token 1, head
 * `tokens`); n: the floats a buffer needs for it plus one past, `fallback`
 * when a stride is negative (refused) or there is no element, INT64_MAX
 * beyond any buffer; neg: a stride was given negative. */
typedef struct lse_lay {
    int64_t hs, ts, n;
    int neg;
} lse_lay;
/* Draws the strides into *hs and *ts when `draw` (else leaves them as they
 * are) and gives their layout over heads x tokens. */
static lse_lay lse_draw(reader *r, int draw, int64_t heads, int64_t tokens, int64_t *hs, int64_t *ts,
                        int64_t fallback) {
    if (draw) {
        *hs = rd_stride(r);
        *ts = rd_stride(r);
    }
    lse_lay l = {*hs ? *hs : (tokens > 0 ? tokens : 1), *ts ? *ts : 1, fallback, *hs < 0 || *ts < 0};
    if (l.neg || heads <= 0 || tokens <= 0)
        return l;
    const __int128 last = (__int128)(heads - 1) * l.hs + (__int128)(tokens - 1) * l.ts;
    l.n = last + 2 > OP_LIMIT ? INT64_MAX : (int64_t)last + 2;
    return l;
}
/* Whether the library may accept l: no stride negative, and distinct (h, t)
 * pairs on distinct floats. */
static int lse_acceptable(const lse_lay *l, int64_t heads, int64_t tokens) {
    return !l->neg && (heads <= 1 || tokens <= 1 || (__int128)l->hs >= (__int128)l->ts * tokens ||
                       (__int128)l->ts >= (__int128)l->hs * heads);
}
/* Whether l's last element lies 2^61 floats or more in (its byte offset past
 * int64; decode.h): the library refuses such a layout, as it would a whole
 * call's layout of which a part's is cut. */
static int lse_too_far(const lse_lay *l, int64_t heads, int64_t tokens) {
    if (l->neg || heads <= 0 || tokens <= 0)
        return 0;
    return (__int128)(heads - 1) * l->hs + (__int128)(tokens - 1) * l->ts >= (__int128)(INT64_MAX / 4);
}
/* After a call that succeeded: every other float of buf's n untouched, and
 * with `all`, every (h, t) of the layout written. */
static int lse_placed(const void *buf, const lse_lay *l, int64_t heads, int64_t tokens, int all) {
    unsigned char *mine = calloc((size_t)l->n + 1, 1);
    int ok = mine != NULL;
    for (int64_t h = 0; ok && h < heads; h++)
        for (int64_t t = 0; ok && t < tokens; t++) {
            const int64_t i = h * l->hs + t * l->ts;
            mine[i] = 1;
            ok = !all || !untouched((const char *)buf + i * 4, 4);
        }
    for (int64_t i = 0; ok && i < l->n; i++)
        ok = mine[i] || untouched((const char *)buf + i * 4, 4);
    free(mine);
    return ok;
}

/* An attention case's lse output (decode.h, prefill.h, ragged.h) over heads x
 * tokens: its layout (the strides drawn into *hs and *ts when `draw`); with
 * `give`, a buffer of sentinels for it (*buf, the caller frees it) and the
 * pointer the call gets (*ptr): 2 bytes into the buffer (`misalign`), `over`
 * (a buffer the call must refuse it over; NULL: none), else the buffer.
 * Returns 0 when `give` but no buffer can hold the layout: *ptr is then a
 * dummy, for validation alone (nothing may be written). */
static int lse_case(reader *r, int draw, int give, int misalign, void *over, int64_t heads, int64_t tokens, int64_t *hs,
                    int64_t *ts, lse_lay *ll, float **buf, float **ptr) {
    *ll = lse_draw(r, draw, heads, tokens, hs, ts, (heads > 0 ? heads * tokens : 0) + 1);
    if (give && ll->n == INT64_MAX) {
        static float dummy[4];
        *ptr = dummy;
        return 0;
    }
    if (give)
        *buf = sent_buf(ll->n, 4);
    if (*buf)
        *ptr = misalign ? (float *)((char *)*buf + 2) : over ? (float *)over : *buf;
    return 1;
}

static pa_dtype rd_dtype(reader *r) {
    const uint8_t t = rd_u8(r);
    return t < 250 ? (pa_dtype)(t % 5) : (pa_dtype)(int32_t)(t - 245); /* 5..10: unknown */
}

/* kv_cache.h's written definition of a valid descriptor and its buffer size
 * (elements spanning the strides), independent of csrc/core/kv_cache.c:
 *   vllm   key [nb, kvh, head/x, block, x], value [nb, kvh, head, block], x = 16 / elt
 *   nhd    [nb, block, kvh, head], strides block > page > head >= head_size, no overlap
 *   hnd    [nb, kvh, block, head], strides block > head > page >= head_size, no overlap
 *   combined [nb, block, 2*kvh, head], one buffer (value NULL or == key)
 * Returns 1 with *elems set when valid (sizes in bytes within int64), else 0. */
static int kv_spec(const pa_kv_cache *c, int64_t *elems) {
    const int e = esize((int)c->dtype);
    if ((int)c->layout < 0 || (int)c->layout > 3 || e == 0)
        return 0;
    if (c->num_blocks <= 0 || c->block_size <= 0 || c->num_kv_heads <= 0 || c->head_size <= 0 || c->key == NULL)
        return 0;
    if (c->scales_per_head != 0 && c->scales_per_head != 1)
        return 0;
    const __int128 nb = c->num_blocks, bs = c->block_size, kvh = c->num_kv_heads, hs = c->head_size;
    __int128 n;
    if (c->layout == PA_LAYOUT_COMBINED) {
        if (c->value != NULL && c->value != c->key)
            return 0;
        if (c->block_stride || c->page_stride || c->head_stride)
            return 0;
        n = nb * bs * 2 * kvh * hs;
    } else if (c->layout == PA_LAYOUT_VLLM) {
        if (c->value == NULL || c->head_size % (16 / e) != 0)
            return 0;
        if (c->block_stride || c->page_stride || c->head_stride)
            return 0;
        n = nb * kvh * hs * bs;
    } else {
        if (c->value == NULL || c->block_stride < 0 || c->page_stride < 0 || c->head_stride < 0)
            return 0;
        __int128 hstr, pstr, bstr;
        /* each contiguous extent (what a zero stride stands for, and what an
         * explicit one must reach) must fit in int64 */
        const __int128 big = INT64_MAX;
        /* kv_cache.h: the stride of a dimension of size 1 reads as the contiguous value */
        const int64_t head_in = kvh == 1 ? 0 : c->head_stride, page_in = bs == 1 ? 0 : c->page_stride;
        if (c->layout == PA_LAYOUT_FLASH_NHD) {
            hstr = head_in ? head_in : hs;
            if (hstr < hs || kvh * hstr > big)
                return 0;
            pstr = page_in ? page_in : kvh * hstr;
            if (pstr < kvh * hstr || bs * pstr > big)
                return 0;
            bstr = c->block_stride ? c->block_stride : bs * pstr;
            if (bstr < bs * pstr)
                return 0;
        } else {
            pstr = page_in ? page_in : hs;
            if (pstr < hs || bs * pstr > big)
                return 0;
            hstr = head_in ? head_in : bs * pstr;
            if (hstr < bs * pstr || kvh * hstr > big)
                return 0;
            bstr = c->block_stride ? c->block_stride : kvh * hstr;
            if (bstr < kvh * hstr)
                return 0;
        }
        /* every intermediate of the span fits (strides < 2^63, counts < 2^31) */
        n = (nb - 1) * bstr + (bs - 1) * pstr + (kvh - 1) * hstr + hs;
    }
    if (n * e > (__int128)INT64_MAX)
        return 0;
    *elems = (int64_t)n;
    return 1;
}

/* A cache descriptor from the input. small: sizes a case can allocate. */
static void rd_cache(reader *r, pa_kv_cache *c, int small) {
    static const int32_t heads[] = {8, 16, 32, 64, 24, 40, 128, 256, 80, 112};
    memset(c, 0, sizeof *c);
    const uint8_t l = rd_u8(r);
    c->layout = (pa_kv_layout)(l < 250 ? l % 4 : (int32_t)l - 260);
    c->dtype = rd_dtype(r);
    c->num_blocks = rd_field(r, small ? 6 : 40);
    c->block_size = rd_u8(r) < 200 ? (1 << (rd_u8(r) % 5)) : rd_field(r, 20);
    c->num_kv_heads = rd_field(r, small ? 2 : 8);
    c->head_size = rd_u8(r) < 230 ? heads[rd_u8(r) % 10] : rd_field(r, 300);
    if (c->layout == PA_LAYOUT_FLASH_NHD || c->layout == PA_LAYOUT_FLASH_HND || rd_u8(r) == 9) {
        c->block_stride = rd_stride(r);
        c->page_stride = rd_stride(r);
        c->head_stride = rd_stride(r);
    }
}

/* fp8 scales from one byte b (no byte more than before them): bit 0 attaches
 * them, ks[0] and vs[0]; with bits 1 and 2 set too, one per KV head (scales_per_head
 * 1, every head's the same values) where the head count fits MAX_SCALES; b 0xFF
 * sets scales_per_head 2, which kv_cache.h refuses. Returns whether
 * scales_per_head is valid (kv_spec's rule). */
enum { MAX_SCALES = 64 };
static int attach_scales(pa_kv_cache *c, uint8_t b, float *ks, float *vs) {
    if (!(b & 1))
        return 1;
    c->k_scale = ks;
    c->v_scale = vs;
    if (b == 0xFF) {
        c->scales_per_head = 2;
    } else if ((b & 6) == 6 && c->num_kv_heads >= 1 && c->num_kv_heads <= MAX_SCALES) {
        for (int h = 1; h < c->num_kv_heads; h++)
            ks[h] = ks[0], vs[h] = vs[0];
        c->scales_per_head = 1;
    }
    return c->scales_per_head == 0 || c->scales_per_head == 1;
}

/* The cache writes' per-head scales differ head by head (attach_scales gives
 * every head the same), so a write that takes another head's scale, or the
 * other scale, shows. A product past FLT_MAX makes a scale the ops refuse. */
static void vary_head_scales(const pa_kv_cache *c, float *ks, float *vs) {
    for (int h = 1; c->scales_per_head == 1 && h < c->num_kv_heads; h++)
        ks[h] = ks[0] * (1.0f + 0.125f * (float)(h % 8)), vs[h] = vs[0] * (1.0f + 0.375f * (float)(h % 5));
}

/* The element a cache write stores for input element x of dtype it, by
 * kv_cache.h's definition: its bytes where the dtypes match, else
 * sat(x / scale) in the cache's fp8 (scale: NULL is 1, one float, or head h's
 * with scales_per_head). */
static float elem_as_float(pa_dtype t, const unsigned char *b, int64_t i);
static void float_as_elem(pa_dtype t, float f, unsigned char *b);
static void cache_elem_of(const pa_kv_cache *c, const float *scale, int64_t h, pa_dtype it, const unsigned char *in,
                          int64_t i, unsigned char *out) {
    if (it == c->dtype) {
        memcpy(out, in + i * esize((int)it), (size_t)esize((int)it));
        return;
    }
    const float s = scale ? scale[c->scales_per_head ? h : 0] : 1.0f;
    float_as_elem(c->dtype, elem_as_float(it, in, i) / s, out);
}

/* Buffers for c (sentinel-filled) when it is valid and small; else dummies a
 * rejected call must not write. Returns the bytes of each buffer. */
/* A valid cache too big to allocate: the case is skipped (a call that
 * accepted it would rightly read past the dummy buffers). */
static int too_big(int spec_ok, int64_t elems) { return spec_ok && elems > OP_LIMIT; }

static size_t attach_cache(pa_kv_cache *c, void **k, void **v, int spec_ok, int64_t elems) {
    const int e = esize((int)c->dtype) ? esize((int)c->dtype) : 1;
    size_t bytes = 16;
    *k = *v = NULL;
    if (spec_ok && elems <= OP_LIMIT) {
        bytes = (size_t)elems * (size_t)e;
        *k = sent_buf(elems, e);
        *v = c->layout == PA_LAYOUT_COMBINED ? NULL : sent_buf(elems, e);
    } else {
        *k = sent_buf(16, 1);
        *v = c->layout == PA_LAYOUT_COMBINED ? NULL : sent_buf(16, 1);
    }
    c->key = *k;
    c->value = *v;
    return bytes;
}

/* Cache contents: finite values in every dtype (0x3C bytes), so a reference
 * that runs computes numbers; sentinel elsewhere is for the reject checks. */
static void fill_cache_values(void *k, void *v, size_t bytes) {
    if (k)
        memset(k, 0x3C, bytes);
    if (v)
        memset(v, 0x3C, bytes);
}

static float rd_float(reader *r) {
    const uint8_t t = rd_u8(r);
    if (t < 200)
        return (float)t / 64.0f;
    if (t < 220)
        return -(float)(t - 199);
    if (t < 230)
        return NAN;
    if (t < 240)
        return INFINITY;
    uint32_t u = (uint32_t)rd_i32(r);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void fuzz_kv_cache(reader *r) {
    pa_kv_cache c;
    rd_cache(r, &c, 0);
    static unsigned char dummy[2];
    c.key = rd_u8(r) == 1 ? NULL : dummy;
    c.value = c.layout == PA_LAYOUT_COMBINED ? (rd_u8(r) == 1 ? dummy + 1 : NULL) : (rd_u8(r) == 1 ? NULL : dummy);
    int64_t want = 0;
    const int ok = kv_spec(&c, &want);
    const pa_status s = pa_kv_cache_validate(&c);
    if (s != PA_SUCCESS)
        FUZZ_CHECK(pa_last_error()[0] != '\0');
    FUZZ_CHECK((s == PA_SUCCESS) == ok);
    int64_t ke = -7, ve = -7;
    const pa_status s2 = pa_kv_cache_elements(&c, &ke, &ve);
    FUZZ_CHECK((s2 == PA_SUCCESS) == ok);
    if (ok) {
        FUZZ_CHECK(ke == want);
        FUZZ_CHECK(ve == (c.layout == PA_LAYOUT_COMBINED ? 0 : want));
    } else {
        FUZZ_CHECK(ke == -7 && ve == -7 && pa_last_error()[0] != '\0');
    }
}

/* Element offset of (block, slot o, KV head h, dim d) of the key (v 0) or
 * value (v 1) buffer of a cache kv_spec accepted, from kv_cache.h's layouts
 * (combined: V at the odd combined heads of `key`). */
static int64_t kv_elem(const pa_kv_cache *c, int v, int64_t blk, int64_t o, int64_t h, int64_t d) {
    const int64_t bs = c->block_size, kvh = c->num_kv_heads, hs = c->head_size;
    if (c->layout == PA_LAYOUT_COMBINED)
        return ((blk * bs + o) * 2 * kvh + 2 * h + v) * hs + d;
    if (c->layout == PA_LAYOUT_VLLM) {
        const int64_t x = 16 / esize((int)c->dtype);
        return v ? ((blk * kvh + h) * hs + d) * bs + o : (((blk * kvh + h) * (hs / x) + d / x) * bs + o) * x + d % x;
    }
    const int64_t head_in = kvh == 1 ? 0 : c->head_stride, page_in = bs == 1 ? 0 : c->page_stride;
    int64_t hstr, pstr;
    if (c->layout == PA_LAYOUT_FLASH_NHD) {
        hstr = head_in ? head_in : hs;
        pstr = page_in ? page_in : kvh * hstr;
    } else {
        pstr = page_in ? page_in : hs;
        hstr = head_in ? head_in : bs * pstr;
    }
    const int64_t bstr = c->block_stride ? c->block_stride : c->layout == PA_LAYOUT_FLASH_NHD ? bs * pstr : kvh * hstr;
    return blk * bstr + o * pstr + h * hstr + d;
}

/* reshape_and_cache: new K/V views [num_tokens, kvh, head] with strides, slots. */
static void fuzz_reshape_and_cache(reader *r) {
    pa_kv_cache c;
    rd_cache(r, &c, 1);
    void *kc, *vc;
    int64_t ce = 0;
    c.key = (void *)1; /* for kv_spec's NULL test only */
    c.value = c.layout == PA_LAYOUT_COMBINED ? NULL : (void *)1;
    const int cok = kv_spec(&c, &ce);
    const size_t cbytes = attach_cache(&c, &kc, &vc, cok, ce);
    void *kin = NULL, *vin = NULL;
    float ks[MAX_SCALES], vs[MAX_SCALES];
    ks[0] = rd_float(r);
    vs[0] = rd_float(r);
    const int sok = attach_scales(&c, rd_u8(r), ks, vs);
    vary_head_scales(&c, ks, vs);
    pa_kv_input in;
    memset(&in, 0, sizeof in);
    in.dtype = rd_dtype(r);
    in.num_tokens = rd_field(r, 12);
    in.key_token_stride = rd_stride(r);
    in.key_head_stride = rd_stride(r);
    in.value_token_stride = rd_stride(r);
    in.value_head_stride = rd_stride(r);
    prng g = {(uint32_t)rd_i32(r)};
    const int ie = esize((int)in.dtype) ? esize((int)in.dtype) : 1;
    if (too_big(cok, ce) || in.num_tokens > 64)
        goto done; /* too big to run */
    /* input view sizes from the header: (nt-1)*token_stride + (kvh-1)*head_stride + head */
    for (int w = 0; w < 2; w++) {
        const int64_t ts = w ? in.value_token_stride : in.key_token_stride;
        const int64_t hstr = w ? in.value_head_stride : in.key_head_stride;
        __int128 need = 16;
        if (in.num_tokens > 0 && c.num_kv_heads > 0 && c.head_size > 0 && ts >= 0 && hstr >= 0) {
            const __int128 h = hstr ? hstr : c.head_size;
            const __int128 t = ts ? ts : (__int128)c.num_kv_heads * h;
            need = (in.num_tokens - 1) * t + (__int128)(c.num_kv_heads - 1) * h + c.head_size;
        }
        void *b = sent_buf(need > OP_LIMIT ? -1 : (int64_t)need, ie);
        if (b) /* K and V bytes of their own, unlike the cache's and each other's */
            for (int64_t i = 0; i < (int64_t)need * ie; i++)
                ((unsigned char *)b)[i] = (unsigned char)(0x40 + 0x30 * w + (i * 13) % 41);
        if (!b)
            b = sent_buf(16, 1); /* too big to run: a valid call would read past it, so skip below */
        if (w)
            vin = b;
        else
            kin = b;
        if (need > OP_LIMIT)
            goto done;
    }
    {
        const int64_t nt = in.num_tokens > 0 ? in.num_tokens : 0;
        int64_t slots[64 + 1];
        const int64_t nslots = (int64_t)c.num_blocks * (c.block_size > 0 ? c.block_size : 0);
        for (int64_t t = 0; t < nt; t++) {
            const uint64_t k = pr_next(&g) % 16;
            slots[t] = k == 0 ? -1 : k == 1 ? nslots : k == 2 ? -2 : pr_range(&g, 0, nslots > 0 ? nslots - 1 : 0);
            for (int64_t u = 0; u < t && k != 3; u++) /* a slot named twice (k == 3 keeps it: refused) */
                if (slots[u] == slots[t] && slots[t] >= 0)
                    slots[t] = -1;
        }
        in.key = kin;
        in.value = vin;
        unsigned char *snap_k = malloc(cbytes + 1), *snap_v = malloc(cbytes + 1);
        if (cok && ce <= OP_LIMIT)
            fill_cache_values(kc, vc, cbytes);
        memcpy(snap_k, kc, cok && ce <= OP_LIMIT ? cbytes : 16);
        if (vc)
            memcpy(snap_v, vc, cok && ce <= OP_LIMIT ? cbytes : 16);
        const pa_status s = pa_ref_reshape_and_cache(&in, rd_u8(r) == 3 ? NULL : slots, &c);
        if (s != PA_SUCCESS) {
            FUZZ_CHECK(pa_last_error()[0] != '\0');
            FUZZ_CHECK(memcmp(snap_k, kc, cok && ce <= OP_LIMIT ? cbytes : 16) == 0);
            if (vc)
                FUZZ_CHECK(memcmp(snap_v, vc, cok && ce <= OP_LIMIT ? cbytes : 16) == 0);
        } else {
            FUZZ_CHECK(cok && sok); /* accepted only a cache kv_cache.h calls valid */
            for (int64_t t = 0; t < nt; t++) {
                FUZZ_CHECK(slots[t] >= -1 && slots[t] < nslots);
                for (int64_t u = 0; u < t; u++) /* one token a slot (cache_ops.h) */
                    FUZZ_CHECK(slots[t] < 0 || slots[u] != slots[t]);
            }
            /* Where each token lands and what it holds: the snapshots with
             * every written element put in (cache_elem_of: the input's bytes,
             * or its fp8 under its head's k or v scale), then equal to the
             * caches, so a misplaced, stray or misconverted byte shows. */
            const int64_t kvh = c.num_kv_heads, hs = c.head_size, ce_sz = esize((int)c.dtype);
            for (int w = 0; w < 2; w++) {
                const int64_t hsi = w ? in.value_head_stride : in.key_head_stride;
                const int64_t tsi = w ? in.value_token_stride : in.key_token_stride;
                const int64_t hh = hsi ? hsi : hs, tt = tsi ? tsi : kvh * hh;
                const unsigned char *from = w ? vin : kin;
                const int into_v = w && c.layout != PA_LAYOUT_COMBINED;
                unsigned char *want = into_v ? snap_v : snap_k;
                for (int64_t t = 0; t < nt; t++)
                    for (int64_t h = 0; slots[t] >= 0 && h < kvh; h++)
                        for (int64_t d = 0; d < hs; d++) {
                            const int64_t at = kv_elem(&c, w, slots[t] / c.block_size, slots[t] % c.block_size, h, d);
                            cache_elem_of(&c, w ? c.v_scale : c.k_scale, h, in.dtype, from, t * tt + h * hh + d,
                                          want + at * ce_sz);
                        }
            }
            FUZZ_CHECK(memcmp(snap_k, kc, cbytes) == 0 && (!vc || memcmp(snap_v, vc, cbytes) == 0));
        }
        free(snap_k);
        free(snap_v);
    }
done:
    free(kin);
    free(vin);
    free(kc);
    free(vc);
}

/* kv_cache_update by slices into the combined layout. */
static void fuzz_kv_cache_update(reader *r) {
    pa_kv_cache c;
    rd_cache(r, &c, 1);
    if (rd_u8(r) < 230)
        c.layout = PA_LAYOUT_COMBINED;
    c.key = (void *)1;
    c.value = NULL;
    int64_t ce = 0;
    const int cok = kv_spec(&c, &ce);
    void *kc, *vc;
    const size_t cbytes = attach_cache(&c, &kc, &vc, cok, ce);
    float ks[MAX_SCALES], vs[MAX_SCALES];
    ks[0] = rd_float(r);
    vs[0] = rd_float(r);
    const int sok = attach_scales(&c, rd_u8(r), ks, vs);
    vary_head_scales(&c, ks, vs);
    const pa_dtype nd = rd_dtype(r);
    const int64_t nt = rd_field(r, 12), ts = rd_stride(r);
    const int32_t cap = rd_field(r, 8);
    int32_t live = rd_field(r, 8);
    prng g = {(uint32_t)rd_i32(r)};
    __int128 need = 16;
    if (nt > 0 && c.num_kv_heads > 0 && c.head_size > 0 && ts >= 0) {
        const __int128 row = (__int128)2 * c.num_kv_heads * c.head_size;
        need = (nt - 1) * (ts ? ts : row) + row;
    }
    const int ne = esize((int)nd) ? esize((int)nd) : 1;
    if (need > OP_LIMIT || cap > 64 || too_big(cok, ce)) {
        free(kc);
        free(vc);
        return;
    }
    void *nkv = sent_buf((int64_t)need, ne);
    for (int64_t i = 0; i < (int64_t)need * ne; i++) /* bytes of their own, unlike the cache's */
        ((unsigned char *)nkv)[i] = (unsigned char)(0x40 + (i * 13) % 41);
    int32_t slices[3 * 64 + 1];
    const int64_t rows = (int64_t)c.num_blocks * (c.block_size > 0 ? c.block_size : 0);
    for (int32_t i = 0; i < (cap > 0 ? cap : 0); i++) {
        const uint64_t k = pr_next(&g) % 12;
        slices[i] = (int32_t)(k == 0 ? -1 : k == 1 ? rows : pr_range(&g, 0, rows > 0 ? rows - 1 : 0));
        slices[cap + i] = (int32_t)(k == 2 ? -3 : pr_range(&g, 0, nt > 0 ? nt : 0));
        slices[2 * cap + i] =
            (int32_t)(k == 3 && c.block_size < INT32_MAX ? c.block_size + 1
                                                         : pr_range(&g, 0, c.block_size > 0 ? c.block_size : 1));
        for (int32_t j = 0; j < i && k != 4; j++) /* rows an earlier slice writes (k == 4 keeps them: refused) */
            if (slices[i] < (int64_t)slices[j] + slices[2 * cap + j] &&
                slices[j] < (int64_t)slices[i] + slices[2 * cap + i])
                slices[2 * cap + i] = 0;
    }
    const int sized = cok && ce <= OP_LIMIT;
    if (sized)
        fill_cache_values(kc, NULL, cbytes);
    unsigned char *snap = malloc(cbytes + 1);
    memcpy(snap, kc, sized ? cbytes : 16);
    const pa_status s =
        pa_ref_kv_cache_update(nkv, nd, nt, ts, cap > 0 ? slices : NULL, rd_u8(r) == 5 ? NULL : &live, cap, &c);
    if (s != PA_SUCCESS) {
        FUZZ_CHECK(pa_last_error()[0] != '\0');
        FUZZ_CHECK(memcmp(snap, kc, sized ? cbytes : 16) == 0);
    } else {
        FUZZ_CHECK(cok && sok && c.layout == PA_LAYOUT_COMBINED && (cap == 0 || (live >= 0 && live <= cap)));
        for (int32_t i = 0; i < live && cap > 0; i++) /* one live slice a cache row (cache_ops.h) */
            for (int32_t j = 0; j < i; j++)
                FUZZ_CHECK(slices[2 * cap + i] == 0 || slices[2 * cap + j] == 0 ||
                           slices[i] >= (int64_t)slices[j] + slices[2 * cap + j] ||
                           slices[j] >= (int64_t)slices[i] + slices[2 * cap + i]);
        /* Row new_kv_start + j into cache row kv_cache_start + j (rows of
         * 2 x kv_heads x head elements, K and V of each head in turn), and no
         * other byte: the snapshot with those rows put in (cache_elem_of: the
         * input's bytes, or its fp8 under the head's k or v scale) equals the
         * cache. */
        const int64_t crow = (int64_t)2 * c.num_kv_heads * c.head_size, ce_sz = esize((int)c.dtype);
        const int64_t nrow = ts ? ts : crow;
        for (int32_t i = 0; i < live && cap > 0; i++)
            for (int32_t j = 0; j < slices[2 * cap + i]; j++) {
                const int64_t at = ((int64_t)slices[i] + j) * crow, from = ((int64_t)slices[cap + i] + j) * nrow;
                for (int64_t e = 0; e < crow; e++) {
                    const int64_t ch = e / c.head_size; /* K of head ch / 2, or its V */
                    cache_elem_of(&c, ch & 1 ? c.v_scale : c.k_scale, ch / 2, nd, nkv, from + e,
                                  snap + (at + e) * ce_sz);
                }
            }
        FUZZ_CHECK(memcmp(snap, kc, cbytes) == 0);
    }
    free(snap);
    free(nkv);
    free(kc);
    free(vc);
}

/* swap_blocks and copy_blocks references. */
static void fuzz_block_moves(reader *r) {
    const int64_t bb = rd_u8(r) < 240 ? rd_u8(r) % 64 : rd_stride(r);
    const int64_t snb = rd_field(r, 8), dnb = rd_field(r, 8);
    int64_t np = rd_field(r, 12);
    if (np > 16)
        np = 16; /* the mapping holds 16 pairs */
    prng g = {(uint32_t)rd_i32(r)};
    int64_t map[2 * 16 + 2];
    const int64_t cnt = np > 0 ? np : 0;
    for (int64_t i = 0; i < cnt; i++) {
        const uint64_t k = pr_next(&g) % 10;
        map[2 * i] = k == 0 ? -1 : k == 1 ? snb : pr_range(&g, 0, snb > 0 ? snb - 1 : 0);
        map[2 * i + 1] = k == 2 ? dnb : k == 3 ? -5 : pr_range(&g, 0, dnb > 0 ? dnb - 1 : 0);
    }
    const int valid_sizes = bb > 0 && snb > 0 && dnb > 0;
    const __int128 sb = (__int128)bb * snb, db = (__int128)bb * dnb;
    const int64_t sbytes = valid_sizes && sb <= OP_LIMIT ? (int64_t)sb : 16;
    const int64_t dbytes = valid_sizes && db <= OP_LIMIT ? (int64_t)db : 16;
    unsigned char *src = sent_buf(sbytes, 1), *dst = sent_buf(dbytes, 1);
    /* The source's bytes differ from the destination's (the sentinel) and
     * from block to block, so a copy, a missed one and a stray write show. */
    for (int64_t i = 0; i < sbytes; i++)
        src[i] = (unsigned char)(0x60 + (i * 37 + 11) % 61);
    unsigned char *want = malloc((size_t)dbytes + 1);
    memcpy(want, dst, (size_t)dbytes + 1);
    if (valid_sizes && (sb > OP_LIMIT || db > OP_LIMIT))
        goto copy; /* too big to run */
    {
        const pa_status s = pa_ref_swap_blocks(dst, src, bb, rd_u8(r) == 1 ? NULL : map, np, snb, dnb);
        if (s != PA_SUCCESS) {
            FUZZ_CHECK(pa_last_error()[0] != '\0' && untouched(dst, (size_t)dbytes));
        } else {
            for (int64_t i = 0; i < np; i++)
                FUZZ_CHECK(map[2 * i] >= 0 && map[2 * i] < snb && map[2 * i + 1] >= 0 && map[2 * i + 1] < dnb);
            /* cache_ops.h: the pairs as if copied in order (the last into a
             * block wins); no other byte moves */
            for (int64_t i = 0; i < np; i++)
                memcpy(want + map[2 * i + 1] * bb, src + map[2 * i] * bb, (size_t)bb);
            FUZZ_CHECK(memcmp(dst, want, (size_t)dbytes + 1) == 0);
        }
    }
copy:
    free(want);
    free(src);
    free(dst);
    /* copy_blocks: layers of one buffer each (key, maybe value) */
    const int32_t layers = rd_field(r, 3);
    const int64_t numel = rd_u8(r) < 240 ? rd_u8(r) % 40 : rd_stride(r);
    const pa_dtype dt = rd_dtype(r);
    const int64_t nb = rd_field(r, 8);
    const int with_v = rd_u8(r) & 1;
    const int e = esize((int)dt) ? esize((int)dt) : 1;
    const __int128 lb = (__int128)numel * nb * e;
    if (numel > 0 && nb > 0 && lb > OP_LIMIT)
        return; /* too big to run */
    if (layers > 3)
        return; /* the pointer tables hold 3 layers */
    const int64_t lbytes = numel > 0 && nb > 0 ? (int64_t)lb : 16;
    void *kl[3] = {0}, *vl[3] = {0};
    unsigned char *kw[3] = {0}, *vw[3] = {0}; /* what each layer must hold after the call */
    const int32_t nl = layers > 0 && layers <= 3 ? layers : 0;
    for (int32_t l = 0; l < nl; l++) {
        kl[l] = sent_buf(lbytes, 1);
        vl[l] = with_v ? sent_buf(lbytes, 1) : NULL;
        /* bytes of their own in every block, key and value, layer to layer */
        for (int64_t i = 0; i < lbytes; i++) {
            ((unsigned char *)kl[l])[i] = (unsigned char)(0x60 + (i * 37 + l * 5) % 61);
            if (vl[l])
                ((unsigned char *)vl[l])[i] = (unsigned char)(0x20 + (i * 29 + l * 3) % 59);
        }
        kw[l] = malloc((size_t)lbytes);
        memcpy(kw[l], kl[l], (size_t)lbytes);
        vw[l] = malloc((size_t)lbytes);
        if (vl[l])
            memcpy(vw[l], vl[l], (size_t)lbytes);
    }
    for (int64_t i = 0; i < cnt; i++) {
        const uint64_t k = pr_next(&g) % 10;
        map[2 * i] = k == 0 ? nb : pr_range(&g, 0, nb > 0 ? nb - 1 : 0);
        map[2 * i + 1] = k == 1 ? -1 : pr_range(&g, 0, nb > 0 ? nb - 1 : 0);
        for (int64_t j = 0; j < i && k != 2; j++) /* a destination named twice (k == 2 keeps it: refused) */
            if (map[2 * j + 1] == map[2 * i + 1] && map[2 * j] != -1)
                map[2 * i + 1] = -1;
    }
    const pa_status s = pa_ref_copy_blocks(kl, with_v ? vl : NULL, layers, map, np, numel, dt, nb);
    if (s != PA_SUCCESS) {
        FUZZ_CHECK(pa_last_error()[0] != '\0');
        for (int32_t l = 0; l < nl; l++)
            FUZZ_CHECK(memcmp(kl[l], kw[l], (size_t)lbytes) == 0 &&
                       (!vl[l] || memcmp(vl[l], vw[l], (size_t)lbytes) == 0));
    } else {
        FUZZ_CHECK(nl == layers && esize((int)dt) > 0);
        for (int64_t i = 0; i < np && layers > 0; i++) /* no destination is also a source */
            for (int64_t j = 0; j < np; j++)
                FUZZ_CHECK(map[2 * i] == -1 || map[2 * i + 1] == -1 || map[2 * j] == -1 || map[2 * j + 1] == -1 ||
                           map[2 * i + 1] != map[2 * j]);
        for (int64_t i = 0; i < np && layers > 0; i++) /* no destination named twice */
            for (int64_t j = 0; j < i; j++)
                FUZZ_CHECK(map[2 * i] == -1 || map[2 * i + 1] == -1 || map[2 * j] == -1 || map[2 * j + 1] == -1 ||
                           map[2 * i + 1] != map[2 * j + 1]);
        for (int64_t i = 0; i < np && layers > 0; i++) /* a pair holding -1 is padding; no layer, no copy */
            FUZZ_CHECK(map[2 * i] == -1 || map[2 * i + 1] == -1 ||
                       (map[2 * i] >= 0 && map[2 * i] < nb && map[2 * i + 1] >= 0 && map[2 * i + 1] < nb));
        /* every layer: each pair's block copied, key and value; nothing else
         * (no destination is a source, so the order does not matter) */
        const int64_t bpb = numel * e;
        for (int32_t l = 0; l < nl; l++) {
            for (int64_t i = 0; i < np; i++)
                if (map[2 * i] != -1 && map[2 * i + 1] != -1) {
                    memcpy(kw[l] + map[2 * i + 1] * bpb, kw[l] + map[2 * i] * bpb, (size_t)bpb);
                    memcpy(vw[l] + map[2 * i + 1] * bpb, vw[l] + map[2 * i] * bpb, (size_t)bpb);
                }
            FUZZ_CHECK(memcmp(kl[l], kw[l], (size_t)lbytes) == 0 &&
                       (!vl[l] || memcmp(vl[l], vw[l], (size_t)lbytes) == 0));
        }
    }
    for (int32_t l = 0; l < nl; l++) {
        free(kl[l]);
        free(vl[l]);
        free(kw[l]);
        free(vw[l]);
    }
}

/* Shared by decode, prefill and ragged: a small cache with values, block
 * tables / lengths drawn from a seed, optional fp8 scales and ALiBi slopes. */
typedef struct attn_case {
    pa_kv_cache c;
    void *kc, *vc;
    size_t cbytes;
    int64_t ce;
    int cok;
    float ks[MAX_SCALES], vs[MAX_SCALES];
    float alibi[32];
    prng g;
} attn_case;

static void attn_cache(reader *r, attn_case *a, int combined) {
    rd_cache(r, &a->c, 1);
    if (combined && rd_u8(r) < 230)
        a->c.layout = PA_LAYOUT_COMBINED;
    if (!combined && a->c.layout == PA_LAYOUT_COMBINED && rd_u8(r) < 200)
        a->c.layout = PA_LAYOUT_FLASH_NHD;
    a->c.key = (void *)1;
    a->c.value = a->c.layout == PA_LAYOUT_COMBINED ? NULL : (void *)1;
    a->ce = 0;
    a->cok = kv_spec(&a->c, &a->ce);
    a->cbytes = attach_cache(&a->c, &a->kc, &a->vc, a->cok, a->ce);
    if (a->cok && a->ce <= OP_LIMIT)
        fill_cache_values(a->kc, a->vc, a->cbytes);
    a->ks[0] = rd_float(r);
    a->vs[0] = rd_float(r);
    a->cok = attach_scales(&a->c, rd_u8(r), a->ks, a->vs) && a->cok;
    for (int i = 0; i < 32; i++)
        a->alibi[i] = -0.25f * (float)(i + 1);
    if (rd_u8(r) == 7)
        a->alibi[rd_u8(r) % 32] = NAN;
    a->g.s = (uint32_t)rd_i32(r);
}

/* A block table [rows, stride] of ids mostly in range, sometimes -1 or nb. */
static int32_t *attn_table(attn_case *a, int64_t rows, int64_t stride) {
    if (rows <= 0 || stride <= 0 || rows * stride > 4096)
        return NULL;
    int32_t *t = malloc(sizeof(int32_t) * (size_t)(rows * stride));
    for (int64_t i = 0; i < rows * stride; i++) {
        const uint64_t k = pr_next(&a->g) % 40;
        t[i] = k == 0   ? -1
               : k == 1 ? a->c.num_blocks
                        : (int32_t)pr_range(&a->g, 0, a->c.num_blocks > 0 ? a->c.num_blocks - 1 : 0);
    }
    return t;
}

/* num_kv_heads * group, or an arbitrary value when that does not fit. */
static int32_t heads_of(int32_t kvh, int group) {
    const int64_t h = (int64_t)kvh * group;
    return h >= INT32_MIN && h <= INT32_MAX ? (int32_t)h : 7;
}

/* The attention cases fill the query, the keys, the values and the cache
 * with 0x3C bytes: where the cache's dtype is the query's and there is no
 * sink, every output row is then the mean of equal values, that value v0
 * (to the output dtype's rounding), or 0 for a row that sees no key. */
static void uniform_rows_check(pa_dtype qd, pa_dtype cd, int sinks, const void *out, int64_t n) {
    if (qd != cd || sinks)
        return;
    static const unsigned char pat[4] = {0x3C, 0x3C, 0x3C, 0x3C};
    const double v0 = pa_load_as_float(qd, pat, 0);
    for (int64_t i = 0; i < n; i++) {
        const double o = pa_load_as_float(qd, out, (size_t)i);
        FUZZ_CHECK(o == 0.0 || fabs(o - v0) <= 1e-2 * fabs(v0));
    }
}

static void fuzz_decode(reader *r) {
    attn_case a;
    attn_cache(r, &a, 0);
    pa_decode_params p;
    memset(&p, 0, sizeof p);
    p.kv = a.c;
    p.q_dtype = rd_dtype(r);
    p.num_seqs = rd_field(r, 4);
    p.num_heads = heads_of(a.c.num_kv_heads, 1 + rd_u8(r) % 4);
    if (rd_u8(r) == 3)
        p.num_heads = rd_field(r, 40);
    p.block_table_stride = rd_field(r, 8);
    p.max_seq_len = rd_field(r, 64);
    p.q_stride = rd_stride(r);
    p.scale = rd_float(r);
    p.sliding_window = rd_field(r, 40);
    p.soft_cap = rd_u8(r) < 200 ? 0.0f : rd_float(r);
    if (rd_u8(r) == 1) {
        p.bs_vert_stride = rd_field(r, 4);
        p.bs_block_size = rd_field(r, 64);
        p.bs_local_blocks = rd_field(r, 4);
        const int32_t step = rd_field(r, 3);
        p.bs_head_sliding_step = step > INT32_MIN ? step - 1 : step;
        p.tp_rank = rd_field(r, 2);
    }
    if (rd_u8(r) & 1 && p.num_heads > 0 && p.num_heads <= 32)
        p.alibi_slopes = a.alibi;
    const int qe = esize((int)p.q_dtype) ? esize((int)p.q_dtype) : 1;
    const int64_t ns = p.num_seqs > 0 ? p.num_seqs : 0;
    int32_t *bt = attn_table(&a, ns, p.block_table_stride);
    int32_t sl[8];
    for (int64_t s = 0; s < ns && s < 8; s++)
        sl[s] =
            (int32_t)pr_range(&a.g, -1, p.max_seq_len > 0 && p.max_seq_len < 100000 ? (int64_t)p.max_seq_len + 1 : 2);
    __int128 qn = 16, on = 16;
    if (ns > 0 && p.num_heads > 0 && a.c.head_size > 0 && p.q_stride >= 0) {
        const __int128 row = (__int128)p.num_heads * a.c.head_size;
        qn = (ns - 1) * (p.q_stride ? p.q_stride : row) + row;
        on = ns * row;
    }
    void *q = NULL, *out = NULL;
    float *lse = NULL;
    if (ns > 8 || qn > OP_LIMIT || on > OP_LIMIT || (ns > 0 && !bt) || too_big(a.cok, a.ce) ||
        (__int128)p.max_seq_len * (p.num_heads > 0 ? p.num_heads : 1) * ns > 20000)
        goto done;
    q = sent_buf((int64_t)qn, qe);
    memset(q, 0x3C, (size_t)qn * (size_t)qe);
    out = sent_buf((int64_t)on, qe);
    p.query = q;
    p.out = out;
    p.block_tables = bt;
    p.seq_lens = ns ? sl : NULL;
    /* the lse output: sometimes misaligned, over the output or over the query;
     * sometimes in a layout of drawn strides */
    const uint8_t extra = rd_u8(r);
    lse_lay ll;
    if (!lse_case(r, extra & 16, extra & 1, extra & 2,
                  extra & 4   ? out
                  : extra & 8 ? q
                              : NULL,
                  p.num_heads, ns, &p.lse_head_stride, &p.lse_token_stride, &ll, &lse, &p.lse)) {
        if (pa_decode_validate(&p) == PA_SUCCESS)
            FUZZ_CHECK(lse_acceptable(&ll, p.num_heads, ns));
        goto done;
    }
    {
        const pa_status s = pa_ref_paged_decode(&p);
        if (s != PA_SUCCESS) {
            FUZZ_CHECK(pa_last_error()[0] != '\0' && untouched(out, (size_t)on * (size_t)qe) &&
                       (!lse || untouched(lse, (size_t)ll.n * 4)));
        } else {
            FUZZ_CHECK(a.cok && pa_decode_validate(&p) == PA_SUCCESS);
            FUZZ_CHECK(lse_acceptable(&ll, p.num_heads, ns));
            for (int64_t s2 = 0; s2 < ns; s2++)
                FUZZ_CHECK(sl[s2] >= 1 && sl[s2] <= p.max_seq_len);
            /* every head's lse written (no longer the sentinel), nothing else */
            if (lse && p.lse == lse)
                FUZZ_CHECK(lse_placed(lse, &ll, p.num_heads, ns, 1));
            uniform_rows_check(p.q_dtype, p.kv.dtype, 0, out, ns > 0 ? (int64_t)on : 0); /* (on is 16 for none) */
        }
    }
done:
    free(lse);
    free(q);
    free(out);
    free(bt);
    free(a.kc);
    free(a.vc);
}

static void fuzz_context(reader *r) {
    attn_case a;
    attn_cache(r, &a, 0);
    pa_context_attention_params p;
    memset(&p, 0, sizeof p);
    p.kv = a.c;
    p.q_dtype = rd_dtype(r);
    p.num_seqs = rd_field(r, 4);
    p.num_heads = heads_of(a.c.num_kv_heads, 1 + rd_u8(r) % 3);
    if (rd_u8(r) == 3)
        p.num_heads = rd_field(r, 40);
    p.block_table_stride = rd_field(r, 8);
    p.num_tokens = rd_field(r, 24);
    p.max_query_len = rd_field(r, 16);
    p.max_seq_len = rd_field(r, 48);
    p.q_stride = rd_stride(r);
    p.k_stride = rd_stride(r);
    p.v_stride = rd_stride(r);
    p.scale = rd_float(r);
    p.sliding_window = rd_field(r, 20);
    p.soft_cap = rd_u8(r) < 200 ? 0.0f : rd_float(r);
    if (rd_u8(r) & 1 && p.num_heads > 0 && p.num_heads <= 32)
        p.alibi_slopes = a.alibi;
    const int qe = esize((int)p.q_dtype) ? esize((int)p.q_dtype) : 1;
    const int64_t ns = p.num_seqs > 0 ? p.num_seqs : 0;
    int32_t *bt = attn_table(&a, ns, p.block_table_stride);
    int32_t qsl[9], sl[8];
    qsl[0] = rd_u8(r) == 2 ? -1 : 0;
    for (int64_t s = 0; s < ns && s < 8; s++) {
        qsl[s + 1] = qsl[s] + (int32_t)pr_range(&a.g, pr_next(&a.g) % 20 == 0 ? -1 : 0, 6);
        sl[s] = qsl[s + 1] - qsl[s] + (int32_t)pr_range(&a.g, pr_next(&a.g) % 20 == 0 ? -1 : 0, 24);
    }
    const int64_t nt = p.num_tokens > 0 ? p.num_tokens : 0;
    __int128 qn = 16, kn = 16, vn = 16, on = 16;
    const int64_t hs = a.c.head_size, kvh = a.c.num_kv_heads;
    if (nt > 0 && p.num_heads > 0 && hs > 0 && kvh > 0 && p.q_stride >= 0 && p.k_stride >= 0 && p.v_stride >= 0) {
        const __int128 qrow = (__int128)p.num_heads * hs, krow = (__int128)kvh * hs;
        qn = (nt - 1) * (p.q_stride ? p.q_stride : qrow) + qrow;
        kn = (nt - 1) * (p.k_stride ? p.k_stride : krow) + krow;
        vn = (nt - 1) * (p.v_stride ? p.v_stride : krow) + krow;
        on = nt * qrow;
    }
    void *q = NULL, *k = NULL, *v = NULL, *out = NULL;
    float *lse = NULL;
    if (ns > 8 || qn > OP_LIMIT || kn > OP_LIMIT || vn > OP_LIMIT || on > OP_LIMIT || (ns > 0 && !bt) ||
        too_big(a.cok, a.ce))
        goto done;
    q = sent_buf((int64_t)qn, qe);
    k = sent_buf((int64_t)kn, qe);
    v = sent_buf((int64_t)vn, qe);
    memset(q, 0x3C, (size_t)qn * (size_t)qe);
    memset(k, 0x3C, (size_t)kn * (size_t)qe);
    memset(v, 0x3C, (size_t)vn * (size_t)qe);
    out = sent_buf((int64_t)on, qe);
    p.query = q, p.key = k, p.value = v, p.out = out;
    p.block_tables = bt;
    p.query_start_loc = ns ? qsl : (rd_u8(r) & 1 ? qsl : NULL);
    p.seq_lens = ns ? sl : NULL;
    /* cache_only (sometimes an unknown value, sometimes without key and value)
     * and the lse output (sometimes misaligned or over the output). */
    const uint8_t extra = rd_u8(r);
    p.cache_only = extra % 16 == 15 ? (int32_t)extra : extra & 1;
    if (p.cache_only == 1 && extra & 2)
        p.key = p.value = NULL;
    lse_lay ll;
    if (!lse_case(r, extra & 16, extra & 4, extra & 8, extra & 64 ? out : NULL, p.num_heads, nt, &p.lse_head_stride,
                  &p.lse_token_stride, &ll, &lse, &p.lse)) {
        if (pa_context_attention_validate(&p) == PA_SUCCESS)
            FUZZ_CHECK(lse_acceptable(&ll, p.num_heads, nt));
        goto done;
    }
    {
        const pa_status s = pa_ref_context_attention(&p);
        if (s != PA_SUCCESS)
            FUZZ_CHECK(pa_last_error()[0] != '\0' && untouched(out, (size_t)on * (size_t)qe) &&
                       (!lse || untouched(lse, (size_t)ll.n * 4)));
        else { /* the strides apart, and nothing written outside the layout's rows */
            FUZZ_CHECK(a.cok && pa_context_attention_validate(&p) == PA_SUCCESS &&
                       lse_acceptable(&ll, p.num_heads, nt) &&
                       (!lse || p.lse != lse || lse_placed(lse, &ll, p.num_heads, nt, 0)));
            /* the sequences' rows, [0, query_start_loc[num_seqs]); tokens past
             * them are left as they were */
            const int64_t rows = ns > 0 ? qsl[ns] : 0, relems = rows * p.num_heads * hs;
            FUZZ_CHECK(rows <= nt);
            uniform_rows_check(p.q_dtype, p.kv.dtype, p.sinks != NULL, out, relems);
            if (nt > 0)
                FUZZ_CHECK(untouched((const char *)out + relems * qe, (size_t)((int64_t)on - relems) * (size_t)qe));
        }
    }
done:
    free(lse);
    free(q);
    free(k);
    free(v);
    free(out);
    free(bt);
    free(a.kc);
    free(a.vc);
}

static void fuzz_ragged(reader *r) {
    attn_case a;
    attn_cache(r, &a, 1);
    pa_ragged_params p;
    memset(&p, 0, sizeof p);
    p.kv = a.c;
    p.q_dtype = rd_dtype(r);
    p.max_num_seqs = rd_field(r, 4);
    p.max_num_batched_tokens = rd_field(r, 24);
    p.num_q_heads = heads_of(a.c.num_kv_heads, 1 + rd_u8(r) % 3);
    if (rd_u8(r) == 3)
        p.num_q_heads = rd_field(r, 40);
    p.pages_per_seq = rd_field(r, 8);
    p.sm_scale = rd_float(r);
    p.sliding_window = rd_field(r, 20);
    p.soft_cap = rd_u8(r) < 200 ? 0.0f : rd_float(r);
    p.mask_value = rd_u8(r) < 200 ? 0.0f : rd_float(r);
    int32_t live = rd_field(r, 4);
    const int qe = esize((int)p.q_dtype) ? esize((int)p.q_dtype) : 1;
    const int64_t ms = p.max_num_seqs > 0 ? p.max_num_seqs : 0;
    int32_t *pi = attn_table(&a, ms, p.pages_per_seq);
    int32_t cu[9], kl[8];
    cu[0] = rd_u8(r) == 2 ? -1 : 0;
    for (int64_t s = 0; s < ms && s < 8; s++) {
        cu[s + 1] = cu[s] + (int32_t)pr_range(&a.g, pr_next(&a.g) % 20 == 0 ? -1 : 0, 6);
        kl[s] = cu[s + 1] - cu[s] + (int32_t)pr_range(&a.g, pr_next(&a.g) % 20 == 0 ? -1 : 0, 24);
    }
    const int64_t nt = p.max_num_batched_tokens > 0 ? p.max_num_batched_tokens : 0;
    __int128 qn = 16;
    if (nt > 0 && p.num_q_heads > 0 && a.c.head_size > 0)
        qn = (__int128)nt * p.num_q_heads * a.c.head_size;
    void *q = NULL, *out = NULL;
    float *lse = NULL;
    if (ms > 8 || qn > OP_LIMIT || (ms > 0 && !pi) || too_big(a.cok, a.ce))
        goto done;
    /* the kernels' 16-byte alignment: malloc gives it */
    q = sent_buf((int64_t)qn, qe);
    memset(q, 0x3C, (size_t)qn * (size_t)qe);
    out = sent_buf((int64_t)qn, qe);
    p.q = q, p.out = out;
    p.page_indices = pi;
    p.cu_q_lens = ms ? cu : NULL;
    p.kv_lens = ms ? kl : NULL;
    p.num_seqs = rd_u8(r) == 4 ? NULL : &live;
    /* the lse output (sometimes misaligned or over the output) */
    const uint8_t extra = rd_u8(r);
    lse_lay ll;
    if (!lse_case(r, extra & 16, extra & 4, extra & 8, extra & 64 ? out : NULL, p.num_q_heads, nt, &p.lse_head_stride,
                  &p.lse_token_stride, &ll, &lse, &p.lse)) {
        if (pa_ragged_validate(&p) == PA_SUCCESS)
            FUZZ_CHECK(lse_acceptable(&ll, p.num_q_heads, nt));
        goto done;
    }
    {
        const pa_status s = pa_ref_ragged_paged_attention(&p);
        if (s != PA_SUCCESS)
            FUZZ_CHECK(pa_last_error()[0] != '\0' && untouched(out, (size_t)qn * (size_t)qe) &&
                       (!lse || untouched(lse, (size_t)ll.n * 4)));
        else if (p.max_num_seqs == 0 || p.max_num_batched_tokens == 0) /* an empty batch: a no-op */
            FUZZ_CHECK(a.cok && pa_ragged_validate(&p) == PA_SUCCESS && lse_acceptable(&ll, p.num_q_heads, nt) &&
                       untouched(out, (size_t)qn * (size_t)qe) && (!lse || untouched(lse, (size_t)ll.n * 4)));
        else { /* the strides apart, never over out, and nothing written outside the layout's rows */
            FUZZ_CHECK(a.cok && live >= 0 && live <= p.max_num_seqs && pa_ragged_validate(&p) == PA_SUCCESS &&
                       lse_acceptable(&ll, p.num_q_heads, nt) && (void *)p.lse != out &&
                       (!lse || p.lse != lse || lse_placed(lse, &ll, p.num_q_heads, nt, 0)));
            /* the live sequences' rows, [0, cu_q_lens[num_seqs]), each the mean of
             * equal values; the rows past them untouched */
            const int64_t rows = live > 0 ? cu[live] : 0, relems = rows * p.num_q_heads * a.c.head_size;
            FUZZ_CHECK(rows <= nt);
            uniform_rows_check(p.q_dtype, p.kv.dtype, 0, out, relems);
            FUZZ_CHECK(untouched((const char *)out + relems * qe, (size_t)((int64_t)qn - relems) * (size_t)qe));
        }
    }
done:
    free(lse);
    free(q);
    free(out);
    free(pi);
    free(a.kc);
    free(a.vc);
}

/* next power of two >= n (1 for n < 1), in 128 bits */
static __int128 npow2(__int128 n) {
    __int128 p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

/* The heuristics against their documented formulas (heuristics.h), computed
 * here independently: exact values, not general properties. */
static void fuzz_heuristics(reader *r) {
    /* (max_seq_len past 512, so P > 1 and the v2 plans, needs the wide draw;
     * block sizes a power of two at least half the time, which v2 requires) */
    const int32_t a = rd_len_wide(r, 20000), b = rd_len_wide(r, 600), c = rd_len(r, 128), d = rd_len(r, 16);
    const int32_t e = rd_len_wide(r, 300), f = rd_u8(r) < 128 ? 1 << (rd_u8(r) % 10) : rd_len_wide(r, 256);
    /* v1/v2: max_seq_len <= 8192 && (P == 1 || num_seqs * num_heads > 512) */
    const int64_t P = ((int64_t)a + 511) / 512;
    const int want_v1 = a <= 8192 && (P == 1 || (int64_t)b * c > 512);
    FUZZ_CHECK(pa_decode_use_v1(a, b, c) == want_v1);
    pa_decode_plan pl;
    memset(&pl, 0x5A, sizeof pl);
    /* pa_decode_make_plan(num_seqs b, num_heads c, num_kv_heads d, head_size e, block_size f, max_seq_len a) */
    const int args_ok = b >= 0 && c > 0 && d > 0 && c % d == 0 && e > 0 && f > 0 && a > 0;
    const int v2_ok = want_v1 || (f > 0 && 512 % f == 0);
    const __int128 scratch = (__int128)b * c * P * e;
    const pa_status s = pa_decode_make_plan(b, c, d, e, f, a, &pl);
    if (!args_ok || !v2_ok) {
        FUZZ_CHECK(s != PA_SUCCESS);
    } else if (scratch <= INT64_MAX) {
        FUZZ_CHECK(s == PA_SUCCESS);
    } else {
        FUZZ_CHECK(s != PA_SUCCESS || pl.use_v1); /* a v2 scratch past int64 is never accepted */
    }
    if (s == PA_SUCCESS) {
        FUZZ_CHECK(pl.use_v1 == want_v1 && pl.max_num_partitions == P);
        FUZZ_CHECK(pl.exp_sums_elems == (want_v1 ? 0 : (int64_t)b * c * P));
        FUZZ_CHECK(pl.max_logits_elems == pl.exp_sums_elems);
        FUZZ_CHECK(pl.tmp_out_elems == (want_v1 ? 0 : (int64_t)b * c * P * e));
    } else {
        FUZZ_CHECK(pa_last_error()[0] != '\0' && pl.use_v1 == SENT);
    }
    /* page size: clamp(next_pow2(L) / 16, 16, 256), L >= 1 */
    int32_t ps = SENT;
    const int64_t L0 = (int64_t)rd_i32(r) * (rd_u8(r) & 1 ? 1 : 4096);
    const int64_t L = rd_u8(r) == 9 ? INT64_MAX - (L0 < 0 ? -L0 : L0) : L0; /* near INT64_MAX too */
    if (L >= 1) {
        __int128 want = npow2(L) / 16;
        want = want <= 16 ? 16 : want >= 256 ? 256 : want;
        FUZZ_CHECK(pa_get_page_size(L, &ps) == PA_SUCCESS && ps == (int32_t)want);
    } else {
        FUZZ_CHECK(pa_get_page_size(L, &ps) != PA_SUCCESS && ps == SENT && pa_last_error()[0] != '\0');
    }
    /* minimum page sizes: pages_per_req = budget / 2 / n / 4 (integer
     * divisions), min page = next_pow2(ceil(L / pages_per_req)), an int32 */
    const size_t smem = (size_t)(uint32_t)rd_i32(r) << (rd_u8(r) % 8);
    for (int k = 0; k < 2; k++) {
        const __int128 budget = k == 0 ? (__int128)1048576 : (__int128)smem;
        int32_t mp = SENT;
        const pa_status ms = k == 0 ? pa_get_min_page_size(L, b, &mp) : pa_cuda_min_page_size(L, b, smem, &mp);
        int ok = L >= 1 && b >= 1;
        __int128 want = 0;
        if (ok) {
            const __int128 ppr = budget / 2 / b / 4;
            ok = ppr >= 1;
            if (ok) {
                want = npow2(((__int128)L + ppr - 1) / ppr);
                ok = want <= INT32_MAX;
            }
        }
        if (ok)
            FUZZ_CHECK(ms == PA_SUCCESS && mp == (int32_t)want);
        else
            FUZZ_CHECK(ms != PA_SUCCESS && mp == SENT && pa_last_error()[0] != '\0');
    }
    /* cache shapes: the table in heuristics.h, dims exactly */
    int64_t dims[PA_MAX_SHAPE_RANK];
    int32_t rank = SENT;
    const pa_kv_layout lay = (pa_kv_layout)(rd_u8(r) % 5);
    const pa_dtype dt = (pa_dtype)(rd_u8(r) % 6);
    const pa_kv_shape_part part = (pa_kv_shape_part)(rd_u8(r) % 4);
    const int32_t nb = rd_len(r, 100);
    /* num_blocks nb, block_size d, num_kv_heads c, head_size e */
    const int es = esize((int)dt);
    int64_t want[6] = {0};
    int wr = 0;
    int ok = lay <= PA_LAYOUT_COMBINED && es > 0 && part <= PA_KV_SHAPE_PAIR && nb > 0 && d > 0 && c > 0 && e > 0;
    if (ok && lay == PA_LAYOUT_VLLM)
        ok = e % (16 / es) == 0;
    if (ok && lay == PA_LAYOUT_COMBINED)
        ok = part != PA_KV_SHAPE_VALUE;
    if (ok) {
        const int64_t x = 16 / es;
        const __int128 dce = (__int128)d * c * e; /* past int64: the count check below refuses it */
        switch (lay) {
        case PA_LAYOUT_VLLM:
            if (part == PA_KV_SHAPE_KEY)
                wr = 5, want[0] = nb, want[1] = c, want[2] = e / x, want[3] = d, want[4] = x;
            else if (part == PA_KV_SHAPE_VALUE)
                wr = 4, want[0] = nb, want[1] = c, want[2] = e, want[3] = d;
            else
                wr = 3, want[0] = 2, want[1] = nb, want[2] = dce <= INT64_MAX ? (int64_t)dce : INT64_MAX;
            break;
        case PA_LAYOUT_FLASH_NHD:
        case PA_LAYOUT_FLASH_HND: {
            const int64_t mid1 = lay == PA_LAYOUT_FLASH_NHD ? d : c, mid2 = lay == PA_LAYOUT_FLASH_NHD ? c : d;
            const int o = part == PA_KV_SHAPE_PAIR;
            if (o)
                want[0] = 2;
            want[o] = nb, want[o + 1] = mid1, want[o + 2] = mid2, want[o + 3] = e;
            wr = 4 + o;
            break;
        }
        default: wr = 4, want[0] = nb, want[1] = d, want[2] = 2 * (int64_t)c, want[3] = e; break;
        }
    }
    /* the element count must fit in int64: the part's must; the pair's
     * (2 * nb * block * kvh * head) may be required too (either outcome is
     * accepted between the two) */
    int either = 0;
    if (ok) {
        __int128 n = 1;
        for (int i = 0; i < wr; i++)
            n *= want[i];
        const __int128 pair = (__int128)2 * nb * d * c * e;
        ok = n <= INT64_MAX;
        either = ok && pair > INT64_MAX;
    }
    const pa_status ss = pa_kv_cache_shape(lay, dt, nb, d, c, e, part, dims, &rank);
    if (either && ss != PA_SUCCESS) {
        FUZZ_CHECK(rank == SENT && pa_last_error()[0] != '\0');
    } else if (ok) {
        FUZZ_CHECK(ss == PA_SUCCESS && rank == wr);
        for (int i = 0; i < wr; i++)
            FUZZ_CHECK(dims[i] == want[i]);
    } else {
        FUZZ_CHECK(ss != PA_SUCCESS && rank == SENT && pa_last_error()[0] != '\0');
    }
}

#ifdef FUZZ_HAVE_METADATA
static void fuzz_common_metadata(reader *r) {
    static int32_t comp[MAXR], sched[MAXR], table[MAXR * 32];
    static int32_t qsl[MAXR + 2], seq[MAXR + 1], ncomp[MAXR + 1];
    static int64_t slots[4096];
    /* Every scalar first, then the per-request values, then a seed for the
     * block table: a short input still sets the padding and slices fields. */
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
    const int32_t padded = rd_len_wide(r, 4000);
    const int32_t spb = rd_len(r, 9); /* 0 and negative are refused */
    const int32_t num_prefills = rd_len(r, MAXR);
    const uint8_t table_kind = rd_u8(r);
    prng g = {(uint32_t)rd_i32(r)};
    for (int32_t i = 0; i < cnt; i++) {
        comp[i] = rd_len(r, 100);
        sched[i] = rd_len(r, 40);
    }
    /* (8103938 lost these three lines: every batch of one request or more
     * was then refused for its NULL arrays, and the checks below saw only
     * empty batches until 2026-12-06) */
    b.num_computed_tokens = comp;
    b.num_scheduled_tokens = sched;
    b.block_table = table;
    /* Block ids: random (slot bugs at block boundaries show), with a few -1
     * and, for table_kind >= 200, ids whose slots pass 2^31 (fine for the
     * int64 slot mapping, refused by the int32 slices). */
    const int64_t top = table_kind >= 200 ? INT32_MAX : 5000;
    for (int32_t i = 0; i < MAXR * 32; i++) {
        const uint64_t k = pr_next(&g) % 64;
        table[i] = k == 0 ? -1 : (int32_t)pr_range(&g, table_kind >= 200 && k < 8 ? top - 100 : 0, top);
    }
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
    int32_t ub = 0, ns = 0, nsp = 0;
    /* the slices store slots as int32: refused iff a touched block has a slot past it */
    int past32 = 0;
    for (int32_t t = 0; t < c.num_actual_tokens; t++) {
        FUZZ_CHECK(slots[t] >= 0);
        past32 |= slots[t] / b.block_size * b.block_size + (b.block_size - 1) > INT32_MAX;
    }
    if (pa_kv_update_slices_upper_bound(n, c.num_actual_tokens, b.block_size, spb, &ub) == PA_SUCCESS && ub <= 4200) {
        fill(sl, (size_t)(3 * ub + 16));
        const pa_status ss = pa_build_kv_update_slices(&c, spb, sl, ub, &ns, &nsp);
        FUZZ_CHECK((ss == PA_SUCCESS) == !past32);
        if (ss != PA_SUCCESS) {
            FUZZ_CHECK(all_sent(sl, (size_t)(3 * ub + 16)));
        } else {
            FUZZ_CHECK(ns <= nsp && nsp <= ub && nsp % spb == 0);
            int64_t covered = 0;
            for (int32_t i = 0; i < ub; i++) {
                const int32_t kv0 = sl[i], nk = sl[ub + i], len = sl[2 * ub + i];
                if (i >= ns) {
                    FUZZ_CHECK(kv0 == 0 && nk == 0 && len == 0);
                    continue;
                }
                /* (in 64 bits: a block of nearly 2^31 slots) */
                FUZZ_CHECK(len >= 1 && len <= b.block_size && (int64_t)(kv0 % b.block_size) + len <= b.block_size);
                FUZZ_CHECK(nk == covered && kv0 == slots[nk] && (int64_t)kv0 + len - 1 == slots[nk + len - 1]);
                covered += len;
            }
            FUZZ_CHECK(covered == c.num_actual_tokens);
            FUZZ_CHECK(all_sent(sl + 3 * ub, 16));
        }
    } else {
        FUZZ_CHECK(ub > 4200 || (spb < 1 && pa_last_error()[0] != '\0'));
    }
    /* slots: the definition, block_table[r][pos / bs] * bs + pos % bs */
    for (int32_t i = 0, t = 0; i < n; i++)
        for (int32_t k = 0; k < sched[i]; k++, t++) {
            const int32_t pos = comp[i] + k;
            FUZZ_CHECK(slots[t] == (int64_t)table[i * b.block_table_stride + pos / b.block_size] * b.block_size +
                                       pos % b.block_size);
        }
    /* the decode/prompt builder: prefills first; accepted iff num_prefills is
     * in range and no decode has a longer query than a prefill */
    {
        static int32_t ssl[MAXR + 2];
        fill(ssl, MAXR + 2);
        pa_prompt_decode_metadata m;
        memset(&m, 0, sizeof m);
        m.seq_start_loc = ssl;
        m.num_prefills = SENT;
        int32_t min_pre = INT32_MAX, max_dec = 0;
        for (int32_t i = 0; i < n; i++) {
            if (sched[i] == 0)
                continue;
            if (i < num_prefills && sched[i] < min_pre)
                min_pre = sched[i];
            if (i >= num_prefills && sched[i] > max_dec)
                max_dec = sched[i];
        }
        /* and seq_start_loc, the seq_lens' prefix sums, fits int32 (metadata.h) */
        int64_t kv_total = 0;
        for (int32_t i = 0; i < n; i++)
            kv_total += c.seq_lens[i];
        const int want = num_prefills >= 0 && num_prefills <= n && (min_pre == INT32_MAX || max_dec <= min_pre) &&
                         kv_total <= INT32_MAX;
        const pa_status ps = pa_build_prompt_decode_metadata(&c, num_prefills, NULL, &m);
        FUZZ_CHECK((ps == PA_SUCCESS) == want);
        if (ps == PA_SUCCESS) {
            FUZZ_CHECK(m.num_prefills == num_prefills && ssl[0] == 0 && ssl[n + 1] == SENT);
            FUZZ_CHECK(m.num_prefill_tokens == qsl[num_prefills] &&
                       m.num_decode_tokens == c.num_actual_tokens - qsl[num_prefills]);
        } else {
            FUZZ_CHECK(all_sent(ssl, MAXR + 2) && m.num_prefills == SENT && pa_last_error()[0] != '\0');
        }
    }
    /* then split the batch the metadata describes (may be unordered) */
    pa_batch_split sp;
    if (pa_split_decodes_and_prefills(qsl, n, 1, &sp) == PA_SUCCESS)
        FUZZ_CHECK(sp.num_decode_tokens + sp.num_prefill_tokens == c.num_actual_tokens);
    else
        FUZZ_CHECK(pa_last_error()[0] != '\0');
}
#endif

/* pa_ref_merge_attn_states against merge.h's written rules, computed here on
 * their own: accepted iff the dtype is f32/f16/bf16, 1 <= num_heads <= 65535,
 * 1 <= head_size <= 65536, each row stride 0 or >= num_heads * head_size, the
 * lse strides >= 0 and apart (head >= token x T or token >= head x H, or T or
 * H at most 1), and, with tokens, no NULL buffer, output either exactly a part
 * (same pointer and stride) or apart from both, output_lse apart from all.
 * Accepted: the reference ran on buffers sized from those layouts (ASan),
 * and wrote nothing off the rows or off the lse layout; refused: a message
 * and nothing written. */
static void fuzz_merge(reader *r) {
    pa_merge_attn_states_params p;
    memset(&p, 0, sizeof p);
    p.dtype = rd_dtype(r);
    p.num_tokens = rd_field(r, 6);
    p.num_heads = rd_field(r, 4);
    p.head_size = rd_field(r, 20);
    p.out_stride = rd_stride(r);
    p.prefix_stride = rd_stride(r);
    p.suffix_stride = rd_stride(r);
    p.lse_head_stride = rd_stride(r);
    p.lse_token_stride = rd_stride(r);
    const uint8_t mode = rd_u8(r);
    prng g = {(uint32_t)rd_i32(r)};
    const int e = p.dtype == PA_DTYPE_F32 ? 4 : p.dtype == PA_DTYPE_F16 || p.dtype == PA_DTYPE_BF16 ? 2 : 0;
    const __int128 T = p.num_tokens, H = p.num_heads, row = H * p.head_size;
    int ok = e > 0 && T >= 0 && H >= 1 && H <= 65535 && p.head_size >= 1 && p.head_size <= 65536;
    const int64_t st[3] = {p.out_stride, p.prefix_stride, p.suffix_stride};
    __int128 eff[3] = {0, 0, 0}, ext[3] = {0, 0, 0}; /* elements a part's rows span */
    for (int i = 0; i < 3; i++) {
        ok = ok && (st[i] == 0 || st[i] >= row);
        eff[i] = st[i] ? st[i] : row;
        ext[i] = T > 0 ? (T - 1) * eff[i] + row : 0;
    }
    ok = ok && p.lse_head_stride >= 0 && p.lse_token_stride >= 0;
    const __int128 lts = p.lse_token_stride ? p.lse_token_stride : 1,
                   lhs = p.lse_head_stride ? p.lse_head_stride : (T > 0 ? T : 1);
    ok = ok && (T <= 1 || H <= 1 || lhs >= lts * T || lts >= lhs * H);
    const __int128 lext = T > 0 ? (H - 1) * lhs + (T - 1) * lts + 1 : 0;
    /* (the prefix buffer takes one element more: the in-place cases one element off it) */
    if (!ok || T == 0 || ext[0] > OP_LIMIT || ext[1] + 1 > OP_LIMIT || ext[2] > OP_LIMIT || lext > OP_LIMIT) {
        /* no buffers to run on: the checks alone, on pointers never read */
        p.output = (void *)64, p.prefix_output = (void *)(64 + ((int64_t)1 << 40)),
        p.suffix_output = (void *)(64 + ((int64_t)2 << 40)), p.prefix_lse = (const float *)(64 + ((int64_t)3 << 40)),
        p.suffix_lse = (const float *)(64 + ((int64_t)4 << 40));
        const pa_status s = pa_merge_attn_states_validate(&p);
        if (!ok)
            FUZZ_CHECK(s != PA_SUCCESS && pa_last_error()[0] != '\0');
        if (ok && T == 0)
            FUZZ_CHECK(s == PA_SUCCESS);
        return;
    }
    /* in place: the output over a part (exactly, or one element off it: an overlap) */
    const int alias =
        mode % 8; /* 0, 5-7 apart; 1 output = prefix; 2 = suffix; 3 prefix + 1; 4 output_lse = prefix_lse */
    const int want_lse = (mode >> 3) & 1, null_one = ((mode >> 4) & 7) == 7;
    if (alias == 1 || alias == 3)
        eff[0] = eff[1], ext[0] = ext[1], p.out_stride = p.prefix_stride;
    if (alias == 2)
        eff[0] = eff[2], ext[0] = ext[2], p.out_stride = p.suffix_stride;
    unsigned char *A = sent_buf((int64_t)ext[1] + 1, e), *B = sent_buf((int64_t)ext[2], e);
    unsigned char *O = alias == 1 || alias == 3 ? A : alias == 2 ? B : sent_buf((int64_t)ext[0], e);
    float *la = sent_buf((int64_t)lext, 4), *lb = sent_buf((int64_t)lext, 4), *lo = sent_buf((int64_t)lext, 4);
    for (size_t i = 0; i < (size_t)ext[1]; i++) /* each element's low byte drawn, the rest sentinel: finite */
        A[i * (size_t)e] = (unsigned char)pr_range(&g, 0, 255);
    for (size_t i = 0; i < (size_t)ext[2]; i++)
        B[i * (size_t)e] = (unsigned char)pr_range(&g, 0, 255);
    static const float specials[] = {0.0f, -3.5f, 7.25f, INFINITY, -INFINITY, NAN, 88.0f, -200.0f};
    for (size_t i = 0; i < (size_t)lext; i++)
        la[i] = specials[pr_next(&g) % 8], lb[i] = specials[pr_next(&g) % 8];
    p.output = alias == 3 ? (void *)(A + e) : O;
    p.prefix_output = A, p.suffix_output = B, p.prefix_lse = la, p.suffix_lse = lb;
    p.output_lse = alias == 4 ? la : want_lse ? lo : NULL;
    if (null_one)
        p.suffix_output = NULL;
    const int expect = !null_one && !(alias == 3 && ext[1] > 1) && alias != 4; /* one element off one: apart */
    const size_t obytes = (size_t)ext[0] * (size_t)e;
    unsigned char *before = malloc(obytes + 1);
    memcpy(before, p.output, obytes);
    /* the parts as they were (the output may be one of them) */
    unsigned char *A0 = malloc((size_t)ext[1] * (size_t)e + 1), *B0 = malloc((size_t)ext[2] * (size_t)e + 1);
    memcpy(A0, A, (size_t)ext[1] * (size_t)e);
    memcpy(B0, B, (size_t)ext[2] * (size_t)e);
    const pa_status s = pa_ref_merge_attn_states(&p);
    FUZZ_CHECK((s == PA_SUCCESS) == expect);
    if (s != PA_SUCCESS) {
        FUZZ_CHECK(pa_last_error()[0] != '\0');
        FUZZ_CHECK(memcmp(before, p.output, obytes) == 0);
        FUZZ_CHECK(untouched(lo, (size_t)lext * 4));
    } else {
        /* off the rows: as before; off the lse layout (or all of it without output_lse): untouched */
        const unsigned char *out = p.output;
        for (size_t i = 0; i < (size_t)ext[0]; i++) {
            const __int128 tk = (__int128)i / eff[0], col = (__int128)i % eff[0];
            if (!(tk < T && col < row))
                FUZZ_CHECK(memcmp(out + i * (size_t)e, before + i * (size_t)e, (size_t)e) == 0);
        }
        unsigned char *in_layout = calloc((size_t)lext, 1);
        for (__int128 h = 0; h < H; h++)
            for (__int128 tk = 0; tk < T; tk++)
                in_layout[(size_t)(h * lhs + tk * lts)] = 1;
        for (size_t i = 0; i < (size_t)lext; i++)
            if (!want_lse || !in_layout[i])
                FUZZ_CHECK(untouched(&lo[i], 4));
        free(in_layout);
        /* the rows and lse by merge.h's formula and edge cases, in double (the
         * parts' values are finite here) */
        const int64_t hs = p.head_size;
        for (int64_t tk = 0; tk < (int64_t)T; tk++)
            for (int64_t h = 0; h < (int64_t)H; h++) {
                const size_t li = (size_t)(h * lhs + tk * lts);
                double a = la[li], b = lb[li];
                a = a == INFINITY ? -INFINITY : a;
                b = b == INFINITY ? -INFINITY : b;
                const double m = a > b ? a : b, wa = isnan(a) ? NAN : exp(a - m), wb = isnan(b) ? NAN : exp(b - m);
                const double sum = wa + wb, lse = isnan(a) || isnan(b)               ? NAN
                                                  : a == -INFINITY && b == -INFINITY ? -INFINITY
                                                                                     : m + log(sum);
                if (want_lse) {
                    const double got = lo[li];
                    FUZZ_CHECK(isnan(lse)   ? isnan(got)
                               : isinf(lse) ? got == lse
                                            : fabs(got - lse) <= 1e-5 * (1 + fabs(lse)));
                }
                for (int64_t d = 0; d < hs; d++) {
                    const double got = pa_load_as_float(p.dtype, out, (size_t)(tk * eff[0] + h * hs + d));
                    if (isnan(lse)) {
                        FUZZ_CHECK(isnan(got));
                        continue;
                    }
                    if (lse == -INFINITY) {
                        FUZZ_CHECK(got == 0.0);
                        continue;
                    }
                    const double x = pa_load_as_float(p.dtype, A0, (size_t)(tk * eff[1] + h * hs + d));
                    const double y = pa_load_as_float(p.dtype, B0, (size_t)(tk * eff[2] + h * hs + d));
                    const double want = (wa > 0 ? wa / sum * x : 0.0) + (wb > 0 ? wb / sum * y : 0.0);
                    FUZZ_CHECK(fabs(got - want) <= 1e-2 * (fabs(x) + fabs(y)) + 1e-30);
                }
            }
    }
    free(A0);
    free(B0);
    free(before);
    if (O != A && O != B)
        free(O);
    free(A), free(B), free(la), free(lb), free(lo);
}

/* ---- the rest of the host surface: metadata, prompt and mixed attention,
 * conversion, hyperparameters, swap runs, workspace sizes, comparison and
 * names. Same rules: buffers sized from the headers' shapes, accepted ->
 * outputs as the header defines them, refused -> a message and every output
 * byte as it was. --------------------------------------------------------- */

/* int32 copy of n elements into an exact-size heap buffer (ASan bounds). */
static int32_t *dup32(const int32_t *a, int64_t n) {
    int32_t *p = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 0) + 1);
    if (n > 0)
        memcpy(p, a, sizeof(int32_t) * (size_t)n);
    return p;
}

#ifdef FUZZ_HAVE_METADATA
/* pa_build_ragged_metadata and pa_kv_update_slices_count (metadata.h) on
 * common metadata from pa_build_common_metadata, sometimes edited by hand
 * afterwards (a stale or hand-made struct), its arrays in exact-size buffers.
 * Accepted -> the metadata meets metadata.h's definitions (query_start_loc the
 * exclusive prefix sum from 0, seq_lens = computed + query, rows wide enough),
 * the slices are exactly the header's (one per block a request's new tokens
 * touch, requests in order, new_kv_start the running sum, (0, 0, 0) up to the
 * capacity), the counts agree with pa_kv_update_slices_count, lie under
 * pa_kv_update_slices_upper_bound, and the views are the common arrays;
 * refused -> a message, the slices and every byte of the output struct
 * untouched. */
static void fuzz_ragged_metadata(reader *r) {
    static int32_t table[12 * 16];
    static int64_t slots[256];
    int32_t n = rd_len(r, 12);
    if (n > 12)
        n = 12;
    const int32_t cnt = n > 0 ? n : 0;
    pa_batch b;
    memset(&b, 0, sizeof b);
    b.num_reqs = n;
    b.block_size = rd_len(r, 8);
    b.block_table_stride = rd_len(r, 16);
    if (b.block_table_stride > 16)
        b.block_table_stride = 16;
    const int32_t padded = rd_len(r, 200);
    const int32_t spb = rd_len(r, 5);
    const uint8_t edit = rd_u8(r), cap_mode = rd_u8(r), table_kind = rd_u8(r);
    const int32_t delta = (int32_t)(rd_u8(r) % 7) - 3;
    prng g = {(uint32_t)rd_i32(r)};
    int32_t comp[12], sched[12];
    for (int32_t i = 0; i < cnt; i++) {
        comp[i] = rd_len(r, 40);
        sched[i] = rd_len(r, 20);
    }
    /* ids: a few -1; with table_kind >= 200 some whose block passes int32 slots */
    for (int32_t i = 0; i < 12 * 16; i++) {
        const uint64_t k = pr_next(&g) % 64;
        table[i] = k == 0 ? -1
                   : table_kind >= 200 && k < 8 && b.block_size > 0
                       ? (int32_t)(INT32_MAX / b.block_size - pr_range(&g, 0, 2))
                       : (int32_t)pr_range(&g, 0, 500);
    }
    int32_t qsl0[13], seq0[12], nc0[12];
    pa_common_metadata c;
    memset(&c, 0, sizeof c);
    c.query_start_loc = qsl0;
    c.seq_lens = seq0;
    c.num_computed_tokens = nc0;
    c.slot_mapping = slots;
    c.slot_mapping_capacity = 256;
    b.num_computed_tokens = comp;
    b.num_scheduled_tokens = sched;
    b.block_table = table;
    if (pa_build_common_metadata(&b, padded, &c) != PA_SUCCESS)
        return; /* fuzz_common_metadata's business */
    /* hand edits of a built struct */
    const int32_t k = cnt ? (int32_t)pr_range(&g, 0, cnt - 1) : 0;
    switch (edit % 10) {
    case 1: qsl0[k + (edit & 16 ? 1 : 0)] += delta; break;
    case 2:
        if (cnt)
            seq0[k] += delta;
        break;
    case 3:
        if (cnt)
            nc0[k] += delta;
        break;
    case 4: c.num_actual_tokens += delta; break;
    case 5: c.num_reqs = cnt ? (int32_t)pr_range(&g, 0, cnt - 1) : (delta < 0 ? delta : 0); break;
    case 6: c.block_table_stride = delta > 0 ? c.block_table_stride + delta : c.block_table_stride / 2; break;
    case 7: c.block_size = delta ? c.block_size + delta : 1; break;
    case 8: c.padded_num_tokens += delta; break;
    default: break;
    }
    /* exact-size copies of the arrays, as the edited fields size them */
    const int32_t nr = c.num_reqs > 0 ? c.num_reqs : 0;
    const int32_t stride = c.block_table_stride > 0 ? c.block_table_stride : 0;
    int32_t *qsl = dup32(qsl0, nr + 1), *seq = dup32(seq0, nr), *nc = dup32(nc0, nr);
    int32_t *bt = malloc(sizeof(int32_t) * (size_t)(nr * stride) + 1);
    for (int32_t i = 0; i < nr * stride; i++) { /* the built rows where the stride kept them */
        const int32_t row = i / stride, col = i % stride;
        bt[i] = col < b.block_table_stride ? table[row * b.block_table_stride + col] : table[i % (12 * 16)];
    }
    c.query_start_loc = qsl, c.seq_lens = seq, c.num_computed_tokens = nc, c.block_table = bt;
    /* metadata.h's definitions */
    const int32_t bs = c.block_size;
    int meta_ok = c.num_reqs >= 0 && bs > 0 && qsl[0] == 0 && c.num_actual_tokens >= 0 &&
                  c.padded_num_tokens >= c.num_actual_tokens && (c.num_reqs == 0 || stride >= 1);
    for (int32_t i = 0; meta_ok && i < nr; i++) {
        const int64_t q = (int64_t)qsl[i + 1] - qsl[i];
        meta_ok = q >= 0 && nc[i] >= 0 && (int64_t)seq[i] == nc[i] + q &&
                  (seq[i] == 0 || ((int64_t)seq[i] - 1) / bs + 1 <= stride);
    }
    meta_ok = meta_ok && qsl[nr] == c.num_actual_tokens;
    /* the header's slices, computed here; ids_ok: every block touched >= 0,
     * its slots within int32 (the slices are int32) */
    static int32_t want_s[3][256];
    int64_t total = 0;
    int ids_ok = 1;
    for (int32_t i = 0; meta_ok && i < nr; i++) {
        const int32_t start = nc[i], end = seq[i];
        int32_t nk = qsl[i];
        for (int32_t pos = start; pos < end;) {
            const int32_t blk = pos / bs, lo = pos % bs, hi = end - blk * bs < bs ? end - blk * bs : bs;
            const int32_t id = bt[(int64_t)i * stride + blk];
            ids_ok &= id >= 0 && (int64_t)id * bs + bs - 1 <= INT32_MAX;
            if (total < 256) {
                want_s[0][total] = (int32_t)((int64_t)id * bs + lo);
                want_s[1][total] = nk;
                want_s[2][total] = hi - lo;
            }
            total++;
            nk += hi - lo;
            pos += hi - lo;
        }
    }
    const int64_t want_padded = spb >= 1 ? (total + spb - 1) / spb * spb : -1;
    /* slices_count */
    {
        int32_t ns = SENT, np = SENT;
        const pa_status s = pa_kv_update_slices_count(&c, spb, cap_mode & 32 ? NULL : &ns, &np);
        if (s == PA_SUCCESS) {
            FUZZ_CHECK(meta_ok && spb >= 1 && ids_ok);
            FUZZ_CHECK((cap_mode & 32 || ns == total) && np == want_padded);
        } else {
            FUZZ_CHECK(pa_last_error()[0] != '\0' && ns == SENT && np == SENT);
            FUZZ_CHECK(!meta_ok || spb < 1 || !ids_ok);
        }
    }
    /* the capacity: the padded count, more, one less, or 0; sometimes the
     * slices over an input array (refused) */
    const int64_t base = want_padded >= 0 ? want_padded : 4;
    int32_t cap = (int32_t)(cap_mode % 4 == 0   ? base
                            : cap_mode % 4 == 1 ? base + (cap_mode >> 2) % 5
                            : cap_mode % 4 == 2 ? (base > 0 ? base - 1 : 0)
                                                : 0);
    if (cap > 200 || total > 256)
        goto done;
    {
        const int alias = (cap_mode >> 6) == 3 && (int64_t)3 * cap <= (int64_t)nr * stride && cap > 0;
        int32_t *sl = alias ? bt : cap_mode & 16 && cap == 0 ? NULL : sent_buf((int64_t)3 * cap, 4);
        int32_t *bt_snap = dup32(bt, (int64_t)nr * stride);
        pa_ragged_metadata m;
        memset(&m, SENT_BYTE, sizeof m);
        m.slices = sl;
        m.slices_capacity = cap;
        pa_ragged_metadata before;
        memcpy(&before, &m, sizeof m);
        const pa_status s = pa_build_ragged_metadata(&c, spb, &m);
        const int want = meta_ok && spb >= 1 && ids_ok && cap >= want_padded && !alias;
        FUZZ_CHECK((s == PA_SUCCESS) == want);
        if (s != PA_SUCCESS) {
            FUZZ_CHECK(pa_last_error()[0] != '\0' && memcmp(&m, &before, sizeof m) == 0);
            FUZZ_CHECK(alias ? memcmp(bt, bt_snap, sizeof(int32_t) * (size_t)(nr * stride)) == 0
                             : !sl || untouched(sl, (size_t)cap * 12 + 1));
        } else {
            FUZZ_CHECK(m.num_seqs == c.num_reqs && m.num_slices == total && m.num_slices_padded == want_padded);
            FUZZ_CHECK(m.slices == sl && m.slices_capacity == cap);
            FUZZ_CHECK(m.slot_mapping == c.slot_mapping && m.block_tables == c.block_table &&
                       m.block_table_stride == c.block_table_stride && m.context_lens == c.seq_lens &&
                       m.query_start_loc == c.query_start_loc);
            for (int32_t i = 0; i < cap; i++)
                for (int f = 0; f < 3; f++)
                    FUZZ_CHECK(sl[f * cap + i] == (i < total ? want_s[f][i] : 0));
            FUZZ_CHECK(!sl || ((unsigned char *)sl)[(size_t)cap * 12] == SENT_BYTE);
            /* the bound for any batch of these requests and tokens */
            int32_t ub = SENT;
            if (pa_kv_update_slices_upper_bound(c.num_reqs, c.num_actual_tokens, bs, spb, &ub) == PA_SUCCESS)
                FUZZ_CHECK(ub >= want_padded);
        }
        free(bt_snap);
        if (!alias)
            free(sl);
    }
done:
    free(qsl);
    free(seq);
    free(nc);
    free(bt);
}
#endif

static const int32_t small_heads[] = {8, 16, 24, 32, 40, 64, 128, 256};

/* The log-sum-exp prefill.h defines for a row: log(e^sink + sum_j e^x_j) over
 * the visible keys (keys: the keys' part, -inf for none). */
static double lse_with_sink(double keys, const float *sink) {
    if (!sink)
        return keys;
    const double s = *sink;
    if (keys == -INFINITY || s == INFINITY)
        return s;
    const double m = s > keys ? s : keys;
    return m + log(exp(keys - m) + exp(s - m));
}

static int close_to(double got, double want, double rel) {
    if (isnan(want) || isinf(want))
        return got == want || (isnan(got) && isnan(want));
    return fabs(got - want) <= rel * (fabs(want) > 1.0 ? fabs(want) : 1.0);
}

/* pa_prompt_attention_validate and pa_ref_prompt_attention (prefill.h):
 * decoder (causal), encoder and cross attention. Accepted only where the
 * header's rules hold (dtype, head size, heads, attn_type, cu_seqlens_k and
 * no window for cross attention, start locations from >= 0, non-decreasing, within the
 * token counts and the length bounds, finite ALiBi, no NaN sink, the lse
 * layout); accepted wherever they hold with every option plainly valid. The
 * reference runs on buffers sized from the shapes (query/key/value rows at
 * their strides, out contiguous, the lse layout); with every query and key
 * element one value and each key token's value elements a value of its own
 * (v0 times 1 to 1.5), each row's output is the softmax-weighted mean of its
 * visible keys' values times the keys' share of the softmax (1 without
 * sinks), zeros for a row that sees no key (prefill.h's masks: causal, the window on the left,
 * and on both sides without the causal mask), and its lse the header's
 * formula over the visible keys (ALiBi -slope |j - q_pos|), computed here.
 * Refused: a message, out and lse
 * untouched. */
static void fuzz_prompt(reader *r) {
    pa_prompt_attention_params p;
    memset(&p, 0, sizeof p);
    p.dtype = rd_dtype(r);
    const uint8_t at = rd_u8(r);
    p.attn_type = (pa_attn_type)(at < 250 ? at % 4 : (int32_t)at - 246);
    p.num_seqs = rd_field(r, 4);
    p.num_kv_heads = rd_field(r, 2);
    const uint8_t gsel = rd_u8(r);
    p.num_heads = gsel == 255 ? rd_field(r, 8) : heads_of(p.num_kv_heads, 1 + gsel % 3);
    const uint8_t hsel = rd_u8(r);
    p.head_size = hsel < 230 ? small_heads[hsel % 8] : rd_field(r, 300);
    p.q_stride = rd_stride(r);
    p.k_stride = rd_stride(r);
    p.v_stride = rd_stride(r);
    p.scale = rd_float(r);
    p.sliding_window = rd_field(r, 8);
    p.soft_cap = rd_u8(r) < 200 ? 0.0f : rd_float(r);
    p.num_q_tokens = rd_field(r, 16);
    p.num_k_tokens = rd_field(r, 16);
    p.max_seqlen_q = rd_field(r, 12);
    p.max_seqlen_k = rd_field(r, 12);
    const uint8_t opts = rd_u8(r), extra = rd_u8(r);
    prng g = {(uint32_t)rd_i32(r)};
    const int cross = (opts & 4) || (p.attn_type == PA_ATTN_ENCODER_DECODER && !(opts & 8));
    int32_t cq[9], ck[9];
    float alibi[16], sinks[16];
    cq[0] = pr_next(&g) % 24 == 0 ? -1 : 0;
    ck[0] = pr_next(&g) % 24 == 0 ? -1 : 0;
    for (int s = 0; s < 8; s++) {
        cq[s + 1] = cq[s] + (int32_t)pr_range(&g, pr_next(&g) % 24 == 0 ? -1 : 0, 5);
        ck[s + 1] = ck[s] + (int32_t)pr_range(&g, pr_next(&g) % 24 == 0 ? -1 : 0, 5);
    }
    static const float sink_vals[] = {-INFINITY, 0.0f, 1.5f, -3.0f, 800.0f, INFINITY, 40.0f, NAN};
    for (int h = 0; h < 16; h++) {
        alibi[h] = -0.25f * (float)(h + 1);
        sinks[h] = sink_vals[pr_next(&g) % (opts & 64 ? 8 : 7)];
    }
    if (opts & 16)
        alibi[pr_next(&g) % 16] = NAN;
    const int64_t nh = p.num_heads, nkv = p.num_kv_heads, hs = p.head_size;
    const int64_t ns = p.num_seqs > 0 ? p.num_seqs : 0;
    if (opts & 1 && nh >= 1 && nh <= 16)
        p.alibi_slopes = alibi;
    if (opts & 2 && nh >= 1 && nh <= 16)
        p.sinks = sinks;
    p.cu_seqlens_q = cq;
    p.cu_seqlens_k = cross ? ck : NULL;
    const int64_t nq = p.num_q_tokens > 0 ? p.num_q_tokens : 0;
    const int64_t nk = cross ? (p.num_k_tokens > 0 ? p.num_k_tokens : 0) : nq;
    const int32_t *cuk = cross ? ck : cq;
    const int64_t maxk = cross ? p.max_seqlen_k : p.max_seqlen_q;
    /* header rules */
    const int dt_ok = p.dtype == PA_DTYPE_F32 || p.dtype == PA_DTYPE_F16 || p.dtype == PA_DTYPE_BF16;
    const int heads_ok = nh >= 1 && nh <= 65535 && nkv >= 1 && nh % nkv == 0;
    const int hs_ok = hs >= 8 && hs <= 256 && hs % 8 == 0;
    const __int128 qrow = (__int128)nh * hs, krow = (__int128)nkv * hs;
    int reject = !dt_ok || !heads_ok || !hs_ok || (int)p.attn_type < 0 || (int)p.attn_type > 3 || p.num_seqs < 0 ||
                 p.num_seqs > 65535 || !isfinite(p.scale) ||
                 (p.attn_type == PA_ATTN_ENCODER_DECODER && (!cross || p.sliding_window != 0)) || p.num_q_tokens < 0 ||
                 (cross && (p.num_k_tokens < 0 || p.max_seqlen_k > INT32_MAX - 256));
    /* either way: strides under a row, a soft cap or window out of range, negative bounds */
    const int odd = (p.q_stride && p.q_stride < qrow) || (p.k_stride && p.k_stride < krow) ||
                    (p.v_stride && p.v_stride < krow) ||
                    !(p.soft_cap == 0.0f || (p.soft_cap >= 0x1p-126f && p.soft_cap <= 0x1p126f)) ||
                    p.sliding_window < 0 || p.max_seqlen_q < 0 || (cross && p.max_seqlen_k < 0);
    /* either way too: an undocumented limit, max_seqlen_q x the GQA group within int32 (reported) */
    const int loose = heads_ok && (int64_t)p.max_seqlen_q * (nh / nkv) > INT32_MAX - 256;
    /* buffers: rows (n - 1) * stride + row */
    __int128 qn = -1, kn = -1, on = -1;
    if (heads_ok && hs_ok && p.q_stride >= 0 && p.k_stride >= 0 && p.v_stride >= 0 && !odd) {
        qn = nq ? (nq - 1) * (p.q_stride ? p.q_stride : qrow) + qrow : 0;
        const __int128 kk = nk ? (nk - 1) * (p.k_stride ? p.k_stride : krow) + krow : 0;
        const __int128 vv = nk ? (nk - 1) * (p.v_stride ? p.v_stride : krow) + krow : 0;
        kn = kk > vv ? kk : vv;
        on = nq * qrow;
    }
    const int e = dt_ok ? esize((int)p.dtype) : 1;
    const int sized = ns <= 8 && qn >= 0 && qn <= OP_LIMIT && kn <= OP_LIMIT && on <= OP_LIMIT && kn >= 0 &&
                      (__int128)nq * nk * nh * hs <= 400000;
    unsigned char *q = NULL, *kb = NULL, *vb = NULL, *out = NULL;
    double *vtok = NULL; /* each key token's value */
    float *lse = NULL;
    lse_lay ll;
    if (!sized) {
        /* the field checks alone, on pointers never read */
        static unsigned char dummy[64];
        p.out = dummy, p.query = dummy + 16, p.key = dummy + 32, p.value = dummy + 48;
        lse_draw(r, extra & 16, nh, nq, &p.lse_head_stride, &p.lse_token_stride, 0);
        const pa_status s = pa_prompt_attention_validate(&p);
        if (reject)
            FUZZ_CHECK(s != PA_SUCCESS && pa_last_error()[0] != '\0');
        return;
    }
    q = sent_buf((int64_t)qn, e), kb = sent_buf((int64_t)kn, e), vb = sent_buf((int64_t)kn, e);
    out = sent_buf((int64_t)on, e);
    memset(q, 0x3C, (size_t)qn * (size_t)e);
    memset(kb, 0x3C, (size_t)kn * (size_t)e);
    memset(vb, 0x40, (size_t)kn * (size_t)e);
    /* V: each key token a value of its own, the same over its heads and dims
     * (so a key a wrong mask takes in or leaves out moves its rows' means) */
    static const unsigned char vpat[4] = {0x40, 0x40, 0x40, 0x40};
    const double v0 = dt_ok ? pa_load_as_float(p.dtype, vpat, 0) : 0.0;
    vtok = malloc(sizeof(double) * (size_t)(nk + 1));
    for (int64_t kt = 0; kt < nk; kt++) {
        const int64_t at = kt * (p.v_stride ? p.v_stride : (int64_t)krow);
        for (int64_t i = 0; dt_ok && i < (int64_t)krow; i++)
            pa_store_from_float(p.dtype, vb, (size_t)(at + i), (float)(v0 * (1.0 + (double)(kt % 5) / 8.0)));
        vtok[kt] = dt_ok ? pa_load_as_float(p.dtype, vb, (size_t)at) : 0.0;
    }
    p.query = q, p.key = kb, p.value = vb, p.out = out;
    if (extra & 32 && ns > 0) /* a missing buffer */
        p.value = NULL;
    if (!lse_case(r, extra & 16, extra & 1, extra & 2, extra & 4 ? out : NULL, nh, nq, &p.lse_head_stride,
                  &p.lse_token_stride, &ll, &lse, &p.lse)) {
        if (pa_prompt_attention_validate(&p) == PA_SUCCESS)
            FUZZ_CHECK(lse_acceptable(&ll, nh, nq) && !reject);
        goto done;
    }
    reject |= !lse_acceptable(&ll, nh, nq);
    if (ns > 0) {
        reject |= p.value == NULL;
        reject |= lse && ((extra & 2) || (nq > 0 && (extra & 4))); /* misaligned, or over out */
        /* the start locations and lengths */
        for (int w = 0; w < 2; w++) {
            const int32_t *cu = w ? cuk : cq;
            const int64_t tokens = w ? nk : nq, bound = w ? maxk : p.max_seqlen_q;
            reject |= cu[0] < 0;
            for (int64_t s = 0; s < ns; s++)
                reject |= cu[s + 1] < cu[s] || cu[s + 1] > tokens || cu[s + 1] - cu[s] > bound;
        }
        for (int64_t h = 0; p.alibi_slopes && h < nh; h++)
            reject |= !isfinite(alibi[h]);
        for (int64_t h = 0; p.sinks && h < nh; h++)
            reject |= isnan(sinks[h]);
    }
    {
        const pa_status s = pa_ref_prompt_attention(&p);
        if (reject)
            FUZZ_CHECK(s != PA_SUCCESS);
        else if (!odd && !loose && ll.n != INT64_MAX) /* (a layout past any buffer: either) */
            FUZZ_CHECK(s == PA_SUCCESS);
        if (s != PA_SUCCESS) {
            FUZZ_CHECK(pa_last_error()[0] != '\0' && untouched(out, (size_t)on * (size_t)e) &&
                       (!lse || untouched(lse, (size_t)ll.n * 4)));
            goto done;
        }
        FUZZ_CHECK(pa_prompt_attention_validate(&p) == PA_SUCCESS);
        if (lse && p.lse == lse)
            FUZZ_CHECK(lse_placed(lse, &ll, nh, nq, 0));
        /* each row against the header's rules */
        static const unsigned char qpat[4] = {0x3C, 0x3C, 0x3C, 0x3C};
        const double qv = pa_load_as_float(p.dtype, qpat, 0);
        const double x0 = (double)p.scale * ((double)hs * qv * qv);
        const int causal = p.attn_type == PA_ATTN_DECODER;
        for (int64_t s = 0; s < ns; s++) {
            const int64_t q_len = cq[s + 1] - cq[s], k_len = cuk[s + 1] - cuk[s];
            for (int64_t i = 0; i < q_len; i++) {
                const int64_t pos = k_len - q_len + i, t = cq[s] + i;
                int64_t lo = 0, hi = k_len - 1;
                if (p.sliding_window > 0 && pos - p.sliding_window + 1 > 0)
                    lo = pos - p.sliding_window + 1;
                if (p.sliding_window > 0 && !causal && pos + p.sliding_window - 1 < hi)
                    hi = pos + p.sliding_window - 1; /* no causal mask: W - 1 keys either side */
                if (causal && pos < hi)
                    hi = pos;
                for (int64_t h = 0; h < nh; h++) {
                    double mx = -INFINITY, sum = 0.0, wv = 0.0;
                    for (int pass = 0; pass < 2; pass++)
                        for (int64_t j = lo; j <= hi; j++) {
                            double x = x0;
                            if (p.soft_cap > 0.0f)
                                x = p.soft_cap * tanh(x / p.soft_cap);
                            if (p.alibi_slopes)
                                x -= (double)alibi[h] * fabs((double)(j - pos));
                            if (pass == 0) {
                                mx = x > mx ? x : mx;
                            } else {
                                sum += exp(x - mx);
                                wv += exp(x - mx) * vtok[cuk[s] + j];
                            }
                        }
                    const double keys = hi >= lo ? mx + log(sum) : -INFINITY;
                    const double all = lse_with_sink(keys, p.sinks ? &sinks[h] : NULL);
                    const double share = hi < lo ? 0.0 : !p.sinks ? 1.0 : all == INFINITY ? 0.0 : exp(keys - all);
                    for (int64_t d = 0; d < hs; d++) {
                        const double o = pa_load_as_float(p.dtype, out, (size_t)((t * nh + h) * hs + d));
                        FUZZ_CHECK(fabs(o - (hi < lo ? 0.0 : wv / sum) * share) <= 1e-2 * fabs(v0) + 1e-6);
                    }
                    if (lse && p.lse == lse)
                        FUZZ_CHECK(close_to(lse[h * ll.hs + t * ll.ts], (float)all, 1e-4));
                }
            }
        }
    }
done:
    free(vtok);
    free(lse);
    free(q);
    free(kb);
    free(vb);
    free(out);
}

/* pa_mixed_attention_validate, _workspace_size and pa_ref_mixed_attention
 * (prefill.h). The batch's buffers are sized from the header's shapes (out
 * and query over num_prefill_tokens + num_decode_tokens rows, key and value
 * over the prefill tokens, block tables and seq_lens over every sequence,
 * query_start_loc over the prefills, the lse layout over all the tokens).
 * The header defines the call as pa_ref_context_attention on the prefills and
 * pa_ref_paged_decode on the decodes; this case builds the two parts itself
 * from that text (the decode part num_prefill_tokens rows into out, query and
 * lse, num_prefills rows into the tables) and runs them on copies: accepted
 * -> both parts accept and out and lse are byte for byte theirs; both parts
 * accepting (with prefills whenever there are prefill tokens) -> accepted;
 * refused -> a message, out and lse untouched. The workspace is the decode
 * part's (0 without decodes), asked of pa_paged_attention_decode_workspace_size
 * with the fields the header names. */
static void mixed_workspace_check(const pa_mixed_attention_params *p) {
    size_t ws = (size_t)SENT;
    const pa_status vs = pa_mixed_attention_validate(p), ss = pa_mixed_attention_workspace_size(p, &ws);
    FUZZ_CHECK((vs == PA_SUCCESS) == (ss == PA_SUCCESS));
    if (ss != PA_SUCCESS) {
        FUZZ_CHECK(ws == (size_t)SENT && pa_last_error()[0] != '\0');
        return;
    }
    pa_decode_params dd;
    memset(&dd, 0, sizeof dd);
    dd.num_seqs = p->num_decode_tokens, dd.num_heads = p->num_heads, dd.kv = p->kv;
    dd.max_seq_len = p->max_decode_seq_len, dd.q_dtype = p->q_dtype;
    size_t want = 0;
    if (p->num_decode_tokens > 0)
        FUZZ_CHECK(pa_paged_attention_decode_workspace_size(&dd, &want) == PA_SUCCESS);
    FUZZ_CHECK(ws == want);
}

static void fuzz_mixed(reader *r) {
    attn_case a;
    attn_cache(r, &a, 0);
    pa_mixed_attention_params p;
    memset(&p, 0, sizeof p);
    p.kv = a.c;
    p.q_dtype = rd_dtype(r);
    p.num_prefills = rd_field(r, 3);
    p.num_decode_tokens = rd_field(r, 3);
    p.num_heads = heads_of(a.c.num_kv_heads, 1 + rd_u8(r) % 3);
    if (rd_u8(r) == 3)
        p.num_heads = rd_field(r, 40);
    p.block_table_stride = rd_field(r, 8);
    p.max_prefill_query_len = rd_field(r, 8);
    p.max_prefill_seq_len = rd_field(r, 24);
    p.max_decode_seq_len = rd_field(r, 24);
    p.q_stride = rd_stride(r);
    p.k_stride = rd_stride(r);
    p.v_stride = rd_stride(r);
    p.scale = rd_float(r);
    p.sliding_window = rd_field(r, 12);
    p.soft_cap = rd_u8(r) < 200 ? 0.0f : rd_float(r);
    const uint8_t opts = rd_u8(r), extra = rd_u8(r);
    const int32_t npt_drawn = rd_field(r, 20);
    float sinks[32];
    static const float sink_vals[] = {-INFINITY, 0.0f, 1.5f, -3.0f, 900.0f, INFINITY};
    for (int h = 0; h < 32; h++)
        sinks[h] = sink_vals[pr_next(&a.g) % 6];
    if (opts & 1 && p.num_heads > 0 && p.num_heads <= 32)
        p.alibi_slopes = a.alibi;
    if (opts & 2 && p.num_heads > 0 && p.num_heads <= 32)
        p.sinks = sinks;
    const int64_t np = p.num_prefills > 0 ? p.num_prefills : 0, nd = p.num_decode_tokens > 0 ? p.num_decode_tokens : 0;
    int32_t qsl[5], sl[8];
    qsl[0] = pr_next(&a.g) % 24 == 0 ? 1 : 0; /* the header: starting at 0 */
    for (int64_t s = 0; s < 4; s++) {
        qsl[s + 1] = qsl[s] + (int32_t)pr_range(&a.g, pr_next(&a.g) % 20 == 0 ? -1 : 0, 5);
        sl[s] = qsl[s + 1] - qsl[s] + (int32_t)pr_range(&a.g, pr_next(&a.g) % 20 == 0 ? -1 : 0, 16);
    }
    for (int64_t s = 0; s < 4; s++) /* the decodes' lengths follow the prefills' */
        sl[np < 4 ? np + s : 4 + s] = (int32_t)pr_range(&a.g, pr_next(&a.g) % 16 == 0 ? -1 : 1,
                                                        p.max_decode_seq_len > 0 && p.max_decode_seq_len < 64
                                                            ? p.max_decode_seq_len + (pr_next(&a.g) % 16 == 0)
                                                            : 8);
    p.num_prefill_tokens = opts & 4 ? npt_drawn : np <= 4 ? qsl[np] : 0;
    const int qe = esize((int)p.q_dtype) ? esize((int)p.q_dtype) : 1;
    const int64_t hs = a.c.head_size, kvh = a.c.num_kv_heads, nh = p.num_heads;
    const int64_t npt = p.num_prefill_tokens, T = npt + nd;
    int32_t *bt = attn_table(&a, np + nd, p.block_table_stride);
    void *q = NULL, *k = NULL, *v = NULL, *out = NULL, *out2 = NULL;
    float *lse = NULL, *lse2 = NULL;
    int32_t *slx = NULL, *qslx = NULL;
    if (np > 4 || nd > 4 || npt < 0 || npt > 24 || nh <= 0 || hs <= 0 || kvh <= 0 || p.q_stride < 0 || p.k_stride < 0 ||
        p.v_stride < 0 || (np + nd > 0 && !bt) || too_big(a.cok, a.ce) || p.max_prefill_seq_len > 64)
        goto done;
    {
        const __int128 qrow = (__int128)nh * hs, krow = (__int128)kvh * hs;
        const __int128 qn = T ? (T - 1) * (p.q_stride ? p.q_stride : qrow) + qrow : 0;
        const __int128 kn = npt ? (npt - 1) * (p.k_stride ? p.k_stride : krow) + krow : 0;
        const __int128 vn = npt ? (npt - 1) * (p.v_stride ? p.v_stride : krow) + krow : 0;
        const __int128 on = T * qrow;
        if (qn > OP_LIMIT || kn > OP_LIMIT || vn > OP_LIMIT || on > OP_LIMIT || T * nh * 64 > 40000)
            goto done;
        q = sent_buf((int64_t)qn, qe), k = sent_buf((int64_t)kn, qe), v = sent_buf((int64_t)vn, qe);
        out = sent_buf((int64_t)on, qe), out2 = sent_buf((int64_t)on, qe);
        memset(q, 0x3C, (size_t)qn * (size_t)qe);
        memset(k, 0x3C, (size_t)kn * (size_t)qe);
        memset(v, 0x40, (size_t)vn * (size_t)qe);
        p.query = q, p.key = k, p.value = v, p.out = out;
        /* exact sizes: seq_lens [num_prefills + num_decode_tokens], query_start_loc [num_prefills + 1] */
        slx = dup32(sl, np + nd), qslx = dup32(qsl, np + 1);
        p.block_tables = bt;
        p.seq_lens = np + nd ? slx : NULL;
        p.query_start_loc = qslx;
        lse_lay ll;
        if (!lse_case(r, extra & 16, extra & 1, extra & 2,
                      extra & 4   ? out
                      : extra & 8 ? q
                                  : NULL,
                      nh, T, &p.lse_head_stride, &p.lse_token_stride, &ll, &lse, &p.lse))
            goto done;
        /* the workspace (pure host), once the call's buffers are in place (it
         * validates the call: with out still NULL every case was refused);
         * with decodes also at longer decode lengths, where it is not 0 */
        mixed_workspace_check(&p);
        static const int32_t longer[] = {4097, 70000, 33553920};
        for (int i = 0; i < 3 && nd > 0; i++) {
            pa_mixed_attention_params pl = p; /* (its tables are never read: a pure-host call) */
            pl.max_decode_seq_len = longer[i];
            if (p.kv.block_size > 0)
                pl.block_table_stride = (int32_t)(((int64_t)longer[i] + p.kv.block_size - 1) / p.kv.block_size);
            mixed_workspace_check(&pl);
        }
        const size_t obytes = (size_t)on * (size_t)qe, lbytes = lse ? (size_t)ll.n * 4 : 0;
        if (lse) {
            lse2 = malloc(lbytes + 1);
            memcpy(lse2, lse, lbytes);
        }
        /* the parts, from the header's text */
        const int64_t lts = p.lse_token_stride ? p.lse_token_stride : 1;
        const int64_t lhs = p.lse_head_stride ? p.lse_head_stride : (T > 0 ? T : 1);
        /* the parts' lse: the copy's, as the call's is placed (over out: the
         * copy's out; over the query: the query; misaligned: the same offset) */
        float *l2 = !p.lse                      ? NULL
                    : (void *)p.lse == out      ? (float *)out2
                    : (void *)p.lse == q        ? (float *)q
                    : (uintptr_t)p.lse % 4 != 0 ? (float *)((char *)lse2 + 2)
                                                : lse2;
        pa_context_attention_params pf;
        memset(&pf, 0, sizeof pf);
        pf.out = out2, pf.query = q, pf.key = k, pf.value = v;
        pf.q_stride = p.q_stride, pf.k_stride = p.k_stride, pf.v_stride = p.v_stride;
        pf.q_dtype = p.q_dtype, pf.kv = p.kv, pf.block_tables = bt, pf.block_table_stride = p.block_table_stride;
        pf.query_start_loc = qslx, pf.seq_lens = p.seq_lens, pf.num_seqs = p.num_prefills, pf.num_heads = p.num_heads;
        pf.num_tokens = p.num_prefill_tokens, pf.max_query_len = p.max_prefill_query_len;
        pf.max_seq_len = p.max_prefill_seq_len, pf.scale = p.scale, pf.alibi_slopes = p.alibi_slopes;
        pf.sliding_window = p.sliding_window, pf.soft_cap = p.soft_cap, pf.sinks = p.sinks;
        pf.lse = l2, pf.lse_head_stride = lhs, pf.lse_token_stride = lts;
        pa_decode_params dc;
        memset(&dc, 0, sizeof dc);
        const int64_t qs = p.q_stride ? p.q_stride : (int64_t)qrow;
        dc.out = (char *)out2 + npt * (int64_t)qrow * qe, dc.query = nd > 0 ? (const char *)q + npt * qs * qe : q;
        dc.q_stride = qs, dc.q_dtype = p.q_dtype, dc.kv = p.kv;
        dc.block_tables = bt ? bt + np * p.block_table_stride : NULL, dc.block_table_stride = p.block_table_stride;
        dc.seq_lens = p.seq_lens ? slx + np : NULL, dc.num_seqs = p.num_decode_tokens, dc.num_heads = p.num_heads;
        dc.max_seq_len = p.max_decode_seq_len, dc.scale = p.scale, dc.alibi_slopes = p.alibi_slopes;
        dc.sliding_window = p.sliding_window, dc.soft_cap = p.soft_cap, dc.sinks = p.sinks;
        /* (no decodes: the decode part is not run) */
        dc.lse = l2 && nd > 0 && lts >= 0 && lhs >= 0 ? l2 + npt * lts : l2;
        dc.lse_head_stride = lhs, dc.lse_token_stride = lts;
        /* the mixed call, then the parts on the copies (the decode part after
         * the prefill part accepted, as the call does) */
        unsigned char *q_snap = malloc((size_t)qn * (size_t)qe + 1);
        memcpy(q_snap, q, (size_t)qn * (size_t)qe);
        const pa_status s = pa_ref_mixed_attention(&p);
        if (s != PA_SUCCESS) {
            FUZZ_CHECK(pa_last_error()[0] != '\0' && untouched(out, obytes));
            FUZZ_CHECK(!lse || (lse == p.lse ? untouched(lse, lbytes) : memcmp(lse, lse2, lbytes) == 0));
            FUZZ_CHECK(memcmp(q, q_snap, (size_t)qn * (size_t)qe) == 0);
        }
        if (p.lse && ((void *)p.lse == out || (void *)p.lse == q)) {
            /* the whole lse over out or the query: refused (the parts, cut
             * from a call the header rules out, are not run) */
            FUZZ_CHECK(s != PA_SUCCESS || T == 0);
            free(q_snap);
            goto done;
        }
        const pa_status sp = pa_ref_context_attention(&pf);
        const pa_status sd = sp != PA_SUCCESS || nd == 0 ? PA_SUCCESS : pa_ref_paged_decode(&dc);
        if (s == PA_SUCCESS) {
            FUZZ_CHECK(sp == PA_SUCCESS && sd == PA_SUCCESS);
            FUZZ_CHECK(memcmp(out, out2, obytes) == 0);
            FUZZ_CHECK(!lse || memcmp(lse, lse2, lbytes) == 0);
        } else {
            /* (or the whole lse's layout puts two of the batch's pairs on one
             * float, or ends 2^61 floats in, where each part's does not) */
            FUZZ_CHECK(sp != PA_SUCCESS || sd != PA_SUCCESS || (npt > 0 && np == 0) || p.num_decode_tokens < 0 ||
                       !lse_acceptable(&ll, nh, T) || lse_too_far(&ll, nh, T));
        }
        free(q_snap);
    }
done:
    free(slx);
    free(qslx);
    free(lse);
    free(lse2);
    free(q);
    free(k);
    free(v);
    free(out);
    free(out2);
    free(bt);
    free(a.kc);
    free(a.vc);
}

/* One element of a typed array as float, by the scalar conversions of core.h. */
static float elem_as_float(pa_dtype t, const unsigned char *b, int64_t i) {
    switch (t) {
    case PA_DTYPE_F32: {
        float f;
        memcpy(&f, b + 4 * i, 4);
        return f;
    }
    case PA_DTYPE_F16: return pa_half_to_float((uint16_t)(b[2 * i] | b[2 * i + 1] << 8));
    case PA_DTYPE_BF16: return pa_bf16_to_float((uint16_t)(b[2 * i] | b[2 * i + 1] << 8));
    case PA_DTYPE_FP8_E4M3: return pa_fp8_e4m3_to_float(b[i]);
    case PA_DTYPE_FP8_E5M2: return pa_fp8_e5m2_to_float(b[i]);
    }
    return NAN;
}
/* f stored as dtype t into b (esize(t) bytes). */
static void float_as_elem(pa_dtype t, float f, unsigned char *b) {
    uint16_t h;
    switch (t) {
    case PA_DTYPE_F32: memcpy(b, &f, 4); break;
    case PA_DTYPE_F16:
    case PA_DTYPE_BF16:
        h = t == PA_DTYPE_F16 ? pa_float_to_half(f) : pa_float_to_bf16(f);
        b[0] = (unsigned char)h, b[1] = (unsigned char)(h >> 8);
        break;
    case PA_DTYPE_FP8_E4M3: b[0] = pa_float_to_fp8_e4m3(f); break;
    case PA_DTYPE_FP8_E5M2: b[0] = pa_float_to_fp8_e5m2(f); break;
    }
}

/* pa_ref_convert (convert.h): accepted iff both dtypes are known, n >= 0,
 * buffers aligned to their element sizes and apart, and, where the scale
 * applies (either side fp8), it is NULL or finite and > 0; a scale that does
 * not apply is ignored (any value). Accepted -> dst[i] = convert(src[i]), the
 * scale multiplying an fp8 source and dividing into an fp8 destination,
 * rounded as the scalar conversions of core.h round; src unchanged; nothing
 * past dst's n elements written. Refused -> a message and dst untouched. */
static void fuzz_convert(reader *r) {
    const pa_dtype dd = rd_dtype(r), sd = rd_dtype(r);
    const uint8_t nsel = rd_u8(r);
    const int64_t n = nsel < 240 ? nsel % 65 : nsel < 250 ? -(int64_t)(nsel - 239) : rd_stride(r);
    const uint8_t mode = rd_u8(r);
    const float sv = rd_float(r);
    prng g = {(uint32_t)rd_i32(r)};
    const int de = esize((int)dd), se = esize((int)sd);
    const int fp8 = pa_dtype_is_fp8(dd) || pa_dtype_is_fp8(sd);
    const int scale_mode = mode & 3;   /* 0 NULL, else a pointer to sv */
    const int alias = (mode >> 2) & 7; /* 5: dst = src; 6: dst one source element on; 7: dst misaligned */
    if (!de || !se || n < 0 || n > 4096) {
        /* refused by the dtypes or the count alone (else too big to run) */
        if (!de || !se || n < 0) {
            static unsigned char d[8], s8[8];
            const pa_status st = pa_ref_convert(d, dd, s8, sd, n, scale_mode ? &sv : NULL);
            FUZZ_CHECK(st != PA_SUCCESS && pa_last_error()[0] != '\0');
        }
        return;
    }
    const int64_t big = (n + 2) * (de > se ? de : se);
    unsigned char *src = malloc((size_t)(alias == 5 || alias == 6 ? big : n * se) + 1);
    for (int64_t i = 0; i < (alias == 5 || alias == 6 ? big : n * se); i++)
        src[i] = (unsigned char)pr_next(&g);
    unsigned char *dbuf = alias == 7 ? sent_buf(n * de + 1, 1) : alias >= 5 ? NULL : sent_buf(n, de);
    unsigned char *dst = alias == 5 ? src : alias == 6 ? src + se : alias == 7 ? dbuf + 1 : dbuf;
    const size_t dbytes = (size_t)(n * de);
    int ok = 1, either = 0;
    if (alias == 5 || alias == 6) /* overlapping where both are non-empty */
        ok = n == 0 || (alias == 6 && n * se <= se);
    if (alias == 6 && (uintptr_t)dst % (uintptr_t)de)
        ok = 0;
    if (alias == 7 && de > 1) {
        ok = 0;
        either = n == 0;
    }
    if (alias == 5 && n == 0)
        either = 1; /* a zero-length "overlap" */
    const int scale_ok = !(fp8 && scale_mode) || (isfinite(sv) && sv > 0.0f);
    ok = ok && scale_ok;
    unsigned char *src_snap = malloc((size_t)(n * se) + 1), *dst_snap = malloc(dbytes + (alias == 7) + 1);
    memcpy(src_snap, src, (size_t)(n * se));
    memcpy(dst_snap, alias == 7 ? dbuf : dst, dbytes + (alias == 7));
    const pa_status st = pa_ref_convert(dst, dd, src, sd, n, scale_mode ? &sv : NULL);
    if (!either)
        FUZZ_CHECK((st == PA_SUCCESS) == ok);
    if (st != PA_SUCCESS) {
        FUZZ_CHECK(pa_last_error()[0] != '\0');
        FUZZ_CHECK(memcmp(alias == 7 ? dbuf : dst, dst_snap, dbytes + (alias == 7)) == 0);
    } else if (alias != 5 && alias != 6) {
        FUZZ_CHECK(memcmp(src, src_snap, (size_t)(n * se)) == 0);
        const float s = fp8 && scale_mode ? sv : 1.0f;
        for (int64_t i = 0; i < n; i++) {
            float f = elem_as_float(sd, src_snap, i);
            if (pa_dtype_is_fp8(sd))
                f *= s;
            if (pa_dtype_is_fp8(dd))
                f /= s;
            unsigned char want[4];
            float_as_elem(dd, f, want);
            if (isnan(elem_as_float(dd, want, 0)))
                FUZZ_CHECK(isnan(elem_as_float(dd, dst + i * de, 0)));
            else
                FUZZ_CHECK(memcmp(want, dst + i * de, (size_t)de) == 0);
        }
        if (alias == 7)
            FUZZ_CHECK(dbuf[0] == SENT_BYTE);
        FUZZ_CHECK((alias == 7 ? dbuf[dbytes + 1] : dst[dbytes]) == SENT_BYTE);
    }
    free(src_snap);
    free(dst_snap);
    free(src);
    free(dbuf);
}

/* pa_infer_global_hyperparameters (heuristics.h): accepted iff there is a
 * layer, every layer has window_left >= -1, a finite soft cap >= 0 and a
 * finite scale, and every layer equals layer 0 field by field (-0 and +0 may
 * go either way); accepted -> *out is layer 0's values; refused -> a message
 * and *out untouched. The layers are never written. */
static void fuzz_hyperparameters(reader *r) {
    int32_t n = rd_len(r, 6);
    const uint8_t opts = rd_u8(r);
    pa_layer_params l[8];
    const int cnt = n > 0 ? (n > 8 ? 8 : n) : 0;
    if (n > 8)
        n = 8;
    l[0].window_left = (int32_t)((int64_t)rd_len(r, 4) - 1); /* (INT32_MIN - 1 wraps to INT32_MAX) */
    l[0].logits_soft_cap = rd_u8(r) < 128 ? 0.0f : rd_float(r);
    l[0].sm_scale = rd_float(r);
    for (int i = 1; i < 8; i++) {
        l[i] = l[0];
        const uint8_t t = rd_u8(r);
        if (t == 1)
            l[i].window_left = (int32_t)((int64_t)rd_len(r, 4) - 1);
        else if (t == 2)
            l[i].logits_soft_cap = rd_float(r);
        else if (t == 3)
            l[i].sm_scale = rd_float(r);
        else if (t == 4)
            l[i].sm_scale = -l[i].sm_scale; /* -0 for 0 */
    }
    pa_layer_params snap[8], out;
    memcpy(snap, l, sizeof l);
    memset(&out, SENT_BYTE, sizeof out);
    const pa_layer_params *lp = opts == 7 ? NULL : l;
    const pa_status s = pa_infer_global_hyperparameters(lp, n, opts == 9 ? NULL : &out);
    int ok = cnt > 0 && lp && opts != 9, either = 0;
    for (int i = 0; ok && i < cnt; i++)
        ok = l[i].window_left >= -1 && isfinite(l[i].logits_soft_cap) && l[i].logits_soft_cap >= 0.0f &&
             isfinite(l[i].sm_scale);
    for (int i = 1; ok && i < cnt; i++) {
        ok = l[i].window_left == l[0].window_left && l[i].logits_soft_cap == l[0].logits_soft_cap &&
             l[i].sm_scale == l[0].sm_scale;
        either |= ok && (memcmp(&l[i].sm_scale, &l[0].sm_scale, sizeof(float)) != 0 ||
                         memcmp(&l[i].logits_soft_cap, &l[0].logits_soft_cap, sizeof(float)) != 0);
    }
    FUZZ_CHECK(memcmp(snap, l, sizeof l) == 0);
    if (!either)
        FUZZ_CHECK((s == PA_SUCCESS) == ok);
    if (s == PA_SUCCESS) {
        FUZZ_CHECK(out.window_left == l[0].window_left && out.logits_soft_cap == l[0].logits_soft_cap &&
                   out.sm_scale == l[0].sm_scale);
    } else {
        pa_layer_params sent;
        memset(&sent, SENT_BYTE, sizeof sent);
        FUZZ_CHECK(pa_last_error()[0] != '\0' && memcmp(&out, &sent, sizeof out) == 0);
    }
}

/* pa_swap_plan_runs (cache_ops.h): maximal runs of consecutive pairs (src + 1,
 * dst + 1), in order, computed here in 128 bits (an id + 1 past INT64_MAX
 * follows nothing). Accepted iff num_pairs >= 0, the mapping given when there
 * are pairs, max_runs >= 0, runs given when max_runs > 0 and num_runs given;
 * accepted -> *num_runs the run count (at most num_pairs), the first
 * min(max_runs, count) runs exactly those, nothing after them written;
 * refused -> a message and nothing written. */
static void fuzz_swap_runs(reader *r) {
    int64_t np = rd_field(r, 16);
    const int64_t max_runs = rd_field(r, 16);
    const uint8_t opts = rd_u8(r);
    prng g = {(uint32_t)rd_i32(r)};
    const int64_t cnt = np > 0 && np <= 16 ? np : 0;
    int64_t *map = malloc(sizeof(int64_t) * (size_t)(2 * cnt) + 1);
    static const int64_t edges[] = {INT64_MAX, INT64_MAX - 1, INT64_MIN, -1, 0, 1};
    for (int64_t i = 0; i < cnt; i++) {
        const uint64_t k = pr_next(&g) % 8;
        if (i > 0 && k < 5) { /* continue a run, mostly */
            map[2 * i] = (int64_t)((uint64_t)map[2 * i - 2] + 1);
            map[2 * i + 1] = (int64_t)((uint64_t)map[2 * i - 1] + (k == 4 ? 2 : 1));
        } else if (k == 5) {
            map[2 * i] = edges[pr_next(&g) % 6], map[2 * i + 1] = edges[pr_next(&g) % 6];
        } else {
            map[2 * i] = pr_range(&g, -2, 40), map[2 * i + 1] = pr_range(&g, -2, 40);
        }
    }
    const int64_t mr = max_runs > 0 && max_runs <= 16 ? max_runs : 0;
    pa_block_run *runs = opts & 1 ? NULL : sent_buf(mr * (int64_t)sizeof(pa_block_run), 1);
    int64_t nr = SENT;
    const int64_t *mp = opts & 2 && cnt == 0 ? NULL : map;
    if (np > 16 && !(opts & 4))
        mp = NULL; /* more pairs than the buffer: refused for the NULL mapping */
    if (np > 16 && mp)
        goto done;
    if (max_runs > 16 && runs)
        goto done; /* more runs than the buffer */
    {
        const pa_status s = pa_swap_plan_runs(mp, np, runs, max_runs, opts & 8 ? NULL : &nr);
        const int ok = np >= 0 && (np == 0 || mp) && max_runs >= 0 && (max_runs == 0 || runs) && !(opts & 8);
        FUZZ_CHECK((s == PA_SUCCESS) == ok);
        if (s != PA_SUCCESS) {
            FUZZ_CHECK(pa_last_error()[0] != '\0' && nr == SENT);
            FUZZ_CHECK(!runs || untouched(runs, (size_t)mr * sizeof(pa_block_run) + 1));
            goto done;
        }
        int64_t want = 0;
        for (int64_t i = 0; i < np;) {
            int64_t j = i + 1;
            while (j < np && (__int128)map[2 * j] == (__int128)map[2 * i] + (j - i) &&
                   (__int128)map[2 * j + 1] == (__int128)map[2 * i + 1] + (j - i))
                j++;
            if (want < mr)
                FUZZ_CHECK(runs[want].src_block == map[2 * i] && runs[want].dst_block == map[2 * i + 1] &&
                           runs[want].num_blocks == j - i);
            want++;
            i = j;
        }
        FUZZ_CHECK(nr == want && nr <= (np > 0 ? np : 0));
        if (runs) {
            const int64_t w = want < mr ? want : mr;
            FUZZ_CHECK(untouched(runs + w, (size_t)(mr - w) * sizeof(pa_block_run) + 1));
        }
    }
done:
    free(map);
    free(runs);
}

static __int128 r256(__int128 x) { return (x + 255) / 256 * 256; }

/* pa_paged_attention_v2_workspace_size and pa_paged_attention_decode_workspace_size
 * (decode.h): they read only num_seqs, num_heads, kv.num_kv_heads,
 * kv.head_size, max_seq_len and q_dtype, so a struct with every other field
 * changed (junk included) gets the same answer; 0 for num_seqs 0; else the
 * layout of tmp_out [num_seqs, num_heads, P, head_size] (4 bytes an element,
 * 2 for f16 and bf16), exp_sums and max_logits [num_seqs, num_heads, P] f32,
 * each part at a multiple of 256 bytes, with P = ceil(max_seq_len / 512) for
 * v2 (0 when P is 1; max_seq_len past 65535 x 512 refused) and min(64,
 * ceil(max_seq_len / 256)) for the recommended entry. Plainly valid shapes
 * (heads a positive multiple of the KV heads, head sizes the ops take, a
 * float query dtype, max_seq_len > 0) are accepted; refused -> a message and
 * *bytes untouched. */
static void fuzz_decode_workspace(reader *r) {
    pa_decode_params p;
    memset(&p, 0, sizeof p);
    p.num_seqs = rd_len(r, 8);
    p.num_heads = rd_len(r, 16);
    p.kv.num_kv_heads = rd_len(r, 4);
    const uint8_t hsel = rd_u8(r);
    p.kv.head_size = hsel < 230 ? small_heads[hsel % 8] : rd_field(r, 300);
    const uint8_t lsel = rd_u8(r);
    p.max_seq_len = lsel < 128   ? rd_len(r, 200)
                    : lsel < 192 ? (int32_t)((int64_t)rd_len(r, 200) * 517 % INT32_MAX)
                    : lsel < 240 ? (int32_t)(33553920 - 2 + (int64_t)rd_len(r, 4) % 16)
                                 : rd_i32(r);
    p.q_dtype = rd_dtype(r);
    prng g = {(uint32_t)rd_i32(r)};
    /* the same shape with every other field changed */
    pa_decode_params j;
    memset(&j, SENT_BYTE, sizeof j);
    j.num_seqs = p.num_seqs, j.num_heads = p.num_heads, j.kv.num_kv_heads = p.kv.num_kv_heads;
    j.kv.head_size = p.kv.head_size, j.max_seq_len = p.max_seq_len, j.q_dtype = p.q_dtype;
    j.kv.layout = (pa_kv_layout)(pr_next(&g) % 6), j.kv.dtype = (pa_dtype)(pr_next(&g) % 6);
    j.kv.num_blocks = (int32_t)pr_range(&g, -2, 3), j.kv.block_size = (int32_t)pr_range(&g, -1, 3);
    j.out = NULL, j.query = (const void *)3, j.block_tables = NULL, j.seq_lens = NULL;
    j.scale = NAN, j.sliding_window = -1, j.lse = (float *)1;
    const int64_t ns = p.num_seqs, nh = p.num_heads, kvh = p.kv.num_kv_heads, hs = p.kv.head_size;
    const int64_t L = p.max_seq_len;
    const int shape_ok =
        ns >= 0 && nh > 0 && kvh > 0 && nh % kvh == 0 && hs >= 8 && hs <= 256 && hs % 8 == 0 && (ns == 0 || L > 0);
    const int esz = p.q_dtype == PA_DTYPE_F32 ? 4 : p.q_dtype == PA_DTYPE_F16 || p.q_dtype == PA_DTYPE_BF16 ? 2 : 0;
    for (int mode = 0; mode < 2; mode++) {
        size_t b1 = (size_t)SENT, b2 = (size_t)SENT;
        pa_status (*f)(const pa_decode_params *, size_t *) =
            mode ? pa_paged_attention_decode_workspace_size : pa_paged_attention_v2_workspace_size;
        const pa_status s1 = f(&p, &b1), s2 = f(&j, &b2);
        FUZZ_CHECK(s1 == s2 && b1 == b2);
        FUZZ_CHECK(f(&p, NULL) != PA_SUCCESS);
        const int64_t P = L > 0 ? (mode ? ((L + 255) / 256 < 64 ? (L + 255) / 256 : 64) : (L + 511) / 512) : 0;
        if (s1 != PA_SUCCESS) {
            FUZZ_CHECK(b1 == (size_t)SENT && pa_last_error()[0] != '\0');
            FUZZ_CHECK(!shape_ok || !esz || (!mode && ns > 0 && L > 33553920) ||
                       (__int128)ns * nh * P * hs > ((int64_t)1 << 40));
            continue;
        }
        FUZZ_CHECK(!(!mode && ns > 0 && L > 33553920)); /* v2: at most 65535 x 512 */
        if (ns == 0 || (!mode && P == 1)) {
            FUZZ_CHECK(b1 == 0);
            continue;
        }
        const __int128 rows = (__int128)ns * nh * P;
        const __int128 e = rows * 4, t = rows * hs * (esz ? esz : 4);
        if (P == 1 && b1 == 0)
            continue;
        if (esz)
            FUZZ_CHECK(b1 >= r256(t) + r256(e) + e && b1 <= r256(t) + 2 * r256(e));
        else
            FUZZ_CHECK(b1 >= r256(t) + r256(e) + e);
    }
}

/* pa_ragged_workspace_size (ragged.h): a function of max_num_seqs,
 * max_num_batched_tokens, pages_per_seq * page_size, the heads, head_size,
 * q_dtype and kv_split_tokens alone. Checked: whatever pa_ragged_validate
 * accepts it sizes; 0 for an empty batch; the same bytes with the pointers,
 * the scale, window, soft cap, mask value, sinks and num_pages changed, and
 * with pages_per_seq and page_size traded at the same product; refused -> a
 * message and *bytes untouched. */
static void fuzz_ragged_workspace(reader *r) {
    /* Addresses alone (nothing is read), 2^56 bytes apart, out below the
     * inputs: a problem accepted so has out's rows under 2^56 bytes, so
     * permuting the inputs above it (below) moves no output inside an input
     * (the entries refuse that). */
    unsigned char *bufs[8];
    for (int i = 0; i < 8; i++)
        bufs[i] = (unsigned char *)(((uintptr_t)i + 1) << 56);
    pa_ragged_params p;
    memset(&p, 0, sizeof p);
    const uint8_t lsel = rd_u8(r);
    p.kv.layout = lsel < 230 ? PA_LAYOUT_COMBINED : (pa_kv_layout)(lsel % 4);
    p.q_dtype = rd_dtype(r);
    p.kv.dtype = rd_u8(r) < 180 ? p.q_dtype : rd_dtype(r);
    p.kv.num_blocks = rd_len(r, 64);
    p.kv.block_size = rd_u8(r) < 200 ? 1 << (rd_u8(r) % 9) : rd_field(r, 40);
    p.kv.num_kv_heads = rd_len(r, 4);
    const uint8_t hsel = rd_u8(r);
    p.kv.head_size = hsel < 230 ? small_heads[hsel % 8] : rd_field(r, 300);
    p.num_q_heads = heads_of(p.kv.num_kv_heads, 1 + rd_u8(r) % 5);
    if (rd_u8(r) == 3)
        p.num_q_heads = rd_field(r, 40);
    const uint8_t ssel = rd_u8(r);
    p.max_num_seqs = ssel < 200 ? rd_len(r, 64) : (int32_t)((int64_t)rd_len(r, 200) * 331 % INT32_MAX);
    const uint8_t tsel = rd_u8(r);
    p.max_num_batched_tokens = tsel < 128 ? rd_len(r, 200) : (int32_t)((int64_t)rd_len(r, 200) * 97 % INT32_MAX);
    const uint8_t psel = rd_u8(r);
    p.pages_per_seq = psel < 200 ? rd_len(r, 64) : (int32_t)((int64_t)rd_len(r, 200) * 1009 % INT32_MAX);
    const uint8_t ksel = rd_u8(r);
    p.kv_split_tokens = ksel < 180 ? 0 : ksel < 250 ? 64 * (ksel - 180) : rd_field(r, 200);
    if (rd_u8(r) == 5) {
        p.lse_head_stride = rd_stride(r);
        p.lse_token_stride = rd_stride(r);
    }
    p.sm_scale = 0.125f;
    p.out = bufs[0], p.q = bufs[1], p.kv.key = bufs[2];
    p.kv.value = p.kv.layout == PA_LAYOUT_COMBINED ? NULL : bufs[3];
    p.kv_lens = (const int32_t *)bufs[4], p.page_indices = (const int32_t *)bufs[5];
    p.cu_q_lens = (const int32_t *)bufs[6], p.num_seqs = (const int32_t *)bufs[7];
    size_t b = (size_t)SENT;
    const pa_status v = pa_ragged_validate(&p), s = pa_ragged_workspace_size(&p, &b);
    if (v == PA_SUCCESS)
        FUZZ_CHECK(s == PA_SUCCESS);
    if (s != PA_SUCCESS) {
        FUZZ_CHECK(b == (size_t)SENT && pa_last_error()[0] != '\0');
        return;
    }
    if (p.max_num_seqs == 0 || p.max_num_batched_tokens == 0)
        FUZZ_CHECK(b == 0);
    FUZZ_CHECK(pa_ragged_workspace_size(&p, NULL) != PA_SUCCESS);
    /* what it does not depend on */
    pa_ragged_params p2 = p;
    static const float sinks[256];
    p2.sm_scale = 3.0f, p2.sliding_window = 7, p2.soft_cap = 30.0f, p2.mask_value = -1e4f, p2.sinks = sinks;
    p2.q = bufs[6], p2.kv_lens = (const int32_t *)bufs[1], p2.cu_q_lens = (const int32_t *)bufs[7];
    p2.page_indices = (const int32_t *)bufs[3], p2.num_seqs = (const int32_t *)bufs[4];
    p2.kv.num_blocks = p.kv.num_blocks > 1 ? p.kv.num_blocks - 1 : p.kv.num_blocks + 1;
    size_t b2 = (size_t)SENT;
    FUZZ_CHECK(pa_ragged_workspace_size(&p2, &b2) == PA_SUCCESS && b2 == b);
    /* pages_per_seq * page_size is what counts */
    pa_ragged_params p3 = p;
    if (p.kv.block_size % 2 == 0 && p.pages_per_seq <= INT32_MAX / 2)
        p3.kv.block_size /= 2, p3.pages_per_seq *= 2;
    else if (p.pages_per_seq % 2 == 0 && p.kv.block_size <= INT32_MAX / 2)
        p3.kv.block_size *= 2, p3.pages_per_seq /= 2;
    size_t b3 = (size_t)SENT;
    if (pa_ragged_workspace_size(&p3, &b3) == PA_SUCCESS)
        FUZZ_CHECK(b3 == b);
}

/* A tolerance or scale: mostly small, sometimes 0, negative, NaN or infinite. */
static double rd_tol(reader *r) {
    const uint8_t t = rd_u8(r);
    return t < 150   ? t / 1000.0
           : t < 175 ? 0.0
           : t < 190 ? -(t - 174) / 100.0
           : t < 200 ? NAN
           : t < 210 ? INFINITY
                     : rd_float(r);
}

/* pa_compare and pa_compare_with_allowance (check.h), element by element
 * against the header's rule computed here: |got - ref| <= atol + rtol |ref| +
 * extra_scale |extra[i]|, a NaN got failing, an infinite got passing only
 * against the same infinity, a finite got failing against a non-finite ref.
 * Valid -> returns whether none failed; n, the mismatch count, the failing
 * non-finite gots, the first eight indices (-1 after) and their values, and
 * the largest absolute and relative errors as computed here; pa_compare is
 * the allowance form with no extra. Invalid (n < 0, a NaN or negative
 * tolerance or extra_scale, got or ref NULL with n > 0, an unknown dtype) ->
 * 0, one mismatch with no index, NaN errors. Elements where the rule's sum is
 * not a number (inf x 0) or sits within rounding of the error are left out. */
static void fuzz_compare(reader *r) {
    const pa_dtype gd = rd_dtype(r);
    const uint8_t nsel = rd_u8(r);
    const int64_t n = nsel < 240 ? nsel % 40 : nsel < 250 ? -(int64_t)(nsel - 239) : rd_stride(r);
    pa_tolerance tol;
    tol.atol = rd_tol(r);
    tol.rtol = rd_tol(r);
    const double es = rd_tol(r);
    const uint8_t opts = rd_u8(r);
    prng g = {(uint32_t)rd_i32(r)};
    const int e = esize((int)gd) ? esize((int)gd) : 1;
    const int64_t cnt = n > 0 && n <= 64 ? n : 0;
    unsigned char *got = malloc((size_t)(cnt * e) + 1);
    float *ref = malloc(sizeof(float) * (size_t)cnt + 1), *extra = malloc(sizeof(float) * (size_t)cnt + 1);
    static const float specials[] = {0.0f, -0.0f, 1.0f, -2.5f, INFINITY, -INFINITY, NAN, 1e-3f, 300.0f, 1e30f};
    for (int64_t i = 0; i < cnt; i++) {
        const uint64_t k = pr_next(&g) % 8;
        ref[i] = k < 4 ? (float)pr_range(&g, -2000, 2000) / 256.0f : specials[pr_next(&g) % 10];
        const float near = ref[i] + (float)pr_range(&g, -8, 8) / 512.0f;
        if (k == 6 && esize((int)gd))
            for (int b = 0; b < e; b++)
                got[i * e + b] = (unsigned char)pr_next(&g);
        else if (esize((int)gd))
            float_as_elem(gd, k == 7 ? specials[pr_next(&g) % 10] : near, got + i * e);
        extra[i] = pr_next(&g) % 16 == 0 ? specials[pr_next(&g) % 10] : (float)pr_range(&g, -64, 64) / 64.0f;
    }
    const void *gp = opts & 1 && n > 0 ? NULL : got;
    const float *rp = opts & 2 && n > 0 ? NULL : ref;
    const float *xp = opts & 4 ? extra : NULL;
    if (n > 64 && gp && rp)
        goto done; /* too big to run */
    pa_compare_result res, res2;
    memset(&res, SENT_BYTE, sizeof res);
    const int ret =
        opts & 8 ? pa_compare(gp, gd, rp, n, tol, &res) : pa_compare_with_allowance(gp, gd, rp, xp, es, n, tol, &res);
    const int ret_null =
        opts & 8 ? pa_compare(gp, gd, rp, n, tol, NULL) : pa_compare_with_allowance(gp, gd, rp, xp, es, n, tol, NULL);
    FUZZ_CHECK(ret == ret_null);
    if (!(opts & 8)) { /* pa_compare is the form with no extra */
        memset(&res2, SENT_BYTE, sizeof res2);
        if (!xp && es == 0.0)
            FUZZ_CHECK(pa_compare(gp, gd, rp, n, tol, &res2) == ret && res2.mismatches == res.mismatches);
    }
    const double xs = opts & 8 ? 0.0 : es;
    const int valid = n >= 0 && !isnan(tol.atol) && tol.atol >= 0.0 && !isnan(tol.rtol) && tol.rtol >= 0.0 &&
                      !isnan(xs) && xs >= 0.0 && (n == 0 || (gp && rp)) && esize((int)gd) > 0;
    if (!valid) {
        FUZZ_CHECK(ret == 0 && res.mismatches == 1 && isnan(res.max_abs_err) && isnan(res.max_rel_err));
        for (int i = 0; i < 8; i++)
            FUZZ_CHECK(res.first_bad[i] == -1);
        goto done;
    }
    {
        int64_t mism = 0, nanc = 0, idx[8];
        double gv[8], fv[8], mabs = 0.0, mrel = 0.0;
        int unsure = 0;
        for (int64_t i = 0; i < n; i++) {
            const double gg = elem_as_float(gd, got, i), f = ref[i];
            int bad;
            if (!isfinite(gg)) {
                bad = !(isinf(gg) && gg == f);
                nanc += bad;
            } else if (!isfinite(f)) {
                bad = 1;
            } else {
                const double err = fabs(gg - f);
                mabs = err > mabs ? err : mabs;
                if (f != 0.0 && err / fabs(f) > mrel)
                    mrel = err / fabs(f);
                const double thr =
                    tol.atol + tol.rtol * fabs(f) + (xp && !(opts & 8) ? xs * fabs((double)extra[i]) : 0.0);
                if (isnan(thr) || fabs(err - thr) <= 1e-9 * (thr > 1.0 ? thr : 1.0))
                    unsure = 1;
                bad = !(err <= thr);
            }
            if (bad) {
                if (mism < 8)
                    idx[mism] = i, gv[mism] = gg, fv[mism] = f;
                mism++;
            }
        }
        FUZZ_CHECK(res.n == n && res.nan_count == nanc && res.max_abs_err == mabs && res.max_rel_err == mrel);
        if (unsure)
            goto done;
        FUZZ_CHECK(ret == (mism == 0) && res.mismatches == mism);
        for (int64_t i = 0; i < 8; i++) {
            FUZZ_CHECK(res.first_bad[i] == (i < mism ? idx[i] : -1));
            if (i < mism)
                FUZZ_CHECK((res.first_got[i] == gv[i] || (isnan(res.first_got[i]) && isnan(gv[i]))) &&
                           (res.first_ref[i] == fv[i] || (isnan(res.first_ref[i]) && isnan(fv[i]))));
        }
    }
done:
    free(got);
    free(ref);
    free(extra);
}

/* pa_dtype_from_name (core.h) and pa_kv_layout_from_name (kv_cache.h): exactly
 * the names the headers list, case-sensitive (dtypes: f32 float32 float, f16
 * float16 half, bf16 bfloat16, fp8 fp8_e4m3 e4m3, fp8_e5m2 e5m2; layouts: the
 * names pa_kv_layout_name gives, vllm nhd hnd combined); anything else,
 * "auto" included, or a NULL argument is PA_ERR_INVALID_ARGUMENT with a
 * message and *out untouched. Every name the library prints parses back. */
static void fuzz_names(reader *r) {
    static const struct {
        const char *name;
        int dt, lay;
    } known[] = {{"f32", 0, -1},      {"float32", 0, -1},     {"float", 0, -1}, {"f16", 1, -1},
                 {"float16", 1, -1},  {"half", 1, -1},        {"bf16", 2, -1},  {"bfloat16", 2, -1},
                 {"fp8", 3, -1},      {"fp8_e4m3", 3, -1},    {"e4m3", 3, -1},  {"fp8_e5m2", 4, -1},
                 {"e5m2", 4, -1},     {"vllm", -1, 0},        {"nhd", -1, 1},   {"hnd", -1, 2},
                 {"combined", -1, 3}, {"auto", -1, -1},       {"F16", -1, -1},  {"NHD", -1, -1},
                 {"float64", -1, -1}, {"fp8_e4m3fn", -1, -1}, {"", -1, -1},     {"bf16 ", -1, -1}};
    const int nk = (int)(sizeof known / sizeof known[0]);
    char buf[24];
    const uint8_t k = rd_u8(r);
    if (k < 160) {
        snprintf(buf, sizeof buf, "%s", known[k % nk].name);
        const uint8_t m = rd_u8(r);
        const size_t len = strlen(buf);
        if (m % 4 == 1 && len) /* one byte changed */
            buf[rd_u8(r) % len] = (char)rd_u8(r);
        else if (m % 4 == 2 && len) /* cut */
            buf[rd_u8(r) % len] = '\0';
        else if (m % 4 == 3 && len + 1 < sizeof buf) /* one byte added */
            buf[len] = (char)rd_u8(r), buf[len + 1] = '\0';
    } else {
        size_t i = 0;
        for (; i + 1 < sizeof buf && r->n > 0; i++)
            if ((buf[i] = (char)rd_u8(r)) == '\0')
                break;
        buf[i] = '\0';
    }
    const size_t len = strlen(buf);
    char *name = malloc(len + 1); /* exact: ASan sees a read past the terminator */
    memcpy(name, buf, len + 1);
    int want_dt = -1, want_lay = -1;
    for (int i = 0; i < nk; i++)
        if (strcmp(name, known[i].name) == 0)
            want_dt = known[i].dt, want_lay = known[i].lay;
    pa_dtype d = (pa_dtype)SENT;
    pa_status s = pa_dtype_from_name(name, &d);
    if (want_dt >= 0)
        FUZZ_CHECK(s == PA_SUCCESS && (int)d == want_dt);
    else
        FUZZ_CHECK(s == PA_ERR_INVALID_ARGUMENT && (int)d == SENT && pa_last_error()[0] != '\0');
    pa_kv_layout l = (pa_kv_layout)SENT;
    s = pa_kv_layout_from_name(name, &l);
    if (want_lay >= 0)
        FUZZ_CHECK(s == PA_SUCCESS && (int)l == want_lay);
    else
        FUZZ_CHECK(s == PA_ERR_INVALID_ARGUMENT && (int)l == SENT && pa_last_error()[0] != '\0');
    FUZZ_CHECK(pa_dtype_from_name(NULL, &d) == PA_ERR_INVALID_ARGUMENT && pa_last_error()[0] != '\0');
    FUZZ_CHECK(pa_dtype_from_name(name, NULL) == PA_ERR_INVALID_ARGUMENT && pa_last_error()[0] != '\0');
    FUZZ_CHECK(pa_kv_layout_from_name(NULL, &l) == PA_ERR_INVALID_ARGUMENT && pa_last_error()[0] != '\0');
    FUZZ_CHECK(pa_kv_layout_from_name(name, NULL) == PA_ERR_INVALID_ARGUMENT && pa_last_error()[0] != '\0');
    FUZZ_CHECK((int)d == (want_dt >= 0 ? want_dt : SENT) && (int)l == (want_lay >= 0 ? want_lay : SENT));
    free(name);
    /* the printed names parse back */
    for (int t = 0; t < PA_DTYPE_COUNT; t++)
        FUZZ_CHECK(pa_dtype_from_name(pa_dtype_name((pa_dtype)t), &d) == PA_SUCCESS && (int)d == t);
    for (int t = 0; t < 4; t++)
        FUZZ_CHECK(pa_kv_layout_from_name(pa_kv_layout_name((pa_kv_layout)t), &l) == PA_SUCCESS && (int)l == t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size};
    const uint8_t which = rd_u8(&r);
    /* 216..255: the later cases (below 216 each input keeps the case it had
     * before they came, the seeds included) */
    if (which >= 216) {
        switch ((which - 216) % 10) {
        case 0:
#ifdef FUZZ_HAVE_METADATA
            fuzz_ragged_metadata(&r);
#endif
            break;
        case 1: fuzz_prompt(&r); break;
        case 2: fuzz_mixed(&r); break;
        case 3: fuzz_convert(&r); break;
        case 4: fuzz_hyperparameters(&r); break;
        case 5: fuzz_swap_runs(&r); break;
        case 6: fuzz_decode_workspace(&r); break;
        case 7: fuzz_ragged_workspace(&r); break;
        case 8: fuzz_compare(&r); break;
        case 9: fuzz_names(&r); break;
        }
        return 0;
    }
    switch (which % 12) {
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
    case 4: fuzz_kv_cache(&r); break;
    case 5: fuzz_reshape_and_cache(&r); break;
    case 6: fuzz_kv_cache_update(&r); break;
    case 7: fuzz_block_moves(&r); break;
    case 8: fuzz_decode(&r); break;
    case 9: fuzz_context(&r); break;
    case 10: fuzz_ragged(&r); break;
    case 11: fuzz_merge(&r); break;
    }
    return 0;
}
