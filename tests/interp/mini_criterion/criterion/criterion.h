/* A minimal stand-in for Criterion's <criterion/criterion.h>, for the
 * interp-tsan programs only: Criterion's sandbox cannot start under
 * ThreadSanitizer (its inheritable arena is refused, Snaipe/Criterion#274).
 * It covers what tests/gpu uses: Test() with .signal and .timeout,
 * cr_assert, cr_assert_eq, cr_assert_lt, cr_assert_gt, cr_assert_fail,
 * cr_expect_eq, cr_skip_test and cr_log_info.
 * Each test runs in a forked child; the runner (mini_criterion.c) takes
 * --filter=PATTERN (extended globs on suite/test, as Criterion) and
 * --tap=FILE, and ignores -jN. */
#ifndef PA_MINI_CRITERION_H
#define PA_MINI_CRITERION_H

#ifdef __cplusplus
extern "C" {
#endif

struct pa_mc_opts {
    int unused_; /* lets Test(s, n) with no options expand to { 0 } */
    int signal;
    double timeout;
};

void pa_mc_register(const char *suite, const char *name, void (*fn)(void), const struct pa_mc_opts *opts);
/* No format attribute: the message is optional, and "" is its empty form. */
void pa_mc_fail(const char *file, int line, const char *expr, int fatal, const char *fmt, ...);
void pa_mc_skip(const char *fmt, ...) __attribute__((noreturn));
void pa_mc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#define Test(suite, name, ...)                                                                                         \
    static void pa_mc_##suite##_##name(void);                                                                          \
    __attribute__((constructor)) static void pa_mc_reg_##suite##_##name(void) {                                        \
        static const struct pa_mc_opts opts = {0, ##__VA_ARGS__};                                                      \
        pa_mc_register(#suite, #name, pa_mc_##suite##_##name, &opts);                                                  \
    }                                                                                                                  \
    static void pa_mc_##suite##_##name(void)

#define cr_assert(cond, ...)                                                                                           \
    do {                                                                                                               \
        if (!(cond))                                                                                                   \
            pa_mc_fail(__FILE__, __LINE__, #cond, 1, "" __VA_ARGS__);                                                  \
    } while (0)
#define cr_expect(cond, ...)                                                                                           \
    do {                                                                                                               \
        if (!(cond))                                                                                                   \
            pa_mc_fail(__FILE__, __LINE__, #cond, 0, "" __VA_ARGS__);                                                  \
    } while (0)
#define cr_assert_eq(a, b, ...)                                                                                        \
    do {                                                                                                               \
        if (!((a) == (b)))                                                                                             \
            pa_mc_fail(__FILE__, __LINE__, #a " == " #b, 1, "" __VA_ARGS__);                                           \
    } while (0)
#define cr_assert_lt(a, b, ...)                                                                                        \
    do {                                                                                                               \
        if (!((a) < (b)))                                                                                              \
            pa_mc_fail(__FILE__, __LINE__, #a " < " #b, 1, "" __VA_ARGS__);                                            \
    } while (0)
#define cr_assert_gt(a, b, ...)                                                                                        \
    do {                                                                                                               \
        if (!((a) > (b)))                                                                                              \
            pa_mc_fail(__FILE__, __LINE__, #a " > " #b, 1, "" __VA_ARGS__);                                            \
    } while (0)
#define cr_expect_eq(a, b, ...)                                                                                        \
    do {                                                                                                               \
        if (!((a) == (b)))                                                                                             \
            pa_mc_fail(__FILE__, __LINE__, #a " == " #b, 0, "" __VA_ARGS__);                                           \
    } while (0)
#define cr_assert_fail(...) pa_mc_fail(__FILE__, __LINE__, "cr_assert_fail", 1, "" __VA_ARGS__)
#define cr_skip_test(...) pa_mc_skip("" __VA_ARGS__)
#define cr_log_info(...) pa_mc_log(__VA_ARGS__)

#endif
