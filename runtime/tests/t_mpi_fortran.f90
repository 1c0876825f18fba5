! Fortran (mpif.h): each rank sends 4 messages of 10 integers to the next rank in a ring with
! MPI_Send/MPI_Recv, 2 more with MPI_Isend/MPI_Irecv/MPI_Waitall, then MPI_Allreduce once.
program ring
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nranks, i, next, prev, total
  integer :: buf(10), inb(10), reqs(2)
  integer :: status(MPI_STATUS_SIZE)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  next = mod(rank + 1, nranks)
  prev = mod(rank + nranks - 1, nranks)
  buf = rank
  do i = 1, 4
    if (mod(rank, 2) == 0) then
      call MPI_Send(buf, 10, MPI_INTEGER, next, 5, MPI_COMM_WORLD, ierr)
      call MPI_Recv(inb, 10, MPI_INTEGER, prev, 5, MPI_COMM_WORLD, status, ierr)
    else
      call MPI_Recv(inb, 10, MPI_INTEGER, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call MPI_Send(buf, 10, MPI_INTEGER, next, 5, MPI_COMM_WORLD, ierr)
    end if
  end do
  do i = 1, 2
    call MPI_Irecv(inb, 10, MPI_INTEGER, prev, 6, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(buf, 10, MPI_INTEGER, next, 6, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  end do
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program ring
