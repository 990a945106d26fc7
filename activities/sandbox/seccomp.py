"""A seccomp filter that keeps jobs from creating user namespaces.

An unprivileged process may create a user namespace, become "root" inside it and then mount
file systems (a tmpfs that no disk quota sees), build its own network stack or reach kernel
code that is otherwise off limits. bubblewrap's ``--disable-userns`` cannot be used here: it
needs ``--unshare-user``, which maps a single uid, while a root worker switches each job to a
dedicated uid of its own inside the sandbox. So the sandbox hands bubblewrap (``--seccomp FD``)
a classic BPF program, built below, that fails ``unshare`` and ``clone`` with
``CLONE_NEWUSER`` (EPERM) and ``clone3``, whose flags a filter cannot read, with ENOSYS (the C
library then falls back to ``clone``, which the filter can check). The 32-bit ABIs of the same
machine (i386 and x32 on x86-64, arm on arm64) are covered too; other architectures get no
filter, and the sandbox says so.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from collections.abc import Generator
from contextlib import contextmanager

CLONE_NEWUSER = 0x10000000
_X32 = 0x40000000
# audit architecture -> (unshare, clone, clone3) syscall numbers
_X86_64, _I386, _AARCH64, _ARM = 0xC000003E, 0x40000003, 0xC00000B7, 0x40000028
_CALLS = {
    _X86_64: ((272, _X32 | 272), (56, _X32 | 56), (435, _X32 | 435)),
    _I386: ((310,), (120,), (435,)),
    _AARCH64: ((97,), (220,), (435,)),
    _ARM: ((337,), (120,), (435,)),
}
_ARCHES = {"x86_64": (_X86_64, _I386), "amd64": (_X86_64, _I386), "aarch64": (_AARCH64, _ARM),
           "arm64": (_AARCH64, _ARM)}

# classic BPF opcodes and seccomp return values
_LD_ABS, _JEQ, _JSET, _RET = 0x20, 0x15, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (args[0]'s low word)


class _Program:
    """Instructions with symbolic jump targets, resolved when the program is encoded."""

    def __init__(self) -> None:
        self._code: list[tuple[int, str | int, str | int, int]] = []
        self._labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self._labels[name] = len(self._code)

    def load(self, offset: int) -> None:
        self._code.append((_LD_ABS, 0, 0, offset))

    def jump(self, op: int, k: int, *, true: str | int = 0, false: str | int = 0) -> None:
        self._code.append((op, true, false, k))

    def ret(self, value: int) -> None:
        self._code.append((_RET, 0, 0, value))

    def encode(self) -> bytes:
        def offset(at: int, target: str | int) -> int:
            return target if isinstance(target, int) else self._labels[target] - at - 1

        return b"".join(struct.pack("=HBBI", op, offset(i, jt), offset(i, jf), k)
                        for i, (op, jt, jf, k) in enumerate(self._code))


def userns_filter(machine: str | None = None) -> bytes | None:
    """The BPF program for this machine, or ``None`` on an architecture it does not know."""
    arches = _ARCHES.get((machine or platform.machine()).lower())
    if arches is None:
        return None
    prog = _Program()
    for index, arch in enumerate(arches):
        unshare, clone, clone3 = _CALLS[arch]
        prog.label(f"arch{index}")
        prog.load(_ARCH)
        prog.jump(_JEQ, arch, false=f"arch{index + 1}")
        prog.load(_NR)
        for number in (*unshare, *clone):
            prog.jump(_JEQ, number, true="flags")
        for number in clone3:
            prog.jump(_JEQ, number, true="enosys")
        prog.ret(_ALLOW)
    prog.label(f"arch{len(arches)}")
    prog.ret(_ERRNO | errno.ENOSYS)  # an ABI this filter does not know: no system calls
    prog.label("flags")
    prog.load(_ARG0)
    prog.jump(_JSET, CLONE_NEWUSER, true="eperm")
    prog.ret(_ALLOW)
    prog.label("eperm")
    prog.ret(_ERRNO | errno.EPERM)
    prog.label("enosys")
    prog.ret(_ERRNO | errno.ENOSYS)
    return prog.encode()


@contextmanager
def filter_fd() -> Generator[int | None]:
    """A readable descriptor holding :func:`userns_filter` for ``bwrap --seccomp``, if any.

    The program is a few hundred bytes, far below a pipe's buffer, so it is written whole
    before the reader starts; the descriptor is closed when the context ends.
    """
    program = userns_filter()
    if program is None:
        yield None
        return
    read, write = os.pipe()
    try:
        os.write(write, program)
    finally:
        os.close(write)
    try:
        yield read
    finally:
        os.close(read)
