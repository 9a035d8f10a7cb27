/* `pagedattn bench|check blocks`: the block movers of a serving engine's
 * memory manager, at the sizes it moves them.
 *
 * The problem: --seqs sequences of --ctx tokens (a list: one problem each),
 * ceil(ctx / block size) blocks each, live in a device cache (--layout,
 * --cache-dtype, --heads' KV heads, --head-size, --block-size) of twice as
 * many blocks, in random order. --variant picks the move:
 *   swap-out  pa_swap_blocks_kv: every block of every sequence to a random free
 *             block of a pinned host cache of the same geometry (preemption);
 *   swap-in   the same blocks back from the host cache to random device blocks;
 *   copy      pa_copy_blocks: every block to a random free block of the same
 *             device cache, in --layers layers (K and V each) in one launch
 *             (a fork's copy-on-write, at a whole batch's size).
 * Swaps run on a non-default stream (the batched-copy path a server takes).
 * Bytes counted: what moves, once for a swap (its roof is the pinned-host copy
 * bandwidth in the same direction, measured in the same run), read plus
 * written for copy (its roof is the device copy bandwidth, counted alike).
 *
 * `check blocks` runs the move on the GPU and on the CPU reference and
 * compares the whole destination buffers byte for byte (blocks no pair
 * names must keep their fill). */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cli.h"
#include "problems.h"

enum { BLK_SWAP_OUT, BLK_SWAP_IN, BLK_COPY }; /* cli.c's table of variant names */

typedef struct blocks_problem {
    int variant, layers;
    pa_kv_cache geom;   /* geometry of one layer's cache; pointers unset */
    int64_t num_blocks; /* per cache (device and host alike) */
    int64_t block_bytes;
    int bufs; /* buffers per layer: 2 (K, V) or 1 (combined layout) */
    int64_t num_pairs;
    int64_t *mapping; /* host [num_pairs][2] */
    /* Host images: src holds the data, dst the destination's initial fill; one per layer and buffer. */
    unsigned char **src, **dst;
    void **ref_k, **ref_v; /* copy: src's layers as the reference takes them (ref_v NULL: combined) */
} blocks_problem;

static const char *variant_name(int v) { return pa_variant_name("blocks", v); }

static void blocks_problem_free(blocks_problem *b) {
    const int n = b->layers * b->bufs;
    for (int i = 0; b->src && i < n; i++)
        free(b->src[i]);
    for (int i = 0; b->dst && i < n; i++)
        free(b->dst[i]);
    free(b->src);
    free(b->dst);
    free(b->ref_k);
    free(b->ref_v);
    free(b->mapping);
    memset(b, 0, sizeof *b);
}

static void shuffle(pa_rng *rng, int64_t *a, int64_t n) {
    for (int64_t i = n - 1; i > 0; i--) {
        const int64_t j = (int64_t)(pa_rng_next(rng) % (uint64_t)(i + 1)), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static int blocks_problem_make(const pa_op_opts *o, int ctx, const char *cmd, blocks_problem *b) {
    memset(b, 0, sizeof *b);
    b->variant = o->variant ? pa_variant_index("blocks", o->variant) : BLK_SWAP_OUT;
    if (b->variant < 0) {
        fprintf(stderr, "pagedattn %s blocks: unknown --variant '%s'; known: %s\n", cmd, o->variant,
                pa_variant_list("blocks"));
        return PA_CLI_EXIT_USAGE;
    }
    b->layers = b->variant == BLK_COPY ? o->layers : 1;
    if (b->variant != BLK_COPY && o->layers != 1) {
        fprintf(stderr, "pagedattn %s blocks: --layers is for --variant copy (a swap moves one layer's cache)\n", cmd);
        return PA_CLI_EXIT_USAGE;
    }
    const int bs = o->block_size;
    const int64_t per_seq = ((int64_t)ctx + bs - 1) / bs;
    b->num_pairs = (int64_t)o->seqs * per_seq;
    b->num_blocks = 2 * b->num_pairs;
    if (b->num_blocks > INT32_MAX) {
        fprintf(stderr, "pagedattn %s blocks: %lld blocks is too many for this benchmark\n", cmd,
                (long long)b->num_blocks);
        return PA_CLI_EXIT_USAGE;
    }
    char dummy[16];
    b->geom = (pa_kv_cache){.layout = o->layout,
                            .dtype = o->cache_dtype,
                            .key = dummy,
                            .value = o->layout == PA_LAYOUT_COMBINED ? NULL : dummy,
                            .num_blocks = (int32_t)b->num_blocks,
                            .block_size = bs,
                            .num_kv_heads = o->kv_heads,
                            .head_size = o->head_size};
    int64_t ke = 0, ve = 0;
    if (pa_kv_cache_validate(&b->geom) != PA_SUCCESS || pa_kv_cache_elements(&b->geom, &ke, &ve) != PA_SUCCESS) {
        fprintf(stderr, "pagedattn %s blocks: %s\n", cmd, pa_last_error());
        return PA_CLI_EXIT_USAGE;
    }
    b->bufs = o->layout == PA_LAYOUT_COMBINED ? 1 : 2;
    b->block_bytes = ke / b->num_blocks * (int64_t)pa_dtype_size(o->cache_dtype);
    /* Host memory: src and dst images of every buffer (the check adds the GPU's copy back). */
    const double host = 2.0 * (double)b->layers * b->bufs * (double)b->num_blocks * (double)b->block_bytes;
    if (host > 8e9) {
        fprintf(stderr, "pagedattn %s blocks: the problem needs %.1f GB of host memory; at most 8 GB\n", cmd,
                host / 1e9);
        return PA_CLI_EXIT_USAGE;
    }
    const int n = b->layers * b->bufs;
    const size_t buf_bytes = (size_t)(b->num_blocks * b->block_bytes);
    b->src = calloc((size_t)n, sizeof *b->src);
    b->dst = calloc((size_t)n, sizeof *b->dst);
    b->mapping = malloc(sizeof(int64_t) * 2 * (size_t)b->num_pairs);
    int64_t *perm = malloc(sizeof(int64_t) * (size_t)b->num_blocks);
    int ok = b->src && b->dst && b->mapping && perm;
    pa_rng rng = pa_rng_make(o->seed);
    for (int i = 0; ok && i < n; i++) {
        b->src[i] = malloc(buf_bytes);
        b->dst[i] = b->variant == BLK_COPY ? NULL : malloc(buf_bytes); /* copy: one buffer, src is dst */
        ok = b->src[i] && (b->variant == BLK_COPY || b->dst[i]);
        if (!ok)
            break;
        /* Random bytes everywhere: any byte copied to the wrong place, or not copied, differs. */
        for (size_t k = 0; k < buf_bytes; k += 8) {
            const uint64_t r = pa_rng_next(&rng);
            memcpy(b->src[i] + k, &r, buf_bytes - k < 8 ? buf_bytes - k : 8);
        }
        if (b->dst[i])
            memset(b->dst[i], 0xA5, buf_bytes);
    }
    if (!ok) {
        free(perm);
        blocks_problem_free(b);
        fprintf(stderr, "pagedattn %s blocks: out of host memory\n", cmd);
        return PA_CLI_EXIT_FAIL;
    }
    /* The sequences' blocks: the first num_pairs of a random permutation of the
     * pool; destinations: a random order of the pool's blocks (swap: any host
     * block; copy: the blocks no sequence holds, so no destination is a source). */
    for (int64_t i = 0; i < b->num_blocks; i++)
        perm[i] = i;
    shuffle(&rng, perm, b->num_blocks);
    for (int64_t p = 0; p < b->num_pairs; p++)
        b->mapping[2 * p] = perm[p];
    int64_t *dst = perm + b->num_pairs; /* the other half */
    if (b->variant != BLK_COPY) {
        for (int64_t i = 0; i < b->num_blocks; i++)
            perm[i] = i;
        shuffle(&rng, perm, b->num_blocks);
        dst = perm;
    }
    for (int64_t p = 0; p < b->num_pairs; p++)
        b->mapping[2 * p + 1] = dst[p];
    free(perm);
    if (b->variant == BLK_COPY) {
        b->ref_k = malloc(sizeof(void *) * (size_t)b->layers);
        b->ref_v = b->bufs == 2 ? malloc(sizeof(void *) * (size_t)b->layers) : NULL;
        if (!b->ref_k || (b->bufs == 2 && !b->ref_v)) {
            blocks_problem_free(b);
            fprintf(stderr, "pagedattn %s blocks: out of host memory\n", cmd);
            return PA_CLI_EXIT_FAIL;
        }
        for (int l = 0; l < b->layers; l++) {
            b->ref_k[l] = b->src[l * b->bufs];
            if (b->ref_v)
                b->ref_v[l] = b->src[l * b->bufs + 1];
        }
    }
    return 0;
}

/* Device (and pinned host) copies. */
typedef struct blocks_dev {
    const blocks_problem *b;
    void **dsrc, **ddst;   /* per buffer: device or pinned host, by variant */
    uint64_t *kptr, *vptr; /* copy: device arrays of the layers' base addresses */
    int64_t *dmap;         /* copy: device mapping */
    pa_kv_cache src_kv, dst_kv;
    cudaStream_t stream;
} blocks_dev;

/* Which side of a move is pinned host memory: the source of swap-in, the
 * destination of swap-out; the rest is device memory (copy has no dst side). */
static int src_pinned(const blocks_problem *b) { return b->variant == BLK_SWAP_IN; }
static int dst_pinned(const blocks_problem *b) { return b->variant == BLK_SWAP_OUT; }

static int side_alloc(void **p, size_t bytes, int pinned) {
    return (pinned ? cudaMallocHost(p, bytes) : cudaMalloc(p, bytes)) == cudaSuccess;
}
static void side_free(void *p, int pinned) {
    if (pinned)
        cudaFreeHost(p);
    else
        cudaFree(p);
}

static void blocks_dev_free(blocks_dev *d) {
    const int n = d->b ? d->b->layers * d->b->bufs : 0;
    for (int i = 0; i < n; i++) {
        side_free(d->dsrc ? d->dsrc[i] : NULL, src_pinned(d->b));
        side_free(d->ddst ? d->ddst[i] : NULL, dst_pinned(d->b));
    }
    free(d->dsrc);
    free(d->ddst);
    cudaFree(d->kptr);
    cudaFree(d->vptr);
    cudaFree(d->dmap);
    if (d->stream)
        cudaStreamDestroy(d->stream);
    memset(d, 0, sizeof *d);
}

static int blocks_dev_make(const blocks_problem *b, const char *cmd, blocks_dev *d) {
    memset(d, 0, sizeof *d);
    d->b = b;
    const int n = b->layers * b->bufs;
    const size_t bytes = (size_t)(b->num_blocks * b->block_bytes);
    d->dsrc = calloc((size_t)n, sizeof *d->dsrc);
    d->ddst = calloc((size_t)n, sizeof *d->ddst);
    int ok = d->dsrc && d->ddst && cudaStreamCreate(&d->stream) == cudaSuccess;
    for (int i = 0; ok && i < n; i++) {
        ok = side_alloc(&d->dsrc[i], bytes, src_pinned(b)) &&
             cudaMemcpy(d->dsrc[i], b->src[i], bytes, cudaMemcpyDefault) == cudaSuccess;
        if (ok && b->variant != BLK_COPY)
            ok = side_alloc(&d->ddst[i], bytes, dst_pinned(b)) &&
                 cudaMemcpy(d->ddst[i], b->dst[i], bytes, cudaMemcpyDefault) == cudaSuccess;
    }
    if (ok && b->variant == BLK_COPY) {
        uint64_t *kp = malloc(sizeof(uint64_t) * (size_t)b->layers), *vp = malloc(sizeof(uint64_t) * (size_t)b->layers);
        ok = kp && vp;
        for (int l = 0; ok && l < b->layers; l++) {
            kp[l] = (uint64_t)(uintptr_t)d->dsrc[l * b->bufs];
            vp[l] = b->bufs == 2 ? (uint64_t)(uintptr_t)d->dsrc[l * b->bufs + 1] : 0;
        }
        ok = ok && cudaMalloc((void **)&d->kptr, sizeof(uint64_t) * (size_t)b->layers) == cudaSuccess &&
             cudaMemcpy(d->kptr, kp, sizeof(uint64_t) * (size_t)b->layers, cudaMemcpyHostToDevice) == cudaSuccess &&
             (b->bufs == 1 ||
              (cudaMalloc((void **)&d->vptr, sizeof(uint64_t) * (size_t)b->layers) == cudaSuccess &&
               cudaMemcpy(d->vptr, vp, sizeof(uint64_t) * (size_t)b->layers, cudaMemcpyHostToDevice) == cudaSuccess)) &&
             cudaMalloc((void **)&d->dmap, sizeof(int64_t) * 2 * (size_t)b->num_pairs) == cudaSuccess &&
             cudaMemcpy(d->dmap, b->mapping, sizeof(int64_t) * 2 * (size_t)b->num_pairs, cudaMemcpyHostToDevice) ==
                 cudaSuccess;
        free(kp);
        free(vp);
    }
    if (!ok) {
        fprintf(stderr, "pagedattn %s blocks: device or pinned allocation or copy failed: %s\n", cmd,
                cudaGetErrorString(cudaGetLastError()));
        blocks_dev_free(d);
        return PA_CLI_EXIT_FAIL;
    }
    d->src_kv = d->dst_kv = b->geom;
    d->src_kv.key = d->dsrc[0];
    d->src_kv.value = b->bufs == 2 ? d->dsrc[1] : NULL;
    if (b->variant != BLK_COPY) {
        d->dst_kv.key = d->ddst[0];
        d->dst_kv.value = b->bufs == 2 ? d->ddst[1] : NULL;
    }
    return 0;
}

static int run_gpu_blocks(void *ctx) {
    blocks_dev *d = ctx;
    const blocks_problem *b = d->b;
    pa_status st;
    if (b->variant == BLK_COPY)
        st = pa_copy_blocks(d->kptr, d->vptr, b->layers, d->dmap, b->num_pairs,
                            b->block_bytes / (int64_t)pa_dtype_size(b->geom.dtype), b->geom.dtype, b->num_blocks,
                            (pa_stream)d->stream);
    else
        st = pa_swap_blocks_kv(&d->dst_kv, &d->src_kv, b->mapping, b->num_pairs, (pa_stream)d->stream);
    if (st != PA_SUCCESS) {
        fprintf(stderr, "pagedattn blocks %s: %s\n", variant_name(b->variant), pa_last_error());
        return 1;
    }
    return 0;
}

/* The CPU reference on the host images (in place: dst, or src for copy). */
static int run_ref_blocks(void *ctx) {
    blocks_problem *b = ctx;
    pa_status st = PA_SUCCESS;
    if (b->variant == BLK_COPY) {
        st = pa_ref_copy_blocks(b->ref_k, b->ref_v, b->layers, b->mapping, b->num_pairs,
                                b->block_bytes / (int64_t)pa_dtype_size(b->geom.dtype), b->geom.dtype, b->num_blocks);
    } else {
        for (int i = 0; st == PA_SUCCESS && i < b->bufs; i++)
            st = pa_ref_swap_blocks(b->dst[i], b->src[i], b->block_bytes, b->mapping, b->num_pairs, b->num_blocks,
                                    b->num_blocks);
    }
    if (st != PA_SUCCESS) {
        fprintf(stderr, "pagedattn blocks %s: %s\n", variant_name(b->variant), pa_last_error());
        return 1;
    }
    return 0;
}

static int check_blocks(const pa_op_opts *o, blocks_problem *b) {
    blocks_dev d;
    int rc = blocks_dev_make(b, "check", &d);
    if (rc)
        return rc;
    const size_t bytes = (size_t)(b->num_blocks * b->block_bytes);
    unsigned char *got = malloc(bytes);
    rc = PA_CLI_EXIT_FAIL;
    if (!got) {
        fprintf(stderr, "pagedattn check blocks: out of host memory\n");
        goto done;
    }
    if (run_gpu_blocks(&d) || cudaStreamSynchronize(d.stream) != cudaSuccess || run_ref_blocks(b)) {
        fprintf(stderr, "pagedattn check blocks: the op failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        goto done;
    }
    size_t bad = 0;
    for (int i = 0; i < b->layers * b->bufs; i++) {
        const void *dev = b->variant == BLK_COPY ? d.dsrc[i] : d.ddst[i];
        const unsigned char *want = b->variant == BLK_COPY ? b->src[i] : b->dst[i];
        if (cudaMemcpy(got, dev, bytes, cudaMemcpyDefault) != cudaSuccess) {
            fprintf(stderr, "pagedattn check blocks: copy back failed\n");
            goto done;
        }
        for (size_t k = 0; k < bytes; k++)
            bad += got[k] != want[k];
    }
    printf("check blocks %s %s %s: %lld block pairs of %lld bytes x %d buffers: %zu bytes differ from the CPU "
           "reference: %s\n",
           variant_name(b->variant), pa_kv_layout_name(o->layout), pa_dtype_name(o->cache_dtype),
           (long long)b->num_pairs, (long long)b->block_bytes, b->layers * b->bufs, bad, bad ? "FAIL" : "PASS");
    rc = bad ? PA_CLI_EXIT_FAIL : 0;
done:
    free(got);
    blocks_dev_free(&d);
    return rc;
}

static int run_blocks_ctx(const pa_op_opts *o, int ctx, int check, int gpu) {
    const char *cmd = check ? "check" : "bench";
    blocks_problem b;
    int rc = blocks_problem_make(o, ctx, cmd, &b);
    if (rc)
        return rc;
    if (check) {
        rc = check_blocks(o, &b);
        blocks_problem_free(&b);
        return rc;
    }
    static const char *OPS[3] = {"swap_blocks_out", "swap_blocks_in", "copy_blocks"};
    pa_bench_row r = {.op = OPS[b.variant],
                      .impl = gpu ? "pa" : "cpu-ref",
                      .seqs = o->seqs,
                      .heads = o->heads,
                      .kv_heads = o->kv_heads,
                      .head_size = o->head_size,
                      .ctx = ctx,
                      .qlen = 0,
                      .block_size = o->block_size,
                      .dtype = o->cache_dtype,
                      .cache_dtype = o->cache_dtype,
                      .layout = o->layout};
    const double moved = (double)b.num_pairs * (double)b.block_bytes * b.bufs * b.layers;
    r.bytes = b.variant == BLK_COPY ? 2.0 * moved : moved;
    if (gpu) {
        blocks_dev d;
        rc = blocks_dev_make(&b, cmd, &d);
        if (rc == 0) {
            r.roof_gbps =
                b.variant == BLK_COPY ? pa_bench_copy_bandwidth() : pa_bench_host_bandwidth(b.variant == BLK_SWAP_IN);
            /* a swap's roof is the pinned-host link in its direction, not the device copy */
            r.roof_name = b.variant == BLK_COPY ? NULL : b.variant == BLK_SWAP_IN ? "pinned-h2d" : "pinned-d2h";
            rc = pa_bench_time_gpu(OPS[b.variant], run_gpu_blocks, &d, o->warmup, o->iters, &r.t) ? 1 : 0;
            blocks_dev_free(&d);
        }
    } else {
        rc = pa_bench_time_cpu(run_ref_blocks, &b, o->warmup, o->iters, &r.t) ? 1 : 0;
    }
    if (rc == 0)
        pa_bench_emit(o, &r);
    blocks_problem_free(&b);
    return rc ? PA_CLI_EXIT_FAIL : 0;
}

/* Each --ctx of a list in turn (a sweep), as the other ops do. */
int pa_run_blocks(const pa_op_opts *o, int check, int gpu) {
    int rc = 0;
    for (int k = 0; k < o->num_ctx && rc == 0; k++) {
        if (o->num_ctx > 1)
            pa_bench_progress(k + 1, o->num_ctx, "blocks ctx=%d", o->ctx[k]);
        rc = run_blocks_ctx(o, o->ctx[k], check, gpu);
    }
    return rc;
}
