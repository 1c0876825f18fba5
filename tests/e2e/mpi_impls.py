"""The MPI implementations the MPI tests run on: Open MPI and MPICH (the MPICH ABI is also that
of Cray MPICH, Intel MPI and MVAPICH). Each names its compiler wrapper, its launcher, and what
plx reports as its library; libplx-mpi.so wraps Open MPI, libplx-mpi-mpich.so MPICH."""

import os

from components import require, require_tools

from conftest import LIBPLX


class MpiImpl:
    def __init__(self, name, mpicc, launcher, library, wrapper):
        self.name = name
        self.mpicc = mpicc
        self.launcher = launcher  # the launcher's command and the options it always gets
        self.library = library  # how the MPI library's version string begins
        self.wrapper = wrapper  # Parallax's PMPI wrapper library for it

    def __repr__(self):
        return self.name

    def require(self):
        """Fails (CI) or skips the calling test unless this implementation and its Parallax
        wrapper library are installed."""
        require_tools(self.mpicc, self.launcher[0], what="%s (%s, %s)" % (
            self.name, self.mpicc, self.launcher[0]))
        require(LIBPLX.with_name(self.wrapper).exists(),
                "%s (built by `make all` when %s is installed)" % (self.wrapper, self.mpicc))

    @property
    def mpifort(self):
        """Its Fortran compiler wrapper (mpifort, mpifort.mpich)."""
        return self.mpicc.replace("mpicc", "mpifort")

    def mpirun_cmd(self, np, *command):
        return [*self.launcher, "-np", str(np), *(str(c) for c in command)]


# as root Open MPI's mpirun wants --allow-run-as-root; it refuses more ranks than cores unless
# --oversubscribe; MPICH's Hydra needs neither
OPEN_MPI = MpiImpl("Open MPI", "mpicc",
                   ["mpirun", "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0
                                                    else []),
                   "Open MPI", "libplx-mpi.so")
MPICH = MpiImpl("MPICH", "mpicc.mpich", ["mpirun.mpich"], "MPICH", "libplx-mpi-mpich.so")
IMPLS = {"open-mpi": OPEN_MPI, "mpich": MPICH}
