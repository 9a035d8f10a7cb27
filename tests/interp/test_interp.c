// The interpreter's own detectors (tests/interp/interp.cpp), each shown to
// fire on a kernel that has the defect and to stay quiet on its fixed twin.
// Built twice: against the plain interpreter (suite interp) and against the
// ThreadSanitizer build (suite interp-tsan, PA_SELFTEST_TSAN), where a race
// aborts the test process. A test that expects the abort names its reason
// (pa_interp_expect_abort): an abort for another (a bug of the self-test
// kernel, a detector firing on the wrong defect) fails it.
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selftest_kernels.h"

/* These self-tests read and write their kernels' buffers from the host
 * directly: device memory stays open to the host (PA_INTERP_HOST_ACCESS=1, set
 * before Criterion forks a test), except in the test of that guard itself. */
__attribute__((constructor)) static void open_device_memory_to_the_host(void) {
    setenv("PA_INTERP_HOST_ACCESS", "1", 0);
}

static void *dev(size_t bytes) {
    void *p = NULL;
    cr_assert_eq(cudaMalloc(&p, bytes), cudaSuccess);
    return p;
}

Test(interp, static_smem_is_poisoned_in_every_cta) {
    uint32_t *out = dev(4 * sizeof(uint32_t));
    memset(out, 0, 4 * sizeof(uint32_t));
    cr_assert_eq(pa_selftest_static_smem(out, 4), cudaSuccess);
    for (int b = 0; b < 4; b++)
        cr_expect_eq(out[b], 0xFFFFFFFFu, "CTA %d read %#x before writing its static shared memory", b, out[b]);
    cudaFree(out);
}

/* A template kernel's too (GCC keeps a template's statics out of a named
 * section: until 2026-12-02 these read zeros, then the last CTA's 42). Two
 * resident CTAs each have their own. */
Test(interp, static_smem_of_a_template_kernel_is_poisoned_in_every_cta) {
    uint32_t *out = dev(4 * sizeof(uint32_t));
    for (int resident = 1; resident <= 2; resident++) {
        setenv("PA_INTERP_CTAS", resident == 1 ? "1" : "2", 1);
        memset(out, 0, 4 * sizeof(uint32_t));
        cr_assert_eq(pa_selftest_static_smem_template(out, 4), cudaSuccess);
        for (int b = 0; b < 4; b++)
            cr_expect_eq(out[b], 0xFFFFFFFFu, "%d resident: CTA %d read %#x before writing its static shared memory",
                         resident, b, out[b]);
    }
    setenv("PA_INTERP_CTAS", "1", 1);
    cudaFree(out);
}

Test(interp, dynamic_smem_is_poisoned_in_every_cta) {
    uint32_t *out = dev(4 * sizeof(uint32_t));
    memset(out, 0, 4 * sizeof(uint32_t));
    cr_assert_eq(pa_selftest_dynamic_smem(out, 4), cudaSuccess);
    for (int b = 0; b < 4; b++)
        cr_expect_eq(out[b], 0xFFFFFFFFu, "CTA %d read %#x", b, out[b]);
    cudaFree(out);
}

/* As on the device: without cudaFuncSetAttribute a CTA's static and dynamic
 * shared memory together stay within 48 KB (the attribute's default is 48 KB
 * less the static bytes); the attribute lifts the dynamic bytes' limit. The
 * first launch of the kernel learns its static bytes as it runs, and fails
 * after the fact; the next is refused before it runs. */
Test(interp, static_and_dynamic_smem_share_48_kb_without_the_attribute) {
    uint32_t *out = dev(sizeof(uint32_t));
    cr_assert_eq(pa_selftest_static_and_dynamic_smem(out, 44 * 1024, 0), cudaSuccess);
    cr_assert_eq(out[0], 3u);
    cr_assert_eq(pa_selftest_static_and_dynamic_smem(out, 44 * 1024 + 4, 0), cudaErrorInvalidValue);
    cr_assert_eq(pa_selftest_static_and_dynamic_smem(out, 48 * 1024, 0), cudaErrorInvalidValue);
    out[0] = 0;
    cr_assert_eq(pa_selftest_static_and_dynamic_smem(out, 48 * 1024, 48 * 1024), cudaSuccess);
    cr_assert_eq(out[0], 3u);
    cr_assert_eq(pa_selftest_static_and_dynamic_smem(out, 48 * 1024 + 4, 0), cudaErrorInvalidValue,
                 "past the attribute's 48 KB");
    cudaFree(out);
}

/* A shuffle's partial mask or sub-warp width is not modelled (every kernel's
 * shuffles are whole warps): it aborts rather than run as a whole warp's. */
Test(interp, shuffle_with_a_partial_mask_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("a partial mask or a width other than 32");
    int *out = dev(32 * sizeof(int));
    (void)pa_selftest_half_warp_shuffle(out, 0);
}
Test(interp, shuffle_with_a_width_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("a partial mask or a width other than 32");
    int *out = dev(32 * sizeof(int));
    (void)pa_selftest_half_warp_shuffle(out, 1);
}

#ifndef PA_SELFTEST_TSAN /* the plain build's checks (the ThreadSanitizer build has neither) */
/* A 16-byte vector load off 16 bytes, a misaligned-address fault on the
 * device, aborts (the plain build's alignment check, tests/interp/meson.build);
 * at a 16-byte offset it runs. */
Test(interp, misaligned_vector_load_aborts, .signal = SIGABRT) {
    unsigned char *buf = dev(64);
    uint32_t *out = dev(sizeof(uint32_t));
    memset(buf, 1, 64);
    cr_assert_eq(pa_selftest_vector_load_at(buf, 16, out), cudaSuccess);
    cr_assert_eq(out[0], 4u * 0x01010101u);
    pa_interp_expect_abort("misaligned");
    pa_interp_expect_abort("selftest_kernels.cu");
    (void)pa_selftest_vector_load_at(buf, 8, out);
}

/* A local read before it is written holds 0xFE bytes (-1.7e38 in a float),
 * so the read shows in the results, as a register's stale value may on the
 * device (a reused fiber stack held zeros or an earlier kernel's values). */
Test(interp, local_read_before_write_is_a_pattern) {
    float *out = dev(sizeof(float));
    cr_assert_eq(pa_selftest_read_before_write(out, 0), cudaSuccess);
    cr_assert_eq(out[0], 0.0f);
    cr_assert_eq(pa_selftest_read_before_write(out, 1), cudaSuccess);
    uint32_t bits;
    memcpy(&bits, out, 4);
    cr_assert_eq(bits, 0xFEFEFEFEu, "acc[0] read as %#x (%g)", bits, (double)out[0]);
}
#endif

/* Device memory nobody wrote holds 0xFF bytes (NaN in every float type, -1 in
 * every integer), where compute-sanitizer's initcheck would flag the read: a
 * kernel that reads its workspace or output before writing it shows it in its
 * results, where a fresh mapping's zeros would pass for cleared memory (the
 * device's cudaMalloc, and a caching allocator's reuse above all, promise
 * nothing). PA_INTERP_DEVICE_FILL=zero keeps zeros; buffers over 256 MiB stay
 * zero (reserved, not backed: the tests of offsets past 32 bits). */
Test(interp, device_memory_starts_as_0xff) {
    unsigned char *buf = dev(4096);
    for (int i = 0; i < 4096; i++)
        cr_assert_eq(buf[i], 0xFF, "byte %d is %#x", i, buf[i]);
    uint32_t *out = dev(sizeof(uint32_t));
    cr_assert_eq(pa_selftest_vector_load_at(buf, 16, out), cudaSuccess);
    cr_assert_eq(out[0], 0xFFFFFFFCu, "four words of unwritten memory summed to %#x", out[0]); /* 4 x (2^32 - 1) */
    setenv("PA_INTERP_DEVICE_FILL", "zero", 1);
    unsigned char *z = dev(4096);
    unsetenv("PA_INTERP_DEVICE_FILL");
    cr_assert_eq(pa_selftest_vector_load_at(z, 16, out), cudaSuccess);
    cr_assert_eq(out[0], 0u);
    const size_t big_bytes = (size_t)300 << 20;
    unsigned char *big = dev(big_bytes);
    cr_assert(big[0] == 0 && big[big_bytes - 1] == 0);
    cr_assert_eq(cudaFree(big), cudaSuccess);
    cr_assert_eq(cudaFree(z), cudaSuccess);
    cr_assert_eq(cudaFree(buf), cudaSuccess);
    cr_assert_eq(cudaFree(out), cudaSuccess);
}

/* Stream capture as the runtime has it: work on the capturing stream is
 * recorded (it runs at each replay, not now); work on another stream runs now;
 * work on the legacy stream while a blocking stream captures is refused
 * (cudaErrorStreamCaptureImplicit) and invalidates the capture, where the
 * interpreter recorded it into the graph before, so a launcher that issued its
 * work on stream 0 instead of its caller's passed the graph tests here. With a
 * non-blocking capturing stream the legacy stream's work runs now. The legacy
 * stream cannot capture. */
Test(interp, stream_capture_records_refuses_or_runs_by_stream) {
    int *out = dev(sizeof(int));
    *out = 0;
    cudaStream_t cap, other;
    cr_assert_eq(cudaStreamCreate(&cap), cudaSuccess);
    cr_assert_eq(cudaStreamCreate(&other), cudaSuccess);
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;

    cr_assert_eq(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal), cudaSuccess);
    cr_assert_eq(pa_selftest_write_value(out, 1, cap), cudaSuccess);
    cr_assert_eq(*out, 0, "a launch on the capturing stream ran at capture");
    cr_assert_eq(pa_selftest_write_value(out, 2, other), cudaSuccess);
    cr_assert_eq(*out, 2, "a launch on another stream did not run now");
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusActive;
    cr_assert_eq(cudaStreamIsCapturing(other, &st), cudaSuccess);
    cr_assert_eq(st, cudaStreamCaptureStatusNone);
    cr_assert_eq(cudaStreamIsCapturing(cap, &st), cudaSuccess);
    cr_assert_eq(st, cudaStreamCaptureStatusActive);
    cr_assert_eq(cudaStreamIsCapturing(NULL, &st), cudaErrorStreamCaptureImplicit);
    cr_assert_eq(cudaGetLastError(), cudaErrorStreamCaptureImplicit);
    cr_assert_eq(cudaStreamEndCapture(cap, &g), cudaSuccess, "asking about the legacy stream broke the capture");
    cr_assert_eq(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    cr_assert_eq(cudaGraphLaunch(ge, cap), cudaSuccess);
    cr_assert_eq(*out, 1, "the replay did not run the recorded launch");
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);

    *out = 0;
    cr_assert_eq(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal), cudaSuccess);
    cr_assert_eq(pa_selftest_write_value(out, 3, NULL), cudaErrorStreamCaptureImplicit);
    cr_assert_eq(*out, 0, "a refused launch ran");
    cr_assert_eq(cudaMemsetAsync(out, 0, sizeof(int), NULL), cudaErrorStreamCaptureImplicit);
    cr_assert_eq(cudaStreamEndCapture(cap, &g), cudaErrorStreamCaptureInvalidated);
    (void)cudaGetLastError();

    cudaStream_t nb;
    cr_assert_eq(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking), cudaSuccess);
    cr_assert_eq(cudaStreamBeginCapture(nb, cudaStreamCaptureModeGlobal), cudaSuccess);
    cr_assert_eq(pa_selftest_write_value(out, 4, NULL), cudaSuccess);
    cr_assert_eq(*out, 4, "the legacy stream's launch beside a non-blocking capture did not run now");
    cr_assert_eq(cudaStreamIsCapturing(NULL, &st), cudaSuccess);
    cr_assert_eq(st, cudaStreamCaptureStatusNone);
    cr_assert_eq(cudaStreamEndCapture(nb, &g), cudaSuccess);
    cudaGraphDestroy(g);

    cr_assert_eq(cudaStreamBeginCapture(NULL, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported);
    (void)cudaGetLastError();
    cudaStreamDestroy(nb);
    cudaStreamDestroy(other);
    cudaStreamDestroy(cap);
    cudaFree(out);
}

/* A capture ends only on the stream that began it: another stream's cudaStreamEndCapture is
 * refused (cudaErrorStreamCaptureUnmatched) and the capture goes on. A graph launched on a
 * stream is that stream's work: on the capturing stream it is recorded into the outer graph
 * (run at the outer one's replay, not at capture), on the legacy stream beside a blocking
 * capture refused (the capture then invalidated), on another stream run now. */
Test(interp, graphs_end_and_launch_by_stream) {
    int *out = dev(sizeof(int));
    *out = 0;
    cudaStream_t cap, other;
    cr_assert_eq(cudaStreamCreate(&cap), cudaSuccess);
    cr_assert_eq(cudaStreamCreate(&other), cudaSuccess);
    cudaGraph_t g = NULL, outer = NULL;
    cudaGraphExec_t ge = NULL, oe = NULL;
    cr_assert_eq(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal), cudaSuccess);
    cr_assert_eq(pa_selftest_write_value(out, 5, cap), cudaSuccess);
    cr_assert_eq(cudaStreamEndCapture(other, &g), cudaErrorStreamCaptureUnmatched);
    cr_assert_eq(cudaGetLastError(), cudaErrorStreamCaptureUnmatched);
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    cr_assert_eq(cudaStreamIsCapturing(cap, &st), cudaSuccess);
    cr_assert_eq(st, cudaStreamCaptureStatusActive, "ending on another stream stopped the capture");
    cr_assert_eq(cudaStreamEndCapture(cap, &g), cudaSuccess);
    cr_assert_eq(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    cr_assert_eq(*out, 0);

    cr_assert_eq(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal), cudaSuccess);
    cr_assert_eq(cudaGraphLaunch(ge, cap), cudaSuccess);
    cr_assert_eq(*out, 0, "a graph launched on the capturing stream ran at capture");
    cr_assert_eq(cudaStreamEndCapture(cap, &outer), cudaSuccess);
    cr_assert_eq(cudaGraphInstantiate(&oe, outer, 0), cudaSuccess);
    cr_assert_eq(cudaGraphLaunch(oe, other), cudaSuccess);
    cr_assert_eq(*out, 5, "the outer graph's replay did not run the graph launched into it");

    *out = 0;
    cr_assert_eq(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal), cudaSuccess);
    cr_assert_eq(cudaGraphLaunch(ge, other), cudaSuccess);
    cr_assert_eq(*out, 5, "a graph launched on another stream did not run now");
    *out = 0;
    cr_assert_eq(cudaGraphLaunch(ge, NULL), cudaErrorStreamCaptureImplicit);
    cr_assert_eq(*out, 0, "a refused graph launch ran");
    cudaGraph_t dead = NULL;
    cr_assert_eq(cudaStreamEndCapture(cap, &dead), cudaErrorStreamCaptureInvalidated);
    (void)cudaGetLastError();
    cudaGraphExecDestroy(oe);
    cudaGraphDestroy(outer);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaStreamDestroy(other);
    cudaStreamDestroy(cap);
    cudaFree(out);
}

/* Work run at once beside a capture, on a stream other than the capturing one, is counted
 * (pa_interp_work_beside_capture: pa_test_launch fails an entry that issued any), work on the
 * capturing stream and work with no capture on is not. */
unsigned long pa_interp_work_beside_capture(void);
Test(interp, work_beside_a_capture_is_counted) {
    int *out = dev(sizeof(int));
    cudaStream_t cap, other;
    cr_assert_eq(cudaStreamCreate(&cap), cudaSuccess);
    cr_assert_eq(cudaStreamCreate(&other), cudaSuccess);
    const unsigned long n0 = pa_interp_work_beside_capture();
    cr_assert_eq(pa_selftest_write_value(out, 1, other), cudaSuccess);
    cr_assert_eq(pa_interp_work_beside_capture(), n0, "counted with no capture on");
    cr_assert_eq(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal), cudaSuccess);
    cr_assert_eq(pa_selftest_write_value(out, 2, cap), cudaSuccess);
    cr_assert_eq(cudaMemsetAsync(out, 0, sizeof(int), cap), cudaSuccess);
    cr_assert_eq(pa_interp_work_beside_capture(), n0, "the capturing stream's work counted");
    cr_assert_eq(pa_selftest_write_value(out, 3, other), cudaSuccess);
    cr_assert_eq(cudaMemsetAsync(out, 0, sizeof(int), other), cudaSuccess);
    cr_assert_eq(pa_interp_work_beside_capture(), n0 + 2, "a launch and a set beside the capture");
    cudaGraph_t g = NULL;
    cr_assert_eq(cudaStreamEndCapture(cap, &g), cudaSuccess);
    cudaGraphDestroy(g);
    cudaStreamDestroy(other);
    cudaStreamDestroy(cap);
    cudaFree(out);
}

/* What cudaMemcpyBatchAsync refuses on the device (cudaErrorInvalidValue), it
 * refuses here: the legacy stream, attribute indices that do not start at 0 or
 * do not increase, more attributes than copies, an access order outside the
 * three. The library's swap path keeps to these (cuda/swap_copy.cu). */
Test(interp, batch_copy_refuses_what_the_runtime_refuses) {
    int *a = dev(4 * sizeof(int)), *b = dev(4 * sizeof(int));
    for (int i = 0; i < 4; i++)
        a[i] = i + 1;
    void *dsts[2] = {b, b + 2};
    const void *srcs[2] = {a, a + 2};
    size_t sizes[2] = {2 * sizeof(int), 2 * sizeof(int)};
    struct cudaMemcpyAttributes at[2];
    memset(at, 0, sizeof at);
    at[0].srcAccessOrder = at[1].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t idx[2] = {0, 1};
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreate(&s), cudaSuccess);
    cr_assert_eq(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, at, idx, 1, NULL), cudaErrorInvalidValue);
    cr_assert_eq(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, at, idx, 3, s), cudaErrorInvalidValue);
    size_t late[1] = {1};
    cr_assert_eq(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, at, late, 1, s), cudaErrorInvalidValue);
    size_t flat[2] = {0, 0};
    cr_assert_eq(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, at, flat, 2, s), cudaErrorInvalidValue);
    at[0].srcAccessOrder = (enum cudaMemcpySrcAccessOrder)0; /* the enum's "invalid" */
    cr_assert_eq(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, at, idx, 1, s), cudaErrorInvalidValue);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(b[i], -1, "a refused batch copied (int %d is %d)", i, b[i]); /* still 0xFF bytes */
    at[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    cr_assert_eq(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, at, idx, 2, s), cudaSuccess);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(b[i], i + 1);
    (void)cudaGetLastError();
    cudaStreamDestroy(s);
    cudaFree(a);
    cudaFree(b);
}

/* A shuffle that reads a lane past the block's last thread (a partial last
 * warp) reads an undefined value on the device; here it stops the program,
 * where it read 0 before. 64 threads: every lane exists. */
Test(interp, shuffle_from_a_lane_past_the_block_aborts, .signal = SIGABRT) {
    int *out = dev(64 * sizeof(int));
    cr_assert_eq(pa_selftest_partial_warp_shuffle(out, 64), cudaSuccess);
    for (int i = 0; i < 64; i++)
        cr_assert_eq(out[i], i ^ 16);
    pa_interp_expect_abort("shuffle reads a lane past the block's last thread");
    (void)pa_selftest_partial_warp_shuffle(out, 40);
}

/* Device memory is closed to the host between grids, as on the device, where
 * a host access to a cudaMalloc allocation faults: a launcher that read a
 * length or a scale through a device pointer, or a test that read an output
 * without copying it back, passed here before. The runtime's copies and sets,
 * and grids, reach it; the host's own load stops the program. (Not in the
 * ThreadSanitizer build, whose runtime keeps the fault handler to itself.) */
#ifndef PA_SELFTEST_TSAN
Test(interp, host_access_to_device_memory_aborts, .signal = SIGABRT) {
    unsetenv("PA_INTERP_HOST_ACCESS");
    int *d = dev(16 * sizeof(int));
    int h[16], back[16];
    for (int i = 0; i < 16; i++)
        h[i] = i;
    cr_assert_eq(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
    cr_assert_eq(pa_selftest_write_value(d, 7, NULL), cudaSuccess);
    cr_assert_eq(cudaMemset(d + 15, 0, sizeof(int)), cudaSuccess);
    cr_assert_eq(cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost), cudaSuccess);
    cr_assert(back[0] == 7 && back[1] == 1 && back[14] == 14 && back[15] == 0);
    pa_interp_expect_abort("the host touched device memory");
    volatile int x = d[3];
    (void)x;
}
#endif

/* A launch the device would refuse fails with the runtime's error, by its
 * runtime name and message (the library's errors quote both), and the error
 * is cleared once read. */
Test(interp, refused_launch_reports_the_runtime_error) {
    uint32_t *out = dev(sizeof(uint32_t));
    const cudaError_t e = pa_selftest_static_smem(out, 0); /* an empty grid */
    cr_assert_eq(e, cudaErrorInvalidConfiguration, "an empty grid gave error %d", (int)e);
    cr_expect(strcmp(cudaGetErrorName(e), "cudaErrorInvalidConfiguration") == 0, "%s", cudaGetErrorName(e));
    cr_expect(strcmp(cudaGetErrorString(e), "interpreter: invalid configuration argument") == 0, "%s",
              cudaGetErrorString(e));
    cr_expect(strcmp(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue") == 0, "%s",
              cudaGetErrorName(cudaErrorInvalidValue));
    cr_expect(strcmp(cudaGetErrorName(cudaSuccess), "cudaSuccess") == 0, "%s", cudaGetErrorName(cudaSuccess));
    cr_expect(strcmp(cudaGetErrorString(cudaSuccess), "no error") == 0, "%s", cudaGetErrorString(cudaSuccess));
    cr_expect(strcmp(cudaGetErrorName(cudaErrorLaunchFailure), "cudaErrorUnknown") == 0,
              "a code the interpreter never raises: %s", cudaGetErrorName(cudaErrorLaunchFailure));
    cr_expect_eq(cudaGetLastError(), cudaSuccess, "the error was read once already");
    cr_expect_eq(pa_selftest_static_smem(out, 1), cudaSuccess);
    cudaFree(out);
}

/* The order knob is applied at every launch (test_orders relies on it): an
 * order-dependent output differs between forward and reverse. */
Test(interp, cta_order_knob_changes_an_order_dependent_kernel) {
    int *counter = dev(sizeof(int)), *out = dev(8 * sizeof(int));
    for (int r = 0; r < 2; r++) {
        setenv("PA_INTERP_ORDER", r ? "reverse" : "forward", 1);
        *counter = 0;
        cr_assert_eq(pa_selftest_arrival_order(counter, out, 8), cudaSuccess);
        for (int b = 0; b < 8; b++)
            cr_expect_eq(out[b], r ? 7 - b : b, "order %s: CTA %d ran %d-th", r ? "reverse" : "forward", b, out[b]);
    }
    setenv("PA_INTERP_ORDER", "forward", 1);
}

Test(interp, barrier_reached_from_two_places_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("barrier reached from two places");
    int *out = dev(32 * sizeof(int));
    pa_selftest_barrier_in_two_places(out);
}

Test(interp, ordered_kernels_compute_their_values) {
    int *out = dev(64 * sizeof(int));
    cr_assert_eq(pa_selftest_lane_write_then_read(out, 1), cudaSuccess);
    for (int i = 0; i < 32; i++)
        cr_expect_eq(out[i], 7);
    cr_assert_eq(pa_selftest_read_then_rewrite(out, 1), cudaSuccess);
    for (int i = 0; i < 64; i++)
        cr_expect_eq(out[i], 1);
    uint32_t *src = dev(16 * sizeof(uint32_t)), *got = dev(16 * sizeof(uint32_t));
    for (uint32_t i = 0; i < 16; i++)
        src[i] = 1000u + i;
    cr_assert_eq(pa_selftest_cp_async_then_read(src, got, 1), cudaSuccess);
    for (uint32_t i = 0; i < 16; i++)
        cr_expect_eq(got[i], 1000u + i);
    cudaFree(out);
    cudaFree(src);
    cudaFree(got);
}

/* wgmma through the interpreter: S = Q K^T (64 x 64 keys, 64 dims, bf16 of
 * small integers, so exact) against the plain product. */
static uint16_t bf16_of_int(int v) {
    const float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, 4);
    return (uint16_t)(b >> 16); /* exact for small integers */
}

enum { EXPECT_NOTHING, EXPECT_PRODUCT, EXPECT_NAN };
typedef cudaError_t (*wgmma_kernel)(const uint16_t *, const uint16_t *, float *, int);

static void wgmma_case(wgmma_kernel kernel, int mode, int expect) {
    uint16_t *q = dev(64 * 64 * 2), *k = dev(64 * 64 * 2);
    float *s = dev(64 * 64 * sizeof(float));
    static int qi[64][64], ki[64][64];
    uint32_t x = 12345u;
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 64; j++) {
            x = x * 1664525u + 1013904223u;
            qi[i][j] = (int)((x >> 24) % 9) - 4;
            x = x * 1664525u + 1013904223u;
            ki[i][j] = (int)((x >> 24) % 9) - 4;
            q[i * 64 + j] = bf16_of_int(qi[i][j]);
            k[i * 64 + j] = bf16_of_int(ki[i][j]);
        }
    cr_assert_eq(kernel(q, k, s, mode), cudaSuccess);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    for (int i = 0; expect != EXPECT_NOTHING && i < 64; i++)
        for (int j = 0; j < 64; j++) {
            int want = 0;
            for (int d = 0; d < 64; d++)
                want += qi[i][d] * ki[j][d];
            if (expect == EXPECT_PRODUCT)
                cr_assert_eq(s[i * 64 + j], (float)want, "S[%d][%d] = %g, want %d", i, j, (double)s[i * 64 + j], want);
            else
                cr_assert(isnan(s[i * 64 + j]), "S[%d][%d] = %g, want NaN (read before the wait)", i, j,
                          (double)s[i * 64 + j]);
        }
    cudaFree(q);
    cudaFree(k);
    cudaFree(s);
}
static void wgmma_qk_case(int mode, int expect) { wgmma_case(pa_selftest_wgmma_qk, mode, expect); }

Test(interp, wgmma_computes_q_kt) { wgmma_qk_case(PA_WG_OK, EXPECT_PRODUCT); }

/* wgmma's asynchrony and the async proxy (interp.cpp, WgOp and async_img):
 * each defect of the protocol fires, and the protocol with one commit group
 * per step (a wgmma accumulating into registers an earlier one in flight owns)
 * still computes the product. */
Test(interp, wgmma_groups_chained_on_one_accumulator) { wgmma_qk_case(PA_WG_GROUPS_WAIT_ALL, EXPECT_PRODUCT); }
Test(interp, wgmma_without_proxy_fence_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("written through the generic proxy");

    wgmma_qk_case(PA_WG_NO_PROXY_FENCE, EXPECT_NOTHING);
}
Test(interp, wgmma_proxy_fence_before_the_stores_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("written through the generic proxy");

    wgmma_qk_case(PA_WG_FENCE_BEFORE_STORES, EXPECT_NOTHING);
}
Test(interp, wgmma_without_wgmma_fence_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("with no wgmma.fence since");

    wgmma_qk_case(PA_WG_NO_WGMMA_FENCE, EXPECT_NOTHING);
}
Test(interp, wgmma_accumulators_read_before_the_wait_are_nan) { wgmma_qk_case(PA_WG_READ_BEFORE_WAIT, EXPECT_NAN); }
Test(interp, wgmma_wait_leaving_the_last_group_in_flight_reads_nan) {
    wgmma_qk_case(PA_WG_GROUPS_WAIT_ONE, EXPECT_NAN);
}
Test(interp, wgmma_tile_overwritten_in_flight_aborts, .signal = SIGABRT) {
#ifdef PA_SELFTEST_TSAN /* the store races with the wgmma's read, reported first under ThreadSanitizer */
    pa_interp_expect_abort("ThreadSanitizer: data race");
    pa_interp_expect_abort("qk_wgmma(");
#else
    pa_interp_expect_abort("an in-flight wgmma reads was overwritten");
#endif

    wgmma_qk_case(PA_WG_TILE_REWRITTEN, EXPECT_NOTHING);
}
Test(interp, wgmma_accumulator_written_in_flight_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("accumulators of an in-flight wgmma were written");

    wgmma_qk_case(PA_WG_ACC_WRITTEN, EXPECT_NOTHING);
}
Test(interp, wgmma_a_registers_written_in_flight_abort, .signal = SIGABRT) {
    pa_interp_expect_abort("A registers of an in-flight wgmma were written");

    wgmma_qk_case(PA_WG_A_WRITTEN, EXPECT_NOTHING);
}
Test(interp, wgmma_never_waited_for_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("exited with a wgmma in flight");
    wgmma_qk_case(PA_WG_NO_WAIT, EXPECT_NOTHING);
}
/* The Hopper kernel's hand-off: cp.async through an mbarrier is visible to
 * wgmma only after a fence by a thread that waited for the phase. */
Test(interp, wgmma_after_mbarrier_wait_and_fence_computes_q_kt) {
    wgmma_case(pa_selftest_wgmma_qk_mbar, 0, EXPECT_PRODUCT);
}
Test(interp, wgmma_fence_before_the_mbarrier_wait_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("written through the generic proxy");

    wgmma_case(pa_selftest_wgmma_qk_mbar, 1, EXPECT_NOTHING);
}
Test(interp, wgmma_after_mbarrier_wait_without_fence_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("written through the generic proxy");

    wgmma_case(pa_selftest_wgmma_qk_mbar, 2, EXPECT_NOTHING);
}

/* setmaxnreg through the CTA's register pool: the Hopper kernel's hand-off
 * completes; without the producer's dec, or asking for more than it released,
 * the incs wait forever (a deadlock here, a hang on the GPU). */
static void setmaxnreg_case(int mode) {
    int *out = dev(384 * sizeof(int));
    cr_assert_eq(pa_selftest_setmaxnreg(out, mode), cudaSuccess);
    for (int i = 0; i < 384; i++)
        cr_assert_eq(out[i], 1);
    cudaFree(out);
}
Test(interp, setmaxnreg_handoff_completes) { setmaxnreg_case(0); }
Test(interp, setmaxnreg_inc_without_a_dec_deadlocks, .signal = SIGABRT) {
    pa_interp_expect_abort("setmaxnreg.inc to");
    pa_interp_expect_abort("deadlock in block");
    setmaxnreg_case(1);
}
Test(interp, setmaxnreg_inc_past_the_pool_deadlocks, .signal = SIGABRT) {
    pa_interp_expect_abort("setmaxnreg.inc to");
    pa_interp_expect_abort("deadlock in block");
    setmaxnreg_case(2);
}

/* mbarrier ring (a producer and a consumer warp, two slots): with the
 * protocol the consumer sums every round, under every schedule. */
static void mbar_ring_case(int mode, int check) {
    enum { R = 9 };
    uint32_t *src = dev(16 * R * sizeof(uint32_t)), *out = dev(16 * sizeof(uint32_t));
    for (int i = 0; i < 16 * R; i++)
        src[i] = (uint32_t)(i * 7 + 1);
    memset(out, 0, 16 * sizeof(uint32_t));
    cr_assert_eq(pa_selftest_mbar_ring(src, out, R, mode), cudaSuccess);
    for (int l = 0; check && l < 16; l++) {
        uint32_t want = 0;
        for (int i = 0; i < R; i++)
            want += src[16 * i + l];
        cr_assert_eq(out[l], want, "lane %d: %u, want %u", l, out[l], want);
    }
    cudaFree(src);
    cudaFree(out);
}
Test(interp, mbarrier_ring_delivers_every_round) {
    const char *sched[3] = {"sweep", "warp", "random"};
    for (int i = 0; i < 3; i++) {
        setenv("PA_INTERP_SCHED", sched[i], 1);
        mbar_ring_case(0, 1);
    }
    unsetenv("PA_INTERP_SCHED");
}
/* The producer run ahead (lowest warp first) without its `empty` wait
 * completes each slot's `full` phase twice before the consumer looks, so the
 * parity the consumer waits for is never seen again: a hang on the device, a
 * deadlock report (abort) here. */
Test(interp, mbarrier_ring_without_empty_wait_deadlocks_when_the_producer_runs_ahead, .signal = SIGABRT) {
    pa_interp_expect_abort("deadlock in block");

    setenv("PA_INTERP_SCHED", "warp", 1);
    setenv("PA_INTERP_MISSING_WAIT", "off", 1); /* the deadlock, not the missing wait before it */
    mbar_ring_case(2, 0);
}
/* synccheck's "Missing wait": an arrival that begins a phase nobody waited
 * for the end of aborts; with the wait between, the same arrivals run. */
Test(interp, mbarrier_rearrive_after_waiting_runs) {
    uint32_t *out = dev(sizeof(uint32_t));
    out[0] = 0;
    cr_assert_eq(pa_selftest_mbar_rearrive(out, 0), cudaSuccess);
    cr_assert_eq(out[0], 1u);
    cudaFree(out);
}
Test(interp, mbarrier_arrive_without_waiting_for_the_last_phase_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("a missing wait");

    uint32_t *out = dev(sizeof(uint32_t));
    pa_selftest_mbar_rearrive(out, 1);
}
/* Named barriers hand a value back and forth in turns, under every schedule. */
Test(interp, named_barriers_take_turns) {
    const char *sched[3] = {"sweep", "warp", "random"};
    int *log = dev(8 * sizeof(int));
    for (int k = 0; k < 3; k++) {
        setenv("PA_INTERP_SCHED", sched[k], 1);
        memset(log, 0, 8 * sizeof(int));
        cr_assert_eq(pa_selftest_named_turns(log, 8, 1), cudaSuccess);
        for (int i = 0; i < 8; i++)
            cr_assert_eq(log[i], 2 * i + 1, "%s: round %d read %d", sched[k], i, log[i]);
    }
    unsetenv("PA_INTERP_SCHED");
    cudaFree(log);
}

Test(interp, mbarrier_wait_that_never_completes_is_a_deadlock, .signal = SIGABRT) {
    pa_interp_expect_abort("deadlock in block");

    uint32_t *out = dev(32 * sizeof(uint32_t));
    pa_selftest_mbar_never(out);
}

/* Programmatic dependent launch: the consumer reads what the producer wrote only after
 * griddepcontrol.wait, and every thread waits before it exits. */
static void pdl_case(int mode, int pdl) {
    enum { N = 4 * 64 };
    int *buf = dev(N * sizeof(int)), *other = dev(N * sizeof(int)), *out = dev(N * sizeof(int));
    for (int i = 0; i < N; i++) {
        buf[i] = -1;
        other[i] = 3 * i;
        out[i] = 0;
    }
    cr_assert_eq(pa_selftest_pdl(buf, other, out, mode, pdl), cudaSuccess);
    for (int i = 0; i < N; i++)
        cr_expect_eq(out[i], 3 * i + (mode == 3 ? 0 : 1000 * i + 7), "mode %d, pdl %d: out[%d] = %d", mode, pdl, i,
                     out[i]); /* mode 3 zeroes buf before it reads it */
    cudaFree(buf);
    cudaFree(other);
    cudaFree(out);
}
Test(interp, pdl_consumer_after_the_wait_computes) { pdl_case(0, 1); }
/* Without the launch attribute the stream orders the two grids whole: nothing to check. */
Test(interp, pdl_rules_hold_only_for_a_dependent_launch) {
    pdl_case(1, 0);
    pdl_case(3, 0);
}
Test(interp, pdl_thread_exiting_without_the_wait_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("exited without executing");
    pdl_case(2, 1);
}
#ifndef PA_SELFTEST_TSAN /* the plain interpreter's check (the ThreadSanitizer build keeps the exit rule) */
Test(interp, pdl_read_before_the_wait_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("before its griddepcontrol.wait");
    pdl_case(1, 1);
}
Test(interp, pdl_store_before_the_wait_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("before its griddepcontrol.wait");
    pdl_case(3, 1);
}
#endif

#ifndef PA_SELFTEST_TSAN
/* A store just outside a buffer, where no guard page is (the slack before it, the bytes past its
 * end up to the next 16), is found at the end of the grid. 5 ints: 12 bytes past the end. */
static void write_at_case(long i) {
    int *out = dev(5 * sizeof(int));
    memset(out, 0, 5 * sizeof(int));
    cr_assert_eq(pa_selftest_write_at(out, i), cudaSuccess);
    cr_expect_eq(out[4], i == 4, "out[4] = %d", out[4]);
    cudaFree(out);
}
Test(interp, store_into_the_last_element_is_fine) { write_at_case(4); }
Test(interp, store_just_past_the_end_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("wrote outside an allocation");
    pa_interp_expect_abort("past its end");
    write_at_case(5);
}
Test(interp, store_before_the_start_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("wrote outside an allocation");
    pa_interp_expect_abort("before its start");
    write_at_case(-1);
}
#endif

/* Resident CTAs (PA_INTERP_CTAS): work taken from a global counter, 12 items
 * in groups of 3, each group summed by the CTA that finishes it. Returns how
 * many CTAs took items. */
static int fetch_case(int resident, int mode, int check) {
    char n[8];
    snprintf(n, sizeof n, "%d", resident);
    setenv("PA_INTERP_CTAS", n, 1);
    enum { items = 12, split = 3, groups = items / split, nt = 64 };
    int *hdr = dev((1 + groups) * sizeof(int)), *part = dev(items * nt * sizeof(int));
    int *owner = dev(items * sizeof(int)), *sum = dev(groups * nt * sizeof(int));
    memset(hdr, 0, (1 + groups) * sizeof(int));
    memset(owner, 0xFF, items * sizeof(int));
    memset(sum, 0, groups * nt * sizeof(int));
    const cudaError_t e = pa_selftest_fetch_and_merge(hdr, part, owner, sum, items, split, mode);
    setenv("PA_INTERP_CTAS", "1", 1);
    cr_assert_eq(e, cudaSuccess);
    int took[4] = {0, 0, 0, 0}, ctas = 0;
    if (check) {
        for (int i = 0; i < items; i++) {
            cr_assert(owner[i] >= 0 && owner[i] < 4, "item %d taken by %d", i, owner[i]);
            took[owner[i]]++;
        }
        for (int b = 0; b < 4; b++)
            ctas += took[b] > 0;
        for (int g = 0; g < groups; g++)
            for (int t = 0; t < nt; t++) {
                const int want = 1000 * (3 * g + 0) + 1000 * (3 * g + 1) + 1000 * (3 * g + 2) + 3 * t;
                cr_expect_eq(sum[g * nt + t], want, "group %d thread %d: %d, want %d", g, t, sum[g * nt + t], want);
            }
    }
    cudaFree(hdr);
    cudaFree(part);
    cudaFree(owner);
    cudaFree(sum);
    return ctas;
}

/* One resident CTA (the default) runs to its end before the next starts: the
 * first takes every item, and every merge is its own. */
Test(interp, one_resident_cta_takes_all_the_work) { cr_expect_eq(fetch_case(1, 0, 1), 1); }

/* Three resident CTAs take turns at their barriers: the items spread over
 * them, a group's partials come from several CTAs, and each keeps its own
 * static shared memory (the item index it read) across the turns. */
Test(interp, resident_ctas_share_the_work_and_merge_each_others) { cr_expect_eq(fetch_case(3, 0, 1), 3); }

#ifdef PA_SELFTEST_TSAN
/* Nothing orders the CTAs of a grid: two that store one word race, one
 * resident CTA at a time too (the default). */
Test(tsan, ctas_storing_one_word_race, .signal = SIGABRT) {
    pa_interp_expect_abort("ThreadSanitizer: data race");
    pa_interp_expect_abort("same_word(");

    int *out = dev(sizeof(int));
    pa_selftest_same_word(out, 2);
}
/* The last-CTA merge without the writers' fence before the counter, or
 * without the reader's fence after it: the partials' stores and the merge's
 * loads race. (With both fences, resident_ctas_share_the_work_and_merge_each_others.) */
Test(tsan, last_cta_merge_without_the_writers_fence_is_a_race, .signal = SIGABRT) {
    pa_interp_expect_abort("ThreadSanitizer: data race");
    pa_interp_expect_abort("fetch_and_merge(");
    fetch_case(3, 1, 0);
}
Test(tsan, last_cta_merge_without_the_readers_fence_is_a_race, .signal = SIGABRT) {
    pa_interp_expect_abort("ThreadSanitizer: data race");
    pa_interp_expect_abort("fetch_and_merge(");
    fetch_case(3, 2, 0);
}

// ThreadSanitizer (TSAN_OPTIONS=halt_on_error=1:abort_on_error=1) aborts at
// the first race. The plain interpreter computes the right values for all
// three kernels: lanes run in lock step and the copy lands before warp 1 runs.
Test(tsan, lane_write_read_without_syncwarp_is_a_race, .signal = SIGABRT) {
    pa_interp_expect_abort("ThreadSanitizer: data race");
    pa_interp_expect_abort("lane_write_then_read(");

    int *out = dev(32 * sizeof(int));
    pa_selftest_lane_write_then_read(out, 0);
}
Test(tsan, read_then_rewrite_without_barrier_is_a_race, .signal = SIGABRT) {
    pa_interp_expect_abort("ThreadSanitizer: data race");
    pa_interp_expect_abort("read_then_rewrite(");

    int *out = dev(64 * sizeof(int));
    pa_selftest_read_then_rewrite(out, 0);
}
Test(tsan, cp_async_read_by_another_warp_without_barrier_is_a_race, .signal = SIGABRT) {
    pa_interp_expect_abort("ThreadSanitizer: data race");
    pa_interp_expect_abort("cp_async_then_read(");

    uint32_t *src = dev(16 * sizeof(uint32_t)), *got = dev(16 * sizeof(uint32_t));
    memset(src, 0, 16 * sizeof(uint32_t));
    pa_selftest_cp_async_then_read(src, got, 0);
}

// wgmma reads the tile other warps stored: without the barrier, a race.
Test(tsan, wgmma_without_barrier_after_tile_stores_is_a_race, .signal = SIGABRT) {
    pa_interp_expect_abort("ThreadSanitizer: data race");
    pa_interp_expect_abort("wgmma_qk(");

    wgmma_qk_case(PA_WG_NO_BARRIER, EXPECT_NOTHING);
}

// The consumer reads a slot whose `full` phase it did not wait for: a race.
Test(tsan, mbarrier_ring_without_full_wait_is_a_race, .signal = SIGABRT) {
    pa_interp_expect_abort("ThreadSanitizer: data race");
    pa_interp_expect_abort("mbar_ring(");

    setenv("PA_INTERP_MISSING_WAIT", "off", 1); /* the race, not the missing wait the next round has */
    mbar_ring_case(1, 0);
}
// The reading warp skips its turn (no named_sync): a race with the writer.
Test(tsan, named_barrier_turn_skipped_is_a_race, .signal = SIGABRT) {
    pa_interp_expect_abort("ThreadSanitizer: data race");
    pa_interp_expect_abort("named_turns(");

    int *log = dev(8 * sizeof(int));
    pa_selftest_named_turns(log, 8, 0);
}
#endif

/* ---- The mutation pass of 2026-12-07 (tests/interp/README.md): each test below fails on a
 * one-point change to interp.cpp that every test before it passed. ---- */

/* The four shuffles give the device's lanes: up and down keep a lane's own value where the
 * source lies outside the warp, and back-to-back shuffles do not overwrite what a slower lane
 * has still to read (they write the two halves of the slots in turn). */
Test(interp, shuffles_read_the_lanes_the_device_gives) {
    int *out = dev(64 * 4 * sizeof(int));
    cr_assert_eq(pa_selftest_shuffle_modes(out), cudaSuccess);
    for (int t = 0; t < 64; t++) {
        const int l = t % 32, base = t - l;
        const int want[4] = {t ^ 1, 1000 + (l >= 3 ? t - 3 : t), 2000 + (l + 5 < 32 ? t + 5 : t), 3000 + base + 7};
        for (int k = 0; k < 4; k++)
            cr_expect_eq(out[4 * t + k], want[k], "thread %d, shuffle %d: %d, want %d", t, k, out[4 * t + k], want[k]);
    }
    cudaFree(out);
}

/* 40 threads: lane 7 of warp 1 is thread 39, the block's last; lane 8 is the first that does not
 * exist. */
Test(interp, shuffle_from_the_first_lane_past_the_block_aborts, .signal = SIGABRT) {
    int *out = dev(40 * sizeof(int));
    cr_assert_eq(pa_selftest_shuffle_from_lane(out, 40, 7), cudaSuccess);
    for (int t = 0; t < 40; t++)
        cr_assert_eq(out[t], t < 32 ? 7 : 39);
    pa_interp_expect_abort("shuffle reads a lane past the block's last thread");
    (void)pa_selftest_shuffle_from_lane(out, 40, 8);
}

/* cp.async zero-fills the bytes of its unit past src-size, and a copy lands at the
 * cp.async.wait_group that covers its group, not at an earlier one: the newer group's
 * destination still holds the poison after wait_group 1. */
Test(interp, cp_async_zero_fills_and_lands_at_its_own_wait) {
    uint32_t *src = dev(8 * sizeof(uint32_t)), *out = dev(4 * sizeof(uint32_t));
    for (uint32_t i = 0; i < 8; i++)
        src[i] = 10u + i;
    cr_assert_eq(pa_selftest_cp_async_case(src, out, 0), cudaSuccess);
    cr_expect(out[0] == 10u && out[1] == 11u && out[2] == 0u && out[3] == 0u, "%u %u %u %u", out[0], out[1], out[2],
              out[3]);
    cr_assert_eq(pa_selftest_cp_async_case(src, out, 5), cudaSuccess);
    cr_expect_eq(out[0], 10u);
    cr_expect_eq(out[1], 0xFFFFFFFFu, "the newer group landed at wait_group 1 (%#x)", out[1]);
    cr_expect_eq(out[2], 14u);
    cudaFree(src);
    cudaFree(out);
}
static void cp_async_abort_case(int mode, const char *reason) {
    uint32_t *src = dev(8 * sizeof(uint32_t)), *out = dev(4 * sizeof(uint32_t));
    memset(src, 0, 8 * sizeof(uint32_t));
    pa_interp_expect_abort(reason);
    (void)pa_selftest_cp_async_case(src, out, mode);
}
Test(interp, cp_async_src_size_past_its_unit_aborts, .signal = SIGABRT) {
    cp_async_abort_case(1, "cp.async src-size out of range");
}
Test(interp, cp_async_source_off_its_alignment_aborts, .signal = SIGABRT) {
    cp_async_abort_case(2, "cp.async address not aligned to its size");
}
Test(interp, cp_async_unit_reaching_past_dynamic_smem_aborts, .signal = SIGABRT) {
    cp_async_abort_case(3, "cp.async destination outside dynamic shared memory");
}
Test(interp, thread_exiting_with_a_copy_never_waited_for_aborts, .signal = SIGABRT) {
    cp_async_abort_case(4, "cp.async copies never waited for");
}

/* ldmatrix's rows: each 16 bytes, 16-byte aligned, inside dynamic shared memory. Rows in order
 * give lane l the bytes of row (l / 4) of each 8 x 8 matrix (ldmatrix's layout). */
Test(interp, ldmatrix_reads_its_rows) {
    uint32_t *out = dev(128 * sizeof(uint32_t));
    cr_assert_eq(pa_selftest_ldmatrix_rows(out, 0, 512), cudaSuccess);
    for (int l = 0; l < 32; l++)
        for (int j = 0; j < 4; j++) {
            const uint32_t b = (uint32_t)(16 * (8 * j + l / 4) + 4 * (l % 4));
            uint32_t want = 0;
            for (uint32_t i = 0; i < 4; i++)
                want |= ((b + i) & 0xFFu) << (8 * i); /* the kernel stores each byte's offset mod 256 */
            cr_expect_eq(out[4 * l + j], want, "lane %d register %d: %#x, want %#x", l, j, out[4 * l + j], want);
        }
    cudaFree(out);
}
Test(interp, ldmatrix_row_reaching_past_dynamic_smem_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("ldmatrix row outside dynamic shared memory");
    uint32_t *out = dev(128 * sizeof(uint32_t));
    (void)pa_selftest_ldmatrix_rows(out, 0, 504); /* the last row ends 8 bytes past it */
}
Test(interp, ldmatrix_row_off_16_bytes_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("ldmatrix row address not 16-byte aligned");
    uint32_t *out = dev(128 * sizeof(uint32_t));
    (void)pa_selftest_ldmatrix_rows(out, 8, 528);
}

Test(interp, warp_collective_with_exited_lanes_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("warp collective with exited lanes");
    int *out = dev(32 * sizeof(int));
    (void)pa_selftest_warp_collective(out, 0);
}
Test(interp, warp_collective_reached_from_two_places_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("divergent warp collective");
    int *out = dev(32 * sizeof(int));
    (void)pa_selftest_warp_collective(out, 1);
}

/* __syncthreads_or is true in every thread when any thread's predicate is. */
Test(interp, syncthreads_or_sees_every_thread) {
    int *out = dev(64 * sizeof(int));
    cr_assert_eq(pa_selftest_sync_or(out), cudaSuccess);
    for (int t = 0; t < 64; t++)
        cr_expect_eq(out[t], 2, "thread %d: %d (2 * any + none)", t, out[t]);
    cudaFree(out);
}

static void named_abort_case(int mode, const char *reason) {
    pa_interp_expect_abort(reason);
    int *out = dev(64 * sizeof(int));
    (void)pa_selftest_named(out, 1, mode);
}
Test(interp, named_barrier_count_past_the_cta_aborts, .signal = SIGABRT) {
    named_abort_case(0, "named barrier thread count must be a multiple of 32 up to the CTA's");
}
Test(interp, named_barrier_zero_aborts, .signal = SIGABRT) { named_abort_case(1, "named barrier id must be in 1..15"); }
Test(interp, named_barrier_with_two_counts_aborts, .signal = SIGABRT) {
    named_abort_case(2, "named barrier used with two thread counts in one generation");
}
/* bar.arrive does not wait: a warp that arrives on 1 and then 2 meets a warp that syncs on 2
 * and then 1 (were arrivals waits, a deadlock). */
Test(interp, named_arrive_does_not_wait) {
    int *out = dev(64 * sizeof(int));
    cr_assert_eq(pa_selftest_named(out, 1, 3), cudaSuccess);
    for (int t = 0; t < 64; t++)
        cr_assert_eq(out[t], 1);
    cudaFree(out);
}
/* Every CTA's named barriers start at rest, one resident CTA at a time or two taking turns: an
 * arrival left over in one CTA completes nothing in the next, and an arrival before a
 * __syncthreads (where resident CTAs take turns) counts in its own CTA only. */
Test(interp, named_barriers_are_each_ctas_own) {
    int *out = dev(3 * 64 * sizeof(int));
    cr_assert_eq(pa_selftest_named(out, 3, 4), cudaSuccess);
    for (int t = 0; t < 3 * 64; t++)
        cr_expect_eq(out[t], t >= 64 && t % 64 < 32 ? 7 : 1, "thread %d of CTA %d read %d", t % 64, t / 64, out[t]);
    setenv("PA_INTERP_CTAS", "2", 1);
    const cudaError_t e = pa_selftest_named(out, 2, 5);
    setenv("PA_INTERP_CTAS", "1", 1);
    cr_assert_eq(e, cudaSuccess);
    cudaFree(out);
}

static void mbar_misuse_case(int mode, const char *reason) {
    pa_interp_expect_abort(reason);
    uint32_t *out = dev(sizeof(uint32_t));
    (void)pa_selftest_mbar_misuse(out, mode);
}
Test(interp, mbarrier_init_past_its_count_field_aborts, .signal = SIGABRT) {
    mbar_misuse_case(0, "mbarrier.init: count must be in 1..2^20-1");
}
Test(interp, mbarrier_arrive_on_an_object_never_initialised_aborts, .signal = SIGABRT) {
    mbar_misuse_case(1, "mbarrier arrive on an object never initialised");
}
/* mbarrier.init starts the object over: a wait for a phase of the object before it does not
 * let the new object's second phase begin. */
Test(interp, mbarrier_reinitialised_forgets_its_waits, .signal = SIGABRT) { mbar_misuse_case(2, "a missing wait"); }
/* A probe (mbarrier.test_wait) that finds the phase complete is a wait: the next phase may
 * begin, and under ThreadSanitizer it orders the arrivals' stores before the prober's reads. */
Test(interp, mbarrier_probe_that_finds_the_phase_complete_is_a_wait) {
    uint32_t *out = dev(32 * sizeof(uint32_t));
    cr_assert_eq(pa_selftest_mbar_probe(out), cudaSuccess);
    for (int l = 0; l < 32; l++)
        cr_expect_eq(out[l], 100u + 31u - (uint32_t)l);
    cudaFree(out);
}

/* A test that expects an abort fails on an abort for another reason: the process exits with
 * status 86, under ThreadSanitizer too. There, until 2026-12-07, a detector that fired inside the
 * interpreter's own bookkeeping (the wgmma and fence checks) made the exit end in ThreadSanitizer's
 * "finished with ignores enabled" report and an abort, the SIGABRT such a test expected. */
Test(interp, abort_for_another_reason_exits_with_86) {
    fflush(NULL);
    const pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        pa_interp_expect_abort("wgmma: B operand outside dynamic shared memory");
        wgmma_qk_case(PA_WG_NO_PROXY_FENCE, EXPECT_NOTHING); /* aborts: no fence.proxy.async */
        _exit(0);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 86, "the child's status: %#x", (unsigned)status);
}

Test(interp, wgmma_after_a_wait_without_a_new_wgmma_fence_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("with no wgmma.fence since");
    wgmma_qk_case(PA_WG_NO_FENCE_AFTER_WAIT, EXPECT_NOTHING);
}
Test(interp, wgmma_into_in_flight_registers_of_another_shape_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("an in-flight wgmma of another shape owns");
    wgmma_qk_case(PA_WG_OTHER_SHAPE_CHAINED, EXPECT_NOTHING);
}
/* The next wgmma of the chain takes the registers over (poisoned again): the write is seen at
 * its issue, not at the wait. */
Test(interp, wgmma_accumulator_written_between_chained_wgmmas_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("accumulators of an in-flight wgmma were written");
    wgmma_qk_case(PA_WG_ACC_WRITTEN_CHAINED, EXPECT_NOTHING);
}
/* Every byte of every operand element lies in dynamic shared memory: the K tile's last element
 * reaching 2 bytes past it aborts. */
Test(interp, wgmma_operand_past_dynamic_smem_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("wgmma: B operand outside dynamic shared memory");
    wgmma_qk_case(PA_WG_SMEM_2_BYTES_SHORT, EXPECT_NOTHING);
}
Test(interp, wgmma_in_a_cta_of_three_warps_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("the CTA must be whole warpgroups");
    wgmma_qk_case(PA_WG_THREE_WARPS, EXPECT_NOTHING);
}
/* Copies landed through the mbarrier in a phase the consumers have not waited for stay out of
 * the async proxy at their fence, even where they waited for the phase before it. */
Test(interp, wgmma_after_waiting_for_an_earlier_phase_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("written through the generic proxy");
    wgmma_case(pa_selftest_wgmma_qk_mbar, 3, EXPECT_NOTHING);
}

Test(interp, setmaxnreg_count_off_a_multiple_of_8_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("setmaxnreg: the count must be a multiple of 8 in 24..256");
    setmaxnreg_case(3);
}
Test(interp, setmaxnreg_dec_above_the_warps_count_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("setmaxnreg.dec above the warp's current count");
    setmaxnreg_case(4);
}

/* A warp starts with 65536 / threads registers rounded down to 8, as ptxas gives: 96 at 640
 * threads (not 102), so the other four warpgroups cannot take 8 more each from the 24 that
 * warpgroup 0 gives up. */
Test(interp, setmaxnreg_pool_starts_from_counts_rounded_down_to_8, .signal = SIGABRT) {
    pa_interp_expect_abort("setmaxnreg.inc to 104");
    pa_interp_expect_abort("deadlock in block");
    int *out = dev(640 * sizeof(int));
    (void)pa_selftest_setmaxnreg_640(out);
}

/* The exit rule holds in every CTA, not only the first. */
Test(interp, pdl_thread_of_a_later_cta_exiting_without_the_wait_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("exited without executing");
    pdl_case(4, 1);
}
#ifndef PA_SELFTEST_TSAN
/* Each thread is held to the wait, not the CTA: thread 1 reads before its wait after thread 0
 * has waited and exited. */
Test(interp, pdl_read_before_the_wait_after_another_thread_waited_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("before its griddepcontrol.wait");
    pdl_case(5, 1);
}
/* What the consumer may not touch before its wait is what the grid before it on its own stream
 * wrote: a grid on another stream between the two changes nothing, and a producer on another
 * stream closes nothing. */
Test(interp, pdl_closes_what_the_last_grid_of_its_stream_wrote, .signal = SIGABRT) {
    enum { N = 4 * 64 };
    int *buf = dev(N * sizeof(int)), *other = dev(N * sizeof(int)), *out = dev(N * sizeof(int));
    int *unrelated = dev(sizeof(int));
    for (int i = 0; i < N; i++)
        other[i] = 3 * i;
    cudaStream_t a, b;
    cr_assert_eq(cudaStreamCreate(&a), cudaSuccess);
    cr_assert_eq(cudaStreamCreate(&b), cudaSuccess);
    cr_assert_eq(pa_selftest_pdl_streams(buf, other, out, unrelated, b, b, a), cudaSuccess);
    for (int i = 0; i < N; i++)
        cr_assert_eq(out[i], 3 * i + 1000 * i + 7);
    pa_interp_expect_abort("before its griddepcontrol.wait");
    (void)pa_selftest_pdl_streams(buf, other, out, unrelated, a, b, a);
}
#endif

/* The device's launch limits: 1024 threads a block, z up to 64; grid y and z up to 65535. */
Test(interp, launch_limits_are_the_devices) {
    int *out = dev(sizeof(int));
    *out = 0;
    cr_assert_eq(pa_selftest_launch_dims(out, 1, 1, 1, 1024, 1, 1), cudaSuccess);
    cr_assert_eq(*out, 1);
    cr_assert_eq(pa_selftest_launch_dims(out, 1, 1, 1, 1025, 1, 1), cudaErrorInvalidConfiguration);
    cr_assert_eq(pa_selftest_launch_dims(out, 1, 1, 1, 1, 1, 64), cudaSuccess);
    cr_assert_eq(pa_selftest_launch_dims(out, 1, 1, 1, 1, 1, 65), cudaErrorInvalidConfiguration);
    cr_assert_eq(pa_selftest_launch_dims(out, 1, 65536, 1, 1, 1, 1), cudaErrorInvalidConfiguration);
    cr_assert_eq(pa_selftest_launch_dims(out, 1, 1, 65536, 1, 1, 1), cudaErrorInvalidConfiguration);
    cudaFree(out);
}

/* A kernel's first launch learns its static bytes as it runs: past 48 KB with the dynamic ones
 * it fails after the fact. A later launch is refused before it runs: the kernel does not run. */
Test(interp, launch_past_48_kb_with_the_static_bytes_fails) {
    uint32_t *out = dev(sizeof(uint32_t));
    out[0] = 0;
    cr_assert_eq(pa_selftest_static_and_dynamic_smem(out, 44 * 1024 + 4, 0), cudaErrorInvalidValue,
                 "the first launch, 4 KiB static and 44 KiB + 4 dynamic");
    out[0] = 0;
    cr_assert_eq(pa_selftest_static_and_dynamic_smem(out, 44 * 1024 + 4, 0), cudaErrorInvalidValue);
    cr_assert_eq(out[0], 0u, "a refused launch ran");
    cudaFree(out);
}
/* The opt-in limit is an H100's 227 KiB, static bytes included. */
Test(interp, opt_in_limit_is_227_kb_with_the_static_bytes) {
    int v = 0;
    cr_assert_eq(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0), cudaSuccess);
    cr_assert_eq(v, 227 * 1024);
    uint32_t *out = dev(sizeof(uint32_t));
    cr_assert_eq(pa_selftest_static_and_dynamic_smem(out, 1024, 0), cudaSuccess); /* learns the 4 KiB */
    cr_assert_eq(pa_selftest_static_and_dynamic_smem(out, 223 * 1024, 223 * 1024), cudaSuccess);
    cr_assert_eq(out[0], 3u);
    cr_assert_eq(pa_selftest_static_and_dynamic_smem(out, 1024, 224 * 1024), cudaErrorInvalidValue,
                 "224 KiB dynamic and 4 KiB static, past 227 KiB");
    (void)cudaGetLastError();
    cudaFree(out);
}
Test(interp, lowering_a_kernels_smem_attribute_aborts, .signal = SIGABRT) {
    uint32_t *out = dev(sizeof(uint32_t));
    cr_assert_eq(pa_selftest_static_and_dynamic_smem(out, 1024, 48 * 1024), cudaSuccess);
    cr_assert_eq(pa_selftest_static_and_dynamic_smem(out, 1024, 48 * 1024), cudaSuccess, "the same value again");
    pa_interp_expect_abort("lowers a kernel's MaxDynamicSharedMemorySize from 49152 to 40960");
    (void)pa_selftest_static_and_dynamic_smem(out, 1024, 40 * 1024);
}
/* 48 KB of static shared memory is the device's limit, not past it. */
Test(interp, static_smem_of_exactly_48_kb_runs) {
    uint32_t *out = dev(32 * sizeof(uint32_t));
    cr_assert_eq(pa_selftest_static_smem_48k(out), cudaSuccess);
    for (uint32_t t = 0; t < 32; t++)
        cr_expect_eq(out[t], 2 * t);
    cudaFree(out);
}
/* A static variable first met while two CTAs are resident starts as 0xFF bytes in both. */
Test(interp, static_smem_first_met_with_two_resident_ctas_is_poisoned_in_both) {
    uint32_t *out = dev(4 * sizeof(uint32_t));
    setenv("PA_INTERP_CTAS", "2", 1);
    const cudaError_t e = pa_selftest_static_smem(out, 4);
    setenv("PA_INTERP_CTAS", "1", 1);
    cr_assert_eq(e, cudaSuccess);
    for (int b = 0; b < 4; b++)
        cr_expect_eq(out[b], 0xFFFFFFFFu, "CTA %d read %#x before writing its static shared memory", b, out[b]);
    cudaFree(out);
}

#ifndef PA_SELFTEST_TSAN
/* One byte just before the buffer, or just past its end, is seen: the margin's every byte is
 * checked. 5 ints: 12 bytes past the end. */
static void write_byte_case(long i) {
    unsigned char *out = dev(5 * sizeof(int));
    (void)pa_selftest_write_byte_at(out, i);
}
Test(interp, store_of_one_byte_just_past_the_end_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("past its end");
    write_byte_case(5 * sizeof(int));
}
Test(interp, store_of_one_byte_just_before_the_start_aborts, .signal = SIGABRT) {
    pa_interp_expect_abort("before its start");
    write_byte_case(-1);
}

/* A grid leaves what it wrote closed to the host. */
Test(interp, host_read_right_after_a_grid_aborts, .signal = SIGABRT) {
    unsetenv("PA_INTERP_HOST_ACCESS");
    int *d = dev(sizeof(int));
    cr_assert_eq(pa_selftest_write_value(d, 7, NULL), cudaSuccess);
    pa_interp_expect_abort("the host touched device memory");
    volatile int x = d[0];
    (void)x;
}
/* The runtime's copies and sets reach closed device memory, from either side, synchronous or
 * stream-ordered. */
Test(interp, runtime_copies_and_sets_reach_closed_device_memory) {
    unsetenv("PA_INTERP_HOST_ACCESS");
    int *d = dev(8 * sizeof(int)), *e = dev(8 * sizeof(int));
    int h[8], back[8];
    for (int i = 0; i < 8; i++)
        h[i] = 10 + i;
    cr_assert_eq(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
    cr_assert_eq(cudaMemcpy(e, d, sizeof h, cudaMemcpyDeviceToDevice), cudaSuccess);
    cr_assert_eq(cudaMemsetAsync(e, 0, sizeof(int), NULL), cudaSuccess);
    cr_assert_eq(cudaMemcpyAsync(back, e, sizeof back, cudaMemcpyDeviceToHost, NULL), cudaSuccess);
    cr_assert(back[0] == 0 && back[1] == 11 && back[7] == 17, "%d %d %d", back[0], back[1], back[7]);
    cr_assert_eq(cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost), cudaSuccess);
    cr_assert(back[0] == 10 && back[7] == 17, "%d %d", back[0], back[7]);
    cudaFree(d);
    cudaFree(e);
}
#endif

/* Synchronous calls and the batch copy during a capture fail with
 * cudaErrorStreamCaptureUnsupported and invalidate it, as on the device. */
Test(interp, synchronous_calls_during_a_capture_fail_and_invalidate_it) {
    int *a = dev(4 * sizeof(int)), *b = dev(4 * sizeof(int));
    cudaStream_t cap;
    cr_assert_eq(cudaStreamCreate(&cap), cudaSuccess);
    for (int call = 0; call < 6; call++) {
        cr_assert_eq(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal), cudaSuccess);
        cudaError_t e = cudaSuccess;
        void *p = NULL;
        void *dsts[1] = {b};
        const void *srcs[1] = {a};
        size_t sizes[1] = {sizeof(int)}, idx[1] = {0};
        struct cudaMemcpyAttributes at;
        memset(&at, 0, sizeof at);
        at.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
        switch (call) {
        case 0: e = cudaMemcpy(b, a, sizeof(int), cudaMemcpyDeviceToDevice); break;
        case 1: e = cudaMemset(b, 0, sizeof(int)); break;
        case 2: e = cudaMalloc(&p, 16); break;
        case 3: e = cudaDeviceSynchronize(); break;
        case 4: e = cudaStreamSynchronize(cap); break;
        default: e = cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, &at, idx, 1, cap); break;
        }
        cr_assert_eq(e, cudaErrorStreamCaptureUnsupported, "call %d during the capture gave %d", call, (int)e);
        cudaGraph_t g = NULL;
        cr_assert_eq(cudaStreamEndCapture(cap, &g), cudaErrorStreamCaptureInvalidated, "call %d", call);
        (void)cudaGetLastError();
    }
    cudaStreamDestroy(cap);
    cudaFree(a);
    cudaFree(b);
}

/* During a capture a stream-ordered copy or set follows its stream, as a launch does: recorded on
 * the capturing stream (it runs at each replay), run now on another. */
Test(interp, stream_ordered_copies_and_sets_follow_their_stream_during_a_capture) {
    int *a = dev(sizeof(int)), *b = dev(sizeof(int));
    *a = 5;
    *b = 0;
    cudaStream_t cap, other;
    cr_assert_eq(cudaStreamCreate(&cap), cudaSuccess);
    cr_assert_eq(cudaStreamCreate(&other), cudaSuccess);
    cr_assert_eq(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal), cudaSuccess);
    cr_assert_eq(cudaMemcpyAsync(b, a, sizeof(int), cudaMemcpyDeviceToDevice, cap), cudaSuccess);
    cr_assert_eq(*b, 0, "a copy on the capturing stream ran at capture");
    cr_assert_eq(cudaMemsetAsync(a, 0, sizeof(int), other), cudaSuccess);
    cr_assert_eq(*a, 0, "a set on another stream did not run now");
    cr_assert_eq(cudaMemcpyAsync(a, b, sizeof(int), cudaMemcpyDeviceToDevice, other), cudaSuccess);
    cr_assert_eq(*a, 0);
    *a = 6;
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;
    cr_assert_eq(cudaStreamEndCapture(cap, &g), cudaSuccess);
    cr_assert_eq(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    cr_assert_eq(cudaGraphLaunch(ge, cap), cudaSuccess);
    cr_assert_eq(*b, 6, "the replay copied %d", *b);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaStreamDestroy(other);
    cudaStreamDestroy(cap);
    cudaFree(a);
    cudaFree(b);
}

/* PA_INTERP_SCHED=warp runs the lowest ready warp as far as it goes (warp 0's three steps, then
 * warp 1's); the default sweep takes every warp one step at a time. */
Test(interp, warp_schedule_runs_the_lowest_ready_warp_first) {
    int *counter = dev(sizeof(int)), *log = dev(6 * sizeof(int));
    const int sweep[6] = {0, 10, 1, 11, 2, 12}, warp[6] = {0, 1, 2, 10, 11, 12};
    for (int k = 0; k < 2; k++) {
        setenv("PA_INTERP_SCHED", k ? "warp" : "sweep", 1);
        *counter = 0;
        const cudaError_t e = pa_selftest_warp_steps(counter, log);
        unsetenv("PA_INTERP_SCHED");
        cr_assert_eq(e, cudaSuccess);
        for (int i = 0; i < 6; i++)
            cr_expect_eq(log[i], k ? warp[i] : sweep[i], "%s: step %d ran %d", k ? "warp" : "sweep", i, log[i]);
    }
    cudaFree(counter);
    cudaFree(log);
}

/* A batch whose copy writes what another copy reads has no order on the device: it aborts. */
Test(interp, batch_copy_whose_destination_meets_another_copys_source_aborts, .signal = SIGABRT) {
    int *a = dev(4 * sizeof(int)), *b = dev(4 * sizeof(int));
    void *dsts[2] = {b, a + 2};
    const void *srcs[2] = {a, b};
    size_t sizes[2] = {2 * sizeof(int), 2 * sizeof(int)}, idx[1] = {0};
    struct cudaMemcpyAttributes at;
    memset(&at, 0, sizeof at);
    at.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreate(&s), cudaSuccess);
    pa_interp_expect_abort("copy 0's destination meets copy 1's source");
    (void)cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &at, idx, 1, s);
}

/* A copy's kind names its direction: every kind that matches where its pointers live copies
 * (a pointer inside a device allocation is the device's, cudaMallocHost's memory the host's,
 * cudaMemcpyDefault either way, and a copy of no bytes is not checked); one that does not
 * stops the program (undefined on the device), in each direction and through the async form. */
Test(interp, copy_kinds_that_match_their_pointers_copy) {
    int *a = dev(8 * sizeof(int)), *b = dev(8 * sizeof(int)), h[8], *pinned = NULL;
    cr_assert_eq(cudaMallocHost((void **)&pinned, 8 * sizeof(int)), cudaSuccess);
    for (int i = 0; i < 8; i++)
        h[i] = i + 1;
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreate(&s), cudaSuccess);
    cr_assert_eq(cudaMemcpy(a, h, 8 * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
    cr_assert_eq(cudaMemcpyAsync(b + 2, a + 2, 6 * sizeof(int), cudaMemcpyDeviceToDevice, s), cudaSuccess);
    cr_assert_eq(cudaMemcpy(pinned, b + 4, 4 * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    cr_assert_eq(cudaMemcpyAsync(h, pinned, 4 * sizeof(int), cudaMemcpyHostToHost, s), cudaSuccess);
    cr_assert_eq(cudaMemcpy(b, h, 2 * sizeof(int), cudaMemcpyDefault), cudaSuccess);
    cr_assert_eq(cudaMemcpy(h + 4, b, 2 * sizeof(int), cudaMemcpyDefault), cudaSuccess);
    cr_assert_eq(cudaMemcpy(h, h, 0, cudaMemcpyDeviceToDevice), cudaSuccess);
    const int want[8] = {5, 6, 7, 8, 5, 6, 7, 8};
    for (int i = 0; i < 8; i++)
        cr_expect_eq(h[i], want[i], "int %d is %d", i, h[i]);
    cudaStreamDestroy(s);
    cudaFreeHost(pinned);
    cudaFree(a);
    cudaFree(b);
}

Test(interp, host_to_device_copy_between_host_buffers_aborts, .signal = SIGABRT) {
    int h[2] = {1, 2}, g[2];
    pa_interp_expect_abort("cudaMemcpy: cudaMemcpyHostToDevice from host memory to host memory (8 bytes)");
    (void)cudaMemcpy(g, h, sizeof h, cudaMemcpyHostToDevice);
}

Test(interp, device_to_host_copy_into_device_memory_aborts, .signal = SIGABRT) {
    int *a = dev(4 * sizeof(int)), *b = dev(4 * sizeof(int));
    pa_interp_expect_abort("cudaMemcpy: cudaMemcpyDeviceToHost from device memory to device memory (4 bytes)");
    (void)cudaMemcpy(b + 1, a + 3, sizeof(int), cudaMemcpyDeviceToHost);
}

Test(interp, async_device_to_device_copy_from_the_host_aborts, .signal = SIGABRT) {
    int *a = dev(4 * sizeof(int)), h[4] = {0};
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreate(&s), cudaSuccess);
    pa_interp_expect_abort("cudaMemcpyAsync: cudaMemcpyDeviceToDevice from host memory to device memory (16 bytes)");
    (void)cudaMemcpyAsync(a, h, sizeof h, cudaMemcpyDeviceToDevice, s);
}

Test(interp, host_to_host_copy_from_the_device_aborts, .signal = SIGABRT) {
    int *a = dev(4 * sizeof(int)), h[4] = {0};
    pa_interp_expect_abort("cudaMemcpy: cudaMemcpyHostToHost from device memory to host memory (16 bytes)");
    (void)cudaMemcpy(h, a, sizeof h, cudaMemcpyHostToHost);
}

/* Each CTA's shared memory is its own: different threads of two CTAs storing one shared word
 * is no race (under ThreadSanitizer, the history of a CTA's shared memory ends with it). */
Test(interp, ctas_storing_one_shared_word_do_not_race) {
    int *out = dev(4 * sizeof(int));
    cr_assert_eq(pa_selftest_smem_word_per_cta(out, 4), cudaSuccess);
    for (int b = 0; b < 4; b++)
        cr_expect_eq(out[b], b);
    cudaFree(out);
}

#ifdef PA_SELFTEST_TSAN
/* A barrier's generations use two sync objects: thread 0, past a barrier and at the next,
 * releases nothing that thread 1, still to leave the first, acquires. */
Test(tsan, store_and_read_between_two_syncthreads_race, .signal = SIGABRT) {
    pa_interp_expect_abort("ThreadSanitizer: data race");
    pa_interp_expect_abort("write_read_between_barriers(");
    int *out = dev(sizeof(int));
    (void)pa_selftest_write_read_between_barriers(out, 0);
}
Test(tsan, store_and_read_between_two_syncwarps_race, .signal = SIGABRT) {
    pa_interp_expect_abort("ThreadSanitizer: data race");
    pa_interp_expect_abort("write_read_between_barriers(");
    int *out = dev(sizeof(int));
    (void)pa_selftest_write_read_between_barriers(out, 1);
}
/* A cp.async may write its destination from its issue on: a read there that the issue is not
 * ordered with races, even where the copy lands after a barrier that orders the read first. */
Test(tsan, read_of_a_cp_async_destination_unordered_with_its_issue_races, .signal = SIGABRT) {
    pa_interp_expect_abort("ThreadSanitizer: data race");
    pa_interp_expect_abort("read_then_cp_async(");
    uint32_t *src = dev(4 * sizeof(uint32_t)), *out = dev(4 * sizeof(uint32_t));
    memset(src, 0, 4 * sizeof(uint32_t));
    (void)pa_selftest_read_then_cp_async(src, out);
}
#endif
