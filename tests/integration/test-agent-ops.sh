#!/bin/sh
# The OCF agent as a DRBD + Pacemaker operator uses it (issue 16), against
# real tandemd on two namespace nodes, alice and bob, with the promotion
# score and the constraints in a CIB file (agent-functions.sh):
#   - a lone node starts within 10 s with the examples' settings (the
#     default wfc_timeout, no startup section);
#   - a promote against a peer that is still Primary, then silently gone,
#     retries and succeeds within the operation;
#   - a restart after a disk change in the configuration uses the new disk,
#     also when the resource was still up;
#   - reload-agent changes the scores without a restart, and refuses bad
#     ones;
#   - unfence_if_all_uptodate removes the fence constraint with a
#     non-default run_dir, with unfence_extra_args;
#   - a bad promotion_scores is warned about and falls back, except in
#     start (exit 6);
#   - drbd.ocf's parameter names and ignore_missing_notifications;
#   - a post-promote notification outdates a disconnected Secondary when
#     fencing is configured, and does not without fencing;
#   - a pre-start notification makes tandemd re-read its configuration.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires xmllint
requires unshare
requires crm_attribute
requires cibadmin
. "$(dirname "$0")/agent-functions.sh"
[ -x "${TANDEM_UNFENCE_PEER:-}" ] ||
	TANDEM_UNFENCE_PEER=$(cd "$(dirname "$TANDEMD")/../fencing" && pwd)/tandem-unfence-peer
[ -x "$TANDEM_UNFENCE_PEER" ] || fail "no tandem-unfence-peer (set TANDEM_UNFENCE_PEER)"

new_image "$tmp/a.img" 32M
new_image "$tmp/b.img" 32M
# the examples' net settings (tests/cluster, cib-examples): a dead link is
# noticed after ping-int + ping-timeout
net='connect-int 1; ping-int 1; ping-timeout 5; timeout 5;'
write_repl_conf "$conf" "$net"
on a create-md --force r0 >/dev/null
on b create-md --force r0 >/dev/null
echo "alice's tandemd was started by the agent and logs to syslog" >"$tmp/tandemd-a.log"

# tandemd the agent started on alice; kill_alice stops it (kill_spawned
# would stop bob's too)
apid() { cat "$tmp/run-a/tandemd.pid"; }
kill_alice() {
	p=$(apid)
	kill -TERM "$p"
	i=0
	while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.05; done
	! kill -0 "$p" 2>/dev/null || fail "alice's tandemd $p does not stop"
}
# opens a|b FILE: that node's tandemd has FILE open
opens() {
	if [ "$1" = a ]; then p=$(apid); else eval "p=\$pid_$1"; fi
	for fd in /proc/"$p"/fd/*; do
		[ "$(readlink "$fd")" != "$2" ] || return 0
	done
	return 1
}
secs_since() { echo $(($(date +%s) - $1)); }

# ---------------------------------------------------------------- a lone node

# bob is down; no startup section; the agent's default wfc_timeout
t0=$(date +%s)
RA_WFC='' ra_clone a start
took=$(secs_since "$t0")
expect 0 "start of a lone node with the default wfc_timeout" "waiting up to 5 s for the peer"
[ "$took" -le 10 ] || fail "the lone start took ${took}s, more than 10 s"
echo "ok: the lone node started in ${took}s (wfc_timeout 5 by default; drbd.ocf waits 5 s too)"

# the first sync, bob started by hand
start_node b
on b up r0
on a wait-connect --timeout 20 r0 >/dev/null || fail "wait-connect"
on a new-current-uuid --clear-bitmap r0
wait_for a peer_disk UpToDate

# ---------------------------------------------------------------- a bad promotion_scores

ra a monitor 'OCF_RESKEY_promotion_scores=1 2'
expect 0 "monitor with two promotion scores: a warning" "using the default '0 10 1000 10000'"
expect_score a 10000 "monitor fell back to the default scores"
ra_clone a notify OCF_RESKEY_CRM_meta_notify_type=post OCF_RESKEY_CRM_meta_notify_operation=demote \
	'OCF_RESKEY_promotion_scores=9 8 7 6' "OCF_RESKEY_CRM_meta_notify_promoted_uname= "
expect 0 "notify with decreasing promotion scores: a warning" "using the default"
ra_clone a demote 'OCF_RESKEY_promotion_scores=x'
expect 0 "demote with a bad promotion_scores: a warning" "using the default"
ra_clone a start 'OCF_RESKEY_promotion_scores=1 2'
expect 6 "start with a bad promotion_scores" "expected four integers"
ra a reload-agent 'OCF_RESKEY_promotion_scores=1 2'
expect 6 "reload-agent with a bad promotion_scores" "expected four integers"
expect_score a 10000 "the refused reload-agent left the score"

# ---------------------------------------------------------------- reload-agent

pid0=$(apid)
ra a reload-agent 'OCF_RESKEY_promotion_scores=0 10 1000 7000'
expect 0 "reload-agent with new scores" "promotion_scores 0 10 1000 7000"
expect_score a 7000 "reload-agent published the new best score"
[ "$(apid)" = "$pid0" ] || fail "reload-agent restarted tandemd"
[ "$(field a connection)" = Connected ] || fail "reload-agent disturbed the connection"
echo "ok: reload-agent changed the score without a restart (tandemd $pid0, still Connected)"

# ---------------------------------------------------------------- drbd.ocf's names

ra a monitor 'OCF_RESKEY_adjust_master_score=0 10 1000 3000'
expect 0 "monitor with drbd.ocf's adjust_master_score" "rename it to promotion_scores"
expect_score a 3000 "adjust_master_score applies"
ra a monitor 'OCF_RESKEY_adjust_master_score=0 10 1000 3000' \
	'OCF_RESKEY_promotion_scores=0 10 1000 10000'
expect 0 "promotion_scores wins over adjust_master_score"
expect_score a 10000 "promotion_scores wins"
ra a monitor OCF_RESKEY_require_drbd_module_version_ge=8.4.0
expect 0 "monitor with require_drbd_module_version_ge" "is ignored: tandem has no kernel module"
ra_clone a validate-all OCF_RESKEY_CRM_meta_notify=false OCF_RESKEY_ignore_missing_notifications=true
expect 0 "validate-all of a clone without notify, ignore_missing_notifications" \
	"ignore_missing_notifications"
ra_clone a validate-all OCF_RESKEY_CRM_meta_notify=false
expect 6 "validate-all of a clone without notify" "or ignore_missing_notifications=true"
ra a monitor OCF_RESKEY_remove_master_score_if_peer_primary=unexpected
expect 0 "remove_master_score_if_peer_primary=unexpected" "taken as true"
ra a validate-all OCF_RESKEY_resource= OCF_RESKEY_drbd_resource=r0
expect 0 "validate-all with drbd.ocf's drbd_resource" "rename it to resource"

# ---------------------------------------------------------------- unfence

# A fence constraint left behind; alice Primary, both UpToDate, connected:
# with unfence_if_all_uptodate the monitor removes it, through a handler
# that must reach tandemd in run_dir (not /run/tandem) and find the
# handler next to the tandemd the agent was given.
mkdir -p "$tmp/sbin"
ln -s "$TANDEMD" "$tmp/sbin/tandemd"
ln -s "$TANDEM_UNFENCE_PEER" "$tmp/sbin/tandem-unfence-peer"
cons_add '<rsc_location id="tandem-fence-r0" rsc="r0-clone"><rule id="tandem-fence-r0-rule" role="Promoted" score="-INFINITY"><expression id="tandem-fence-r0-expr-alice" attribute="#uname" operation="ne" value="alice"/></rule></rsc_location>'
on a primary r0
ra a monitor OCF_RESKEY_unfence_if_all_uptodate=true OCF_RESKEY_tandemd="$tmp/sbin/tandemd" \
	'OCF_RESKEY_unfence_extra_args=--quiet --flock-timeout 0'
expect 8 "monitor of an UpToDate/UpToDate Primary with unfence_if_all_uptodate"
if [ -n "$(CIB_file=$cib cibadmin -Q --xpath "//rsc_location[@id='tandem-fence-r0']" 2>/dev/null)" ]; then
	cat "$tmp/ra.out"
	fail "the fence constraint is still there"
fi
echo "ok: unfence_if_all_uptodate removed tandem-fence-r0 (run_dir $tmp/run-a)"
on a secondary r0

# ---------------------------------------------------------------- a peer Primary, then gone

# bob Primary; its link goes down without a word to alice (bob's end of
# the veth: alice's packets are dropped). alice's promote is refused while
# tandemd still believes bob Primary, and succeeds once it sees bob gone.
on b primary r0
wait_for a peer_role Primary
ip -n "$ns_b" link set "vb$$" down
t0=$(date +%s)
ra_clone a promote OCF_RESKEY_CRM_meta_timeout=40000
took=$(secs_since "$t0")
expect 0 "promote while the peer is Primary, then silently gone" "is Primary after"
grep -q 'retrying while the peer is still' "$tmp/ra.out" ||
	{ cat "$tmp/ra.out"; fail "the promote did not retry while bob was Primary"; }
[ "$took" -lt 36 ] || fail "the promote took ${took}s of its 40 s"
[ "$(field a role)" = Primary ] || fail "alice is $(field a role)"
echo "ok: alice promoted in ${took}s, after $(grep -c 'retrying' "$tmp/ra.out") logged retries"
# bob, still Primary behind its dead link, is the split brain a cluster
# would have fenced: it goes away, and comes back blank to resync
stop_node b
ip -n "$ns_b" link set "vb$$" up
on b create-md --force r0 >/dev/null
start_node b
on b up r0
wait_for b disk UpToDate 60
on a secondary r0

# ---------------------------------------------------------------- a disk change

# stop, point alice at another disk, start: the new disk is used
ra_clone a stop
expect 0 "stop alice"
new_image "$tmp/c.img" 32M
sed -i "s|disk $tmp/a.img;|disk $tmp/c.img;|" "$conf"
on a create-md --force r0 >/dev/null
ra_clone a start
expect 0 "start after the disk changed in the configuration"
opens a "$tmp/c.img" || fail "tandemd does not use the new disk $tmp/c.img"
opens a "$tmp/a.img" && fail "tandemd still has the old disk $tmp/a.img open"
echo "ok: a restart after a disk change uses the new disk"
# changed while up: start takes the Secondary down and up again
sed -i "s|disk $tmp/c.img;|disk $tmp/a.img;|" "$conf"
ra_clone a notify OCF_RESKEY_CRM_meta_notify_type=pre OCF_RESKEY_CRM_meta_notify_operation=start
expect 0 "a pre-start notification" "pre-start: tandemd re-read"
[ "$(field a config_pending)" = True ] ||
	fail "after the re-read, status does not say config_pending ($(field a config_pending))"
echo "ok: the pre-start notification re-read the configuration (config_pending)"
ra_clone a start
expect 0 "start of a running Secondary whose disk changed" "taking it down to apply them"
opens a "$tmp/a.img" || fail "tandemd does not use the disk $tmp/a.img again"
opens a "$tmp/c.img" && fail "tandemd still has $tmp/c.img open"
echo "ok: start applied a disk change to a resource that was up"

# ---------------------------------------------------------------- notify post-promote

# alice disconnected and Secondary, Pacemaker promotes bob: without
# fencing nothing happens; with fencing alice outdates itself.
wait_for a connection Connected 30
wait_for a disk UpToDate 60
on a disconnect r0
wait_for a connection StandAlone 10
post_promote_bob() {
	ra_clone a notify OCF_RESKEY_CRM_meta_notify_type=post \
		OCF_RESKEY_CRM_meta_notify_operation=promote "OCF_RESKEY_CRM_meta_notify_promoted_uname= " \
		OCF_RESKEY_CRM_meta_notify_promote_uname=bob "OCF_RESKEY_CRM_meta_notify_stop_uname= " \
		"OCF_RESKEY_CRM_meta_notify_demote_uname= " "$@"
}
post_promote_bob
expect 0 "post-promote of bob without fencing"
[ "$(field a disk)" = UpToDate ] || fail "without fencing alice became $(field a disk)"
echo "ok: without fencing a post-promote leaves the disconnected Secondary UpToDate"
ra_clone a stop
expect 0 "stop alice"
kill_alice
write_repl_conf "$tmp/f.conf" "$net" 'fencing resource-only;'
sed -i 's|^resource r0 {|resource r0 {\n\thandlers { fence-peer "/bin/false"; }|' "$tmp/f.conf"
conf=$tmp/f.conf
conf_of=$tmp/f.conf
ra_clone a start OCF_RESKEY_wfc_timeout=none
expect 0 "start alice with fencing resource-only"
# Consistent until the peer confirms (fencing), then UpToDate
wait_for a disk UpToDate 30
on a disconnect r0
wait_for a connection StandAlone 10
post_promote_bob
expect 0 "post-promote of bob with fencing" "the local data is now Outdated (fencing)"
[ "$(field a disk)" = Outdated ] || fail "with fencing alice is $(field a disk), not Outdated"
expect_score a none "the outdated Secondary has no score"
echo "ok: with fencing a post-promote outdated the disconnected Secondary"
ra_clone a stop
expect 0 "stop alice"
kill_spawned
