#!/bin/sh
# The NBD server at its limits. 64 clients (the connection limit) that
# connect at the same instant are all queued and served, in five rounds:
# none is refused with EAGAIN ("server backlog overflowed"). Out of file
# descriptors (RLIMIT_NOFILE lowered with prlimit), the daemon does not
# spin on the listeners (its CPU time stays low while clients wait), the
# connected clients keep working, and the waiting ones (NBD and control)
# are served once others leave; the condition is logged once.
. "$(dirname "$0")/functions.sh"
requires prlimit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd is not installed"

new_image "$tmp/d.img" 64M
write_conf "$tmp/t.conf" "$tmp/d.img" internal
adm create-md --force r0 >/dev/null
start_tandemd
ctl up r0 || fail "up"
ctl primary --force r0 || fail "primary --force"
sock=$rundir/r0.nbd

# out of file descriptors (first, while no finished NBD connection holds
# one): a limit that leaves 3 free descriptor numbers; the ones open above
# it (inherited) stay open
pid=$tandemd_pid
limit=$(ls /proc/$pid/fd | sort -n | awk 'BEGIN { n = 0; free = 0 }
	{ while (n < $1) { free++; if (free == 3) { print n + 1; exit } n++ } n = $1 + 1 }
	END { if (free < 3) print n + 3 - free }')
[ -n "$limit" ] || fail "no fd limit computed"
# the soft limit only: raising the hard one again may not be allowed here
soft=$(prlimit --pid "$pid" --nofile --noheadings -o SOFT)
hard=$(prlimit --pid "$pid" --nofile --noheadings -o HARD)
prlimit --pid "$pid" --nofile=$limit:$hard || fail "prlimit"
/usr/bin/python3 - "$sock" "$pid" "$rundir/tandemd.sock" <<'PY' || fail "out of file descriptors"
import json, nbd, os, socket, sys, time
path, pid, ctlsock = sys.argv[1], sys.argv[2], sys.argv[3]
hz = os.sysconf("SC_CLK_TCK")

def cpu():
    with open("/proc/%s/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / hz

def connect_within(hs, seconds):
    """drive the handshakes of hs for up to seconds; which are connected"""
    deadline = time.monotonic() + seconds
    while any(h.aio_is_connecting() for h in hs) and time.monotonic() < deadline:
        for h in hs:
            if h.aio_is_connecting():
                h.poll(0)
        time.sleep(0.01)
    return [h.aio_is_ready() for h in hs]

hs = []
for i in range(6):
    h = nbd.NBD()
    h.aio_connect_unix(path)
    hs.append(h)
ready = connect_within(hs, 3)
served = ready.count(True)
assert ready == [True] * served + [False] * (6 - served), ready
assert 1 <= served <= 3, "%d of 6 connected with room for 3 fds" % served
waiting = hs[served:]
# a control client waits too: the main loop's listener is out of fds as well
c = socket.socket(socket.AF_UNIX)
c.connect(ctlsock)
c.sendall(b'{"cmd":"status","res":"r0"}\n')
time.sleep(0.5)  # let both listeners meet EMFILE
t0, c0 = time.monotonic(), cpu()
time.sleep(3)
used, spent = cpu() - c0, time.monotonic() - t0
# a thread spinning on accept4 burns about 1 s of CPU per second
assert used < 0.5, "tandemd used %.2f s of CPU in %.1f s while out of fds" % (used, spent)
print("ok: out of fds: %d NBD clients served, %d waiting; tandemd used %.2f s CPU in %.1f s"
      % (served, len(waiting), used, spent))
for i, h in enumerate(hs[:served]):  # the connected clients keep working
    buf = os.urandom(4096)
    h.pwrite(buf, 4096 * i)
    assert h.pread(4096, 4096 * i) == buf
    h.flush()
print("ok: connected clients read and write while others wait")
for h in hs[:served]:
    h.shutdown()
# now the waiting ones get in (as many as the freed fds allow; the
# control client takes one)
got = connect_within(waiting, 10)
assert got[0], "no waiting NBD client connected after %d left" % served
c.settimeout(10)
reply = b""
while not reply.endswith(b"\n"):
    chunk = c.recv(65536)
    assert chunk, "the control client was closed"
    reply += chunk
assert json.loads(reply)["resources"][0]["name"] == "r0", reply[:200]
print("ok: after %d left, %d waiting NBD clients and the control client were served"
      % (served, got.count(True)))
for h in waiting:
    if h.aio_is_ready():
        h.shutdown()
PY
prlimit --pid "$pid" --nofile=$soft:$hard || fail "prlimit back to $soft"
n=$(grep -c 'NBD: cannot accept a connection: Too many open files' "$tmp/tandemd.log" || true)
[ "$n" -eq 1 ] || { cat "$tmp/tandemd.log"; fail "logged $n times that NBD accept ran out of fds, expected once"; }
grep -q 'NBD: accepting connections again' "$tmp/tandemd.log" || fail "no log line for the recovery"
echo "ok: logged once, and the recovery"

# 64 at once, five times: every connect() is queued (a non-blocking
# connect fails with EAGAIN when the listen queue is full), and every
# client completes the handshake and reads
/usr/bin/python3 - "$sock" "$tmp/tandemd.log" <<'PY' || fail "64 clients at once"
import nbd, select, socket, sys, time
path, log = sys.argv[1], sys.argv[2]
N = 64

def disconnected():
    with open(log) as f:
        return f.read().count("NBD client disconnected")

for rnd in range(5):
    socks = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(N)]
    for s in socks:
        s.setblocking(False)
    refused = 0
    for s in socks:  # back to back, as fast as the kernel takes them
        try:
            s.connect(path)
        except BlockingIOError:
            refused += 1
    if refused:
        raise SystemExit("round %d: %d of %d connects refused with EAGAIN "
                         "(server backlog overflowed)" % (rnd, refused, N))
    hs = []
    for s in socks:
        h = nbd.NBD()
        h.aio_connect_socket(s.detach())
        hs.append(h)
    deadline = time.monotonic() + 30
    while any(h.aio_is_connecting() for h in hs):
        if time.monotonic() > deadline:
            raise SystemExit("round %d: %d handshakes unfinished after 30 s"
                             % (rnd, sum(h.aio_is_connecting() for h in hs)))
        r, w = [], []
        for h in hs:
            if h.aio_is_connecting():
                d = h.aio_get_direction()
                if d & nbd.AIO_DIRECTION_READ:
                    r.append(h.aio_get_fd())
                if d & nbd.AIO_DIRECTION_WRITE:
                    w.append(h.aio_get_fd())
        rr, ww, _ = select.select(r, w, [], 1)
        for h in hs:
            if h.aio_is_connecting():
                fd = h.aio_get_fd()
                if fd in rr:
                    h.aio_notify_read()
                elif fd in ww:
                    h.aio_notify_write()
    dead = [h for h in hs if not h.aio_is_ready()]
    if dead:
        raise SystemExit("round %d: %d clients did not connect: %s"
                         % (rnd, len(dead), nbd.get_error()))
    for h in hs:
        assert len(h.pread(512, 0)) == 512
    before = disconnected()
    for h in hs:
        h.shutdown()
    del hs
    # the server must have let go of all 64 before the next round
    deadline = time.monotonic() + 30
    while disconnected() < before + N:
        if time.monotonic() > deadline:
            raise SystemExit("round %d: the server still holds connections" % rnd)
        time.sleep(0.05)
print("ok: 64 clients at once, 5 rounds: all queued, all served")
PY

ctl secondary r0 || fail "secondary"
ctl down r0 || fail "down"
