#!/usr/bin/env bash
# What a user installs, tested the way they use it (scripts/test.sh runs this
# after the tests): the static binary is static and runs a suite; the .deb
# holds the files in their standard places, installs with dpkg -i, runs a
# suite from /usr/bin, its man page and completions are found, and it is
# removed again (dpkg -r, also when a step fails), leaving the machine as it
# was. A script, not a cargo test: it builds with other RUSTFLAGS (a cargo
# build inside `cargo test` would wait on the build lock and compete with
# the tests for the cores) and installs into /usr, which must not happen
# while other tests run.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
installed=false
cleanup() {
  if $installed; then dpkg -r fsbench >/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "test-install: $*" >&2
  exit 1
}

# A suite of a few seconds: bonnie++'s file tests and a random-read io job.
cat >"$work/tiny.toml" <<'SUITE'
description = "install check"
repeat = 1

[[workload]]
kind = "bonnie"
label = "files"
args = "-s 0 -n 1 -r 0"

[[workload]]
kind = "io"
label = "rand-read"
args = "-s 8m -b 4k --read 100 --duration 0.4s --interval 0.2s --warmup 0"
SUITE

run_tiny() {
  mkdir -p "$work/target"
  "$1" run --suite "$work/tiny.toml" -t "$work/target" --no-save >/dev/null ||
    fail "$1 run failed"
  [ -z "$(ls -A "$work/target")" ] || fail "$1 run left files in its target"
}

# The static binary.
start=$SECONDS
deb=$(./scripts/build-deb.sh | tail -n 1)
echo "test-install: static binary and .deb built in $((SECONDS - start)) s"
ldd target/static/fsbench 2>&1 | grep -qE "not a dynamic executable|statically linked" ||
  fail "target/static/fsbench is dynamically linked"
run_tiny target/static/fsbench

# The package's contents, then the package installed.
contents=$(dpkg-deb --contents "$deb")
for path in /usr/bin/fsbench /usr/share/man/man1/fsbench.1.gz /usr/share/man/man1/fsbench-run.1.gz \
  /usr/share/bash-completion/completions/fsbench /usr/share/zsh/vendor-completions/_fsbench \
  /usr/share/fish/vendor_completions.d/fsbench.fish; do
  grep -q " \.$path\$" <<<"$contents" || fail "$deb lacks $path"
done
if dpkg-query -W fsbench >/dev/null 2>&1; then
  fail "a fsbench package is already installed; not replacing it"
fi
[ "$(id -u)" = 0 ] || { echo "test-install: not root: not installing $deb" >&2; exit 0; }
installed=true
dpkg -i "$deb" >/dev/null
run_tiny /usr/bin/fsbench
[ "$(man -w fsbench)" = /usr/share/man/man1/fsbench.1.gz ] || fail "man -w fsbench: $(man -w fsbench 2>&1)"
man fsbench-run 2>/dev/null | grep -q -- --suite || fail "man fsbench-run does not show --suite"
bash -c 'source /usr/share/bash-completion/completions/fsbench; complete -p fsbench' >/dev/null ||
  fail "the installed bash completion does not load"
dpkg -r fsbench >/dev/null
installed=false
[ ! -e /usr/bin/fsbench ] || fail "dpkg -r left /usr/bin/fsbench"
echo "test-install: ok ($deb)"
