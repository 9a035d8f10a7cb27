/* pa_interp_switch(void **save, void *load): interp.cpp's thread switch on
 * x86-64 (System V). Pushes the callee-saved registers on the running stack,
 * stores the stack pointer at *save, loads `load` as the stack pointer and
 * pops the registers saved there; the return goes to whatever switched out
 * from that stack (or, on a thread's first entry, to the entry function the
 * interpreter put there). The kernels change neither MXCSR nor the x87 control
 * word, so those are not saved. Elsewhere interp.cpp uses _setjmp/_longjmp
 * and this file is empty. */
#if defined(__x86_64__)
    .text
    .globl pa_interp_switch
    .hidden pa_interp_switch
    .type pa_interp_switch, @function
pa_interp_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size pa_interp_switch, .-pa_interp_switch
#endif
#if defined(__linux__) && defined(__ELF__)
    .section .note.GNU-stack, "", @progbits
#endif
