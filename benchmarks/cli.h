/* Shared pieces of the `pagedattn` CLI. */
#ifndef PA_CLI_H
#define PA_CLI_H

#include <stdint.h>

#include "pagedattn/pagedattn.h"

/* Exit codes: stable, documented in `pagedattn --help`. */
enum {
    PA_CLI_EXIT_OK = 0,
    PA_CLI_EXIT_FAIL = 1,      /* a check found mismatches, or an op failed */
    PA_CLI_EXIT_USAGE = 2,     /* bad flags or values */
    PA_CLI_EXIT_NO_DEVICE = 3, /* the command needs a GPU and there is none */
};

/* Subcommands implemented in other files. */
int pa_cmd_plan(int argc, char **argv);   /* benchmarks/cmd_plan.c */
int pa_bench_plan(int argc, char **argv); /* `bench plan`, benchmarks/cmd_plan.c */

/* Strict integer parsing for flags: whole string, range-checked. Prints one
 * error line naming the flag and returns 0 on failure. */
int pa_cli_parse_int(const char *flag, const char *s, long long lo, long long hi, long long *out);
/* Monotonic wall clock in seconds. */
double pa_cli_now(void);

#endif
