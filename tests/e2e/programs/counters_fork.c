/* Parent and fork()ed child each call work() 20 times and signal themselves SIGUSR1 (the
 * counters reload signal) before the 11th call: each reloads on its own signal. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) void work(int i)
{
    volatile int x = i;
    (void)x;
}

int main(void)
{
    pid_t child = fork();
    for (int i = 0; i < 20; i++) {
        if (i == 10) {
            kill(getpid(), SIGUSR1);
            usleep(200000); /* the reload thread reads the file meanwhile */
        }
        work(i);
    }
    if (child > 0)
        waitpid(child, NULL, 0);
    return 0;
}
