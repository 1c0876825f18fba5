/* Shared halves of every probe's trampoline (probe.c). x86-64 System V only.
 *
 * Every register is preserved, not only the ABI's callee-saved ones: with interprocedural
 * register allocation (GCC's -fipa-ra) a caller keeps values in the registers it knows the
 * callee leaves alone, so a probe may change no register but the stack below rsp.
 *
 * plx_probe_entry_common: reached from a probe's stub (`push %r11; movabs $probe, %r11;
 * jmp *common`) at the probed function's entry, before its first instruction ran. Saves every
 * general register and xmm0-15, calls plx_probe_enter(probe, &return_address), and continues
 * at the address it returns (the probe's relocated first instructions) through `ret`, with
 * every register as it was and rsp as at the function's entry.
 *
 * plx_probe_exit_common: reached by the probed function's `ret` when plx_probe_enter replaced
 * its return address. Saves every register, calls plx_probe_exit() and returns to the original
 * return address it gives, through a slot reserved first.
 *
 * Stack: the C halves are called with rsp aligned to 16 by hand (kept in rbx): a caller that
 * knows its callee needs no alignment (GCC's IPA) calls it with rsp at any multiple of 8.
 * Nothing is below rsp at a function's entry or after its return (no red zone in use). */
        .text
        .globl  plx_probe_entry_common
        .hidden plx_probe_entry_common
        .type   plx_probe_entry_common, @function
plx_probe_entry_common:
        /* [rsp] = the caller's r11 (pushed by the stub), [rsp+8] = the return address */
        push    %rax
        push    %rcx
        push    %rdx
        push    %rsi
        push    %rdi
        push    %r8
        push    %r9
        push    %r10
        sub     $256, %rsp
        movdqu  %xmm0, 0(%rsp)
        movdqu  %xmm1, 16(%rsp)
        movdqu  %xmm2, 32(%rsp)
        movdqu  %xmm3, 48(%rsp)
        movdqu  %xmm4, 64(%rsp)
        movdqu  %xmm5, 80(%rsp)
        movdqu  %xmm6, 96(%rsp)
        movdqu  %xmm7, 112(%rsp)
        movdqu  %xmm8, 128(%rsp)
        movdqu  %xmm9, 144(%rsp)
        movdqu  %xmm10, 160(%rsp)
        movdqu  %xmm11, 176(%rsp)
        movdqu  %xmm12, 192(%rsp)
        movdqu  %xmm13, 208(%rsp)
        movdqu  %xmm14, 224(%rsp)
        movdqu  %xmm15, 240(%rsp)
        mov     %r11, %rdi
        lea     328(%rsp), %rsi
        push    %rbx
        mov     %rsp, %rbx
        and     $-16, %rsp
        call    plx_probe_enter
        mov     %rbx, %rsp
        pop     %rbx
        mov     %rax, %r11
        movdqu  0(%rsp), %xmm0
        movdqu  16(%rsp), %xmm1
        movdqu  32(%rsp), %xmm2
        movdqu  48(%rsp), %xmm3
        movdqu  64(%rsp), %xmm4
        movdqu  80(%rsp), %xmm5
        movdqu  96(%rsp), %xmm6
        movdqu  112(%rsp), %xmm7
        movdqu  128(%rsp), %xmm8
        movdqu  144(%rsp), %xmm9
        movdqu  160(%rsp), %xmm10
        movdqu  176(%rsp), %xmm11
        movdqu  192(%rsp), %xmm12
        movdqu  208(%rsp), %xmm13
        movdqu  224(%rsp), %xmm14
        movdqu  240(%rsp), %xmm15
        add     $256, %rsp
        pop     %r10
        pop     %r9
        pop     %r8
        pop     %rdi
        pop     %rsi
        pop     %rdx
        pop     %rcx
        pop     %rax
        xchg    %r11, (%rsp)
        ret
        .size   plx_probe_entry_common, .-plx_probe_entry_common

        .globl  plx_probe_exit_common
        .hidden plx_probe_exit_common
        .type   plx_probe_exit_common, @function
plx_probe_exit_common:
        sub     $8, %rsp
        push    %rax
        push    %rcx
        push    %rdx
        push    %rsi
        push    %rdi
        push    %r8
        push    %r9
        push    %r10
        push    %r11
        sub     $256, %rsp
        movdqu  %xmm0, 0(%rsp)
        movdqu  %xmm1, 16(%rsp)
        movdqu  %xmm2, 32(%rsp)
        movdqu  %xmm3, 48(%rsp)
        movdqu  %xmm4, 64(%rsp)
        movdqu  %xmm5, 80(%rsp)
        movdqu  %xmm6, 96(%rsp)
        movdqu  %xmm7, 112(%rsp)
        movdqu  %xmm8, 128(%rsp)
        movdqu  %xmm9, 144(%rsp)
        movdqu  %xmm10, 160(%rsp)
        movdqu  %xmm11, 176(%rsp)
        movdqu  %xmm12, 192(%rsp)
        movdqu  %xmm13, 208(%rsp)
        movdqu  %xmm14, 224(%rsp)
        movdqu  %xmm15, 240(%rsp)
        push    %rbx
        mov     %rsp, %rbx
        and     $-16, %rsp
        call    plx_probe_exit
        mov     %rbx, %rsp
        pop     %rbx
        mov     %rax, 328(%rsp)
        movdqu  0(%rsp), %xmm0
        movdqu  16(%rsp), %xmm1
        movdqu  32(%rsp), %xmm2
        movdqu  48(%rsp), %xmm3
        movdqu  64(%rsp), %xmm4
        movdqu  80(%rsp), %xmm5
        movdqu  96(%rsp), %xmm6
        movdqu  112(%rsp), %xmm7
        movdqu  128(%rsp), %xmm8
        movdqu  144(%rsp), %xmm9
        movdqu  160(%rsp), %xmm10
        movdqu  176(%rsp), %xmm11
        movdqu  192(%rsp), %xmm12
        movdqu  208(%rsp), %xmm13
        movdqu  224(%rsp), %xmm14
        movdqu  240(%rsp), %xmm15
        add     $256, %rsp
        pop     %r11
        pop     %r10
        pop     %r9
        pop     %r8
        pop     %rdi
        pop     %rsi
        pop     %rdx
        pop     %rcx
        pop     %rax
        ret
        .size   plx_probe_exit_common, .-plx_probe_exit_common

        .section .note.GNU-stack,"",@progbits
