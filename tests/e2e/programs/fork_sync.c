/* One mutex locked 5 times by the parent before fork(), 7 times by the forked child, then 11
 * more times by the parent after the child ended: 16 acquisitions for the parent, 7 for the child. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned sink;

static void lock_times(int n)
{
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&m);
        sink++;
        pthread_mutex_unlock(&m);
    }
}

int main(void)
{
    lock_times(5);
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        lock_times(7);
        return 0;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    lock_times(11);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
