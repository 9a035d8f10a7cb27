/* `pagedattn check|bench prefill`. */
#include "cli.h"

int pa_run_prefill(const pa_op_opts *o, int check, int gpu) {
    (void)o;
    (void)check;
    (void)gpu;
    fprintf(stderr, "pagedattn: the prefill op is not in this build yet\n");
    return PA_CLI_EXIT_USAGE;
}
