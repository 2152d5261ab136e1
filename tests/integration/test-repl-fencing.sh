#!/bin/sh
# Fencing policies on two namespace nodes, with a scripted fence-peer
# handler whose exit code the test chooses:
#  - resource-only: a Primary that loses its peer runs fence-peer (with
#    DRBD's environment) while I/O goes on; exit 4 marks the peer Outdated
#    (persisted); after the heal and the resync, unfence-peer runs;
#  - resource-and-stonith: writes freeze from the link loss until the
#    verdict (exit 7), then complete; a broken handler (exit 1) keeps them
#    frozen, status says so, resume-io lifts it; the peer coming back lifts
#    it too and a late verdict is ignored;
#  - promoting a disconnected Secondary needs a successful fence-peer:
#    refused (exit 11) when it fails, done when it outdates the peer.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdsh
requires python3

# fence-peer: its verdict is $tmp/fence-code; while $tmp/fence-hold exists
# it does not give it (the test removes the file to let it go on; 5
# minutes at most), so that "while fence-peer runs" is a state of the
# test, not a guess about how long a sleep lasts
cat >"$tmp/fence-peer" <<EOF
#!/bin/sh
env >"$tmp/fence-env"
echo "\$(hostname) \$TANDEM_ROLE" >>"$tmp/fence-ran"
i=0
while [ -e "$tmp/fence-hold" ] && [ \$i -lt 3000 ]; do i=\$((i + 1)); sleep 0.1; done
exit "\$(cat "$tmp/fence-code")"
EOF
cat >"$tmp/unfence-peer" <<EOF
#!/bin/sh
echo "\$DRBD_RESOURCE \$TANDEM_DISK \$TANDEM_PEER_DISK" >>"$tmp/unfence-ran"
EOF
chmod +x "$tmp/fence-peer" "$tmp/unfence-peer"

# setup POLICY: fresh disks, connected, both UpToDate, alice Primary
setup() {
	stop_pair
	heal_link # a case may end with the link cut
	rm -f "$tmp/fence-ran" "$tmp/unfence-ran" "$tmp/fence-env" "$tmp/fence-hold"
	new_image "$tmp/a.img" 32M
	new_image "$tmp/b.img" 32M
	write_repl_conf "$tmp/t.conf" 'protocol C; ping-int 1; ping-timeout 5; connect-int 1; timeout 5;' \
		"fencing $1; resync-rate 100M; c-plan-ahead 0;"
	sed -i "s|^resource r0 {|resource r0 {\n\thandlers { fence-peer \"$tmp/fence-peer\"; unfence-peer \"$tmp/unfence-peer\"; }|" "$tmp/t.conf"
	: >"$tmp/tandemd-a.log"
	: >"$tmp/tandemd-b.log"
	blank_pair
}

cut_link() { ip -n "$ns_a" link set "va$$" down; }
heal_link() { ip -n "$ns_a" link set "va$$" up; }

# fencing NODE KEY: a field of status --json's fencing object (no python:
# polled often)
fencing() {
	on "$1" status --json r0 | tr -d ' \n' | grep -o '"fencing":{[^}]*}' |
		grep -o "\"$2\":[^,}]*" | cut -d: -f2
}

# wait_fencing NODE KEY VALUE [SECONDS]
wait_fencing() {
	i=0
	until [ "$(fencing "$1" "$2")" = "$3" ]; do
		i=$((i + 1))
		[ $i -lt $((${4:-20} * 10)) ] || { tail -n 20 "$tmp/tandemd-$1.log"; fail "fencing $2 is $(fencing "$1" "$2"), expected $3"; }
		sleep 0.1
	done
}

hold_verdict() { : >"$tmp/fence-hold"; }
give_verdict() { rm -f "$tmp/fence-hold"; }

# write_bg OFFSET: a 4 KiB write with FUA through alice's export, in the
# background (a simple command: $! is nbdsh); returns once the client is
# connected and about to send the write ($tmp/writing)
write_bg() {
	rm -f "$tmp/writing"
	PATH=/usr/bin:$PATH nbdsh -u "$(nbd_uri_of a)" \
		-c "open('$tmp/writing', 'w').close(); h.pwrite(b'x' * 4096, $1, nbd.CMD_FLAG_FUA)" &
	writer=$!
	wait_until 30 "the writer to connect to alice's export" writing
}
writing() { [ -e "$tmp/writing" ] || ! still_running "$writer"; }
still_running() { kill -0 "$1" 2>/dev/null; }
writer_done() { ! still_running "$writer"; }

# frozen_window: the write reached the daemon and waits there (the volume
# counts it in "frozen"), and has not completed; fence-peer is held, so
# the freeze cannot end by itself meanwhile.
frozen_window() {
	wait_for a frozen 1 20
	still_running $writer || fail "$1: a write completed while I/O was frozen"
}

# ---- with fencing, disks attach Consistent; connected with the same data
# they are UpToDate again (else nothing could be promoted)
setup resource-only
on a secondary r0
on a down r0
on b down r0
on a up r0
on b up r0
on a wait-connect --timeout 20 r0 >/dev/null || fail "reconnect after down/up"
wait_for a disk UpToDate 30
wait_for b disk UpToDate 30
grep -q 'disk( Attaching -> Consistent ) attach' "$tmp/tandemd-a.log" || fail "alice did not attach Consistent"
on a primary r0 || fail "promotion after down/up"
echo "ok: fencing: disks attach Consistent and become UpToDate when connected with the same data"

# ---- resource-only
# fence-peer is held until the write is done: had the write waited for it,
# it would not complete at all
echo 4 >"$tmp/fence-code"
hold_verdict
cut_link
wait_fencing a running true 30
write_bg 0
wait_until 30 "resource-only: the write to complete while fence-peer runs" writer_done
wait $writer || fail "resource-only: the write failed"
[ "$(fencing a running)" = true ] || fail "resource-only: fence-peer ended while held"
[ "$(fencing a io_frozen)" = false ] || fail "resource-only froze I/O"
give_verdict
wait_for a peer_disk Outdated 30
grep -q 'fence-peer helper returned 4 (peer is outdated)' "$tmp/tandemd-a.log" || fail "verdict not logged"
grep -q "^DRBD_RESOURCE=r0$" "$tmp/fence-env" && grep -q "^DRBD_PEER_ADDRESS=$ip_b$" "$tmp/fence-env" ||
	fail "fence-peer environment"
[ "$(fencing a peer_outdated)" = true ] || fail "PEER_OUT_DATED not recorded"
echo "ok: resource-only: fence-peer ran with DRBD's environment while writes went on; peer Outdated"
heal_link
wait_for a connection Connected 30
on a wait-sync --timeout 30 r0 >/dev/null || fail "resync after the heal"
i=0
until [ -s "$tmp/unfence-ran" ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "unfence-peer did not run in 30 s"; sleep 0.1
done
grep -q '^r0 UpToDate UpToDate$' "$tmp/unfence-ran" || fail "unfence-peer ran before both were UpToDate: $(cat "$tmp/unfence-ran")"
[ "$(fencing a peer_outdated)" = false ] || fail "PEER_OUT_DATED not cleared"
same_data "after the heal"
echo "ok: resource-only: after the heal, resync, then unfence-peer with both UpToDate"

# ---- resource-and-stonith: frozen until the verdict
setup resource-and-stonith
echo 7 >"$tmp/fence-code"
hold_verdict
cut_link
wait_fencing a running true 30
[ "$(fencing a io_frozen)" = true ] || fail "stonith: I/O not frozen"
write_bg 8192
frozen_window "stonith"
on a status r0 | grep -q 'I/O frozen by fencing' || { on a status r0; fail "status does not say I/O is frozen"; }
give_verdict
wait $writer || fail "stonith: the frozen write failed"
[ "$(fencing a io_frozen)" = false ] || fail "stonith: still frozen after the verdict"
[ "$(field a peer_disk)" = Outdated ] || fail "stonith: peer not Outdated"
grep -q 'fence-peer helper returned 7 (peer was stonithed)' "$tmp/tandemd-a.log" || fail "verdict 7 not logged"
echo "ok: resource-and-stonith: writes frozen until fence-peer said 7, then completed"
heal_link
wait_for a connection Connected 30
on a wait-sync --timeout 30 r0 >/dev/null || fail "resync after the heal"

# ---- resource-and-stonith, broken handler: frozen until resume-io
# (fence-peer has given its verdict here: the freeze only ends by resume-io)
echo 1 >"$tmp/fence-code"
cut_link
wait_fencing a last_result 1 30
[ "$(fencing a io_frozen)" = true ] || fail "broken handler: I/O not frozen"
grep -q 'fence-peer helper returned 1 (no verdict' "$tmp/tandemd-a.log" || fail "a handler without a verdict not logged"
write_bg 16384
frozen_window "broken handler"
on a resume-io r0 || fail "resume-io"
wait $writer || fail "the write after resume-io failed"
[ "$(fencing a io_frozen)" = false ] || fail "resume-io did not lift the freeze"
set +e
on a resume-io r0 >"$tmp/out" 2>&1
rc=$?
set -e
[ $rc -eq 11 ] && grep -q 'not frozen' "$tmp/out" || { cat "$tmp/out"; fail "resume-io when not frozen: exit $rc"; }
echo "ok: resource-and-stonith: a broken handler keeps I/O frozen; resume-io lifts it"
heal_link
wait_for a connection Connected 30
on a wait-sync --timeout 30 r0 >/dev/null || fail "resync after the heal"

# ---- resource-and-stonith: the peer comes back before the verdict
# fence-peer is held until alice is connected again: its verdict comes late
echo 4 >"$tmp/fence-code"
hold_verdict
cut_link
wait_fencing a running true 30
write_bg 24576
frozen_window "reconnect case"
heal_link
wait_for a connection Connected 30
wait $writer || fail "the write after the reconnect failed"
[ "$(fencing a io_frozen)" = false ] || fail "the reconnect did not lift the freeze"
[ "$(fencing a running)" = true ] || fail "reconnect case: fence-peer ended while held"
give_verdict
wait_fencing a running false 30
grep -q 'fence-peer helper returned 4 (peer is outdated), ignored: connected again' "$tmp/tandemd-a.log" ||
	fail "the late verdict was not ignored"
[ "$(field a peer_disk)" = UpToDate ] || on a wait-sync --timeout 30 r0 >/dev/null
echo "ok: resource-and-stonith: the peer's return lifts the freeze; the late verdict is ignored"

# ---- promoting a disconnected Secondary needs fencing
setup resource-only
on a secondary r0
echo 1 >"$tmp/fence-code"
cut_link
wait_for b connection WFConnection 30
rm -f "$tmp/fence-ran"
set +e
on b primary r0 >"$tmp/out" 2>&1
rc=$?
set -e
[ $rc -eq 11 ] && grep -q 'Refusing to be Primary while peer is not outdated' "$tmp/out" ||
	{ cat "$tmp/out"; fail "promotion without fencing: exit $rc"; }
[ -s "$tmp/fence-ran" ] || fail "promotion did not run fence-peer"
echo 4 >"$tmp/fence-code"
on b primary r0 || fail "promotion after a successful fence-peer"
[ "$(field b role)" = Primary ] && [ "$(field b peer_disk)" = Outdated ] || fail "b: $(field b role) $(field b peer_disk)"
echo "ok: promoting a disconnected Secondary: refused when fence-peer fails, done when it outdates the peer"

# ---- outdate on an up resource (drbdadm outdate semantics)
on a outdate r0 || fail "outdate of a disconnected Secondary"
[ "$(field a disk)" = Outdated ] || fail "alice's disk is $(field a disk) after outdate"
on a dstate r0 | grep -q '^Outdated/' || fail "dstate after outdate"
set +e
on b outdate r0 >"$tmp/out" 2>&1
rc=$?
set -e
[ $rc -eq 17 ] && grep -q 'Need access to UpToDate data' "$tmp/out" || { cat "$tmp/out"; fail "outdate of a Primary: exit $rc"; }
echo "ok: outdate: a disconnected Secondary becomes Outdated; a Primary refuses (17)"

# ---- primary --force when fencing cannot outdate the peer
setup resource-only
on a secondary r0
echo 1 >"$tmp/fence-code"
cut_link
wait_for b connection WFConnection 30
on b primary --force r0 || fail "primary --force"
grep -q 'Forced into split brain situation!' "$tmp/tandemd-b.log" || fail "the forced split brain is not logged"
[ "$(field b peer_disk)" = Outdated ] || fail "primary --force: peer disk $(field b peer_disk)"
echo "ok: primary --force without a fencing verdict: 'Forced into split brain situation!', peer taken as Outdated"
