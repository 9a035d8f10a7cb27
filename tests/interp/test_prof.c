/* The memory-access proxies of pagedattn-interp (prof.cpp) on a kernel whose
 * answer is known: 32 lanes read one float each from global memory at a
 * stride and write and read shared memory at another. Exit 0 when every
 * figure is the one the access pattern implies. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selftest_kernels.h"

int pa_prof_totals(const char *part, long out[6]);
int pa_prof_top_where(const char *part, char *buf, size_t len);

static int failures;

static void expect(const char *what, long got, long want) {
    if (got != want) {
        fprintf(stderr, "FAIL %s: %ld, expected %ld\n", what, got, want);
        failures++;
    }
}

int main(void) {
    /* the per-instruction figures too (read at the first request) */
    setenv("PA_INTERP_PROF_TOP", "3", 1);
    float *src = NULL, *out = NULL;
    if (cudaMalloc((void **)&src, 32 * 32 * sizeof(float)) != cudaSuccess ||
        cudaMalloc((void **)&out, 32 * sizeof(float)) != cudaSuccess)
        return 2;
    memset(src, 0, 32 * 32 * sizeof(float));
    /* stride 1: one 128-byte line, 4 sectors; shared stride 1: no conflict */
    pa_selftest_strided_access(src, out, 1, 1);
    long t[6];
    if (!pa_prof_totals("strided_access", t)) {
        fprintf(stderr, "FAIL no figures for strided_access\n");
        return 1;
    }
    /* requests: the global read and the global write (the output), 4 sectors each */
    expect("global requests", t[0], 2);
    expect("global sectors, stride 1", t[1], 8);
    expect("ideal sectors, stride 1", t[2], 8);
    /* shared: the store and the load, one wavefront each */
    expect("shared requests", t[3], 2);
    expect("shared wavefronts, stride 1", t[4], 2);
    /* stride 32 floats: 32 sectors for the read (ideal 4); shared stride 32:
     * every lane in bank 0, 32 wavefronts per access */
    pa_selftest_strided_access(src, out, 32, 32);
    long u[6];
    pa_prof_totals("strided_access", u);
    expect("global sectors, stride 32", u[1] - t[1], 32 + 4);
    expect("ideal sectors, stride 32", u[2] - t[2], 4 + 4);
    expect("shared wavefronts, stride 32", u[4] - t[4], 64);
    expect("ideal wavefronts, stride 32", u[5] - t[5], 2);
    /* shared stride 2: two lanes per bank, 2 wavefronts per access */
    pa_selftest_strided_access(src, out, 1, 2);
    long v[6];
    pa_prof_totals("strided_access", v);
    expect("shared wavefronts, stride 2", v[4] - u[4], 4);
    /* The costliest instruction is one of the kernel's two lines with a shared
     * access (the store or the load at stride 32: 31 wavefronts beyond the
     * ideal each), named by its source line in selftest_kernels.cu. */
    char where[512] = "", line_a[64], line_b[64];
    snprintf(line_a, sizeof line_a, "selftest_kernels.cu:%d", pa_selftest_strided_lines[0]);
    snprintf(line_b, sizeof line_b, "selftest_kernels.cu:%d", pa_selftest_strided_lines[1]);
    if (!pa_prof_top_where("strided_access", where, sizeof where) ||
        (!strstr(where, line_a) && !strstr(where, line_b))) {
        fprintf(stderr, "FAIL the costliest instruction: '%s', expected %s or %s\n", where, line_a, line_b);
        failures++;
    }
    printf("%s\n", failures ? "memory-access proxies: FAILED" : "memory-access proxies: ok");
    return failures ? 1 : 0;
}
