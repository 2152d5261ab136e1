#!/bin/sh
# A real filesystem on a tandem volume without a kernel nbd module:
# nbdfuse + loop (direct I/O) + mkfs.ext4, mount, write, umount, fsck,
# mount again and check; and fio's nbd engine with verify.
. "$(dirname "$0")/functions.sh"
requires_root
requires nbdfuse
requires mkfs.ext4
requires fio
[ -e /dev/fuse ] || skip "no /dev/fuse"

new_image "$tmp/d.img" 512M
write_conf "$tmp/t.conf" "$tmp/d.img" internal
adm create-md --force r0 >/dev/null
start_tandemd
ctl up r0 && ctl primary --force r0 || fail "up/primary"

# fio: random 4k writes over several connections, then verify
(cd "$tmp" && fio --name=v --ioengine=nbd --uri="$(nbd_uri)" --rw=randwrite --bs=4k --size=64M \
	--numjobs=2 --offset_increment=64M --iodepth=4 --verify=crc32c --do_verify=1 \
	--verify_fatal=1 --output="$tmp/fio.out") >/dev/null 2>"$tmp/fio.err" ||
	{ cat "$tmp/fio.out" "$tmp/fio.err"; fail "fio verify"; }
grep -q 'err= 0' "$tmp/fio.out" || { cat "$tmp/fio.out"; fail "fio reported errors"; }
echo "ok: fio nbd engine, 2 connections, random 4k writes verified"

mkdir -p "$tmp/fuse" "$tmp/mnt"
nbdfuse "$tmp/fuse" --unix "$rundir/r0.nbd" &
fusepid=$!
# umount_all: the filesystem, the loop device, the FUSE mount; nbdfuse
# exits once unmounted. A loop device with direct I/O lets go of its file
# asynchronously, so the FUSE mount can stay busy for a while on a loaded
# machine: retry for 30 s, then unmount lazily, and never wait for nbdfuse
# without a bound (a test that hangs blocks all of CI).
umount_all() {
	umount "$tmp/mnt" 2>/dev/null || true
	[ -n "${loopdev:-}" ] && losetup -d "$loopdev" 2>/dev/null || true
	i=0
	while mountpoint -q "$tmp/fuse" && [ $i -lt 150 ]; do
		fusermount3 -u "$tmp/fuse" 2>/dev/null || sleep 0.2
		i=$((i + 1))
	done
	if mountpoint -q "$tmp/fuse"; then
		echo "note: $tmp/fuse still busy after 30 s: unmounting it lazily"
		fusermount3 -u -z "$tmp/fuse" 2>/dev/null || true
	fi
	i=0
	while [ -n "${fusepid:-}" ] && kill -0 "$fusepid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ -n "${fusepid:-}" ] && kill -0 "$fusepid" 2>/dev/null; then
		echo "note: nbdfuse did not exit 10 s after the unmount: killing it"
		kill "$fusepid" 2>/dev/null || true
	fi
}
cleanup_hooks="umount_all $cleanup_hooks"
i=0
until [ -e "$tmp/fuse/nbd" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "nbdfuse did not start"
	sleep 0.1
done
loopdev=$(losetup -f --show --direct-io=on "$tmp/fuse/nbd") || skip "no loop device"
mkfs.ext4 -q -F -E nodiscard "$loopdev" || fail "mkfs.ext4"
mount "$loopdev" "$tmp/mnt" || fail "mount"
head -c 20M /dev/urandom >"$tmp/mnt/file"
cp "$tmp/mnt/file" "$tmp/copy"
mkdir "$tmp/mnt/dir" && echo hello >"$tmp/mnt/dir/x"
sync
umount "$tmp/mnt"
fsck.ext4 -f -n "$loopdev" >"$tmp/fsck" 2>&1 || { cat "$tmp/fsck"; fail "fsck found errors"; }
mount "$loopdev" "$tmp/mnt" || fail "mount again"
cmp "$tmp/mnt/file" "$tmp/copy" || fail "file differs after remount"
[ "$(cat "$tmp/mnt/dir/x")" = hello ] || fail "small file lost"
umount "$tmp/mnt"
losetup -d "$loopdev"; loopdev=
umount_all
wait $fusepid 2>/dev/null || true
echo "ok: ext4 on nbdfuse + loop: mkfs, write, fsck clean, remount, data intact"
ctl secondary r0 && ctl down r0 || fail "secondary/down"
