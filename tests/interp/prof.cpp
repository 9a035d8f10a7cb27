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
//
// PA_INTERP_PROF_TOP=N also prints, per kernel, the N instructions that cost
// the most wavefronts (shared) or sectors (global) beyond the ideal, each with
// its source line (addr2line on the calling instruction, when it is on PATH;
// the kernels carry line tables, -g1) or else its function and offset.
#include <cxxabi.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <tuple>
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
// PA_INTERP_PROF_TOP: per (kernel, instruction, space) the requests, the
// wavefronts or sectors, and the ideal.
struct PcStats {
    long req = 0, cost = 0, ideal = 0;
};
int top_n = -1; // -1: not read yet
std::map<std::tuple<std::string, uintptr_t, int>, PcStats> per_pc;
const std::string *current_name = nullptr;

void note_pc(uintptr_t pc, int space, long cost, long ideal) {
    if (top_n < 0) {
        const char *e = getenv("PA_INTERP_PROF_TOP");
        top_n = e ? atoi(e) : 0;
    }
    if (top_n <= 0 || !current_name)
        return;
    PcStats &p = per_pc[std::make_tuple(*current_name, pc, space)];
    p.req++;
    p.cost += cost;
    p.ideal += ideal;
}
// Per warp: requests being gathered, keyed by (instruction, k).
std::vector<std::map<std::pair<uintptr_t, int>, Group>> open_groups;
// Per thread: how often it has executed each instruction in this segment.
std::vector<std::unordered_map<uintptr_t, int>> seen;

void global_request(const Group &g, uintptr_t pc) {
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
    note_pc(pc, 2, ns, (nb + 31) / 32);
}

void shared_request(const Group &g, uintptr_t pc) {
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
    note_pc(pc, 1, waves, (long)phases.size());
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

// The calling instruction's source line: addr2line on this executable (the
// call's return address minus one, relative to the executable's load base),
// else the function and offset dladdr finds.
void report_pcs();
// Where the report goes (stdout unless pa_prof_output set it: the CLI's `--json -`
// keeps stdout for the rows).
FILE *prof_out = nullptr;

std::string where(uintptr_t pc) {
    Dl_info info;
    if (!dladdr((void *)pc, &info))
        return "?";
    // A position-independent object's addresses are relative to its base; a
    // fixed executable's are absolute (ELF e_type at offset 16: 3 = ET_DYN).
    const bool pie = ((const unsigned char *)info.dli_fbase)[16] == 3;
    // The main program's dli_fname is its argv[0], which the CLI sets to its
    // own name: the executable's path is /proc/self/exe's.
    char exe[4096];
    const char *file = info.dli_fname;
    Dl_info self;
    if (dladdr((void *)&report_pcs, &self) && self.dli_fbase == info.dli_fbase) {
        const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) {
            exe[n] = 0;
            file = exe;
        }
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "addr2line -C -f -i -e '%s' 0x%lx 2>/dev/null", file,
             (unsigned long)(pc - 1 - (pie ? (uintptr_t)info.dli_fbase : 0)));
    std::string loc;
    if (FILE *f = popen(cmd, "r")) {
        char line[1024];
        std::vector<std::string> lines;
        while (fgets(line, sizeof line, f)) {
            std::string l = line;
            while (!l.empty() && (l.back() == '\n' || l.back() == '\r'))
                l.pop_back();
            lines.push_back(l);
        }
        pclose(f);
        // Pairs of (function, file:line), innermost inline first: the innermost line, then the chain.
        for (size_t i = 1; i < lines.size(); i += 2) {
            std::string fl = lines[i];
            const size_t slash = fl.rfind('/');
            if (slash != std::string::npos)
                fl = fl.substr(slash + 1);
            if (fl.rfind("??", 0) == 0)
                continue;
            // wrap.sh's one-line unit interp_NAME.cpp includes NAME.cu: a line past its first is
            // the .cu's (addr2line names the unit for some rows of a DWARF 5 line table).
            const size_t cpp = fl.find(".cpp:");
            if (fl.rfind("interp_", 0) == 0 && cpp != std::string::npos && atoi(fl.c_str() + cpp + 5) > 1)
                fl = fl.substr(7, cpp - 7) + ".cu" + fl.substr(cpp + 4);
            loc += (loc.empty() ? "" : " < ") + fl;
        }
    }
    if (!loc.empty())
        return loc;
    char buf[256];
    snprintf(buf, sizeof buf, "%s+0x%lx", info.dli_sname ? info.dli_sname : "?",
             (unsigned long)(pc - (uintptr_t)(info.dli_saddr ? info.dli_saddr : info.dli_fbase)));
    return buf;
}

void report_pcs() {
    std::map<std::string, std::vector<std::pair<std::pair<uintptr_t, int>, PcStats>>> by_kernel;
    for (const auto &kv : per_pc)
        by_kernel[std::get<0>(kv.first)].push_back({{std::get<1>(kv.first), std::get<2>(kv.first)}, kv.second});
    for (auto &k : by_kernel) {
        auto &v = k.second;
        std::sort(v.begin(), v.end(), [](const auto &a, const auto &b) {
            return a.second.cost - a.second.ideal > b.second.cost - b.second.ideal;
        });
        fprintf(prof_out ? prof_out : stdout,
                "\n%s: the %d instructions with the most beyond the ideal (PA_INTERP_PROF_TOP)\n", k.first.c_str(),
                top_n);
        fprintf(prof_out ? prof_out : stdout, "%-7s %9s %16s %10s  %s\n", "space", "requests", "per req (ideal)",
                "excess", "source");
        int n = 0;
        for (const auto &e : v) {
            const PcStats &p = e.second;
            if (n++ >= top_n || p.cost <= p.ideal)
                break;
            fprintf(prof_out ? prof_out : stdout, "%-7s %9ld %7.2f (%5.2f) %10ld  %s\n",
                    e.first.second == 2 ? "global" : "shared", p.req, (double)p.cost / (double)p.req,
                    (double)p.ideal / (double)p.req, p.cost - p.ideal, where(e.first.first).c_str());
        }
    }
}

void report() {
    if (stats.empty())
        return;
    fprintf(
        prof_out ? prof_out : stdout,
        "\ninterpret mode: memory-access proxies per warp-level request (not timings; see tests/interp/prof.cpp)\n");
    fprintf(prof_out ? prof_out : stdout, "%-60s %8s %11s %17s %11s %20s\n", "kernel", "launches", "global req",
            "sectors/req(ideal)", "shared req", "wavefronts/req(ideal)");
    for (const auto &kv : stats) {
        const Stats &s = kv.second;
        const double sr = s.g_req ? (double)s.g_sectors / (double)s.g_req : 0.0;
        const double si = s.g_req ? (double)s.g_ideal / (double)s.g_req : 0.0;
        const double wr = s.s_req ? (double)s.s_wave / (double)s.s_req : 0.0;
        const double wi = s.s_req ? (double)s.s_ideal / (double)s.s_req : 0.0;
        fprintf(prof_out ? prof_out : stdout, "%-60.60s %8ld %11ld %9.2f (%5.2f) %11ld %12.2f (%5.2f)\n",
                kv.first.c_str(), s.launches, s.g_req, sr, si, s.s_req, wr, wi);
    }
    if (top_n > 0)
        report_pcs();
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

void pa_prof_output(FILE *f) { prof_out = f; }

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

// The source of the instruction of the first kernel whose name contains
// `part` that cost the most beyond the ideal (PA_INTERP_PROF_TOP must be set
// before its launch), into buf: 1 when there is one.
int pa_prof_top_where(const char *part, char *buf, size_t len) {
    const std::pair<const std::tuple<std::string, uintptr_t, int>, PcStats> *best = nullptr;
    for (const auto &kv : per_pc)
        if (std::get<0>(kv.first).find(part) != std::string::npos &&
            (!best || kv.second.cost - kv.second.ideal > best->second.cost - best->second.ideal))
            best = &kv;
    if (!best || len == 0)
        return 0;
    snprintf(buf, len, "%s", where(std::get<1>(best->first)).c_str());
    return 1;
}

void pa_prof_launch(const void *kernel, const char *name, int begin) {
    static bool registered = false;
    if (!registered) {
        atexit(report);
        registered = true;
    }
    if (begin) {
        auto it = stats.emplace(kernel_name(kernel, name), Stats()).first;
        current = &it->second;
        current_name = &it->first;
        current->launches++;
        open_groups.clear();
        seen.clear();
    } else {
        current = nullptr;
        current_name = nullptr;
    }
}

void pa_prof_segment_end(int warp) {
    if (!current || (size_t)warp >= open_groups.size())
        return;
    for (auto &kv : open_groups[(size_t)warp]) {
        if (kv.second.space == 2)
            global_request(kv.second, kv.first.first);
        else
            shared_request(kv.second, kv.first.first);
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
void __tsan_atomic32_store(volatile int *a, int v, int) { *a = v; }
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
void __tsan_java_alloc(unsigned long, unsigned long) {}
void __tsan_java_free(unsigned long, unsigned long) {}
// Its own bookkeeping on kernel memory goes through plain copies here, which
// the profiler does not see (only the kernels are instrumented).
void __tsan_ignore_thread_begin(void) {}
void __tsan_ignore_thread_end(void) {}

} // extern "C"
