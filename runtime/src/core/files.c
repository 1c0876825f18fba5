/* The runtime's own files, made and read so that neither the disk nor another user can harm the
 * program: a file is created only under a name nobody else made (O_EXCL | O_NOFOLLOW), in a
 * process directory that belongs to this user; room is reserved before a file is mapped (a
 * write to a mapped page the file system cannot back is a SIGBUS); writes and reservations run
 * with SIGXFSZ held, so a file size limit is an error (EFBIG), never a signal; an input file is
 * read only when it is a regular file of bounded size (a FIFO or a device would block or never
 * end). */
#include "plx_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int plx_file_create(const char *path, int flags)
{
    return open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

int plx_file_reopen(const char *path, int flags, dev_t dev, ino_t ino)
{
    int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != dev || st.st_ino != ino)) {
        plx_sys_close(fd);
        errno = ESTALE; /* another file under the name: not ours to write */
        return -1;
    }
    return fd;
}

/* SIGXFSZ is held in the calling thread (the kernel sends it to the thread that passed the
 * limit); *was_pending says whether one was pending already (the program's own). Without a
 * file size limit (the usual case) nothing is held: one system call instead of three. */
void plx_fsize_hold(sigset_t *saved, int *was_pending)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur == RLIM_INFINITY) {
        *was_pending = -1;
        return;
    }
    sigset_t xfsz, pending;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, saved);
    *was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
}

/* The SIGXFSZ the runtime's own operation raised is taken away, then the mask is restored. */
void plx_fsize_release(const sigset_t *saved, int was_pending)
{
    if (was_pending < 0)
        return;
    int saved_errno = errno;
    sigset_t xfsz;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    if (!was_pending) {
        struct timespec now = {0, 0};
        while (sigtimedwait(&xfsz, NULL, &now) == SIGXFSZ)
            ;
    }
    pthread_sigmask(SIG_SETMASK, saved, NULL);
    errno = saved_errno;
}

int plx_file_reserve(int fd, off_t bytes)
{
    sigset_t saved;
    int pending;
    plx_fsize_hold(&saved, &pending);
    int err;
    do
        err = posix_fallocate(fd, 0, bytes);
    while (err == EINTR);
    plx_fsize_release(&saved, pending);
    return err;
}

int plx_dir_make_own(const char *path)
{
    if (mkdir(path, 0755) == 0)
        return 0;
    if (errno != EEXIST)
        return -1;
    struct stat st;
    if (lstat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
        return -1;
    }
    if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        errno = EPERM; /* someone else made it, or may plant names in it */
        return -1;
    }
    return 0;
}

int plx_read_regular(const char *path, size_t cap, char **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    int err = 0;
    if (fstat(fd, &st) != 0)
        err = errno;
    else if (!S_ISREG(st.st_mode))
        err = EINVAL;
    else if ((uint64_t)st.st_size > cap)
        err = EFBIG;
    char *buf = err ? NULL : malloc((size_t)st.st_size + 1);
    if (!err && !buf)
        err = ENOMEM;
    size_t n = 0;
    while (!err && n < (size_t)st.st_size) { /* a file that grows meanwhile is read to its stat size */
        ssize_t r = plx_sys_read(fd, buf + n, (size_t)st.st_size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            err = errno;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    plx_sys_close(fd);
    if (err) {
        free(buf);
        errno = err;
        return -1;
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    return 0;
}

const char *plx_read_error(int err)
{
    if (err == EINVAL)
        return "not a regular file (a FIFO, a device or a directory is not read)";
    if (err == EFBIG)
        return "larger than the runtime reads";
    return strerror(err);
}
