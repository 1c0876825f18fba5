#!/usr/bin/env bash
# Java: the JDK and Maven (the agent's build), MPJ Express with the jars it needs, and Open MPI's
# Java bindings. Debian ships libmpi_java.so and mpijavac but not mpi.jar: mpi.jar is built here
# from Debian's own openmpi source package (its ompi/mpi/java/java/*.java compile against the
# installed library) and installed where mpijavac and mpirun look for it. The source package is
# unpacked under /var/cache/plx-src, never in the repository.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"

apt_install openjdk-17-jdk-headless maven dpkg-dev libmpj-java liblog4j1.2-java \
            libcommons-cli-java libcommons-io-java libcommons-codec-java libcommons-lang3-java \
            openmpi-bin libopenmpi-dev

libdir="$(dirname "$(readlink -f "$(dpkg -L libopenmpi3 2>/dev/null | grep -m1 'libmpi_java.so$' || echo /usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi_java.so)")")"
# mpijavac names the jar it puts on the class path; install ours there.
jar="$(sed -n 's/^my \$mpi_jar *= *"\(.*\)";/\1/p' /usr/bin/mpijavac 2>/dev/null || true)"
jar="${jar:-$libdir/mpi.jar}"
[ -f "$jar" ] && exit 0

sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
src_list=/etc/apt/sources.list.d/plx-deb-src.sources
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
  echo "install-deps: adding a deb-src entry ($src_list) for Open MPI's Java sources"
  codename="$(. /etc/os-release && echo "$VERSION_CODENAME")"
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$codename" | $sudo_cmd tee "$src_list" >/dev/null
  $sudo_cmd apt-get update -qq
fi
cache=/var/cache/plx-src
$sudo_cmd mkdir -p "$cache"
cd "$cache"
if ! ls -d openmpi-*/ompi/mpi/java/java >/dev/null 2>&1; then
  echo "install-deps: fetching Debian's openmpi source package into $cache"
  $sudo_cmd apt-get source -qq openmpi >/dev/null
fi
java_src="$(ls -d "$cache"/openmpi-*/ompi/mpi/java/java | head -1)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
javac -nowarn -d "$work/classes" "$java_src"/*.java
jar cf "$work/mpi.jar" -C "$work/classes" .
$sudo_cmd install -m 644 "$work/mpi.jar" "$jar"
echo "install-deps: built $jar from $(basename "$(dirname "$(dirname "$(dirname "$(dirname "$java_src")")")")")"
