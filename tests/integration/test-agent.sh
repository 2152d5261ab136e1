#!/bin/sh
# The OCF agent ocf:tandem:tandem (agent/, doc/ocf-agent.md) against real
# tandemd on two namespace nodes, alice and bob. Each agent run happens in
# the node's network namespace and in a UTS namespace named after the node,
# so that the tandemd it starts lands there and crm_attribute/cibadmin
# (with CIB_file, no cluster) see the right node name. Checked: the
# meta-data (well-formed, ra-api-1.dtd, resource-agents' metadata.rng, the
# OCF 1.1 rng shipped by pcs), validate-all, the
# start/monitor/promote/demote/stop cycle with its OCF exit codes, the
# promotion score in a CIB file, promotions refused (peer Primary,
# Outdated disk, fencing failed, cli-ban and fence constraints), demote
# refused while the export is in use, stop_outdates_secondary, notify,
# "no cluster" as a warning, and ocf-tester.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires xmllint
requires unshare
requires crm_attribute
requires cibadmin

. "$(dirname "$0")/agent-functions.sh"

new_image "$tmp/a.img" 32M
new_image "$tmp/b.img" 32M
write_repl_conf "$conf" 'connect-int 1; timeout 5;'
on a create-md --force r0 >/dev/null
on b create-md --force r0 >/dev/null
# alice's tandemd is the agent's: detached, it logs to syslog (wait_for
# shows this file when it fails)
echo "alice's tandemd was started by the agent and logs to syslog" >"$tmp/tandemd-a.log"

# ---------------------------------------------------------------- meta-data

md=$tmp/meta-data.xml
env -i "$TANDEM_AGENT" meta-data >"$md" || fail "meta-data: exit $?"
xmllint --noout "$md" || fail "meta-data is not well-formed XML"
echo "ok: meta-data without any environment is well-formed XML"
dtd=/usr/share/resource-agents/ra-api-1.dtd
if [ -f "$dtd" ]; then
	# As ocf-tester checks it: the DOCTYPE's ra-api-1.dtd from its directory,
	# with the internal subset that declares reload-agent and reloadable.
	(cd "${dtd%/*}" && xmllint --noout --valid - <"$md") 2>"$tmp/xmllint.err" ||
		{ cat "$tmp/xmllint.err"; fail "meta-data is not valid against $dtd"; }
	# The DTD alone knows neither: those are the only complaints it may have.
	if xmllint --noout --dtdvalid "$dtd" "$md" 2>"$tmp/xmllint.err"; then
		fail "meta-data passes ra-api-1.dtd without its internal subset: is reload-agent gone?"
	fi
	grep 'validity error' "$tmp/xmllint.err" |
		grep -v -e 'No declaration for attribute reloadable of element parameter' \
			-e 'Value "reload-agent" for attribute name of action is not among' &&
		fail "meta-data breaks ra-api-1.dtd beyond reload-agent and reloadable"
	echo "ok: meta-data is valid against resource-agents' ra-api-1.dtd (as ocf-tester checks it)"
else
	skip_part "meta-data against ra-api-1.dtd: $dtd is missing (package resource-agents)"
fi
rng=/usr/share/resource-agents/metadata.rng
if [ -f "$rng" ]; then
	# metadata.rng knows no reloadable attribute (doc/ocf-agent.md): all
	# else must validate
	sed 's/ reloadable="1"//' "$md" >"$tmp/md-noreload.xml"
	xmllint --noout --relaxng "$rng" "$tmp/md-noreload.xml" 2>"$tmp/xmllint.err" ||
		{ cat "$tmp/xmllint.err"; fail "meta-data does not validate against $rng"; }
	echo "ok: meta-data validates against resource-agents' metadata.rng (reloadable aside)"
else
	skip_part "meta-data against metadata.rng: $rng is missing (package resource-agents)"
fi
# The OCF 1.1 schema: Debian has no OCF-spec package, but pcs ships
# ra-api 1.1 as /usr/share/pcs/data/ocf-1.1.rng (OCF_RA_API_RNG overrides).
if [ -z "${OCF_RA_API_RNG:-}" ] && [ -f /usr/share/pcs/data/ocf-1.1.rng ]; then
	OCF_RA_API_RNG=/usr/share/pcs/data/ocf-1.1.rng
fi
if [ -n "${OCF_RA_API_RNG:-}" ]; then
	xmllint --noout --relaxng "$OCF_RA_API_RNG" "$md" 2>"$tmp/xmllint.err" ||
		{ cat "$tmp/xmllint.err"; fail "meta-data does not validate against $OCF_RA_API_RNG"; }
	echo "ok: meta-data validates against the OCF 1.1 schema $OCF_RA_API_RNG"
else
	fail "the OCF 1.1 RELAX NG schema is missing: install pcs (/usr/share/pcs/data/ocf-1.1.rng) or set OCF_RA_API_RNG"
fi
xp() { xmllint --xpath "$1" "$md"; }
[ "$(xp 'string(/resource-agent/version)')" = 1.1 ] || fail "meta-data: <version> is not 1.1"
for a in start stop promote demote notify reload-agent meta-data validate-all; do
	[ "$(xp "count(//actions/action[@name='$a'])")" = 1 ] || fail "meta-data lacks the action $a"
done
ip=$(xp "string(//action[@name='monitor'][@role='Promoted']/@interval)")
iu=$(xp "string(//action[@name='monitor'][@role='Unpromoted']/@interval)")
if [ -z "$ip" ] || [ -z "$iu" ] || [ "$ip" = "$iu" ]; then
	fail "meta-data: the Promoted and Unpromoted monitors need distinct intervals ('$ip', '$iu')"
fi
if [ "$(xp "string(//parameter[@name='resource']/@required)")" != 1 ] ||
	[ "$(xp "string(//parameter[@name='resource']/@unique)")" != 1 ]; then
	fail "meta-data: resource must be required and unique"
fi
for p in config promotion_scores wfc_timeout stop_outdates_secondary \
	remove_promotion_score_if_peer_primary unfence_if_all_uptodate \
	fail_promote_early_if_peer_primary unfence_extra_args ignore_missing_notifications \
	adjust_master_score remove_master_score_if_peer_primary; do
	[ "$(xp "count(//parameter[@name='$p'])")" = 1 ] || fail "meta-data lacks the parameter $p"
done
# reload-agent applies the agent's own parameters; the daemon's need a restart
for p in promotion_scores wfc_timeout stop_outdates_secondary unfence_if_all_uptodate; do
	[ "$(xp "string(//parameter[@name='$p']/@reloadable)")" = 1 ] ||
		fail "meta-data: $p is not reloadable"
done
for p in resource config run_dir node tandemd; do
	[ -z "$(xp "string(//parameter[@name='$p']/@reloadable)")" ] ||
		fail "meta-data: $p must not be reloadable"
done
echo "ok: meta-data: OCF 1.1, the actions, role monitors at $ip and $iu, the parameters"
if command -v runuser >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
	if ! runuser -u nobody -- test -x "$TANDEM_AGENT"; then
		skip_part "meta-data as nobody: nobody cannot execute $TANDEM_AGENT (its directory)"
	else
		rc=0
		runuser -u nobody -- "$TANDEM_AGENT" meta-data >"$tmp/md-nobody.xml" 2>"$tmp/md-nobody.err" ||
			rc=$?
		[ $rc -eq 0 ] || { cat "$tmp/md-nobody.err"; fail "meta-data as nobody: exit $rc"; }
		cmp -s "$md" "$tmp/md-nobody.xml" || fail "meta-data as nobody differs"
		echo "ok: meta-data as nobody"
	fi
else
	skip_part "meta-data as nobody: no runuser or no user nobody"
fi
set +e
"$TANDEM_AGENT" frobnicate >/dev/null 2>&1
rc=$?
set -e
expect 3 "an unknown action is unimplemented"
set +e
"$TANDEM_AGENT" >/dev/null 2>&1
rc=$?
set -e
expect 2 "no action at all is a usage error"

# ---------------------------------------------------------------- validate-all

ra_clone a validate-all
expect 0 "validate-all of a proper promotable clone" "are valid"
ra a validate-all
expect 0 "validate-all without clone meta attributes (crm_resource --validate)" "not run as a clone"
ra_clone a validate-all OCF_RESKEY_CRM_meta_notify=false
expect 6 "validate-all: notify=false" "set notify=true"
ra_clone a validate-all OCF_RESKEY_CRM_meta_promotable=false OCF_RESKEY_CRM_meta_promoted_max=
expect 6 "validate-all: not promotable" "set promotable=true"
ra_clone a validate-all OCF_RESKEY_CRM_meta_promoted_max=2
expect 6 "validate-all: promoted-max=2 without allow-two-primaries" "allow-two-primaries"
ra_clone a validate-all OCF_RESKEY_CRM_meta_clone_max=3
expect 6 "validate-all: clone-max=3" "set clone-max=2"
ra_clone a validate-all OCF_RESKEY_resource=
expect 6 "validate-all: no resource" "'resource' is required"
ra_clone a validate-all OCF_RESKEY_resource=r9
expect 6 "validate-all: a resource not in the configuration" "r9 is not defined"
ra_clone a validate-all 'OCF_RESKEY_resource=r0;rm'
expect 6 "validate-all: a resource name with a ';'" "a resource name has only"
ra_clone a validate-all 'OCF_RESKEY_promotion_scores=1 2 3'
expect 6 "validate-all: three promotion scores" "expected four integers"
ra_clone a validate-all 'OCF_RESKEY_promotion_scores=0 100 10 1000'
expect 6 "validate-all: decreasing promotion scores" "must not decrease"
ra_clone a validate-all OCF_RESKEY_wfc_timeout=soon
expect 6 "validate-all: wfc_timeout=soon" "wfc_timeout='soon'"
ra_clone a validate-all OCF_RESKEY_stop_outdates_secondary=perhaps
expect 6 "validate-all: a boolean that is not one" "is not a boolean"
ra_clone a validate-all OCF_RESKEY_config="$tmp/missing.conf"
expect 5 "validate-all: the configuration file is missing" "missing.conf"
printf 'resource r0 {\n' >"$tmp/broken.conf"
ra_clone a validate-all OCF_RESKEY_config="$tmp/broken.conf"
expect 6 "validate-all: the configuration file is invalid" "invalid"
ra_clone a validate-all OCF_CHECK_LEVEL=10 OCF_RESKEY_tandemd=/nonexistent/tandemd
expect 5 "validate-all at level 10: tandemd missing" "/nonexistent/tandemd"

# ---------------------------------------------------------------- start, monitor, promote, demote

ra a monitor OCF_RESKEY_CRM_meta_interval=0
expect 7 "probe without tandemd: not running"
ra a monitor
expect 7 "monitor without tandemd: not running"
ra a stop
expect 0 "stop without tandemd: already stopped is success" "not running"
ra_clone a promote OCF_RESKEY_CRM_meta_timeout=3000
expect 1 "promote without tandemd" "not running"

start_node b
on b up r0
ra_clone a start
expect 0 "start with tandemd not running: tandemd started, r0 up, connected" \
	"connected to the peer"
grep -q 'tandemd is not running: starting' "$tmp/ra.out" || fail "start did not start tandemd"
[ -s "$tmp/run-a/tandemd.pid" ] || fail "the started tandemd wrote no pid file"
tpid=$(cat "$tmp/run-a/tandemd.pid")
kill -0 "$tpid" || fail "the tandemd the agent started is gone"
tsid=$(ps -o sid= -p "$tpid" | tr -d ' ')
[ "$tsid" != "$(ps -o sid= -p $$ | tr -d ' ')" ] || fail "tandemd runs in the test's session"
echo "ok: the started tandemd ($tpid) runs detached, in session $tsid"
[ "$(field a role)" = Secondary ] || fail "start left role $(field a role)"
ra a monitor
expect 0 "monitor after start: running, unpromoted"
expect_score a none "Inconsistent data has no promotion score"

# the first full sync, by hand
on a primary --force r0
on b wait-sync --timeout 60 r0 >/dev/null || fail "initial sync"
on a secondary r0
ra a monitor
expect 0 "monitor of an UpToDate Secondary"
expect_score a 10000 "UpToDate with the peer's disk known: the best score"
CIB_file=$cib crm_attribute -N alice -n master-r0 -l reboot -D >/dev/null 2>&1
ra a monitor OCF_RESKEY_CRM_meta_interval=0
expect 0 "probe of an UpToDate Secondary"
expect_score a 10000 "the probe published the score again"
ra a monitor 'OCF_RESKEY_promotion_scores=1 2 3 4'
expect 0 "monitor with promotion_scores 1 2 3 4"
expect_score a 4 "the fourth promotion score"
cibenv=TANDEM_TEST_NO_CIB=1
ra a monitor
expect 0 "monitor with no cluster: a warning, not a failure" \
	"WARNING: no cluster running (crm_attribute exit 102)"
ra a start
expect 0 "start of a running Secondary with no cluster" "already up"
cibenv="CIB_file=$cib"

ra_clone a promote
expect 0 "promote an UpToDate Secondary" "is Primary"
[ "$(field a role)" = Primary ] || fail "promote left role $(field a role)"
ra a monitor OCF_RESKEY_CRM_meta_interval=10000 OCF_RESKEY_CRM_meta_role=Promoted
expect 8 "monitor of the Primary: running, promoted"
ra a monitor OCF_RESKEY_CRM_meta_interval=0
expect 8 "probe of the Primary: promoted"
expect_score a 10000 "the Primary keeps the best score"
ra_clone a promote
expect 0 "promote of the Primary again: success" "already Primary"

# the peer is Primary: bob refuses, and can drop its score
ra_clone b promote OCF_RESKEY_CRM_meta_timeout=3000
expect 1 "promote on bob while alice is Primary" "the peer is Primary"
[ "$(field b role)" = Secondary ] || fail "bob's role is $(field b role)"
ra b monitor
expect 0 "monitor on bob, the Secondary"
expect_score b 10000 "bob, UpToDate Secondary"
ra b monitor OCF_RESKEY_remove_promotion_score_if_peer_primary=true
expect 0 "monitor on bob with remove_promotion_score_if_peer_primary"
expect_score b none "remove_promotion_score_if_peer_primary: no score while alice is Primary"

# demote refuses while the export is in use
if command -v nbdsh >/dev/null 2>&1 || [ -x /usr/bin/nbdsh ]; then
	# a simple command, so that $! is nbdsh itself and the kill reaches it
	PATH=/usr/bin:$PATH nbdsh -u "$(nbd_uri_of a)" -c 'import time
time.sleep(60)' >/dev/null 2>&1 &
	client=$!
	wait_for a clients 1 10
	ra_clone a demote OCF_RESKEY_CRM_meta_timeout=4000
	expect 1 "demote while an NBD client uses the export" "is in use (1 NBD client connected)"
	[ "$(field a role)" = Primary ] || fail "the refused demote changed the role"
	kill "$client" 2>/dev/null || true
	wait "$client" 2>/dev/null || true
	wait_for a clients 0 10
else
	skip_part "demote refused while in use: nbdsh is not installed"
fi
ra_clone a demote
expect 0 "demote the Primary" "is Secondary"
[ "$(field a role)" = Secondary ] || fail "demote left role $(field a role)"
ra a monitor
expect 0 "monitor after demote: unpromoted"
ra_clone a demote
expect 0 "demote of a Secondary again: success" "already Secondary"
expect_score a 10000 "the demoted Secondary keeps its score"

# notify: pre and post of every operation, and what each did: every post
# notification publishes the score again (removed first, so a notify that
# did nothing cannot pass), start notifications re-read the configuration,
# other pre notifications change nothing
for t in pre post; do
	for o in start stop promote demote; do
		CIB_file=$cib crm_attribute -N alice -n master-r0 -l reboot -D >/dev/null 2>&1
		ra_clone a notify OCF_RESKEY_CRM_meta_notify_type=$t OCF_RESKEY_CRM_meta_notify_operation=$o \
			"OCF_RESKEY_CRM_meta_notify_promoted_uname= " "OCF_RESKEY_CRM_meta_notify_stop_uname= "
		[ "$rc" -eq 0 ] || { cat "$tmp/ra.out"; fail "notify $t-$o: exit $rc"; }
		case $t-$o in
		post-*) expect_score a 10000 "notify $t-$o published the score" ;;
		*) expect_score a none "notify $t-$o left the score alone" ;;
		esac
		case $o in
		start) grep -q "$t-start: tandemd re-read" "$tmp/ra.out" ||
			{ cat "$tmp/ra.out"; fail "notify $t-start did not re-read the configuration"; } ;;
		*) if grep -q 're-read' "$tmp/ra.out"; then
			cat "$tmp/ra.out"; fail "notify $t-$o re-read the configuration"
		fi ;;
		esac
	done
done
echo "ok: notify pre and post of start, stop, promote and demote did what each must"
ra a notify
expect 0 "notify without the notification variables (ocf-tester)"
on a disconnect r0
wait_for a connection StandAlone 10
ra_clone a notify OCF_RESKEY_CRM_meta_notify_type=post OCF_RESKEY_CRM_meta_notify_operation=start
expect 0 "post-start notification on a StandAlone Secondary" "connecting"
wait_for a connection Connected 20
echo "ok: the post-start notification reconnected alice"
ra a reload-agent 'OCF_RESKEY_promotion_scores=0 10 1000 5000'
expect 0 "reload-agent" "promotion_scores 0 10 1000 5000"
expect_score a 5000 "reload-agent published the score with the new values"

# ---------------------------------------------------------------- refused promotions

cons_add '<rsc_location id="cli-ban-r0-clone-on-alice" rsc="r0-clone" role="Promoted" node="alice" score="-INFINITY"/>'
ra_clone a promote OCF_RESKEY_CRM_meta_timeout=3000
expect 1 "promote with a cli-ban constraint" "a cli-ban constraint forbids promotion"
grep -q 'cli-ban-r0-clone-on-alice' "$tmp/ra.out" || fail "the refusal does not name the constraint"
[ "$(field a role)" = Secondary ] || fail "the refused promote changed the role"
cons_del cli-ban-r0-clone-on-alice
cons_add '<rsc_location id="drbd-fence-by-handler-r0-r0-clone" rsc="r0-clone"><rule id="drbd-fence-by-handler-r0-rule-r0-clone" role="Promoted" score="-INFINITY"><expression id="drbd-fence-by-handler-r0-expr-r0-clone" attribute="#uname" operation="ne" value="bob"/></rule></rsc_location>'
ra_clone a promote OCF_RESKEY_CRM_meta_timeout=3000
expect 1 "promote with a fence constraint for bob" "a fence constraint forbids promotion"
cons_del drbd-fence-by-handler-r0-r0-clone
ra_clone a promote
expect 0 "promote once the constraints are gone"
ra_clone a demote
expect 0 "demote again"
# a connected Primary peer is transient: promote retries until its timeout
ra_clone b promote
expect 0 "promote bob"
start=$(date +%s)
ra_clone a promote OCF_RESKEY_CRM_meta_timeout=8000
took=$(( $(date +%s) - start ))
expect 1 "promote on alice while bob stays Primary" "refused after every retry: the peer is Primary"
grep -q 'try 2 refused: the peer is Primary.*retrying while the peer is still Primary' \
	"$tmp/ra.out" || { cat "$tmp/ra.out"; fail "promote did not log its retries"; }
[ "$took" -ge 5 ] || fail "the refused promote returned after ${took}s, before its timeout"
echo "ok: the refused promote retried for ${took}s, until its timeout"
# fail_promote_early_if_peer_primary: no retry
start=$(date +%s)
ra_clone a promote OCF_RESKEY_CRM_meta_timeout=8000 OCF_RESKEY_fail_promote_early_if_peer_primary=true
took=$(( $(date +%s) - start ))
expect 1 "promote with fail_promote_early_if_peer_primary" "the peer is Primary"
if grep -q 'retrying' "$tmp/ra.out"; then cat "$tmp/ra.out"; fail "fail_promote_early retried"; fi
[ "$took" -lt 5 ] || fail "fail_promote_early_if_peer_primary took ${took}s"
echo "ok: fail_promote_early_if_peer_primary failed at once (${took}s)"

# stop_outdates_secondary: alice stops while bob is promoted
ra_clone a stop OCF_RESKEY_stop_outdates_secondary=true \
	OCF_RESKEY_CRM_meta_notify_promoted_uname=bob "OCF_RESKEY_CRM_meta_notify_stop_uname=alice" \
	"OCF_RESKEY_CRM_meta_notify_demote_uname= "
expect 0 "stop of the Secondary while bob is promoted" "the local data is now Outdated"
expect_score a none "stop removed the score"
[ "$(on a dstate r0)" = Outdated ] || fail "alice's data is $(on a dstate r0), not Outdated"
echo "ok: stop_outdates_secondary left alice's data Outdated"
ra a monitor
expect 7 "monitor after stop: not running"
ra a stop
expect 0 "stop again: success" "not running"

ra_clone b demote
expect 0 "demote bob"
ra_clone b stop
expect 0 "stop bob"
ra_clone a start OCF_RESKEY_wfc_timeout=none
expect 0 "start alice alone without waiting (wfc_timeout=none)"
[ "$(field a disk)" = Outdated ] || fail "alice's disk is $(field a disk), expected Outdated"
ra a monitor
expect 0 "monitor of an Outdated Secondary"
expect_score a none "Outdated data has no promotion score"
ra_clone a promote OCF_RESKEY_CRM_meta_timeout=3000
expect 1 "promote with an Outdated disk" "the disk is Outdated"
[ "$(field a role)" = Secondary ] || fail "the refused promote changed the role"
ra_clone b start
expect 0 "start bob: connects"
wait_for a disk UpToDate 60
ra a monitor
expect 0 "monitor after the resync"
expect_score a 10000 "alice, UpToDate again"

# fencing failed: with fencing resource-only and a fence-peer handler that
# fails, a Secondary without its peer cannot become Primary
ra_clone b stop
expect 0 "stop bob"
ra_clone a stop
expect 0 "stop alice"
kill_spawned
write_repl_conf "$tmp/f.conf" 'connect-int 1; timeout 5;' 'fencing resource-only;'
sed -i 's|^resource r0 {|resource r0 {\n\thandlers { fence-peer "/bin/false"; }|' "$tmp/f.conf"
conf=$tmp/f.conf
conf_of=$tmp/f.conf
ra_clone a start OCF_RESKEY_wfc_timeout=none
expect 0 "start alice with fencing resource-only (a new tandemd)" "starting"
ra_clone a promote OCF_RESKEY_CRM_meta_timeout=3000
expect 1 "promote without the peer when fencing fails" "fencing failed"
[ "$(field a role)" = Secondary ] || fail "the refused promote changed the role"
ra_clone a stop
expect 0 "stop alice"
ra a monitor
expect 7 "monitor after stop: not running"
kill_spawned
conf=$tmp/t.conf
conf_of=

# ---------------------------------------------------------------- crm_resource

# crm_resource finds agents only in /usr/lib/ocf/resource.d: a private
# mount namespace shows it a directory with just this agent there
crm_res() {
	set +e
	# shellcheck disable=SC2016 # expanded by the inner sh
	ip netns exec "$ns_a" unshare --uts --mount --propagation private env -i PATH="$PATH" \
		TANDEM_STATE_DIR="$tmp/state-a" CIB_file="$cib" sh -c 'hostname alice &&
		mount --bind "$1" /usr/lib/ocf/resource.d && shift && exec crm_resource "$@"' \
		sh "$tmp/resource.d" "$@" >"$tmp/ra.out" 2>&1
	rc=$?
	set -e
	{ echo "=== crm_resource $*: exit $rc"; cat "$tmp/ra.out"; } >>"$tmp/ra.log"
}

if [ -d /usr/lib/ocf/resource.d ] && command -v crm_resource >/dev/null 2>&1; then
	mkdir -p "$tmp/resource.d/tandem"
	cp "$TANDEM_AGENT" "$tmp/resource.d/tandem/tandem"
	crm_res --validate --class ocf --provider tandem --agent tandem --option resource=r0 \
		--option config="$conf" --option node=alice
	expect 0 "crm_resource --validate, no cluster" "returned 0"
	crm_res --validate --class ocf --provider tandem --agent tandem --option resource=r0 \
		--option config="$conf" --option 'promotion_scores=1 2'
	expect 6 "crm_resource --validate with two promotion scores" "expected four integers"
	for step in check:7 start:0 check:0 promote:0 check:8 demote:0 check:0 stop:0 check:7 \
		stop:0; do
		crm_res "--force-${step%:*}" -r r0
		expect "${step#*:}" "CIB_file crm_resource --force-${step%:*}"
		case $step in
		start:0) expect_score a 1000 "--force-start published the score (peer unknown)" ;;
		stop:0) expect_score a none "--force-stop removed the score" ;;
		esac
	done
	kill_spawned
else
	skip_part "crm_resource --validate and --force-*: no /usr/lib/ocf/resource.d or no crm_resource"
fi

# ---------------------------------------------------------------- ocf-tester

if [ -x /usr/sbin/ocf-tester ]; then
	# shellcheck disable=SC2016 # expanded by the inner sh
	ip netns exec "$ns_a" unshare --uts env -i PATH="$PATH" TANDEM_STATE_DIR="$tmp/state-a" \
		sh -c 'hostname alice &&
		exec /usr/sbin/ocf-tester -v -n r0 -o resource=r0 -o "config=$1" -o "run_dir=$2" \
		-o node=alice -o "tandemd=$3" -o wfc_timeout=none "$4"' sh "$conf" "$tmp/run-a" \
		"$TANDEMD" "$TANDEM_AGENT" >"$tmp/ocf-tester.out" 2>&1 ||
		{ cat "$tmp/ocf-tester.out"; fail "ocf-tester failed"; }
	grep -q 'passed all tests' "$tmp/ocf-tester.out" ||
		{ cat "$tmp/ocf-tester.out"; fail "ocf-tester did not pass all tests"; }
	echo "ok: ocf-tester passed all tests (no cluster: scores not published, a warning)"
else
	skip_part "ocf-tester: /usr/sbin/ocf-tester is missing (package resource-agents)"
fi
