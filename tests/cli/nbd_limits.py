#!/usr/bin/env python3
"""Clients that try to exhaust `uraid serve` (tests/cli/test-serve-limits.sh).

Usage: nbd_limits.py SCENARIO URAID SOCKET SERVER_PID [ARGS...]
  silent N            a working client beside N clients that connect and say
                      nothing: its writes and reads complete, a new client is
                      greeted and served, `uraid stop` stops the server
  fds N               the same under a low descriptor limit: the working
                      client is served, `uraid status` answers, a new client
                      is greeted and refused or served (never left hanging),
                      `uraid stop` stops
  refuse LIMIT        LIMIT clients served; the next is greeted and refused
                      with NBD_REP_ERR_POLICY and a message; once one leaves,
                      a new one is served
  handshake           (--handshake-timeout=1) a silent client and one stuck
                      half-way are cut; one in transmission is not
  unread CAP_MIB      4 clients send 16 READs of 32 MiB each and never read:
                      the server's RSS grows by less than the cap plus a
                      margin, and another client's small read is still served
Prints one ok/FAIL line per check; exits 1 if any failed. The pattern data
comes from a fixed seed (printed).
"""
import json
import os
import random
import resource
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from nbd_wire import (IHAVEOPT, Cases, closed,  # noqa: E402
                      connect, go, opt_go_raw, recv_exact, reply, request)

SEED = 20261201
REP_ERR_POLICY = (1 << 31) | 2
scenario, uraid, sock_path, server_pid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
args = sys.argv[5:]
cases = Cases()
case = cases.case
print("seed %d" % SEED)

# the test's own descriptors: hundreds of sockets
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def server_alive():
    """The server has not exited (a zombie waiting for the shell has)."""
    try:
        with open("/proc/%d/status" % server_pid) as f:
            for line in f:
                if line.startswith("State:"):
                    return "Z" not in line.split()[1]
    except FileNotFoundError:
        return False
    return False


def rss_bytes():
    with open("/proc/%d/status" % server_pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def write_read(s, offset, length, cookie):
    """Write a pattern, read it back, compare."""
    data = random.Random(SEED + cookie).randbytes(length)
    request(s, 1, offset, length, cookie, payload=data)
    err, ck = reply(s)
    assert (err, ck) == (0, cookie), "write reply %s" % ((err, ck),)
    request(s, 0, offset, length, cookie + 1)
    err, ck = reply(s)
    assert (err, ck) == (0, cookie + 1), "read reply %s" % ((err, ck),)
    assert recv_exact(s, length) == data, "read back differs from what was written"


def connect_retry(deadline):
    """Connect, waiting while the listening queue is full (EAGAIN)."""
    while True:
        try:
            return connect(sock_path)
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise AssertionError("the server takes no more connections")
            time.sleep(0.01)


def silent_clients(n):
    """n connections that never send a byte (nor read the greeting)."""
    held = []
    deadline = time.monotonic() + 60
    for _ in range(n):
        held.append(connect_retry(deadline))
    return held


def uraid_status_json():
    out = subprocess.run([uraid, "status", "--json", sock_path], capture_output=True,
                         timeout=30, text=True)
    assert out.returncode == 0, "uraid status failed: %s" % out.stderr.strip()
    return json.loads(out.stdout)


def stop_and_wait():
    subprocess.run([uraid, "stop", sock_path], capture_output=True, timeout=30)
    for _ in range(300):            # 30 s at most: a wedged server fails here
        if not server_alive():
            return
        time.sleep(0.1)
    raise AssertionError("the server still runs 30 s after uraid stop")


def new_client_answered():
    """A new client gets a greeting and then either the export or a
    refusal with a message: never silence."""
    s = connect_retry(time.monotonic() + 10)
    rtype, msg = opt_go_raw(s)
    if rtype == 1:
        return "served"
    assert rtype == REP_ERR_POLICY and msg, "GO answered %#x %r" % (rtype, msg)
    return "refused: " + msg.decode()


if scenario in ("silent", "fds"):
    n = int(args[0])
    good = connect(sock_path)
    go(good)
    write_read(good, 0, 65536, 1)
    held = []

    @case("%s: %d silent clients connect" % (scenario, n))
    def _():
        held.extend(silent_clients(n))
    time.sleep(1)                   # let the server take them all in

    @case("%s: the working client's writes and reads complete beside %d silent clients"
          % (scenario, n))
    def _():
        for i in range(8):
            write_read(good, (i + 1) << 20, 256 << 10, 10 + 2 * i)

    if scenario == "fds":
        @case("fds: uraid status answers and shows the connections against the limit")
        def _():
            st = uraid_status_json()["server"]
            assert st["connections"] <= st["max_connections"], st
            assert st["connections"] >= 1, st

    @case("%s: a new client is greeted and answered" % scenario)
    def _():
        what = new_client_answered()
        if scenario == "silent":
            assert what == "served", what
        print("   new client: " + what)

    @case("%s: uraid stop stops the server" % scenario)
    def _():
        stop_and_wait()
    for c in held:
        c.close()

elif scenario == "refuse":
    limit = int(args[0])
    served = []
    for _ in range(limit):
        s = connect(sock_path)
        go(s)
        served.append(s)

    @case("refuse: client %d of %d allowed is greeted, then GO gets NBD_REP_ERR_POLICY "
          "with a message" % (limit + 1, limit))
    def _():
        s = connect(sock_path)
        rtype, msg = opt_go_raw(s)
        assert rtype == REP_ERR_POLICY, "GO answered %#x %r" % (rtype, msg)
        assert b"connections" in msg, msg
        print("   message: " + msg.decode())

    @case("refuse: uraid status shows the connections at the limit and the refusal")
    def _():
        st = uraid_status_json()["server"]
        assert st["connections"] == limit and st["max_connections"] == limit, st
        assert st["connections_refused"] >= 1, st

    @case("refuse: the served clients still work")
    def _():
        for i, s in enumerate(served):
            write_read(s, i << 20, 4096, 100 + 2 * i)

    @case("refuse: once one leaves, a new client is served")
    def _():
        served.pop().close()
        for _ in range(100):
            s = connect(sock_path)
            rtype, msg = opt_go_raw(s)
            s.close()
            if rtype == 1:
                return
            time.sleep(0.1)
        raise AssertionError("still refused: %r" % msg)

elif scenario == "handshake":
    @case("handshake: a client that says nothing is cut (--handshake-timeout=1)")
    def _():
        s = connect(sock_path)
        recv_exact(s, 18)
        assert closed(s), "still open 10 s later"

    @case("handshake: a client stuck after its flags is cut")
    def _():
        s = connect(sock_path)
        recv_exact(s, 18)
        s.sendall(struct.pack(">I", 3) + struct.pack(">Q", IHAVEOPT))
        assert closed(s), "still open 10 s later"

    @case("handshake: a client in transmission is not cut")
    def _():
        s = connect(sock_path)
        go(s)
        time.sleep(2.5)
        write_read(s, 0, 4096, 200)

elif scenario == "unread":
    cap = int(args[0]) << 20
    base = rss_bytes()
    bad = []
    for k in range(4):
        s = connect(sock_path)
        go(s)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        for i in range(16):
            request(s, 0, 0, 32 << 20, 1000 * k + i)
        bad.append(s)
    peak = 0
    for _ in range(30):             # 3 s: what the server will take, it has taken
        peak = max(peak, rss_bytes())
        time.sleep(0.1)
    margin = 48 << 20
    print("   server RSS %d MiB before, %d MiB at most with 64 reads of 32 MiB unread"
          % (base >> 20, peak >> 20))

    @case("unread: the server's RSS grows by less than --max-buffer-memory (%d MiB) + %d MiB"
          % (cap >> 20, margin >> 20))
    def _():
        assert peak - base < cap + margin, "grew by %d MiB" % ((peak - base) >> 20)

    @case("unread: uraid status shows the buffer memory within the limit")
    def _():
        st = uraid_status_json()["server"]
        assert 0 < st["buffer_bytes"] <= st["max_buffer_bytes"] == cap, st

    @case("unread: another client's small reads and writes are still served")
    def _():
        s = connect(sock_path)
        go(s)
        write_read(s, 64 << 20, 65536, 300)

    for s in bad:
        s.close()

    @case("unread: once they leave, the buffer memory is given back")
    def _():
        for _ in range(100):
            if uraid_status_json()["server"]["buffer_bytes"] == 0:
                return
            time.sleep(0.1)
        raise AssertionError("still held: %r" % uraid_status_json()["server"])

else:
    sys.exit("unknown scenario " + scenario)

sys.exit(1 if cases.failures else 0)
