/* The launchers and helpers, by file name (launchers.h). A process running one records no event
 * from any adapter (process.c): its connects, waits and locks are the job's plumbing, not the
 * program's, and it stays a process "not measured" in the experiment. */
#include "launchers.h"

#include <string.h>

static const struct {
    const char *name;
    int kind;
} programs[] = {
    {"mpirun", PLX_LAUNCHER_JOB},
    {"mpiexec", PLX_LAUNCHER_JOB},
    {"orterun", PLX_LAUNCHER_JOB},
    {"prterun", PLX_LAUNCHER_JOB},
    {"srun", PLX_LAUNCHER_JOB},
    {"mpirun.openmpi", PLX_LAUNCHER_JOB},
    {"mpiexec.openmpi", PLX_LAUNCHER_JOB},
    {"mpiexec.hydra", PLX_LAUNCHER_JOB},
    {"mpirun.mpich", PLX_LAUNCHER_JOB},
    {"mpiexec.mpich", PLX_LAUNCHER_JOB},
    {"orted", PLX_LAUNCHER_HELPER},
    {"prted", PLX_LAUNCHER_HELPER},
    {"hydra_pmi_proxy", PLX_LAUNCHER_HELPER},
    {"plx", PLX_LAUNCHER_HELPER},
};

int plx_launcher_kind(const char *name)
{
    if (!name)
        return PLX_LAUNCHER_NONE;
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++)
        if (strcmp(programs[i].name, name) == 0)
            return programs[i].kind;
    return PLX_LAUNCHER_NONE;
}

int plx_launcher_mpi(const char *real_name)
{
    return real_name && (strstr(real_name, "mpich") || strstr(real_name, "hydra")) ? PLX_MPI_MPICH
                                                                                   : PLX_MPI_OPEN_MPI;
}

const char *plx_mpi_wrapper(int mpi)
{
    return mpi == PLX_MPI_MPICH ? "libplx-mpi-mpich.so" : "libplx-mpi.so";
}
