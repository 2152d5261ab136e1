#!/bin/sh
# Online verify on two nodes: corruption written straight into bob's
# backing file is found (exactly those blocks, their ranges logged, the
# count in status, the out-of-sync handler run) and nothing else, also
# while an application writes; --start/--stop limit the walk; resync-oos
# repairs the blocks without a disconnect, and a disconnect/connect does
# too. Without verify-alg, verify is refused with a hint.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdcopy
requires python3

new_image "$tmp/a.img" 64M
new_image "$tmp/b.img" 64M
cat >"$tmp/oos-handler" <<EOF
#!/bin/sh
echo "\$DRBD_RESOURCE \$DRBD_VOLUME" >>"$tmp/oos-ran"
EOF
chmod +x "$tmp/oos-handler"
write_repl_conf "$tmp/t.conf" 'connect-int 1; timeout 5; verify-alg sha256;' \
	'resync-rate 40M; c-plan-ahead 0;'
sed -i "s|^}|	handlers { out-of-sync \"$tmp/oos-handler\"; }\n}|" "$tmp/t.conf"
blank_pair
head -c 16M /dev/urandom >"$tmp/src"
nbdcopy "$tmp/src" "$(nbd_uri_of a)"
# protocol C: what nbdcopy saw acknowledged is on bob's disk
wait_idle a
wait_idle b
same_data "before the corruption"

# verify_and_wait NODE [ARGS]: run verify, wait until it is over
verify_and_wait() {
	n=$1
	shift
	log_mark "$n" # an earlier verify's result does not count
	on "$n" verify "$@" r0 || fail "verify refused"
	wait_log "$n" 'Online verify found' 60
	wait_for "$n" connection Connected
}

# corrupt OFFSET-KIB COUNT-KIB: random bytes straight into bob's backing file
corrupt() {
	dd if=/dev/urandom of="$tmp/b.img" bs=1K seek="$1" count="$2" conv=notrunc \
		oflag=direct status=none
}

# a clean pass while an application writes: no false positives
nbdcopy "$tmp/src" "$(nbd_uri_of a)" &
writer=$!
verify_and_wait a
wait $writer || fail "nbdcopy during verify"
grep -q 'Online verify found no block out of sync' "$tmp/tandemd-a.log" ||
	{ grep 'Out of sync\|verify' "$tmp/tandemd-a.log"; fail "verify of identical disks found something"; }
[ ! -e "$tmp/oos-ran" ] || fail "out-of-sync handler ran without a difference"
[ "$(field a oos)" = 0 ] || fail "oos $(field a oos) after a clean verify"
echo "ok: verify of identical disks under writes finds nothing"

# three corrupt 4k blocks: one at 1 MiB, two adjacent at 5 MiB + 8 KiB
corrupt 1024 4
corrupt 5128 8
: >"$tmp/tandemd-a.log"
on a status r0 >/dev/null
verify_and_wait a
grep -q 'Online verify found 3 4k block out of sync' "$tmp/tandemd-a.log" ||
	{ grep 'Out of sync\|verify' "$tmp/tandemd-a.log"; fail "not 3 blocks"; }
grep -q 'Out of sync: start=2048, size=8 (sectors)' "$tmp/tandemd-a.log" ||
	fail "range at 1 MiB not logged"
grep -q 'Out of sync: start=10256, size=16 (sectors)' "$tmp/tandemd-a.log" ||
	fail "range at 5 MiB + 8 KiB not logged"
[ "$(field a oos)" = 12 ] || fail "alice oos is $(field a oos) KiB, expected 12"
[ "$(field b oos)" = 12 ] || fail "bob oos is $(field b oos) KiB, expected 12"
i=0
until [ -s "$tmp/oos-ran" ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "out-of-sync handler did not run in 30 s"; sleep 0.1
done
grep -q '^r0 0$' "$tmp/oos-ran" || fail "handler environment: $(cat "$tmp/oos-ran")"
echo "ok: verify finds exactly the 3 corrupt blocks, logs 2 ranges, oos 12 KiB, runs the handler"

# a range that misses the corruption finds nothing
: >"$tmp/tandemd-a.log"
verify_and_wait a --start 0 --stop 2048
grep -q 'Online verify found no block out of sync' "$tmp/tandemd-a.log" || fail "range verify"
grep -q 'Online Verify start sector: 0' "$tmp/tandemd-a.log" || fail "start sector not logged"
echo "ok: verify --start/--stop walks only the range"

# resync-oos: repair now, without a disconnect
on a resync-oos r0 || fail "resync-oos"
on a wait-sync --timeout 30 r0 >/dev/null || fail "wait-sync after resync-oos"
wait_for a oos 0
wait_for b oos 0
same_data "after resync-oos"
[ "$(field a connection)" = Connected ] || fail "connection not back"
echo "ok: resync-oos copied the marked blocks: disks identical, oos 0"

# again, found by bob (Secondary as VerifyS); repaired by disconnect/connect
corrupt 30000 4
: >"$tmp/tandemd-b.log"
verify_and_wait b
grep -q 'Online verify found 1 4k block out of sync' "$tmp/tandemd-b.log" ||
	{ grep 'Out of sync\|verify' "$tmp/tandemd-b.log"; fail "bob: not 1 block"; }
[ "$(field a oos)" = 4 ] || fail "alice oos is $(field a oos) KiB, expected 4"
on a disconnect r0
on a connect r0
on a wait-connect --timeout 20 r0 >/dev/null || fail "reconnect"
on a wait-sync --timeout 30 r0 >/dev/null || fail "wait-sync after reconnect"
wait_for b oos 0
same_data "after disconnect/connect"
echo "ok: verify run on the Secondary; disconnect/connect resynced the block"

# resync-oos with nothing marked is a no-op; verify needs a connection
on a resync-oos r0 || fail "resync-oos with nothing marked"
on b disconnect r0
set +e
on a verify r0 >"$tmp/out" 2>&1
rc=$?
set -e
[ $rc -eq 11 ] && grep -q 'Need a connection' "$tmp/out" || { cat "$tmp/out"; fail "verify while disconnected: exit $rc"; }
echo "ok: verify without a connection: exit 11, DRBD's message"

# without verify-alg: refused with a hint
on a down r0
on b down r0
stop_node a
stop_node b
write_repl_conf "$tmp/t.conf" 'connect-int 1; timeout 5;'
start_node a
start_node b
on a up r0
on b up r0
on a wait-connect --timeout 20 r0 >/dev/null || fail "wait-connect without verify-alg"
wait_for a peer_disk UpToDate
set +e
on a verify r0 >"$tmp/out" 2>&1
rc=$?
set -e
[ $rc -eq 10 ] && grep -q "needs 'verify-alg'" "$tmp/out" || { cat "$tmp/out"; fail "verify without verify-alg: exit $rc"; }
echo "ok: verify without verify-alg: exit 10 with a hint"
