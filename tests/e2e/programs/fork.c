/* The parent calls parent_work() twice, its forked child child_work() three times. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned sink;

void parent_work(void) { sink += 1; }
void child_work(void) { sink += 2; }

int main(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        for (int i = 0; i < 3; i++)
            child_work();
        return 0;
    }
    for (int i = 0; i < 2; i++)
        parent_work();
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
