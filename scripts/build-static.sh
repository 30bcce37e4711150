#!/usr/bin/env bash
# A fully static fsbench, without MPI, for machines where it is copied rather
# than built: target/static/fsbench.
#
# It links glibc statically (-C target-feature=+crt-static on
# x86_64-unknown-linux-gnu), not musl: rustup's x86_64-unknown-linux-musl
# standard library is not installed here and cannot be downloaded, and Debian
# packages no musl Rust standard library (libstd-rust-dev is the gnu target of
# Debian's own rustc). glibc is fine for what fsbench calls. ld warns about
# one thing (rustc shows it with RUSTFLAGS=-Wlinker-messages): "Using
# 'getpwnam'/'getgrnam' in statically linked applications requires at runtime
# the shared libraries from the glibc version used for linking", for bonnie's
# -u USER/-g GROUP. Local users and groups (/etc/passwd, /etc/group) are read
# by glibc itself (2.34 and later) and work everywhere; users from LDAP or
# sssd need the host to have the glibc it was built with, or numeric -u/-g.
# io_uring needs no library (the io-uring crate makes the system calls).
# With the musl target installed, FSBENCH_TARGET=x86_64-unknown-linux-musl
# builds the same thing against musl.
#
# `--target` keeps this build in its own directory (target/<triple>/), so it
# neither spoils nor reuses the dynamic release build, and keeps RUSTFLAGS
# off build scripts and proc-macros (they run on the host, dynamically).
set -euo pipefail
cd "$(dirname "$0")/.."

target=${FSBENCH_TARGET:-x86_64-unknown-linux-gnu}
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
  cargo build --release --locked --target "$target"
mkdir -p target/static
cp "target/$target/release/fsbench" target/static/fsbench
if ldd target/static/fsbench 2>&1 | grep -qE "not a dynamic executable|statically linked"; then
  echo "target/static/fsbench: static ($target)"
else
  echo "target/static/fsbench is not static:" >&2
  ldd target/static/fsbench >&2
  exit 1
fi
