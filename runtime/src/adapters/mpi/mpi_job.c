/* Which ranks of the job run measured, known without a message: before MPI_Init each measured
 * rank creates an empty marker, named after its process and its start (HOST.PID-START, START
 * the process's start time, field 22 of /proc/PID/stat: no later process has both), in the
 * experiment's `.plx-mpi/JOB/` (JOB: a hash of PLX_JOB, which plx run sets to its job's key).
 * MPI_Init returns on no rank before every rank has entered it (Open MPI's and MPICH's Init end
 * in the launcher's fence over all ranks), so afterwards every rank counts the same markers and
 * takes the same decision, with no collective an unmeasured rank would never join. No marker is
 * left once the ranks have decided (plx_mpi_job_unmark, plx_mpi_job_decided); a rank killed
 * before (SIGKILL) leaves its marker, which plx run removes once its writer no longer runs. Directories are
 * opened without following links and must belong to this user; files are made with O_EXCL. */
#include "mpi_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char marker[300]; /* this process's marker, relative to the job's directory */
static int marked;
static pid_t marker_pid; /* the process that made it (not a child forked since) */

/* The directory `name` under `at`, made if absent: -1 unless it is a directory of this user. */
static int own_dir_at(int at, const char *name)
{
    if (mkdirat(at, name, 0755) != 0 && errno != EEXIST)
        return -1;
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_uid != geteuid())) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The job's directory name: a hash of its key; 0 without a job name or an experiment. */
static int job_name(char name[17])
{
    const char *job = plx_ext_config()->job;
    if (!*job || !*plx_ext_config()->output)
        return 0;
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (const char *p = job; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    snprintf(name, 17, "%016llx", (unsigned long long)h);
    return 1;
}

/* The job's marker directory, made if absent; -1 without a job name or an experiment. Tried
 * again when `.plx-mpi` vanished between its making and the job's (the last rank of another
 * job removed it). */
static int job_dir(void)
{
    char name[17];
    if (!job_name(name))
        return -1;
    int top = open(plx_ext_config()->output, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int dir = -1;
    for (int k = 0; top >= 0 && dir < 0 && k < 3; k++) {
        int mpi = own_dir_at(top, ".plx-mpi");
        dir = mpi < 0 ? -1 : own_dir_at(mpi, name);
        if (mpi >= 0)
            close(mpi);
        if (dir < 0 && errno != ENOENT)
            break;
    }
    if (top >= 0)
        close(top);
    return dir;
}

/* The job's directory and `.plx-mpi`, each removed if empty (the last rank to leave). */
static void remove_dirs(void)
{
    char name[17];
    int top = job_name(name) ? open(plx_ext_config()->output, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                             : -1;
    if (top < 0)
        return;
    int mpi = openat(top, ".plx-mpi", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (mpi >= 0) {
        unlinkat(mpi, name, AT_REMOVEDIR);
        close(mpi);
        unlinkat(top, ".plx-mpi", AT_REMOVEDIR);
    }
    close(top);
}

static void unmark_at_end(void);

/* This process's start time (clock ticks after boot), 0 when /proc cannot tell. The command
 * name in parentheses may hold anything: the fields are read after its last ')'. */
static unsigned long long start_time(void)
{
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 22; field++) /* p: before field `field + 1` */
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

void plx_mpi_job_mark(void)
{
    int dir = job_dir();
    if (dir < 0)
        return;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(marker, sizeof marker, "%s.%d-%llu", host, (int)getpid(), start_time());
    int fd = openat(dir, marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
        close(fd);
        marked = 1;
        marker_pid = getpid();
        plx_ext_on_process_end(unmark_at_end);
    }
    close(dir);
}

static int count(void)
{
    int dir = job_dir();
    DIR *d = dir < 0 ? NULL : fdopendir(dir);
    if (!d) {
        if (dir >= 0)
            close(dir);
        return 0;
    }
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* A marker short of `size` is looked for again for up to a second (a file system that shows
 * another host's new file late); a rank that is not measured never marks, and its job only
 * starts a second later. */
int plx_mpi_job_marked(int size)
{
    if (!marked)
        return 0;
    int n = count();
    for (int k = 0; n < size && k < 50; k++) {
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
        n = count();
    }
    return n;
}

/* Every rank measured: once every rank has counted (after the exchange's first collective), the
 * marker goes; the last one out removes the directories. */
void plx_mpi_job_unmark(void)
{
    int saved = errno;
    int dir = marked ? job_dir() : -1;
    if (dir >= 0) {
        unlinkat(dir, marker, 0);
        close(dir);
        marked = 0;
        remove_dirs();
    }
    errno = saved;
}

/* Whether every entry of the directory is a decided rank's (NAME.done); then they are removed. */
static int all_decided(int dir)
{
    DIR *d = fdopendir(dup(dir));
    if (!d)
        return 0;
    int all = 1;
    for (struct dirent *e; all && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        all = e->d_name[0] == '.' || (n > 5 && strcmp(e->d_name + n - 5, ".done") == 0);
    }
    if (all) {
        rewinddir(d);
        for (struct dirent *e; (e = readdir(d));)
            if (e->d_name[0] != '.')
                unlinkat(dir, e->d_name, 0);
    }
    closedir(d);
    return all;
}

/* Not every rank measured: another measured rank may still be counting, so the marker stays
 * counted but is named decided (MARKER.done); the last rank to decide removes every marker and
 * the directories. Also at the end of a rank that never decided (killed by its launcher, ended
 * inside MPI_Init). */
void plx_mpi_job_decided(void)
{
    int saved = errno;
    int dir = marked ? job_dir() : -1;
    if (dir >= 0) {
        char done[sizeof marker + 5];
        snprintf(done, sizeof done, "%s.done", marker);
        renameat(dir, marker, dir, done);
        marked = 0;
        int all = all_decided(dir);
        close(dir);
        if (all)
            remove_dirs();
    }
    errno = saved;
}

static void unmark_at_end(void)
{
    if (marker_pid == getpid())
        plx_mpi_job_decided();
}
