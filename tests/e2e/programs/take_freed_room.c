/* Preloaded after libplx: "another process" that takes the disk's room the moment the runtime's
 * reserve (.plx-reserve) is given up — removed or renamed — by filling FILL_PATH until the file
 * system is full again. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_reserve(const char *path)
{
    const char *base = strrchr(path, '/');
    return base && strcmp(base + 1, ".plx-reserve") == 0;
}

static void fill(void)
{
    const char *path = getenv("FILL_PATH");
    if (!path)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    static char page[4096];
    for (size_t piece = sizeof page; fd >= 0 && piece > 0; piece /= 2)
        while (write(fd, page, piece) == (ssize_t)piece)
            ;
    if (fd >= 0)
        close(fd);
}

int unlink(const char *path)
{
    int (*real)(const char *) = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
    int r = real(path);
    if (r == 0 && is_reserve(path))
        fill();
    return r;
}

int rename(const char *from, const char *to)
{
    int (*real)(const char *, const char *) =
        (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    int r = real(from, to);
    if (r == 0 && is_reserve(from))
        fill();
    return r;
}
