// Coroutine scheduler behind emu.h.
#include "emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <map>
#include <vector>

namespace pa_emu {

dim3e block_idx, grid_dim, block_dim;

namespace {

enum State { READY, WAIT_BLOCK, WAIT_WARP, DONE };

struct Copy {
    unsigned char *dst;
    const unsigned char *src;
    int unit, src_bytes;
    long group;
};

struct Thread {
    ucontext_t ctx;
    char *stack = nullptr;
    State state = READY;
    dim3e idx{};
    long committed = 0;
    std::vector<Copy> pending;
};

constexpr size_t kStack = 512 * 1024;
std::vector<Thread> threads;
Thread *cur = nullptr;
ucontext_t sched;
unsigned char *smem_buf = nullptr;
size_t smem_cap = 0;
void (*g_body)(void *) = nullptr;
void *g_arg = nullptr;
std::vector<float> slots;
bool immediate = false;
struct Mapping {
    unsigned char *base;
    size_t span;
};
std::map<void *, Mapping> mappings;

[[noreturn]] void die(const char *what) {
    fprintf(stderr, "emu: %s (block %u,%u thread %u)\n", what, block_idx.x, block_idx.y, cur ? cur->idx.x : 0u);
    abort();
}

void yield(State s) {
    cur->state = s;
    swapcontext(&cur->ctx, &sched);
}

void entry() {
    g_body(g_arg);
    if (!cur->pending.empty())
        die("thread exited with cp.async copies never waited for");
    cur->state = DONE;
    swapcontext(&cur->ctx, &sched);
}

void land(const Copy &c) {
    if (c.src_bytes > 0)
        memcpy(c.dst, c.src, (size_t)c.src_bytes);
    if (c.src_bytes < c.unit)
        memset(c.dst + c.src_bytes, 0, (size_t)(c.unit - c.src_bytes));
}

} // namespace

const dim3e &thread_idx() { return cur->idx; }
unsigned char *smem() { return smem_buf; }

void check_align(const void *p, int n, const char *file, int line) {
    if ((uintptr_t)p % (uintptr_t)n != 0) {
        fprintf(stderr, "emu: %s:%d: access %p not aligned to %d\n", file, line, p, n);
        die("misaligned access");
    }
}

void sync_block() { yield(WAIT_BLOCK); }

float shfl_xor(float v, int o) {
    const unsigned t = cur->idx.x;
    slots[t] = v;
    yield(WAIT_WARP);
    const float r = slots[(t & ~31u) | ((t & 31u) ^ (unsigned)o)];
    yield(WAIT_WARP);
    return r;
}

void cp_async(void *dst, const void *src, int unit, int src_bytes) {
    if (unit != 4 && unit != 8 && unit != 16)
        die("cp.async size must be 4, 8 or 16");
    if (src_bytes < 0 || src_bytes > unit)
        die("cp.async src-size out of range");
    check_align(dst, unit, "cp.async dst", 0);
    check_align(src, unit, "cp.async src", 0);
    unsigned char *d = (unsigned char *)dst;
    if (d < smem_buf || d + unit > smem_buf + smem_cap)
        die("cp.async destination outside shared memory");
    Copy c{d, (const unsigned char *)src, unit, src_bytes, cur->committed};
    if (immediate)
        land(c);
    else
        cur->pending.push_back(c);
}

void cp_commit() { cur->committed++; }

void cp_wait(int n) {
    std::vector<Copy> keep;
    for (const Copy &c : cur->pending) {
        if (c.group < cur->committed - n)
            land(c);
        else
            keep.push_back(c);
    }
    cur->pending.swap(keep);
}

void launch(dim3e grid, int nthreads, size_t smem_bytes, void (*body)(void *), void *arg) {
    immediate = getenv("PA_EMU_CP") && strcmp(getenv("PA_EMU_CP"), "immediate") == 0;
    if (nthreads % 32 != 0)
        die("block size must be a multiple of 32");
    if (threads.size() != (size_t)nthreads) {
        for (Thread &t : threads)
            free(t.stack);
        threads.assign((size_t)nthreads, Thread());
        for (Thread &t : threads)
            t.stack = (char *)malloc(kStack);
    }
    slots.assign((size_t)nthreads, 0.0f);
    if (smem_buf)
        guarded_free(smem_buf);
    smem_buf = (unsigned char *)guarded_alloc(smem_bytes);
    smem_cap = smem_bytes;
    g_body = body;
    g_arg = arg;
    grid_dim = grid;
    block_dim = dim3e{(unsigned)nthreads, 1, 1};
    for (unsigned by = 0; by < grid.y; by++)
        for (unsigned bx = 0; bx < grid.x; bx++) {
            block_idx = dim3e{bx, by, 0};
            // Shared memory starts with garbage, as on the device: NaN bytes,
            // so a read of something never written shows in the output.
            memset(smem_buf, 0xFF, smem_bytes);
            for (int i = 0; i < nthreads; i++) {
                Thread &t = threads[(size_t)i];
                t.state = READY;
                t.idx = dim3e{(unsigned)i, 0, 0};
                t.committed = 0;
                t.pending.clear();
                getcontext(&t.ctx);
                t.ctx.uc_stack.ss_sp = t.stack;
                t.ctx.uc_stack.ss_size = kStack;
                t.ctx.uc_link = nullptr;
                makecontext(&t.ctx, entry, 0);
            }
            for (;;) {
                for (Thread &t : threads)
                    if (t.state == READY) {
                        cur = &t;
                        swapcontext(&sched, &t.ctx);
                    }
                cur = nullptr;
                int done = 0, at_block = 0;
                for (const Thread &t : threads) {
                    done += t.state == DONE;
                    at_block += t.state == WAIT_BLOCK;
                }
                if (done == nthreads)
                    break;
                bool released = false;
                for (int w = 0; w < nthreads / 32; w++) {
                    int warp_wait = 0, warp_done = 0;
                    for (int l = 0; l < 32; l++) {
                        warp_wait += threads[(size_t)(w * 32 + l)].state == WAIT_WARP;
                        warp_done += threads[(size_t)(w * 32 + l)].state == DONE;
                    }
                    if (warp_wait > 0 && warp_done > 0)
                        die("warp shuffle with exited lanes");
                    if (warp_wait == 32) {
                        for (int l = 0; l < 32; l++)
                            threads[(size_t)(w * 32 + l)].state = READY;
                        released = true;
                    }
                }
                if (!released && at_block + done == nthreads) {
                    for (Thread &t : threads)
                        if (t.state == WAIT_BLOCK)
                            t.state = READY;
                    released = true;
                }
                if (!released) {
                    fprintf(stderr, "emu: deadlock in block (%u,%u): ", bx, by);
                    for (int i = 0; i < nthreads; i++)
                        fprintf(stderr, "%d", (int)threads[(size_t)i].state);
                    fprintf(stderr, "\n");
                    abort();
                }
            }
        }
}

void *guarded_alloc(size_t bytes) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t body = (bytes + 15) / 16 * 16;
    const size_t span = (body + page - 1) / page * page + 2 * page;
    unsigned char *base =
        (unsigned char *)mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        perror("mmap");
        abort();
    }
    mprotect(base, page, PROT_NONE);
    mprotect(base + span - page, page, PROT_NONE);
    unsigned char *p = base + span - page - body;
    mappings[p] = Mapping{base, span};
    return p;
}

void guarded_free(void *p) {
    if (!p)
        return;
    auto it = mappings.find(p);
    if (it == mappings.end())
        abort();
    munmap(it->second.base, it->second.span);
    mappings.erase(it);
}

} // namespace pa_emu
