"""Scratch file systems the bench scripts mount for themselves (as root):
a tmpfs, and an ext4 on a loop device whose image lives in a directory
(a tmpfs, so the "disk" is RAM and the file system's own work is what is
timed)."""
import os
import subprocess
import tempfile
from pathlib import Path


def mount_tmpfs(size="6g"):
    mnt = tempfile.mkdtemp(prefix="fsb-bench-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", mnt], check=True)
    return mnt


def mount_loop_ext4(backing_dir, mib):
    """(mount point, loop device) of a fresh `mib` MiB ext4 whose image is
    in `backing_dir`."""
    image = Path(backing_dir) / "ext4.img"
    with open(image, "wb") as f:
        f.truncate(mib << 20)
    device = subprocess.run(["losetup", "--find", "--show", str(image)], check=True,
                            capture_output=True, text=True).stdout.strip()
    subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True)
    mnt = tempfile.mkdtemp(prefix="fsb-bench-ext4-")
    subprocess.run(["mount", device, mnt], check=True)
    return mnt, device


def unmount(mnt, device=None):
    """Unmounts (lazily if busy), frees the loop device, removes the mount point."""
    if subprocess.run(["umount", mnt]).returncode != 0:
        subprocess.run(["umount", "-l", mnt])
    if device:
        subprocess.run(["losetup", "-d", device])
    os.rmdir(mnt)
