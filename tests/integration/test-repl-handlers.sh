#!/bin/sh
# Resync handlers on two namespace nodes: a failing before-resync-target
# refuses the resync (StandAlone, logged); once it succeeds the resync runs
# and after-resync-target runs at its end, with DRBD's environment: every
# variable tandemd(8) lists, once each (a stale one in the daemon's own
# environment replaced), and the rest of the daemon's environment.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"

new_image "$tmp/a.img" 32M
new_image "$tmp/b.img" 32M
write_repl_conf "$tmp/t.conf" 'connect-int 1; timeout 5;'
sed -i "s|^resource r0 {|resource r0 {\n\thandlers {\n\t\tbefore-resync-target \"test -f $tmp/allow\";\n\t\tafter-resync-target \"env > $tmp/after-env; echo \$DRBD_RESOURCE \$DRBD_VOLUME > $tmp/after\";\n\t}|" "$tmp/t.conf"
on a create-md --force r0 >/dev/null
on b create-md --force r0 >/dev/null
start_node a
# bob's daemon inherits stale values of variables the handlers get
export DRBD_MINOR=stale TANDEM_HANDLER=stale TANDEM_SB_SAVE=stale
start_node b
unset DRBD_MINOR TANDEM_HANDLER TANDEM_SB_SAVE
on a up r0
on b up r0
on a wait-connect --timeout 20 r0 >/dev/null
on a primary --force r0
wait_for b connection StandAlone 20
grep -q 'before-resync-target exited with 1: no resync' "$tmp/tandemd-b.log" ||
	{ tail "$tmp/tandemd-b.log"; fail "refusal not logged"; }
[ "$(field b disk)" = Inconsistent ] || fail "bob's disk: $(field b disk)"
echo "ok: before-resync-target exit 1: no resync, StandAlone"

touch "$tmp/allow"
on b connect r0
on b wait-sync --timeout 60 r0 >/dev/null || fail "resync after the handler allowed it"
i=0
until [ -s "$tmp/after" ]; do i=$((i + 1)); [ $i -lt 50 ] || fail "after-resync-target did not run"; sleep 0.1; done
[ "$(cat "$tmp/after")" = "r0 0" ] || fail "after-resync-target environment: $(cat "$tmp/after")"
echo "ok: before-resync-target exit 0: resync; after-resync-target ran with DRBD_RESOURCE/DRBD_VOLUME"

# every documented variable (doc/tandemd.pod, Handlers), once, with its value
env_is() { # NAME VALUE
	n=$(grep -c "^$1=" "$tmp/after-env" || true)
	[ "$n" -eq 1 ] || fail "after-resync-target saw $1 $n times"
	v=$(sed -n "s/^$1=//p" "$tmp/after-env")
	[ "$v" = "$2" ] || fail "after-resync-target saw $1='$v', expected '$2'"
}
for p in DRBD TANDEM; do
	env_is ${p}_RESOURCE r0
	env_is ${p}_CONF "$tmp/t.conf"
	env_is ${p}_MINOR 0
	env_is ${p}_VOLUME 0
	env_is ${p}_LL_DISK "$tmp/b.img"
	env_is ${p}_PEER_ADDRESS "$ip_a"
	env_is ${p}_PEER_AF ipv4
	env_is ${p}_PEERS alice
done
env_is DRBD_PEER alice
env_is TANDEM_HANDLER after-resync-target
env_is TANDEM_ROLE Secondary
env_is TANDEM_RUN_DIR "$tmp/run-b"
for v in TANDEM_DISK TANDEM_CONNECTION TANDEM_PEER_DISK; do
	grep -q "^$v=[A-Z][A-Za-z]*\$" "$tmp/after-env" ||
		fail "after-resync-target: $v: $(grep "^$v=" "$tmp/after-env" || echo missing)"
done
env_is TANDEM_PEER_DISK UpToDate
! grep -q '^TANDEM_SB_SAVE=' "$tmp/after-env" || fail "TANDEM_SB_SAVE without a save set"
env_is LC_ALL C # the daemon's own environment, passed on
grep -q '^PATH=.' "$tmp/after-env" || fail "after-resync-target has no PATH"
echo "ok: after-resync-target saw every documented variable once, and the daemon's environment"
