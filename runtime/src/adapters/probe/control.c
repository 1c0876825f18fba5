/* The control socket: `plx ctl PID insert|remove|list|reload` and `plx detach PID` talk to the
 * measured process through a Unix socket, `ctl.sock` in its directory of the experiment, mode
 * 0600, served by a thread of the runtime (nothing listens on the network).
 *
 * Protocol: one connection per command; the client writes one line (`insert GLOBS`, `remove
 * GLOBS`, `list`, `reload`, `detach`), the runtime replies with text and closes (a reply
 * beginning with "error: " is a failure). Only a peer of the same user, or root, is served
 * (SO_PEERCRED), whatever the file's mode.
 *
 * Invariant: one thread (this listener) changes probes after start-up, so the probe list and
 * the stub pool need no lock; its I/O is raw system calls, never the program's interposed
 * socket wrappers. A socket name left by a process that died (a crash, or the image before an
 * exec) is replaced when nothing answers on it. */
#include "../../core/plx_internal.h"
#include "world.h"
#include "probe_api.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define REPLY_CAP (64 * 1024)
#define DETACH_TRIES 500
#define RETRY_TRIES 200 /* 5 ms apart: plx attach releases the threads within a second */

static int listen_fd = -1;
static int dir_fd = -1;          /* the process directory, when its path is too long to bind */
static char sock_file[4700];     /* the socket's real path, removed at the end */
static int started;              /* a socket was wanted in this process (kept across fork) */

static void sys_close(int *fd)
{
    if (*fd >= 0)
        (void)syscall(SYS_close, *fd);
    *fd = -1;
}

/* Names the socket: its path, or /proc/self/fd/N/ctl.sock through the directory when the path
 * does not fit sun_path (108 bytes). 0 or -1. */
static int socket_address(struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    if (strlen(sock_file) < sizeof a->sun_path) {
        snprintf(a->sun_path, sizeof a->sun_path, "%s", sock_file);
        return 0;
    }
    if (dir_fd < 0)
        dir_fd = (int)syscall(SYS_open, plx_process_dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
    if (dir_fd < 0)
        return -1;
    snprintf(a->sun_path, sizeof a->sun_path, "/proc/self/fd/%d/ctl.sock", dir_fd);
    return 0;
}

/* Does a process answer on the socket name? (else it is a stale one, left by a dead process) */
static int answered(const struct sockaddr_un *a)
{
    int fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 1;
    int rc = (int)syscall(SYS_connect, fd, a, sizeof *a);
    int e = errno;
    sys_close(&fd);
    return rc == 0 || e != ECONNREFUSED;
}

static int bind_socket(void)
{
    struct sockaddr_un a;
    if (socket_address(&a) != 0)
        return -1;
    int fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    /* the socket's file takes the mode of its inode at bind: never more than 0600 */
    (void)fchmod(fd, 0600);
    int rc = (int)syscall(SYS_bind, fd, &a, sizeof a);
    if (rc != 0 && errno == EADDRINUSE && !answered(&a)) {
        unlink(sock_file);
        rc = (int)syscall(SYS_bind, fd, &a, sizeof a);
    }
    if (rc != 0 || chmod(sock_file, 0600) != 0 || syscall(SYS_listen, fd, 8) != 0) {
        plx_warn("control socket %s: %s; plx ctl and plx detach cannot reach this process",
                 sock_file, strerror(errno));
        sys_close(&fd);
        return -1;
    }
    listen_fd = fd;
    return 0;
}

static ssize_t read_line(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t got = syscall(SYS_read, fd, buf + n, cap - 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        n += (size_t)got;
        if (memchr(buf, '\n', n))
            break;
    }
    buf[n] = 0;
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = 0;
    return (ssize_t)n;
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t put = syscall(SYS_write, fd, p, n);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return;
        p += put;
        n -= (size_t)put;
    }
}

/* plx detach: the other threads stopped, until none is inside the runtime. */
static int detach(char *out, size_t cap)
{
    for (int tries = 0; tries < DETACH_TRIES; tries++) {
        struct plx_world *w = calloc(1, sizeof *w);
        if (!w || plx_world_stop(w) != 0) {
            int e = w ? w->error : ENOMEM;
            free(w);
            return snprintf(out, cap, "error: cannot stop the threads of process %d: %s\n",
                            (int)getpid(), strerror(e));
        }
        int rc = plx_attach_stop();
        plx_world_release(w);
        free(w);
        if (rc == 0)
            return snprintf(out, cap, "detached\n");
        if (rc == -1)
            return snprintf(out, cap, "error: process %d is not being measured now\n",
                            (int)getpid());
        struct timespec ms = {0, 2000000}; /* a thread inside the runtime: let it leave */
        plx_real_nanosleep(&ms, NULL);
    }
    return snprintf(out, cap, "error: process %d: a thread stays inside the runtime; not "
                    "detached\n", (int)getpid());
}

/* One command: its reply in `out`; *done when the socket is to close after it. */
static int serve(const char *cmd, char *out, size_t cap, int *done)
{
    if (strcmp(cmd, "detach") == 0) {
        int n = detach(out, cap);
        *done = strncmp(out, "detached", 8) == 0;
        return n;
    }
    if (!plx_active)
        return snprintf(out, cap, "error: process %d is not being measured now\n", (int)getpid());
    if (strcmp(cmd, "reload") == 0) {
        if (!plx_cfg.filter[0])
            return snprintf(out, cap, "error: process %d has no filter file to re-read (plx run "
                            "--filter)\n", (int)getpid());
        plx_counters_reload();
        return snprintf(out, cap, "process %d: %s re-read\n", (int)getpid(), plx_cfg.filter);
    }
    int n = plx_probes_command(cmd, out, cap);
    if (n < 0)
        n = snprintf(out, cap, "error: unknown command '%.64s' (insert GLOBS, remove GLOBS, "
                     "list, reload, detach)\n", cmd);
    return n;
}

/* Is the main thread still traced (by plx attach, which holds every thread until it is done)? */
static int traced(void)
{
    char buf[2048];
    int fd = (int)syscall(SYS_open, "/proc/self/status", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    ssize_t n = syscall(SYS_read, fd, buf, sizeof buf - 1);
    sys_close(&fd);
    buf[n > 0 ? n : 0] = 0;
    const char *t = strstr(buf, "TracerPid:");
    return t && atoi(t + 10) != 0;
}

/* plx attach skipped the functions a stopped thread was inside: inserted now, when plx attach
 * has let the threads go (until then its ptrace holds them and world.c cannot stop them). */
static void insert_skipped(char *reply, size_t cap)
{
    static char cmd[8192 + 8];
    memcpy(cmd, "insert ", 7);
    if (plx_probes_take_retry(cmd + 7, sizeof cmd - 7) == 0)
        return;
    for (int tries = 0; tries < RETRY_TRIES && traced(); tries++) {
        struct timespec ms = {0, 5000000};
        plx_real_nanosleep(&ms, NULL);
    }
    plx_probes_command(cmd, reply, cap);
}

static void *listener_main(void *arg)
{
    int fd = (int)(intptr_t)arg;
    plx_thread_mark_internal();
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    static char reply[REPLY_CAP];
    insert_skipped(reply, sizeof reply);
    for (;;) {
        int c = (int)syscall(SYS_accept4, fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return NULL; /* closed: the process was detached, or forked without us */
        }
        struct ucred cred;
        socklen_t len = sizeof cred;
        struct timeval limit = {5, 0}; /* a client that never writes does not hold us */
        (void)syscall(SYS_setsockopt, c, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
        int done = 0, n;
        char cmd[4096];
        if (read_line(c, cmd, sizeof cmd) <= 0) /* read first: the client then gets a reply */
            n = 0;
        else if (syscall(SYS_getsockopt, c, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
                 (cred.uid != geteuid() && cred.uid != 0))
            n = snprintf(reply, sizeof reply, "error: permission denied\n");
        else
            n = serve(cmd, reply, sizeof reply, &done);
        if (n > (int)sizeof reply - 1)
            n = (int)sizeof reply - 1;
        if (done) {
            /* closed before the reply: an attach that follows at once opens its own socket */
            sys_close(&listen_fd);
            sys_close(&dir_fd);
        }
        write_all(c, reply, n > 0 ? (size_t)n : 0);
        sys_close(&c);
        if (done)
            return NULL;
    }
}

void plx_control_start(void)
{
    started = 1;
    if (listen_fd >= 0)
        return;
    snprintf(sock_file, sizeof sock_file, "%s/ctl.sock", plx_process_dir);
    if (bind_socket() != 0)
        return;
    pthread_t th;
    if (plx_create_internal_thread(&th, listener_main, (void *)(intptr_t)listen_fd) != 0) {
        plx_warn("control socket %s: no thread to serve it", sock_file);
        sys_close(&listen_fd);
        unlink(sock_file);
    }
}

void plx_control_end(void)
{
    if (sock_file[0] && plx_process_is_ours())
        unlink(sock_file);
    sock_file[0] = 0;
}

void plx_control_after_fork(void)
{
    sys_close(&listen_fd); /* the parent's: its listener is not in this process */
    sys_close(&dir_fd);
    sock_file[0] = 0;
    if (started)
        plx_control_start();
}
