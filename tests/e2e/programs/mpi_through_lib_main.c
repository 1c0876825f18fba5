/* Calls libexchange.so (mpi_through_lib.c): MPI reaches this program through another library. */
int exchange(void);

int main(void)
{
    return exchange() == 42 ? 0 : 1;
}
