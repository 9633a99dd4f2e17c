"""run_bash's workspace quota, held by the kernel: the command runs on a size-capped tmpfs, never on the workspace.

    real, marker = enter(ctypes, libc, workspace, tmp, quota_bytes, quota_files)   # in the launcher's mount namespace
    ... the command runs; its processes are all gone ...
    status = leave(real, workspace, quota_bytes, quota_files, marker)             # b"Qok", b"Qfull 67108864 20"...

``shell_child.py`` (run_bash's launcher) calls ``enter`` in its own user and mount namespace, before Landlock:
one tmpfs of ``size=quota_bytes,nr_inodes=quota_files + 3`` holds a copy of the workspace, bind-mounted on the
workspace's own path (so every absolute path still works), and the command's temporary directory, bind-mounted on
its path. A write past the quota gets ENOSPC from the kernel, whatever wrote it (a background job included); the
host's /dev/shm never holds more of the command than the quota. Once every process of the command is gone,
``leave`` copies what changed back into the real workspace (reached through ``real``, a descriptor opened before
the mount hid it), unless the command filled the tmpfs or its files' sizes pass the quota (a sparse file counts its
size): then nothing is copied and the workspace stays as it was before the command. The tmpfs goes with the
namespace, when the launcher exits, so its memory is given back at once.

A file counts as changed when its inode changed after the copy (its ctime passed ``marker``, a change no
process can fake) or its size, modification time or mode differs from the workspace's. Standard library only: the
trusted side compiles this file and the launcher executes it, like ``layers.py`` (and imports nothing slow:
``shutil`` alone would cost every command 25 ms).
"""

import os
import stat

MS_NOSUID, MS_NODEV, MS_BIND = 2, 4, 4096
SPARE_INODES = 3  # the tmpfs's root, and its two halves: the workspace's copy ("w") and the temporary directory ("t")
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
CHUNK = 1 << 20


class Full(Exception):
    """The tmpfs is full: the workspace (before the command) or the command's writes reach the quota."""


def _mount(ctypes, libc, source, target, fstype, flags, data):
    if libc.mount(source, target.encode(), fstype, flags, data) != 0:
        raise OSError(ctypes.get_errno(), "mounting the workspace's quota failed on " + target)


def enter(ctypes, libc, workspace, tmp, quota_bytes, quota_files):
    """The quota's tmpfs in place (this process is in a mount namespace of its own), holding a copy of the workspace;
    returns a descriptor of the real workspace and the copy's ctime. Raises ``Full`` if the copy does not fit."""
    real = os.open(workspace, DIR_FLAGS)
    options = f"size={quota_bytes},nr_inodes={quota_files + SPARE_INODES},mode=0700".encode()
    _mount(ctypes, libc, b"tmpfs", tmp, b"tmpfs", MS_NOSUID | MS_NODEV, options)
    for half in ("w", "t"):
        os.mkdir(os.path.join(tmp, half), 0o700)
    _mount(ctypes, libc, os.path.join(tmp, "w").encode(), workspace, None, MS_BIND, None)
    _mount(ctypes, libc, os.path.join(tmp, "t").encode(), tmp, None, MS_BIND, None)
    copy = os.open(workspace, DIR_FLAGS)
    try:
        _copy_tree(real, copy)
        marker = os.fstat(copy).st_ctime_ns  # after every change the copy made (its root's mode and times last)
    except OSError as exc:
        if exc.errno in (28, 122):  # ENOSPC, EDQUOT
            raise Full() from None
        raise
    finally:
        os.close(copy)
    os.chdir(workspace)  # into the copy
    return real, marker


def _join(rel, name):
    return rel + "/" + name if rel else name


def _list(root, rel):
    """{name: lstat} of the directory ``rel`` under the directory descriptor ``root``."""
    fd = os.open(rel or ".", DIR_FLAGS, dir_fd=root)
    try:
        with os.scandir(fd) as found:
            return {entry.name: entry.stat(follow_symlinks=False) for entry in found}
    finally:
        os.close(fd)


def _copy_file(src_root, dst_root, rel, info):
    """``rel`` from under ``src_root`` to under ``dst_root`` (where it must not exist), with its mode and times."""
    src = os.open(rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=src_root)
    try:
        dst = os.open(rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dst_root)
        try:
            while os.sendfile(dst, src, None, CHUNK):
                pass
            os.fchmod(dst, stat.S_IMODE(info.st_mode))
            os.utime(dst, ns=(info.st_atime_ns, info.st_mtime_ns))
        finally:
            os.close(dst)
    finally:
        os.close(src)


def _set_modes(root, dirs):
    """Each directory's mode and times, children before parents (a read-only parent is set after them); "" is the
    root's."""
    for rel, info in reversed(dirs):
        os.chmod(rel or ".", stat.S_IMODE(info.st_mode), dir_fd=root)
        os.utime(rel or ".", ns=(info.st_atime_ns, info.st_mtime_ns), dir_fd=root)


def _copy_tree(src_root, dst_root):
    """Every file, directory and symbolic link under ``src_root`` into the empty ``dst_root`` (other kinds of file are
    left out: a workspace holds none). Walked by relative paths from two descriptors, so no depth costs descriptors."""
    dirs, stack = [("", os.fstat(src_root))], [""]
    while stack:
        rel = stack.pop()
        for name, info in _list(src_root, rel).items():
            path = _join(rel, name)
            if stat.S_ISREG(info.st_mode):
                _copy_file(src_root, dst_root, path, info)
            elif stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(path, dir_fd=src_root), path, dir_fd=dst_root)
            elif stat.S_ISDIR(info.st_mode):
                os.mkdir(path, 0o700, dir_fd=dst_root)
                stack.append(path)
                dirs.append((path, info))
    _set_modes(dst_root, dirs)


def _measure(root, listings=None):
    """(bytes, files) under the directory descriptor ``root`` as the quota counts them (``env.sandbox.quota``);
    each directory's listing goes in ``listings`` (for the copy back, which then lists nothing twice)."""
    used_bytes = used_files = 0
    stack = [""]
    while stack:
        rel = stack.pop()
        entries = _list(root, rel)
        if listings is not None:
            listings[rel] = entries
        for name, info in entries.items():
            used_files += 1
            if stat.S_ISDIR(info.st_mode):
                stack.append(_join(rel, name))
            else:
                used_bytes += max(info.st_size, info.st_blocks * 512)
    return used_bytes, used_files


def _changed(new, old, marker):
    if stat.S_IFMT(new.st_mode) != stat.S_IFMT(old.st_mode):
        return True
    if stat.S_ISDIR(new.st_mode) or stat.S_ISLNK(new.st_mode):
        return False  # a directory is compared by its entries; a link is the workspace's own (none can be made)
    return new.st_ctime_ns > marker or (new.st_size, new.st_mtime_ns, new.st_mode) != (old.st_size, old.st_mtime_ns, old.st_mode)


def _remove(root, rel, info):
    """``rel`` under ``root``, a directory with everything in it (walked without recursion: any depth)."""
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(rel, dir_fd=root)
        return
    dirs, stack = [], [rel]
    while stack:
        path = stack.pop()
        os.chmod(path, 0o700, dir_fd=root)
        dirs.append(path)
        for name, inner in _list(root, path).items():
            if stat.S_ISDIR(inner.st_mode):
                stack.append(_join(path, name))
            else:
                os.unlink(_join(path, name), dir_fd=root)
    for path in reversed(dirs):  # children before their parents
        os.rmdir(path, dir_fd=root)


def _copy_back(new_root, old_root, marker, listings):
    """Make the real workspace (``old_root``) hold what its copy (``new_root``, listed in ``listings``) holds,
    touching only what changed."""
    dirs, stack = [("", os.fstat(new_root))], [""]
    while stack:
        rel = stack.pop()
        os.chmod(rel or ".", 0o700, dir_fd=old_root)  # a directory made read-only still takes the copy; its mode comes last
        new, old = listings[rel], _list(old_root, rel)
        for name, info in old.items():
            if name not in new or _changed(new[name], info, marker):
                _remove(old_root, _join(rel, name), info)
        for name, info in new.items():
            path, before = _join(rel, name), old.get(name)
            if stat.S_ISDIR(info.st_mode):
                if before is None or not stat.S_ISDIR(before.st_mode):
                    os.mkdir(path, 0o700, dir_fd=old_root)
                stack.append(path)
                dirs.append((path, info))
            elif stat.S_ISREG(info.st_mode) and (before is None or _changed(info, before, marker)):
                _copy_file(new_root, old_root, path, info)
    _set_modes(old_root, dirs)


def leave(real, workspace, tmp, quota_bytes, quota_files, marker):
    """After the command (every process of it gone): the status line for the server. b"Qok": what changed is in the
    real workspace. b"Qfull <bytes> <files>": the command filled the quota (its workspace and temporary directory
    together), so nothing was copied back. b"Qerror <message>": the copy's tree could not be read (nothing copied).
    b"Qpartial <message>": copying back failed part of the way (a file over RLIMIT_FSIZE, say)."""
    copy, scratch = os.open(workspace, DIR_FLAGS), os.open(tmp, DIR_FLAGS)
    try:
        fs = os.fstatvfs(copy)
        try:
            listings = {}
            used = [a + b for a, b in zip(_measure(copy, listings), _measure(scratch), strict=True)]
        except OSError as exc:
            return b"Qerror " + str(exc).encode("utf-8", "replace")[:2000]
        if fs.f_bavail == 0 or fs.f_favail == 0 or used[0] > quota_bytes or used[1] > quota_files:
            return b"Qfull %d %d" % (used[0], used[1])
        try:
            _copy_back(copy, real, marker, listings)
        except OSError as exc:
            return b"Qpartial " + str(exc).encode("utf-8", "replace")[:2000]
        return b"Qok"
    finally:
        os.close(copy)
        os.close(scratch)
