#!/bin/sh
# Resync handlers on two namespace nodes: a failing before-resync-target
# refuses the resync (StandAlone, logged); once it succeeds the resync runs
# and after-resync-target runs at its end, with DRBD's environment.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"

new_image "$tmp/a.img" 32M
new_image "$tmp/b.img" 32M
write_repl_conf "$tmp/t.conf" 'connect-int 1; timeout 5;'
sed -i "s|^resource r0 {|resource r0 {\n\thandlers {\n\t\tbefore-resync-target \"test -f $tmp/allow\";\n\t\tafter-resync-target \"echo \$DRBD_RESOURCE \$DRBD_VOLUME > $tmp/after\";\n\t}|" "$tmp/t.conf"
on a create-md --force r0 >/dev/null
on b create-md --force r0 >/dev/null
start_node a
start_node b
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
