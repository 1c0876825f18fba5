/* The parent calls parent_work() twice, the child child_work() three times. */
#include <sys/wait.h>
#include <unistd.h>
static volatile int sink;
void parent_work(void) { sink++; }
void child_work(void) { sink++; }
int main(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 3; i++)
            child_work();
        return 0;
    }
    for (int i = 0; i < 2; i++)
        parent_work();
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
