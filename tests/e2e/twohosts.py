"""Two "hosts" on one machine for the tests: two network namespaces joined by a veth pair with
addresses of a private /30 used only between them, each host's processes in their own UTS
namespace (a host name of their own) and time namespace (a CLOCK_MONOTONIC offset of their own).

    with TwoHosts(offsets_ns=(0, 7_000_000)) as hosts:
        hosts.run("a", ["mpirun", ...])          # runs on host a
        hosts.agent                              # a launch agent (Open MPI's plm_rsh_agent,
                                                 # Hydra's -launcher-exec)

The launch agent is called like ssh (`AGENT [OPTIONS] HOST COMMAND...`, COMMAND a shell
command line) and runs COMMAND on the host of that name or address, as ssh would: with a fresh
environment (PATH, HOME and LC_ALL only), none of the caller's variables. Everything is removed on
exit, whatever happened. Needs root and iproute2 (`ip`).

Run as a program, this file enters a host: `python3 twohosts.py enter HOSTNAME OFFSET_NS --
COMMAND...` (called inside the host's network namespace by `ip netns exec`): a new UTS and time
namespace, the host name set, CLOCK_MONOTONIC moved OFFSET_NS nanoseconds ahead, then COMMAND
is exec'ed (the time namespace is entered at the exec).
"""

import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import time

CLONE_NEWTIME = 0x00000080
CLONE_NEWUTS = 0x04000000

# Seconds any namespace command may take before the setup fails rather than hangs.
SETUP_TIMEOUT = 30


def enter(hostname, offset_ns, command):
    """In this process: a new UTS and time namespace, HOSTNAME, CLOCK_MONOTONIC OFFSET_NS
    ahead; then exec COMMAND. Never returns."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUTS | CLONE_NEWTIME) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUTS | CLONE_NEWTIME)")
    name = hostname.encode()
    if libc.sethostname(name, len(name)) != 0:
        raise OSError(ctypes.get_errno(), "sethostname(%s)" % hostname)
    with open("/proc/self/timens_offsets", "w") as f:
        f.write("monotonic %d %d\n" % divmod(offset_ns, 1_000_000_000))
    os.execvp(command[0], command)


def available():
    """None when two hosts can be built here, else what is missing."""
    if os.geteuid() != 0:
        return "root (network, UTS and time namespaces)"
    if shutil.which("ip") is None:
        return "iproute2 (ip)"
    if not os.path.exists("/proc/self/timens_offsets"):
        return "time namespaces (Linux 5.6 or later)"
    return None


def _ip(*args, netns=None):
    cmd = ["ip"] + (["netns", "exec", netns, "ip"] if netns else []) + [str(a) for a in args]
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=SETUP_TIMEOUT)
    if cp.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), cp.returncode, cp.stderr.strip()))


class TwoHosts:
    """Hosts "a" and "b": (namespace, host name, address, CLOCK_MONOTONIC offset in ns)."""

    # a /30 of its own: only these two namespaces hold it, nothing outside them sees it
    NET = "10.203.30.0/30"
    ADDRESSES = ("10.203.30.1", "10.203.30.2")

    def __init__(self, offsets_ns=(0, 7_000_000), names=("plxhost-a", "plxhost-b")):
        tag = "plx%d" % os.getpid()
        self.netns = {"a": tag + "a", "b": tag + "b"}
        # one name on both hosts (each end in its own namespace): the interface to name to MPI
        self.interface = "plxveth"
        self.hostname = dict(zip("ab", names))
        self.address = dict(zip("ab", self.ADDRESSES))
        self.offset_ns = dict(zip("ab", offsets_ns))
        self.dir = None
        self.agent = None
        self.made = []

    def __enter__(self):
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def _build(self):
        for h in "ab":
            _ip("netns", "add", self.netns[h])
            self.made.append(self.netns[h])
        _ip("link", "add", self.interface, "netns", self.netns["a"], "type", "veth",
            "peer", "name", self.interface, "netns", self.netns["b"])
        for h in "ab":
            ns = self.netns[h]
            _ip("link", "set", "lo", "up", netns=ns)
            _ip("addr", "add", self.address[h] + "/30", "dev", self.interface, netns=ns)
            _ip("link", "set", self.interface, "up", netns=ns)
        self._wait_until_up()
        self.dir = tempfile.mkdtemp(prefix="plx-twohosts-")
        self.agent = os.path.join(self.dir, "agent")
        self._write_agent()

    def _wait_until_up(self):
        """Until both ends report their link up (the kernel may take up to a second to say so,
        and MPI libraries, UCX among them, skip an interface that is not)."""
        deadline = time.monotonic() + SETUP_TIMEOUT
        for h in "ab":
            while True:
                cp = subprocess.run(["ip", "netns", "exec", self.netns[h], "cat",
                                     "/sys/class/net/%s/operstate" % self.interface],
                                    capture_output=True, text=True, timeout=SETUP_TIMEOUT)
                if cp.stdout.strip() == "up":
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError("%s on host %s: link not up (%s)" % (
                        self.interface, h, cp.stdout.strip() or cp.stderr.strip()))
                time.sleep(0.05)

    def _write_agent(self):
        """The launch agent: `agent [-x] [-o OPT]... HOST COMMAND...` like ssh."""
        cases = "".join(
            '  %s|%s) ns=%s name=%s offset=%d ;;\n' % (self.hostname[h], self.address[h],
                                                     self.netns[h], self.hostname[h],
                                                     self.offset_ns[h])
            for h in "ab")
        text = ("#!/bin/sh\n"
                "# launch agent of the two hosts of tests/e2e/twohosts.py (ssh's calling form)\n"
                "while [ $# -gt 0 ]; do\n"
                "  case \"$1\" in -o|-l|-p|-i) shift 2 ;; -*) shift ;; *) break ;; esac\n"
                "done\n"
                "host=$1; shift\n"
                "case \"$host\" in\n%s"
                "  *) echo \"twohosts agent: no host $host\" >&2; exit 255 ;;\n"
                "esac\n"
                "# like ssh: the command starts with a fresh environment, none of the caller's\n"
                "exec env -i PATH=\"$PATH\" HOME=\"$HOME\" LC_ALL=C ip netns exec \"$ns\" \\\n"
                "  %s %s enter \"$name\" \"$offset\" -- /bin/sh -c \"$*\"\n"
                % (cases, sys.executable, os.path.abspath(__file__)))
        with open(self.agent, "w") as f:
            f.write(text)
        os.chmod(self.agent, 0o755)

    def command(self, host, argv):
        """The command line that runs ARGV on HOST (its network, UTS and time namespaces)."""
        return ["ip", "netns", "exec", self.netns[host], sys.executable,
                os.path.abspath(__file__), "enter", self.hostname[host],
                str(self.offset_ns[host]), "--", *[str(a) for a in argv]]

    def run(self, host, argv, timeout, **kwargs):
        """subprocess.run of ARGV on HOST, bounded by TIMEOUT seconds."""
        return subprocess.run(self.command(host, argv), timeout=timeout, **kwargs)

    def hostfile(self, slots):
        """An Open MPI hostfile of the two hosts (by address), SLOTS each; a first rank on a."""
        path = os.path.join(self.dir, "hostfile")
        with open(path, "w") as f:
            for h in "ab":
                f.write("%s slots=%d\n" % (self.address[h], slots))
        return path

    def open_mpi_options(self):
        """mpirun's options for a job across the two hosts: the launch agent, TCP on the /30
        only (no shared memory, no other interface, no UCX)."""
        return ["--mca", "plm_rsh_agent", self.agent, "--mca", "plm_rsh_no_tree_spawn", "1",
                "--mca", "oob_tcp_if_include", self.NET, "--mca", "btl_tcp_if_include", self.NET,
                "--mca", "btl", "tcp,self", "--mca", "pml", "ob1"]

    def mpich_options(self):
        """MPICH's (Hydra's) options for a job across the two hosts, 2 ranks a host: the launch
        agent in ssh's place, the veth interface for Hydra's control connections and UCX's
        transfers (TCP between the hosts, shared memory within one)."""
        return ["-launcher", "ssh", "-launcher-exec", self.agent,
                "-hosts", "%s:2,%s:2" % (self.address["a"], self.address["b"]),
                "-iface", self.interface, "-genv", "UCX_NET_DEVICES", self.interface,
                "-genv", "UCX_TLS", "tcp,self,sm"]

    def close(self):
        """Ends what still runs in the namespaces (a daemon left by a failed job), removes the
        namespaces (their veth ends go with them) and the agent; idempotent."""
        for ns in reversed(self.made):
            cp = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True,
                                timeout=SETUP_TIMEOUT)
            for pid in cp.stdout.split():
                try:
                    os.kill(int(pid), 9)
                except (OSError, ValueError):
                    pass
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=SETUP_TIMEOUT)
        self.made = []
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


if __name__ == "__main__":
    if len(sys.argv) >= 6 and sys.argv[1] == "enter" and sys.argv[4] == "--":
        enter(sys.argv[2], int(sys.argv[3]), sys.argv[5:])
    sys.exit("usage: twohosts.py enter HOSTNAME OFFSET_NS -- COMMAND...")
