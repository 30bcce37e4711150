"""A busy host for the bench scripts: CPU burners, endless shell loops
started from the script's own session, as a user's `for i in 1 2 3 4; do
sh -c 'while :; do :; done' & done` is from the shell that then starts
the benchmark. The session matters: with autogroup scheduling the kernel
shares CPU time between sessions first, so burners in the benchmark's
session take its share, and burners elsewhere do not."""
import subprocess


class Burners:
    """`with Burners(n):` n burners run inside the block (none for n = 0)."""

    def __init__(self, count):
        self.count = count
        self.children = []

    def __enter__(self):
        self.children = [subprocess.Popen(["sh", "-c", "while :; do :; done"],
                                          stdin=subprocess.DEVNULL)
                         for _ in range(self.count)]
        return self

    def __exit__(self, *_):
        for child in self.children:
            child.kill()
            child.wait()
        self.children = []


def describe(count):
    return (f"{count} CPU burner(s) started from this script's session "
            "(shell loops, as `sh -c 'while :; do :; done' &` from the shell)")
