/* Shared halves of every probe's trampoline (probe.c) and the thunk of its slow paths.
 * x86-64 System V only.
 *
 * A probe may change no register but the stack below rsp: with interprocedural register
 * allocation (GCC's -fipa-ra) a caller keeps values in the registers, general or vector, it
 * knows the callee leaves alone.
 *
 * Invariant (vector state): the fast path, the trampolines below and probe_fast.c (compiled
 * -mgeneral-regs-only), executes no instruction that reads or writes a vector, x87 or MXCSR
 * register, so the trampolines save only the general registers. Everything else the probe
 * reaches (the runtime compiled normally, libc) runs inside plx_probe_vcall, which saves the
 * whole state such code may change first (XSAVE of x87, SSE, AVX and AVX-512's components:
 * xmm, ymm and zmm in full, opmasks, MXCSR and the x87 control word; FXSAVE without XSAVE), and
 * restores it after. Between the two the upper halves are cleared (vzeroupper), so the
 * runtime's legacy-SSE code pays no AVX-SSE transition for the program's dirty ymm state. The
 * C halves called through it return integers only (xmm0 is restored, not returned).
 *
 * plx_probe_entry_common: called from a probe's stub (`push %r11; movabs $probe, %r11;
 * call *common; pop %r11`, then the relocated first instructions) at the probed function's
 * entry. Saves the other caller-saved general registers, calls plx_probe_enter(probe,
 * &return_address) and returns to the stub, which restores r11. Its call and ret pair up, so
 * the processor's return predictions stay in step with the stack.
 *
 * plx_probe_exit_common: reached by the probed function's `ret` when plx_probe_enter replaced
 * its return address. Saves the caller-saved general registers, calls plx_probe_exit() and
 * jumps (an indirect jump, not a ret: the function's ret consumed the prediction of its
 * caller's call already) to the original return address it gives.
 *
 * Stack: the C halves are called with rsp aligned to 16 by hand (kept in rbx): a caller that
 * knows its callee needs no alignment (GCC's IPA) calls it with rsp at any multiple of 8.
 * Nothing is below rsp at a function's entry or after its return (no red zone in use); the
 * exit's jump reads its target from the 8 bytes below rsp, inside the red zone that the
 * kernel's signal delivery skips. */

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
        /* [rsp] = into the stub, [rsp+8] = the caller's r11, [rsp+16] = the return address */
        push    %rax
        push    %rcx
        push    %rdx
        push    %rsi
        push    %rdi
        push    %r8
        push    %r9
        push    %r10
        mov     %r11, %rdi
        lea     80(%rsp), %rsi
        ALIGNED_CALL plx_probe_enter
        pop     %r10
        pop     %r9
        pop     %r8
        pop     %rdi
        pop     %rsi
        pop     %rdx
        pop     %rcx
        pop     %rax
        ret
        .size   plx_probe_entry_common, .-plx_probe_entry_common

        .globl  plx_probe_exit_common
        .hidden plx_probe_exit_common
        .type   plx_probe_exit_common, @function
plx_probe_exit_common:
        /* rsp as after the function's return; lea, not sub: the flags stay as it left them */
        lea     -8(%rsp), %rsp
        push    %rax
        push    %rcx
        push    %rdx
        push    %rsi
        push    %rdi
        push    %r8
        push    %r9
        push    %r10
        push    %r11
        ALIGNED_CALL plx_probe_exit
        mov     %rax, 72(%rsp)
        pop     %r11
        pop     %r10
        pop     %r9
        pop     %r8
        pop     %rdi
        pop     %rsi
        pop     %rdx
        pop     %rcx
        pop     %rax
        lea     8(%rsp), %rsp
        jmp     *-8(%rsp)
        .size   plx_probe_exit_common, .-plx_probe_exit_common

/* plx_probe_vcall: calls *%r11 with the arguments in rdi, rsi, rdx, rcx, r8 and r9 as given
 * (none on the stack), the vector, x87 and MXCSR state (plx_probe_xsave_mask, set by probe.c
 * when libplx.so is loaded) and errno saved before and restored after; returns its rax and
 * rdx. A C function to the caller (probe_fast.c): it changes only caller-saved registers. */
        .globl  plx_probe_vcall
        .hidden plx_probe_vcall
        .type   plx_probe_vcall, @function
plx_probe_vcall:
        push    %rbp
        mov     %rsp, %rbp
        push    %rdi
        push    %rsi
        push    %rdx
        push    %rcx
        push    %r8
        push    %r9
        push    %r11
        sub     plx_probe_xsave_size(%rip), %rsp
        and     $-64, %rsp
        xor     %eax, %eax                      /* the XSAVE header: XRSTOR wants zeros */
        .irp o, 512,520,528,536,544,552,560,568
        mov     %rax, \o(%rsp)
        .endr
        mov     plx_probe_xsave_mask(%rip), %rax
        test    %rax, %rax
        jz      1f
        xor     %edx, %edx
        xsave   (%rsp)
        test    $4, %al                         /* AVX */
        jz      2f
        vzeroupper
        jmp     2f
1:      fxsave  (%rsp)
2:      sub     $16, %rsp                       /* errno's address and value */
        call    __errno_location@PLT
        mov     %rax, (%rsp)
        mov     (%rax), %eax
        mov     %eax, 8(%rsp)
        mov     -8(%rbp), %rdi
        mov     -16(%rbp), %rsi
        mov     -24(%rbp), %rdx
        mov     -32(%rbp), %rcx
        mov     -40(%rbp), %r8
        mov     -48(%rbp), %r9
        mov     -56(%rbp), %r11
        call    *%r11
        mov     (%rsp), %rcx
        mov     8(%rsp), %esi
        mov     %esi, (%rcx)
        add     $16, %rsp
        mov     %rax, %rcx                      /* the results, over the restore */
        mov     %rdx, %rsi
        mov     plx_probe_xsave_mask(%rip), %rax
        test    %rax, %rax
        jz      3f
        xor     %edx, %edx
        xrstor  (%rsp)
        jmp     4f
3:      fxrstor (%rsp)
4:      mov     %rcx, %rax
        mov     %rsi, %rdx
        leave
        ret
        .size   plx_probe_vcall, .-plx_probe_vcall

/* plx_probe_v_NAME: plx_NAME called through plx_probe_vcall, with the same arguments and
 * result; probe_fast.c calls these under the original names (see its header). */
        .macro VTHUNK name
        .globl  plx_probe_v_\name
        .hidden plx_probe_v_\name
        .type   plx_probe_v_\name, @function
plx_probe_v_\name:
        lea     plx_\name(%rip), %r11
        jmp     plx_probe_vcall
        .size   plx_probe_v_\name, .-plx_probe_v_\name
        .endm

        VTHUNK  clock_slow
        VTHUNK  trace_slow
        VTHUNK  node_new
        VTHUNK  node_unless_throttled
        VTHUNK  throttle_check
        VTHUNK  trace_throttle_leave
        VTHUNK  frame_enter_slow
        VTHUNK  frame_exit_slow
        VTHUNK  probe_enter_slow

        .section .note.GNU-stack,"",@progbits
