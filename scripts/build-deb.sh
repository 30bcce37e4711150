#!/usr/bin/env bash
# The Debian package: target/debian/fsbench_<version>_<arch>.deb with the
# static binary (scripts/build-static.sh) as /usr/bin/fsbench, the man pages
# (`fsbench man --dir`, gzipped) in /usr/share/man/man1/, and the bash, zsh
# and fish completions (`fsbench completions SHELL`) where those shells look.
#
# Built with dpkg-deb, Debian's own tool, from a generated DEBIAN/control:
# it is on every Debian machine and costs no compile, where cargo-deb would
# need `cargo install cargo-deb` (minutes of compiling in every CI run). The
# binary is static, so the package depends on nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/build-static.sh
bin=target/static/fsbench
version=$("$bin" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
root=target/debian/root
deb=target/debian/fsbench_${version}_${arch}.deb

rm -rf "$root"
install -D -s -m 0755 "$bin" "$root/usr/bin/fsbench"
mkdir -p "$root/usr/share/man/man1"
"$bin" man --dir "$root/usr/share/man/man1" >/dev/null
gzip -9n "$root"/usr/share/man/man1/*.1
"$bin" completions bash | install -D -m 0644 /dev/stdin "$root/usr/share/bash-completion/completions/fsbench"
"$bin" completions zsh | install -D -m 0644 /dev/stdin "$root/usr/share/zsh/vendor-completions/_fsbench"
"$bin" completions fish | install -D -m 0644 /dev/stdin "$root/usr/share/fish/vendor_completions.d/fsbench.fish"
chmod 0644 "$root"/usr/share/man/man1/*

mkdir -p "$root/DEBIAN"
cat >"$root/DEBIAN/control" <<CONTROL
Package: fsbench
Version: $version
Architecture: $arch
Maintainer: ${FSBENCH_MAINTAINER:-fsbench maintainers <fsbench@invalid>}
Installed-Size: $(du -ks "$root/usr" | cut -f1)
Section: utils
Priority: optional
Description: benchmark file systems and storage configurations side by side
 fsbench runs bonnie++'s tests, PostMark, vdbench/fio-style I/O patterns,
 tree workloads (copy, rm -rf, untar, find), metadata operations and a
 durability probe on several targets side by side, with statistics, and
 writes only inside a scratch directory it removes. Statically linked,
 without MPI.
CONTROL

dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
