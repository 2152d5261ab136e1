#!/bin/sh
# Two nodes in network namespaces: a cut replication link is noticed
# (ping-timeout) and, once healed, only the blocks written meanwhile are
# resynced; a split brain is detected, leaves both nodes StandAlone and
# runs the split-brain handler, and is resolved by hand with
# connect --discard-my-data; protocols A and B replicate too.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdcopy

new_image "$tmp/a.img" 32M
new_image "$tmp/b.img" 32M
# write_conf with handlers: rewrite the file with write_repl_conf, then add
conf_with() {
	write_repl_conf "$tmp/t.conf" "$1"
	sed -i "s|^resource r0 {|resource r0 {\n\thandlers { split-brain \"echo \$DRBD_RESOURCE >> $tmp/sb-\$TANDEM_ROLE\"; }|" "$tmp/t.conf"
}
conf_with 'protocol C; ping-int 1; ping-timeout 5; connect-int 1; timeout 5;'
on a create-md --force r0 >/dev/null
on b create-md --force r0 >/dev/null
start_node a
start_node b
on a up r0
on b up r0
wait_for a connection Connected
on a primary --force r0
wait_for b disk UpToDate
wait_for a connection Connected
echo "ok: connected and synced"

# cut the link: both notice within ping-int + ping-timeout
ip -n "$ns_a" link set "va$$" down
wait_for a connection WFConnection 10
wait_for b connection WFConnection 10
grep -q 'PingAck did not arrive in time' "$tmp/tandemd-a.log" "$tmp/tandemd-b.log" ||
	fail "no ping timeout logged"
head -c 2M /dev/urandom >"$tmp/src"
nbdcopy "$tmp/src" "$(nbd_uri_of a)"
[ "$(field a oos)" -ge 2048 ] || fail "writes while cut not marked: $(field a oos) KiB"
ip -n "$ns_a" link set "va$$" up
wait_for a connection Connected 20
wait_for b disk UpToDate
same_data "after the link came back"
echo "ok: cut link noticed by the ping timeout; after the heal, a resync of what changed"

# split brain: both Primary while disconnected, both write
on b disconnect r0
wait_for a connection WFConnection
on b primary r0
head -c 1M /dev/urandom >"$tmp/sa"
head -c 1M /dev/urandom >"$tmp/sb"
nbdcopy "$tmp/sa" "$(nbd_uri_of a)"
nbdcopy "$tmp/sb" "$(nbd_uri_of b)"
on b secondary r0
on b connect r0
wait_for b connection StandAlone 20
grep -q 'Split-Brain detected' "$tmp/tandemd-b.log" || fail "no split brain logged on bob"
i=0
until [ -s "$tmp/sb-Secondary" ]; do
	i=$((i + 1)); [ $i -lt 50 ] || fail "split-brain handler did not run on bob"
	sleep 0.1
done
grep -qx r0 "$tmp/sb-Secondary" || fail "split-brain handler environment"
echo "ok: split brain detected: StandAlone, split-brain handler run"

# resolve: bob discards its data
on b connect --discard-my-data r0
on a disconnect r0
on a connect r0
wait_for a connection Connected 20
wait_for b disk UpToDate
same_data "after discard-my-data"
echo "ok: connect --discard-my-data resolved it; bob took alice's data"

# protocols A and B
for proto in A B; do
	on a secondary r0
	on a down r0
	on b down r0
	stop_node a
	stop_node b
	conf_with "protocol $proto; connect-int 1; timeout 5;"
	start_node a
	start_node b
	on a up r0
	on b up r0
	wait_for a connection Connected
	on a primary r0
	head -c 4M /dev/urandom >"$tmp/src"
	nbdcopy "$tmp/src" "$(nbd_uri_of a)"
	nbdsh_ -u "$(nbd_uri_of a)" -c 'h.flush()'
	same_data "protocol $proto"
	echo "ok: protocol $proto: 4 MiB replicated"
	# a clean disconnect right after writes (no flush) waits for the
	# last epoch's ack: nothing the peer already has is marked out of sync
	head -c 1M /dev/urandom >"$tmp/src1"
	nbdcopy "$tmp/src1" "$(nbd_uri_of a)"
	on a disconnect r0
	[ "$(field a oos)" -eq 0 ] || fail "protocol $proto: $(field a oos) KiB out of sync after a clean disconnect"
	on a connect r0
	wait_for a connection Connected 20
	echo "ok: protocol $proto: clean disconnect leaves nothing out of sync"
done
