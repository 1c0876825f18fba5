/* Wait states of known size (plx waits, tests/e2e/test_waits.py), 4 ranks. Each scenario is a
 * function of its own, between two barriers called from main; a named delay_* function
 * sleeps D seconds (argv[1]) on chosen ranks:
 *   late_sender   ranks 1 and 3 sleep, then MPI_Send to 0 and 2 (waiting in MPI_Recv)
 *   late_receiver ranks 1 and 3 sleep, then MPI_Recv what 0 and 2 MPI_Ssend them
 *   barrier       rank 2 sleeps, then MPI_Barrier
 *   nxn           rank 3 sleeps, then MPI_Allreduce
 *   bcast         the root, rank 0, sleeps, then MPI_Bcast
 *   reduce        every rank but the root, rank 1, sleeps, then MPI_Reduce
 *   chain         rank 3 sleeps, sends to 2, which then sends to 1, which sends to 0
 *   balanced      every rank sleeps D, then MPI_Allreduce and a ring MPI_Sendrecv
 *   wrong_order   rank 0 MPI_Ssends to 2; rank 1 sleeps, then MPI_Sends to 2, which receives
 *                 rank 1's message first (a late sender while rank 0's earlier one is
 *                 pending), then rank 0's (whose Ssend waited while 2 took a later message)
 *   nonblocking   rank 0 MPI_Issends to 1 and waits in MPI_Wait while rank 1 sleeps before its
 *                 MPI_Recv; rank 2 MPI_Ibsends to 3 (buffered: it never waits for 3's sleep)
 *   irecv_late    ranks 1 and 3 sleep, then post their receive with MPI_Irecv and complete it
 *                 in MPI_Wait; rank 0 MPI_Ssends to 1, rank 2 MPI_Issends to 3 and waits in
 *                 MPI_Wait (both wait for the post)
 *   irecv_rendezvous rank 1 sleeps, then MPI_Irecv + MPI_Wait of a 4 MiB message rank 0
 *                 MPI_Sends (above every eager limit: the send waits for the post); rank 3
 *                 posts MPI_Irecv and waits in MPI_Wait for rank 2, which sleeps before its
 *                 MPI_Send
 *   irecv_waitall rank 0 posts MPI_Irecvs from ranks 1, 2 and 3, sleeps D/2 and waits for
 *                 them in MPI_Waitall; ranks 1 and 2 send after D/4 (the receives posted, the
 *                 wait not begun), rank 3 after sleeping D
 *   relay         rank 0 sleeps D in delay_relay, then sends to 1; rank 1 receives, sleeps D/2
 *                 in relay_work, then sends to 2 (waiting in MPI_Recv since the scenario began:
 *                 for rank 0's delay through rank 1's wait, and for rank 1's relay_work)
 *   probe         ranks 1 and 3 sleep, then MPI_Send to 0 and 2; rank 0 waits in MPI_Mprobe and
 *                 receives with MPI_Mrecv, rank 2 waits in MPI_Probe and receives with MPI_Recv
 *   isendrecv     (MPI 4.0: MPICH) rank 2 MPI_Ssends to 3, which sleeps D, posts its receive
 *                 with MPI_Isendrecv, sleeps D/2 more and completes it in MPI_Wait (the late
 *                 receiver's cause: the sleep before the post alone)
 *   pair_barrier  rank 1 sleeps D in delay_before_pair, sends to 0 (waiting in MPI_Recv), sleeps
 *                 D/2 in work_after_pair and enters MPI_Barrier: rank 0's barrier wait is
 *                 caused by work_after_pair alone (they synchronised at the message), ranks 2
 *                 and 3's by both (they last synchronised at the barrier before)
 *   reduce_root   the root, rank 0, sleeps D in delay_reduce_root, then MPI_Reduce, which the
 *                 others left long before (eager), then MPI_Barrier: their barrier waits are
 *                 caused by delay_reduce_root (the reduce synchronised none of them)
 *   icoll_nxn     rank 3 sleeps D in delay_iallreduce, then posts MPI_Iallreduce; every rank
 *                 completes it in MPI_Wait right after its post (ranks 0-2 wait there for 3)
 *   icoll_bcast   the root, rank 2, sleeps D in delay_ibcast, then posts MPI_Ibcast; every rank
 *                 completes it in MPI_Waitall right after its post (the others wait there)
 *   subcomm       ranks {0, 2} and {1, 3} split off; rank 3 sleeps D in delay_subcomm, then
 *                 MPI_Allreduce on {1, 3} (rank 1 waits there), {0, 2} meet in theirs at once;
 *                 at main's barrier after it ranks 0 and 2 wait for 1 and 3: caused by
 *                 delay_subcomm (they last synchronised with 3 at the barrier before) */
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static double D;
static int rank;

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

NOINLINE static void delay_send(void) { nap(D); }
NOINLINE static void delay_recv(void) { nap(D); }
NOINLINE static void delay_barrier(void) { nap(D); }
NOINLINE static void delay_allreduce(void) { nap(D); }
NOINLINE static void delay_bcast(void) { nap(D); }
NOINLINE static void delay_reduce(void) { nap(D); }
NOINLINE static void delay_chain(void) { nap(D); }
NOINLINE static void balanced_work(void) { nap(D); }
NOINLINE static void delay_wrong_order(void) { nap(D); }
NOINLINE static void delay_issend(void) { nap(D); }
NOINLINE static void delay_ibsend(void) { nap(D); }
NOINLINE static void delay_irecv(void) { nap(D); }
NOINLINE static void delay_rendezvous(void) { nap(D); }
NOINLINE static void delay_late_isend(void) { nap(D); }
NOINLINE static void delay_waitall(void) { nap(D); }
NOINLINE static void work_before_waitall(void) { nap(D / 2); }
NOINLINE static void before_early_send(void) { nap(D / 4); }
NOINLINE static void delay_relay(void) { nap(D); }
NOINLINE static void relay_work(void) { nap(D / 2); }
NOINLINE static void delay_probed(void) { nap(D); }
NOINLINE static void delay_isendrecv(void) { nap(D); }
NOINLINE static void after_isendrecv(void) { nap(D / 2); }
NOINLINE static void delay_before_pair(void) { nap(D); }
NOINLINE static void work_after_pair(void) { nap(D / 2); }
NOINLINE static void delay_reduce_root(void) { nap(D); }
NOINLINE static void delay_iallreduce(void) { nap(D); }
NOINLINE static void delay_ibcast(void) { nap(D); }
NOINLINE static void delay_subcomm(void) { nap(D); }

NOINLINE static void late_sender(void)
{
    int v = rank;
    if (rank % 2) {
        delay_send();
        MPI_Send(&v, 1, MPI_INT, rank - 1, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&v, 1, MPI_INT, rank + 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

NOINLINE static void late_receiver(void)
{
    int v = rank;
    if (rank % 2) {
        delay_recv();
        MPI_Recv(&v, 1, MPI_INT, rank - 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Ssend(&v, 1, MPI_INT, rank + 1, 2, MPI_COMM_WORLD);
    }
}

NOINLINE static void barrier(void)
{
    if (rank == 2)
        delay_barrier();
    MPI_Barrier(MPI_COMM_WORLD);
}

NOINLINE static void nxn(void)
{
    int v = rank, sum = 0;
    if (rank == 3)
        delay_allreduce();
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

NOINLINE static void bcast(void)
{
    int v = rank;
    if (rank == 0)
        delay_bcast();
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
}

NOINLINE static void reduce(void)
{
    int v = rank, sum = 0;
    if (rank != 1)
        delay_reduce();
    MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD);
}

NOINLINE static void chain(void)
{
    int v = rank;
    if (rank == 3)
        delay_chain();
    else
        MPI_Recv(&v, 1, MPI_INT, rank + 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank > 0)
        MPI_Send(&v, 1, MPI_INT, rank - 1, 3, MPI_COMM_WORLD);
}

NOINLINE static void balanced(void)
{
    int v = rank, sum = 0, size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    balanced_work();
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 4, &sum, 1, MPI_INT,
                 (rank + size - 1) % size, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

NOINLINE static void wrong_order(void)
{
    int v = rank;
    if (rank == 0) {
        MPI_Ssend(&v, 1, MPI_INT, 2, 5, MPI_COMM_WORLD);
    } else if (rank == 1) {
        delay_wrong_order();
        MPI_Send(&v, 1, MPI_INT, 2, 6, MPI_COMM_WORLD);
    } else if (rank == 2) {
        MPI_Recv(&v, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

NOINLINE static void nonblocking(void)
{
    int v = rank;
    static char buf[MPI_BSEND_OVERHEAD + 64];
    MPI_Request req;
    if (rank == 0) {
        MPI_Issend(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        delay_issend();
        MPI_Recv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 2) {
        void *old;
        int size;
        MPI_Buffer_attach(buf, sizeof buf);
        MPI_Ibsend(&v, 1, MPI_INT, 3, 8, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Buffer_detach(&old, &size);
    } else {
        delay_ibsend();
        MPI_Recv(&v, 1, MPI_INT, 2, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

NOINLINE static void irecv_late(void)
{
    int v = rank;
    MPI_Request req;
    if (rank == 0) {
        MPI_Ssend(&v, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
    } else if (rank == 2) {
        MPI_Issend(&v, 1, MPI_INT, 3, 10, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        delay_irecv();
        MPI_Irecv(&v, 1, MPI_INT, rank - 1, rank == 1 ? 9 : 10, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

#define BIG (4 << 20)

NOINLINE static void irecv_rendezvous(void)
{
    static char big[BIG];
    int v = rank;
    MPI_Request req;
    if (rank == 0) {
        MPI_Send(big, BIG, MPI_CHAR, 1, 11, MPI_COMM_WORLD);
    } else if (rank == 1) {
        delay_rendezvous();
        MPI_Irecv(big, BIG, MPI_CHAR, 0, 11, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (rank == 2) {
        delay_late_isend();
        MPI_Send(&v, 1, MPI_INT, 3, 12, MPI_COMM_WORLD);
    } else {
        MPI_Irecv(&v, 1, MPI_INT, 2, 12, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

NOINLINE static void irecv_waitall(void)
{
    int v[3] = {rank, rank, rank};
    MPI_Request reqs[3];
    if (rank == 0) {
        for (int i = 0; i < 3; i++)
            MPI_Irecv(&v[i], 1, MPI_INT, i + 1, 13, MPI_COMM_WORLD, &reqs[i]);
        work_before_waitall();
        MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
    } else {
        if (rank == 3)
            delay_waitall();
        else
            before_early_send();
        MPI_Send(&v[0], 1, MPI_INT, 0, 13, MPI_COMM_WORLD);
    }
}

NOINLINE static void relay(void)
{
    int v = rank;
    if (rank == 0) {
        delay_relay();
        MPI_Send(&v, 1, MPI_INT, 1, 14, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(&v, 1, MPI_INT, 0, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        relay_work();
        MPI_Send(&v, 1, MPI_INT, 2, 14, MPI_COMM_WORLD);
    } else if (rank == 2) {
        MPI_Recv(&v, 1, MPI_INT, 1, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

NOINLINE static void probe(void)
{
    int v = rank;
    if (rank % 2) {
        delay_probed();
        MPI_Send(&v, 1, MPI_INT, rank - 1, 15, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Message m;
        MPI_Mprobe(1, 15, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
        MPI_Mrecv(&v, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
    } else {
        MPI_Status st;
        MPI_Probe(MPI_ANY_SOURCE, 15, MPI_COMM_WORLD, &st);
        MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

NOINLINE static void isendrecv(void)
{
#if MPI_VERSION >= 4
    int v = rank, w = 0;
    MPI_Request req;
    if (rank == 2) {
        MPI_Ssend(&v, 1, MPI_INT, 3, 16, MPI_COMM_WORLD);
    } else if (rank == 3) {
        delay_isendrecv();
        MPI_Isendrecv(&v, 1, MPI_INT, MPI_PROC_NULL, 16, &w, 1, MPI_INT, 2, 16, MPI_COMM_WORLD,
                      &req);
        after_isendrecv();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
#endif
}

NOINLINE static void pair_barrier(void)
{
    int v = rank;
    if (rank == 1) {
        delay_before_pair();
        MPI_Send(&v, 1, MPI_INT, 0, 17, MPI_COMM_WORLD);
        work_after_pair();
    } else if (rank == 0) {
        MPI_Recv(&v, 1, MPI_INT, 1, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

NOINLINE static void reduce_root(void)
{
    int v = rank, sum = 0;
    if (rank == 0)
        delay_reduce_root();
    MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
}

NOINLINE static void icoll_nxn(void)
{
    int v = rank, sum = 0;
    MPI_Request req;
    if (rank == 3)
        delay_iallreduce();
    MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

NOINLINE static void icoll_bcast(void)
{
    int v = rank;
    MPI_Request req;
    if (rank == 2)
        delay_ibcast();
    MPI_Ibcast(&v, 1, MPI_INT, 2, MPI_COMM_WORLD, &req);
    MPI_Waitall(1, &req, MPI_STATUSES_IGNORE);
}

NOINLINE static void subcomm(void)
{
    MPI_Comm half;
    int v = rank, sum = 0;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    if (rank == 3)
        delay_subcomm();
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, half);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    D = argc > 1 ? atof(argv[1]) : 0.2;
    void (*scenarios[])(void) = {late_sender, late_receiver, barrier,     nxn,        bcast,
                                 reduce,      chain,         balanced,    wrong_order, nonblocking,
                                 irecv_late,  irecv_rendezvous, irecv_waitall, relay,
                                 probe,       isendrecv,     pair_barrier, reduce_root,
                                 icoll_nxn,   icoll_bcast,   subcomm};
    MPI_Barrier(MPI_COMM_WORLD);
    for (size_t i = 0; i < sizeof scenarios / sizeof *scenarios; i++) {
        scenarios[i]();
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
