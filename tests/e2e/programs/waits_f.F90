! waits_f D (4 ranks): Fortran MPI with injected delays, built twice: with `use mpi` (the
! mpi_NAME_ bindings) and with -DF08, `use mpi_f08` (Open MPI's f08 layer). Each delay_* routine
! sleeps D seconds on one rank before that rank's part:
!   late_sender_any: rank 1 delay_send, then MPI_Send to rank 0, which posted MPI_Irecv and waits
!                    in MPI_Waitany (a late sender of D);
!   test_loop:       rank 3 delay_isend, then MPI_Isend to rank 2 and MPI_Waitall; rank 2 polls
!                    MPI_Test (a LOGICAL flag) every millisecond until the message is in;
!   iallreduce:      rank 3 delay_iallreduce, then MPI_Iallreduce; every rank completes it in
!                    MPI_Wait (ranks 0-2 wait at N x N for D);
!   split_barrier:   MPI_Comm_split into {0,1} and {2,3}; rank 3 delay_split, then MPI_Barrier on
!                    the halves (rank 2 waits at the barrier for D); MPI_Comm_free;
!   late_bcast:      rank 1 delay_bcast, then MPI_Bcast from root 1 (ranks 0, 2, 3 wait for D);
!   balanced:        MPI_Probe + MPI_Recv (rank 1 to 0), MPI_Gather, MPI_Alltoall,
!                    MPI_Cart_create (2 x 2, LOGICAL periods) and MPI_Cart_sub + MPI_Allreduce
!                    along a row, MPI_Sendrecv around a ring, MPI_Iprobe.
! Each rank prints one line of what MPI gave back, which the bindings must pass on unchanged:
! "rank R index I source S tests T total T half H bcast B gather G alltoall A row W ring P".
#ifdef F08
#define MPI_MODULE use mpi_f08
#define REQUEST type(MPI_Request)
#define COMMUNICATOR type(MPI_Comm)
#define STATUS_VAR type(MPI_Status) :: st
#define SOURCE_OF(s) s%MPI_SOURCE
#else
#define MPI_MODULE use mpi
#define REQUEST integer
#define COMMUNICATOR integer
#define STATUS_VAR integer :: st(MPI_STATUS_SIZE)
#define SOURCE_OF(s) s(MPI_SOURCE)
#endif

subroutine nap(seconds)
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function usleep(us) bind(c, name='usleep')
      import :: c_int
      integer(c_int), value :: us
    end function usleep
  end interface
  double precision, intent(in) :: seconds
  integer(c_int) :: rc
  rc = usleep(int(seconds * 1d6, c_int))
end subroutine nap

subroutine delay_send(d)
  double precision, intent(in) :: d
  call nap(d)
end subroutine delay_send

subroutine delay_isend(d)
  double precision, intent(in) :: d
  call nap(d)
end subroutine delay_isend

subroutine delay_iallreduce(d)
  double precision, intent(in) :: d
  call nap(d)
end subroutine delay_iallreduce

subroutine delay_split(d)
  double precision, intent(in) :: d
  call nap(d)
end subroutine delay_split

subroutine delay_bcast(d)
  double precision, intent(in) :: d
  call nap(d)
end subroutine delay_bcast

subroutine late_sender_any(rank, d, idx, src)
  MPI_MODULE
  implicit none
  integer, intent(in) :: rank
  double precision, intent(in) :: d
  integer, intent(out) :: idx, src
  REQUEST :: req(1)
  STATUS_VAR
  integer :: buf(100), ierr
  idx = -1
  src = -1
  buf = rank
  if (rank == 0) then
    call MPI_Irecv(buf, 100, MPI_INTEGER, 1, 1, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Waitany(1, req, idx, st, ierr)
    src = SOURCE_OF(st)
  else if (rank == 1) then
    call delay_send(d)
    call MPI_Send(buf, 100, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, ierr)
  end if
end subroutine late_sender_any

subroutine test_loop(rank, d, tests)
  MPI_MODULE
  implicit none
  integer, intent(in) :: rank
  double precision, intent(in) :: d
  integer, intent(out) :: tests
  REQUEST :: req(1)
  STATUS_VAR
  logical :: flag
  integer :: buf(50), ierr
  tests = 0
  buf = rank
  if (rank == 2) then
    call MPI_Irecv(buf, 50, MPI_INTEGER, 3, 2, MPI_COMM_WORLD, req(1), ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Test(req(1), flag, st, ierr)
      tests = tests + 1
      if (.not. flag) call nap(0.001d0)
    end do
    if (SOURCE_OF(st) /= 3 .or. buf(1) /= 3) tests = -tests
  else if (rank == 3) then
    call delay_isend(d)
    call MPI_Isend(buf, 50, MPI_INTEGER, 2, 2, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Waitall(1, req, MPI_STATUSES_IGNORE, ierr)
  end if
end subroutine test_loop

subroutine iallreduce(rank, d, total)
  MPI_MODULE
  implicit none
  integer, intent(in) :: rank
  double precision, intent(in) :: d
  integer, intent(out) :: total
  REQUEST :: req
  integer :: ierr
  if (rank == 3) call delay_iallreduce(d)
  call MPI_Iallreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
end subroutine iallreduce

subroutine split_barrier(rank, d, half_size)
  MPI_MODULE
  implicit none
  integer, intent(in) :: rank
  double precision, intent(in) :: d
  integer, intent(out) :: half_size
  COMMUNICATOR :: half
  integer :: ierr
  call MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, half, ierr)
  if (rank == 3) call delay_split(d)
  call MPI_Barrier(half, ierr)
  call MPI_Comm_size(half, half_size, ierr)
  call MPI_Comm_free(half, ierr)
  if (half /= MPI_COMM_NULL) half_size = -half_size
end subroutine split_barrier

subroutine late_bcast(rank, d, got)
  MPI_MODULE
  implicit none
  integer, intent(in) :: rank
  double precision, intent(in) :: d
  integer, intent(out) :: got
  integer :: buf(10), ierr
  buf = rank
  if (rank == 1) call delay_bcast(d)
  call MPI_Bcast(buf, 10, MPI_INTEGER, 1, MPI_COMM_WORLD, ierr)
  got = buf(10)
end subroutine late_bcast

subroutine balanced(rank, nranks, gathered, exchanged, row, ring)
  MPI_MODULE
  implicit none
  integer, intent(in) :: rank, nranks
  integer, intent(out) :: gathered, exchanged, row, ring
  STATUS_VAR
  COMMUNICATOR :: grid, line
  logical :: periods(2), remain(2), flag
  integer :: dims(2), all(4), mine(4), theirs(4), ierr, n, buf(20)
  buf = rank
  if (rank == 1) call MPI_Send(buf, 20, MPI_INTEGER, 0, 9, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_Probe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, st, ierr)
    call MPI_Get_count(st, MPI_INTEGER, n, ierr)
    call MPI_Recv(buf, n, MPI_INTEGER, SOURCE_OF(st), 9, MPI_COMM_WORLD, st, ierr)
  end if
  all = -1
  call MPI_Gather(rank, 1, MPI_INTEGER, all, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  gathered = 0
  if (rank == 0) gathered = all(1) + 10 * all(2) + 100 * all(3) + 1000 * all(4)
  mine = rank * 10 + [0, 1, 2, 3]
  call MPI_Alltoall(mine, 1, MPI_INTEGER, theirs, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  exchanged = theirs(1) + theirs(2) + theirs(3) + theirs(4)
  dims = [2, 2]
  periods = [.true., .false.]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., grid, ierr)
  remain = [.false., .true.]
  call MPI_Cart_sub(grid, remain, line, ierr)
  call MPI_Allreduce(rank, row, 1, MPI_INTEGER, MPI_SUM, line, ierr)
  call MPI_Comm_free(line, ierr)
  call MPI_Comm_free(grid, ierr)
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, mod(rank + 1, nranks), 4, ring, 1, MPI_INTEGER, &
                    mod(rank + nranks - 1, nranks), 4, MPI_COMM_WORLD, st, ierr)
  call MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, flag, st, ierr)
  if (flag) ring = -1
end subroutine balanced

program waits_f
  MPI_MODULE
  implicit none
  integer :: ierr, rank, nranks, idx, src, tests, total, half, got, gathered, exchanged, row, ring
  double precision :: d
  character(len=32) :: arg
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  if (nranks /= 4) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  call get_command_argument(1, arg)
  read (arg, *) d
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call late_sender_any(rank, d, idx, src)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call test_loop(rank, d, tests)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call iallreduce(rank, d, total)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call split_barrier(rank, d, half)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call late_bcast(rank, d, got)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call balanced(rank, nranks, gathered, exchanged, row, ring)
  write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0)') &
    'rank ', rank, ' index ', idx, ' source ', src, ' tests ', tests, ' total ', total, &
    ' half ', half, ' bcast ', got, ' gather ', gathered, ' alltoall ', exchanged, &
    ' row ', row, ' ring ', ring
  call MPI_Finalize(ierr)
end program waits_f
