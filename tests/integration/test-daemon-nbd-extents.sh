#!/bin/sh
# Block status, CACHE and fast zero (doc/nbd-frontend.md) on a StandAlone
# Primary whose backing file is sparse with known data: nbdinfo --map and
# qemu-img map see exactly its data and holes, up to the exported size
# (never the metadata after it); nbdcopy reads only the data and writes a
# sparse copy; REQ_ONE gives one extent; CACHE reads ahead; FAST_ZERO
# punches a hole; bad requests get error chunks that say why.
. "$(dirname "$0")/functions.sh"
requires nbdinfo
requires nbdcopy
[ -x /usr/bin/nbdsh ] || skip "nbdsh is not installed (python3-libnbd)"

new_image "$tmp/d.img" 64M
write_conf "$tmp/t.conf" "$tmp/d.img" internal
adm create-md --force r0 >/dev/null
start_tandemd
ctl up r0 || fail "up"
ctl primary --force r0 || fail "primary --force"
uri=$(nbd_uri)
size=$(($(ctl_field size_sect) * 512))
kib_read() { ctl_field dr; }

# data at 1 MiB (256 KiB), 8 MiB (64 KiB) and in the last 4 KiB of the
# export, right before the internal metadata; holes everywhere else
SIZE=$size nbdsh_ -u "$uri" -c '
import os
size = int(os.environ["SIZE"])
h.pwrite(os.urandom(262144), 1 << 20)
h.pwrite(os.urandom(65536), 8 << 20)
h.pwrite(os.urandom(4096), size - 4096)
h.flush()' || fail "writing the data"
data=$((262144 + 65536 + 4096))

nbdinfo --json "$uri" >"$tmp/info" || fail "nbdinfo --json"
for k in '"base:allocation"' '"can_cache": true' '"can_fast_zero": true'; do
	grep -q "$k" "$tmp/info" || { cat "$tmp/info"; fail "nbdinfo: no $k"; }
done
nbdinfo --map "$uri" >"$tmp/map" || fail "nbdinfo --map"
cat >"$tmp/map.want" <<EOF
         0     1048576    3  hole,zero
   1048576      262144    0  data
   1310720     7077888    3  hole,zero
   8388608       65536    0  data
   8454144 $(printf %11d $((size - 4096 - 8454144)))    3  hole,zero
$(printf %10d $((size - 4096)))        4096    0  data
EOF
diff -u "$tmp/map.want" "$tmp/map" || fail "nbdinfo --map: not the data and holes written"
echo "ok: nbdinfo: base:allocation, can_cache, can_fast_zero; --map is the holes and data exactly"

# nbdcopy reads the data extents only, and leaves the holes out of its copy
before=$(kib_read)
nbdcopy "$uri" "$tmp/copy.img" || fail "nbdcopy"
read_kib=$(($(kib_read) - before))
cmp -n "$size" "$tmp/copy.img" "$tmp/d.img" || fail "nbdcopy: the copy differs"
[ "$read_kib" -le 1024 ] || fail "nbdcopy read $read_kib KiB of a $((size >> 10)) KiB export"
alloc=$(($(stat -c %b "$tmp/copy.img") * 512))
[ "$alloc" -eq "$data" ] || fail "nbdcopy: the copy has $alloc bytes allocated, want $data"
# --allocated (allocated zeroes in the copy, where the destination can:
# nbdcopy 1.14 does not for a local file, from nbdkit either): the holes
# are still not read
before=$(kib_read)
nbdcopy --allocated "$uri" "$tmp/alloc.img" || fail "nbdcopy --allocated"
alloc_kib=$(($(kib_read) - before))
cmp -n "$size" "$tmp/alloc.img" "$tmp/d.img" || fail "nbdcopy --allocated: the copy differs"
[ "$alloc_kib" -le 1024 ] || fail "nbdcopy --allocated read $alloc_kib KiB"
before=$(kib_read)
nbdcopy --no-extents "$uri" "$tmp/full.img" || fail "nbdcopy --no-extents"
full_kib=$(($(kib_read) - before))
[ "$full_kib" -ge $((size >> 10)) ] || fail "nbdcopy --no-extents read only $full_kib KiB"
echo "ok: nbdcopy read $read_kib KiB ($alloc_kib with --allocated, all $full_kib KiB without extents); the copy has $alloc bytes allocated"

if command -v qemu-img >/dev/null 2>&1; then
	qemu-img map --output=json -f raw "$uri" >"$tmp/qmap" || fail "qemu-img map"
	python3 - "$tmp/qmap" "$size" <<'PY' || { cat "$tmp/qmap"; fail "qemu-img map"; }
import json, sys
size = int(sys.argv[2])
got = [(e["start"], e["length"], e["data"], e["zero"]) for e in json.load(open(sys.argv[1]))]
want = [(0, 1 << 20, False, True), (1 << 20, 262144, True, False),
        (1310720, 7077888, False, True), (8 << 20, 65536, True, False),
        (8454144, size - 4096 - 8454144, False, True), (size - 4096, 4096, True, False)]
if got != want:
    sys.exit("qemu-img map: %s, want %s" % (got, want))
PY
	echo "ok: qemu-img map: the same data and zero ranges"
else
	skip_part "qemu-img is not installed (qemu-utils): qemu's view of block status"
fi

# REQ_ONE, errors with their reason, CACHE, FAST_ZERO (with NO_HOLE too,
# where this file system has ZERO_RANGE: the documented rule)
zr=yes
new_image "$tmp/zr" 1M
fallocate -z -l 4096 "$tmp/zr" 2>/dev/null || zr=no
SIZE=$size IMG=$tmp/d.img ZERO_RANGE=$zr nbdsh_ --base-allocation -u "$uri" -c '
import errno, os, subprocess
size = int(os.environ["SIZE"])
msgs = []
h.set_debug(True)
h.set_debug_callback(lambda ctx, msg: msgs.append(msg))
h.set_strict_mode(0)
def extents(length, offset, flags=0):
    got = []
    def cb(metacontext, off, entries, err):
        assert metacontext == "base:allocation", metacontext
        got.extend(zip(entries[0::2], entries[1::2]))
    h.block_status(length, offset, cb, flags)
    return got
assert extents(4 << 20, 0, nbd.CMD_FLAG_REQ_ONE) == [(1 << 20, 3)]
assert extents(512, 1 << 20, nbd.CMD_FLAG_REQ_ONE) == [(512, 0)]
assert extents(2 << 20, 0) == [(1 << 20, 3), (262144, 0), (786432, 3)], extents(2 << 20, 0)
# the last extent stops at the end of the export, before the metadata
assert extents(8192, size - 8192) == [(4096, 3), (4096, 0)]
def refused(what, f, want, sub):
    del msgs[:]
    try:
        f()
    except nbd.Error as e:
        if e.errnum != want:
            raise SystemExit("%s: errno %s, want %d" % (what, e.errno, want))
    else:
        raise SystemExit("%s was accepted" % what)
    said = [m for m in msgs if "server message" in m]
    if not said or sub not in said[0]:
        raise SystemExit("%s: no message with %r in %s" % (what, sub, said))
    print("%s: %s" % (what, said[0]))
refused("block status past the end", lambda: extents(8192, size - 4096), errno.EINVAL,
        "NBD_CMD_BLOCK_STATUS offset %d length 8192 refused: offset + length is beyond" % (size - 4096))
refused("block status of 0 bytes", lambda: extents(0, 0), errno.EINVAL, "length is 0")
refused("cache past the end", lambda: h.cache(8192, size - 4096), errno.EINVAL, "beyond")
refused("cache above the maximum", lambda: h.cache(64 << 20, 0), errno.EINVAL, "maximum")
refused("cache with REQ_ONE", lambda: h.cache(4096, 0, nbd.CMD_FLAG_REQ_ONE), errno.EINVAL,
        "not valid")
# CACHE reads the range ahead into the page cache
assert h.can_cache()
fd = os.open(os.environ["IMG"], os.O_RDONLY)
def resident():
    out = subprocess.run(["fincore", "-nbo", "RES", os.environ["IMG"]], capture_output=True,
                         text=True, check=True).stdout
    return int(out.split()[0])
os.fdatasync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
before = resident()
h.cache(262144, 1 << 20)
import time
for i in range(50):
    if resident() - before >= 262144:
        break
    time.sleep(0.1)
else:
    raise SystemExit("CACHE: %d bytes more in the page cache, want 262144" % (resident() - before))
print("cache: %d bytes read ahead" % (resident() - before))
# FAST_ZERO, StandAlone, on a file: punched at once, reads zeroes, a hole
assert h.can_fast_zero()
h.zero(65536, (1 << 20) + 65536, nbd.CMD_FLAG_FAST_ZERO)
assert h.pread(65536, (1 << 20) + 65536) == bytes(65536)
assert extents(262144, 1 << 20) == [(65536, 0), (65536, 3), (131072, 0)], extents(262144, 1 << 20)
# NO_HOLE: ZERO_RANGE, allocated zeroes, or ENOTSUP with the data kept
if os.environ["ZERO_RANGE"] == "yes":
    h.zero(4096, 8 << 20, nbd.CMD_FLAG_FAST_ZERO | nbd.CMD_FLAG_NO_HOLE)
    assert h.pread(4096, 8 << 20) == bytes(4096)
else:
    old = h.pread(4096, 8 << 20)
    refused("fast zero NO_HOLE", lambda: h.zero(4096, 8 << 20,
            nbd.CMD_FLAG_FAST_ZERO | nbd.CMD_FLAG_NO_HOLE), errno.ENOTSUP, "FAST_ZERO")
    assert h.pread(4096, 8 << 20) == old
assert h.pread(4096, 0) == bytes(4096), "read after the errors"
h.shutdown()
' >"$tmp/bs.out" 2>&1 || { cat "$tmp/bs.out"; fail "nbdsh: block status, cache, fast zero"; }
cat "$tmp/bs.out"
echo "ok: nbdsh: REQ_ONE, extents up to the export's end, refusals with reasons, CACHE reads ahead, FAST_ZERO"

# a client that selects no context gets EINVAL for block status, with why
URI=$uri nbdsh_ -c '
import errno, os
msgs = []
h.set_debug(True)
h.set_debug_callback(lambda ctx, msg: msgs.append(msg))
h.set_strict_mode(0)
h.connect_uri(os.environ["URI"])
assert not h.can_meta_context("base:allocation")
try:
    h.block_status(4096, 0, lambda *a: 0)
except nbd.Error as e:
    assert e.errnum == errno.EINVAL, e
else:
    raise SystemExit("block status without a context was accepted")
assert [m for m in msgs if "no metadata context was selected" in m], msgs
h.shutdown()
' || fail "nbdsh: block status without a context"
echo "ok: block status without a selected context: EINVAL with the reason"

grep -q 'NBD request NBD_CMD_BLOCK_STATUS .* refused: offset + length is beyond' \
	"$tmp/tandemd.log" || fail "the refused block status is not in the daemon's log"
! grep -q 'FAST_ZERO\|WRITE_ZEROES.*failed' "$tmp/tandemd.log" ||
	fail "a fast zero was logged as a failure"
ctl down r0 || fail "down"
echo "ok: down"
