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
/* xmm0-15 to and from the 256 bytes at rsp. */
        .macro SAVE_XMM
        .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        movdqu  %xmm\n, 16*\n(%rsp)
        .endr
        .endm
        .macro LOAD_XMM
        .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        movdqu  16*\n(%rsp), %xmm\n
        .endr
        .endm
/* A call with rsp aligned to 16, rsp kept in rbx (callee-saved) and restored after. */
        .macro ALIGNED_CALL fn
        push    %rbx
        mov     %rsp, %rbx
        and     $-16, %rsp
        call    \fn
        mov     %rbx, %rsp
        pop     %rbx
        .endm

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
        SAVE_XMM
        mov     %r11, %rdi
        lea     328(%rsp), %rsi
        ALIGNED_CALL plx_probe_enter
        mov     %rax, %r11
        LOAD_XMM
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
        SAVE_XMM
        ALIGNED_CALL plx_probe_exit
        mov     %rax, 328(%rsp)
        LOAD_XMM
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
