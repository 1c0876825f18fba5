/* A library that hooks munmap and takes a lock in its hook, as UCX's memory hooks do (MPICH's
 * launcher loads it): the runtime's fork handler unmaps the parent's live files through that
 * hook, and the interposed pthread_rwlock_* must pass straight through, never record into the
 * child's thread state while it is rebuilt. The parent takes `lock` twice (so its thread has a
 * synchronization file to unmap in the child), the child once and calls child_work() 3 times.
 * Acquisitions of rwlocks: 3, the hook's own lock never counted (the runtime's munmaps in the
 * parent and at the ends run with the guard held too). */
#include <pthread.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_rwlock_t hook_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static volatile int sink;

int munmap(void *addr, size_t len)
{
    pthread_rwlock_wrlock(&hook_lock);
    long rc = syscall(SYS_munmap, addr, len);
    pthread_rwlock_unlock(&hook_lock);
    return (int)rc;
}

void child_work(void) { sink++; }

int main(void)
{
    for (int i = 0; i < 2; i++) {
        pthread_rwlock_rdlock(&lock);
        sink++;
        pthread_rwlock_unlock(&lock);
    }
    pid_t pid = fork();
    if (pid == 0) {
        pthread_rwlock_wrlock(&lock);
        for (int i = 0; i < 3; i++)
            child_work();
        pthread_rwlock_unlock(&lock);
        return 0;
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
