/* Built with plain gcc -O2 (test_probes.py): raw_nanosleep's first instruction is the system
 * call, so a thread waiting in it (raw_sleep's second thread, 60 s at a time) is stopped inside
 * the 5 bytes a probe of it would displace. Prints its pid, then waits to be killed. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

__asm__(".text\n.globl raw_nanosleep\n.type raw_nanosleep,@function\nraw_nanosleep:\n"
        "  syscall\n  nopl 0(%rax)\n  ret\n.size raw_nanosleep, .-raw_nanosleep\n");

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec t = {60, 0};
        long r;
        __asm__ volatile("mov $35, %%eax\n  call raw_nanosleep"
                         : "=a"(r)
                         : "D"(&t), "S"(0)
                         : "rcx", "r11", "memory");
    }
    return NULL;
}

int main(void)
{
    pthread_t th;
    pthread_create(&th, NULL, sleeper, NULL);
    printf("%d\n", (int)getpid());
    fflush(stdout);
    for (;;)
        pause();
}
