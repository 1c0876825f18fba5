! Built with plain mpifort: mpi_attach_loop.c through the Fortran bindings (mpif.h: gfortran
! calls mpi_send_, ...), the target of plx attach to a Fortran MPI rank (test_probes.py).
! mpi_attach_loop_f DIR N (2 ranks): rank 0 writes DIR/pid, both wait for DIR/go; then rank 0
! sends 100 integers to rank 1 (tag 7) N times, rank 1 answers each with 10 (tag 8), and both
! call MPI_Barrier after every 10th exchange; each rank writes DIR/done<rank> and waits for
! DIR/quit. Rank 0 prints its own counts: "sent N received N barriers N/10".
program mpi_attach_loop_f
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  include 'mpif.h'
  interface
    integer(c_int) function usleep(us) bind(c, name='usleep')
      import :: c_int
      integer(c_int), value :: us
    end function usleep
  end interface
  integer :: ierr, rank, nranks, n, i, sent, received, barriers
  integer :: st(MPI_STATUS_SIZE), out(100), back(10)
  character(len=4096) :: dir, arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, dir)
  call get_command_argument(2, arg)
  read (arg, *) n
  if (nranks /= 2) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  if (rank == 0) call write_file('pid', getpid())
  call wait_file('go')
  out = 0
  back = 0
  sent = 0
  received = 0
  barriers = 0
  do i = 1, n
    if (rank == 0) then
      out(1) = i
      call MPI_Send(out, 100, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr)
      sent = sent + 1
      call MPI_Recv(back, 10, MPI_INTEGER, 1, 8, MPI_COMM_WORLD, st, ierr)
      received = received + 1
    else
      call MPI_Recv(out, 100, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, st, ierr)
      back(1) = out(1)
      call MPI_Send(back, 10, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, ierr)
    end if
    if (mod(i, 10) == 0) then
      call MPI_Barrier(MPI_COMM_WORLD, ierr)
      barriers = barriers + 1
    end if
  end do
  call write_file('done' // achar(iachar('0') + rank), 1)
  call wait_file('quit')
  if (rank == 0) print '(a,i0,a,i0,a,i0)', 'sent ', sent, ' received ', received, &
                                           ' barriers ', barriers
  call MPI_Finalize(ierr)

contains

  subroutine wait_file(name)
    character(len=*), intent(in) :: name
    logical :: there
    integer(c_int) :: rc
    do
      inquire (file=trim(dir) // '/' // name, exist=there)
      if (there) exit
      rc = usleep(1000_c_int)
    end do
  end subroutine wait_file

  ! Written whole, then renamed: a reader never sees it empty.
  subroutine write_file(name, value)
    character(len=*), intent(in) :: name
    integer, intent(in) :: value
    integer :: u
    open (newunit=u, file=trim(dir) // '/' // name // '.tmp', status='replace')
    write (u, '(i0)') value
    close (u)
    call rename(trim(dir) // '/' // name // '.tmp', trim(dir) // '/' // name)
  end subroutine write_file
end program mpi_attach_loop_f
