#!/bin/sh
# The fence handlers against a file-backed CIB (CIB_file; no cluster):
# tandem-fence-peer places tandem-fence-mysql exactly as
# cib-examples/fencing.xml shows it, crm_simulate then keeps the Promoted
# role off bob even when alice fails, a second run and concurrent runs
# leave one constraint and an unchanged file, the exit code follows the
# peer's node_state (3, 4, 5, 7, 1), bad input fails with a message;
# tandem-unfence-peer refuses (2) unless both disks are UpToDate and then
# removes it by id; tandemadm fence-constraints lists and clears stale
# ones. Part 2 (root, network namespaces) runs real tandemd nodes: the
# handlers ask the control socket, which wins over the environment, and
# after-resync-target unfences by itself.
. "$(dirname "$0")/functions.sh"
requires cibadmin
requires crm_simulate
requires crm_attribute
requires xmllint

fencing=$(cd "$(dirname "$TANDEMADM")/../fencing" 2>/dev/null && pwd) || fencing=.
: "${TANDEM_FENCE_PEER:=$fencing/tandem-fence-peer}"
: "${TANDEM_UNFENCE_PEER:=$fencing/tandem-unfence-peer}"
export TANDEM_FENCE_PEER # tandemadm fence-constraints runs it
[ -x "$TANDEM_FENCE_PEER" ] || fail "no $TANDEM_FENCE_PEER: build fencing/ first"
[ -x "$TANDEM_UNFENCE_PEER" ] || fail "no $TANDEM_UNFENCE_PEER: build fencing/ first"

ex=$(cd "$(dirname "$0")/../../cib-examples" && pwd)
id=tandem-fence-mysql
run=$tmp/run # the handlers' lock directory; no tandemd listens here
mkdir -p "$run"

# The handler environment tandemd sets on alice when it loses bob.
# fence FILE [NAME=VALUE...] / unfence FILE [NAME=VALUE...]: run with
# CIB_file=FILE and that environment, NAME=VALUE replacing parts of it;
# output in $tmp/out, exit code in $rc
handler() {
	prog=$1 file=$2
	shift 2
	rc=0
	env CIB_file="$file" DRBD_RESOURCE=mysql DRBD_PEERS=bob TANDEM_FENCE_NODE=alice \
		TANDEM_RUN_DIR="$run" TANDEM_DISK=UpToDate TANDEM_PEER_DISK=DUnknown \
		TANDEM_FENCE_TIMEOUT=2 TANDEM_FENCE_DC_TIMEOUT=2 "$@" "$prog" >"$tmp/out" 2>&1 || rc=$?
}
fence() { handler "$TANDEM_FENCE_PEER" "$@"; }
unfence() { handler "$TANDEM_UNFENCE_PEER" "$@"; }
# expect_rc N WHAT
expect_rc() {
	[ "$rc" = "$1" ] || { cat "$tmp/out"; fail "$2: exit $rc, expected $1"; }
}
said() { grep -q -- "$1" "$tmp/out" || { cat "$tmp/out"; fail "no '$1' in the output"; }; }

# count FILE: the tandem-fence-* constraints in FILE
count() {
	xmllint --xpath "count(//constraints/rsc_location[starts-with(@id,'tandem-fence-')])" "$1"
}
# element FILE: constraint $id as one line
element() {
	xmllint --xpath "//constraints/rsc_location[@id='$id']" "$1" 2>/dev/null |
		tr -d '\n\t' | sed 's/> *</></g'
}
has() { [ -n "$(CIB_file=$1 cibadmin -Q --xpath "//rsc_location[@id='$id']" 2>/dev/null)" ]; }

# sim FILE [crm_simulate ARGS]: one transition, output in $tmp/sim.out
sim() {
	f=$1
	shift
	crm_simulate -x "$f" -S "$@" >"$tmp/sim.out" 2>&1 || { cat "$tmp/sim.out"; fail "crm_simulate $f"; }
}
# promotes: where the transition promotes an instance ("" = nowhere)
promotes() {
	sed -n '/^Transition Summary:/,/^Executing/p' "$tmp/sim.out" | grep ' Promote ' |
		grep -v blocked | sed 's/.*-> Promoted \([^ )]*\) ).*/\1/' | tr '\n' ' ' | sed 's/ $//'
}

# ---- a CIB like a running cluster's: both nodes online, alice promoted
crm_simulate -x "$ex/promotable.xml" -q 1 --node-up alice --node-up bob -S -O "$tmp/up.xml" \
	>"$tmp/sim.out" 2>&1 || { cat "$tmp/sim.out"; fail "crm_simulate promotable.xml"; }
CIB_file=$tmp/up.xml crm_attribute -N alice -p mysql-data -v 10000 || fail "crm_attribute alice"
CIB_file=$tmp/up.xml crm_attribute -N bob -p mysql-data -v 1000 || fail "crm_attribute bob"
sim "$tmp/up.xml" -O "$tmp/base.xml"
[ "$(promotes)" = alice ] || { cat "$tmp/sim.out"; fail "alice not promoted in the fixture"; }
sim "$tmp/base.xml" --node-fail alice
[ "$(promotes)" = bob ] || { cat "$tmp/sim.out"; fail "without a constraint bob should take over"; }
echo "ok: fixture: alice promoted; if alice fails, bob is promoted"

# ---- 1. place: bob reachable (online in node_state) -> 4
cp "$tmp/base.xml" "$tmp/c.xml"
fence "$tmp/c.xml"
expect_rc 4 "peer reachable"
said "placed $id"
[ "$(count "$tmp/c.xml")" = 1 ] || fail "$(count "$tmp/c.xml") constraints, expected 1"
has "$tmp/c.xml" || fail "cibadmin -Q does not find $id"
[ "$(element "$tmp/c.xml")" = "$(element "$ex/fencing.xml")" ] ||
	{ element "$tmp/c.xml"; echo; element "$ex/fencing.xml"; echo; fail "$id differs from cib-examples/fencing.xml"; }
echo "ok: exit 4, $id placed, identical to cib-examples/fencing.xml"

crm_simulate -x "$tmp/c.xml" -s 2>&1 | grep -q 'promotion score on bob: -INFINITY' ||
	fail "$id does not set bob's promotion score to -INFINITY"
sim "$tmp/c.xml" --node-fail alice
[ -z "$(promotes)" ] || { cat "$tmp/sim.out"; fail "bob promoted despite $id"; }
echo "ok: crm_simulate: alice fails, bob is not promoted"

# ---- 2. idempotent: again -> 4, the file untouched
cp "$tmp/c.xml" "$tmp/c.before"
fence "$tmp/c.xml"
expect_rc 4 "second run"
said "already in place"
cmp -s "$tmp/c.xml" "$tmp/c.before" || fail "a second run changed the CIB"
echo "ok: second run: exit 4, CIB unchanged"

# ---- 3. concurrent runs: one constraint, one of them placed it
cp "$tmp/base.xml" "$tmp/cc.xml"
pids=""
for i in 1 2 3 4; do
	(
		rc=0
		env CIB_file="$tmp/cc.xml" DRBD_RESOURCE=mysql DRBD_PEERS=bob TANDEM_FENCE_NODE=alice \
			TANDEM_RUN_DIR="$run" TANDEM_DISK=UpToDate TANDEM_PEER_DISK=DUnknown \
			"$TANDEM_FENCE_PEER" --timeout 2 >"$tmp/cc.$i" 2>&1 || rc=$?
		echo "$rc" >"$tmp/cc.$i.rc"
	) &
	pids="$pids $!"
done
for p in $pids; do wait "$p"; done
for i in 1 2 3 4; do
	[ "$(cat "$tmp/cc.$i.rc")" = 4 ] || { cat "$tmp/cc.$i"; fail "concurrent run $i: exit $(cat "$tmp/cc.$i.rc")"; }
done
[ "$(count "$tmp/cc.xml")" = 1 ] || fail "concurrent runs: $(count "$tmp/cc.xml") constraints"
[ "$(cat "$tmp"/cc.[1-4] | grep -c "placed $id")" = 1 ] ||
	{ cat "$tmp"/cc.[1-4]; fail "concurrent runs: not exactly one placed it"; }
[ "$(element "$tmp/cc.xml")" = "$(element "$ex/fencing.xml")" ] || fail "concurrent runs: wrong constraint"
echo "ok: 4 concurrent runs: all exit 4, one constraint"

# ---- 4. the exit code follows the peer's state
# bob fenced by Pacemaker (offline, expected down) -> 7
crm_simulate -x "$tmp/base.xml" --node-fail bob -S -O "$tmp/fenced.xml" >"$tmp/sim.out" 2>&1 ||
	{ cat "$tmp/sim.out"; fail "crm_simulate --node-fail bob"; }
cp "$tmp/fenced.xml" "$tmp/c.xml"
fence "$tmp/c.xml"
expect_rc 7 "peer fenced"
said "fenced"
[ "$(count "$tmp/c.xml")" = 1 ] || fail "peer fenced: no constraint"
echo "ok: peer fenced: exit 7, placed"

# the same, this node only Consistent -> 5, nothing placed
cp "$tmp/fenced.xml" "$tmp/c.xml"
fence "$tmp/c.xml" TANDEM_DISK=Consistent
expect_rc 5 "peer fenced, Consistent here"
[ "$(count "$tmp/c.xml")" = 0 ] || fail "Consistent: placed anyway"
echo "ok: peer fenced, this node Consistent: exit 5, nothing placed"

# the peer's disk known Inconsistent -> 3
cp "$tmp/base.xml" "$tmp/c.xml"
fence "$tmp/c.xml" TANDEM_PEER_DISK=Inconsistent
expect_rc 3 "peer Inconsistent"
[ "$(count "$tmp/c.xml")" = 1 ] || fail "peer Inconsistent: no constraint"
echo "ok: peer Inconsistent: exit 3, placed"

# bob lost, stonith enabled, not fenced yet: wait for --timeout -> 5
lost='<node_state id="2" uname="bob" in_ccm="false" crmd="offline" join="down" expected="member"/>'
cp "$tmp/base.xml" "$tmp/lost.xml"
CIB_file=$tmp/lost.xml cibadmin -M -o status -X "$lost" || fail "cibadmin -M node_state"
cp "$tmp/lost.xml" "$tmp/c.xml"
t0=$(date +%s)
fence "$tmp/c.xml" TANDEM_FENCE_TIMEOUT=3
t1=$(date +%s)
expect_rc 5 "peer lost, timeout"
[ $((t1 - t0)) -ge 3 ] || fail "peer lost: returned after $((t1 - t0)) s, before --timeout 3"
[ "$(count "$tmp/c.xml")" = 1 ] || fail "peer lost: no constraint"
echo "ok: peer lost, stonith pending: waited --timeout ($((t1 - t0)) s), exit 5, placed"

# the same with stonith disabled: nobody will fence it, no waiting -> 5
cp "$tmp/lost.xml" "$tmp/c.xml"
CIB_file=$tmp/c.xml crm_attribute -t crm_config -n stonith-enabled -v false || fail "crm_attribute"
t0=$(date +%s)
fence "$tmp/c.xml" TANDEM_FENCE_TIMEOUT=30
t1=$(date +%s)
expect_rc 5 "peer unreachable"
[ $((t1 - t0)) -lt 10 ] || fail "peer unreachable, no stonith: waited $((t1 - t0)) s"
said "unreachable"
echo "ok: peer unreachable, stonith disabled: exit 5 at once, placed"

# lost, this node Consistent: -> 5, nothing placed
cp "$tmp/lost.xml" "$tmp/c.xml"
fence "$tmp/c.xml" TANDEM_DISK=Consistent
expect_rc 5 "peer lost, Consistent here"
[ "$(count "$tmp/c.xml")" = 0 ] || fail "lost + Consistent: placed anyway"
echo "ok: peer lost, this node Consistent: exit 5, nothing placed"

# no quorum -> 1, nothing placed
sed 's/have-quorum="1"/have-quorum="0"/' "$tmp/base.xml" >"$tmp/c.xml"
fence "$tmp/c.xml"
expect_rc 1 "no quorum"
said "no quorum"
[ "$(count "$tmp/c.xml")" = 0 ] || fail "no quorum: placed anyway"
echo "ok: no quorum: exit 1, nothing placed"

# lost race: bob's handler placed it first, for bob -> 1, left alone
cp "$tmp/base.xml" "$tmp/c.xml"
fence "$tmp/c.xml" TANDEM_FENCE_NODE=bob
expect_rc 4 "bob fences alice"
cp "$tmp/c.xml" "$tmp/c.before"
fence "$tmp/c.xml"
expect_rc 1 "lost race"
said "the peer fenced this node first"
cmp -s "$tmp/c.xml" "$tmp/c.before" || fail "lost race: the constraint was changed"
echo "ok: the peer's constraint there: exit 1, left alone"

# the connection came back (peer UpToDate): nothing to fence -> 1
cp "$tmp/base.xml" "$tmp/c.xml"
fence "$tmp/c.xml" TANDEM_PEER_DISK=UpToDate
expect_rc 1 "peer UpToDate"
[ "$(count "$tmp/c.xml")" = 0 ] || fail "peer UpToDate: placed anyway"
echo "ok: peer UpToDate again: exit 1, nothing placed"

# ---- 5. bad input: exit 1 and a message that names it
cp "$tmp/base.xml" "$tmp/c.xml"
fence "$tmp/c.xml" DRBD_RESOURCE=
expect_rc 1 "no DRBD_RESOURCE"
said "DRBD_RESOURCE is not set"
fence "$tmp/c.xml" DRBD_RESOURCE=nosuch
expect_rc 1 "unknown resource"
said "no clone of ocf:tandem:tandem with resource=nosuch"
fence "$tmp/c.xml" TANDEM_FENCE_NODE=carol
expect_rc 1 "unknown node"
said "'carol', is not a node of the CIB"
fence "$tmp/c.xml" TANDEM_DISK=Bogus
expect_rc 1 "bad TANDEM_DISK"
said "TANDEM_DISK='Bogus'"
fence "$tmp/c.xml" TANDEM_FENCE_TIMEOUT=soon
expect_rc 1 "bad TANDEM_FENCE_TIMEOUT"
said "TANDEM_FENCE_TIMEOUT"
rc=0
CIB_file=$tmp/c.xml DRBD_RESOURCE=mysql "$TANDEM_FENCE_PEER" --timeout 5x >"$tmp/out" 2>&1 || rc=$?
expect_rc 1 "bad --timeout"
said "not a number of seconds"
fence "$tmp/nonexistent.xml"
expect_rc 1 "missing CIB_file"
said "CIB_file=$tmp/nonexistent.xml"
[ "$(count "$tmp/c.xml")" = 0 ] || fail "bad input: something was placed"
cmp -s "$tmp/c.xml" "$tmp/base.xml" || fail "bad input: the CIB changed"
echo "ok: bad environment, options, resource, node, CIB: exit 1 with a message"

# ---- 6. unfence: only when both disks are UpToDate; by id
cp "$tmp/base.xml" "$tmp/u.xml"
fence "$tmp/u.xml"
expect_rc 4 "place for unfence"
for pd in Outdated DUnknown Inconsistent; do
	unfence "$tmp/u.xml" TANDEM_PEER_DISK="$pd"
	expect_rc 2 "unfence, peer $pd"
	said "refused"
	has "$tmp/u.xml" || fail "unfence, peer $pd: removed"
done
unfence "$tmp/u.xml" TANDEM_DISK=Consistent TANDEM_PEER_DISK=UpToDate
expect_rc 2 "unfence, Consistent here"
has "$tmp/u.xml" || fail "unfence, Consistent here: removed"
unfence "$tmp/u.xml" TANDEM_DISK= TANDEM_PEER_DISK=
expect_rc 1 "unfence, states not known"
said "not known"
has "$tmp/u.xml" || fail "unfence, states unknown: removed"
echo "ok: unfence refused (exit 2) unless UpToDate/UpToDate; exit 1 if unknown"

unfence "$tmp/u.xml" TANDEM_PEER_DISK=UpToDate
expect_rc 0 "unfence"
said "removed $id"
has "$tmp/u.xml" && fail "unfence: $id still there"
sim "$tmp/u.xml" --node-fail alice
[ "$(promotes)" = bob ] || { cat "$tmp/sim.out"; fail "after unfence bob should take over"; }
unfence "$tmp/u.xml" TANDEM_PEER_DISK=UpToDate
expect_rc 0 "unfence again"
said "nothing to do"
echo "ok: unfence UpToDate/UpToDate: exit 0, removed; bob can be promoted; again: exit 0"

# ---- 7. tandemadm fence-constraints
adm_fc() {
	rc=0
	CIB_file=$1 "$TANDEMADM" --run-dir "$run" fence-constraints ${2:+"$2"} >"$tmp/out" 2>&1 || rc=$?
}
if "$TANDEMADM" help | grep -q fence-constraints; then
	cp "$tmp/base.xml" "$tmp/l.xml"
	adm_fc "$tmp/l.xml"
	expect_rc 0 "fence-constraints, none"
	said "no fence constraints"
	fence "$tmp/l.xml"
	CIB_file=$tmp/l.xml cibadmin -C -o constraints -X '<rsc_location id="drbd-fence-by-handler-r0-ms" rsc="mysql-data-clone"><rule id="drbd-fence-by-handler-r0-rule-ms" role="Master" score="-INFINITY"><expression id="drbd-fence-by-handler-r0-expr-ms" attribute="#uname" operation="ne" value="alice"/></rule></rsc_location>' ||
		fail "cibadmin -C drbd-fence-by-handler"
	adm_fc "$tmp/l.xml"
	expect_rc 0 "fence-constraints"
	said "$id: clone mysql-data-clone, resource mysql, Promoted only on alice: unknown (tandemd not reachable)"
	said "drbd-fence-by-handler-r0-ms: .*drbd-utils"
	adm_fc "$tmp/l.xml" --clear
	expect_rc 0 "fence-constraints --clear"
	has "$tmp/l.xml" || fail "--clear removed $id, which tandemd could not confirm stale"
	CIB_file=$tmp/l.xml cibadmin -Q --xpath "//rsc_location[@id='drbd-fence-by-handler-r0-ms']" >/dev/null ||
		fail "--clear removed DRBD's constraint"
	adm_fc "$tmp/l.xml" bogus
	expect_rc 1 "fence-constraints bogus"
	TANDEM_FENCE_PEER=$tmp/none adm_fc "$tmp/l.xml"
	expect_rc 20 "fence-constraints without tandem-fence-peer"
	said "TANDEM_FENCE_PEER"
	echo "ok: tandemadm fence-constraints lists; --clear keeps what tandemd cannot judge"
else
	fail "tandemadm has no fence-constraints verb"
fi

# ---- Part 2: real tandemd nodes (root, network namespaces)
if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null 2>&1 ||
	! ip netns add "tnd-fence-probe-$$" 2>/dev/null; then
	echo "note: part 2 (tandemd, control socket) skipped: needs root and network namespaces"
	exit 0
fi
ip netns del "tnd-fence-probe-$$"
requires python3
. "$(dirname "$0")/repl-functions.sh"

id=tandem-fence-r0
cp "$tmp/base.xml" "$tmp/r.xml"
CIB_file=$tmp/r.xml crm_resource -r mysql-data --set-parameter resource --parameter-value r0 \
	>/dev/null || fail "crm_resource --set-parameter resource=r0"
export CIB_file="$tmp/r.xml" # tandemd's handlers inherit it
new_image "$tmp/a.img" 32M
new_image "$tmp/b.img" 32M
write_repl_conf "$tmp/t.conf" 'connect-int 1; timeout 5;'
sed -i "s|^resource r0 {|resource r0 {\n\thandlers {\n\t\tafter-resync-target \"$TANDEM_UNFENCE_PEER --node bob\";\n\t}|" "$tmp/t.conf"
on a create-md --force r0 >/dev/null
on b create-md --force r0 >/dev/null
start_node a
on a up r0
on a primary --force r0
wait_for a disk UpToDate 10

# alice alone, UpToDate: the handler asks alice's socket (no TANDEM_DISK)
rc=0
env DRBD_RESOURCE=r0 DRBD_PEERS=bob \
	TANDEM_RUN_DIR="$tmp/run-a" "$TANDEM_FENCE_PEER" --node alice --timeout 2 >"$tmp/out" 2>&1 || rc=$?
expect_rc 4 "tandemd: fence"
said "from tandemd"
has "$tmp/r.xml" || fail "tandemd: $id not placed"
echo "ok: tandemd: fence-peer reads the disks from the control socket, exit 4"

# the socket wins over an environment that claims UpToDate/UpToDate
rc=0
env DRBD_RESOURCE=r0 TANDEM_DISK=UpToDate TANDEM_PEER_DISK=UpToDate TANDEM_RUN_DIR="$tmp/run-a" \
	"$TANDEM_UNFENCE_PEER" --node alice >"$tmp/out" 2>&1 || rc=$?
expect_rc 2 "tandemd: unfence while disconnected"
said "from tandemd"
has "$tmp/r.xml" || fail "tandemd: unfenced while bob is not connected"
rc=0
"$TANDEMADM" --run-dir "$tmp/run-a" fence-constraints >"$tmp/out" 2>&1 || rc=$?
expect_rc 0 "tandemd: fence-constraints"
said "$id: .*needed"
echo "ok: tandemd: disconnected: unfence refused (socket over environment), constraint needed"

# bob connects and resyncs; its after-resync-target unfences
start_node b
on b up r0
on b wait-sync --timeout 60 r0 >/dev/null || fail "resync"
i=0
while has "$tmp/r.xml"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { tail -n 20 "$tmp/tandemd-b.log"; fail "after-resync-target did not unfence"; }
	sleep 0.1
done
grep -q "removed $id" "$tmp/tandemd-b.log" || { tail -n 20 "$tmp/tandemd-b.log"; fail "unfence not logged"; }
echo "ok: tandemd: after-resync-target ran tandem-unfence-peer, $id removed"

# a leftover while UpToDate/UpToDate is stale: --clear removes it
rc=0
env DRBD_RESOURCE=r0 DRBD_PEERS=bob TANDEM_RUN_DIR="$tmp/run-a" \
	"$TANDEM_FENCE_PEER" --node alice --timeout 2 >"$tmp/out" 2>&1 || rc=$?
expect_rc 1 "tandemd: fence while connected"
has "$tmp/r.xml" && fail "tandemd: placed while connected"
sed -n "/<rsc_location id=\"tandem-fence-mysql\"/,/<\/rsc_location>/p" "$ex/fencing.xml" |
	sed 's/tandem-fence-mysql/tandem-fence-r0/g' >"$tmp/left.xml"
cibadmin -C -o constraints -x "$tmp/left.xml" || fail "cibadmin -C leftover"
rc=0
"$TANDEMADM" --run-dir "$tmp/run-a" fence-constraints --clear >"$tmp/out" 2>&1 || rc=$?
expect_rc 0 "tandemd: fence-constraints --clear"
said "$id: .*stale (connected, UpToDate/UpToDate)"
said "$id: removed"
has "$tmp/r.xml" && fail "tandemd: --clear left $id"
echo "ok: tandemd: connected: fence-peer places nothing (exit 1); a leftover is cleared"

# a leftover of a resource tandemd does not have is stale too
crm_resource -r mysql-data --set-parameter resource --parameter-value r9 >/dev/null ||
	fail "crm_resource --set-parameter resource=r9"
sed 's/tandem-fence-r0/tandem-fence-r9/g' "$tmp/left.xml" >"$tmp/left9.xml"
cibadmin -C -o constraints -x "$tmp/left9.xml" || fail "cibadmin -C leftover r9"
rc=0
"$TANDEMADM" --run-dir "$tmp/run-a" fence-constraints >"$tmp/out" 2>&1 || rc=$?
expect_rc 0 "tandemd: fence-constraints r9"
said "tandem-fence-r9: clone mysql-data-clone, resource r9, .*stale (tandemd has no such resource)"
said "1 stale; remove them with: tandemadm fence-constraints --clear"
rc=0
"$TANDEMADM" --run-dir "$tmp/run-a" fence-constraints --clear >"$tmp/out" 2>&1 || rc=$?
expect_rc 0 "tandemd: fence-constraints --clear r9"
said "tandem-fence-r9: removed"
[ "$(count "$tmp/r.xml")" = 0 ] || fail "--clear left $(count "$tmp/r.xml") constraints"
echo "ok: tandemd: a constraint of a resource tandemd does not have is stale, cleared"
