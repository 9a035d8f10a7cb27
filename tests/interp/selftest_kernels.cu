// Kernels that exercise the interpreter itself (tests/interp/test_interp.c):
// shared-memory poisoning, barrier checks and, in the interp-tsan build, the
// race detector. Compiled only in interpret mode.
#include "../../cuda/ptx.cuh"

#include "selftest_kernels.h"

namespace {

__global__ void static_smem_first_read(uint32_t *out) {
    PA_STATIC_SMEM(s_word, uint32_t);
    if (threadIdx.x == 0) {
        out[blockIdx.x] = s_word; // read before any write in this CTA
        s_word = 42u;
    }
}

// The same in a template kernel, whose statics GCC keeps out of any section
// named for them (they went unpoisoned while static shared memory was a
// linker section).
template <int N> __global__ void static_smem_first_read_t(uint32_t *out) {
    PA_STATIC_SMEM(s_words, uint32_t[N]);
    if (threadIdx.x == 0) {
        out[blockIdx.x] = s_words[N - 1];
        s_words[N - 1] = 42u;
    }
}

__global__ void dynamic_smem_first_read(uint32_t *out) {
    PA_DYNAMIC_SMEM(uint32_t, s);
    if (threadIdx.x == 0) {
        out[blockIdx.x] = s[0];
        s[0] = 42u;
    }
}

// 4 KiB of static shared memory beside the dynamic bytes the launch asks for.
__global__ void static_and_dynamic_smem(uint32_t *out) {
    PA_STATIC_SMEM(s_words, uint32_t[1024]);
    PA_DYNAMIC_SMEM(uint32_t, s);
    if (threadIdx.x == 0) {
        s_words[1023] = 1u;
        s[0] = 2u;
        out[blockIdx.x] = s_words[1023] + s[0];
    }
}

// A 16-byte vector load from `off` bytes into buf: a misaligned-address fault
// on the device unless off is a multiple of 16.
__global__ void vector_load_at(const unsigned char *buf, int off, uint32_t *out) {
    const uint4 v = *reinterpret_cast<const uint4 *>(buf + off);
    out[threadIdx.x] = v.x + v.y + v.z + v.w;
}

// A local array the kernel reads before it writes (a register the device
// leaves as it finds it).
__global__ void read_before_write(float *out, int n) {
    float acc[4];
    for (int i = n; i < 4; i++)
        acc[i] = 0.0f;
    out[threadIdx.x] = acc[0] + acc[1] + acc[2] + acc[3];
}

// A shuffle among the low half-warp only: `width` 16 when sub, else a mask of 16 lanes.
__global__ void half_warp_shuffle(int *out, int sub) {
    const int lane = threadIdx.x & 31;
    out[threadIdx.x] = sub ? __shfl_xor_sync(0xffffffffu, lane, 1, 16)
                           : (lane < 16 ? __shfl_xor_sync(0x0000ffffu, lane, 1) : lane ^ 1);
}

__global__ void barrier_in_two_places(int *out) {
    if (threadIdx.x < 16)
        __syncthreads();
    else
        __syncthreads();
    out[threadIdx.x] = 1;
}

// Lane 0 writes a word every lane reads, `ordered` decides whether a
// __syncwarp stands between; a shuffle always does (it orders nothing).
__global__ void lane_write_then_read(int *out, int ordered) {
    PA_STATIC_SMEM(s_word, int);
    const int lane = threadIdx.x & 31;
    if (lane == 0)
        s_word = 7;
    const int x = __shfl_xor_sync(0xffffffffu, lane, 1);
    if (ordered)
        __syncwarp();
    out[threadIdx.x] = s_word + x - (lane ^ 1);
}

// Every thread reads a word that thread 0 rewrites afterwards; `ordered`
// decides whether a __syncthreads stands between.
__global__ void read_then_rewrite(int *out, int ordered) {
    PA_STATIC_SMEM(s_word, int);
    if (threadIdx.x == 0)
        s_word = 1;
    __syncthreads();
    out[threadIdx.x] = s_word;
    if (ordered)
        __syncthreads();
    if (threadIdx.x == 0)
        s_word = 2;
}

// Warp 0 copies a row with cp.async and waits for it; warp 1 reads the row.
// `ordered` puts a __syncthreads between the wait and the read.
__global__ void cp_async_then_read(const uint32_t *src, uint32_t *out, int ordered) {
    PA_DYNAMIC_SMEM(uint32_t, s);
    const int t = threadIdx.x;
    if (t < 4) {
        pa::ptx::cp_async(s + 4 * t, src + 4 * t, 16, 16);
        pa::ptx::cp_async_commit();
        pa::ptx::cp_async_wait<0>();
    }
    if (ordered)
        __syncthreads();
    if (t >= 32 && t < 48)
        out[t - 32] = s[t - 32];
}

// Lane l reads src[l * stride] and writes shared word l * sstride.
__global__ void strided_access(const float *src, float *out, int stride, int sstride) {
    PA_DYNAMIC_SMEM(float, s);
    const int l = threadIdx.x;
    s[l * sstride] = src[l * stride];
    __syncthreads();
    out[l] = s[l * sstride];
}
constexpr int strided_store_line = __LINE__ - 4; // (the load is two lines below it; test_prof)

// Each CTA records when it ran: an output that depends on CTA order.
__global__ void arrival_order(int *counter, int *out) {
    if (threadIdx.x == 0)
        out[blockIdx.x] = atomicAdd(counter, 1);
}

// Work taken from a global counter (hdr[0], thread 0's atomicAdd handed to
// the CTA through static shared memory), `split` items to a group; the CTA
// that finishes a group's last item sums the group's partials, which other
// CTAs may have written (the last-CTA pattern: each writer's fence, its
// barrier and thread 0's atomic on the group's counter hdr[1 + g]; the
// reader's barrier and fence). mode 1 drops the writers' fence, mode 2 the
// reader's. owner[i]: the CTA that took item i.
__global__ void fetch_and_merge(int *hdr, int *part, int *owner, int *sum, int items, int split, int mode) {
    PA_STATIC_SMEM(s_idx, int);
    PA_STATIC_SMEM(s_last, int);
    for (;;) {
        if (threadIdx.x == 0)
            s_idx = atomicAdd(&hdr[0], 1);
        __syncthreads();
        const int i = s_idx;
        __syncthreads(); // every thread has read s_idx before thread 0 takes the next
        if (i >= items)
            return;
        part[i * (int)blockDim.x + (int)threadIdx.x] = 1000 * i + (int)threadIdx.x;
        if (threadIdx.x == 0)
            owner[i] = (int)blockIdx.x;
        if (mode != 1)
            __threadfence();
        __syncthreads();
        const int g = i / split;
        if (threadIdx.x == 0)
            s_last = atomicAdd(&hdr[1 + g], 1) == split - 1;
        __syncthreads();
        if (s_last) {
            if (mode != 2)
                __threadfence();
            int acc = 0;
            for (int j = g * split; j < (g + 1) * split; j++)
                acc += part[j * (int)blockDim.x + (int)threadIdx.x];
            sum[g * (int)blockDim.x + (int)threadIdx.x] = acc;
        }
    }
}

// Thread b of CTA b stores b to one word (threads of one index in two CTAs
// run on one ThreadSanitizer fiber in turn, see interp.cpp's run_now).
__global__ void same_word(int *out) {
    if (threadIdx.x == blockIdx.x % blockDim.x)
        out[0] = (int)blockIdx.x;
}

// One warpgroup's S (64 x 64) = Q K^T over 64 dims with wgmma (bf16, f32
// accumulators), from the K tile at `tile` (1024-byte aligned, in the
// 128-byte-swizzled K-major layout: key rows of 128 bytes, chunk c of row r at
// chunk c ^ (r % 8)). Q rows come from global memory into each warp's A
// fragments (mma.m16n8k16's layout); four k16 steps read the tile through
// descriptors whose start moves 32 bytes per step. S goes out row-major.
// `mode` (pa_selftest_wgmma_mode) plants the defects of the wgmma protocol
// that come after the tile is in place.
__device__ void qk_wgmma(const uint16_t *q, unsigned char *tile, uint32_t base, float *s, int mode) {
    const int t = threadIdx.x % 128, w = t / 32, l = t % 32;
    const bool groups = mode == PA_WG_GROUPS_WAIT_ALL || mode == PA_WG_GROUPS_WAIT_ONE;
    float acc[32];
    uint32_t a[4][4]; // each k16 step's A registers, read until the wait
    for (int kk = 0; kk < 4; kk++) {
        const int g = l / 4, c = 2 * (l % 4), r = 16 * w + g, k0 = 16 * kk;
        const int rows[4] = {r, r + 8, r, r + 8}, cols[4] = {k0 + c, k0 + c, k0 + c + 8, k0 + c + 8};
        for (int i = 0; i < 4; i++)
            a[kk][i] = (uint32_t)q[rows[i] * 64 + cols[i]] | ((uint32_t)q[rows[i] * 64 + cols[i] + 1] << 16);
    }
    if (mode != PA_WG_NO_WGMMA_FENCE)
        pa::ptx::wgmma_fence();
    const uint64_t db0 = pa::ptx::twin::wgmma_desc(base, 16, 1024, 128);
    for (int kk = 0; kk < 4; kk++) {
        const uint64_t db = pa::ptx::twin::wgmma_desc(base + 32u * (uint32_t)kk, 16, 1024, 128);
        pa::ptx::wgmma_rs<2, 64, false>(acc, a[kk], db, kk > 0);
        if (groups)
            pa::ptx::wgmma_commit();
        if (mode == PA_WG_ACC_WRITTEN_CHAINED && kk == 0)
            acc[0] = 0.0f;
    }
    if (mode == PA_WG_OTHER_SHAPE_CHAINED)
        pa::ptx::wgmma_rs<2, 32, false>(*reinterpret_cast<float(*)[16]>(acc), a[0], db0, 1);
    if (!groups)
        pa::ptx::wgmma_commit();
    if (mode == PA_WG_TILE_REWRITTEN && t == 0)
        tile[0] ^= 1;
    if (mode == PA_WG_ACC_WRITTEN)
        acc[0] = 0.0f;
    if (mode == PA_WG_A_WRITTEN)
        a[3][0] ^= 1u;
    auto store = [&]() {
        for (int j = 0; j < 8; j++)
            for (int i = 0; i < 4; i++) {
                const int row = 16 * w + l / 4 + (i >= 2 ? 8 : 0), col = 8 * j + 2 * (l % 4) + (i & 1);
                s[row * 64 + col] = acc[4 * j + i];
            }
    };
    if (mode == PA_WG_READ_BEFORE_WAIT || mode == PA_WG_NO_WAIT)
        store();
    if (mode == PA_WG_GROUPS_WAIT_ONE) {
        pa::ptx::wgmma_wait<1>();
        store();
        pa::ptx::wgmma_wait<0>();
    } else if (mode != PA_WG_NO_WAIT) {
        pa::ptx::wgmma_wait<0>();
        if (mode != PA_WG_READ_BEFORE_WAIT)
            store();
    }
    if (mode == PA_WG_NO_FENCE_AFTER_WAIT) { // the registers were the thread's again at the wait
        pa::ptx::wgmma_rs<2, 64, false>(acc, a[0], db0, 1);
        pa::ptx::wgmma_commit();
        pa::ptx::wgmma_wait<0>();
    }
}

// One warpgroup stores the K tile (64 keys x 64 dims) itself, then multiplies.
__global__ void wgmma_qk(const uint16_t *q, const uint16_t *k, float *s, int mode) {
    PA_DYNAMIC_SMEM(unsigned char, sm);
    const int t = threadIdx.x;
    const uint32_t win = pa::ptx::smem_window_addr(sm), base = (win + 1023u) & ~1023u;
    unsigned char *tile = sm + (base - win);
    if (mode == PA_WG_FENCE_BEFORE_STORES)
        pa::ptx::fence_proxy_async();
    for (int i = t; i < 64 * 64; i += 128) {
        const int key = i / 64, d = i % 64;
        memcpy(tile + 128 * key + 16 * ((d / 8) ^ (key % 8)) + 2 * (d % 8), k + i, 2);
    }
    if (mode != PA_WG_NO_PROXY_FENCE && mode != PA_WG_FENCE_BEFORE_STORES)
        pa::ptx::fence_proxy_async();
    if (mode != PA_WG_NO_BARRIER)
        __syncthreads();
    qk_wgmma(q, tile, base, s, mode);
}

// The Hopper prefill kernel's hand-off: a producer warpgroup (threads 128..255)
// copies the K tile with cp.async and arrives on `full` through
// cp.async.mbarrier.arrive.noinc; the consumer warpgroup waits on it, fences
// the async proxy and multiplies. mode 0: that; 1: the consumers fence before
// they wait (after a __syncthreads that the producers reach once they have
// arrived: the copies have landed, but the consumers have not seen the phase
// that says so); 2: they do not fence; 3: the producers first copy Q's bytes
// into the tile, the consumers wait for that phase, and once the producers
// have refilled the tile with K in the next phase (a barrier after it) the
// consumers fence without waiting for it (the fence publishes the first
// phase's copies only).
__global__ void wgmma_qk_mbar(const uint16_t *q, const uint16_t *k, float *s, int mode) {
    PA_DYNAMIC_SMEM(unsigned char, sm);
    PA_STATIC_SMEM(full, uint64_t);
    const int t = threadIdx.x;
    const uint32_t win = pa::ptx::smem_window_addr(sm), base = (win + 1023u) & ~1023u;
    unsigned char *tile = sm + (base - win);
    if (t == 0)
        pa::ptx::mbar_init(&full, 128);
    __syncthreads();
    auto produce = [&](const uint16_t *from) {
        for (int i = t - 128; i < 64 * 8; i += 128) { // 16-byte chunk c of key row r
            const int r = i / 8, c = i % 8;
            pa::ptx::cp_async16(tile + 128 * r + 16 * (c ^ (r % 8)), from + 64 * r + 8 * c);
        }
        pa::ptx::mbar_cp_arrive(&full);
    };
    if (t >= 128)
        produce(mode == 3 ? q : k);
    if (mode == 1)
        __syncthreads();
    if (mode == 3) { // the consumers wait for phase 0, then the tile is refilled in phase 1
        if (t < 128)
            pa::ptx::mbar_wait(&full, 0);
        __syncthreads();
        if (t >= 128)
            produce(k);
        __syncthreads();
    }
    if (t >= 128)
        return;
    if (mode == 1)
        pa::ptx::fence_proxy_async();
    if (mode != 3)
        pa::ptx::mbar_wait(&full, 0);
    if (mode == 0 || mode == 3)
        pa::ptx::fence_proxy_async();
    qk_wgmma(q, tile, base, s, PA_WG_OK);
}

// The Hopper kernel's register hand-off, 384 threads (168 registers each at
// launch): warpgroup 0 gives up registers with setmaxnreg.dec 56 and the other
// two take them with setmaxnreg.inc 224. mode 1: no dec (the incs wait
// forever); 2: the incs ask for 232, more than the dec released; 3: the dec
// asks for 60 (not a multiple of 8); 4: the dec asks for 176, above the 168 it has.
__global__ void setmaxnreg_handoff(int *out, int mode) {
    if (threadIdx.x < 128) {
        if (mode == 3)
            pa::ptx::setmaxnreg_dec<60>();
        else if (mode == 4)
            pa::ptx::setmaxnreg_dec<176>();
        else if (mode != 1)
            pa::ptx::setmaxnreg_dec<56>();
    } else if (mode == 2) {
        pa::ptx::setmaxnreg_inc<232>();
    } else {
        pa::ptx::setmaxnreg_inc<224>();
    }
    out[threadIdx.x] = 1;
}

// A producer warp and a consumer warp over a two-slot ring of 16-word slots
// (mbarrier `full` and `empty` per slot, the prefill Hopper kernel's protocol):
// the producer copies round i of src (rounds x 16 words) into slot i % 2 with
// cp.async and arrives through cp.async.mbarrier.arrive.noinc; the consumer
// waits on `full`, adds the slot to out and arrives on `empty`. mode 0: the
// protocol; 1: the consumer skips its `full` wait; 2: the producer skips its
// `empty` wait.
__global__ void mbar_ring(const uint32_t *src, uint32_t *out, int rounds, int mode) {
    PA_DYNAMIC_SMEM(uint32_t, slot);
    PA_STATIC_SMEM(full, uint64_t[2]);
    PA_STATIC_SMEM(empty, uint64_t[2]);
    const int t = threadIdx.x, w = t / 32, l = t % 32;
    if (t == 0)
        for (int i = 0; i < 2; i++) {
            pa::ptx::mbar_init(&full[i], 16);
            pa::ptx::mbar_init(&empty[i], 1);
        }
    __syncthreads();
    for (int i = 0; i < rounds; i++) {
        const int b = i & 1;
        if (w == 0 && l < 16) {
            if (i >= 2 && mode != 2)
                pa::ptx::mbar_wait(&empty[b], ((i >> 1) + 1) & 1);
            pa::ptx::cp_async(slot + 16 * b + l, src + 16 * i + l, 4, 4);
            pa::ptx::mbar_cp_arrive(&full[b]);
        } else if (w == 1) {
            if (mode != 1)
                pa::ptx::mbar_wait(&full[b], (i >> 1) & 1);
            if (l < 16)
                out[l] += slot[16 * b + l];
            __syncwarp();
            if (l == 0)
                pa::ptx::mbar_arrive(&empty[b]);
        }
    }
    if (w == 0) {
        pa::ptx::cp_async_commit();
        pa::ptx::cp_async_wait<0>();
    }
}

// Two warps take turns through named barriers 1 and 2 (64 threads each: the
// waiting warp syncs, the other arrives): warp 0 writes round i, warp 1 reads
// it and writes round i + 1 ... `turns` 0 drops warp 1's sync (a race).
__global__ void named_turns(int *log, int rounds, int turns) {
    PA_STATIC_SMEM(s_val, int);
    const int w = threadIdx.x / 32, l = threadIdx.x % 32;
    if (w == 1)
        pa::ptx::named_arrive(1, 64); // warp 0 goes first
    for (int i = 0; i < rounds; i++) {
        if (w == 0) {
            pa::ptx::named_sync(1, 64);
            if (l == 0)
                s_val = 2 * i + 1;
            pa::ptx::named_arrive(2, 64);
        } else {
            if (turns)
                pa::ptx::named_sync(2, 64);
            if (l == 0)
                log[i] = s_val;
            if (i + 1 < rounds)
                pa::ptx::named_arrive(1, 64);
        }
    }
}

// A wait on a phase that never completes: the interpreter reports a deadlock.
__global__ void mbar_never(uint32_t *out) {
    PA_STATIC_SMEM(bar, uint64_t);
    if (threadIdx.x == 0)
        pa::ptx::mbar_init(&bar, 33);
    __syncthreads();
    pa::ptx::mbar_arrive(&bar); // 32 of the 33 arrivals the phase expects
    pa::ptx::mbar_wait(&bar, 0);
    out[threadIdx.x] = 1;
}

// One thread, a barrier of one arrival: it arrives (phase 0 completes), then,
// mode 0, waits for phase 0 before arriving again, or, mode 1, arrives again at
// once: the "Missing wait" synccheck reported on an H100 for the PTX twins'
// script kernel (tests/common/ptx_twin_device.cu), 2026-11-27.
__global__ void mbar_rearrive(uint32_t *out, int mode) {
    PA_STATIC_SMEM(bar, uint64_t);
    pa::ptx::mbar_init(&bar, 1);
    pa::ptx::mbar_arrive(&bar);
    if (mode == 0)
        pa::ptx::mbar_wait(&bar, 0);
    pa::ptx::mbar_arrive(&bar);
    pa::ptx::mbar_wait(&bar, 1);
    out[0] = 1;
}

// Programmatic dependent launch: a producer writes buf, then a consumer
// (launched with it when the launcher says so) adds buf to other. Mode 0 reads
// buf after griddepcontrol.wait (right); 1 reads it before; 2: thread 5 of each
// CTA returns before the wait; 3 stores to buf before the wait; 4: thread 5 of
// CTA 2 alone returns before it; 5: thread 1 of each CTA reads buf before it
// (thread 0, which runs first, waits). Every mode
// reads `other`, which the producer does not write, before the wait (right).
__global__ void pdl_producer(int *buf) {
    pa::ptx::griddep_launch_dependents();
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    buf[i] = 1000 * i + 7;
}
__global__ void pdl_consumer(int *buf, const int *other, int *out, int mode) {
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int x = other[i];
    const bool early = mode == 1 || (mode == 5 && threadIdx.x == 1);
    if (early)
        x += buf[i];
    if ((mode == 2 || (mode == 4 && blockIdx.x == 2)) && threadIdx.x == 5)
        return;
    if (mode == 3)
        buf[i] = 0;
    pa::ptx::griddep_wait();
    if (!early)
        x += buf[i];
    out[i] = x;
}

// One thread writes out[i] (i may lie outside the buffer).
__global__ void write_at(int *out, long i) { out[i] = 1; }

__global__ void write_value(int *out, int v) { *out = v; }

// A block of 40 threads: warp 1 has lanes 0-7 only. Each thread reads the lane 16 away in its
// 32-lane segment (full mask); lanes 0-7 of warp 1 then read lanes 16-23, which do not exist.
__global__ void partial_warp_shuffle(int *out) {
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (int)threadIdx.x, 16);
}

// Four shuffles in a row, of 1000 k + the thread's index for shuffle k: xor 1,
// up 3, down 5, from lane 7. Lanes at the ends keep their own (up, down), as on
// the device; a shuffle does not overwrite what a slower lane has still to read
// of the one before.
__global__ void shuffle_modes(int *out) {
    const int t = (int)threadIdx.x;
    const int a = __shfl_xor_sync(0xffffffffu, t, 1);
    const int b = __shfl_up_sync(0xffffffffu, 1000 + t, 3);
    const int c = __shfl_down_sync(0xffffffffu, 2000 + t, 5);
    const int d = __shfl_sync(0xffffffffu, 3000 + t, 7);
    out[4 * t + 0] = a;
    out[4 * t + 1] = b;
    out[4 * t + 2] = c;
    out[4 * t + 3] = d;
}

// Every lane reads lane `src` of its warp (__shfl_sync, full mask).
__global__ void shuffle_from_lane(int *out, int src) {
    out[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, src);
}

// cp.async's operands and landing (thread 0, 80 bytes of dynamic shared
// memory). mode 0: 8 source bytes of a 16-byte unit (the rest zero-filled);
// 1: 20 source bytes of a 16-byte unit; 2: a source off its unit's alignment;
// 3: a destination whose unit reaches past dynamic shared memory (it starts
// inside); 4: the thread exits with a copy never waited for; 5: two groups,
// wait_group 1, the newer group's destination read before its wait and after.
__global__ void cp_async_case(const uint32_t *src, uint32_t *out, int mode) {
    PA_DYNAMIC_SMEM(uint32_t, s);
    if (threadIdx.x != 0)
        return;
    if (mode == 0) {
        pa::ptx::cp_async(s, src, 16, 8);
        pa::ptx::cp_async_commit();
        pa::ptx::cp_async_wait<0>();
        for (int i = 0; i < 4; i++)
            out[i] = s[i];
    } else if (mode == 1) {
        pa::ptx::cp_async(s, src, 16, 20);
    } else if (mode == 2) {
        pa::ptx::cp_async(s, src + 1, 16, 16);
    } else if (mode == 3) {
        pa::ptx::cp_async(s + 16, src, 16, 16); // bytes 64..79 of 72
    } else if (mode == 4) {
        pa::ptx::cp_async(s, src, 16, 16);
        pa::ptx::cp_async_commit();
        return;
    } else {
        pa::ptx::cp_async(s, src, 16, 16);
        pa::ptx::cp_async_commit();
        pa::ptx::cp_async(s + 4, src + 4, 16, 16);
        pa::ptx::cp_async_commit();
        pa::ptx::cp_async_wait<1>();
        out[0] = s[0];
        out[1] = s[4]; // its group is still in flight: the poison
        pa::ptx::cp_async_wait<0>();
        out[2] = s[4];
    }
    if (mode != 0 && mode != 5) {
        pa::ptx::cp_async_commit();
        pa::ptx::cp_async_wait<0>();
    }
}

// Warp collectives the lanes do not meet at together. mode 0: lanes 16..31
// exit and lanes 0..15 __syncwarp; 1: lanes 0..15 __syncwarp at one line, the
// others at another.
__global__ void warp_collective_case(int *out, int mode) {
    const int l = (int)threadIdx.x;
    if (mode == 0) {
        if (l >= 16)
            return;
        __syncwarp();
    } else if (l < 16) {
        __syncwarp();
    } else {
        __syncwarp();
    }
    out[l] = 1;
}

// __syncthreads_or over 64 threads: thread 3 alone with a true predicate, then none.
__global__ void sync_or_case(int *out) {
    const int t = (int)threadIdx.x;
    const int any = __syncthreads_or(t == 3);
    const int none = __syncthreads_or(0);
    out[t] = 2 * any + none;
}

// Named barriers (two warps, 64 threads a CTA). mode 0: a count past the
// CTA's threads; 1: id 0; 2: two counts in one generation; 3: warp 0 arrives
// on barriers 1 and 2 and goes on, warp 1 syncs on 2 and then 1 (an arrival
// does not wait); 4: warp 1 stores a value and arrives on barrier 1, warp 0
// syncs on it and reads the value, in every CTA but the first, whose arrival
// nobody consumes (each CTA's barriers start at rest); 5: warp 1 arrives on
// barrier 1 before a __syncthreads and warp 0 syncs on it after (resident
// CTAs, which switch at the __syncthreads, keep their own barriers).
__global__ void named_case(int *out, int mode) {
    PA_STATIC_SMEM(s_val, int);
    const int w = (int)threadIdx.x / 32, l = (int)threadIdx.x % 32;
    int v = 1;
    if (mode == 0) {
        pa::ptx::named_sync(1, 96);
    } else if (mode == 1) {
        pa::ptx::named_sync(0, 64);
    } else if (mode == 2) {
        if (w == 0)
            pa::ptx::named_arrive(1, 64);
        else
            pa::ptx::named_sync(1, 32);
    } else if (mode == 3) {
        if (w == 0) {
            pa::ptx::named_arrive(1, 64);
            pa::ptx::named_arrive(2, 64);
        } else {
            pa::ptx::named_sync(2, 64);
            pa::ptx::named_sync(1, 64);
        }
    } else if (mode == 4) {
        if (w == 1) {
            if (l == 0)
                s_val = 7;
            pa::ptx::named_arrive(1, 64);
        } else if (blockIdx.x > 0) {
            pa::ptx::named_sync(1, 64);
            v = s_val;
        }
    } else {
        if (w == 1)
            pa::ptx::named_arrive(1, 64);
        __syncthreads();
        if (w == 0)
            pa::ptx::named_sync(1, 64);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// One thread and one mbarrier. mode 0: a count of 2^20 (past the field);
// 1: an arrival on the object before any mbarrier.init (0xFF bytes); 2: init,
// arrive, wait for the phase, init again, then two arrivals with no wait
// between (a missing wait: the first init's wait does not count).
__global__ void mbar_misuse(uint32_t *out, int mode) {
    PA_STATIC_SMEM(bar, uint64_t);
    if (mode == 0) {
        pa::ptx::mbar_init(&bar, 1 << 20);
    } else if (mode == 1) {
        pa::ptx::mbar_arrive(&bar);
    } else {
        pa::ptx::mbar_init(&bar, 1);
        pa::ptx::mbar_arrive(&bar);
        pa::ptx::mbar_wait(&bar, 0);
        pa::ptx::mbar_init(&bar, 1);
        pa::ptx::mbar_arrive(&bar);
        pa::ptx::mbar_arrive(&bar);
    }
    out[0] = 1;
}

// Warp 0 stores 32 words and arrives on `full` (32 arrivals); warp 1 probes
// the phase (mbarrier.test_wait, lane 0's answer for the warp) instead of
// waiting, reads the words and arrives itself: the probe that finds the phase
// complete is a wait (it orders the stores before the reads, and the next
// phase may begin).
__global__ void mbar_probe(uint32_t *out) {
    PA_STATIC_SMEM(bar, uint64_t);
    PA_STATIC_SMEM(s_words, uint32_t[32]);
    const int w = (int)threadIdx.x / 32, l = (int)threadIdx.x % 32;
    if (threadIdx.x == 0)
        pa::ptx::mbar_init(&bar, 32);
    __syncthreads();
    if (w == 0) {
        s_words[l] = 100u + (uint32_t)l;
        pa::ptx::mbar_arrive(&bar);
    } else {
        while (!__shfl_sync(0xffffffffu, (int)pa::ptx::mbar_test(&bar, 0), 0)) // the warp's probes agree
            ;
        out[l] = s_words[31 - l];
        pa::ptx::mbar_arrive(&bar);
    }
}

// 48 KB of static shared memory, the device's limit, in one variable.
__global__ void static_smem_48k(uint32_t *out) {
    PA_STATIC_SMEM(s_words, uint32_t[12 * 1024]);
    const int t = (int)threadIdx.x;
    s_words[t] = (uint32_t)t;
    s_words[12 * 1024 - 1 - t] = (uint32_t)t;
    __syncthreads();
    out[t] = s_words[12 * 1024 - 1 - t] + s_words[t];
}

// Lane 0 of each warp logs three steps in the order they run (a __syncwarp
// after each): log[k] = 10 w + i for the k-th step to run.
__global__ void warp_steps(int *counter, int *log) {
    const int w = (int)threadIdx.x / 32, l = (int)threadIdx.x % 32;
    for (int i = 0; i < 3; i++) {
        if (l == 0)
            log[atomicAdd(counter, 1)] = 10 * w + i;
        __syncwarp();
    }
}

// ldmatrix.x4 from lane l's row at byte `off` + 16 l of dynamic shared memory
// (the launch gives it `bytes`); out[4 l + j] is lane l's register j.
__global__ void ldmatrix_rows(uint32_t *out, int off) {
    PA_DYNAMIC_SMEM(unsigned char, s);
    const int l = (int)threadIdx.x;
    for (int i = 0; i < 16; i++)
        s[off + 16 * l + i] = (unsigned char)(16 * l + i);
    __syncwarp();
    uint32_t r[4];
    pa::ptx::ldmatrix_x4(r, s + off + 16 * l);
    for (int j = 0; j < 4; j++)
        out[4 * l + j] = r[j];
}

// 640 threads (five warpgroups) start with 96 registers each: 65536 / 640
// rounded down to 8. Warpgroup 0 gives up 24 a thread (setmaxnreg.dec 72), and
// the other four ask for 8 more each (.inc 104): 96 x 128 released, 128 x 128
// asked for, a deadlock.
__global__ void setmaxnreg_640(int *out) {
    if (threadIdx.x < 128)
        pa::ptx::setmaxnreg_dec<72>();
    else
        pa::ptx::setmaxnreg_inc<104>();
    out[threadIdx.x] = 1;
}

// One thread stores one byte at out[i] (i may lie outside the buffer).
__global__ void write_byte_at(unsigned char *out, long i) { out[i] = 1; }

// Writes 1 in CTA (0,0,0)'s thread 0: any grid and block shape.
__global__ void write_one(int *out) {
    if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0 && threadIdx.y == 0 &&
        threadIdx.z == 0)
        out[0] = 1;
}

// The race a barrier's sync object shared by two generations would hide: after
// a barrier (mode 0 __syncthreads, 1 __syncwarp) thread 0 stores a word and
// reaches the next barrier, thread 1 reads the word with no barrier between.
__global__ void write_read_between_barriers(int *out, int mode) {
    PA_STATIC_SMEM(s_word, int);
    const int t = (int)threadIdx.x;
    if (mode == 0)
        __syncthreads();
    else
        __syncwarp();
    if (t == 0)
        s_word = 5;
    if (t == 1)
        out[0] = s_word;
    if (mode == 0)
        __syncthreads();
    else
        __syncwarp();
}

// Warp 1 reads the row warp 0 then copies into with cp.async, with no barrier
// between (the copy may land from its issue on); the copy lands after a
// __syncthreads that orders the read before it.
__global__ void read_then_cp_async(const uint32_t *src, uint32_t *out) {
    PA_DYNAMIC_SMEM(uint32_t, s);
    const int t = (int)threadIdx.x;
    if (t >= 32 && t < 36)
        out[t - 32] = s[t - 32];
    if (t == 0)
        pa::ptx::cp_async(s, src, 16, 16);
    __syncthreads();
    if (t == 0) {
        pa::ptx::cp_async_commit();
        pa::ptx::cp_async_wait<0>();
    }
}

// Thread b % 32 of CTA b stores to one shared word, which thread 0 reads after a barrier:
// every CTA its own shared memory, so nothing here races.
__global__ void smem_word_per_cta(int *out) {
    PA_DYNAMIC_SMEM(int, s);
    if ((int)threadIdx.x == (int)blockIdx.x % 32)
        s[0] = (int)blockIdx.x;
    __syncthreads();
    if (threadIdx.x == 0)
        out[blockIdx.x] = s[0];
}

} // namespace

extern "C" {

cudaError_t pa_selftest_static_smem(uint32_t *out, int ctas) {
    PA_LAUNCH(dim3(ctas), dim3(32), 0, nullptr, static_smem_first_read)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_static_smem_template(uint32_t *out, int ctas) {
    PA_LAUNCH(dim3(ctas), dim3(32), 0, nullptr, static_smem_first_read_t<3>)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_dynamic_smem(uint32_t *out, int ctas) {
    PA_LAUNCH(dim3(ctas), dim3(32), 64, nullptr, dynamic_smem_first_read)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_static_and_dynamic_smem(uint32_t *out, int dyn_bytes, int attr_bytes) {
    if (attr_bytes > 0) {
        const cudaError_t e =
            cudaFuncSetAttribute(static_and_dynamic_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, attr_bytes);
        if (e != cudaSuccess)
            return e;
    }
    PA_LAUNCH(dim3(1), dim3(32), (size_t)dyn_bytes, nullptr, static_and_dynamic_smem)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_vector_load_at(const unsigned char *buf, int off, uint32_t *out) {
    PA_LAUNCH(dim3(1), dim3(1), 0, nullptr, vector_load_at)(buf, off, out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_read_before_write(float *out, int n) {
    PA_LAUNCH(dim3(1), dim3(1), 0, nullptr, read_before_write)(out, n);
    return cudaGetLastError();
}
cudaError_t pa_selftest_half_warp_shuffle(int *out, int sub) {
    PA_LAUNCH(dim3(1), dim3(32), 0, nullptr, half_warp_shuffle)(out, sub);
    return cudaGetLastError();
}
cudaError_t pa_selftest_barrier_in_two_places(int *out) {
    PA_LAUNCH(dim3(1), dim3(32), 0, nullptr, barrier_in_two_places)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_lane_write_then_read(int *out, int ordered) {
    PA_LAUNCH(dim3(1), dim3(32), 0, nullptr, lane_write_then_read)(out, ordered);
    return cudaGetLastError();
}
cudaError_t pa_selftest_read_then_rewrite(int *out, int ordered) {
    PA_LAUNCH(dim3(1), dim3(64), 0, nullptr, read_then_rewrite)(out, ordered);
    return cudaGetLastError();
}
cudaError_t pa_selftest_arrival_order(int *counter, int *out, int ctas) {
    PA_LAUNCH(dim3(ctas), dim3(32), 0, nullptr, arrival_order)(counter, out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_strided_access(const float *src, float *out, int stride, int sstride) {
    PA_LAUNCH(dim3(1), dim3(32), (size_t)(32 * sstride) * sizeof(float), nullptr, strided_access)
    (src, out, stride, sstride);
    return cudaGetLastError();
}
cudaError_t pa_selftest_cp_async_then_read(const uint32_t *src, uint32_t *out, int ordered) {
    PA_LAUNCH(dim3(1), dim3(64), 64, nullptr, cp_async_then_read)(src, out, ordered);
    return cudaGetLastError();
}

cudaError_t pa_selftest_wgmma_qk(const uint16_t *q, const uint16_t *k, float *s, int mode) {
    // The tile starts 944 bytes in (window 0x850 rounded up to 1024).
    const size_t smem = mode == PA_WG_SMEM_2_BYTES_SHORT ? 944 + 64 * 128 - 2 : 64 * 128 + 1024;
    PA_LAUNCH(dim3(1), dim3(mode == PA_WG_THREE_WARPS ? 96 : 128), smem, nullptr, wgmma_qk)(q, k, s, mode);
    return cudaGetLastError();
}
cudaError_t pa_selftest_wgmma_qk_mbar(const uint16_t *q, const uint16_t *k, float *s, int mode) {
    PA_LAUNCH(dim3(1), dim3(256), 64 * 128 + 1024, nullptr, wgmma_qk_mbar)(q, k, s, mode);
    return cudaGetLastError();
}

cudaError_t pa_selftest_setmaxnreg(int *out, int mode) {
    PA_LAUNCH(dim3(1), dim3(384), 0, nullptr, setmaxnreg_handoff)(out, mode);
    return cudaGetLastError();
}
cudaError_t pa_selftest_mbar_ring(const uint32_t *src, uint32_t *out, int rounds, int mode) {
    PA_LAUNCH(dim3(1), dim3(64), 32 * sizeof(uint32_t), nullptr, mbar_ring)(src, out, rounds, mode);
    return cudaGetLastError();
}
cudaError_t pa_selftest_named_turns(int *log, int rounds, int turns) {
    PA_LAUNCH(dim3(1), dim3(64), 0, nullptr, named_turns)(log, rounds, turns);
    return cudaGetLastError();
}
cudaError_t pa_selftest_mbar_rearrive(uint32_t *out, int mode) {
    PA_LAUNCH(dim3(1), dim3(1), 0, nullptr, mbar_rearrive)(out, mode);
    return cudaGetLastError();
}

cudaError_t pa_selftest_mbar_never(uint32_t *out) {
    PA_LAUNCH(dim3(1), dim3(32), 0, nullptr, mbar_never)(out);
    return cudaGetLastError();
}

cudaError_t pa_selftest_pdl(int *buf, const int *other, int *out, int mode, int pdl) {
    PA_LAUNCH(dim3(4), dim3(64), 0, nullptr, pdl_producer)(buf);
    PA_LAUNCH_PDL(pdl != 0, dim3(4), dim3(64), 0, nullptr, pdl_consumer)(buf, other, out, mode);
    return cudaGetLastError();
}

cudaError_t pa_selftest_fetch_and_merge(int *hdr, int *part, int *owner, int *sum, int items, int split, int mode) {
    PA_LAUNCH(dim3(4), dim3(64), 0, nullptr, fetch_and_merge)(hdr, part, owner, sum, items, split, mode);
    return cudaGetLastError();
}
cudaError_t pa_selftest_same_word(int *out, int ctas) {
    PA_LAUNCH(dim3(ctas), dim3(32), 0, nullptr, same_word)(out);
    return cudaGetLastError();
}

cudaError_t pa_selftest_write_at(int *out, long i) {
    PA_LAUNCH(dim3(1), dim3(1), 0, nullptr, write_at)(out, i);
    return cudaGetLastError();
}
cudaError_t pa_selftest_write_value(int *out, int v, cudaStream_t stream) {
    PA_LAUNCH(dim3(1), dim3(1), 0, stream, write_value)(out, v);
    return cudaGetLastError();
}
cudaError_t pa_selftest_partial_warp_shuffle(int *out, int threads) {
    PA_LAUNCH(dim3(1), dim3(threads), 0, nullptr, partial_warp_shuffle)(out);
    return cudaGetLastError();
}

cudaError_t pa_selftest_shuffle_modes(int *out) {
    PA_LAUNCH(dim3(1), dim3(64), 0, nullptr, shuffle_modes)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_shuffle_from_lane(int *out, int threads, int src) {
    PA_LAUNCH(dim3(1), dim3(threads), 0, nullptr, shuffle_from_lane)(out, src);
    return cudaGetLastError();
}
cudaError_t pa_selftest_cp_async_case(const uint32_t *src, uint32_t *out, int mode) {
    PA_LAUNCH(dim3(1), dim3(32), 72, nullptr, cp_async_case)(src, out, mode);
    return cudaGetLastError();
}
cudaError_t pa_selftest_warp_collective(int *out, int mode) {
    PA_LAUNCH(dim3(1), dim3(32), 0, nullptr, warp_collective_case)(out, mode);
    return cudaGetLastError();
}
cudaError_t pa_selftest_sync_or(int *out) {
    PA_LAUNCH(dim3(1), dim3(64), 0, nullptr, sync_or_case)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_named(int *out, int ctas, int mode) {
    PA_LAUNCH(dim3(ctas), dim3(64), 0, nullptr, named_case)(out, mode);
    return cudaGetLastError();
}
cudaError_t pa_selftest_mbar_misuse(uint32_t *out, int mode) {
    PA_LAUNCH(dim3(1), dim3(1), 0, nullptr, mbar_misuse)(out, mode);
    return cudaGetLastError();
}
cudaError_t pa_selftest_mbar_probe(uint32_t *out) {
    PA_LAUNCH(dim3(1), dim3(64), 0, nullptr, mbar_probe)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_static_smem_48k(uint32_t *out) {
    PA_LAUNCH(dim3(1), dim3(32), 0, nullptr, static_smem_48k)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_setmaxnreg_640(int *out) {
    PA_LAUNCH(dim3(1), dim3(640), 0, nullptr, setmaxnreg_640)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_ldmatrix_rows(uint32_t *out, int off, int bytes) {
    PA_LAUNCH(dim3(1), dim3(32), (size_t)bytes, nullptr, ldmatrix_rows)(out, off);
    return cudaGetLastError();
}
cudaError_t pa_selftest_warp_steps(int *counter, int *log) {
    PA_LAUNCH(dim3(1), dim3(64), 0, nullptr, warp_steps)(counter, log);
    return cudaGetLastError();
}
cudaError_t pa_selftest_write_byte_at(unsigned char *out, long i) {
    PA_LAUNCH(dim3(1), dim3(1), 0, nullptr, write_byte_at)(out, i);
    return cudaGetLastError();
}
cudaError_t pa_selftest_launch_dims(int *out, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz) {
    PA_LAUNCH(dim3(gx, gy, gz), dim3(bx, by, bz), 0, nullptr, write_one)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_write_read_between_barriers(int *out, int mode) {
    PA_LAUNCH(dim3(1), dim3(32), 0, nullptr, write_read_between_barriers)(out, mode);
    return cudaGetLastError();
}
cudaError_t pa_selftest_read_then_cp_async(const uint32_t *src, uint32_t *out) {
    PA_LAUNCH(dim3(1), dim3(64), 16, nullptr, read_then_cp_async)(src, out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_smem_word_per_cta(int *out, int ctas) {
    PA_LAUNCH(dim3(ctas), dim3(32), 16, nullptr, smem_word_per_cta)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_pdl_streams(int *buf, const int *other, int *out, int *unrelated, cudaStream_t producer,
                                    cudaStream_t between, cudaStream_t consumer) {
    PA_LAUNCH(dim3(4), dim3(64), 0, producer, pdl_producer)(buf);
    PA_LAUNCH(dim3(1), dim3(1), 0, between, write_value)(unrelated, 1);
    PA_LAUNCH_PDL(true, dim3(4), dim3(64), 0, consumer, pdl_consumer)(buf, other, out, 1);
    return cudaGetLastError();
}

const int pa_selftest_strided_lines[2] = {strided_store_line, strided_store_line + 2};

} // extern "C"
