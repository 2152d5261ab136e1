#!/bin/sh
# The clients of tandem-arbiterd's local socket (doc/arbiter.md §7, §8)
# against a fake arbiter that answers per scenario (arbiter-functions.sh),
# with no cluster:
#   - tandemadm arbiter prints the table (and --json the answer), and says
#     how to start the arbiter when it is not running (exit 3);
#   - wait-connect takes the startup timeout class from the arbiter's wfc
#     answer, else from tandemd's metadata flags (tandemd is a fake too);
#   - tandem-fence-peer acts on every action of the fence-peer table:
#     "exit" exits with the code and never touches the CIB; "constraint"
#     places tandem-fence-RES on a CIB_file and sends fenced; "stonith"
#     places it and, with no fencer on a CIB file, exits 5 without fenced;
#     "fallback", an answer outside the table, no answer within the
#     deadline, and no arbiter at all each take the CIB path unchanged,
#     saying so in one line.
# The real arbiter's answers are tested by the cluster tests.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/arbiter-functions.sh"

fencing=$(cd "$(dirname "$TANDEMADM")/../fencing" 2>/dev/null && pwd) || fencing=.
: "${TANDEM_FENCE_PEER:=$fencing/tandem-fence-peer}"
[ -x "$TANDEM_FENCE_PEER" ] || fail "no $TANDEM_FENCE_PEER: build fencing/ first"

run=$tmp/run
mkdir -p "$run"
adm_arb() { "$TANDEMADM" --run-dir "$run" arbiter "$@"; }

# ---------------------------------------------------------------- tandemadm arbiter

rc=0
adm_arb >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 3 ] || { cat "$tmp/out"; fail "tandemadm arbiter without an arbiter: exit $rc, expected 3"; }
grep -q "tandem-arbiterd is not running on this node ($run/arbiter.sock): start it with systemctl start tandem-arbiterd" "$tmp/out" ||
	{ cat "$tmp/out"; fail "tandemadm arbiter: no clear message without an arbiter"; }
echo "ok: tandemadm arbiter without an arbiter: exit 3, says how to start it"

scenario '{"show": {"self": 1, "name": "alice", "quorate": true, "ring": 42, "token_ms": 1000,
 "nodes": [{"nodeid": 1, "name": "alice", "ring": true, "arbiter": true, "fenced": false, "left": ""},
           {"nodeid": 2, "name": "bob", "ring": false, "arbiter": false, "fenced": true, "left": "nodedown"}],
 "records": [{"nodeid": 1, "node": "alice", "resource": "mysql", "fresh": true, "age_ms": 1500,
              "role": "Primary", "disk": "UpToDate", "connection": "WFConnection", "peer_disk": "Outdated"},
             {"nodeid": 2, "node": "bob", "resource": "mysql", "fresh": false, "age_ms": 65000,
              "role": 2, "disk": 5, "connection": 0, "peer_disk": 8}]}}'
start_fake "$run"
adm_arb >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "tandemadm arbiter"; }
cat "$tmp/out"
grep -q '^tandem-arbiterd on alice (node 1): quorate, ring 42, token 1000 ms$' "$tmp/out" ||
	fail "tandemadm arbiter: no header line"
grep -Eq '^  2 +bob +no +no +yes +nodedown$' "$tmp/out" || fail "tandemadm arbiter: bob's node line"
grep -Eq '^  alice +mysql +Primary +UpToDate +WFConnection +Outdated +fresh +1\.5 s$' "$tmp/out" ||
	fail "tandemadm arbiter: alice's record"
# the states as lib/state.h's numbers read as their names
grep -Eq '^  bob +mysql +Secondary +Outdated +StandAlone +UpToDate +stale +65\.0 s$' "$tmp/out" ||
	fail "tandemadm arbiter: bob's record (numbers as names)"
[ "$(asked show)" = 1 ] || fail "tandemadm arbiter sent $(asked show) show requests"
adm_arb --json >"$tmp/out.json" || fail "tandemadm arbiter --json"
python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is True and d["name"] == "alice" and len(d["records"]) == 2, d' "$tmp/out.json" ||
	fail "tandemadm arbiter --json is not the answer"
echo "ok: tandemadm arbiter prints nodes and records; --json the answer"

scenario '{"show": {"ok": false, "exit": 20, "error": "the table is being rebuilt"}}'
rc=0
adm_arb >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 20 ] && grep -q "refused: the table is being rebuilt" "$tmp/out" ||
	{ cat "$tmp/out"; fail "tandemadm arbiter, refused: exit $rc"; }
echo "ok: tandemadm arbiter: a refusal's message and exit code"

# ---------------------------------------------------------------- wait-connect

# tandemd is a fake too here (the same script, on tandemd.sock): r0 up,
# waiting for its peer, the metadata flags saying "default"
printf '%s\n' '{"status": {"resources": [{"name": "r0", "up": true, "role": "Secondary",
	"peer_role": "Unknown", "connection": "WFConnection", "wfc_class": "default",
	"volumes": []}]}}' >"$tmp/tandemd.json"
python3 "$fake_arbiter_py" "$run/tandemd.sock" "$tmp/tandemd.json" "$tmp/tandemd-req.log" &
fake_tandemd=$!
stop_fake_tandemd() { kill -TERM "$fake_tandemd" 2>/dev/null || true; wait "$fake_tandemd" 2>/dev/null || true; }
cleanup_hooks="$cleanup_hooks stop_fake_tandemd"
wait_until 20 "the fake tandemd listens" test -S "$run/tandemd.sock"
cat >"$tmp/t.conf" <<CONF
resource r0 {
	startup { wfc-timeout 4; degr-wfc-timeout 1; }
	net { cram-hmac-alg sha256; shared-secret "tandem-test"; }
	on alice { device minor 0; disk /dev/null; meta-disk internal; address 127.0.0.1:7789; }
	on bob { device minor 0; disk /dev/null; meta-disk internal; address 127.0.0.2:7789; }
}
CONF
# wfc ANSWER-OR-"" SECONDS CLASS SOURCE: wait-connect times out (5) after
# about SECONDS, saying CLASS and SOURCE
wfc() {
	rc=0
	t0=$(date +%s)
	"$TANDEMADM" -c "$tmp/t.conf" --node alice --run-dir "$run" wait-connect r0 \
		>"$tmp/out" 2>&1 || rc=$?
	took=$(($(date +%s) - t0))
	[ "$rc" = 5 ] || { cat "$tmp/out"; fail "wait-connect ($3): exit $rc, expected 5 (timed out)"; }
	grep -q "r0: $3 timeout class (from $4.*): waiting up to $2 s" "$tmp/out" ||
		{ cat "$tmp/out"; fail "wait-connect: no '$3 timeout class (from $4...): waiting up to $2 s'"; }
	# wait-connect counts whole seconds, and so does date: +-1
	[ "$took" -ge $(($2 - 1)) ] && [ "$took" -le $(($2 + 4)) ] || fail "wait-connect ($3) took ${took}s"
}
scenario '{"wfc": {"class": "degraded", "why": "bob left the ring", "peer": "bob", "peer_id": 2}}'
wfc "" 1 degraded "tandem-arbiterd: bob left the ring"
[ "$(asked wfc)" = 1 ] && [ "$(request_field wfc res)" = r0 ] || fail "wait-connect did not ask wfc once for r0"
scenario '{"wfc": {"class": "outdated"}}'
wfc "" 1 peer-outdated "tandem-arbiterd"
scenario '{"wfc": {"class": "default"}}'
wfc "" 4 default "tandem-arbiterd"
scenario '{"wfc": {"class": null, "why": "bob is not in the nodelist"}}'
wfc "" 4 default "the metadata flags: tandem-arbiterd does not know: bob is not in the nodelist"
stop_fake
wfc "" 4 default "the metadata flags: tandem-arbiterd is not running"
start_fake "$run"
echo "ok: wait-connect: the arbiter's class (degraded, outdated, default), else the metadata flags, said in one line"
stop_fake_tandemd
rm -f "$run/tandemd.sock"

# ---------------------------------------------------------------- tandem-fence-peer

have_cib=yes
for t in cibadmin crm_simulate crm_attribute xmllint; do
	command -v "$t" >/dev/null 2>&1 || have_cib=no
done

# The handler environment tandemd sets on alice when it loses bob; output
# in $tmp/out, exit code in $rc, run time in $took (s)
fence() {
	file=$1
	shift
	rc=0
	t0=$(date +%s)
	env CIB_file="$file" DRBD_RESOURCE=mysql DRBD_PEERS=bob TANDEM_FENCE_NODE=alice \
		TANDEM_RUN_DIR="$run" TANDEM_DISK=UpToDate TANDEM_PEER_DISK=DUnknown \
		TANDEM_FENCE_TIMEOUT=2 TANDEM_FENCE_DC_TIMEOUT=2 "$@" "$TANDEM_FENCE_PEER" \
		>"$tmp/out" 2>&1 || rc=$?
	took=$(($(date +%s) - t0))
}
expect_rc() { [ "$rc" = "$1" ] || { cat "$tmp/out"; fail "$2: exit $rc, expected $1"; }; }
said() { grep -q -- "$1" "$tmp/out" || { cat "$tmp/out"; fail "no '$1' in the output"; }; }
count() {
	xmllint --xpath "count(//constraints/rsc_location[starts-with(@id,'tandem-fence-')])" "$1"
}

if [ "$have_cib" = yes ]; then
	# a CIB like a running cluster's: both nodes online, alice promoted
	ex=$(cd "$(dirname "$0")/../../cib-examples" && pwd)
	crm_simulate -x "$ex/promotable.xml" -q 1 --node-up alice --node-up bob -S \
		-O "$tmp/base.xml" >"$tmp/sim.out" 2>&1 || { cat "$tmp/sim.out"; fail "crm_simulate"; }
	[ "$(count "$tmp/base.xml")" = 0 ] || fail "the fixture has a fence constraint"
else
	skip_part "the CIB parts of tandem-fence-peer: no cibadmin/crm_simulate/xmllint"
	: >"$tmp/base.xml"
fi

# "exit": the code, no constraint, the CIB not even read (a missing
# CIB_file would fail the CIB path at once)
for code in 4 3 6 1; do
	scenario "{\"fence-peer\": {\"action\": \"exit\", \"exit\": $code,
		\"why\": \"bob answered over CPG\", \"peer\": \"bob\", \"peer_id\": 2, \"quorate\": true}}"
	fence "$tmp/no-such-cib.xml"
	expect_rc "$code" "arbiter action exit $code"
	said "tandem-arbiterd (asked for [0-9]* ms): exit, exit $code: bob answered over CPG"
	[ ! -e "$tmp/no-such-cib.xml" ] || fail "action exit $code created the CIB file"
	[ "$(asked fenced)" = 0 ] || fail "action exit $code sent fenced"
done
[ "$(request_field fence-peer res)" = mysql ] || fail "fence-peer asked for '$(request_field fence-peer res)'"
t=$(request_field fence-peer timeout_ms)
[ "$t" -ge 1000 ] && [ "$t" -le 2000 ] || fail "fence-peer's timeout_ms $t with --timeout 2"
scenario '{"fence-peer": {"action": "exit", "exit": 4}}'
fence "$tmp/no-such-cib.xml" TANDEM_FENCE_TIMEOUT=60
t=$(request_field fence-peer timeout_ms)
[ "$t" -gt 50000 ] && [ "$t" -le 57000 ] || fail "fence-peer's timeout_ms $t with --timeout 60"
if [ "$have_cib" = yes ]; then
	cp "$tmp/base.xml" "$tmp/c.xml"
	fence "$tmp/c.xml"
	expect_rc 4 "arbiter action exit 4 on a CIB file"
	cmp -s "$tmp/c.xml" "$tmp/base.xml" || fail "action exit changed the CIB"
fi
echo "ok: action exit: exits 4, 3, 6, 1 with no constraint; timeout_ms follows --timeout"

if [ "$have_cib" = yes ]; then
	# "constraint": the CIB path's constraint, then fenced
	scenario '{"fence-peer": {"action": "constraint", "exit": 4, "why": "bob left the ring"},
		"fenced": {}}'
	cp "$tmp/base.xml" "$tmp/c.xml"
	fence "$tmp/c.xml"
	expect_rc 4 "arbiter action constraint"
	said "placed tandem-fence-mysql"
	[ "$(count "$tmp/c.xml")" = 1 ] || fail "action constraint: $(count "$tmp/c.xml") constraints"
	[ "$(asked fenced)" = 1 ] && [ "$(request_field fenced how)" = constraint ] &&
		[ "$(request_field fenced res)" = mysql ] || { cat "$tmp/arb.log"; fail "no fenced constraint"; }
	# again: the same constraint is there, still 4
	fence "$tmp/c.xml"
	expect_rc 4 "arbiter action constraint, again"
	[ "$(count "$tmp/c.xml")" = 1 ] || fail "a second constraint"
	echo "ok: action constraint: exit 4, tandem-fence-mysql placed, fenced sent"

	# "stonith": constraint, then the fencer; on a CIB file there is none: 5
	scenario '{"fence-peer": {"action": "stonith", "exit": 7, "peer": "bob", "peer_id": 2},
		"fenced": {}}'
	cp "$tmp/base.xml" "$tmp/c.xml"
	fence "$tmp/c.xml"
	expect_rc 5 "arbiter action stonith without a fencer"
	said "placed tandem-fence-mysql"
	said "the fencer is not asked to fence bob"
	[ "$(count "$tmp/c.xml")" = 1 ] || fail "action stonith: no constraint"
	[ "$(asked fenced)" = 0 ] || fail "action stonith sent fenced without a confirmation"
	echo "ok: action stonith: constraint placed, not confirmed: exit 5, no fenced"

	# the CIB path without an arbiter: the reference for the fallbacks
	stop_fake
	cp "$tmp/base.xml" "$tmp/c.xml"
	fence "$tmp/c.xml"
	expect_rc 4 "no arbiter: the CIB path, bob reachable"
	said "tandem-arbiterd is not running ($run/arbiter.sock): taking the CIB path"
	said "placed tandem-fence-mysql"
	cp "$tmp/c.xml" "$tmp/ref.xml"
	echo "ok: no arbiter: one line, then the CIB path (exit 4, constraint placed)"
	start_fake "$run"

	# the same for "fallback", answers outside the table, and no answer in time
	for s in '{"action": "fallback", "why": "bob'"'"'s arbiter is not a member"}' \
		'{"action": "exit", "exit": 7}' \
		'{"action": "reboot"}' \
		'{"ok": false, "exit": 10, "error": "no resource mysql"}' \
		'{"_delay_ms": 30000}' \
		'{"_close": true}'; do
		scenario "{\"fence-peer\": $s}"
		cp "$tmp/base.xml" "$tmp/c.xml"
		fence "$tmp/c.xml"
		expect_rc 4 "fallback on $s"
		said "($run/arbiter.sock): taking the CIB path"
		said "placed tandem-fence-mysql"
		cmp -s "$tmp/c.xml" "$tmp/ref.xml" || fail "fallback on $s: the CIB differs from the CIB path's"
		[ "$(asked fenced)" = 0 ] || fail "fallback on $s sent fenced"
		# the fake holds it 30 s: the handler gave up after timeout_ms (1 s) +
		# ARBC_FENCE_SLACK_MS (2 s), and the CIB path is quick on a file
		[ "$took" -le 15 ] || fail "fallback on $s took ${took}s"
		case $s in
		*_delay_ms*) said "tandem-arbiterd did not answer: no answer in time" ;;
		*_close*) said "tandem-arbiterd did not answer: closed the connection" ;;
		esac
	done
	echo "ok: fallback, an unknown action, a bad exit, a refusal, no answer: the CIB path, identical"
fi
stop_fake
