/* The programs that start or serve the processes to measure rather than being one (launchers.c):
 * standalone, so that plx run (engine/crates/plx-cli/build.rs) knows a launcher by the same
 * list the runtime uses. */
#ifndef PLX_LAUNCHERS_H
#define PLX_LAUNCHERS_H

/* Not a launcher. */
#define PLX_LAUNCHER_NONE 0
/* A job launcher the user runs (mpirun, mpiexec.hydra, srun): its ranks inherit its
 * environment. */
#define PLX_LAUNCHER_JOB 1
/* A helper of a launcher or of Parallax (Open MPI's orted and prted, MPICH's hydra_pmi_proxy,
 * the plx command itself). */
#define PLX_LAUNCHER_HELPER 2

/* What the program of file name `name` (no directory; NULL: none) is. */
__attribute__((visibility("hidden"))) int plx_launcher_kind(const char *name);

/* The MPI implementations with a wrapper library of their own. */
#define PLX_MPI_OPEN_MPI 1
#define PLX_MPI_MPICH 2
/* The MPI of a job launcher whose executable, its links followed, has file name `real_name`:
 * MPICH for Hydra's (mpiexec.hydra, mpirun.mpich), else Open MPI. */
__attribute__((visibility("hidden"))) int plx_launcher_mpi(const char *real_name);
/* The file name of the wrapper library of MPI `mpi`, beside libplx.so. */
__attribute__((visibility("hidden"))) const char *plx_mpi_wrapper(int mpi);

#endif /* PLX_LAUNCHERS_H */
