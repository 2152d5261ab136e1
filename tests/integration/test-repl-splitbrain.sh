#!/bin/sh
# Automatic split-brain recovery on two nodes, one case per after-sb
# policy: a real split brain (disconnect, both nodes write different
# blocks, promotions as the case needs, reconnect), then: which node's data
# survive, that the loser's diverging blocks were saved (sb-list, sb-show,
# the saved image holds exactly what the loser wrote), that both disks are
# identical afterwards, and the initial-split-brain handler's environment. Also
# the policies that refuse (disconnect, rr-conflict) and manual recovery
# with discard-my-data.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdsh
requires python3

MIB=1048576
A_OFF=$((1 * MIB)) # alice writes here during the split
B_OFF=$((8 * MIB)) # bob writes here

# fresh NET-OPTIONS: new blank disks, both UpToDate, alice Primary
fresh() {
	stop_pair
	rm -rf "$tmp/state-a" "$tmp/state-b" "$tmp"/sb-env-* "$tmp/pri-lost-ran"
	new_image "$tmp/a.img" 32M
	new_image "$tmp/b.img" 32M
	write_repl_conf "$tmp/t.conf" "connect-int 1; timeout 5; $1"
	sed -i "s|^resource r0 {|resource r0 {\n\thandlers { initial-split-brain \"env > $tmp/sb-env-\$TANDEM_ROLE-\$\$\"; pri-lost-after-sb \"touch $tmp/pri-lost-ran\"; }|" "$tmp/t.conf"
	: >"$tmp/tandemd-a.log"
	: >"$tmp/tandemd-b.log"
	blank_pair
	wait_for b disk UpToDate
}

# put NODE OFFSET FILE: write FILE at OFFSET through NODE's NBD export
put() {
	nbdsh_ -u "$(nbd_uri_of "$1")" -c "h.pwrite(open('$3','rb').read(), $2); h.flush()"
}

# split A-KIB B-KIB: cut the link, both nodes Primary, alice writes A-KIB
# KiB at A_OFF, bob B-KIB at B_OFF (0: nothing). Both stay Primary.
split() {
	head -c "$(($1 * 1024))" /dev/urandom >"$tmp/wa"
	head -c "$(($2 * 1024))" /dev/urandom >"$tmp/wb"
	on b disconnect r0
	wait_for a connection WFConnection
	on b primary r0
	[ "$1" -eq 0 ] || put a $A_OFF "$tmp/wa"
	[ "$2" -eq 0 ] || put b $B_OFF "$tmp/wb"
}

# region NODE OFFSET FILE: NODE's backing file holds FILE at OFFSET
region() {
	cmp -s -i "0:$2" -n "$(stat -c %s "$3")" "$3" "$tmp/$1.img"
}

# reconnect: bob connects again; wait for the outcome on both
reconnect() {
	on b connect r0
}

# resolved WINNER LOSER POLICY-TEXT: the resync ran from WINNER; the
# disks are identical; WINNER's blocks survived, LOSER's are in its save set
resolved() {
	w=$1 l=$2
	on "$w" wait-sync --timeout 30 r0 >/dev/null || fail "$3: no resync"
	wait_for "$l" disk UpToDate
	same_data "$3"
	if [ "$w" = a ]; then
		[ ! -s "$tmp/wa" ] || region b $A_OFF "$tmp/wa" || fail "$3: alice's write is not on bob"
		[ ! -s "$tmp/wb" ] || ! region b $B_OFF "$tmp/wb" || fail "$3: bob's write survived"
		lw="$tmp/wb" loff=$B_OFF
	else
		[ ! -s "$tmp/wb" ] || region a $B_OFF "$tmp/wb" || fail "$3: bob's write is not on alice"
		[ ! -s "$tmp/wa" ] || ! region a $A_OFF "$tmp/wa" || fail "$3: alice's write survived"
		lw="$tmp/wa" loff=$A_OFF
	fi
	grep -q "split brain: saved .* KiB of this node's diverging blocks" "$tmp/tandemd-$l.log" ||
		{ tail -n 30 "$tmp/tandemd-$l.log"; fail "$3: $(node_name "$l") saved nothing"; }
	on "$l" sb-list --json r0 >"$tmp/sets.json"
	set=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert len(s) == 1 and s[0]["state"] == "complete", s
print(s[0]["name"])' "$tmp/sets.json") || { cat "$tmp/sets.json"; fail "$3: not one complete set"; }
	on "$l" sb-show --json r0 "$set" | python3 -c '
import json, sys
s = json.load(sys.stdin)
node, peer, policy, off, n = sys.argv[1:6]
assert s["node"] == node and s["peer"] == peer, s
assert policy in s["policy"], (policy, s["policy"])
off, n = int(off), int(n)
assert n == 0 or any(r["offset"] <= off and off + n <= r["offset"] + r["length"]
                     for r in s["ranges"]), s["ranges"]
' "$(node_name "$l")" "$(node_name "$w")" "$4" "$loff" "$(stat -c %s "$lw")" ||
		fail "$3: the manifest"
	if [ -s "$lw" ]; then
		cmp -s -i "$loff:0" -n "$(stat -c %s "$lw")" "$tmp/state-$l/r0/$set/image" "$lw" ||
			fail "$3: the saved image does not hold $(node_name "$l")'s write"
	fi
	on "$l" status r0 | grep -q "split-brain save: $tmp/state-$l/r0/$set" ||
		{ on "$l" status r0; fail "$3: status does not show the save"; }
	grep -q "TANDEM_SB_SAVE=$tmp/state-$l/r0/$set" "$tmp"/sb-env-* 2>/dev/null ||
		fail "$3: TANDEM_SB_SAVE not in the initial-split-brain handler's environment"
	echo "ok: $3: $(node_name "$w")'s data won, $(node_name "$l")'s blocks saved in $set, disks identical"
}

# refused TEXT [NODE]: NODE (default bob) refused the resync and is
# StandAlone; nothing resynced, nothing saved
refused() {
	wait_for "${2:-b}" connection StandAlone 20
	region a $A_OFF "$tmp/wa" || fail "$1: alice's data changed"
	region b $B_OFF "$tmp/wb" || fail "$1: bob's data changed"
	[ ! -d "$tmp/state-a/r0" ] && [ ! -d "$tmp/state-b/r0" ] || fail "$1: a save set was made"
	echo "ok: $1: StandAlone, no resync, nothing saved"
}

# -- after-sb-0pri (both Secondary at the reconnect)
fresh 'after-sb-0pri discard-least-changes;'
split 2048 512
on a secondary r0
on b secondary r0
reconnect
resolved a b "0pri discard-least-changes" "after-sb-0pri=discard-least-changes"

fresh 'after-sb-0pri discard-least-changes;'
split 256 1024
on a secondary r0
on b secondary r0
reconnect
resolved b a "0pri discard-least-changes (bob more)" "after-sb-0pri=discard-least-changes"

fresh 'after-sb-0pri discard-zero-changes;'
split 1024 0
on a secondary r0
on b secondary r0
reconnect
resolved a b "0pri discard-zero-changes" "after-sb-0pri=discard-zero-changes"

fresh 'after-sb-0pri discard-younger-primary;'
split 256 1024
on a secondary r0
on b secondary r0
reconnect
resolved a b "0pri discard-younger-primary" "after-sb-0pri=discard-younger-primary"
grep -q "was Primary at the split" "$tmp"/tandemd-*.log ||
	fail "discard-younger-primary: not decided by who was Primary at the split"

fresh 'after-sb-0pri discard-older-primary;'
split 1024 256
on a secondary r0
on b secondary r0
reconnect
resolved b a "0pri discard-older-primary" "after-sb-0pri=discard-older-primary"
grep -q "was Primary at the split" "$tmp"/tandemd-*.log ||
	fail "discard-older-primary: not decided by who was Primary at the split"

fresh 'after-sb-0pri discard-node-bob;'
split 256 1024
on a secondary r0
on b secondary r0
reconnect
resolved a b "0pri discard-node-bob" "after-sb-0pri=discard-node-bob"

fresh 'after-sb-0pri disconnect;'
split 256 256
on a secondary r0
on b secondary r0
reconnect
refused "0pri disconnect"

# -- after-sb-1pri (alice Primary, bob Secondary at the reconnect)
fresh 'after-sb-1pri discard-secondary;'
split 256 1024
on b secondary r0
reconnect
resolved a b "1pri discard-secondary" "after-sb-1pri=discard-secondary"

fresh 'after-sb-0pri discard-least-changes; after-sb-1pri consensus;'
split 1024 256
on b secondary r0
reconnect
resolved a b "1pri consensus (0pri agrees)" "after-sb-1pri=consensus"

fresh 'after-sb-0pri discard-least-changes; after-sb-1pri consensus;'
split 256 1024
on b secondary r0
reconnect
refused "1pri consensus (0pri would discard the Primary)"

fresh 'after-sb-1pri disconnect;'
split 256 256
on b secondary r0
reconnect
refused "1pri disconnect"

# -- after-sb-2pri (both Primary at the reconnect)
fresh 'after-sb-2pri disconnect;'
split 256 256
reconnect
refused "2pri disconnect"

fresh 'after-sb-0pri discard-node-bob; after-sb-2pri violently-as0p; rr-conflict violently;'
split 256 1024
reconnect
resolved a b "2pri violently-as0p, rr-conflict violently" "after-sb-2pri=violently-as0p"

# -- rr-conflict: the Primary would become the SyncTarget
fresh 'after-sb-0pri discard-node-alice; after-sb-1pri violently-as0p; rr-conflict disconnect;'
split 1024 256
on b secondary r0
reconnect
refused "1pri violently-as0p against the Primary, rr-conflict disconnect" a
grep -q 'I shall become SyncTarget, but I am primary!' "$tmp/tandemd-a.log" || fail "rr-conflict not logged"

# -- call-pri-lost-after-sb: the Primary must lose; nobody uses it, so it
# gives up the role and resyncs as SyncTarget
fresh 'after-sb-0pri discard-node-alice; after-sb-1pri call-pri-lost-after-sb;'
split 1024 256
on b secondary r0
reconnect
resolved b a "1pri call-pri-lost-after-sb (alice unused)" "after-sb-1pri=call-pri-lost-after-sb"
wait_for a role Secondary 10
grep -q 'call-pri-lost-after-sb: gave up the Primary role' "$tmp/tandemd-a.log" || fail "the demotion is not logged"
[ ! -e "$tmp/pri-lost-ran" ] || fail "pri-lost-after-sb ran although alice could demote"
echo "ok: call-pri-lost-after-sb: the losing Primary gave up the role"

# ... and while a client holds alice's export: pri-lost-after-sb, no resync
fresh 'after-sb-0pri discard-node-alice; after-sb-1pri call-pri-lost-after-sb;'
split 1024 256
on b secondary r0
# a holder that stays until it is killed (a simple command, so that $! is
# nbdsh itself), counted by alice before the reconnect
PATH=/usr/bin:$PATH nbdsh -u "$(nbd_uri_of a)" -c 'import time; time.sleep(300)' &
holder=$!
wait_for a clients 1 30
reconnect
refused "1pri call-pri-lost-after-sb (alice in use)" a
i=0
until [ -e "$tmp/pri-lost-ran" ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "pri-lost-after-sb did not run in 30 s"; sleep 0.1
done
[ "$(field a role)" = Primary ] || fail "alice gave up the role while in use"
kill $holder 2>/dev/null || true
wait $holder 2>/dev/null || true
echo "ok: call-pri-lost-after-sb: a Primary in use runs pri-lost-after-sb and refuses the resync"

# -- manual recovery: discard-my-data on the loser
fresh ''
split 1024 1024
on b secondary r0
reconnect
wait_for b connection StandAlone 20
on b connect --discard-my-data r0
on a disconnect r0
on a connect r0
resolved a b "discard-my-data" "discard-my-data"

# sb-discard removes the set; sb-show of a removed set fails
set=$(on b sb-list --json r0 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["name"])')
on b sb-discard r0 "$set" >/dev/null || fail "sb-discard"
[ ! -d "$tmp/state-b/r0/$set" ] || fail "sb-discard left the set"
on b sb-list r0 | grep -q 'no split-brain save sets' || fail "sb-list after discard"
set +e
on b sb-show r0 "$set" >"$tmp/out" 2>&1
rc=$?
on b sb-show r0 ../../etc >"$tmp/out2" 2>&1
rc2=$?
set -e
[ $rc -ne 0 ] || fail "sb-show of a removed set succeeded"
[ $rc2 -eq 1 ] && grep -q 'not a save set name' "$tmp/out2" || { cat "$tmp/out2"; fail "sb-show ../../etc: exit $rc2"; }
echo "ok: sb-discard removed the set; sb-show refuses removed sets and odd names"

# no room for the save: no resync, both nodes' data stay
fresh 'after-sb-0pri discard-least-changes;'
split 2048 512
on a secondary r0
on b secondary r0
rm -rf "$tmp/state-b"
: >"$tmp/state-b" # a file where the state directory should be
reconnect
refused "the save is impossible (state directory unusable)"
grep -q "no resync" "$tmp/tandemd-b.log" || fail "the refusal does not say why"
rm -f "$tmp/state-b"
