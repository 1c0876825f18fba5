package org.parallax;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Starts N ranks of an MPJ Express program (Debian's libmpj-java, device niodev) on this host,
 * each under {@code plx run}: the part of MPJ's starter that Debian does not ship (docs/java.md).
 *
 * <pre>plx-mpj -np N [PLX RUN OPTIONS] -- java [JVM OPTIONS] MAIN [ARGS]</pre>
 *
 * Each rank runs {@code plx run OPTIONS -- java JVM-OPTIONS MAIN RANK CONF niodev ARGS}, where
 * CONF is niodev's argument string (number of processes, protocol switch limit, and this
 * launcher's address); every rank connects to the launcher with its rank and its two ports, and
 * the launcher answers all of them with the table of peers, as MPJ's own starter does (MPJ 0.44,
 * runtime/starter/MPJRun.java and xdev/niodev/NIODevice.java).
 */
public final class MpjRun {
    private MpjRun() {}

    private static final int PROTOCOL_SWITCH_LIMIT = 128 * 1024;

    public static void main(String[] args) throws Exception {
        String plx = "plx";
        int np = -1;
        List<String> plxOptions = new ArrayList<>();
        int i = 0;
        for (; i < args.length && !args[i].equals("--"); i++) {
            if (args[i].equals("--plx") && i + 1 < args.length)
                plx = args[++i];
            else if (args[i].equals("-np") && i + 1 < args.length)
                np = Integer.parseInt(args[++i]);
            else
                plxOptions.add(args[i]);
        }
        List<String> command = i < args.length ? Arrays.asList(args).subList(i + 1, args.length) : List.of();
        int main = mainIndex(command);
        if (np < 1 || main < 0) {
            System.err.println("usage: plx-mpj -np N [plx run options] -- java [JVM options] MAIN [ARGS]");
            System.exit(2);
        }
        File home = Files.createTempDirectory("plx-mpj").toFile();
        new File(home, "logs").mkdir();
        File conf = new File(home, "conf");
        conf.mkdir();
        Files.writeString(new File(conf, "mpjexpress.conf").toPath(),
                          "mpjexpress.mpi.loglevel = OFF\nmpjexpress.mpi.old.collectives = false\n");
        try (ServerSocket server = new ServerSocket(0, np, InetAddress.getLoopbackAddress())) {
            String niodev = "#Number of Processes;" + np + ";#Protocol Switch Limit;" + PROTOCOL_SWITCH_LIMIT
                + ";#Server Name;" + server.getInetAddress().getHostAddress() + ";#Server Port;"
                + server.getLocalPort();
            List<Process> ranks = new ArrayList<>();
            for (int r = 0; r < np; r++) {
                List<String> cmd = new ArrayList<>();
                cmd.add(plx);
                cmd.add("run");
                cmd.addAll(plxOptions);
                cmd.add("--");
                cmd.addAll(command.subList(0, main + 1));
                cmd.addAll(List.of(Integer.toString(r), niodev, "niodev"));
                cmd.addAll(command.subList(main + 1, command.size()));
                ProcessBuilder pb = new ProcessBuilder(cmd).inheritIO();
                pb.environment().put("MPJ_HOME", home.getPath());
                // the ranks are one job: they share one experiment directory (plx run's job key)
                pb.environment().put("PLX_JOB", "mpj " + home.getPath());
                ranks.add(pb.start());
            }
            try {
                rendezvous(server, np, ranks);
            } catch (IOException e) {
                System.err.println(e.getMessage());
                for (Process p : ranks)
                    p.destroy();
            }
            int status = 0;
            for (Process p : ranks)
                status = Math.max(status, p.waitFor());
            System.exit(status);
        } finally {
            for (File f : new File[] {new File(conf, "mpjexpress.conf"), conf, new File(home, "logs"), home})
                f.delete();
        }
    }

    /** Each rank sends "Sending Info", its write port, read port and rank; all get the peers. */
    private static void rendezvous(ServerSocket server, int np, List<Process> ranks) throws IOException {
        String[] peers = new String[np];
        List<Socket> sockets = new ArrayList<>();
        server.setSoTimeout(500);
        for (int n = 0; n < np; n++) {
            Socket s = null;
            while (s == null) {
                try {
                    s = server.accept();
                } catch (java.net.SocketTimeoutException e) {
                    for (Process p : ranks)
                        if (!p.isAlive())
                            throw new IOException("plx-mpj: a rank ended before all " + np + " connected");
                }
            }
            DataInputStream in = new DataInputStream(s.getInputStream());
            if (!in.readUTF().startsWith("Sending Info"))
                throw new IOException("plx-mpj: a rank spoke an unknown protocol");
            int wport = in.readInt(), rport = in.readInt(), rank = in.readInt();
            if (rank < 0 || rank >= np || peers[rank] != null)
                throw new IOException("plx-mpj: rank " + rank + " connected twice or out of range");
            peers[rank] = ";" + s.getInetAddress().getHostAddress() + "@" + rport + "@" + wport + "@" + rank + "@0";
            sockets.add(s);
        }
        StringBuilder info = new StringBuilder("#Peer Information");
        for (String p : peers)
            info.append(p);
        for (Socket s : sockets) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeUTF(info.toString());
            out.flush();
            s.close();
        }
    }

    /** The main class: the first word after the java executable that is no option or its value. */
    private static int mainIndex(List<String> command) {
        for (int k = 1; k < command.size(); k++) {
            String w = command.get(k);
            if (w.equals("-cp") || w.equals("-classpath") || w.equals("--class-path") || w.equals("-p")
                || w.equals("--module-path"))
                k++;
            else if (w.equals("-jar"))
                return k + 1 < command.size() ? k + 1 : -1;
            else if (!w.startsWith("-"))
                return k;
        }
        return -1;
    }
}
