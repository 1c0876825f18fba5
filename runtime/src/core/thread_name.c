/* Thread names the kernel holds (a thread's comm): a name given outside the measured calls —
 * before the thread's first event, through its handle by another thread, with prctl, or before
 * plx attach — is taken when the thread registers and again when it ends. Neither is on the
 * hot path: one prctl or one small /proc read per thread start and end. */
#include "plx_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

PLX_TLS uint64_t plx_pending_created;
PLX_TLS const char *plx_pending_comm;

/* The comm of thread `tid` of this process, "" when it cannot be read. */
static void read_comm(uint32_t tid, char out[16])
{
    char path[48], buf[17];
    snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
    out[0] = 0;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = plx_sys_read(fd, buf, 16);
    plx_sys_close(fd);
    if (n <= 0)
        return;
    buf[n] = 0;
    size_t len = strcspn(buf, "\n");
    if (len > 15)
        len = 15;
    memcpy(out, buf, len);
    out[len] = 0;
}

void plx_thread_comm_self(char out[16])
{
    out[0] = 0;
    if (prctl(PR_GET_NAME, out) != 0)
        out[0] = 0;
    out[15] = 0;
}

/* At registration, on the thread itself: `inherited` is the comm of the thread that created
 * it (its comm unless renamed since), "" when unknown (a thread running before plx attach, or
 * not started by an interposed pthread_create): then the process's main thread's, which
 * threads inherit by default. A different comm is a name the thread was given. */
void plx_thread_name_start(struct plx_thread *t, const char *inherited)
{
    plx_thread_comm_self(t->comm);
    if (t->index == 0 || !t->comm[0])
        return;
    char base[16];
    if (inherited && inherited[0])
        snprintf(base, sizeof base, "%s", inherited);
    else
        read_comm((uint32_t)getpid(), base);
    if (base[0] && strcmp(base, t->comm) != 0)
        snprintf(t->name, sizeof t->name, "%s", t->comm);
}

/* At the thread's end (`self`) or at the process end (another thread, still running): a comm
 * changed since registration that is not already its name renames it. */
void plx_thread_name_end(struct plx_thread *t, int self)
{
    if (t->java_name)
        return;
    char now[16];
    if (self)
        plx_thread_comm_self(now);
    else
        read_comm(t->tid, now);
    if (!now[0] || strcmp(now, t->comm) == 0 || strncmp(now, t->name, 15) == 0)
        return;
    plx_thread_set_name(t, now);
}
