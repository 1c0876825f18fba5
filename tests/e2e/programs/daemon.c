/* A daemon: the program forks, the child starts a session and forks again, and the grandchild
 * (the daemon) closes every descriptor, changes to /, calls leaf() 7 times, waits until the
 * file named by its argument exists, then exits 0. The program exits 0 at once. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int leaf(int x)
{
    return x + 1;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    pid_t p = fork();
    if (p == 0) {
        setsid();
        if (fork() != 0)
            _exit(0);
        int s = 0;
        if (chdir("/") != 0)
            return 1;
        for (int fd = 0; fd < 1024; fd++)
            close(fd);
        for (int i = 0; i < 7; i++)
            s += leaf(i);
        struct stat st;
        for (int i = 0; i < 3000 && stat(argv[1], &st) != 0; i++)
            usleep(10000);
        return s == 28 ? 0 : 1;
    }
    waitpid(p, NULL, 0);
    printf("started\n");
    return 0;
}
