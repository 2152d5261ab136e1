#!/bin/sh
# on-io-error with a failing backing device (fault injection through
# tandemadm inject-fault): detach, pass_on and call-local-io-error, a
# metadata error under pass_on, re-attach after the disk is healed; the
# daemon keeps serving another resource meanwhile.
. "$(dirname "$0")/functions.sh"
requires nbdsh
export TANDEM_FAULT_INJECTION=1

# conf POLICY: r0 with that on-io-error and a local-io-error handler; r1 healthy
conf() {
	cat >"$tmp/t.conf" <<CONF
resource r0 {
	disk { on-io-error $1; }
	handlers { local-io-error "env > $tmp/handler.env; echo handler ran; exit 0"; }
	net { cram-hmac-alg sha256; shared-secret "tandem-test"; }
	on alice { device minor 0; disk $tmp/d.img; meta-disk internal; address 127.0.0.1:$port; }
	on bob { device minor 0; disk /dev/null; meta-disk internal; address 127.0.0.2:$port; }
}
resource r1 {
	net { cram-hmac-alg sha256; shared-secret "tandem-test"; }
	on alice { device minor 1; disk $tmp/e.img; meta-disk internal; address 127.0.0.1:$port2; }
	on bob { device minor 1; disk /dev/null; meta-disk internal; address 127.0.0.2:$port2; }
}
CONF
}

new_image "$tmp/d.img" 64M
new_image "$tmp/e.img" 64M
conf detach
adm create-md --force r0 >/dev/null
adm create-md --force r1 >/dev/null

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

disk_of() { ctl status --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["resources"][0]["volumes"][0]["disk"])'; }

wait_disk() { # RES STATE
	i=0
	until [ "$(disk_of "$1")" = "$2" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || { cat "$tmp/tandemd.log"; fail "$1: disk $(disk_of "$1"), expected $2"; }
		sleep 0.05
	done
}

start_tandemd
ctl up r0 r1 && ctl primary --force r0 r1 || fail "up/primary"
ctl inject-fault write r0 2>&1 | grep -q . && fail "inject-fault printed something"

# ---- detach (the default)
ctl inject-fault none r0
[ "$(nbd_try r0 "h.pwrite(b'A' * 4096, 0)")" = ok ] || fail "healthy write"
ctl inject-fault write r0
out=$(nbd_try r0 "h.pwrite(b'B' * 4096, 8192)")
[ "$out" = "error EIO" ] || fail "write under a fault: $out, expected EIO"
wait_disk r0 Diskless
grep -q 'local I/O error writing the backing device.*on-io-error detach' "$tmp/tandemd.log" ||
	fail "no I/O error logged"
grep -q 'disk( UpToDate -> Failed )' "$tmp/tandemd.log" || fail "no transition to Failed"
grep -q 'detached after a local I/O error' "$tmp/tandemd.log" || fail "no detach logged"
# reads now fail too: the disk is gone
[ "$(nbd_try r0 "h.pread(4096, 0)")" = "error EIO" ] || fail "read after the detach"
# the other resource is untouched
[ "$(nbd_try r1 "h.pwrite(b'C' * 4096, 0); assert h.pread(4096, 0) == b'C' * 4096")" = ok ] ||
	fail "r1 stopped serving"
echo "ok: detach: the write failed with EIO, the disk went Failed then Diskless, r1 serves"

# heal and re-attach: the metadata was left in use, so the AL is replayed
ctl inject-fault none r0
ctl attach r0 || { cat "$tmp/tandemd.log"; fail "re-attach"; }
[ "$(disk_of r0)" = UpToDate ] || fail "after re-attach: $(disk_of r0)"
grep -q 'activity log replayed' "$tmp/tandemd.log" || fail "no AL replay at re-attach"
[ "$(nbd_try r0 "assert h.pread(4096, 0) == b'A' * 4096")" = ok ] || fail "data lost"
echo "ok: healed disk re-attached, activity log replayed, data intact"
ctl secondary r0
ctl down r0 r1
stop_tandemd

# ---- pass_on: the error goes to the client, the disk becomes Inconsistent
conf pass_on
start_tandemd
ctl up r0 r1 && ctl primary --force r0 || fail "up/primary (pass_on)"
ctl inject-fault read r0
[ "$(nbd_try r0 "h.pread(4096, 0)")" = "error EIO" ] || fail "pass_on: read not failed"
wait_disk r0 Inconsistent
[ "$(nbd_try r0 "h.pwrite(b'D' * 4096, 0)")" = ok ] || fail "pass_on: writes stopped"
ctl inject-fault none r0
[ "$(nbd_try r0 "assert h.pread(4096, 0) == b'D' * 4096")" = ok ] || fail "pass_on: read back"
echo "ok: pass_on: EIO to the client, disk Inconsistent, the volume keeps serving"

# a metadata error detaches even under pass_on (a cold extent needs an AL write)
ctl inject-fault --meta write r0
out=$(nbd_try r0 "h.pwrite(b'E' * 4096, 40 << 20)")
[ "$out" = "error EIO" ] || fail "pass_on metadata error: $out"
wait_disk r0 Diskless
grep -q 'writing the activity log to the metadata' "$tmp/tandemd.log" || fail "metadata error not logged"
echo "ok: pass_on: a metadata error detaches"
ctl inject-fault none r0
ctl secondary r0
ctl down r0 r1
stop_tandemd

# ---- call-local-io-error: the handler runs with DRBD's environment, then detach
conf call-local-io-error
adm create-md --force r0 >/dev/null
start_tandemd
ctl up r0 && ctl primary --force r0 || fail "up/primary (call-local-io-error)"
ctl inject-fault write r0
[ "$(nbd_try r0 "h.pwrite(b'F' * 4096, 0)")" = "error EIO" ] || fail "handler case: write"
wait_disk r0 Diskless
grep -q '^DRBD_RESOURCE=r0$' "$tmp/handler.env" || fail "handler env: DRBD_RESOURCE"
grep -q '^DRBD_VOLUME=0$' "$tmp/handler.env" || fail "handler env: DRBD_VOLUME"
grep -q '^DRBD_MINOR=0$' "$tmp/handler.env" || fail "handler env: DRBD_MINOR"
grep -q "^DRBD_LL_DISK=$tmp/d.img\$" "$tmp/handler.env" || fail "handler env: DRBD_LL_DISK"
grep -q '^TANDEM_HANDLER=local-io-error$' "$tmp/handler.env" || fail "handler env: TANDEM_HANDLER"
grep -q 'handler local-io-error: handler ran' "$tmp/tandemd.log" || fail "handler output not logged"
grep -q 'handler local-io-error (pid [0-9]*) exited with 0' "$tmp/tandemd.log" || fail "handler exit"
echo "ok: call-local-io-error: handler ran with DRBD's environment, then the disk was detached"

# without TANDEM_FAULT_INJECTION the verb is refused
stop_tandemd
unset TANDEM_FAULT_INJECTION
start_tandemd
set +e
ctl inject-fault write r0 >"$tmp/out" 2>&1
rc=$?
set -e
[ $rc -eq 20 ] && grep -q 'fault injection is off' "$tmp/out" || { cat "$tmp/out"; fail "inject-fault without the variable: exit $rc"; }
echo "ok: inject-fault is refused unless TANDEM_FAULT_INJECTION=1"
