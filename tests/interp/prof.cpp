// Memory-access proxies for `pagedattn check OP --interp` (pagedattn-interp).
//
// pagedattn-interp links the kernels as compiled for the interp-tsan suite
// (-fsanitize=thread), but not ThreadSanitizer's runtime: the compiler's
// callbacks before every load and store (__tsan_read4, __tsan_write16, ...)
// land here instead, with the address, the size and the calling instruction.
// Accesses of one warp from the same instruction, the k-th time each lane
// executes it between two warp collectives or barriers, form one request, as
// the hardware issues them. For each request:
//   global memory: distinct 32-byte sectors touched, against the fewest that
//     could hold the bytes asked for (ncu: l1tex__t_sectors_pipe_lsu_mem_global
//     _op_*.sum / requests);
//   shared memory: wavefronts, the largest number of distinct 4-byte words any
//     bank serves in a phase (128 bytes per phase: 32 lanes of 4 bytes, 16 of
//     8, 8 of 16), against the number of phases (ncu: l1tex__data_pipe_lsu
//     _wavefronts_mem_shared.sum / requests); same words broadcast.
// cp.async counts as a global read of its source and a shared write of its
// destination; ldmatrix as each lane's 16-byte row read. Printed per kernel
// at exit. Proxies only: caches, coalescing across requests and timing are
// not modelled.
#include <cxxabi.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace pa_interp {
int prof_thread();
int prof_space(const void *p);
} // namespace pa_interp

namespace {

struct Access {
    uintptr_t addr;
    int size;
    int lane;
};
struct Group {
    int space = 0;
    std::vector<Access> acc;
};
struct Stats {
    long launches = 0;
    long g_req = 0, g_sectors = 0, g_ideal = 0;
    long s_req = 0, s_wave = 0, s_ideal = 0;
};

std::map<std::string, Stats> stats;
Stats *current = nullptr;
// Per warp: requests being gathered, keyed by (instruction, k).
std::vector<std::map<std::pair<uintptr_t, int>, Group>> open_groups;
// Per thread: how often it has executed each instruction in this segment.
std::vector<std::unordered_map<uintptr_t, int>> seen;

void global_request(const Group &g) {
    std::vector<uintptr_t> sectors, bytes;
    for (const Access &a : g.acc) {
        for (uintptr_t s = a.addr >> 5; s <= (a.addr + (uintptr_t)a.size - 1) >> 5; s++)
            sectors.push_back(s);
        for (int i = 0; i < a.size; i++)
            bytes.push_back(a.addr + (uintptr_t)i);
    }
    std::sort(sectors.begin(), sectors.end());
    std::sort(bytes.begin(), bytes.end());
    const long ns = std::unique(sectors.begin(), sectors.end()) - sectors.begin();
    const long nb = std::unique(bytes.begin(), bytes.end()) - bytes.begin();
    current->g_req++;
    current->g_sectors += ns;
    current->g_ideal += (nb + 31) / 32;
}

void shared_request(const Group &g) {
    int size = 4;
    for (const Access &a : g.acc)
        size = std::max(size, a.size);
    const int lanes_per_phase = 128 / size;
    std::map<int, std::vector<const Access *>> phases;
    for (const Access &a : g.acc)
        phases[a.lane / lanes_per_phase].push_back(&a);
    long waves = 0;
    for (auto &ph : phases) {
        std::map<int, std::vector<uintptr_t>> bank_words;
        for (const Access *a : ph.second)
            for (int i = 0; i < a->size; i += 4) {
                const uintptr_t word = (a->addr + (uintptr_t)i) >> 2;
                bank_words[(int)(word & 31)].push_back(word);
            }
        long worst = 1;
        for (auto &bw : bank_words) {
            std::sort(bw.second.begin(), bw.second.end());
            worst = std::max(worst, (long)(std::unique(bw.second.begin(), bw.second.end()) - bw.second.begin()));
        }
        waves += worst;
    }
    current->s_req++;
    current->s_wave += waves;
    current->s_ideal += (long)phases.size();
}

void access(const void *p, int size, uintptr_t pc) {
    if (!current)
        return;
    const int t = pa_interp::prof_thread();
    if (t < 0)
        return;
    const int space = pa_interp::prof_space(p);
    if (space == 0)
        return;
    const size_t w = (size_t)t / 32;
    if (w >= open_groups.size()) {
        open_groups.resize(w + 1);
        seen.resize((w + 1) * 32);
    }
    const int k = seen[(size_t)t][pc]++;
    Group &g = open_groups[w][{pc, k}];
    g.space = space;
    g.acc.push_back(Access{(uintptr_t)p, size, t & 31});
}

void report() {
    if (stats.empty())
        return;
    printf("\ninterpret mode: memory-access proxies per warp-level request (not timings; see tests/interp/prof.cpp)\n");
    printf("%-60s %8s %11s %17s %11s %20s\n", "kernel", "launches", "global req", "sectors/req(ideal)", "shared req",
           "wavefronts/req(ideal)");
    for (const auto &kv : stats) {
        const Stats &s = kv.second;
        const double sr = s.g_req ? (double)s.g_sectors / (double)s.g_req : 0.0;
        const double si = s.g_req ? (double)s.g_ideal / (double)s.g_req : 0.0;
        const double wr = s.s_req ? (double)s.s_wave / (double)s.s_req : 0.0;
        const double wi = s.s_req ? (double)s.s_ideal / (double)s.s_req : 0.0;
        printf("%-60.60s %8ld %11ld %9.2f (%5.2f) %11ld %12.2f (%5.2f)\n", kv.first.c_str(), s.launches, s.g_req, sr,
               si, s.s_req, wr, wi);
    }
}

// The kernel's name from the dynamic symbol table (pagedattn-interp links with
// -rdynamic), else the launch's text.
std::string kernel_name(const void *kernel, const char *text) {
    Dl_info info;
    if (kernel && dladdr(kernel, &info) && info.dli_sname && info.dli_saddr == kernel) {
        int st = 0;
        char *d = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &st);
        std::string n = st == 0 && d ? d : info.dli_sname;
        free(d);
        const size_t paren = n.find('(');
        return paren == std::string::npos ? n : n.substr(0, paren);
    }
    return text ? text : "?";
}

} // namespace

extern "C" {

const int pa_prof_linked = 1;

// The totals of the first kernel whose name contains `part`: requests,
// sectors and ideal sectors (global), requests, wavefronts and ideal (shared).
int pa_prof_totals(const char *part, long out[6]) {
    for (const auto &kv : stats)
        if (kv.first.find(part) != std::string::npos) {
            const Stats &s = kv.second;
            const long v[6] = {s.g_req, s.g_sectors, s.g_ideal, s.s_req, s.s_wave, s.s_ideal};
            for (int i = 0; i < 6; i++)
                out[i] = v[i];
            return 1;
        }
    return 0;
}

void pa_prof_launch(const void *kernel, const char *name, int begin) {
    static bool registered = false;
    if (!registered) {
        atexit(report);
        registered = true;
    }
    if (begin) {
        current = &stats[kernel_name(kernel, name)];
        current->launches++;
        open_groups.clear();
        seen.clear();
    } else {
        current = nullptr;
    }
}

void pa_prof_segment_end(int warp) {
    if (!current || (size_t)warp >= open_groups.size())
        return;
    for (auto &kv : open_groups[(size_t)warp]) {
        if (kv.second.space == 2)
            global_request(kv.second);
        else
            shared_request(kv.second);
    }
    open_groups[(size_t)warp].clear();
    for (size_t t = (size_t)warp * 32; t < (size_t)warp * 32 + 32 && t < seen.size(); t++)
        seen[t].clear();
}

// ThreadSanitizer's compiler callbacks.
#define PA_PC ((uintptr_t)__builtin_return_address(0))
#define PA_RW(n)                                                                                                       \
    void __tsan_read##n(void *p) { access(p, n, PA_PC); }                                                              \
    void __tsan_write##n(void *p) { access(p, n, PA_PC); }                                                             \
    void __tsan_unaligned_read##n(void *p) { access(p, n, PA_PC); }                                                    \
    void __tsan_unaligned_write##n(void *p) { access(p, n, PA_PC); }                                                   \
    void __tsan_read##n##_pc(void *p, void *pc) { access(p, n, (uintptr_t)pc); }                                       \
    void __tsan_write##n##_pc(void *p, void *pc) { access(p, n, (uintptr_t)pc); }
PA_RW(1)
PA_RW(2)
PA_RW(4)
PA_RW(8)
PA_RW(16)
#undef PA_RW
void __tsan_read_range(void *p, unsigned long n) { access(p, (int)n, PA_PC); }
void __tsan_write_range(void *p, unsigned long n) { access(p, (int)n, PA_PC); }
// Relaxed atomics (pa_interp.h's atomicAdd): plain operations, one thread
// runs at a time.
int __tsan_atomic32_load(const volatile int *a, int) { return *a; }
int __tsan_atomic32_compare_exchange_strong(volatile int *a, int *expected, int desired, int, int) {
    if (*a == *expected) {
        *a = desired;
        return 1;
    }
    *expected = *a;
    return 0;
}
void __tsan_init(void) {}
void __tsan_func_entry(void *) {}
void __tsan_func_exit(void) {}
void __tsan_vptr_update(void **, void *) {}
void __tsan_vptr_read(void **) {}
// The interpreter's fiber and ordering annotations (interp.cpp, PA_INTERP_TSAN).
void *__tsan_get_current_fiber(void) { return (void *)1; }
void *__tsan_create_fiber(unsigned) { return (void *)1; }
void __tsan_destroy_fiber(void *) {}
void __tsan_switch_to_fiber(void *, unsigned) {}
void __tsan_set_fiber_name(void *, const char *) {}
void __tsan_acquire(void *) {}
void __tsan_release(void *) {}
// Its own bookkeeping on kernel memory goes through plain copies here, which
// the profiler does not see (only the kernels are instrumented).
void __tsan_ignore_thread_begin(void) {}
void __tsan_ignore_thread_end(void) {}

} // extern "C"
