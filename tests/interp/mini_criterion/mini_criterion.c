/* The runner behind mini_criterion/criterion/criterion.h (interp-tsan only). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "criterion/criterion.h"

#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MAX_TESTS = 512, EXIT_FAILED = 1, EXIT_SKIPPED = 77 };

static struct {
    const char *suite, *name;
    void (*fn)(void);
    const struct pa_mc_opts *opts;
} tests[MAX_TESTS];
static int n_tests;
static int expect_failed;

void pa_mc_register(const char *suite, const char *name, void (*fn)(void), const struct pa_mc_opts *opts) {
    if (n_tests == MAX_TESTS) {
        fprintf(stderr, "mini_criterion: more than %d tests\n", MAX_TESTS);
        abort();
    }
    tests[n_tests].suite = suite;
    tests[n_tests].name = name;
    tests[n_tests].fn = fn;
    tests[n_tests].opts = opts;
    n_tests++;
}

/* One line on stderr: the tag, then the formatted message. */
static void say(const char *tag, const char *fmt, va_list ap) {
    fputs(tag, stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void pa_mc_fail(const char *file, int line, const char *expr, int fatal, const char *fmt, ...) {
    fprintf(stderr, "[----] %s:%d: Assertion Failed\n[----]   %s\n", file, line, expr);
    if (fmt && *fmt) {
        va_list ap;
        va_start(ap, fmt);
        say("[----]   ", fmt, ap);
        va_end(ap);
    }
    if (fatal) {
        fflush(NULL);
        _exit(EXIT_FAILED);
    }
    expect_failed = 1;
}

void pa_mc_skip(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    say("[SKIP] ", fmt, ap);
    va_end(ap);
    fflush(NULL);
    _exit(EXIT_SKIPPED);
}

void pa_mc_log(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    say("[----] ", fmt, ap);
    va_end(ap);
}

/* Test i's id, suite/name, into id; nonzero when the filter selects it. */
static int selected_id(int i, const char *filter, char *id, size_t n) {
    snprintf(id, n, "%s/%s", tests[i].suite, tests[i].name);
    return fnmatch(filter, id, FNM_EXTMATCH) == 0;
}

int main(int argc, char **argv) {
    const char *filter = "*", *tap_path = NULL;
    int list = 0;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--filter=", 9))
            filter = argv[i] + 9;
        else if (!strcmp(argv[i], "--list"))
            list = 1;
        else if (!strncmp(argv[i], "--tap=", 6))
            tap_path = argv[i] + 6;
        else if (!strncmp(argv[i], "-j", 2))
            continue;
        else {
            fprintf(stderr, "usage: %s [--filter=PATTERN] [--tap=FILE] [-jN] [--list]\n", argv[0]);
            return 2;
        }
    }
    /* --list: the ids the filter selects, one a line on stdout, nothing run
     * (scripts/plant-bugs.sh checks a plant's tests are among CI's). */
    if (list) {
        for (int i = 0; i < n_tests; i++) {
            char id[256];
            if (selected_id(i, filter, id, sizeof id))
                puts(id);
        }
        return 0;
    }
    FILE *tap = tap_path ? fopen(tap_path, "w") : NULL;
    int selected = 0, passed = 0, failed = 0, skipped = 0;
    for (int i = 0; i < n_tests; i++) {
        char id[256];
        selected += selected_id(i, filter, id, sizeof id);
    }
    if (tap)
        fprintf(tap, "TAP version 13\n1..%d\n", selected);
    int k = 0;
    for (int i = 0; i < n_tests; i++) {
        char id[256];
        if (!selected_id(i, filter, id, sizeof id))
            continue;
        k++;
        fflush(NULL);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        const pid_t pid = fork();
        if (pid == 0) {
            if (tests[i].opts->timeout > 0)
                alarm((unsigned)tests[i].opts->timeout);
            tests[i].fn();
            fflush(NULL);
            _exit(expect_failed ? EXIT_FAILED : 0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        const int want_sig = tests[i].opts->signal;
        const char *verdict;
        if (WIFSIGNALED(st))
            verdict = WTERMSIG(st) == want_sig && want_sig ? "ok" : "crash";
        else if (WEXITSTATUS(st) == EXIT_SKIPPED)
            verdict = "skip";
        else
            verdict = WEXITSTATUS(st) == 0 && !want_sig ? "ok" : "fail";
        if (!strcmp(verdict, "ok"))
            passed++;
        else if (!strcmp(verdict, "skip"))
            skipped++;
        else
            failed++;
        fprintf(stderr, "[%s] %s::%s",
                !strcmp(verdict, "ok")     ? "PASS"
                : !strcmp(verdict, "skip") ? "SKIP"
                                           : "FAIL",
                tests[i].suite, tests[i].name);
        if (!strcmp(verdict, "crash"))
            fprintf(stderr, ": CRASH! (signal %d)", WTERMSIG(st));
        /* Each test's wall time, as Criterion's --verbose prints it: what CI's budget is spent on. */
        fprintf(stderr, " (%.2fs)\n", secs);
        if (tap)
            fprintf(tap, "%s %d - %s::%s%s\n", !strcmp(verdict, "ok") || !strcmp(verdict, "skip") ? "ok" : "not ok", k,
                    tests[i].suite, tests[i].name, !strcmp(verdict, "skip") ? " # SKIP" : "");
    }
    fprintf(stderr, "[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Skipped: %d\n", selected, passed,
            failed, skipped);
    if (tap)
        fclose(tap);
    return failed ? 1 : 0;
}
