/* Calls work() 3 times, vfork()s a child that exec()s /bin/true, waits, then calls work() 4
 * more times: the parent's 7 calls and its end belong to the parent. */
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned sink;

void work(void)
{
    for (int i = 0; i < 1000; i++)
        sink += i;
}

int main(void)
{
    for (int i = 0; i < 3; i++)
        work();
    pid_t pid = vfork();
    if (pid == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    for (int i = 0; i < 4; i++)
        work();
    return WEXITSTATUS(status);
}
