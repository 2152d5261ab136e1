#!/bin/sh
# Limits on local clients (doc/nbd-frontend.md and doc/control-protocol.md,
# "Local clients"): a finished NBD connection gives its slot, thread and
# descriptor back at once, without a new accept; the 65th NBD or control
# connection is refused (a control client is told why); a client that
# connects and sends nothing is closed after 10 s, but an event stream is
# not; and a flood of bad NBD requests is logged a bounded number of times,
# with the count of the lines left out.
. "$(dirname "$0")/functions.sh"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is not installed"
[ -x /usr/bin/nbdsh ] || skip "nbdsh is not installed (python3-libnbd)"

new_image "$tmp/d.img" 64M
write_conf "$tmp/t.conf" "$tmp/d.img" internal
adm create-md --force r0 >/dev/null
start_tandemd
ctl up r0 && ctl primary --force r0 || fail "up/primary"
pid=$tandemd_pid
nfd() { ls /proc/$pid/fd | wc -l; }
ntask() { ls /proc/$pid/task | wc -l; }
fd0=$(nfd) task0=$(ntask)

# reaping: two clients connect and leave; their threads and descriptors go
# at once (before this change only the next accept joined them)
export HELD=$tmp/held GO=$tmp/go URI="$(nbd_uri)"
nbdsh_ -u "$(nbd_uri)" -c '
import os, time, nbd
h2 = nbd.NBD(); h2.connect_uri(os.environ["URI"])
h.pread(4096, 0); h2.pread(4096, 0)
open(os.environ["HELD"], "w").close()
while not os.path.exists(os.environ["GO"]): time.sleep(0.05)
' >"$tmp/held.out" 2>&1 &
held=$!
wait_until 30 "two clients connected" sh -c '[ -e "$HELD" ] || ! kill -0 '$held
[ "$(ctl_field clients)" = 2 ] || { cat "$tmp/held.out"; fail "clients $(ctl_field clients), not 2"; }
: >"$GO"
wait $held || { cat "$tmp/held.out"; fail "the two clients"; }
wait_until 10 "clients back to 0" ctl_field_is clients 0
wait_until 10 "descriptors back to $fd0 without a new accept (now $(nfd))" sh -c "[ \$(ls /proc/$pid/fd | wc -l) -le $fd0 ]"
wait_until 10 "threads back to $task0 without a new accept" sh -c "[ \$(ls /proc/$pid/task | wc -l) -le $task0 ]"
echo "ok: a finished connection's thread and descriptor are freed at once"

# the cap and the idle timeout: 64 NBD connections that send nothing are
# served (greeted); the 65th is closed at once; the 64 are closed after
# 10 s without a handshake. The same for the control socket, where the
# 65th gets an error line, while an event stream stays past 10 s.
/usr/bin/python3 - "$rundir" <<'PY' || fail "caps and idle timeouts"
import json, socket, sys, time
run = sys.argv[1]
def conn(name):
    s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(run + "/" + name); return s
def recvn(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: break
        b += c
    return b
t0 = time.monotonic()
nbd = [conn("r0.nbd") for i in range(64)]
for s in nbd:
    assert len(recvn(s, 18)) == 18, "a connection within the cap was not greeted"
extra = conn("r0.nbd")
assert extra.recv(100) == b"", "the 65th NBD connection was served"
ev = conn("tandemd.sock")
ev.sendall(b'{"cmd":"events"}\n')
assert json.loads(ev.makefile().readline()) == {"ok": True}
ctl = [conn("tandemd.sock") for i in range(63)]
c65 = conn("tandemd.sock")
line = c65.makefile().readline()
assert "too many control connections" in line, line
assert c65.recv(100) == b""
assert time.monotonic() - t0 < 9, "too slow to check the idle timeout"
print("ok: the 65th NBD and control connections are refused")
for s in nbd + ctl:
    assert s.recv(100) == b"", "an idle client got data"
took = time.monotonic() - t0
assert 9 <= took <= 25, "idle clients closed after %.1f s, not about 10" % took
print("ok: idle NBD and control clients closed after %.1f s" % took)
# the event stream connected before the 63 control clients, so it has
# been idle longer than they were when they were closed: were it subject
# to the idle timeout it would be closed by now, and recv() would see EOF
ev.settimeout(0.5)
try:
    assert ev.recv(100) != b"", "the event stream was closed"
except socket.timeout:
    pass
ev.sendall(b'{"cmd":"status"}\n') # ignored by an event stream; it is still open
print("ok: the event stream stays open")
PY
grep -q "NBD connection from pid [0-9]* (uid 0, gid 0) refused: 64 connections already" "$tmp/tandemd.log" ||
	fail "no log line for the 65th NBD connection"
grep -q "control connection from pid [0-9]* (uid 0, gid 0) refused: too many control connections" \
	"$tmp/tandemd.log" || fail "no log line for the 65th control connection"
n=$(grep -c "closed: no handshake within 10 s" "$tmp/tandemd.log")
[ "$n" -ge 1 ] && [ "$n" -le 3 ] || fail "$n log lines for 64 idle NBD clients"
n=$(grep -c "control client closed: no request for 10 s" "$tmp/tandemd.log")
[ "$n" -ge 1 ] && [ "$n" -le 3 ] || fail "$n log lines for 63 idle control clients"
echo "ok: refusals and idle closes logged, a few lines for many clients"

# a flood of bad requests: 20000 reads with an unknown flag, each refused
# with EINVAL; then, once 10 s have passed, one more, logged with the count
/usr/bin/python3 - "$rundir/r0.nbd" <<'PY' || fail "flood of bad requests"
import socket, struct, sys, time
s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(sys.argv[1])
def recvn(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b)); assert c, "closed"; b += c
    return b
recvn(18); s.sendall(struct.pack(">I", 3))
s.sendall(b"IHAVEOPT" + struct.pack(">II", 1, 2) + b"r0"); recvn(10)
bad = struct.pack(">IHHQQI", 0x25609513, 1 << 7, 0, 7, 0, 4096)
t0 = time.monotonic()
for i in range(200):
    s.sendall(bad * 100)
    for k in range(100):
        assert struct.unpack(">IIQ", recvn(16))[1] == 22
# the rate limit's interval (10 s) must pass before the next line may go
# out: a span of time, not an event to wait for
time.sleep(max(0, 10.5 - (time.monotonic() - t0)))
s.sendall(bad)
assert struct.unpack(">IIQ", recvn(16))[1] == 22
print("ok: 20001 bad requests refused with EINVAL")
PY
n=$(grep -c "NBD request NBD_CMD_READ .* refused" "$tmp/tandemd.log")
[ "$n" -le 4 ] || fail "$n log lines for 20001 bad requests"
grep -Eq "refused: .*\(and [0-9]{4,} more like it in the last [0-9]+ s\)" "$tmp/tandemd.log" ||
	fail "the lines left out are not counted"
echo "ok: 20001 bad requests, $n log lines, the rest counted"
[ "$(ctl role r0)" = "Primary/Unknown" ] || fail "daemon state changed"
ctl down --force r0
