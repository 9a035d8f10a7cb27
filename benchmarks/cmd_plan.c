/* `pagedattn plan` and `pagedattn bench plan`: placeholder until the host
 * layer lands. */
#include <stdio.h>

#include "cli.h"

int pa_cmd_plan(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "pagedattn plan: not implemented yet\n");
    return PA_CLI_EXIT_USAGE;
}

int pa_bench_plan(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "pagedattn bench plan: not implemented yet\n");
    return PA_CLI_EXIT_USAGE;
}
