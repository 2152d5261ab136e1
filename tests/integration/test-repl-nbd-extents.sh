#!/bin/sh
# Block status and fast zero on a connected Primary (doc/nbd-frontend.md):
# block status describes the Primary's backing file; FAST_ZERO is refused
# with NBD_ENOTSUP and changes nothing on either disk, since the peer may
# have to write its zeroes; WRITE_ZEROES without it is replicated, and
# qemu-img convert copies an image onto it. With its disk failed (detached),
# the Primary reads from the peer and block status says "data" for the
# whole range.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdinfo
[ -x /usr/bin/nbdsh ] || skip "nbdsh is not installed (python3-libnbd)"
export TANDEM_FAULT_INJECTION=1

new_image "$tmp/a.img" 64M
new_image "$tmp/b.img" 64M
write_repl_conf "$tmp/t.conf" 'protocol C;'
blank_pair
uri=$(nbd_uri_of a)
size=$(($(field a size_sect) * 512))

nbdsh_ -u "$uri" -c '
import os
h.pwrite(os.urandom(262144), 1 << 20)
h.flush()' || fail "writing the data"
same_data "after the write"
nbdinfo --map "$uri" >"$tmp/map" || fail "nbdinfo --map"
cat >"$tmp/map.want" <<EOF
         0     1048576    3  hole,zero
   1048576      262144    0  data
   1310720 $(printf %11d $((size - 1310720)))    3  hole,zero
EOF
diff -u "$tmp/map.want" "$tmp/map" || fail "nbdinfo --map on the connected Primary"
echo "ok: connected: nbdinfo --map is the Primary's data and holes"

nbdsh_ --base-allocation -u "$uri" -c '
import errno
msgs = []
h.set_debug(True)
h.set_debug_callback(lambda ctx, msg: msgs.append(msg))
old = h.pread(262144, 1 << 20)
try:
    h.zero(131072, 1 << 20, nbd.CMD_FLAG_FAST_ZERO)
except nbd.Error as e:
    assert e.errnum == errno.ENOTSUP, "fast zero: errno %s" % e.errno
else:
    raise SystemExit("fast zero while connected was carried out")
said = [m for m in msgs if "server message" in m]
assert said and "FAST_ZERO: not faster than writing: the peer is connected" in said[0], said
assert h.pread(262144, 1 << 20) == old, "fast zero changed the data"
h.zero(131072, 1 << 20)
assert h.pread(131072, 1 << 20) == bytes(131072)
h.flush()
' >"$tmp/fz.out" 2>&1 || { cat "$tmp/fz.out"; fail "nbdsh: fast zero while connected"; }
same_data "after the zeroes"
[ "$(field a oos)" = 0 ] || fail "out of sync after the zeroes: $(field a oos) KiB"
echo "ok: connected: FAST_ZERO is NBD_ENOTSUP and changes nothing; WRITE_ZEROES reaches both"

# qemu-img convert -n: the source's holes as WRITE_ZEROES (qemu 7.2 does
# not ask for fast zeroes here, nbdkit's log filter shows), the data as
# writes; the copy is right on both disks
if command -v qemu-img >/dev/null 2>&1; then
	new_image "$tmp/src.img" 8M
	head -c 131072 /dev/urandom | dd of="$tmp/src.img" bs=64K seek=5 conv=notrunc status=none
	qemu-img convert -n -f raw -O raw "$tmp/src.img" "$uri" || fail "qemu-img convert"
	nbdcopy "$uri" "$tmp/back.img" || fail "nbdcopy back"
	cmp -n $((8 << 20)) "$tmp/back.img" "$tmp/src.img" || fail "qemu-img convert: wrong data"
	same_data "after qemu-img convert"
	echo "ok: connected: qemu-img convert writes the image, holes and data, to both disks"
else
	skip_part "qemu-img is not installed (qemu-utils): qemu-img convert to a connected Primary"
fi

# the local disk fails (on-io-error detach): a diskless Primary
on a inject-fault write r0
nbdsh_ -u "$uri" -c 'h.pwrite(b"B" * 4096, 8 << 20)' || fail "write with a failing disk"
wait_for a disk Diskless
nbdsh_ --base-allocation -u "$uri" -c '
got = []
def cb(metacontext, off, entries, err):
    got.extend(zip(entries[0::2], entries[1::2]))
h.block_status(4 << 20, 0, cb)
assert got == [(4 << 20, 0)], got
assert h.pread(4096, 8 << 20) == b"B" * 4096, "a read through the peer"
' || fail "block status of a diskless Primary"
echo "ok: diskless Primary: block status is all data (reads come from the peer)"
stop_pair
