import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;

import mpi.Intracomm;
import mpi.MPI;
import mpi.Request;
import mpi.Status;

/**
 * MPJ Express on 4 ranks: communicators other than MPI.COMM_WORLD, the v collectives, Probe,
 * the Test/Wait families and MPI.OBJECT (tests/e2e/test_java.py checks every figure below).
 *
 * <ul>
 * <li>Split by parity (key: the world rank): in each half, its rank 0 sends SPLIT_ROUNDS
 *     messages of 8 ints (tag 3) to its rank 1 (world 0 to 2, 1 to 3), then Bcast of 4 ints from
 *     its rank 1.</li>
 * <li>Create from the world group's ranks {3, 1}: its rank 0 (world 3) sends 2 messages of 5
 *     longs (tag 4) to its rank 1 (world 1).</li>
 * <li>clone (MPI_Comm_dup) of MPI.COMM_WORLD: world rank 2 sends 3 doubles (tag 5) to 0.</li>
 * <li>On MPI.COMM_WORLD, rank r contributing r + 1 ints: Gatherv to 0, Allgatherv, Scatterv
 *     from 3 (counts 1, 2, 3, 4), Alltoallv (r sends j + 1 ints to rank j), Reduce_scatter
 *     (counts 1, 2, 3, 4).</li>
 * <li>PROBES messages of 6 ints (tag 11) from 1 to 0, each received by Probe then Recv.</li>
 * <li>From 2 to 3: TESTS messages of 7 ints (tag 12), each an Isend and an Irecv completed by
 *     Test loops; then 1 int each with tags 13 and 14 completed by Waitany, 15 and 16 by a
 *     Testall loop, 17 and 18 by Waitsome.</li>
 * <li>MPI.OBJECT from 0 to 1: OBJECTS messages of 2 objects (a String and an int[]), 3 by
 *     Send/Recv and the last by Isend/Irecv + Wait; rank 0 prints "object bytes N", N the
 *     length of their Java serialization (one ObjectOutputStream per message, as MPJ writes
 *     them).</li>
 * </ul>
 * Prints "comms ok" on rank 0.
 */
public class CommsMpj {
    static final int SPLIT_ROUNDS = 6, PROBES = 5, TESTS = 4, OBJECTS = 4;

    static Object[] objects(int i) {
        return new Object[] {"parallax-" + i, new int[] {i, i + 1, i + 2}};
    }

    static int serialized(Object[] objs) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            for (Object o : objs)
                out.writeObject(o);
            out.flush();
            return bytes.size();
        }
    }

    public static void main(String[] args) throws Exception {
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        int rank = world.Rank(), size = world.Size();
        if (size != 4)
            throw new IllegalStateException("CommsMpj runs on 4 ranks");

        Intracomm half = world.Split(rank % 2, rank);
        int[] eight = new int[8];
        for (int i = 0; i < SPLIT_ROUNDS; i++) {
            if (half.Rank() == 0)
                half.Send(eight, 0, 8, MPI.INT, 1, 3);
            else
                half.Recv(eight, 0, 8, MPI.INT, 0, 3);
        }
        int[] four = new int[4];
        half.Bcast(four, 0, 4, MPI.INT, 1);

        Intracomm pair = world.Create(world.Group().Incl(new int[] {3, 1}));
        long[] five = new long[5];
        if (rank == 3 || rank == 1) {
            for (int i = 0; i < 2; i++) {
                if (pair.Rank() == 0)
                    pair.Send(five, 0, 5, MPI.LONG, 1, 4);
                else
                    pair.Recv(five, 0, 5, MPI.LONG, 0, 4);
            }
        }

        Intracomm dup = (Intracomm) world.clone();
        double[] three = new double[3];
        if (rank == 2)
            dup.Send(three, 0, 3, MPI.DOUBLE, 0, 5);
        else if (rank == 0)
            dup.Recv(three, 0, 3, MPI.DOUBLE, 2, 5);

        int[] counts = {1, 2, 3, 4}, displs = {0, 1, 3, 6};
        int[] mine = new int[rank + 1], all = new int[10];
        world.Gatherv(mine, 0, rank + 1, MPI.INT, all, 0, counts, displs, MPI.INT, 0);
        world.Allgatherv(mine, 0, rank + 1, MPI.INT, all, 0, counts, displs, MPI.INT);
        world.Scatterv(all, 0, counts, displs, MPI.INT, mine, 0, rank + 1, MPI.INT, 3);
        int[] rcounts = new int[4], rdispls = new int[4];
        for (int j = 0; j < 4; j++) {
            rcounts[j] = rank + 1;
            rdispls[j] = j * (rank + 1);
        }
        int[] got = new int[4 * (rank + 1)];
        world.Alltoallv(all, 0, counts, displs, MPI.INT, got, 0, rcounts, rdispls, MPI.INT);
        int[] reduced = new int[rank + 1], ten = new int[10];
        world.Reduce_scatter(ten, 0, reduced, 0, counts, MPI.INT, MPI.SUM);

        int[] six = new int[6];
        for (int i = 0; i < PROBES; i++) {
            if (rank == 1) {
                world.Send(six, 0, 6, MPI.INT, 0, 11);
            } else if (rank == 0) {
                Status st = world.Probe(MPI.ANY_SOURCE, 11);
                world.Recv(six, 0, 6, MPI.INT, st.source, 11);
            }
        }

        int[] seven = new int[7];
        for (int i = 0; i < TESTS; i++) {
            Request r = rank == 2 ? world.Isend(seven, 0, 7, MPI.INT, 3, 12)
                      : rank == 3 ? world.Irecv(seven, 0, 7, MPI.INT, 2, 12) : null;
            while (r != null && r.Test() == null)
                Thread.yield();
        }
        int[] one = new int[1], other = new int[1];
        for (int tag = 13; tag <= 17; tag += 2) {
            if (rank == 2) {
                world.Send(one, 0, 1, MPI.INT, 3, tag);
                world.Send(one, 0, 1, MPI.INT, 3, tag + 1);
            } else if (rank == 3) {
                Request[] reqs = {world.Irecv(one, 0, 1, MPI.INT, 2, tag),
                                  world.Irecv(other, 0, 1, MPI.INT, 2, tag + 1)};
                if (tag == 13) {
                    Status st = Request.Waitany(reqs);
                    Request.Waitany(new Request[] {reqs[1 - st.index]});
                } else if (tag == 15) {
                    while (Request.Testall(reqs) == null)
                        Thread.yield();
                } else {
                    int done = 0;
                    Request[] left = reqs;
                    while (done < 2) {
                        Status[] sts = Request.Waitsome(left);
                        done += sts.length;
                        boolean[] finished = new boolean[left.length];
                        for (Status st : sts)
                            finished[st.index] = true;
                        Request[] rest = new Request[left.length - sts.length];
                        for (int i = 0, k = 0; i < left.length; i++)
                            if (!finished[i])
                                rest[k++] = left[i];
                        left = rest;
                    }
                }
            }
        }

        int objectBytes = 0;
        for (int i = 0; i < OBJECTS; i++) {
            Object[] objs = objects(i), in = new Object[2];
            objectBytes += serialized(objs);
            if (rank == 0) {
                if (i < OBJECTS - 1)
                    world.Send(objs, 0, 2, MPI.OBJECT, 1, 20);
                else
                    world.Isend(objs, 0, 2, MPI.OBJECT, 1, 20).Wait();
            } else if (rank == 1) {
                if (i < OBJECTS - 1)
                    world.Recv(in, 0, 2, MPI.OBJECT, 0, 20);
                else
                    world.Irecv(in, 0, 2, MPI.OBJECT, 0, 20).Wait();
                if (!in[0].equals(objs[0]))
                    throw new IllegalStateException("object " + i + ": " + in[0]);
            }
        }

        world.Barrier();
        if (rank == 0) {
            System.out.println("object bytes " + objectBytes);
            System.out.println("comms ok");
        }
        MPI.Finalize();
    }
}
