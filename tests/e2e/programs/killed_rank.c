/* A rank killed by SIGKILL inside MPI_Init, its clock-exchange marker made: rank 1 (by the
 * launcher's environment) has a thread kill the whole process 0.5 s after it started, while
 * MPI_Init waits for rank 0, which sleeps 3 s before entering it. The launcher then ends rank 0. */
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static void *killer(void *arg)
{
    (void)arg;
    usleep(500000);
    raise(SIGKILL);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r)
        r = getenv("PMI_RANK");
    pthread_t t;
    if (r && atoi(r) == 1)
        pthread_create(&t, NULL, killer, NULL);
    else
        sleep(3);
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
