/* The experiment's files: one directory per process, records appended with single writes.
 *
 * Both files are opened O_APPEND; a record goes out in one write()/writev() so records of
 * different threads never interleave and a crash leaves at most the last one incomplete. */
#include "plx_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

char plx_process_dir[4600];
static int fds[2] = {-1, -1}; /* process.plx, trace.plx */
/* What each descriptor should be: a program may close descriptors it does not know (launchers
 * close all before exec) and reuse the numbers, so a write checks the file is still ours. */
static char paths[2][4700];
static dev_t devs[2];
static ino_t inos[2];

static int write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = plx_sys_writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

static void remember(int which, int fd, const char *path)
{
    struct stat st;
    if (path != paths[which])
        snprintf(paths[which], sizeof paths[which], "%s", path);
    if (fstat(fd, &st) == 0) {
        devs[which] = st.st_dev;
        inos[which] = st.st_ino;
    }
}

static int open_file(const char *name, int index, uint16_t kind)
{
    char path[4700];
    if (index == 0)
        snprintf(path, sizeof path, "%s/%s.plx", plx_process_dir, name);
    else
        snprintf(path, sizeof path, "%s/%s.%d.plx", plx_process_dir, name, index);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    remember(kind == 2 ? 1 : 0, fd, path);
    unsigned char hdr[16] = {'P', 'L', 'X', '1', 1, 0, (unsigned char)kind, 0};
    struct iovec iov = {hdr, sizeof hdr};
    write_all(fd, &iov, 1);
    return fd;
}

int plx_writer_open(void)
{
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    mkdir(plx_cfg.output, 0755);
    snprintf(plx_process_dir, sizeof plx_process_dir, "%s/%s.%d", plx_cfg.output, host, (int)getpid());
    if (mkdir(plx_process_dir, 0755) != 0 && errno != EEXIST) {
        plx_warn("cannot create %s: %s; nothing is measured", plx_process_dir, strerror(errno));
        return -1;
    }
    /* After exec() the pid is the same: the new image takes the next free index. */
    for (int i = 0; i < 1000; i++) {
        fds[0] = open_file("process", i, 1);
        if (fds[0] >= 0) {
            if (plx_cfg.trace)
                fds[1] = open_file("trace", i, 2);
            return 0;
        }
        if (errno != EEXIST)
            break;
    }
    plx_warn("cannot create files in %s: %s; nothing is measured", plx_process_dir, strerror(errno));
    return -1;
}

void plx_writer_close(void)
{
    for (int i = 0; i < 2; i++) {
        if (fds[i] >= 0)
            plx_sys_close(fds[i]);
        fds[i] = -1;
    }
}

/* The descriptor of file `which`, reopened if the program closed or replaced it. */
static int checked_fd(int which)
{
    int fd = fds[which];
    struct stat st;
    if (fd < 0 || (fstat(fd, &st) == 0 && st.st_dev == devs[which] && st.st_ino == inos[which]))
        return fd;
    fd = open(paths[which], O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd >= 0)
        remember(which, fd, paths[which]);
    fds[which] = fd;
    return fd;
}

void plx_write_record2(int trace_file, uint16_t type, const void *a, uint32_t alen, const void *b,
                       uint32_t blen)
{
    int saved_errno = errno;
    int fd = checked_fd(trace_file ? 1 : 0);
    errno = saved_errno;
    if (fd < 0)
        return;
    unsigned char hdr[8];
    uint32_t len = alen + blen;
    memcpy(hdr, &type, 2);
    memset(hdr + 2, 0, 2);
    memcpy(hdr + 4, &len, 4);
    struct iovec iov[3] = {{hdr, 8}, {(void *)a, alen}, {(void *)b, blen}};
    int saved = errno;
    write_all(fd, iov, blen ? 3 : 2);
    errno = saved;
}

void plx_write_framed(const void *bytes, size_t len)
{
    int saved = errno;
    int fd = checked_fd(0);
    if (fd >= 0 && len) {
        struct iovec iov = {(void *)bytes, len};
        write_all(fd, &iov, 1);
    }
    errno = saved;
}

void plx_write_record(int trace_file, uint16_t type, const void *payload, uint32_t len)
{
    plx_write_record2(trace_file, type, payload, len, NULL, 0);
}

/* ---- record builder ---------------------------------------------------------------------- */

void plx_rec_init(struct plx_rec *r)
{
    r->p = r->small;
    r->len = 0;
    r->cap = sizeof r->small;
}

void plx_rec_bytes(struct plx_rec *r, const void *p, size_t n)
{
    if (r->len + n > r->cap) {
        size_t cap = r->cap * 2;
        while (cap < r->len + n)
            cap *= 2;
        void *q = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (q == MAP_FAILED)
            return;
        memcpy(q, r->p, r->len);
        if (r->p != r->small)
            munmap(r->p, r->cap);
        r->p = q;
        r->cap = cap;
    }
    memcpy(r->p + r->len, p, n);
    r->len += n;
}

void plx_rec_u8(struct plx_rec *r, uint8_t v) { plx_rec_bytes(r, &v, 1); }
void plx_rec_u32(struct plx_rec *r, uint32_t v) { plx_rec_bytes(r, &v, 4); }
void plx_rec_u64(struct plx_rec *r, uint64_t v) { plx_rec_bytes(r, &v, 8); }
void plx_rec_f64(struct plx_rec *r, double v) { plx_rec_bytes(r, &v, 8); }

void plx_rec_str(struct plx_rec *r, const char *s)
{
    uint32_t n = s ? (uint32_t)strlen(s) : 0;
    plx_rec_u32(r, n);
    plx_rec_bytes(r, s, n);
}

void plx_rec_write(struct plx_rec *r, int trace_file, uint16_t type)
{
    plx_write_record(trace_file, type, r->p, (uint32_t)r->len);
    if (r->p != r->small)
        munmap(r->p, r->cap);
    plx_rec_init(r);
}
