/* The parent forks CHILDREN children one after another; each calls child_work() and _exit(0)
 * inside main, whose call is then still open when the child ends. Usage: fork_exit CHILDREN */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned sink;

void child_work(void) { sink += 2; }

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return 2;
        if (pid == 0) {
            child_work();
            _exit(0);
        }
        int status = 0;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
    }
    return 0;
}
