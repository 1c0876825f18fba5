/* Which ranks of the job run measured, known without a message: before MPI_Init each measured
 * rank creates an empty marker, named after its process directory (HOST.PID), in the
 * experiment's `.plx-mpi/JOB/` (JOB: a hash of PLX_JOB, which plx run sets to its job's key).
 * MPI_Init returns on no rank before every rank has entered it (Open MPI's and MPICH's Init end
 * in the launcher's fence over all ranks), so afterwards every rank counts the same markers and
 * takes the same decision, with no collective an unmeasured rank would never join. Directories
 * are opened without following links and must belong to this user; files are made with
 * O_EXCL. */
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

/* The job's marker directory, made if absent; -1 without a job name or an experiment. */
static int job_dir(void)
{
    const char *job = plx_ext_config()->job;
    const char *out = plx_ext_config()->output;
    if (!*job || !*out)
        return -1;
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (const char *p = job; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    char name[17];
    snprintf(name, sizeof name, "%016llx", (unsigned long long)h);
    int top = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int mpi = top < 0 ? -1 : own_dir_at(top, ".plx-mpi");
    int dir = mpi < 0 ? -1 : own_dir_at(mpi, name);
    if (top >= 0)
        close(top);
    if (mpi >= 0)
        close(mpi);
    return dir;
}

void plx_mpi_job_mark(void)
{
    int dir = job_dir();
    if (dir < 0)
        return;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(marker, sizeof marker, "%s.%d", host, (int)getpid());
    int fd = openat(dir, marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
        close(fd);
        marked = 1;
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

/* Once every rank has counted (after the first collective of the clock exchange). */
void plx_mpi_job_unmark(void)
{
    int dir = marked ? job_dir() : -1;
    if (dir < 0)
        return;
    unlinkat(dir, marker, 0);
    close(dir);
    marked = 0;
}
