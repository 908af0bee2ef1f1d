#!/usr/bin/env python3
"""hb_foreign.py NAME SECONDS: plays another job's stale failure detector.

Finds the UDP sockets of the processes whose command name is NAME (the
ranks of the job under test) and, for SECONDS, sends each of them detector
datagrams that are not of that job: well-formed ones with another job's
identity (FAILED naming every rank, SYNC with every bit set, LEAVE), ones
with a wrong version or magic, and junk of random lengths.  The layout is
fs_det_msg_t (src/failure/detector.h), little-endian.  Exit 0 if it found a
socket in every process and sent to each, 1 otherwise."""
import os
import random
import socket
import struct
import sys
import time

MAGIC, VERSION = 0x5346, 3   # FS_DET_MAGIC, FS_DET_VERSION (detector.h)
BEAT, OBSERVE, FAILED, LEAVE, SYNC = 1, 2, 3, 4, 5
RANKS = 8


def udp_ports(pid):
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
        ports = []
        with open(f"/proc/{pid}/net/udp") as f:
            next(f)
            for line in f:
                cols = line.split()
                if cols[9] in inodes:
                    ports.append(int(cols[1].split(":")[1], 16))
        return ports
    except OSError:
        return []


def find(name):
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() != name:
                    continue
        except OSError:
            continue
        ports = udp_ports(pid)
        if ports:
            found[pid] = ports
    return found


def msg(typ, sender, subject, job, magic=MAGIC, version=VERSION, count=0):
    return struct.pack("<HBBIIIQQ", magic, version, typ, sender, subject, count,
                       random.getrandbits(64), job)


def datagrams():
    job = random.getrandbits(64)
    out = []
    for r in range(RANKS):
        s = (r + 1) % RANKS
        out.append(msg(FAILED, s, r, job))
        out.append(msg(LEAVE, s, r, job))
        out.append(msg(BEAT, s, s, job, count=5))
        out.append(msg(SYNC, s, s, job) + b"\xff" * 2)
        out.append(msg(FAILED, s, r, 0, version=VERSION + 1))
        out.append(msg(FAILED, s, r, 0, magic=MAGIC ^ 0x100))
    for _ in range(8):
        out.append(os.urandom(random.randrange(0, 100)))
    return out


def main():
    name, seconds = sys.argv[1], float(sys.argv[2])
    deadline = time.time() + 20
    targets = {}
    while time.time() < deadline:
        targets = find(name)
        if targets:
            time.sleep(0.5)          # let every rank open its socket
            targets = find(name)
            break
        time.sleep(0.05)
    if not targets:
        print(f"hb_foreign.py: no process named {name} with a UDP socket")
        return 1
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sent, end = 0, time.time() + seconds
    while time.time() < end:
        for ports in targets.values():
            for port in ports:
                for d in datagrams():
                    try:
                        sock.sendto(d, ("127.0.0.1", port))
                        sent += 1
                    except OSError:
                        pass
        time.sleep(0.01)
    print(f"hb_foreign.py: {len(targets)} processes, {sent} datagrams sent")
    return 0


sys.exit(main())
