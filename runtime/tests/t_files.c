/* The runtime's own files (files.c), alone: inputs are read only when regular and bounded (a
 * FIFO or /dev/zero answers at once), files are created only under a free name (a planted
 * symlink is refused, its target unchanged), a process directory is used only when it is this
 * user's and nobody else can write it, and room reserved past a file size limit is an error,
 * never SIGXFSZ. Exit status 0 when every check holds; a hang is ended by alarm(). */
#include "plx_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond);            \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

static char dir[] = "/tmp/t_files.XXXXXX";

static void path(char *out, const char *name)
{
    snprintf(out, 256, "%s/%s", dir, name);
}

static void put(const char *p, const char *text)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
}

static void reads(void)
{
    char p[256], *text = NULL;
    size_t len = 0;
    path(p, "filter");
    put(p, "exclude std::*\n");
    CHECK(plx_read_regular(p, 1024, &text, &len) == 0 && len == 15 && strcmp(text, "exclude std::*\n") == 0);
    free(text);
    CHECK(plx_read_regular(p, 14, &text, &len) == -1 && errno == EFBIG);
    path(p, "fifo");
    CHECK(mkfifo(p, 0600) == 0);
    CHECK(plx_read_regular(p, 1024, &text, &len) == -1 && errno == EINVAL); /* at once */
    CHECK(plx_read_regular("/dev/zero", 1024, &text, &len) == -1 && errno == EINVAL);
    CHECK(plx_read_regular(dir, 1024, &text, &len) == -1 && errno == EINVAL);
    CHECK(strcmp(plx_read_error(EINVAL), "not a regular file (a FIFO, a device or a directory is not read)") == 0);
}

static void creates(void)
{
    char victim[256], link[256], dangling[256], buf[64] = {0};
    path(victim, "victim");
    put(victim, "precious");
    path(link, "live.0.nodes");
    CHECK(symlink(victim, link) == 0);
    CHECK(plx_file_create(link, O_RDWR) == -1 && errno == EEXIST);
    path(dangling, "live.1.nodes");
    CHECK(symlink("/tmp/t_files-nowhere", dangling) == 0);
    CHECK(plx_file_create(dangling, O_RDWR) == -1 && errno == EEXIST);
    CHECK(access("/tmp/t_files-nowhere", F_OK) != 0);
    int fd = open(victim, O_RDONLY);
    CHECK(read(fd, buf, sizeof buf) == 8 && memcmp(buf, "precious", 8) == 0);
    close(fd);
    /* reopened only while the name is still the same file */
    char mine[256];
    path(mine, "process.plx");
    fd = plx_file_create(mine, O_WRONLY);
    struct stat st;
    CHECK(fd >= 0 && fstat(fd, &st) == 0);
    close(fd);
    fd = plx_file_reopen(mine, O_WRONLY, st.st_dev, st.st_ino);
    CHECK(fd >= 0);
    close(fd);
    CHECK(unlink(mine) == 0 && symlink(victim, mine) == 0);
    CHECK(plx_file_reopen(mine, O_WRONLY, st.st_dev, st.st_ino) == -1);
}

static void directories(void)
{
    char p[256], target[256];
    path(p, "h.1");
    CHECK(plx_dir_make_own(p) == 0);
    CHECK(plx_dir_make_own(p) == 0); /* an exec'd image finds its own */
    path(target, "elsewhere");
    CHECK(mkdir(target, 0755) == 0);
    path(p, "h.2");
    CHECK(symlink(target, p) == 0);
    CHECK(plx_dir_make_own(p) == -1 && errno == ELOOP);
    path(p, "h.3");
    CHECK(mkdir(p, 0755) == 0 && chmod(p, 0777) == 0);
    CHECK(plx_dir_make_own(p) == -1 && errno == EPERM);
    if (geteuid() == 0) {
        path(p, "h.4");
        CHECK(mkdir(p, 0755) == 0 && chown(p, 65534, 65534) == 0);
        CHECK(plx_dir_make_own(p) == -1 && errno == EPERM);
    }
}

static void size_limit(void)
{
    char p[256];
    path(p, "live.2.trace");
    int fd = plx_file_create(p, O_RDWR);
    CHECK(fd >= 0);
    struct rlimit old, lim = {16384, 16384};
    getrlimit(RLIMIT_FSIZE, &old);
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    /* SIGXFSZ at its default (kill): the process must live on */
    signal(SIGXFSZ, SIG_DFL);
    CHECK(plx_file_reserve(fd, 1 << 20) == EFBIG);
    CHECK(plx_file_reserve(fd, 8192) == 0);
    sigset_t hold, pending;
    int was;
    plx_fsize_hold(&hold, &was);
    char block[32768] = {0};
    errno = 0;
    CHECK(pwrite(fd, block, sizeof block, 0) == 16384); /* short, then EFBIG */
    CHECK(pwrite(fd, block, 10, 16384) == -1 && errno == EFBIG);
    plx_fsize_release(&hold, was);
    CHECK(sigpending(&pending) == 0 && !sigismember(&pending, SIGXFSZ));
    sigset_t now;
    pthread_sigmask(SIG_SETMASK, NULL, &now);
    CHECK(!sigismember(&now, SIGXFSZ));
    setrlimit(RLIMIT_FSIZE, &old);
    close(fd);
}

int main(void)
{
    alarm(60);
    if (!mkdtemp(dir))
        return 2;
    reads();
    creates();
    directories();
    size_limit();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        failures++;
    if (failures)
        fprintf(stderr, "t_files: %d check(s) failed\n", failures);
    return failures != 0;
}
