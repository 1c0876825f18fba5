/* The experiment's files: one directory per process, records appended with single writes.
 *
 * Both files are opened O_APPEND; a record goes out in one write()/writev() so records of
 * different threads never interleave and a crash leaves at most the last one incomplete. */
#include "plx_internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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
static int lost_errno[2]; /* why a file could not be reopened (its writes then fail, counted) */
static dev_t devs[2];
static ino_t inos[2];

/* Writes the vector whole; on failure returns -1 with *partial the bytes it did write. A file
 * size limit makes it fail with EFBIG: SIGXFSZ is held meanwhile (its default kills). */
static int write_all(int fd, struct iovec *iov, int n, size_t *partial)
{
    sigset_t mask;
    int pending;
    plx_fsize_hold(&mask, &pending);
    size_t done = 0;
    int r = 0;
    while (n > 0) {
        ssize_t w = plx_sys_writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (partial)
                *partial = done;
            r = -1;
            break;
        }
        done += (size_t)w;
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
    plx_fsize_release(&mask, pending);
    return r;
}

/* Writes that failed (disk full, file size limit, I/O error), per file: counted, never silent
 * (plx_writer_failures; the WriteFailures record at the process end). */
static _Atomic uint64_t failed_writes[2], failed_bytes[2];
static _Atomic int failed_errno[2];

static void failed(int which, int err, uint64_t bytes)
{
    int zero = 0;
    atomic_compare_exchange_strong(&failed_errno[which], &zero, err);
    atomic_fetch_add(&failed_writes[which], 1);
    atomic_fetch_add(&failed_bytes[which], bytes);
}

/* Each file's header, and whether it is still to be written (its first write failed); the
 * lock is held by the one writer that writes it before its record. */
static unsigned char headers[2][PLX_FILE_HEADER_SIZE];
static _Atomic int header_missing[2];
static int header_errno[2];
static atomic_flag header_lock[2] = {ATOMIC_FLAG_INIT, ATOMIC_FLAG_INIT};

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
    int fd = plx_file_create(path, O_WRONLY | O_APPEND);
    if (fd < 0)
        return -1;
    int which = kind == 2 ? 1 : 0;
    remember(which, fd, path);
    unsigned char *hdr = headers[which];
    const unsigned char head[] = {'P', 'L', 'X', '1', PLX_FORMAT_VERSION, 0, (unsigned char)kind, 0};
    memset(hdr, 0, PLX_FILE_HEADER_SIZE);
    memcpy(hdr, head, sizeof head);
    struct iovec iov = {hdr, PLX_FILE_HEADER_SIZE};
    size_t partial = 0;
    atomic_store(&header_missing[which], 0);
    if (write_all(fd, &iov, 1, &partial) != 0) {
        /* a full disk: written before the file's first record that finds room
         * (append_with_header), never a file of records without its header; counted as a
         * failed write if none did (plx_writer_failures) */
        header_errno[which] = errno;
        if (partial > 0)
            (void)ftruncate(fd, 0);
        atomic_store(&header_missing[which], 1);
    }
    /* with a trace, room for the records written at the end (profiles, ProcessEnd, the count
     * of failed writes) is reserved now: a trace that fills the disk cannot take it */
    if (kind == 1 && plx_cfg.trace) {
        sigset_t mask;
        int pending;
        plx_fsize_hold(&mask, &pending);
        (void)fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 1 << 20);
        plx_fsize_release(&mask, pending);
    }
    return fd;
}

/* Room for the last records (Calibration, WriteFailures, ProcessEnd) on a disk that fills up:
 * a file of its own, kept open, holds it (a file's own preallocation would go with the first
 * failed write cut off again). At the process end the last records go to process.plx; one that
 * finds no room there is written into this file instead (a reserved block is never taken by
 * anyone else), which is then cut to what it holds and named `end.plx` (`end.N.plx` after
 * N execs): a reader takes its records as process.plx's last ones. Unused, it is removed. */
#define RESERVE_NAME ".plx-reserve"
#define RESERVE_BYTES (16 << 10)

static int image_index;            /* N of process.N.plx (0: process.plx) */
static int reserve_fd = -1;        /* .plx-reserve, open from the start to the end */
static dev_t reserve_dev;
static ino_t reserve_ino;
static _Atomic int end_room_open;  /* the process end: process.plx's failed writes go to it */
static off_t reserve_used;         /* bytes written into it (its header first) */

static void reserve_path(char *path, size_t cap)
{
    snprintf(path, cap, "%s/" RESERVE_NAME, plx_process_dir);
}

/* Whether reserve_fd is still the reserve (the program may have closed the number and opened
 * a file of its own under it); if not, it is forgotten, never closed or truncated. */
static int reserve_is_ours(void)
{
    struct stat st;
    if (reserve_fd >= 0 &&
        (fstat(reserve_fd, &st) != 0 || st.st_dev != reserve_dev || st.st_ino != reserve_ino))
        reserve_fd = -1;
    return reserve_fd >= 0;
}

static void reserve_end_room(void)
{
    char path[4700];
    reserve_path(path, sizeof path);
    int fd = plx_file_create(path, O_WRONLY);
    if (fd < 0)
        return;
    struct stat st;
    if (plx_file_reserve(fd, RESERVE_BYTES) != 0 || fstat(fd, &st) != 0) {
        unlink(path);
        plx_sys_close(fd);
        return;
    }
    reserve_fd = fd;
    reserve_dev = st.st_dev;
    reserve_ino = st.st_ino;
}

void plx_writer_open_end_room(void)
{
    atomic_store(&end_room_open, 1);
}

/* Writes iov[0..n) into the reserve after what it holds (its header before the first); 0 when
 * all of it fit in the reserved room. The program may have closed or reused the descriptor
 * (launchers close every descriptor): it is checked, and reopened by name if needed. */
static atomic_flag end_room_lock = ATOMIC_FLAG_INIT;

static int write_end_room_locked(const struct iovec *iov, int n);

static int write_end_room(const struct iovec *iov, int n)
{
    /* the end's writer is alone but for a thread still ending: that one's record is lost */
    if (atomic_flag_test_and_set_explicit(&end_room_lock, memory_order_acquire))
        return -1;
    int r = write_end_room_locked(iov, n);
    atomic_flag_clear_explicit(&end_room_lock, memory_order_release);
    return r;
}

static int write_end_room_locked(const struct iovec *iov, int n)
{
    if (!reserve_is_ours() && reserve_ino != 0) {
        char path[4700];
        reserve_path(path, sizeof path);
        reserve_fd = plx_file_reopen(path, O_WRONLY, reserve_dev, reserve_ino);
    }
    if (reserve_fd < 0)
        return -1;
    size_t len = reserve_used == 0 ? PLX_FILE_HEADER_SIZE : 0;
    for (int i = 0; i < n; i++)
        len += iov[i].iov_len;
    if (reserve_used + (off_t)len > RESERVE_BYTES)
        return -1;
    struct iovec all[3];
    int k = 0;
    if (reserve_used == 0)
        all[k++] = (struct iovec){headers[0], PLX_FILE_HEADER_SIZE};
    for (int i = 0; i < n && k < 3; i++)
        all[k++] = iov[i];
    sigset_t mask;
    int pending;
    plx_fsize_hold(&mask, &pending);
    ssize_t w;
    do
        w = pwritev(reserve_fd, all, k, reserve_used);
    while (w < 0 && errno == EINTR);
    plx_fsize_release(&mask, pending);
    if (w != (ssize_t)len)
        return -1; /* within reserved blocks a short write is not expected: the record is lost */
    reserve_used += (off_t)len;
    return 0;
}

void plx_writer_close_end_room(void)
{
    char path[4700], end[4700];
    int saved = errno;
    reserve_path(path, sizeof path);
    int ours = reserve_is_ours();
    if (reserve_used > 0 && ours && ftruncate(reserve_fd, reserve_used) == 0) {
        if (image_index == 0)
            snprintf(end, sizeof end, "%s/end.plx", plx_process_dir);
        else
            snprintf(end, sizeof end, "%s/end.%d.plx", plx_process_dir, image_index);
        if (rename(path, end) != 0)
            unlink(path);
    } else {
        unlink(path);
    }
    if (ours)
        plx_sys_close(reserve_fd);
    reserve_fd = -1;
    errno = saved;
}

int plx_writer_open(void)
{
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    /* a relative PLX_OUTPUT (set by hand) names the directory under the working directory of
     * now: the program may change it before its threads' live files are made, a child forks or
     * execs, or the files are removed at the end */
    if (plx_cfg.output[0] != '/') {
        char cwd[PLX_PATH_CAP], abs[PLX_PATH_CAP];
        if (getcwd(cwd, sizeof cwd) &&
            (size_t)snprintf(abs, sizeof abs, "%s/%s", cwd, plx_cfg.output) < sizeof abs) {
            memcpy(plx_cfg.output, abs, sizeof abs);
            setenv("PLX_OUTPUT", abs, 1);
        }
    }
    mkdir(plx_cfg.output, 0755);
    snprintf(plx_process_dir, sizeof plx_process_dir, "%s/%s.%d", plx_cfg.output, host, (int)getpid());
    if (plx_dir_make_own(plx_process_dir) != 0) {
        /* a name someone else made (another user's directory, a symlink) is never written in */
        plx_warn("cannot create %s: %s; nothing is measured", plx_process_dir,
                 errno == EEXIST || errno == EPERM || errno == ELOOP || errno == ENOTDIR
                     ? "it exists and is not a directory of this user that only this user can "
                       "write (a symlink or another user's)"
                     : strerror(errno));
        return -1;
    }
    /* After exec() the pid is the same: the new image takes the next free index. */
    for (int i = 0; i < 1000; i++) {
        fds[0] = open_file("process", i, 1);
        if (fds[0] >= 0) {
            image_index = i;
            if (plx_cfg.trace)
                fds[1] = open_file("trace", i, 2);
            reserve_end_room();
            return 0;
        }
        if (errno != EEXIST)
            break;
    }
    plx_warn("cannot create files in %s: %s; nothing is measured", plx_process_dir, strerror(errno));
    return -1;
}

void plx_writer_trim(void)
{
    /* the room reserved beyond the end of process.plx for a trace's last records
     * (open_file): what they did not take goes back to the file system (a truncation to the
     * file's own size frees the blocks past it) */
    struct stat st;
    if (plx_cfg.trace && fds[0] >= 0 && fstat(fds[0], &st) == 0)
        (void)ftruncate(fds[0], st.st_size);
}

void plx_writer_close(void)
{
    for (int i = 0; i < 2; i++) {
        if (fds[i] >= 0)
            plx_sys_close(fds[i]);
        fds[i] = -1;
    }
    /* a forked child's copy of the parent's reserve: the parent's to use or remove */
    if (reserve_is_ours())
        plx_sys_close(reserve_fd);
    reserve_fd = -1;
    reserve_ino = 0;
    reserve_used = 0;
    atomic_store(&end_room_open, 0);
}

/* The descriptor of file `which`, reopened if the program closed or replaced it. */
static int checked_fd(int which)
{
    int fd = fds[which];
    struct stat st;
    if (fd < 0 || (fstat(fd, &st) == 0 && st.st_dev == devs[which] && st.st_ino == inos[which]))
        return fd;
    fd = plx_file_reopen(paths[which], O_WRONLY | O_APPEND, devs[which], inos[which]);
    fds[which] = fd;
    if (fd < 0)
        lost_errno[which] = errno;
    return fd;
}

/* Writes iov[0..n) (n <= 2) after the header of file `which`, which its first write could not
 * write: the file's first bytes are its header, whatever finds room first. The writer that
 * holds the lock writes both; another (a second thread, a signal handler on the holder's thread)
 * fails with ENOSPC, its record counted as lost. */
static int append_with_header(int which, int fd, struct iovec *iov, int n, size_t *partial)
{
    if (atomic_flag_test_and_set_explicit(&header_lock[which], memory_order_acquire)) {
        errno = ENOSPC;
        return -1;
    }
    int r;
    if (!atomic_load_explicit(&header_missing[which], memory_order_acquire)) {
        r = write_all(fd, iov, n, partial);
    } else {
        struct iovec all[3] = {{headers[which], PLX_FILE_HEADER_SIZE}};
        for (int i = 0; i < n && i < 2; i++)
            all[i + 1] = iov[i];
        r = write_all(fd, all, n + 1, partial);
        if (r == 0)
            atomic_store_explicit(&header_missing[which], 0, memory_order_release);
    }
    atomic_flag_clear_explicit(&header_lock[which], memory_order_release);
    return r;
}

/* Appends iov[0..n) to file `which` (0 process.plx, 1 trace.plx), errno preserved; -1 when
 * the write failed (counted; bytes it wrote before failing are cut off again, so that the
 * records after it, once there is room, are framed). */
static int append(int which, struct iovec *iov, int n)
{
    int saved = errno;
    int fd = checked_fd(which);
    uint64_t len = 0;
    for (int i = 0; i < n; i++)
        len += iov[i].iov_len;
    size_t partial = 0;
    int r;
    struct iovec iov_copy[2]; /* the writes below advance iov */
    for (int i = 0; i < n && i < 2; i++)
        iov_copy[i] = iov[i];
    /* once a last record went to the end room, the ones after it follow it there (in order) */
    if (which == 0 && PLX_UNLIKELY(atomic_load_explicit(&end_room_open, memory_order_relaxed)) &&
        reserve_used > 0 && write_end_room(iov_copy, n < 2 ? n : 2) == 0) {
        errno = saved;
        return 0;
    }
    if (PLX_UNLIKELY(atomic_load_explicit(&header_missing[which], memory_order_acquire)) &&
        fd >= 0) {
        r = append_with_header(which, fd, iov, n, &partial);
    } else {
        r = fd >= 0 ? write_all(fd, iov, n, &partial) : -1;
        if (fd < 0)
            errno = lost_errno[which] ? lost_errno[which] : EBADF;
    }
    if (r != 0) {
        int err = errno;
        struct stat st;
        if (partial > 0 && fstat(fd, &st) == 0 && (size_t)st.st_size >= partial)
            (void)ftruncate(fd, st.st_size - (off_t)partial);
        if (which == 0 && atomic_load(&end_room_open) && write_end_room(iov_copy, n < 2 ? n : 2) == 0)
            r = 0;
        else
            failed(which, err, len);
    }
    errno = saved;
    return r;
}

uint64_t plx_writer_failures(int trace_file, uint64_t *bytes, int *err)
{
    int which = trace_file ? 1 : 0;
    *bytes = atomic_load(&failed_bytes[which]);
    *err = atomic_load(&failed_errno[which]);
    uint64_t n = atomic_load(&failed_writes[which]);
    /* a trace that never found room for its header is an empty file: one write lost (the
     * process file's goes with the record of these failures, or it is empty, which plx run
     * reports itself) */
    if (which == 1 && atomic_load(&header_missing[1])) {
        n++;
        *bytes += PLX_FILE_HEADER_SIZE;
        if (!*err)
            *err = header_errno[1];
    }
    return n;
}

void plx_write_framed(const void *bytes, size_t len)
{
    struct iovec iov = {(void *)bytes, len};
    if (len)
        append(0, &iov, 1);
}

/* ---- record builder ---------------------------------------------------------------------- */

static int grow(struct plx_rec *r, size_t need)
{
    size_t cap = r->cap * 2;
    while (cap < (size_t)r->len + need)
        cap *= 2;
    if (cap > UINT32_MAX)
        return -1;
    void *q = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED)
        return -1;
    memcpy(q, r->p, r->len);
    if (r->p != r->small)
        munmap(r->p, r->cap);
    r->p = q;
    r->cap = (uint32_t)cap;
    return 0;
}

void plx_rec_init(struct plx_rec *r)
{
    memset(r, 0, offsetof(struct plx_rec, small));
    r->p = r->small;
    r->cap = sizeof r->small;
    r->grow = grow;
}

static int rec_write(struct plx_rec *r, int trace_file, const void *bulk)
{
    uint64_t extra = r->open && bulk ? r->bulk : 0;
    uint32_t dropped = r->dropped;
    plx_rec_end(r);
    if (r->dropped != dropped)
        extra = 0; /* the last record was dropped, its bulk with it */
    if (r->dropped)
        plx_warn("%u record(s) of %s could not be built (out of memory) and are missing",
                 r->dropped, paths[trace_file ? 1 : 0]);
    struct iovec iov[2] = {{r->p, r->len}, {(void *)bulk, (size_t)extra}};
    int ok = 0;
    if (r->len)
        ok = append(trace_file ? 1 : 0, iov, extra ? 2 : 1);
    if (r->p != r->small)
        munmap(r->p, r->cap);
    plx_rec_init(r);
    return ok;
}

int plx_rec_write(struct plx_rec *r, int trace_file)
{
    return rec_write(r, trace_file, NULL);
}

int plx_rec_write_bulk(struct plx_rec *r, int trace_file, const void *bulk)
{
    return rec_write(r, trace_file, bulk);
}
