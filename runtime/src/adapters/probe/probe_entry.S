/* Shared halves of every probe's trampoline (probe.c). x86-64 System V only.
 *
 * plx_probe_entry_common: reached from a probe's stub (`movabs $probe, %r11; jmp *common`)
 * at the probed function's entry, before its first instruction ran. Saves every register that
 * can carry an argument (rdi rsi rdx rcx r8 r9, rax = vector count of varargs, r10 = static
 * chain, xmm0-7), calls plx_probe_enter(probe, &return_address) and continues at the address it
 * returns (the probe's relocated first instructions), with every register as it was.
 *
 * plx_probe_exit_common: reached by the probed function's `ret` when plx_probe_enter replaced
 * its return address. Saves the return registers (rax rdx xmm0 xmm1), calls plx_probe_exit()
 * and jumps to the original return address it returns.
 *
 * Stack: at a function's entry rsp = 8 mod 16; after the 8 pushes and 136 bytes, 0 mod 16 for
 * the call. The exit half is entered after a `ret` (rsp = 0 mod 16): 2 pushes and 48 bytes keep
 * it there. Nothing is below rsp at a function entry or after its return (no red zone in use). */
        .text
        .globl  plx_probe_entry_common
        .hidden plx_probe_entry_common
        .type   plx_probe_entry_common, @function
plx_probe_entry_common:
        push    %rax
        push    %rdi
        push    %rsi
        push    %rdx
        push    %rcx
        push    %r8
        push    %r9
        push    %r10
        sub     $136, %rsp
        movdqu  %xmm0, 0(%rsp)
        movdqu  %xmm1, 16(%rsp)
        movdqu  %xmm2, 32(%rsp)
        movdqu  %xmm3, 48(%rsp)
        movdqu  %xmm4, 64(%rsp)
        movdqu  %xmm5, 80(%rsp)
        movdqu  %xmm6, 96(%rsp)
        movdqu  %xmm7, 112(%rsp)
        mov     %r11, %rdi
        lea     200(%rsp), %rsi
        call    plx_probe_enter
        mov     %rax, %r11
        movdqu  0(%rsp), %xmm0
        movdqu  16(%rsp), %xmm1
        movdqu  32(%rsp), %xmm2
        movdqu  48(%rsp), %xmm3
        movdqu  64(%rsp), %xmm4
        movdqu  80(%rsp), %xmm5
        movdqu  96(%rsp), %xmm6
        movdqu  112(%rsp), %xmm7
        add     $136, %rsp
        pop     %r10
        pop     %r9
        pop     %r8
        pop     %rcx
        pop     %rdx
        pop     %rsi
        pop     %rdi
        pop     %rax
        jmp     *%r11
        .size   plx_probe_entry_common, .-plx_probe_entry_common

        .globl  plx_probe_exit_common
        .hidden plx_probe_exit_common
        .type   plx_probe_exit_common, @function
plx_probe_exit_common:
        push    %rax
        push    %rdx
        sub     $48, %rsp
        movdqu  %xmm0, 0(%rsp)
        movdqu  %xmm1, 16(%rsp)
        call    plx_probe_exit
        mov     %rax, %r11
        movdqu  0(%rsp), %xmm0
        movdqu  16(%rsp), %xmm1
        add     $48, %rsp
        pop     %rdx
        pop     %rax
        jmp     *%r11
        .size   plx_probe_exit_common, .-plx_probe_exit_common

        .section .note.GNU-stack,"",@progbits
