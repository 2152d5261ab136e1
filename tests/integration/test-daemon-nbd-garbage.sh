#!/bin/sh
# Garbage, truncated handshakes, bad magics and oversized requests from a
# raw socket get NBD errors or a closed connection, and the daemon keeps
# serving its other clients.
. "$(dirname "$0")/functions.sh"
[ -x /usr/bin/nbdsh ] || skip "nbdsh is not installed (python3-libnbd)"

new_image "$tmp/d.img" 64M
write_conf "$tmp/t.conf" "$tmp/d.img" internal
adm create-md --force r0 >/dev/null
start_tandemd
ctl up r0 && ctl primary --force r0 || fail "up/primary"

# a well-behaved client stays connected all along: it writes, says so, and
# reads its block back only once the raw clients are done
export GOOD_READY=$tmp/good-ready RAW_DONE=$tmp/raw-done
nbdsh_ -u "$(nbd_uri)" -c '
import time, os
buf = os.urandom(4096)
h.pwrite(buf, 0)
open(os.environ["GOOD_READY"], "w").close()
for i in range(1200):
    if os.path.exists(os.environ["RAW_DONE"]):
        break
    time.sleep(0.05)
else:
    raise SystemExit("the raw clients did not finish in 60 s")
assert h.pread(4096, 0) == buf
print("good client still served")
' >"$tmp/good" 2>&1 &
good=$!
good_ready() { [ -e "$GOOD_READY" ] || ! kill -0 $good 2>/dev/null; }
wait_until 30 "the good client connected and wrote" good_ready
[ -e "$GOOD_READY" ] || { cat "$tmp/good"; fail "the good client failed before the raw clients"; }
[ "$(ctl_field clients)" = 1 ] || fail "the good client is not counted: clients $(ctl_field clients)"

/usr/bin/python3 - "$rundir/r0.nbd" <<'PY' || fail "raw clients"
import socket, struct, sys, os
path = sys.argv[1]
def conn():
    s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(path); return s
def recvn(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: return b
        b += c
    return b
# 1. garbage instead of client flags
s = conn(); recvn(s, 18); s.sendall(os.urandom(1000)); s.close()
# 2. truncated handshake: two bytes of flags, then hang up
s = conn(); recvn(s, 18); s.sendall(b"\0\0"); s.close()
# 3. bad option magic
s = conn(); recvn(s, 18); s.sendall(struct.pack(">I", 3) + b"NOTMAGIC" + struct.pack(">II", 1, 0))
assert s.recv(100) == b"", "server kept a connection with a bad option magic"
s.close()
# 4. a proper handshake, then bad requests
s = conn(); recvn(s, 18); s.sendall(struct.pack(">I", 3))
s.sendall(b"IHAVEOPT" + struct.pack(">II", 1, 2) + b"r0")
size, flags = struct.unpack(">QH", recvn(s, 10))
def req(typ, off, ln, flags=0, cookie=7):
    s.sendall(struct.pack(">IHHQQI", 0x25609513, flags, typ, cookie, off, ln))
    magic, err, ck = struct.unpack(">IIQ", recvn(s, 16))
    assert magic == 0x67446698 and ck == cookie, (magic, ck)
    return err
assert req(0, size - 512, 4096) == 22, "read past the end"       # EINVAL
assert req(0, 0, 4096, flags=1 << 7) == 22, "unknown flag"
assert req(42, 0, 4096) == 22, "unknown command"
assert req(0, 0, 4096) == 0; recvn(s, 4096)                      # still fine
# an oversized write: refused, and its payload cannot be drained
s.sendall(struct.pack(">IHHQQI", 0x25609513, 0, 1, 9, 0, 1 << 30))
r = recvn(s, 16)
assert r == b"" or struct.unpack(">IIQ", r)[1] != 0, "oversized write accepted"
s.close()
# 5. bad request magic after the handshake: connection closed
s = conn(); recvn(s, 18); s.sendall(struct.pack(">I", 3))
s.sendall(b"IHAVEOPT" + struct.pack(">II", 1, 2) + b"r0"); recvn(s, 10)
s.sendall(os.urandom(28))
assert s.recv(100) == b"", "server answered a bad request magic"
print("raw clients: all refused cleanly")
PY
: >"$RAW_DONE"
wait $good || { cat "$tmp/good"; fail "the good client was disturbed"; }
cat "$tmp/good"
[ "$(ctl role r0)" = "Primary/Unknown" ] || fail "daemon state changed"
grep -q 'refused' "$tmp/tandemd.log" || fail "refused requests not logged"
ctl down --force r0
echo "ok: garbage and bad requests refused; other client and daemon unaffected"
