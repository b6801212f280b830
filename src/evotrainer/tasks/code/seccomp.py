"""A seccomp filter for the code gym's sandbox: the system calls model-written Python never needs
and that widen the kernel surface it can reach are refused with EPERM.

Refused: tracing and reading other processes' memory (``ptrace``, ``process_vm_*``,
``pidfd_getfd``, ``kcmp``), new namespaces and mounts (``unshare``, ``setns``, ``clone`` with a
namespace flag, ``mount`` and the new mount API, ``pivot_root``, ``chroot``), the kernel keyring,
``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring``, modules, kexec, reboot, swap, clocks,
``syslog``, ``acct``, quotas and file handles. ``clone3`` answers ENOSYS (its flags sit in
memory a filter cannot read; the C library falls back to ``clone``, whose flags it can). Another
architecture than the filter knows, or the x32 ABI, kills the process.

The program is classic BPF (``struct sock_filter``), built here without libseccomp and handed to
bubblewrap's ``--seccomp FD``. ``program()`` is None on an architecture without a table: the
sandbox then runs without a filter and says so (docs/code-gym.md).
"""

from __future__ import annotations

import errno
import platform
import struct

# syscall numbers, read from the kernel headers (asm/unistd_64.h; asm-generic/unistd.h): every
# one is refused but clone and clone3, which have rules of their own
CLONES = ("clone", "clone3")
X86_64 = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438,
    "kcmp": 312, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272,
    "setns": 308, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "move_mount": 429, "open_tree": 428, "mount_setattr": 442, "bpf": 321,
    "perf_event_open": 298, "keyctl": 250, "add_key": 248, "request_key": 249,
    "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "reboot": 169, "swapon": 167, "swapoff": 168, "syslog": 103,
    "acct": 163, "quotactl": 179, "quotactl_fd": 443, "open_by_handle_at": 304,
    "name_to_handle_at": 303, "settimeofday": 164, "clock_settime": 227, "clock_adjtime": 305,
    "adjtimex": 159, "lookup_dcookie": 212, "vhangup": 153, "fanotify_init": 300, "iopl": 172,
    "ioperm": 173, "uselib": 134, "nfsservctl": 180, "clone": 56, "clone3": 435,
}  # fmt: skip
AARCH64 = {
    "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_getfd": 438,
    "kcmp": 272, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "unshare": 97,
    "setns": 268, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "move_mount": 429, "open_tree": 428, "mount_setattr": 442, "bpf": 280,
    "perf_event_open": 241, "keyctl": 219, "add_key": 217, "request_key": 218,
    "userfaultfd": 282, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
    "delete_module": 106, "reboot": 142, "swapon": 224, "swapoff": 225, "syslog": 116,
    "acct": 89, "quotactl": 60, "quotactl_fd": 443, "open_by_handle_at": 265,
    "name_to_handle_at": 264, "settimeofday": 170, "clock_settime": 112, "clock_adjtime": 266,
    "adjtimex": 171, "lookup_dcookie": 18, "vhangup": 58, "fanotify_init": 262,
    "nfsservctl": 42, "clone": 220, "clone3": 435,
}  # fmt: skip
ARCHES = {"x86_64": (0xC000003E, X86_64), "aarch64": (0xC00000B7, AARCH64)}
X32_BIT = 0x40000000
NAMESPACE_FLAGS = 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
NAMESPACE_FLAGS |= 0x00020000 | 0x00000080  # CLONE_NEWNS, CLONE_NEWTIME

# classic BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h)
LD_ABS_W, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
ALLOW, KILL_PROCESS = 0x7FFF0000, 0x80000000
NR_OFFSET, ARCH_OFFSET, ARG0_LOW_OFFSET = 0, 4, 16  # struct seccomp_data (little-endian)


def _errno(code: int) -> int:
    return 0x00050000 | code


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (default: this one's), or None where there is no table."""
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    audit_arch, numbers = arch
    denied = [nr for name, nr in numbers.items() if name not in CLONES]
    ops = [_op(LD_ABS_W, ARCH_OFFSET), _op(JEQ, audit_arch, 1, 0), _op(RET, KILL_PROCESS)]
    ops.append(_op(LD_ABS_W, NR_OFFSET))
    if audit_arch == ARCHES["x86_64"][0]:
        ops += [_op(JGE, X32_BIT, 0, 1), _op(RET, KILL_PROCESS)]
    ops += [_op(JEQ, numbers["clone3"], 0, 1), _op(RET, _errno(errno.ENOSYS))]
    # clone: refused when it asks for a namespace (fork and threads pass)
    ops += [_op(JEQ, numbers["clone"], 0, 4), _op(LD_ABS_W, ARG0_LOW_OFFSET)]
    ops += [_op(JSET, NAMESPACE_FLAGS, 0, 1), _op(RET, _errno(errno.EPERM)), _op(RET, ALLOW)]
    for i, nr in enumerate(denied):
        # jump to the shared EPERM return after the list, else test the next number
        ops.append(_op(JEQ, nr, len(denied) - i, 0))
    ops += [_op(RET, ALLOW), _op(RET, _errno(errno.EPERM))]
    return b"".join(ops)
