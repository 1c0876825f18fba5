/* Forks from a forked child, as a daemonizing launcher does (Open MPI's orted --daemonize forks,
 * then forks each rank): the parent calls parent_work() twice, the child child_work() 3 times,
 * the grandchild grandchild_work() 4 times. With the CPU sampler on, the child's second fork
 * must not wait forever for the sampler's lock in its prepare handler. */
#include <sys/wait.h>
#include <unistd.h>
static volatile int sink;
void parent_work(void) { sink++; }
void child_work(void) { sink++; }
void grandchild_work(void) { sink++; }

static int wait_for(pid_t pid)
{
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(void)
{
    pid_t child = fork();
    if (child == 0) {
        pid_t grandchild = fork();
        if (grandchild == 0) {
            for (int i = 0; i < 4; i++)
                grandchild_work();
            return 0;
        }
        for (int i = 0; i < 3; i++)
            child_work();
        return wait_for(grandchild);
    }
    for (int i = 0; i < 2; i++)
        parent_work();
    return wait_for(child);
}
