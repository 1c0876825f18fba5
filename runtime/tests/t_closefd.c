/* Closes every descriptor above stderr (as MPI launchers do before exec) and opens a file of
 * its own, which takes the runtime's old descriptor number: the runtime must not write into it. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
void work(void) {}
int main(int argc, char **argv)
{
    const char *victim = argc > 1 ? argv[1] : "closefd.victim";
    work();
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    int f = open(victim, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    work();
    work();
    struct stat st;
    fstat(f, &st);
    return st.st_size == 0 ? 0 : 1;
}
