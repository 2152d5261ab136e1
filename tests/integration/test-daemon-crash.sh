#!/bin/sh
# kill -9 of a Primary's tandemd during writes: at the next attach the
# activity log is replayed, its hot extents are marked out of sync
# (visible in dump-md and in status oos), the node knows it was a crashed
# primary, and every write the export acknowledged is there: at each
# offset the last acknowledged write, or a later one that was in flight
# and never acknowledged; older data never.
. "$(dirname "$0")/functions.sh"
[ -x /usr/bin/nbdsh ] || skip "nbdsh is not installed (python3-libnbd)"

new_image "$tmp/d.img" 512M
write_conf "$tmp/t.conf" "$tmp/d.img" internal
adm create-md --force r0 >/dev/null
start_tandemd
ctl up r0 && ctl primary --force r0 || fail "up/primary"

# A writer of checksummed 4 KiB blocks, spread over 128 MiB (32 activity
# log extents), each logged "issued SEQ OFF SHA" before and "SEQ OFF SHA"
# after the export acknowledged it (FUA). It runs until tandemd dies.
ledger=$tmp/ledger
nbdsh_ -u "$(nbd_uri)" -c "
import hashlib, os, sys
nblk = (128 << 20) // 4096
seq = 0
while True:
    seq += 1
    off = (seq * 7919 % nblk) * 4096
    buf = b'crash seq=%d off=%d\n' % (seq, off)
    buf += os.urandom(4096 - len(buf))
    sha = hashlib.sha256(buf).hexdigest()
    # one write(2) per line: print() writes the newline separately, and a
    # writer killed between the two leaves a line the next one runs into
    os.write(1, b'issued %d %d %s\n' % (seq, off, sha.encode()))
    h.pwrite(buf, off, nbd.CMD_FLAG_FUA)
    os.write(1, b'%d %d %s\n' % (seq, off, sha.encode()))
" >"$ledger" 2>/dev/null &
writer=$!
# kill -9 once 300 writes are acknowledged, not after a guessed time
i=0
until [ "$(grep -c '^[0-9]' "$ledger" 2>/dev/null || echo 0)" -ge 300 ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "the writer did not get 300 writes acknowledged in 60 s"
	kill -0 "$writer" 2>/dev/null || fail "the writer died: $(tail -n 3 "$ledger")"
	sleep 0.1
done
kill -9 "$tandemd_pid"
wait "$tandemd_pid" 2>/dev/null || true
tandemd_pid=
wait "$writer" 2>/dev/null || true
acked=$(grep -c '^[0-9]' "$ledger")
echo "ok: killed tandemd (kill -9) after $acked acknowledged writes"

adm check-md r0 >"$tmp/check" || true
grep -q 'in use' "$tmp/check" || { cat "$tmp/check"; fail "metadata not marked in use after kill -9"; }
grep -q 'update transactions' "$tmp/check" || fail "check-md output"
echo "ok: after kill -9 the metadata is marked in use"

start_tandemd
ctl up r0 || { cat "$tmp/tandemd.log"; fail "up after the crash"; }
grep -q 'activity log replayed: [1-9][0-9]* extents' "$tmp/tandemd.log" ||
	{ cat "$tmp/tandemd.log"; fail "no AL replay logged"; }
extents=$(sed -n 's/.*activity log replayed: \([0-9]*\) extents.*/\1/p' "$tmp/tandemd.log")
oos=$(ctl status --json r0 | sed -n 's/.*"oos": *\([0-9]*\).*/\1/p')
[ "$oos" -ge $((extents * 4096)) ] || fail "status oos $oos KiB < $extents extents of 4 MiB"
echo "ok: replayed $extents hot extents; status shows $oos KiB out of sync"

# every acknowledged write is there (read through the export)
ctl primary --force r0 || fail "primary after the crash"
nbdsh_ -u "$(nbd_uri)" -c "
import hashlib, sys
last, issued, acked = {}, {}, set()
for line in open('$ledger'):
    f = line.split()
    if len(f) == 3 and f[0].isdigit():
        seq, off = int(f[0]), int(f[1])
        acked.add(seq)
        if off not in last or last[off][0] < seq:
            last[off] = (seq, f[2])
    elif len(f) == 4 and f[0] == 'issued':
        issued.setdefault(int(f[2]), []).append((int(f[1]), f[3]))
bad = 0
for off, (seq, want) in sorted(last.items()):
    later = [d for s, d in issued.get(off, []) if s > seq and s not in acked]
    got = hashlib.sha256(h.pread(4096, off)).hexdigest()
    if got != want and got not in later:
        bad += 1
        print('block at %d: not the write of seq %d nor a later one' % (off, seq),
              file=sys.stderr)
print('%d blocks checked, %d bad' % (len(last), bad))
sys.exit(1 if bad else 0)
" || fail "an acknowledged write is missing after the crash"
echo "ok: every acknowledged write is there after kill -9 and the replay"
ctl secondary r0
ctl down r0
gi=$(adm get-gi r0)
[ "${gi##*:}" = 1 ] || fail "not marked as a crashed primary: $gi"
bits=$(adm dump-md r0 | sed -n 's/^# bits-set \([0-9]*\);/\1/p')
[ "$bits" -ge $((extents * 1024)) ] || fail "dump-md: $bits bits set"
echo "ok: dump-md shows $bits bits out of sync; get-gi: crashed primary"
