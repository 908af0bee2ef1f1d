#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/{am,det,agree})
from the wire layouts of src/proto/hdr.h, src/failure/detector.h and
src/failure/agree_int.h, in the record scripts fuzz_am.c, fuzz_det.c and
fuzz_agree.c read.  Run from the source
root; the output is committed."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(kind, name, data):
    os.makedirs(os.path.join(OUT, kind), exist_ok=True)
    with open(os.path.join(OUT, kind, name), "wb") as f:
        f.write(data)


# ---- fuzz_am: records (see fuzz_am.c) ----
MATCH, CTRL = 0, 1          # index into fuzz_am.c's ids[]
RNDV = 0x08


def match(cid=5, tag=1, src=1, seq=0, flags=0):
    return struct.pack("<IiiHBB", cid, tag, src, seq, flags, 0)


def ctrl(typ, sender=1, arg=0, flags=0):
    return struct.pack("<BB6xQQ", typ, flags, sender, arg)


def am(sel, hdr, data=b""):
    return bytes([0, sel, len(hdr)]) + hdr + struct.pack("<H", len(data)) + data


def post(src=1, tag=1, slot=0, cap_units=63):
    return bytes([2, (cap_units << 2) | src, tag + 8, slot])


PROGRESS = bytes([4])
PROBE = bytes([3, 0, 0xff])

write("am", "eager_then_recv", am(MATCH, match(), b"x" * 100) + PROGRESS + post() + PROGRESS)
write("am", "recv_then_eager", post() + am(MATCH, match(), b"y" * 10) + PROGRESS)
write("am", "rndv", post() + am(MATCH | RNDV, match(), b"z" * 5000) + PROGRESS)
write("am", "out_of_order", am(MATCH, match(seq=1), b"b") + am(MATCH, match(seq=0), b"a") +
      PROGRESS + post(tag=1) + post(tag=1, slot=1) + PROGRESS)
write("am", "early_cid", am(MATCH, match(cid=9), b"e" * 64) + PROGRESS)
write("am", "probe_mrecv", am(MATCH, match(), b"p" * 32) + PROGRESS + bytes([3, 1, 0]) + PROGRESS)
write("am", "bye", am(CTRL, ctrl(1, arg=1)) + PROGRESS + post() + PROGRESS)
write("am", "failed_notice", post() + am(CTRL, ctrl(2, arg=1)) + PROGRESS)
write("am", "done", am(CTRL, ctrl(1, arg=0, flags=1)) + am(CTRL, ctrl(4)) + PROGRESS)
write("am", "short_header", am(MATCH, match()[:7], b"s") + PROGRESS)
write("am", "truncated", post(cap_units=0) + am(MATCH, match(), b"t" * 300) + PROGRESS)

# ---- fuzz_det: records (see fuzz_det.c) ----
BEAT, OBSERVE, FAILED, LEAVE, SYNC = 1, 2, 3, 4, 5
OURS = 0x80


def det(typ, sender, subject, count=0, digest=0, payload=b""):
    op = OURS | (len(payload) << 2)
    hdr = struct.pack("<HBBIIIQQ", 0, 0, typ, sender, subject, count, digest, 0)
    return bytes([op]) + hdr + payload


def tick(units=10):
    return bytes([2 | (units << 2)])


write("det", "beats", det(BEAT, 2, 2) + tick() + det(BEAT, 2, 2) + tick(30))
write("det", "failed", det(FAILED, 2, 7) + tick())
write("det", "excluded", det(FAILED, 2, 3))
write("det", "observe", det(OBSERVE, 4, 4) + tick())
write("det", "leave", det(LEAVE, 2, 2) + det(LEAVE, 4, 9) + tick(50))
write("det", "sync", det(SYNC, 2, 2, 1, 0, b"\x80\x00\x00\x02") + tick())
write("det", "timeout", tick(63) + tick(63) + bytes([3 | (5 << 2)]))
write("det", "foreign", bytes([0]) + struct.pack("<HBBIIIQQ", 0x5346, 2, FAILED, 2, 3, 0, 0, 1))

# ---- fuzz_agree: records (see fuzz_agree.c); member 0 of 8 ----
UP, PROPOSE, DECIDE = 1, 2, 3
NONE = 0xFFFFFFFF
START = bytes([3])


def aset(members):
    runs, start, prev = [], None, None
    for m in sorted(members):
        if start is None:
            start = prev = m
        elif m == prev + 1:
            prev = m
        else:
            runs.append((start, prev - start + 1))
            start = prev = m
    if start is not None:
        runs.append((start, prev - start + 1))
    return struct.pack("<I", len(runs)) + b"".join(struct.pack("<II", s, n) for s, n in runs)


def prop(v=1, failed=(), unacked=0, lo=0):
    return struct.pack("<QII", v, unacked, lo) + aset(failed)


def agree(typ, sender, body, seq=1, ballot=0, acc=NONE, lo=0):
    msg = struct.pack("<BBBBIIIII", typ, 1, 0, 0, seq, sender, ballot, acc, lo) + body
    return bytes([0, len(msg)]) + msg


def up(sender, c, a=(), fv=(), nak=range(8), v=1, **kw):
    return agree(UP, sender, struct.pack("<Q", v) + aset(c) + aset(a) + aset(fv) + aset(nak), **kw)


def gone(m, failed=1):
    return bytes([2 | (m << 2) | (failed << 7)])


write("agree", "gather", START + up(1, [1]) + up(2, [2, 3]) + up(4, range(4, 8)))
write("agree", "accept", START + up(1, [1]) + up(2, [2, 3]) + up(4, range(4, 8)) +
      up(1, [1], a=[1]) + up(2, [2, 3], a=[2, 3]) + up(4, range(4, 8), a=range(4, 8)))
write("agree", "failure", START + gone(4) + up(1, [1]) + up(2, [2, 3]) + up(5, [5, 6, 7]))
write("agree", "decide", up(1, [1]) + agree(DECIDE, 1, prop(failed=[4])) + START)
write("agree", "higher_ballot", START + up(2, [2, 3], ballot=1) + gone(1) + up(4, [4]))
write("agree", "accepted_state", START + agree(UP, 1, struct.pack("<Q", 1) + aset([1]) + aset([]) +
                                                aset([]) + aset(range(8)) + prop(v=5, failed=[3]),
                                                acc=0))
write("agree", "left", START + gone(7, 0) + up(1, [1]) + up(2, [2, 3]) + up(4, [4, 5, 6]))
