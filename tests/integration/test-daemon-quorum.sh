#!/bin/sh
# options { quorum majority; on-no-quorum suspend-io|io-error; } (issue 18,
# doc/arbiter.md §6.5) on one node: the arbiter's `quorum` control command
# (sent here by hand on the control socket, as tandem-arbiterd sends it),
# primary refused without quorum (exit 11) and forced with --force, a
# Primary's NBD write held while quorum is lost under suspend-io until it
# returns (fencing's resume-io does not lift it), and failed with EIO under
# io-error; a resource with quorum off is never touched.
. "$(dirname "$0")/functions.sh"
requires nbdsh

cat >"$tmp/t.conf" <<CONF
resource r0 {
	options { quorum majority; on-no-quorum suspend-io; }
	net { cram-hmac-alg sha256; shared-secret "tandem-test"; }
	on alice { device minor 0; disk $tmp/d0.img; meta-disk internal; address 127.0.0.1:$port; }
	on bob { device minor 0; disk /dev/null; meta-disk internal; address 127.0.0.2:$port; }
}
resource r1 {
	options { quorum majority; on-no-quorum io-error; }
	net { cram-hmac-alg sha256; shared-secret "tandem-test"; }
	on alice { device minor 1; disk $tmp/d1.img; meta-disk internal; address 127.0.0.1:$port2; }
	on bob { device minor 1; disk /dev/null; meta-disk internal; address 127.0.0.2:$port2; }
}
resource r2 {
	net { cram-hmac-alg sha256; shared-secret "tandem-test"; }
	on alice { device minor 2; disk $tmp/d2.img; meta-disk internal; address 127.0.0.1:$((port + 2)); }
	on bob { device minor 2; disk /dev/null; meta-disk internal; address 127.0.0.2:$((port + 2)); }
}
CONF
for r in 0 1 2; do
	new_image "$tmp/d$r.img" 64M
	adm create-md --force "r$r" >/dev/null
done

# quorum JSON-VALUE: the arbiter's request; prints tandemd's answer line
quorum() {
	python3 - "$rundir/tandemd.sock" "{\"cmd\":\"quorum\",\"quorate\":$1}" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(30)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
buf = b""
while not buf.endswith(b"\n"):
    d = s.recv(65536)
    if not d:
        break
    buf += d
print(buf.decode().strip())
PY
}

# jfield RES PYEXPR: a Python expression on the resource's status object r
jfield() {
	ctl status --json "$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)["resources"][0]
print(eval(sys.argv[1]))' "$2"
}

# nbd_try RES PY: run a python snippet on handle h; prints ok or the error
nbd_try() {
	nbdsh_ -u "$(nbd_uri "$1")" -c "
try:
    $2
    print('ok')
except nbd.Error as e:
    print('error', e.errno)
"
}

start_tandemd
ctl up r0 r1 r2 || fail "up"
# fresh metadata is Inconsistent: make the disks UpToDate, then Secondary
ctl primary --force r0 r1 r2 && ctl secondary r0 r1 r2 || fail "first promotion"

# ---- status before any word from an arbiter: quorate, nothing enforced
[ "$(jfield r0 'r["quorum"]')" = "{'policy': 'majority', 'on_no_quorum': 'suspend-io', 'quorate': True}" ] ||
	fail "r0 quorum status: $(jfield r0 'r["quorum"]')"
[ "$(jfield r1 'r["quorum"]["on_no_quorum"]')" = io-error ] || fail "r1 on_no_quorum"
[ "$(jfield r2 'r["quorum"]["policy"]')" = off ] || fail "r2 policy: the default is off"
[ "$(jfield r0 'r["susp"]')" = 0 ] || fail "susp before anything happened"
[ "$(jfield r0 'r["primary_since"]')" = 0 ] || fail "primary_since of a Secondary"
# promoted without a peer: the old current UUID became the bitmap UUID
jfield r0 'r["volumes"][0]["bitmap_uuid"]' | grep -Eqx '[0-9A-F]{16}' ||
	fail "bitmap_uuid: $(jfield r0 'r["volumes"][0]["bitmap_uuid"]')"
[ "$(jfield r0 'int(r["volumes"][0]["bitmap_uuid"], 16) != 0')" = True ] ||
	fail "bitmap_uuid is 0 after a promotion without the peer"
echo "ok: status shows quorum, susp, primary_since and bitmap_uuid"

# ---- a malformed request is refused, and changes nothing
out=$(python3 - "$rundir/tandemd.sock" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(30)
s.connect(sys.argv[1])
s.sendall(b'{"cmd":"quorum","quorate":"no"}\n')
print(s.makefile().readline().strip())
PY
)
case $out in *'"ok":false'*'"exit":1'*"'quorate' must be true or false"*) ;;
*) fail "quorum with a string: $out" ;; esac

# ---- quorum lost: a Secondary refuses primary (exit 11), --force promotes
out=$(quorum false)
case $out in *'"changed":true'*'"ok":true'*) ;; *) fail "quorum false: $out" ;; esac
wait_grep "$tmp/tandemd.log" '\[r0\] quorum lost'
wait_grep "$tmp/tandemd.log" '\[r1\] quorum lost'
grep -q '\[r2\] quorum lost' "$tmp/tandemd.log" && fail "r2 (quorum off) logged a quorum loss"
[ "$(jfield r0 'r["quorum"]["quorate"]')" = False ] || fail "status still quorate"
rc=0
ctl primary r0 >"$tmp/p.out" 2>&1 || rc=$?
[ "$rc" = 11 ] || { cat "$tmp/p.out"; fail "primary without quorum: exit $rc, expected 11"; }
grep -q 'State change failed: no quorum' "$tmp/p.out" || { cat "$tmp/p.out"; fail "no error text"; }
grep -q 'this partition has no quorum (corosync votequorum); use --force' "$tmp/p.out" ||
	{ cat "$tmp/p.out"; fail "no hint"; }
[ "$(jfield r0 'r["role"]')" = Secondary ] || fail "r0 promoted anyway"
ctl primary r2 || fail "primary r2 (quorum off) refused"
ctl primary --force r0 || fail "primary --force without quorum"
grep -q "\[r0\] promoted without quorum: forced by 'primary --force'" "$tmp/tandemd.log" ||
	fail "the forced promotion is not logged"
[ "$(jfield r0 'r["primary_since"] > 1700000000')" = True ] ||
	fail "primary_since: $(jfield r0 'r["primary_since"]')"
# the operator chose to serve I/O without quorum: not suspended
[ "$(jfield r0 'r["susp"]')" = 0 ] || fail "a forced Primary got suspended"
[ "$(nbd_try r0 "h.pwrite(b'F' * 4096, 0)")" = ok ] || fail "write on the forced Primary"
[ "$(nbd_try r2 "h.pwrite(b'2' * 4096, 0)")" = ok ] || fail "write on r2"
echo "ok: no quorum: primary refused with exit 11 and the hint; --force promoted and logged why"

# ---- quorum back: promotion as usual
out=$(quorum true)
case $out in *'"changed":true'*) ;; *) fail "quorum true: $out" ;; esac
wait_grep "$tmp/tandemd.log" '\[r0\] quorum regained'
ctl primary r1 || fail "primary r1 with quorum"

# ---- a Primary loses quorum: suspend-io holds, io-error fails
quorum false >/dev/null
[ "$(jfield r0 'r["susp"]')" = 8 ] || fail "r0 susp $(jfield r0 'r["susp"]'), expected 8 (no quorum)"
grep -q '\[r0\] susp-quorum( 0 -> 1 ) quorum lost' "$tmp/tandemd.log" || fail "no susp-quorum logged"
[ "$(jfield r1 'r["susp"]')" = 0 ] || fail "r1 (io-error) suspended"
[ "$(jfield r2 'r["susp"]')" = 0 ] || fail "r2 (quorum off) suspended"
# the write waits at the volume: counters.frozen says so
timeout 120 sh -c "PATH=/usr/bin:\$PATH nbdsh -u '$(nbd_uri r0)' -c \"h.pwrite(b'Q' * 4096, 8192); print('written')\"" \
	>"$tmp/held.out" 2>&1 &
held=$!
wait_until 30 "r0's NBD write waiting for quorum (counters.frozen)" ctl_field_is frozen 1
kill -0 "$held" 2>/dev/null || { cat "$tmp/held.out"; fail "the held write finished"; }
# fencing's resume-io has nothing to lift, and does not touch the quorum's
# freeze: the flag (set and read under the state lock) still holds after
# the answer, and the write still waits
ctl resume-io r0 >/dev/null 2>&1 && fail "resume-io lifted something"
[ "$(jfield r0 'r["susp"]')" = 8 ] || fail "resume-io lifted the quorum suspension"
ctl_field_is frozen 1 || fail "the write went on after resume-io"
# io-error: writes, trims and write-zeroes fail, reads and flushes are served
[ "$(nbd_try r1 "h.pwrite(b'E' * 4096, 0)")" = "error EIO" ] || fail "r1 write without quorum"
[ "$(nbd_try r1 "h.zero(4096, 0)")" = "error EIO" ] || fail "r1 write-zeroes without quorum"
[ "$(nbd_try r1 "assert h.pread(4096, 0) == bytes(4096); h.flush()")" = ok ] ||
	fail "r1 read and flush without quorum"
grep -q '\[r1\] no quorum: new writes fail with EIO' "$tmp/tandemd.log" || fail "r1: no EIO notice"
[ "$(nbd_try r2 "h.pwrite(b'3' * 4096, 0)")" = ok ] || fail "r2 (quorum off) write"
echo "ok: quorum lost: r0's write is held (resume-io does not free it), r1's fails with EIO"

# ---- quorum returns: the held write completes, io-error ends
quorum true >/dev/null
wait "$held" || { cat "$held.out" "$tmp/held.out" 2>/dev/null; fail "the held write failed"; }
grep -q written "$tmp/held.out" || { cat "$tmp/held.out"; fail "the held write did not finish"; }
[ "$(nbd_try r0 "assert h.pread(4096, 8192) == b'Q' * 4096")" = ok ] || fail "the held write's data"
grep -q '\[r0\] susp-quorum( 1 -> 0 ) quorum regained' "$tmp/tandemd.log" || fail "no lift logged"
[ "$(jfield r0 'r["susp"]')" = 0 ] || fail "still suspended"
[ "$(nbd_try r1 "h.pwrite(b'E' * 4096, 0)")" = ok ] || fail "r1 write after quorum came back"
echo "ok: quorum regained: the held write completed, r1 writes again"

# ---- demoted: primary_since goes back to 0, and no quorum leaves a Secondary alone
ctl secondary r0 || fail "secondary r0"
[ "$(jfield r0 'r["primary_since"]')" = 0 ] || fail "primary_since after demotion"
quorum false >/dev/null
[ "$(jfield r0 'r["susp"]')" = 0 ] || fail "a Secondary got suspended"
quorum true >/dev/null
ctl down r0 r1 r2 || fail "down"
echo "ok: demotion"
