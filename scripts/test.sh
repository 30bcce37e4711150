#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs the Debian packages the
# tests use (as root), then builds and runs every test. Tests that mount file
# systems need root; as non-root they print why they skip.
set -euo pipefail
cd "$(dirname "$0")/.."

# Formatting is a rule, not a habit: checked first, it needs nothing built.
cargo fmt --check

# bonnie++: the real bon_csv2html/bon_csv2txt that must accept our CSV.
# postmark: the reference binary whose counts fsbench must equal.
# e2fsprogs: mkfs.ext4 for loop-mounted test file systems. time: peak RSS.
# xfsprogs, btrfs-progs: mkfs.xfs and mkfs.btrfs for `run --configs`.
# python3-fusepy (with libfuse2), fuse3 (fusermount, mount.fuse): a FUSE file
# system whose readdir skips entries after unlinks, as NFS/SMB/AFP do
# (tests/fixtures/skipfs.py). Not `fuse`, FUSE 2's tools: fuse3 and sshfs
# break it, and fuse3 ships fusermount too.
# chromium: the HTML report is loaded in a real headless browser.
# rsync, tar: the tree workload's --cmd is tested with the real tools.
# strace: counts the sync log's fdatasync/fsync calls (group commit).
# libopenmpi-dev, openmpi-bin, libclang-dev: the build with the mpi feature
# (mpicc and bindgen) and mpirun for the scale-out tests.
# man-db: man renders fsbench's man page and finds the installed one.
# fdisk: sfdisk partitions a loop device for the --wipe refusal tests.
# glusterfs-server, glusterfs-client, sshfs, openssh-server, samba, smbnetfs,
# iproute2: the network lab (tests/common/netlab.rs) serves GlusterFS, sshfs
# and SMB from a server namespace to client namespaces over shaped links.
# fio: the real fio's JSON, whose every key --fio-json must write alike.
# python3-venv: a virtual environment for fio-plot (PyPI), below.
packages=(bonnie++ postmark e2fsprogs xfsprogs btrfs-progs time util-linux python3-fusepy libfuse2 fuse3 chromium rsync tar
  strace libopenmpi-dev openmpi-bin libclang-dev man-db fdisk fio python3-venv
  glusterfs-server glusterfs-client sshfs openssh-server samba smbnetfs iproute2)
if [ "$(id -u)" = 0 ]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
else
  echo "not root: not installing ${packages[*]}; tests that mount file systems will skip" >&2
fi

# Lints, as errors, on both builds (the mpi feature compiles other code).
cargo clippy --locked --all-targets -- -D warnings
cargo clippy --locked --all-targets --features mpi -- -D warnings

# The default build (no MPI) must keep compiling on its own: the static
# binary users copy is that build (scripts/build-static.sh, a second release
# build: about 2.5 min on 2 cores). The tests run once, on the build with
# MPI, which also runs alone without mpirun.
./scripts/build-static.sh
cargo build --release --locked --features mpi
# fio-plot, a real reader of fio's JSON, must draw --fio-json's (tests/io_fio.rs).
if [ ! -x target/fio-plot/bin/fio-plot ]; then
  python3 -m venv target/fio-plot && target/fio-plot/bin/pip install -q fio-plot
fi
export FSBENCH_FIO_PLOT=$PWD/target/fio-plot/bin/fio-plot
# --no-fail-fast: one failing test binary does not hide the others' results.
cargo test --release --locked --features mpi --no-fail-fast

# What users install: the static binary and the .deb, each running a suite.
./scripts/test-install.sh
