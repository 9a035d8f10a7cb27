/* Smallest program against the installed library: one decode step of one
 * sequence over a two-block paged cache, on the CPU reference (and the same
 * answer checked by hand). Build: make -C examples (uses pkg-config). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <pagedattn/pagedattn.h>

int main(void) {
    enum { HEADS = 2, KV_HEADS = 1, HEAD = 32, BLOCK = 8, BLOCKS = 4, LEN = 11 };
    float q[HEADS * HEAD], out[HEADS * HEAD];
    /* flash NHD layout: [blocks, block, kv_heads, head] */
    static float k[BLOCKS * BLOCK * KV_HEADS * HEAD], v[BLOCKS * BLOCK * KV_HEADS * HEAD];
    int32_t table[2] = {3, 1}; /* logical block 0 -> physical 3, 1 -> 1 */
    int32_t lens[1] = {LEN};
    for (int i = 0; i < HEADS * HEAD; i++)
        q[i] = (float)((i % 7) - 3) * 0.1f;
    for (int i = 0; i < BLOCKS * BLOCK * HEAD; i++) {
        k[i] = sinf(0.37f * (float)i);
        v[i] = cosf(0.11f * (float)i);
    }
    pa_decode_params p;
    memset(&p, 0, sizeof p);
    p.out = out;
    p.query = q;
    p.q_dtype = PA_DTYPE_F32;
    p.kv = (pa_kv_cache){.layout = PA_LAYOUT_FLASH_NHD,
                         .dtype = PA_DTYPE_F32,
                         .key = k,
                         .value = v,
                         .num_blocks = BLOCKS,
                         .block_size = BLOCK,
                         .num_kv_heads = KV_HEADS,
                         .head_size = HEAD};
    p.block_tables = table;
    p.block_table_stride = 2;
    p.seq_lens = lens;
    p.num_seqs = 1;
    p.num_heads = HEADS;
    p.max_seq_len = LEN;
    p.scale = 1.0f / sqrtf((float)HEAD);
    pa_status s = pa_ref_paged_decode(&p);
    if (s != PA_SUCCESS) {
        fprintf(stderr, "pa_ref_paged_decode: %s: %s\n", pa_status_string(s), pa_last_error());
        return 1;
    }
    /* the same by hand for head 0, element 0 */
    double w[LEN], mx = -1e30, sum = 0, acc = 0;
    for (int t = 0; t < LEN; t++) {
        const float *kt = k + ((size_t)table[t / BLOCK] * BLOCK + t % BLOCK) * HEAD;
        double d = 0;
        for (int i = 0; i < HEAD; i++)
            d += q[i] * kt[i];
        w[t] = d * p.scale;
        mx = w[t] > mx ? w[t] : mx;
    }
    for (int t = 0; t < LEN; t++) {
        w[t] = exp(w[t] - mx);
        sum += w[t];
        acc += w[t] * v[((size_t)table[t / BLOCK] * BLOCK + t % BLOCK) * HEAD];
    }
    printf("libpagedattn %s: out[0] = %.6f, by hand %.6f, %d CUDA device(s)\n", pa_version(), out[0], acc / sum,
           pa_device_count());
    return fabs(out[0] - acc / sum) < 1e-5 ? 0 : 1;
}
