# Page-cache probes, as in page_cache.c: tells whether pages of a host
# file are cached without reading them (os.preadv with RWF_NOWAIT, mincore
# through ctypes), drops them for everyone (posix_fadvise DONTNEED). Each
# must fail; a success is reported as "ESCAPED ...". Attacks in round 3.
import ctypes
import os
import sys


def escaped(what):
    print("ESCAPED", what, flush=True)
    sys.exit(0)


def attack():
    fd = os.open("/usr/lib/x86_64-linux-gnu/libc.so.6", os.O_RDONLY)
    buf = bytearray(4096)
    try:
        os.preadv(fd, [buf], 0, os.RWF_NOWAIT)
        escaped("preadv with RWF_NOWAIT")
    except OSError:
        pass
    libc = ctypes.CDLL(None, use_errno=True)
    vec = (ctypes.c_ubyte * 1)()
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    p = libc.mmap(None, 4096, 1, 1, fd, 0)
    if p not in (None, ctypes.c_void_p(-1).value):
        if libc.mincore(ctypes.c_void_p(p), ctypes.c_size_t(4096), vec) == 0:
            escaped("mincore")
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        escaped("fadvise DONTNEED")
    except OSError:
        pass
    os.close(fd)


round_no = 0
for line in sys.stdin:
    if line.startswith("END"):
        break
    round_no += 1
    if round_no == 3:
        attack()
    x = int(line.split()[1]) if line.startswith("ECHO") else 0
    print(x, flush=True)
