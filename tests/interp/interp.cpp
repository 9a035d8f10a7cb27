// The interpreter behind tests/interp/pa_interp.h, and a fake CUDA runtime.
//
// Threads of a CTA are coroutines, each on its own stack, run one at a time; a
// thread runs until it reaches a barrier (__syncthreads, __syncthreads_or,
// __syncwarp) or a warp collective (shuffle, ldmatrix, mma), then the next runs. A barrier
// releases when every live thread of the CTA (or warp) waits at it, and it is
// an error when they wait at different source lines. CTAs run one after
// another, forward (default), reverse or shuffled (PA_INTERP_ORDER), or up to
// PA_INTERP_CTAS of them at once, taking turns at their barriers; cp.async
// copies land at the cp.async.wait_group that covers them (default) or at issue
// (PA_INTERP_CP=issue). Device memory is host memory with an inaccessible page
// right after each buffer (reads or writes past its end fault); shared memory,
// dynamic and static, starts as 0xFF bytes (NaN in every float type) in every
// CTA.
//
// Built with -DPA_INTERP_TSAN (the interp-tsan suite, kernels compiled with
// -fsanitize=thread), every CUDA thread is also a ThreadSanitizer fiber, and
// switching between them implies no ordering. Ordering comes only from what
// orders memory on the device: __syncthreads orders the CTA, __syncwarp the
// warp (a release by each thread before the wait, an acquire after it), the
// launch and the end of the grid (not the end of a CTA, nor the exit of one
// thread), and __threadfence with atomics (thread_fence). Shuffles, ldmatrix and mma order nothing, so a
// lane that writes shared memory another lane reads, with no __syncwarp or
// __syncthreads between, is a race even though lanes run in lock step here.
// A cp.async copy counts as a write of its destination both at issue and when
// it lands, so a read of that destination by another thread anywhere between
// them, unordered by a barrier, is a race too.
#include "pa_interp.h"

#include <link.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/syscall.h>

#include <algorithm>
#include <initializer_list>
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

#include "../../cuda/ptx.cuh"

#ifdef PA_INTERP_TSAN
extern "C" {
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
void __tsan_set_fiber_name(void *fiber, const char *name);
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
void __tsan_read_range(void *addr, unsigned long size);
void __tsan_write_range(void *addr, unsigned long size);
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
// ThreadSanitizer's interface for a Java VM's heap: an allocation there
// resets the shadow of the range, which is what poison_shared needs.
void __tsan_java_alloc(unsigned long ptr, unsigned long size);
void __tsan_java_free(unsigned long ptr, unsigned long size);
}
#endif

// The memory-access profiler of pagedattn-interp (tests/interp/prof.cpp), when
// it is linked: told where requests of a warp end and which launch runs.
extern "C" {
__attribute__((weak)) extern const int pa_prof_linked;
__attribute__((weak)) void pa_prof_launch(const void *kernel, const char *name, int begin);
__attribute__((weak)) void pa_prof_segment_end(int warp);
}

// The plain build's alignment check (tests/interp/meson.build): a misaligned
// access aborts, as the interpreter's own detectors do, with the stack that
// reached it. Read by UndefinedBehaviorSanitizer at start-up where it is linked.
extern "C" const char *__ubsan_default_options() { return "abort_on_error=1:print_stacktrace=1"; }

// The reason a self-test expects the process to abort for (pa_interp_expect_abort,
// tests/interp/selftest_kernels.h): every fragment must be in the report that
// aborts, the interpreter's own or a sanitizer's summary. Another abort exits
// with status 86 instead, so a test that expects SIGABRT fails on an abort it
// did not plan (a bug of the self-test kernel, a detector firing for the wrong
// reason). Each Criterion test runs in a process of its own.
namespace {
// Exits with status 86 at once. Under ThreadSanitizer a plain _exit from
// inside the interpreter's own bookkeeping (Unobserved: the wgmma and fence
// detectors fire there) made it report the fiber "finished with ignores
// enabled" and, with abort_on_error, abort: the SIGABRT a test expected, so a
// test passed on an abort for another reason. The exit_group system call runs
// no exit-time checks.
[[noreturn]] void exit_86() {
#ifdef PA_INTERP_TSAN
    syscall(SYS_exit_group, 86);
#endif
    _exit(86);
}

constexpr int kExpectMax = 4;
const char *g_expect[kExpectMax];
int g_expect_n = 0;

bool g_expect_met = false;

// The first report decides: UndefinedBehaviorSanitizer's summary line, which
// follows its report where print_summary is set (meson test sets it), names no
// kind.
void check_expected_abort(const char *report) {
    if (g_expect_met)
        return;
    g_expect_met = true;
    for (int i = 0; i < g_expect_n; i++)
        if (!strstr(report, g_expect[i])) {
            fprintf(stderr, "pa_interp: the test expected an abort whose report holds \"%s\", not this one: %s\n",
                    g_expect[i], report);
            fflush(stderr);
            exit_86();
        }
}
} // namespace

extern "C" void pa_interp_expect_abort(const char *fragment) {
    if (g_expect_n == kExpectMax) {
        fprintf(stderr, "pa_interp_expect_abort: at most %d fragments\n", kExpectMax);
        _exit(86);
    }
    g_expect[g_expect_n++] = fragment;
}

// Sanitizers report each error's one-line summary here before they abort
// (ThreadSanitizer's races in the interp-tsan build, UndefinedBehaviorSanitizer's
// misaligned accesses in the plain one); printed as the runtimes' own default does.
extern "C" void __sanitizer_report_error_summary(const char *summary) {
    fprintf(stderr, "%s\n", summary);
    check_expected_abort(summary);
}

// UndefinedBehaviorSanitizer (the plain build's alignment check) prints no
// summary before it aborts; its monitor interface gives each report's kind and
// message instead. Weak, for the builds without its runtime.
extern "C" __attribute__((weak)) void __ubsan_get_current_report_data(const char **kind, const char **message,
                                                                      const char **file, unsigned *line, unsigned *col,
                                                                      char **addr);
extern "C" void __ubsan_on_report(void) {
    if (!__ubsan_get_current_report_data)
        return;
    const char *kind = "", *message = "", *file = "";
    unsigned line = 0, col = 0;
    char *addr = nullptr;
    __ubsan_get_current_report_data(&kind, &message, &file, &line, &col, &addr);
    char report[1024];
    snprintf(report, sizeof report, "UndefinedBehaviorSanitizer: %s: %s at %s:%u", kind, message, file, line);
    check_expected_abort(report);
}

// Prints the interpreter's report of a defect and aborts (or exits, where a
// self-test expected another reason).
[[noreturn]] static void abort_with(const char *report) {
    fprintf(stderr, "%s\n", report);
    check_expected_abort(report);
    abort();
}

#if defined(__x86_64__)
// The thread switch (switch.S): the callee-saved registers pushed, the stack
// pointer stored at *save, `load` made the stack pointer, its registers popped.
extern "C" void pa_interp_switch(void **save, void *load);
#endif

// The fake runtime's stream (its flags: capture_role reads them).
struct CUstream_st {
    int id;
    unsigned flags; // cudaStreamCreateWithFlags's
};

namespace pa_interp {
namespace {

#ifdef PA_INTERP_TSAN
constexpr unsigned kNoSync = 1; // __tsan_switch_to_fiber_no_sync
// Barrier generations alternate between two sync objects, so a thread that
// has passed barrier k and reached barrier k+1 cannot release into what a
// slower thread is still to acquire from barrier k. Each resident CTA has its
// own (the vectors move with its state, see Cta), so one CTA's barriers order
// nothing in another.
std::vector<char> block_sync(2);
long block_gen = 0;
std::vector<std::array<char, 2>> warp_sync;
std::vector<long> warp_gen;
void *sched_fiber = nullptr;
char cta_end_sync;
std::vector<std::array<char, 2>> named_sync_obj(16);
#endif
// Named barriers of the running CTA: arrivals in the current generation, its
// thread count (set by the first arrival), and the generation.
struct Named {
    int count = 0, n = 0;
    long gen = 0;
};
Named named[16];

enum State { READY, WAIT_BLOCK, WAIT_WARP, WAIT_MBAR, WAIT_NAMED, DONE, WAIT_REGS };

struct Copy {
    unsigned char *dst;
    const unsigned char *src;
    int unit, src_bytes;
    long group;
};

#if defined(_FORTIFY_SOURCE) && _FORTIFY_SOURCE > 0
#error "interp.cpp switches stacks with _longjmp, which _FORTIFY_SOURCE's __longjmp_chk refuses"
#endif

// Context switches. On x86-64 a switch is pa_interp_switch (switch.S): the
// callee-saved registers pushed on the running stack, the stack pointer
// swapped, the other's popped; a thread's first entry "returns" into entry()
// from a frame built on its fresh stack. Elsewhere a thread is entered the
// first time with swapcontext (to get onto its own stack) and afterwards with
// _setjmp/_longjmp, which, unlike swapcontext, make no system call to save the
// signal mask (under ThreadSanitizer, which intercepts longjmp, swapcontext
// throughout). Each lane switches out and back at every warp collective; with
// glibc's _longjmp (which unwinds cleanup handlers) the switches had cost a
// sixth to a quarter of an interpret-mode test's time. (The x86 shadow stack,
// off unless a process asks for it, would refuse the first entry's return.)
#if defined(__x86_64__)
#define PA_INTERP_FAST_SWITCH 1
#endif
struct Thread {
#ifdef PA_INTERP_FAST_SWITCH
    void *sp = nullptr; // the stack pointer it was switched out at
#else
    ucontext_t ctx;
    jmp_buf jb;
#endif
    bool started = false;
    char *stack = nullptr;
#ifdef PA_INTERP_TSAN
    void *fiber = nullptr;
#endif
    State state = READY;
    uint3 idx{};
    int lin = 0;
    const char *site_file = nullptr;
    int site_line = 0;
    int pred = 0;
    long committed = 0;
    long rounds = 0;                // ldmatrix/mma calls so far: the same on every lane of a warp
    int shfl_par = 0;               // which of slot32's two halves its next shuffle writes
    const uint64_t *mbar = nullptr; // WAIT_MBAR: the barrier and the parity awaited
    int mbar_parity = 0;
    int named_id = 0; // WAIT_NAMED: the barrier and the generation awaited
    long named_gen = 0;
    std::vector<Copy> pending;
    // wgmma: a wgmma.fence since the warp's last wgmma.wait_group (or its
    // start), and the groups committed so far.
    bool wg_fenced = false;
    long wg_committed = 0;
    int regs_want = 0;                         // setmaxnreg: what WAIT_REGS waits for
    bool gd_waited = false;                    // it has executed griddepcontrol.wait
    bool fenced = false;                       // a __threadfence since its last atomic (thread_fence)
    std::map<const uint64_t *, uint32_t> seen; // per mbarrier: the completed phases this thread has waited for
};

constexpr size_t kStack = 256 * 1024;
std::vector<Thread> threads;
std::vector<char *> stack_pool; // stack i of thread i, kept for the process (run_now)
#ifdef PA_INTERP_TSAN
std::vector<void *> fiber_pool;
#endif
Thread *cur = nullptr;
#ifdef PA_INTERP_FAST_SWITCH
void *sched_sp = nullptr;
#else
ucontext_t sched;
#ifndef PA_INTERP_TSAN
jmp_buf sched_jb;
#endif
#endif
unsigned char *smem_buf = nullptr;
size_t smem_cap = 0;
// Static shared memory (PA_STATIC_SMEM in cuda/ptx.cuh): per kernel, each
// variable's offset (given at its first use) and the bytes given so far; the
// running CTA's static shared memory, and every resident CTA's (the first
// g_resident of the pool: a variable met for the first time is poisoned in
// each). The device allows 48 KB.
constexpr size_t kStaticSmem = 48 * 1024;
struct StaticLayout {
    std::map<const void *, size_t> at;
    size_t used = 0;
};
std::map<const void *, StaticLayout> static_layouts;
StaticLayout *g_static = nullptr;
unsigned char *static_buf = nullptr;
std::vector<unsigned char *> static_pool; // resident CTA r's, kept for the process
int g_resident = 0;                       // the running grid's resident CTAs
const std::function<void()> *g_body = nullptr;
uint3 g_block_idx;
dim3 g_grid, g_block;
int g_or = 0;
bool cp_at_issue = false;
// Per-lane slots for warp collectives. A collective is one step (every lane
// waits once): the twins' collectives take every lane's inputs in the first
// lane past the step (first_of_round), before any lane can write its next
// ones; a shuffle's lanes read each other's slot32 entries after the step, so
// consecutive shuffles write its two halves in turn (a lane can be at most
// one shuffle ahead of another's read).
std::vector<uint32_t> slot32; // 2 x the CTA's lanes
std::vector<const void *> slot_ptr;
std::vector<std::array<uint32_t, 4>> slot_a;
std::vector<std::array<uint32_t, 2>> slot_b;
std::vector<std::array<float, 4>> slot_c;
std::vector<std::array<uint32_t, 4>> slot_out; // per lane: the twin's result for that lane
std::vector<std::vector<float>> slot_acc;      // per lane: wgmma accumulators
std::vector<long> warp_round;                  // per warp: the last round whose twin has run

// The async proxy (wgmma's operand reads) and wgmma's asynchrony.
//
// async_img is dynamic shared memory as the async proxy sees it: each
// thread's fence.proxy.async copies the generic view (every thread's stores,
// landed cp.async copies) into it, and a wgmma's operand bytes must be the same
// in both views when it is issued, or it reads what the generic proxy wrote
// with no fence between. The copy is coarse: a thread's stores become visible
// at any thread's later fence, not only at its own or one ordered after it by a
// barrier. One case is kept exact because the Hopper kernel relies on it:
// cp.async copies that land through cp.async.mbarrier.arrive.noinc
// (`unfenced`) become visible only at a fence by a thread that has waited for
// the phase they arrived in. (Copies landed at a cp.async.wait_group, or at
// issue under PA_INTERP_CP=issue, count as stores.)
std::vector<unsigned char> async_img;
bool async_live = false; // async_img holds this CTA's view (filled at its first fence or wgmma)
std::vector<unsigned char> &async_view() {
    if (!async_live) { // before any fence the async proxy sees what the CTA started with
        async_img.assign(smem_cap, 0xFF);
        async_live = true;
    }
    return async_img;
}
// Byte ranges [first, second) of dynamic shared memory.
using Runs = std::vector<std::pair<uint32_t, uint32_t>>;
// Joins byte ranges given in order into runs of consecutive bytes: add extends
// the current run when a range starts at its end, else hands the run to f
// (offset, length) and starts another; flush hands over the last.
template <class F> struct Joiner {
    F f;
    uint32_t at = 0, len = 0;
    void add(uint32_t o, uint32_t n) {
        if (len && o == at + len) {
            len += n;
            return;
        }
        if (len)
            f(at, len);
        at = o;
        len = n;
    }
    void flush() {
        if (len)
            f(at, len);
        len = 0;
    }
};
template <class F> Joiner<F> joiner(F f) { return Joiner<F>{f}; }
// The copies cp.async.mbarrier.arrive.noinc landed through one barrier phase
// (one entry for them all, so a fence decides once per phase, not per copy):
// the barrier, the completed phases that make them visible, and the ranges
// they wrote (sorted and merged at the first fence that keeps them).
struct Landed {
    const uint64_t *bar;
    uint32_t phase; // the barrier's completed phases once the arrival's phase completes
    Runs runs;
    bool merged = true; // runs sorted, overlapping and adjacent ones joined
};
// Sorts r and joins its overlapping and adjacent ranges.
void merge_runs(Runs &r) {
    std::sort(r.begin(), r.end());
    size_t n = 0;
    for (const auto &x : r) {
        if (n && x.first <= r[n - 1].second)
            r[n - 1].second = std::max(r[n - 1].second, x.second);
        else
            r[n++] = x;
    }
    r.resize(n);
}
std::vector<Landed> unfenced;
// Per mbarrier of the CTA: the most completed phases any thread has seen
// complete (a wait, or a probe that found the phase done). An arrival that
// begins a phase while no thread has waited for the one before it is the
// "Missing wait" compute-sanitizer's synccheck reports on the device (an H100
// reported it on 2026-11-27 for a test script that re-arrived without
// waiting); PA_INTERP_MISSING_WAIT=off turns the check off (for the selftest
// that shows a producer running ahead deadlocks).
std::map<const uint64_t *, uint32_t> mbar_waited;
bool missing_wait_check = true;
// A wgmma in flight, per warp in issue order: computed at issue from the
// operands as they are then, delivered to the accumulators at the
// wgmma.wait_group that completes its group. Until then its accumulators hold
// kPoison (a NaN), so a read before the wait computes with NaN and a write is
// reported at the wait, and the shared bytes it reads are kept to check that
// nothing overwrote them while it was in flight.
constexpr uint32_t kPoison = 0x7FDEAD01u;
struct WgOp {
    long group;
    int dt, n;
    bool has_a, trans_a, trans_b;
    uint64_t desc_a, desc_b;
    std::array<float *, 32> acc;
    std::array<const uint32_t *, 32> a; // A in registers: each lane's four, as at issue (areg)
    uint32_t areg[32][4];
    std::vector<float> res; // 32 lanes x n / 2
    std::vector<unsigned char> bytes;
};
std::vector<std::vector<WgOp>> warp_ops;
// Buffers of completed wgmmas (res, bytes), reused by later ones: the
// allocator's cost is most of an allocation's under ThreadSanitizer.
std::vector<std::vector<float>> spare_res;
std::vector<std::vector<unsigned char>> spare_bytes;
std::vector<float *> slot_accp;        // per lane: the wgmma's accumulator registers
std::vector<const uint32_t *> slot_ap; // per lane: its A registers (RS)
// setmaxnreg: each warp's registers per thread, and the CTA's pool of
// registers released by setmaxnreg.dec that setmaxnreg.inc takes from. A warp
// starts with the most a launch of this many threads allows (65536 / threads,
// rounded down to 8); scripts/check-sm90a.sh checks that ptxas gives the
// Hopper kernels that many.
std::vector<int> warp_regs;
long reg_pool = 0;
// The global addresses the running CTA's threads have applied atomics to (the
// ThreadSanitizer build's model of fences, see thread_fence).
std::vector<const void *> cta_atomics;

// Resident CTAs (PA_INTERP_CTAS, 1 by default): up to that many CTAs of a
// grid are under way at once and the scheduler moves from one to the next at
// each completed __syncthreads, so a kernel whose CTAs take work from a
// global counter spreads it over several of them, and one CTA can find
// another's results half done (ragged's last-CTA merge). The running CTA's
// state is in the globals above; a Cta holds another's while it waits. Its
// shared memory, dynamic and static, is its own and stays where it is.
struct Cta {
    std::vector<Thread> threads;
    unsigned char *smem = nullptr;
    unsigned char *static_mem = nullptr;
    uint3 block_idx{};
    int g_or = 0;
    std::vector<long> warp_round;
    std::vector<unsigned char> async_img;
    bool async_live = false;
    std::vector<Landed> unfenced;
    std::map<const uint64_t *, uint32_t> mbar_waited;
    std::vector<std::vector<WgOp>> warp_ops;
    std::vector<int> warp_regs;
    long reg_pool = 0;
    Named named[16];
    std::vector<const void *> atomics;
#ifdef PA_INTERP_TSAN
    std::vector<char> block_sync = std::vector<char>(2);
    long block_gen = 0;
    std::vector<std::array<char, 2>> warp_sync;
    std::vector<long> warp_gen;
    std::vector<std::array<char, 2>> named_sync = std::vector<std::array<char, 2>>(16);
#endif
};
// Exchanges the running CTA's state (but its shared memory) with c's.
void swap_cta(Cta &c) {
    std::swap(threads, c.threads);
    std::swap(g_block_idx, c.block_idx);
    std::swap(g_or, c.g_or);
    std::swap(warp_round, c.warp_round);
    std::swap(async_img, c.async_img);
    std::swap(async_live, c.async_live);
    std::swap(unfenced, c.unfenced);
    std::swap(mbar_waited, c.mbar_waited);
    std::swap(warp_ops, c.warp_ops);
    std::swap(warp_regs, c.warp_regs);
    std::swap(reg_pool, c.reg_pool);
    std::swap(named, c.named);
    std::swap(cta_atomics, c.atomics);
#ifdef PA_INTERP_TSAN
    std::swap(block_sync, c.block_sync);
    std::swap(block_gen, c.block_gen);
    std::swap(warp_sync, c.warp_sync);
    std::swap(warp_gen, c.warp_gen);
    std::swap(named_sync_obj, c.named_sync);
#endif
}

[[noreturn]] void die_at(const char *where, const char *what) {
    char report[1024];
    snprintf(report, sizeof report, "pa_interp: %s%s (block %u,%u,%u thread %d)", where, what, g_block_idx.x,
             g_block_idx.y, g_block_idx.z, cur ? cur->lin : -1);
    abort_with(report);
}
[[noreturn]] void die(const char *what) { die_at("", what); }

// The interpreter's own bookkeeping on kernel memory (the async proxy's copy
// of shared memory, results written into another lane's registers) is not an
// access by the CUDA thread it runs on: ThreadSanitizer's memcpy interceptor
// would report it as one, so it is ignored for the guard's scope.
struct Unobserved {
#ifdef PA_INTERP_TSAN
    Unobserved() { __tsan_ignore_thread_begin(); }
    ~Unobserved() { __tsan_ignore_thread_end(); }
#endif
};

// Shared memory a new CTA starts on (or a static variable met for the first
// time): 0xFF bytes, NaN in every float type, and under ThreadSanitizer the
// accesses recorded there so far forgotten (its shadow reset, and the sync
// objects of mbarriers there dropped), since nothing orders the CTA's threads
// with those of the CTA that used it before.
void poison_shared(void *p, size_t n) {
    if (n == 0)
        return;
    [[maybe_unused]] const Unobserved quiet;
#ifdef PA_INTERP_TSAN
    const uintptr_t lo = reinterpret_cast<uintptr_t>(p) & ~(uintptr_t)7;
    const uintptr_t hi = (reinterpret_cast<uintptr_t>(p) + n + 7) & ~(uintptr_t)7;
    __tsan_java_free(lo, hi - lo);
    __tsan_java_alloc(lo, hi - lo);
#endif
    memset(p, 0xFF, n);
}

// The sweep run_cta is in: the warps it picked (sweep_run) and the lane its
// cursor is at. A thread that switches out hands the core straight to the
// sweep's next ready thread (hand_off), one switch where going back through
// the scheduler made two; the order is the scheduler loop's own (each lane
// looked at once, in order, and run if it is ready when its turn comes).
std::vector<int> sweep_run;
size_t sweep_w = 0;
int sweep_l = 0;

// Programmatic dependent launch (see grid_begin): the running grid was launched
// with it (g_pdl), and the allocations the grid before it wrote are closed to
// the threads that have not executed griddepcontrol.wait (pdl_guard).
bool g_pdl = false;
bool pdl_guard = false;
void pdl_switch_in(const Thread &t);

// The sweep's next ready thread, the cursor left on it (the caller that runs
// it moves past); nullptr at the end of the sweep.
Thread *sweep_next() {
    for (; sweep_w < sweep_run.size(); sweep_w++, sweep_l = 0) {
        const size_t base = 32 * (size_t)sweep_run[sweep_w];
        for (; sweep_l < 32 && base + (size_t)sweep_l < threads.size(); sweep_l++) {
            Thread &t = threads[base + (size_t)sweep_l];
            if (t.state == READY)
                return &t;
        }
    }
    return nullptr;
}

// Switches from the running thread to the sweep's next ready thread, if there
// is one. Under ThreadSanitizer a thread's first entry comes from the
// scheduler (ordered after the launch, not after the thread before it), so
// then this returns false too and the caller goes back to the scheduler.
bool hand_off() {
#ifdef PA_INTERP_FAST_SWITCH
    Thread *next = sweep_next();
    if (!next)
        return false;
#ifdef PA_INTERP_TSAN
    if (!next->started)
        return false;
    __tsan_switch_to_fiber(next->fiber, kNoSync);
#endif
    sweep_l++;
    Thread *self = cur;
    cur = next;
    if (pdl_guard)
        pdl_switch_in(*next);
    next->started = true;
    pa_interp_switch(&self->sp, next->sp);
    return true;
#else
    return false;
#endif
}

// Under ThreadSanitizer each switch first tells it which fiber runs next.
void yield(State s) {
    cur->state = s;
    if (hand_off())
        return;
#ifdef PA_INTERP_TSAN
    __tsan_switch_to_fiber(sched_fiber, kNoSync);
#endif
#if defined(PA_INTERP_FAST_SWITCH)
    pa_interp_switch(&cur->sp, sched_sp);
#elif defined(PA_INTERP_TSAN)
    swapcontext(&cur->ctx, &sched);
#else
    if (!_setjmp(cur->jb))
        _longjmp(sched_jb, 1);
#endif
}

void entry() {
    (*g_body)();
    if (!cur->pending.empty())
        die("thread exited with cp.async copies never waited for");
    if (!warp_ops[(size_t)(cur->lin >> 5)].empty())
        die("thread exited with a wgmma in flight (no wgmma.wait_group completed it)");
    // The rule this library keeps for a grid launched with programmatic
    // dependent launch: every thread executes griddepcontrol.wait before it
    // exits, so the grid completes only after the grid it depends on has (a
    // launch after it on the stream, an event or a graph's next node then see
    // that grid's writes too, whatever a chain of dependent launches implies).
    if (g_pdl && !cur->gd_waited)
        die("a thread of a grid launched with programmatic dependent launch exited without executing "
            "griddepcontrol.wait (the grid could complete before the grid it depends on)");
    cur->state = DONE;
#ifdef PA_INTERP_TSAN
    // A thread's exit orders nothing for the threads still running (on the
    // device it is not a barrier); the end of the CTA, which the scheduler
    // acquires, orders all of them before what follows.
    __tsan_release(&cta_end_sync);
#endif
    if (hand_off())
        __builtin_unreachable(); // never resumed
#ifdef PA_INTERP_TSAN
    __tsan_switch_to_fiber(sched_fiber, kNoSync);
#endif
#if defined(PA_INTERP_FAST_SWITCH)
    pa_interp_switch(&cur->sp, sched_sp); // never resumed
    __builtin_unreachable();
#elif defined(PA_INTERP_TSAN)
    setcontext(&sched);
#else
    _longjmp(sched_jb, 1);
#endif
}

// A thread's first entry. Fast switch: its stack holds six zero registers
// for pa_interp_switch to pop and entry() as the return address, in a
// 16-byte aligned slot, so entry() starts as if called (the stack pointer
// 8 past a multiple of 16).
void start_stack(Thread &t) {
#ifdef PA_INTERP_FAST_SWITCH
    // The stacks are kStack apart, a multiple of the page: their tops would
    // share the same few cache sets, so each starts (lin % 64) lines lower.
    const uintptr_t top = reinterpret_cast<uintptr_t>(t.stack) + kStack - (uintptr_t)(t.lin % 64) * 64;
    void **s = reinterpret_cast<void **>(top & ~(uintptr_t)15);
    *--s = nullptr;                          // above the return address: entry() never returns
    *--s = reinterpret_cast<void *>(&entry); // 16-byte aligned
    for (int i = 0; i < 6; i++)
        *--s = nullptr; // rbp, rbx, r12 .. r15
    t.sp = s;
#else
    getcontext(&t.ctx);
    t.ctx.uc_stack.ss_sp = t.stack;
    t.ctx.uc_stack.ss_size = kStack;
    t.ctx.uc_link = nullptr;
    makecontext(&t.ctx, entry, 0);
#endif
}

void resume(Thread &t) {
    cur = &t;
    if (pdl_guard)
        pdl_switch_in(t);
#ifdef PA_INTERP_TSAN
    // The first entry is ordered after the launch (inputs, poisoned shared
    // memory); later switches order nothing.
    __tsan_switch_to_fiber(t.fiber, t.started ? kNoSync : 0);
#endif
#if defined(PA_INTERP_FAST_SWITCH)
    t.started = true;
    pa_interp_switch(&sched_sp, t.sp);
#elif defined(PA_INTERP_TSAN)
    t.started = true;
    swapcontext(&sched, &t.ctx);
#else
    if (!_setjmp(sched_jb)) {
        if (!t.started) {
            t.started = true;
            swapcontext(&sched, &t.ctx);
        } else {
            _longjmp(t.jb, 1);
        }
    }
#endif
}

void land(const Copy &c) {
#ifdef PA_INTERP_TSAN
    if (!&pa_prof_linked) // the profiler counted this write at issue
        __tsan_write_range(c.dst, (unsigned long)c.unit);
#endif
    if (c.src_bytes > 0)
        memcpy(c.dst, c.src, (size_t)c.src_bytes);
    if (c.src_bytes < c.unit)
        memset(c.dst + c.src_bytes, 0, (size_t)(c.unit - c.src_bytes));
}

int lane() { return cur->lin & 31; }
int warp_base() { return cur->lin & ~31; }

// Every lane of the warp waits here once; the caller reads the slots between
// two of these.
void warp_step(const char *file, int line) {
    cur->site_file = file;
    cur->site_line = line;
    yield(WAIT_WARP);
}

// Two threads wait at the same source line (__FILE__ strings: most often the
// same pointer).
bool same_site(const Thread &a, const Thread &b) {
    return a.site_line == b.site_line && (a.site_file == b.site_file || strcmp(a.site_file, b.site_file) == 0);
}

// Set by release when it releases the CTA barrier: a point where another
// resident CTA may run (run_cta).
bool block_released = false;

// Releases every warp whose lanes all wait at one collective, and the CTA
// barrier when every live thread waits at it. Returns whether any was released.
bool release(int nthreads) {
    bool released = false;
    int done = 0, at_block = 0;
    for (Thread &t : threads) {
        if (t.state == WAIT_MBAR && pa::ptx::twin::mbar_done(*t.mbar, t.mbar_parity)) {
            t.state = READY;
            released = true;
        }
        if (t.state == WAIT_NAMED && named[t.named_id].gen != t.named_gen) {
            t.state = READY;
            released = true;
        }
        if (t.state == WAIT_REGS) {
            const int have = warp_regs[(size_t)(t.lin >> 5)];
            if (have >= t.regs_want || reg_pool >= (long)(t.regs_want - have) * 32) {
                t.state = READY;
                released = true;
            }
        }
        done += t.state == DONE;
        at_block += t.state == WAIT_BLOCK;
    }
    for (int w = 0; w * 32 < nthreads; w++) {
        const int n = std::min(32, nthreads - 32 * w);
        int wait = 0, dead = 0;
        for (int l = 0; l < n; l++) {
            wait += threads[(size_t)(w * 32 + l)].state == WAIT_WARP;
            dead += threads[(size_t)(w * 32 + l)].state == DONE;
        }
        if (wait > 0 && wait + dead == n) {
            if (dead > 0) {
                cur = &threads[(size_t)(w * 32)];
                die("warp collective with exited lanes");
            }
            const Thread &a = threads[(size_t)(w * 32)];
            for (int l = 0; l < n; l++) {
                const Thread &t = threads[(size_t)(w * 32 + l)];
                if (!same_site(t, a)) {
                    fprintf(stderr, "pa_interp: warp %d lanes meet at %s:%d and %s:%d\n", w, a.site_file, a.site_line,
                            t.site_file, t.site_line);
                    die("divergent warp collective");
                }
            }
            for (int l = 0; l < n; l++)
                threads[(size_t)(w * 32 + l)].state = READY;
#ifdef PA_INTERP_TSAN
            warp_gen[(size_t)w]++;
#endif
            if (pa_prof_segment_end)
                pa_prof_segment_end(w);
            released = true;
        }
    }
    if (at_block > 0 && at_block + done == nthreads) {
        const Thread *first = nullptr;
        g_or = 0;
        for (const Thread &t : threads)
            if (t.state == WAIT_BLOCK) {
                if (!first)
                    first = &t;
                else if (!same_site(t, *first)) {
                    fprintf(stderr, "pa_interp: __syncthreads reached at %s:%d and at %s:%d\n", first->site_file,
                            first->site_line, t.site_file, t.site_line);
                    die("barrier reached from two places");
                }
                g_or |= t.pred;
            }
        for (Thread &t : threads)
            if (t.state == WAIT_BLOCK)
                t.state = READY;
#ifdef PA_INTERP_TSAN
        block_gen++;
#endif
        if (pa_prof_segment_end)
            for (int w = 0; w * 32 < nthreads; w++)
                pa_prof_segment_end(w);
        released = true;
        block_released = true;
    }
    return released;
}

// Schedules (PA_INTERP_SCHED): "sweep" (default) runs every ready thread in
// turn, so every warp reaches its next collective before any goes past it;
// "warp" runs the lowest ready warp as far as it can go; "random" picks a
// random ready warp each time (seeded by PA_INTERP_SEED), which lets one warp
// run ahead of another by several steps, as on the device: this is what
// exposes a missing barrier between warps.
enum Sched { SWEEP, WARP, RANDOM };
Sched sched_mode = SWEEP;
std::mt19937 sched_rng(1);

// Runs the CTA in the globals until every thread is done (returns true) or,
// when may_leave, until it has released a __syncthreads (returns false: every
// thread is then ready, none has run past the barrier, and a later call goes
// on from there).
bool run_cta(int nthreads, bool may_leave) {
    const int nwarps = (nthreads + 31) / 32;
    std::vector<int> ready;
    block_released = false;
    for (;;) {
        ready.clear();
        for (int w = 0; w < nwarps; w++)
            for (int l = 0; l < 32 && w * 32 + l < nthreads; l++)
                if (threads[(size_t)(w * 32 + l)].state == READY) {
                    ready.push_back(w);
                    break;
                }
        if (ready.empty()) {
            int done = 0;
            for (const Thread &t : threads)
                done += t.state == DONE;
            if (done == nthreads)
                return true;
            if (!release(nthreads)) {
                std::string report;
                char line[160];
                for (const Thread &t : threads)
                    if (t.state == WAIT_REGS) {
                        snprintf(line, sizeof line,
                                 "pa_interp: setmaxnreg.inc to %d waits for registers no warp releases (a pool of "
                                 "%ld)\n",
                                 t.regs_want, reg_pool);
                        report += line;
                        break;
                    }
                snprintf(line, sizeof line, "pa_interp: deadlock in block (%u,%u,%u): ", g_block_idx.x, g_block_idx.y,
                         g_block_idx.z);
                report += line;
                for (int i = 0; i < nthreads; i++)
                    report += std::to_string((int)threads[(size_t)i].state);
                abort_with(report.c_str());
            }
            if (may_leave && block_released)
                return false;
            continue;
        }
        sweep_run.clear();
        if (sched_mode == SWEEP)
            sweep_run.swap(ready); // (ready is rebuilt at the top of the loop)
        else if (sched_mode == WARP)
            sweep_run.push_back(ready[0]);
        else
            sweep_run.push_back(ready[std::uniform_int_distribution<size_t>(0, ready.size() - 1)(sched_rng)]);
        // Every lane of the picked warps in order, each run if ready when its
        // turn comes: the threads hand off to each other (hand_off) and come
        // back here when the next is not theirs to start.
        sweep_w = 0;
        sweep_l = 0;
        while (Thread *t = sweep_next()) {
            sweep_l++;
            resume(*t);
        }
        cur = nullptr;
        if (sched_mode != SWEEP) {
            release(nthreads);
            if (may_leave && block_released)
                return false;
        }
    }
}

// ---- fake runtime state ----
size_t page_size() {
    static const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return page;
}
// A guarded buffer's mapping: a guard page, the body (the buffer ends 16-byte
// aligned against the last page), a guard page.
struct Mapping {
    unsigned char *base;
    size_t span;
    size_t bytes;        // what was asked for
    bool device = false; // cudaMalloc's (not the interpreter's shared memory)
    bool wrote = false;  // the running grid has written it (grid_begin)
    bool closed = false; // closed to the running thread (pdl_switch_in)
    // The body: its first byte, and one past its last.
    unsigned char *lo() const { return base + page_size(); }
    unsigned char *hi() const { return base + span - page_size(); }
};
std::map<const void *, Mapping> mappings;
std::map<const void *, int> max_dyn_smem; // cudaFuncAttributeMaxDynamicSharedMemorySize per kernel
cudaError_t last_error = cudaSuccess;
cudaStream_t capturing = nullptr;
bool capture_on = false;
bool capture_broken = false;
std::vector<std::function<void()>> captured;

cudaError_t fail(cudaError_t e) {
    last_error = e;
    return e;
}

bool legacy_stream(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy; }
// The capturing stream synchronises with the legacy stream (it is not cudaStreamNonBlocking).
bool capture_blocking() { return legacy_stream(capturing) || !(capturing->flags & cudaStreamNonBlocking); }

// What stream-ordered work issued on `stream` does while a capture is on: 1, recorded into the
// graph (the capturing stream); 0, run now (any other stream, or the legacy stream when the
// capturing stream is non-blocking: neither waits on the other); -1, refused: the legacy stream
// while a blocking stream captures would have to wait on the capture, which CUDA calls an
// implicit dependency (cudaErrorStreamCaptureImplicit), and the capture is invalidated. So a
// launcher that issued work on the legacy stream instead of its caller's fails a graph test
// here, as it would on a GPU, where it was recorded into the graph before.
// Work that ran at once beside a capture, on a stream other than the capturing
// one, is counted (pa_interp_work_beside_capture): a library entry captured on
// its caller's stream that issued work on a stream of its own would escape the
// graph, its results there at capture time and never at a replay, which a test
// that checks the replay's results over the same inputs cannot tell.
std::atomic<unsigned long> work_beside_capture{0};
int capture_role(cudaStream_t stream) {
    if (!capture_on)
        return 0;
    if (stream == capturing)
        return 1;
    if (legacy_stream(stream) && capture_blocking()) {
        capture_broken = true;
        return -1;
    }
    work_beside_capture++;
    return 0;
}

// ---- programmatic dependent launch ----
// A grid launched with it may start while the grid before it on the stream is
// still running; griddepcontrol.wait is what orders the two. Two rules are
// held: every thread of such a grid executes griddepcontrol.wait before it
// exits (entry()), and, in the plain build, no thread touches an allocation the
// grid before it wrote until that thread has executed griddepcontrol.wait.
// For the second the interpreter notes which device allocations each grid
// writes: during a grid every allocation is read-only until its first write,
// whose fault the handler below turns into a note and a writable allocation
// (one fault per allocation and grid). In a grid launched with programmatic
// dependent launch, the allocations the grid before it on that stream wrote
// are inaccessible to each thread of its first CTA (the first to run) until
// the thread has executed griddepcontrol.wait, and an access faults into a
// report. (The ThreadSanitizer build keeps only the first rule: its runtime
// has its own use of faults.)
#ifndef PA_INTERP_TSAN
std::map<cudaStream_t, std::vector<const void *>> last_grid_wrote; // per stream, its last grid's allocations
std::vector<const void *> grid_wrote;                              // the running grid's
std::vector<const void *> pdl_closed; // what the grid before the running one wrote, closed to non-waiters
bool pdl_is_closed = false;
bool tracking = false;
const char *grid_name = nullptr;
struct sigaction segv_before;

void protect(const Mapping &m, int prot) { mprotect(m.lo(), (size_t)(m.hi() - m.lo()), prot); }

// The mapping whose pages hold a (a buffer lies near the end of its mapping,
// so an address in the slack before it is below its key).
std::map<const void *, Mapping>::iterator mapping_of(const unsigned char *a) {
    auto it = mappings.upper_bound(a);
    if (it != mappings.end() && it->second.base <= a)
        return it;
    if (it != mappings.begin() && a < std::prev(it)->second.base + std::prev(it)->second.span)
        return std::prev(it);
    return mappings.end();
}

void on_segv(int, siginfo_t *si, void *) {
    const unsigned char *a = static_cast<const unsigned char *>(si->si_addr);
    auto it = mapping_of(a);
    if (tracking && it != mappings.end()) {
        Mapping &m = it->second;
        if (m.device && a >= m.lo() && a < m.hi()) {
            if (m.closed) {
                char report[768];
                snprintf(report, sizeof report,
                         "pa_interp: a grid launched with programmatic dependent launch (%s) accessed, before its "
                         "griddepcontrol.wait, memory the grid before it on the stream wrote (byte %td of an "
                         "allocation at %p): on the device that grid may still be running and its writes are not "
                         "yet visible (block %u,%u,%u thread %d)",
                         grid_name ? grid_name : "?", a - static_cast<const unsigned char *>(it->first), it->first,
                         g_block_idx.x, g_block_idx.y, g_block_idx.z, cur ? cur->lin : -1);
                abort_with(report);
            }
            if (!m.wrote) {
                m.wrote = true;
                grid_wrote.push_back(it->first);
                protect(m, PROT_READ | PROT_WRITE);
                return;
            }
        }
    }
    if (!tracking && it != mappings.end() && it->second.device && a >= it->second.lo() && a < it->second.hi()) {
        char report[512];
        snprintf(report, sizeof report,
                 "pa_interp: the host touched device memory (byte %td of a cudaMalloc allocation at %p of %zu "
                 "bytes) outside a kernel and the runtime's copies: on the device that faults; copy it with "
                 "cudaMemcpy (PA_INTERP_HOST_ACCESS=1 allows it, for the interpreter's self-tests)",
                 a - static_cast<const unsigned char *>(it->first), it->first, it->second.bytes);
        abort_with(report);
    }
    sigaction(SIGSEGV, &segv_before, nullptr); // not the interpreter's: the fault it always was
}

// Device memory is closed to the host between grids (PROT_NONE), as on the device, where a
// host pointer into a cudaMalloc allocation faults: a launcher or test that reads a length, a
// scale or an output straight from device memory fails here too, not first on a GPU. The
// runtime's copies and sets open what they touch for their duration (HostWindow); a grid opens
// everything (grid_begin). PA_INTERP_HOST_ACCESS=1 leaves it open (the self-tests of the
// interpreter read their kernels' results directly).
bool host_guard() {
    const char *v = getenv("PA_INTERP_HOST_ACCESS");
    return !(v && strcmp(v, "1") == 0);
}

void install_segv() {
    static bool installed = false;
    if (!installed) {
        struct sigaction sa = {};
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, &segv_before);
        installed = true;
    }
}

// Opens the device allocations holding the given addresses to the host while it lives (all of
// them with `all`: the fake cuBLAS).
int host_open_all = 0;
class HostWindow {
    std::vector<Mapping *> open_;

  public:
    explicit HostWindow(std::initializer_list<const void *> ptrs) {
        if (tracking || host_open_all || !host_guard())
            return;
        for (const void *p : ptrs) {
            auto it = p ? mapping_of(static_cast<const unsigned char *>(p)) : mappings.end();
            if (it != mappings.end() && it->second.device &&
                std::find(open_.begin(), open_.end(), &it->second) == open_.end()) {
                protect(it->second, PROT_READ | PROT_WRITE);
                open_.push_back(&it->second);
            }
        }
    }
    ~HostWindow() {
        for (Mapping *m : open_)
            protect(*m, PROT_NONE);
    }
    HostWindow(const HostWindow &) = delete;
    HostWindow &operator=(const HostWindow &) = delete;
};

void set_host_open_all(bool open) {
    host_open_all += open ? 1 : -1;
    if (tracking || !host_guard() || host_open_all != (open ? 1 : 0))
        return;
    for (auto &kv : mappings)
        if (kv.second.device)
            protect(kv.second, open ? PROT_READ | PROT_WRITE : PROT_NONE);
}

// A new allocation, closed to the host (after cudaMalloc's fill).
void close_new(const Mapping &m) {
    if (!host_guard() || host_open_all)
        return;
    install_segv();
    protect(m, PROT_NONE);
}

void pdl_close(bool closed) {
    if (closed == pdl_is_closed)
        return;
    pdl_is_closed = closed;
    for (const void *k : pdl_closed) {
        Mapping &m = mappings.at(k);
        m.closed = closed;
        protect(m, closed ? PROT_NONE : m.wrote ? PROT_READ | PROT_WRITE : PROT_READ);
    }
}

void pdl_switch_in(const Thread &t) { pdl_close(!t.gd_waited); }

// Before a grid runs: every device allocation read-only, and with pdl the
// allocations the stream's last grid wrote set aside for the guard.
void grid_begin(cudaStream_t stream, bool pdl, const char *name) {
    install_segv();
    grid_name = name;
    grid_wrote.clear();
    for (auto &kv : mappings)
        if (kv.second.device) {
            kv.second.wrote = false;
            protect(kv.second, PROT_READ);
        }
    tracking = true;
    g_pdl = pdl;
    pdl_closed.clear();
    if (pdl)
        for (const void *k : last_grid_wrote[stream]) {
            auto it = mappings.find(k);
            if (it != mappings.end() && it->second.device)
                pdl_closed.push_back(k);
        }
    pdl_is_closed = false;
    pdl_guard = !pdl_closed.empty();
}

// After the first CTA: every thread from here on is taken to have waited.
void pdl_first_cta_done() {
    pdl_close(false);
    pdl_guard = false;
}

// A write just outside a buffer that faults nowhere: the bytes between the
// leading guard page and the buffer's start, and those past its end up to the
// trailing guard page (the buffer is placed against it, its size rounded up to
// 16). cudaMalloc fills them with 0xFF and nothing else writes them, so after a
// grid that wrote the allocation each still holds 0xFF, or the grid wrote
// outside the buffer (on the device, into another allocation or a view's
// neighbour). A store of 0xFF bytes there goes unseen.
void check_margins(const void *key, const Mapping &m) {
    const unsigned char *p = static_cast<const unsigned char *>(key), *end = p + m.bytes;
    const unsigned char *bad = nullptr;
    for (const unsigned char *q = m.lo(); q < p && !bad; q++)
        bad = *q != 0xFF ? q : nullptr;
    for (const unsigned char *q = end; q < m.hi() && !bad; q++)
        bad = *q != 0xFF ? q : nullptr;
    if (bad) {
        char report[512];
        snprintf(report, sizeof report,
                 "pa_interp: the grid %s wrote outside an allocation at %p of %zu bytes: the byte at offset %td, "
                 "%s, where nothing may write",
                 grid_name ? grid_name : "?", key, m.bytes, bad - p, bad < p ? "before its start" : "past its end");
        abort_with(report);
    }
}

void grid_end(cudaStream_t stream) {
    pdl_first_cta_done();
    tracking = false;
    g_pdl = false;
    const bool closed = host_guard() && !host_open_all;
    for (auto &kv : mappings)
        if (kv.second.device) {
            if (kv.second.wrote)
                check_margins(kv.first, kv.second);
            if (closed || !kv.second.wrote)
                protect(kv.second, closed ? PROT_NONE : PROT_READ | PROT_WRITE);
        }
    last_grid_wrote[stream] = grid_wrote;
}
#else
void pdl_switch_in(const Thread &) {}
void grid_begin(cudaStream_t, bool pdl, const char *) { g_pdl = pdl; }
void pdl_first_cta_done() {}
void grid_end(cudaStream_t) { g_pdl = false; }
// (the host guard needs the fault handler: not in this build)
struct HostWindow {
    explicit HostWindow(std::initializer_list<const void *>) {}
};
void set_host_open_all(bool) {}
void close_new(const Mapping &) {}
#endif

} // namespace

// Launches, copies, sets and graph launches that ran at once beside a capture (capture_role).
extern "C" unsigned long pa_interp_work_beside_capture(void) { return work_beside_capture.load(); }

// The fake cuBLAS (cublas_interp.cpp) computes on the host: device memory is open to it
// while it runs.
extern "C" void pa_interp_host_open_all(int open) { set_host_open_all(open != 0); }

// ---- the kernel-side API (pa_interp.h) ----
void fatal(const char *what, const char *file, int line) {
    char where[512];
    snprintf(where, sizeof where, "%s:%d: ", file, line);
    die_at(where, what);
}

// For the profiler (prof.cpp): the running CUDA thread's index in its CTA (-1
// outside a kernel), and where an address lies: 1 shared memory, 2 a device
// allocation, 0 elsewhere (a thread's stack, host memory).
int prof_thread() { return cur && cur->state == READY ? cur->lin : -1; }
int prof_space(const void *p) {
    const unsigned char *b = static_cast<const unsigned char *>(p);
    if ((b >= smem_buf && b < smem_buf + smem_cap) || (b >= static_buf && b < static_buf + kStaticSmem))
        return 1;
    auto it = mappings.upper_bound(p);
    if (it == mappings.begin())
        return 0;
    --it;
    return b < it->second.hi() ? 2 : 0;
}

const uint3 &thread_idx() { return cur->idx; }
const uint3 &block_idx() { return g_block_idx; }
const dim3 &block_dim() { return g_block; }
const dim3 &grid_dim() { return g_grid; }
unsigned char *dynamic_smem() { return smem_buf; }

void *static_smem(const void *key, size_t bytes, size_t align) {
    auto it = g_static->at.find(key);
    if (it == g_static->at.end()) {
        const size_t o = (g_static->used + align - 1) / align * align;
        if (o + bytes > kStaticSmem)
            die("static shared memory over the device's 48 KB");
        it = g_static->at.emplace(key, o).first;
        g_static->used = o + bytes;
        for (int r = 0; r < g_resident; r++)
            poison_shared(static_pool[(size_t)r] + o, bytes);
    }
    return static_buf + it->second;
}

// __threadfence and atomics. CTAs run on the CPU one after another or (with
// several resident, PA_INTERP_CTAS) in turns at their barriers, so a store is
// seen by every later load whatever fences stand between. Under
// ThreadSanitizer, where the CTAs of a grid are not ordered with each other,
// the model is PTX's fence-atomic synchronisation: a thread's atomic after a
// __threadfence of its own (a release pattern) releases what the thread has
// done (its clock, which a __syncthreads before the fence joins with the
// CTA's) into the atomic's address; a __threadfence after an atomic of the
// CTA (an acquire pattern; another thread's atomic counts once a barrier
// orders it first, as the last-CTA pattern has it: thread 0's atomic, a
// __syncthreads, every thread's fence) acquires from every address the CTA's
// atomics touched. So a CTA that reads what another CTA wrote, ordered only by
// a counter, needs both fences, or ThreadSanitizer reports the race. The model
// is stricter than PTX in one way (a fence counts for its thread's next atomic
// only) and coarser in three, each toward fewer reports: what a thread did
// between its fence and its atomic is released too; an acquire takes every
// release made on the address so far, not only those its atomic read; and a
// fence acquires whatever atomics the CTA did before it in time, ordered
// before it by a barrier or not.
void thread_fence() {
#ifdef PA_INTERP_TSAN
    cur->fenced = true;
    for (const void *p : cta_atomics)
        __tsan_acquire(const_cast<void *>(p));
#endif
}

void atomic_done(const void *p) {
#ifdef PA_INTERP_TSAN
    if (cur->fenced) {
        __tsan_release(const_cast<void *>(p));
        cur->fenced = false;
    }
    if (std::find(cta_atomics.begin(), cta_atomics.end(), p) == cta_atomics.end())
        cta_atomics.push_back(p);
#else
    (void)p;
#endif
}

// A CTA barrier: under ThreadSanitizer, each thread releases before it waits
// and acquires after, so everything before the barrier in any thread is
// ordered before everything after it in every thread.
void wait_block() {
#ifdef PA_INTERP_TSAN
    char *sync = &block_sync[block_gen & 1];
    __tsan_release(sync);
    yield(WAIT_BLOCK);
    __tsan_acquire(sync);
#else
    yield(WAIT_BLOCK);
#endif
}

void sync_block(const char *file, int line) {
    cur->site_file = file;
    cur->site_line = line;
    cur->pred = 0;
    wait_block();
}

int sync_or(int pred, const char *file, int line) {
    cur->site_file = file;
    cur->site_line = line;
    cur->pred = pred != 0;
    wait_block();
    const int r = g_or;
    // Everyone reads g_or before anyone may overwrite it at the next __syncthreads_or.
    sync_block(file, line);
    return r;
}

void sync_warp(const char *file, int line) {
#ifdef PA_INTERP_TSAN
    const size_t w = (size_t)(cur->lin >> 5);
    char *sync = &warp_sync[w][(size_t)(warp_gen[w] & 1)];
    __tsan_release(sync);
    warp_step(file, line);
    __tsan_acquire(sync);
#else
    warp_step(file, line);
#endif
}

uint32_t shfl32(uint32_t bits, int mode, int arg, int width) {
    const int l = lane(), seg = l & ~(width - 1);
    uint32_t *half = slot32.data() + (size_t)cur->shfl_par * (slot32.size() / 2);
    cur->shfl_par ^= 1;
    half[cur->lin] = bits;
    warp_step("shuffle", 0);
    int src = l;
    if (mode == 0)
        src = seg | ((l ^ arg) & (width - 1));
    else if (mode == 1)
        src = seg | (arg & (width - 1));
    else if (mode == 2)
        src = l - arg >= seg ? l - arg : l;
    else
        src = l + arg < seg + width ? l + arg : l;
    // A partial last warp (a block of 40 threads: lanes 0-7 of warp 1) has no lanes past the
    // block's last thread; a shuffle that reads one gets an undefined value on the device.
    const int threads = (int)(g_block.x * g_block.y * g_block.z);
    if (warp_base() + src >= threads)
        die("shuffle reads a lane past the block's last thread (undefined on the device)");
    return half[warp_base() + src];
}

void cp_async(void *dst, const void *src, int unit, int src_bytes) {
    if (unit != 4 && unit != 8 && unit != 16)
        die("cp.async size must be 4, 8 or 16");
    if (src_bytes < 0 || src_bytes > unit)
        die("cp.async src-size out of range");
    if ((uintptr_t)dst % (uintptr_t)unit || (src_bytes > 0 && (uintptr_t)src % (uintptr_t)unit))
        die("cp.async address not aligned to its size");
    unsigned char *d = static_cast<unsigned char *>(dst);
    if (d < smem_buf || d + unit > smem_buf + smem_cap)
        die("cp.async destination outside dynamic shared memory");
    const Copy c{d, static_cast<const unsigned char *>(src), unit, src_bytes, cur->committed};
#ifdef PA_INTERP_TSAN
    // The copy may land any time from here to its wait: a write at both ends.
    __tsan_write_range(d, (unsigned long)unit);
    if (src_bytes > 0)
        __tsan_read_range(const_cast<void *>(src), (unsigned long)src_bytes);
#endif
    if (cp_at_issue)
        land(c);
    else
        cur->pending.push_back(c);
}

void cp_commit() { cur->committed++; }

// Lands, in issue order, every copy of a group older than the newest n; the rest stay
// in order (in place: this runs at every wait, and a vector allocated here cost a
// decode test 8% of its time).
void cp_wait(int n) {
    std::vector<Copy> &p = cur->pending;
    size_t kept = 0;
    for (size_t i = 0; i < p.size(); i++) {
        if (p[i].group < cur->committed - n)
            land(p[i]);
        else
            p[kept++] = p[i];
    }
    p.resize(kept);
}

void mbar_init(uint64_t *bar, int count) {
    if (count < 1 || count >= (1 << 20))
        die("mbarrier.init: count must be in 1..2^20-1");
    if ((uintptr_t)bar % 8)
        die("mbarrier object not 8-byte aligned");
    pa::ptx::twin::mbar_init(bar, count);
    mbar_waited.erase(bar);
}

// An object mbarrier.init never set: the 0xFF poison, or no expected or pending arrivals.
void check_mbar(const uint64_t *bar, const char *what) {
    if (*bar == ~0ull || pa::ptx::twin::mbar_expected(*bar) == 0 || pa::ptx::twin::mbar_pending(*bar) == 0)
        die(what);
}

// Records that the calling thread saw the barrier's phase before `phases` complete.
void mbar_seen(const uint64_t *bar, uint32_t phases) {
    cur->seen[bar] = phases;
    uint32_t &w = mbar_waited[bar];
    w = std::max(w, phases);
}

void mbar_arrive(uint64_t *bar, bool cp) {
    check_mbar(bar, "mbarrier arrive on an object never initialised");
    const uint32_t phase = pa::ptx::twin::mbar_phase(*bar);
    if (missing_wait_check && phase > 0 && mbar_waited[bar] < phase)
        die("mbarrier arrive begins a phase while no thread has waited for the one before it (a missing wait: "
            "compute-sanitizer synccheck reports it)");
    if (cp) { // every earlier cp.async of this thread lands first
        const uint32_t phase = pa::ptx::twin::mbar_phase(*bar) + 1;
        if (!cur->pending.empty() &&
            (unfenced.empty() || unfenced.back().bar != bar || unfenced.back().phase != phase)) {
            [[maybe_unused]] const Unobserved quiet;
            unfenced.push_back(Landed{bar, phase, {}});
        }
        for (const Copy &c : cur->pending) {
            land(c);
            [[maybe_unused]] const Unobserved quiet;
            Landed &g = unfenced.back();
            const uint32_t off = (uint32_t)(c.dst - smem_buf), end = off + (uint32_t)c.unit;
            if (!g.runs.empty() && g.runs.back().second == off) {
                g.runs.back().second = end;
            } else {
                g.merged = g.merged && (g.runs.empty() || g.runs.back().second < off);
                g.runs.emplace_back(off, end);
            }
        }
        cur->pending.clear();
    }
#ifdef PA_INTERP_TSAN
    __tsan_release(bar);
#endif
    pa::ptx::twin::mbar_arrive(bar);
}

void mbar_wait(uint64_t *bar, int parity) {
    check_mbar(bar, "mbarrier wait on an object never initialised");
    if (!pa::ptx::twin::mbar_done(*bar, parity)) {
        cur->mbar = bar;
        cur->mbar_parity = parity;
        yield(WAIT_MBAR);
        cur->mbar = nullptr;
    }
    mbar_seen(bar, pa::ptx::twin::mbar_phase(*bar));
#ifdef PA_INTERP_TSAN
    __tsan_acquire(bar);
#endif
}

bool mbar_test(uint64_t *bar, int parity) {
    check_mbar(bar, "mbarrier probe of an object never initialised");
    const bool done = pa::ptx::twin::mbar_done(*bar, parity);
    if (done)
        mbar_seen(bar, pa::ptx::twin::mbar_phase(*bar));
#ifdef PA_INTERP_TSAN
    if (done)
        __tsan_acquire(bar);
#endif
    return done;
}

void named_bar(int id, int n, bool wait) {
    if (id < 1 || id > 15)
        die("named barrier id must be in 1..15 (0 is __syncthreads)");
    if (n < 32 || n % 32 || n > (int)threads.size())
        die("named barrier thread count must be a multiple of 32 up to the CTA's");
    Named &b = named[id];
    if (b.count == 0)
        b.n = n;
    else if (b.n != n)
        die("named barrier used with two thread counts in one generation");
    const long gen = b.gen;
#ifdef PA_INTERP_TSAN
    char *sync = &named_sync_obj[id][gen & 1];
    __tsan_release(sync);
#endif
    if (++b.count == b.n) {
        b.count = 0;
        b.gen++;
    } else if (wait) {
        cur->named_id = id;
        cur->named_gen = gen;
        yield(WAIT_NAMED);
    }
#ifdef PA_INTERP_TSAN
    if (wait)
        __tsan_acquire(sync);
#endif
}

// setmaxnreg.dec gives the warp's registers above n to the CTA's pool;
// setmaxnreg.inc waits until the pool holds what the warp needs to reach n.
void setmaxnreg(int n, bool inc) {
    if (n < 24 || n > 256 || n % 8)
        die("setmaxnreg: the count must be a multiple of 8 in 24..256");
    int &have = warp_regs[(size_t)(cur->lin >> 5)]; // lanes after the first find it at n already
    if (inc ? n < have : n > have)
        die(inc ? "setmaxnreg.inc below the warp's current count" : "setmaxnreg.dec above the warp's current count");
    if (!inc && have > n) { // the first lane of the warp releases for all 32
        reg_pool += (long)(have - n) * 32;
        have = n;
    }
    while (inc && have < n) {
        const long need = (long)(n - have) * 32;
        if (reg_pool >= need) {
            reg_pool -= need;
            have = n;
        } else {
            cur->regs_want = n;
            yield(WAIT_REGS);
        }
    }
}

// The twins work on the whole warp: the first lane past the collective runs
// it for all 32 and leaves each lane's result in slot_out.
bool first_of_round() {
    long &done = warp_round[(size_t)(cur->lin >> 5)];
    if (done == ++cur->rounds)
        return false;
    done = cur->rounds;
    return true;
}

void ldmatrix(uint32_t (&r)[4], const void *p, bool trans) {
    if ((uintptr_t)p % 16)
        die("ldmatrix row address not 16-byte aligned");
    const unsigned char *b = static_cast<const unsigned char *>(p);
    if (b < smem_buf || b + 16 > smem_buf + smem_cap)
        die("ldmatrix row outside dynamic shared memory");
#ifdef PA_INTERP_TSAN
    __tsan_read_range(const_cast<void *>(p), 16); // this lane's row, read by the twin below
#endif
    slot_ptr[(size_t)cur->lin] = p;
    warp_step("ldmatrix", 0);
    if (first_of_round()) {
        const void *rows[32];
        for (int l = 0; l < 32; l++)
            rows[l] = slot_ptr[(size_t)(warp_base() + l)];
        uint32_t out[32][4];
        pa::ptx::twin::ldmatrix_x4(rows, trans, out);
        for (int l = 0; l < 32; l++)
            memcpy(slot_out[(size_t)(warp_base() + l)].data(), out[l], sizeof out[l]);
    }
    for (int j = 0; j < 4; j++)
        r[j] = slot_out[(size_t)cur->lin][(size_t)j];
}

uint32_t movmatrix(uint32_t a) {
    slot_b[(size_t)cur->lin] = {a, 0};
    warp_step("movmatrix", 0);
    if (first_of_round()) {
        uint32_t in[32], out[32];
        for (int l = 0; l < 32; l++)
            in[l] = slot_b[(size_t)(warp_base() + l)][0];
        pa::ptx::twin::movmatrix_trans(in, out);
        for (int l = 0; l < 32; l++)
            memcpy(slot_out[(size_t)(warp_base() + l)].data(), &out[l], sizeof out[l]);
    }
    uint32_t d;
    memcpy(&d, slot_out[(size_t)cur->lin].data(), sizeof d);
    return d;
}

void mma(int dt, float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    slot_a[(size_t)cur->lin] = {a[0], a[1], a[2], a[3]};
    slot_b[(size_t)cur->lin] = {b0, b1};
    slot_c[(size_t)cur->lin] = {d[0], d[1], d[2], d[3]};
    warp_step("mma", 0);
    if (first_of_round()) {
        uint32_t A[32][4], B[32][2];
        float Cc[32][4], D[32][4];
        for (int l = 0; l < 32; l++) {
            const size_t i = (size_t)(warp_base() + l);
            for (int k = 0; k < 4; k++) {
                A[l][k] = slot_a[i][(size_t)k];
                Cc[l][k] = slot_c[i][(size_t)k];
            }
            B[l][0] = slot_b[i][0];
            B[l][1] = slot_b[i][1];
        }
        if (dt == 1)
            pa::ptx::twin::mma16816<1>(A, B, Cc, D);
        else
            pa::ptx::twin::mma16816<2>(A, B, Cc, D);
        for (int l = 0; l < 32; l++)
            memcpy(slot_out[(size_t)(warp_base() + l)].data(), D[l], sizeof D[l]);
    }
    memcpy(d, slot_out[(size_t)cur->lin].data(), sizeof d);
}

// The shared window address of dynamic shared memory's first byte. On the
// device the CTA's reserved 1 KB and its static shared memory come first, so
// dynamic shared memory does not start on a 1024-byte boundary, which the
// 128-byte swizzle's pattern needs: kernels round their tiles up. Here it
// starts at 0x850 (as it would after 1104 bytes of static shared memory), so
// a kernel that does not round up computes its swizzle against the wrong
// address bits, as on the device.
constexpr uint32_t kWindowBase = 0x850;
uint32_t smem_window_addr(const void *p) {
    const unsigned char *b = static_cast<const unsigned char *>(p);
    if (b < smem_buf || b >= smem_buf + smem_cap)
        die("wgmma operand address outside dynamic shared memory");
    return kWindowBase + (uint32_t)(b - smem_buf);
}

// fence.proxy.async: the generic view of dynamic shared memory becomes the
// async proxy's (async_img), except copies landed through an mbarrier whose
// phase this thread has not waited for.
void fence_proxy_async() {
    [[maybe_unused]] const Unobserved quiet;
    std::vector<unsigned char> &img = async_view();
    // The groups this thread may not publish yet keep the async proxy's bytes:
    // every other byte is copied from the generic view.
    static std::vector<Landed> keep;
    static Runs held;
    keep.clear();
    held.clear();
    for (Landed &c : unfenced) {
        const auto it = cur->seen.find(c.bar);
        if (it == cur->seen.end() || it->second < c.phase) {
            if (!c.merged) {
                merge_runs(c.runs);
                c.merged = true;
            }
            held.insert(held.end(), c.runs.begin(), c.runs.end());
            keep.push_back(std::move(c));
        }
    }
    if (keep.size() > 1)
        merge_runs(held);
    uint32_t at = 0;
    for (const auto &r : held) {
        if (r.first > at)
            memcpy(img.data() + at, smem_buf + at, r.first - at);
        at = std::max(at, r.second);
    }
    if (at < smem_cap)
        memcpy(img.data() + at, smem_buf + at, smem_cap - at);
    unfenced.swap(keep);
}

void wgmma_fence() { cur->wg_fenced = true; }

// griddepcontrol.wait: the grid before this one on the stream has completed
// and its writes are visible (this thread may touch what it wrote).
void griddep_wait() {
    cur->gd_waited = true;
    if (pdl_guard)
        pdl_switch_in(*cur);
}
void wgmma_commit() { cur->wg_committed++; }

namespace {
// Every shared-memory byte a wgmma reads (B, and A when it comes through a
// descriptor), in a fixed order, as runs (offset into dynamic shared memory,
// length) of consecutive bytes; an operand reaching outside it aborts.
template <class F> void operand_bytes(const WgOp &op, int warp, F f) {
    const int kk = op.dt == 3 ? 32 : 16, eb = op.dt == 3 ? 1 : 2;
    auto runs = joiner(f);
    auto bytes = [&](uint32_t w, const char *what) {
        if (w < kWindowBase || w - kWindowBase + (uint32_t)eb > smem_cap)
            die(what);
        runs.add(w - kWindowBase, (uint32_t)eb);
    };
    for (int mn = 0; mn < op.n; mn++)
        for (int k = 0; k < kk; k++)
            bytes(pa::ptx::twin::wgmma_addr(op.desc_b, op.trans_b, mn, k, eb),
                  "wgmma: B operand outside dynamic shared memory");
    if (!op.has_a)
        for (int r = 0; r < 16; r++)
            for (int k = 0; k < kk; k++)
                bytes(pa::ptx::twin::wgmma_addr(op.desc_a, op.trans_a, 16 * warp + r, k, eb),
                      "wgmma: A operand outside dynamic shared memory");
    runs.flush();
}
// The first byte at which a and b differ (they differ within n bytes).
uint32_t first_difference(const unsigned char *a, const unsigned char *b, uint32_t n) {
    uint32_t i = 0;
    while (i + 1 < n && a[i] == b[i])
        i++;
    return i;
}
// An in-flight wgmma's accumulators must still hold kPoison.
void check_poisoned(const float *p, int n) {
    for (int i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, p + i, 4);
        if (b != kPoison)
            die("accumulators of an in-flight wgmma were written before the wgmma.wait_group that completes it");
    }
}
} // namespace

// One warp's share of the warpgroup's wgmma: the warp's lanes give their A
// registers (RS) and accumulators; the twin reads B (and A for SS) from
// dynamic shared memory through the descriptors, every address checked. It
// computes at issue and delivers at the wgmma.wait_group (WgOp above).
void wgmma(int dt, int n, const uint32_t *a, uint64_t desc_a, bool trans_a, uint64_t desc_b, bool trans_b, bool scale_d,
           float *acc) {
    if (n % 8 || n < 8 || n > 256)
        die("wgmma: n must be a multiple of 8 up to 256");
    if (g_block.x % 128 || g_block.y != 1 || g_block.z != 1)
        die("wgmma: the CTA must be whole warpgroups (a multiple of 128 threads in x)");
    if (!cur->wg_fenced)
        die("wgmma.mma_async with no wgmma.fence since the warp's last wgmma.wait_group (or its start): the "
            "registers the thread touched in between need one");
    if (a)
        slot_a[(size_t)cur->lin] = {a[0], a[1], a[2], a[3]};
    slot_ap[(size_t)cur->lin] = a;
    // dt 1 f16, 2 bf16 (k = 16, 2-byte elements); 3 e4m3 (k = 32, 1 byte, K-major only).
    if (dt < 1 || dt > 3 || (dt == 3 && (trans_a || trans_b)))
        die("wgmma: f16, bf16 or e4m3 (K-major) operands");
    const int h = n / 2;
    // Window address a is byte a - kWindowBase of dynamic shared memory.
    unsigned char *const window =
        reinterpret_cast<unsigned char *>(reinterpret_cast<uintptr_t>(smem_buf) - kWindowBase);
#ifdef PA_INTERP_TSAN
    const int kk = dt == 3 ? 32 : 16, eb = dt == 3 ? 1 : 2;
    // The twin reads the operands for the whole warp: lane l reports the
    // columns (and, for SS, the A rows) congruent to l mod 32 as its reads.
    // Consecutive addresses are reported as one range (a K-major row's 8 or
    // 16 elements within a core matrix): the same bytes, fewer calls.
    const int wl = cur->lin % 32, ww = (cur->lin / 32) % 4;
    auto reads = joiner([&](uint32_t w, uint32_t len) { __tsan_read_range(window + w, len); });
    for (int mn = wl; mn < n; mn += 32)
        for (int k = 0; k < kk; k++)
            reads.add(pa::ptx::twin::wgmma_addr(desc_b, trans_b, mn, k, eb), (uint32_t)eb);
    if (!a && wl < 16)
        for (int k = 0; k < kk; k++)
            reads.add(pa::ptx::twin::wgmma_addr(desc_a, trans_a, 16 * ww + wl, k, eb), (uint32_t)eb);
    reads.flush();
#endif
    {
        // (the lane slots serve every resident CTA: the interpreter's own copy)
        [[maybe_unused]] const Unobserved quiet;
        slot_acc[(size_t)cur->lin].assign(acc, acc + h);
    }
    slot_accp[(size_t)cur->lin] = acc;
    warp_step("wgmma", 0);
    if (first_of_round()) {
        [[maybe_unused]] const Unobserved quiet;
        const int warp = (cur->lin / 32) % 4;
        std::vector<WgOp> &ops = warp_ops[(size_t)(cur->lin >> 5)];
        WgOp op{cur->wg_committed, dt, n, a != nullptr, trans_a, trans_b, desc_a, desc_b, {}, {}, {}};
        if (!spare_bytes.empty()) {
            op.bytes.swap(spare_bytes.back());
            spare_bytes.pop_back();
            op.bytes.clear();
        }
        for (int l = 0; l < 32; l++) {
            op.acc[(size_t)l] = slot_accp[(size_t)(warp_base() + l)];
            op.a[(size_t)l] = slot_ap[(size_t)(warp_base() + l)];
            memcpy(op.areg[l], slot_a[(size_t)(warp_base() + l)].data(), sizeof op.areg[l]);
        }
        const std::vector<unsigned char> &img = async_view();
        operand_bytes(op, warp, [&](uint32_t at, uint32_t len) {
            if (memcmp(smem_buf + at, img.data() + at, len) != 0) {
                const uint32_t o = at + first_difference(smem_buf + at, img.data() + at, len);
                fprintf(
                    stderr,
                    "pa_interp: wgmma operand byte at shared offset %u: generic view 0x%02x, async proxy's 0x%02x\n", o,
                    smem_buf[o], img[o]);
                die("wgmma reads shared memory written through the generic proxy (stores, cp.async) with no "
                    "fence.proxy.async after it by a thread that saw the write");
            }
            op.bytes.insert(op.bytes.end(), smem_buf + at, smem_buf + at + len);
        });
        std::vector<float> all;
        if (!spare_res.empty()) {
            all.swap(spare_res.back());
            spare_res.pop_back();
        }
        all.resize((size_t)32 * (size_t)h); // every element written below
        for (int l = 0; l < 32; l++) {
            const size_t i = (size_t)(warp_base() + l);
            // Accumulating into registers a wgmma in flight owns (the same
            // shape, in order, as the ISA allows): its result is the input.
            const WgOp *prev = nullptr;
            for (const WgOp &p : ops)
                if (p.acc[(size_t)l] == op.acc[(size_t)l])
                    prev = &p;
            if (prev) {
                if (prev->n != n)
                    die("wgmma accumulates into registers an in-flight wgmma of another shape owns");
                check_poisoned(slot_acc[i].data(), h);
                memcpy(all.data() + (size_t)l * (size_t)h, prev->res.data() + (size_t)l * (size_t)h,
                       sizeof(float) * (size_t)h);
            } else {
                memcpy(all.data() + (size_t)l * (size_t)h, slot_acc[i].data(), sizeof(float) * (size_t)h);
            }
        }
        if (dt == 3)
            pa::ptx::twin::wgmma_warp_e4m3(warp, n, a ? op.areg : nullptr, desc_a, desc_b, scale_d, window, all.data());
        else if (dt == 1)
            pa::ptx::twin::wgmma_warp<1>(warp, n, a ? op.areg : nullptr, desc_a, trans_a, desc_b, trans_b, scale_d,
                                         window, all.data());
        else
            pa::ptx::twin::wgmma_warp<2>(warp, n, a ? op.areg : nullptr, desc_a, trans_a, desc_b, trans_b, scale_d,
                                         window, all.data());
        op.res.swap(all);
        float poison;
        memcpy(&poison, &kPoison, 4);
        for (int l = 0; l < 32; l++)
            std::fill(op.acc[(size_t)l], op.acc[(size_t)l] + h, poison);
        ops.push_back(std::move(op));
    }
}

// wgmma.wait_group n: the warp's groups but the newest n complete, oldest
// first; each wgmma checks that its shared bytes and its poisoned
// accumulators are untouched and delivers its result (unless a later wgmma in
// flight accumulates into the same registers).
void wgmma_wait(int n) {
    warp_step("wgmma.wait", 0);
    if (first_of_round()) {
        [[maybe_unused]] const Unobserved quiet;
        const int warp = (cur->lin / 32) % 4;
        std::vector<WgOp> &ops = warp_ops[(size_t)(cur->lin >> 5)];
        size_t k = 0;
        while (k < ops.size() && ops[k].group < cur->wg_committed - n)
            k++;
        for (size_t i = 0; i < k; i++) {
            const WgOp &op = ops[i];
            size_t kept = 0;
            operand_bytes(op, warp, [&](uint32_t at, uint32_t len) {
                const unsigned char *was = op.bytes.data() + kept;
                if (memcmp(smem_buf + at, was, len) != 0) {
                    const uint32_t d = first_difference(smem_buf + at, was, len);
                    fprintf(stderr, "pa_interp: shared offset %u: 0x%02x at issue, 0x%02x at the wait\n", at + d,
                            was[d], smem_buf[at + d]);
                    die("shared memory an in-flight wgmma reads was overwritten before the wgmma.wait_group that "
                        "completes it");
                }
                kept += len;
            });
            const int h = op.n / 2;
            for (int l = 0; l < 32; l++) {
                if (op.has_a && memcmp(op.a[(size_t)l], op.areg[l], sizeof op.areg[l]) != 0)
                    die("A registers of an in-flight wgmma were written before the wgmma.wait_group that completes "
                        "it (they must also outlive it: no temporaries)");
                check_poisoned(op.acc[(size_t)l], h);
                bool later = false;
                for (size_t j = i + 1; j < ops.size(); j++)
                    later = later || ops[j].acc[(size_t)l] == op.acc[(size_t)l];
                if (!later)
                    memcpy(op.acc[(size_t)l], op.res.data() + (size_t)l * (size_t)h, sizeof(float) * (size_t)h);
            }
        }
        for (size_t i = 0; i < k; i++) {
            spare_res.push_back(std::move(ops[i].res));
            spare_bytes.push_back(std::move(ops[i].bytes));
        }
        ops.erase(ops.begin(), ops.begin() + (long)k);
    }
    cur->wg_fenced = false; // the registers are the thread's again
}

// Device buffers: pages mapped without reserving swap (MAP_NORESERVE), so a
// test's cache of several GiB whose first blocks it never touches (offsets
// past 2^32 bytes, pa_test_dev_upload_far) costs only the pages it writes.
void *guarded_alloc(size_t bytes) {
    const size_t page = page_size();
    const size_t body = (bytes + 15) / 16 * 16;
    const size_t span = (body + page - 1) / page * page + 2 * page;
    unsigned char *base = (unsigned char *)mmap(nullptr, span, PROT_READ | PROT_WRITE,
                                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return nullptr;
    mprotect(base, page, PROT_NONE);
    mprotect(base + span - page, page, PROT_NONE);
    unsigned char *p = base + span - page - body;
    mappings[p] = Mapping{base, span, bytes};
    return p;
}

bool guarded_free(void *p) {
    auto it = mappings.find(p);
    if (it == mappings.end())
        return false;
    munmap(it->second.base, it->second.span);
    mappings.erase(it);
#ifndef PA_INTERP_TSAN
    // A later buffer at the same address is not what the stream's last grid wrote.
    for (auto &kv : last_grid_wrote)
        kv.second.erase(std::remove(kv.second.begin(), kv.second.end(), p), kv.second.end());
#endif
    return true;
}

void run_now(dim3 grid, dim3 block, size_t smem, const std::function<void()> &body) {
    const char *cp = getenv("PA_INTERP_CP");
    cp_at_issue = cp && strcmp(cp, "issue") == 0;
    const char *mw = getenv("PA_INTERP_MISSING_WAIT");
    missing_wait_check = !(mw && strcmp(mw, "off") == 0);
    const char *sm = getenv("PA_INTERP_SCHED");
    sched_mode = sm && strcmp(sm, "random") == 0 ? RANDOM : sm && strcmp(sm, "warp") == 0 ? WARP : SWEEP;
    static bool seeded = false;
    if (!seeded) {
        const char *seed = getenv("PA_INTERP_SEED");
        sched_rng.seed(seed ? (unsigned)strtoul(seed, nullptr, 10) : 1u);
        seeded = true;
    }
    const int nthreads = (int)(block.x * block.y * block.z);
    const size_t slots = (size_t)(nthreads + 31) / 32 * 32;
    slot32.assign(2 * slots, 0);
    slot_ptr.assign(slots, nullptr);
    slot_a.assign(slots, {});
    slot_b.assign(slots, {});
    slot_c.assign(slots, {});
    slot_out.assign(slots, {});
    slot_acc.assign(slots, {});
    slot_accp.assign(slots, nullptr);
    slot_ap.assign(slots, nullptr);
    smem_cap = smem;
    g_body = &body;
    g_grid = grid;
    g_block = block;
    std::vector<uint3> order;
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++)
                order.push_back(make_uint3(x, y, z));
    const char *ord = getenv("PA_INTERP_ORDER");
    if (ord && strcmp(ord, "reverse") == 0)
        std::reverse(order.begin(), order.end());
    else if (ord && strcmp(ord, "shuffle") == 0)
        std::shuffle(order.begin(), order.end(), std::mt19937(12345));
    const char *nres = getenv("PA_INTERP_CTAS");
    const int resident =
        (int)std::min<size_t>(order.size(), nres ? std::max(1ul, std::min(16ul, strtoul(nres, nullptr, 10))) : 1);

    // Resident CTA r runs its threads on stacks (and fibers) r * nthreads + i.
    // Thread i of the one resident CTA keeps stack i from launch to launch
    // whatever the block size: tests alternate kernels of different sizes,
    // and freeing 256 KB stacks at each change cost ThreadSanitizer's
    // allocator an munmap each and a re-fault of their shadow (half a
    // ThreadSanitizer test's time in the kernel).
    while (stack_pool.size() < (size_t)(resident * nthreads)) {
        stack_pool.push_back((char *)malloc(kStack));
#ifdef PA_INTERP_TSAN
        fiber_pool.push_back(__tsan_create_fiber(0));
#endif
    }
#ifdef PA_INTERP_TSAN
    sched_fiber = __tsan_get_current_fiber();
#endif
    std::vector<Cta> ctas((size_t)resident);
    while (static_pool.size() < (size_t)resident)
        static_pool.push_back((unsigned char *)guarded_alloc(kStaticSmem));
    g_resident = resident;
    for (int r = 0; r < resident; r++) {
        Cta &c = ctas[(size_t)r];
        c.smem = (unsigned char *)guarded_alloc(smem > 0 ? smem : 16);
        c.static_mem = static_pool[(size_t)r];
        c.threads.assign((size_t)nthreads, Thread());
        for (int i = 0; i < nthreads; i++) {
            c.threads[(size_t)i].stack = stack_pool[(size_t)(r * nthreads + i)];
#ifdef PA_INTERP_TSAN
            c.threads[(size_t)i].fiber = fiber_pool[(size_t)(r * nthreads + i)];
#endif
        }
    }
    // Resident CTA r into the globals, and back.
    auto unpark = [&](int r) {
        Cta &c = ctas[(size_t)r];
        swap_cta(c);
        smem_buf = c.smem;
        static_buf = c.static_mem;
    };
    auto park = [&](int r) { swap_cta(ctas[(size_t)r]); };
    // A new CTA in the globals: poisoned shared memory, every thread at its
    // start. (Unobserved: what the interpreter frees here, such as a thread's
    // record of mbarrier phases, the CTA before allocated, and nothing orders
    // the scheduler after that CTA.)
    auto begin = [&](const uint3 &b) {
        [[maybe_unused]] const Unobserved quiet;
        g_block_idx = b;
        poison_shared(smem_buf, smem_cap);
        async_live = false;
        unfenced.clear();
        mbar_waited.clear();
        warp_ops.assign(slots / 32, {});
        const int regs0 = std::min(256, 65536 / (int)slots) & ~7;
        warp_regs.assign(slots / 32, regs0);
        reg_pool = 0;
        for (Named &x : named) // a CTA starts with every named barrier at rest
            x = Named{};
        cta_atomics.clear();
        poison_shared(static_buf, g_static->used);
        warp_round.assign(slots / 32, 0);
#ifdef PA_INTERP_TSAN
        warp_sync.assign(slots / 32, {});
        warp_gen.assign(slots / 32, 0);
#endif
        for (int i = 0; i < nthreads; i++) {
            Thread &t = threads[(size_t)i];
            t.state = READY;
            t.lin = i;
            t.idx =
                make_uint3((unsigned)i % block.x, (unsigned)i / block.x % block.y, (unsigned)i / (block.x * block.y));
            t.committed = 0;
            t.rounds = 0;
            t.wg_fenced = false;
            t.wg_committed = 0;
            t.gd_waited = false;
            t.fenced = false;
            t.seen.clear();
            t.shfl_par = 0;
            t.started = false;
            t.pending.clear();
            start_stack(t);
        }
    };
    size_t next = 0;
    int live = 0;
    std::vector<char> busy((size_t)resident, 0);
    for (int r = 0; r < resident; r++) {
        unpark(r);
        begin(order[next++]);
        park(r);
        busy[(size_t)r] = 1;
        live++;
    }
    // Round robin over the resident CTAs (a random one under
    // PA_INTERP_SCHED=random), each run to its next __syncthreads or its end;
    // a CTA that ends makes way for the next in the order.
    int r = 0;
    bool first = true;
    while (live > 0) {
        unpark(r);
        const bool done = run_cta(nthreads, live > 1);
        if (first) {
            pdl_first_cta_done(); // the first CTA's first stretch
            first = false;
        }
        if (done) {
            if (pa_prof_segment_end)
                for (int w = 0; w * 32 < nthreads; w++)
                    pa_prof_segment_end(w);
            if (next < order.size()) {
                begin(order[next++]);
            } else {
                busy[(size_t)r] = 0;
                live--;
            }
        }
        park(r);
        if (live == 0)
            break;
        if (sched_mode == RANDOM && live > 1) {
            int k = std::uniform_int_distribution<int>(0, live - 1)(sched_rng);
            for (r = 0; !busy[(size_t)r] || k-- > 0; r++)
                ;
        } else {
            do
                r = (r + 1) % resident;
            while (!busy[(size_t)r]);
        }
    }
#ifdef PA_INTERP_TSAN
    // The CTAs of a grid are ordered with each other by nothing the
    // interpreter adds (each resident CTA's threads are their own fibers);
    // what follows the grid is ordered after all of them.
    __tsan_acquire(&cta_end_sync);
#endif
    for (Cta &c : ctas)
        guarded_free(c.smem);
    smem_buf = nullptr;
    static_buf = nullptr;
    g_resident = 0;
}

// A kernel's static shared memory: laid out at its variables' first use, so
// known once it has run (0 before).
size_t known_static_bytes(const void *kernel) {
    const auto it = static_layouts.find(kernel);
    return it != static_layouts.end() ? it->second.used : 0;
}
// The device's opt-in shared memory a CTA: an H100's 227 KiB, or what
// PA_INTERP_SMEM_OPTIN says (read at each call, so a test can stand in for a
// device of compute capability 8.6 or 8.9, 101376 bytes, for a while).
static int smem_optin() {
    const char *e = getenv("PA_INTERP_SMEM_OPTIN");
    const long v = e ? strtol(e, nullptr, 10) : 0;
    return v > 0 && v <= 227 * 1024 ? (int)v : 227 * 1024;
}

// PA_INTERP_LAUNCH_LOG=FILE: a process appends one line to FILE at the first
// run of each kernel with each CTA size, "OBJECT ADDRESS THREADS" (the file
// holding the kernel, the kernel's address in that file's symbol table, its
// load bias taken off, and the threads of a CTA), for
// scripts/kernel_coverage.py, which names the kernels with nm and checks that
// every kernel the library ships ran in interpret mode, and that each CTA size
// a test launched fits the kernel's launch bounds and its registers on a GPU
// (which the interpreter, running C++ builds of the kernels, cannot know). One
// write(2) a line to an O_APPEND file: lines from the tests meson runs at once
// do not interleave.
struct KernelObject {
    uintptr_t addr, vaddr;
    char path[PATH_MAX];
};
static int find_kernel_object(dl_phdr_info *info, size_t, void *data) {
    auto *k = static_cast<KernelObject *>(data);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const auto &ph = info->dlpi_phdr[i];
        const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
        if (ph.p_type != PT_LOAD || k->addr < lo || k->addr - lo >= ph.p_memsz)
            continue;
        k->vaddr = k->addr - info->dlpi_addr;
        // The program itself has no name here (and dladdr would give argv[0]).
        if (!info->dlpi_name[0] || !realpath(info->dlpi_name, k->path)) {
            const ssize_t n = readlink("/proc/self/exe", k->path, sizeof k->path - 1);
            k->path[n > 0 ? n : 0] = 0;
        }
        return 1;
    }
    return 0;
}
static void note_launch(const void *kernel, unsigned threads) {
    static const char *const path = getenv("PA_INTERP_LAUNCH_LOG");
    if (!path || !*path)
        return;
    static std::mutex m;
    static std::set<std::pair<const void *, unsigned>> seen;
    const std::lock_guard<std::mutex> hold(m);
    if (!seen.insert({kernel, threads}).second)
        return;
    KernelObject k{};
    k.addr = (uintptr_t)kernel;
    char line[PATH_MAX + 32];
    const int n = dl_iterate_phdr(find_kernel_object, &k)
                      ? snprintf(line, sizeof line, "%s %#lx %u\n", k.path, (unsigned long)k.vaddr, threads)
                      : 0;
    const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || n <= 0 || n >= (int)sizeof line || write(fd, line, (size_t)n) != n)
        fprintf(stderr, "interpreter: PA_INTERP_LAUNCH_LOG=%s: could not note the run of %s\n", path, k.path);
    if (fd >= 0)
        close(fd);
}

// The simulated clock that cudaEventRecord stamps and cudaEventElapsedTime
// reads, in picoseconds: not the CPU's time, but work as a fixed model costs
// it, so pagedattn-interp's timings, and every rate, roof and ratio made of
// them, are the same at every run (tests/interp/README.md, "The simulated
// clock"). Work advances it as it runs: a kernel launch 5 us whatever its size;
// a copy its bytes at its direction's rate, device to device 1 byte a ps (1000
// GB/s), host to device 20 ps a byte (50 GB/s), device to host 40 (25 GB/s),
// host to host 50 (20 GB/s); a memset 1 ps a byte. cuBLAS calls cost nothing.
std::atomic<uint64_t> sim_ps{0};
constexpr uint64_t kLaunchPs = 5000000;
uint64_t copy_ps_per_byte(bool dst_dev, bool src_dev) { return src_dev ? (dst_dev ? 1 : 40) : (dst_dev ? 20 : 50); }

void run_launch(dim3 grid, dim3 block, size_t smem, const void *kernel, const char *name,
                const std::function<void()> &body, cudaStream_t stream, bool pdl) {
    sim_ps += kLaunchPs;
    note_launch(kernel, block.x * block.y * block.z);
    if (pa_prof_launch)
        pa_prof_launch(kernel, name, 1);
    grid_begin(stream, pdl, name);
    g_static = &static_layouts[kernel];
    run_now(grid, block, smem, body);
    // A kernel's static bytes are known once it has run (its layout, laid out
    // at first use): a launch whose dynamic and static bytes together pass the
    // device's opt-in limit, or 48 KB without cudaFuncSetAttribute, fails, as
    // the device would have refused it (after the fact the first time;
    // run_grid refuses it before, later).
    const bool attr = max_dyn_smem.find(kernel) != max_dyn_smem.end();
    if (smem + g_static->used > (size_t)smem_optin() || (!attr && smem + g_static->used > 48 * 1024))
        fail(cudaErrorInvalidValue);
    grid_end(stream);
    if (pa_prof_launch)
        pa_prof_launch(kernel, name, 0);
}

void run_grid(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, const void *kernel, const char *name,
              std::function<void()> body, bool pdl) {
    const unsigned nthreads = block.x * block.y * block.z;
    // The device's limits: grid x to 2^31 - 1, y and z to 65535; block x and y to 1024, z to 64.
    if (nthreads == 0 || nthreads > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64 || grid.x == 0 ||
        grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535) {
        fail(cudaErrorInvalidConfiguration);
        return;
    }
    // As on the device: without cudaFuncSetAttribute a CTA's static and dynamic
    // bytes together stay within 48 KB (the attribute's default is 48 KB less
    // the static bytes); with it, the dynamic bytes within the attribute.
    const auto it = max_dyn_smem.find(kernel);
    const size_t static_bytes = known_static_bytes(kernel);
    const bool over = it != max_dyn_smem.end() ? smem > (size_t)it->second : smem + static_bytes > 48 * 1024;
    if (over || smem + static_bytes > (size_t)smem_optin()) {
        fail(cudaErrorInvalidValue); // over 48 KB needs cudaFuncSetAttribute, as on the device
        return;
    }
    const int role = capture_role(stream);
    if (role > 0)
        captured.push_back([=]() { run_launch(grid, block, smem, kernel, name, body, stream, pdl); });
    else if (role < 0)
        fail(cudaErrorStreamCaptureImplicit);
    else
        run_launch(grid, block, smem, kernel, name, body, stream, pdl);
}

} // namespace pa_interp

// ---- the fake CUDA runtime ------------------------------------------------------
using namespace pa_interp;

struct CUgraph_st {
    std::vector<std::function<void()>> launches;
};
struct CUgraphExec_st {
    std::vector<std::function<void()>> launches;
};
struct CUevent_st {
    uint64_t ps; // the simulated clock when last recorded (sim_ps)
};

extern "C" {

#define PA_NOT_WHILE_CAPTURING()                                                                                       \
    do {                                                                                                               \
        if (capture_on) {                                                                                              \
            capture_broken = true;                                                                                     \
            return fail(cudaErrorStreamCaptureUnsupported);                                                            \
        }                                                                                                              \
    } while (0)

cudaError_t cudaGetDeviceCount(int *n) {
    *n = 1;
    return cudaSuccess;
}
cudaError_t cudaGetDevice(int *d) {
    *d = 0;
    return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice); }
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev) {
    if (dev != 0)
        return fail(cudaErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "pagedattn interpreter (CPU)");
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = 132;
    p->totalGlobalMem = (size_t)80 << 30;
    p->sharedMemPerBlock = 48 * 1024;
    p->sharedMemPerBlockOptin = smem_optin();
    p->sharedMemPerMultiprocessor = 228 * 1024;
    p->l2CacheSize = 50 << 20;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsPerMultiProcessor = 2048;
    p->regsPerMultiprocessor = 65536;
    p->regsPerBlock = 65536;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr attr, int dev) {
    if (dev != 0)
        return fail(cudaErrorInvalidDevice);
    switch (attr) {
    case cudaDevAttrMultiProcessorCount: *v = 132; return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = smem_optin(); return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor: *v = 9; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *v = 0; return cudaSuccess;
    default: return fail(cudaErrorInvalidValue);
    }
}
cudaError_t cudaDriverGetVersion(int *v) {
    *v = 13000;
    return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int *v) {
    *v = 13000;
    return cudaSuccess;
}
cudaError_t cudaGetLastError(void) {
    const cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}
cudaError_t cudaPeekAtLastError(void) { return last_error; }
// The errors the interpreter raises, by the runtime's names, so that a message
// reads as it would on a GPU (a launcher's refusal: cudaErrorInvalidConfiguration).
#define PA_INTERP_ERRORS(X)                                                                                            \
    X(cudaSuccess, "no error")                                                                                         \
    X(cudaErrorInvalidValue, "invalid argument")                                                                       \
    X(cudaErrorInvalidConfiguration, "invalid configuration argument")                                                 \
    X(cudaErrorInvalidDevice, "invalid device ordinal")                                                                \
    X(cudaErrorMemoryAllocation, "out of memory")                                                                      \
    X(cudaErrorNotSupported, "operation not supported")                                                                \
    X(cudaErrorIllegalState, "the resource is not in a valid state")                                                   \
    X(cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing")                           \
    X(cudaErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture")                    \
    X(cudaErrorStreamCaptureUnmatched, "capture was not initiated in this stream")                                     \
    X(cudaErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking stream")
const char *cudaGetErrorString(cudaError_t e) {
    if (e == cudaSuccess)
        return "no error";
#define PA_X(code, text)                                                                                               \
    if (e == code)                                                                                                     \
        return "interpreter: " text;
    PA_INTERP_ERRORS(PA_X)
#undef PA_X
    return "interpreter: unrecognized error code";
}
const char *cudaGetErrorName(cudaError_t e) {
#define PA_X(code, text)                                                                                               \
    if (e == code)                                                                                                     \
        return #code;
    PA_INTERP_ERRORS(PA_X)
#undef PA_X
    return "cudaErrorUnknown";
}

cudaError_t cudaMalloc(void **p, size_t n) {
    PA_NOT_WHILE_CAPTURING();
    *p = guarded_alloc(n);
    if (!*p)
        return fail(cudaErrorMemoryAllocation);
    Mapping &m = mappings.at(*p);
    m.device = true;
    // The margins around the buffer (see check_margins) hold 0xFF bytes: a read there that
    // reaches a result is a NaN (or -1) in it, not a quiet zero.
    unsigned char *b = static_cast<unsigned char *>(*p);
    memset(m.lo(), 0xFF, (size_t)(b - m.lo()));
    memset(b + n, 0xFF, (size_t)(m.hi() - (b + n)));
    // The buffer itself starts as 0xFF bytes too (compute-sanitizer initcheck's
    // concern: the device's cudaMalloc, and a caching allocator's reuse above
    // all, gives memory holding anything), so a kernel that reads bytes nobody
    // wrote gets NaN (or -1) in its results, not the quiet zeros of a fresh
    // mapping. Buffers past kFillMax stay zero: the tests of cache offsets
    // past 32 bits allocate GiBs and touch a little (MAP_NORESERVE).
    constexpr size_t kFillMax = (size_t)256 << 20;
    const char *fill = getenv("PA_INTERP_DEVICE_FILL");
    if (n <= kFillMax && !(fill && strcmp(fill, "zero") == 0))
        memset(b, 0xFF, n);
    close_new(m);
    return cudaSuccess;
}
// Device memory is the host's: what it has free now, of what it has.
cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b) {
    const long page = sysconf(_SC_PAGESIZE), avail = sysconf(_SC_AVPHYS_PAGES), all = sysconf(_SC_PHYS_PAGES);
    if (!free_b || !total_b || page <= 0 || avail < 0 || all <= 0)
        return fail(cudaErrorInvalidValue);
    *free_b = (size_t)avail * (size_t)page;
    *total_b = (size_t)all * (size_t)page;
    return cudaSuccess;
}
cudaError_t cudaFree(void *p) {
    if (p && !guarded_free(p))
        return fail(cudaErrorInvalidValue);
    return cudaSuccess;
}
cudaError_t cudaMallocHost(void **p, size_t n) {
    *p = malloc(n ? n : 1);
    return *p ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}
cudaError_t cudaFreeHost(void *p) {
    free(p);
    return cudaSuccess;
}
// A copy's kind against where its two pointers live: cudaMalloc's allocations
// are the device's, all else (pageable or cudaMallocHost) the host's. A kind
// that says otherwise is undefined on the device (cudaMemcpy's documentation:
// it may copy, fail, or fault), so here it stops the program, as the other
// detectors do. cudaMemcpyDefault takes either, as under unified addressing.
static bool on_device(const void *p) { // inside a cudaMalloc buffer (its key) or past it in its mapping
    auto it = mappings.upper_bound(p);
    if (it == mappings.begin())
        return false;
    --it;
    return it->second.device && static_cast<const unsigned char *>(p) < it->second.hi();
}
static void check_copy_kind(const char *fn, void *d, const void *s, size_t n, enum cudaMemcpyKind kind) {
    if (n == 0 || kind == cudaMemcpyDefault)
        return;
    static const char *const kinds[4] = {"cudaMemcpyHostToHost", "cudaMemcpyHostToDevice", "cudaMemcpyDeviceToHost",
                                         "cudaMemcpyDeviceToDevice"};
    const int k = (int)kind;
    char report[320];
    if (k < 0 || k > 3) {
        snprintf(report, sizeof report, "pa_interp: %s: copy kind %d is none of cudaMemcpyKind's", fn, k);
        abort_with(report);
    }
    const bool src_dev = k == 2 || k == 3, dst_dev = k == 1 || k == 3;
    if (on_device(s) != src_dev || on_device(d) != dst_dev) {
        snprintf(report, sizeof report,
                 "pa_interp: %s: %s from %s memory to %s memory (%zu bytes); the kind names the copy's direction "
                 "and a wrong one is undefined on the device",
                 fn, kinds[k], on_device(s) ? "device" : "host", on_device(d) ? "device" : "host", n);
        abort_with(report);
    }
}
// A copy's cost on the simulated clock (sim_ps), by where its two pointers live.
static void sim_copy(void *d, const void *s, size_t n) { sim_ps += n * copy_ps_per_byte(on_device(d), on_device(s)); }
cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind kind) {
    PA_NOT_WHILE_CAPTURING();
    check_copy_kind("cudaMemcpy", d, s, n, kind);
    HostWindow w{d, s};
    sim_copy(d, s, n);
    if (n)
        memmove(d, s, n);
    return cudaSuccess;
}
// Stream-ordered copies and sets are captured, as on the device: issued on the
// capturing stream they become graph nodes that run at each replay, not now.
// On a stream that is not capturing they run now (capture_role); on the legacy
// stream while a blocking stream captures they are refused.
static cudaError_t on_stream(cudaStream_t stream, const std::function<void()> &op) {
    const int role = capture_role(stream);
    if (role < 0)
        return fail(cudaErrorStreamCaptureImplicit);
    if (role > 0)
        captured.push_back(op);
    else
        op();
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, enum cudaMemcpyKind kind, cudaStream_t stream) {
    check_copy_kind("cudaMemcpyAsync", d, s, n, kind);
    return on_stream(stream, [=]() {
        HostWindow w{d, s};
        sim_copy(d, s, n);
        if (n)
            memmove(d, s, n);
    });
}
// The batch copy cannot be captured: CUDA refuses it with
// cudaErrorStreamCaptureUnsupported. Here the capture is invalidated too; on
// CUDA 13 it was reported to stay valid with the copy left out
// (rapidsai/rmm#2518), so a caller that let the error pass would lose the copy
// in silence there. Either way a test of the copy's result fails; this model is
// the stricter, and the library asks the capture state before it batches.
// The copies of one batch have no order among them: a copy whose destination
// meets another's destination or source is a dependent copy, undefined on the
// device (the runtime's cudaMemcpyBatchAsync documentation); here it stops
// the program, as the other detectors do, instead of running in list order.
cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                                 struct cudaMemcpyAttributes *attrs, size_t *attrs_idxs, size_t num_attrs,
                                 cudaStream_t stream) {
    PA_NOT_WHILE_CAPTURING();
    // What the runtime refuses (cudaErrorInvalidValue): the legacy stream, no copies, attributes
    // that are not 1..count with indices strictly increasing from 0, an access order that is not
    // one of the three.
    if (legacy_stream(stream) || count == 0 || !attrs || !attrs_idxs || num_attrs == 0 || num_attrs > count ||
        attrs_idxs[0] != 0)
        return fail(cudaErrorInvalidValue);
    for (size_t a = 0; a < num_attrs; a++) {
        const int order = (int)attrs[a].srcAccessOrder;
        if ((a > 0 && attrs_idxs[a] <= attrs_idxs[a - 1]) || attrs_idxs[a] >= count ||
            (order != cudaMemcpySrcAccessOrderStream && order != cudaMemcpySrcAccessOrderDuringApiCall &&
             order != cudaMemcpySrcAccessOrderAny))
            return fail(cudaErrorInvalidValue);
    }
    auto meets = [](const void *a, size_t na, const void *b, size_t nb) {
        const uintptr_t x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
        return na > 0 && nb > 0 && x < y + nb && y < x + na;
    };
    for (size_t i = 0; i < count; i++)
        for (size_t j = 0; j < count; j++)
            if (i != j && ((i < j && meets(dsts[i], sizes[i], dsts[j], sizes[j])) ||
                           meets(dsts[i], sizes[i], srcs[j], sizes[j]))) {
                char report[256];
                snprintf(report, sizeof report,
                         "pa_interp: cudaMemcpyBatchAsync: copy %zu's destination meets copy %zu's %s; the copies "
                         "of a batch have no order on the device (a dependent copy is undefined)",
                         i, j, i < j && meets(dsts[i], sizes[i], dsts[j], sizes[j]) ? "destination" : "source");
                abort_with(report);
            }
    set_host_open_all(true);
    for (size_t i = 0; i < count; i++) {
        sim_copy(dsts[i], srcs[i], sizes[i]);
        memmove(dsts[i], srcs[i], sizes[i]);
    }
    set_host_open_all(false);
    return cudaSuccess;
}
cudaError_t cudaMemset(void *d, int v, size_t n) {
    PA_NOT_WHILE_CAPTURING();
    HostWindow w{d};
    sim_ps += n;
    memset(d, v, n);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t stream) {
    return on_stream(stream, [=]() {
        HostWindow w{d};
        sim_ps += n;
        memset(d, v, n);
    });
}
cudaError_t cudaDeviceSynchronize(void) {
    PA_NOT_WHILE_CAPTURING();
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) {
    PA_NOT_WHILE_CAPTURING();
    return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) {
    *s = new CUstream_st{1, flags};
    return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }
cudaError_t cudaStreamDestroy(cudaStream_t s) {
    delete s;
    return cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode) {
    if (legacy_stream(s)) // the legacy stream cannot capture (the runtime's cudaStreamBeginCapture)
        return fail(cudaErrorStreamCaptureUnsupported);
    if (capture_on)
        return fail(cudaErrorIllegalState);
    capture_on = true;
    capture_broken = false;
    capturing = s;
    captured.clear();
    return cudaSuccess;
}
// Only the stream that began the capture ends it: another stream is refused
// (cudaErrorStreamCaptureUnmatched) and the capture goes on.
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) {
    if (!capture_on)
        return fail(cudaErrorIllegalState);
    if (s != capturing)
        return fail(cudaErrorStreamCaptureUnmatched);
    capture_on = false;
    if (capture_broken)
        return fail(cudaErrorStreamCaptureInvalidated);
    *g = new CUgraph_st{captured};
    captured.clear();
    return cudaSuccess;
}
// Asked of the legacy stream while a blocking stream captures, it is an implicit
// dependency on the capture: refused, as the runtime does (the capture goes on).
cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *st) {
    if (capture_on && s != capturing && legacy_stream(s) && capture_blocking())
        return fail(cudaErrorStreamCaptureImplicit);
    *st = capture_on && s == capturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long) {
    *e = new CUgraphExec_st{g->launches};
    return cudaSuccess;
}
// A graph launched on a stream is that stream's work (capture_role): on the
// capturing stream it is recorded (a child graph, replayed with the outer one),
// on the legacy stream while a blocking stream captures it is refused and the
// capture invalidated, elsewhere it runs now.
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t stream) {
    const int role = capture_role(stream);
    if (role < 0)
        return fail(cudaErrorStreamCaptureImplicit);
    for (const auto &f : e->launches)
        if (role > 0)
            captured.push_back(f);
        else
            f();
    return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) {
    delete g;
    return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) {
    delete e;
    return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t *e) {
    *e = new CUevent_st{0};
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
    delete e;
    return cudaSuccess;
}
// Work on a stream that is not capturing runs at its call, so an event records
// the simulated clock when it is recorded.
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
    e->ps = sim_ps.load();
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
    *ms = (float)(((double)end->ps - (double)start->ps) * 1e-9);
    return cudaSuccess;
}
cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value) {
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        // the dynamic bytes and the kernel's static ones (known once it has run), as the device
        if (value < 0 || (size_t)value + pa_interp::known_static_bytes(func) > (size_t)smem_optin())
            return fail(cudaErrorInvalidValue);
        // A kernel's attribute is the process's, not a launch's: lowered by one host thread, another
        // thread's launch of the same kernel with more bytes between its own setting and its launch
        // fails. The library gives each kernel one value; lowering it is a bug here even on one
        // thread.
        const auto it = max_dyn_smem.find(func);
        if (it != max_dyn_smem.end() && value < it->second) {
            char report[256];
            snprintf(report, sizeof report,
                     "pa_interp: cudaFuncSetAttribute lowers a kernel's MaxDynamicSharedMemorySize from %d to %d: "
                     "another host thread's launch of it with more bytes would fail (give a kernel one value)",
                     it->second, value);
            abort_with(report);
        }
        max_dyn_smem[func] = value;
    }
    return cudaSuccess;
}
// A kernel's static shared memory is laid out as its variables are first met
// (static_smem): sharedSizeBytes is known once the kernel has run, 0 before
// (so the checks that add it, device_cc.cuh's pa_smem_fits, see the dynamic
// bytes alone for a kernel not yet run; a test of a device near its limit
// runs the kernels once first).
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *a, const void *func) {
    memset(a, 0, sizeof *a);
    a->maxThreadsPerBlock = 1024;
    a->maxDynamicSharedSizeBytes = 48 * 1024;
    a->sharedSizeBytes = pa_interp::known_static_bytes(func);
    return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *, int block, size_t smem) {
    const int by_threads = 2048 / (block > 0 ? block : 1);
    const int by_smem = smem > 0 ? (int)((228 * 1024) / (smem + 1024)) : 32;
    *n = std::max(1, std::min(std::min(by_threads, by_smem), 32));
    return cudaSuccess;
}

} // extern "C"
