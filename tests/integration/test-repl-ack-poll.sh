#!/bin/sh
# net { ack-poll-usec N; }: the meta thread busy-polls for the acks of
# writes and FLUSHes (doc/perf-repl.md, Low-latency mode). With N = 200,
# 400 QD1 write+FLUSH pairs and a burst of QD8 writes replicate exactly as
# without it, status shows the spin's budget and counters (every wait for
# a due ack begins with a spin while the budget lasts), and the connection
# still goes down and comes back cleanly while it spins. With the default
# 0, nothing spins and status has no ack_poll.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires nbdcopy

new_image "$tmp/a.img" 64M
new_image "$tmp/b.img" 64M
head -c 8M /dev/urandom >"$tmp/src"

# ack_poll a|b KEY: a field of status' ack_poll, or "none" without it
ack_poll() {
	on "$1" status --json r0 | python3 -c '
import json, sys
r = json.load(sys.stdin)["resources"][0]
print(r["ack_poll"][sys.argv[1]] if "ack_poll" in r else "none")' "$2"
}

write_flush_pairs() {
	nbdsh_ -u "$(nbd_uri_of a)" -c '
import os
for i in range(400):
    h.pwrite(os.urandom(4096), (i * 37 % 4096) * 4096)
    h.flush()
' || fail "the client saw an error in the write+FLUSH pairs"
}

# the default: no spinning
write_repl_conf "$tmp/t.conf" 'connect-int 1; timeout 5;'
blank_pair
[ "$(ack_poll a usec)" = none ] || fail "ack_poll in status without ack-poll-usec"
stop_pair

write_repl_conf "$tmp/t.conf" 'connect-int 1; timeout 5; ack-poll-usec 200;'
blank_pair
[ "$(ack_poll a usec)" = 200 ] || fail "ack_poll.usec is $(ack_poll a usec), expected 200"
write_flush_pairs
nbdcopy --requests=8 "$tmp/src" "$(nbd_uri_of a)" || fail "the client saw an error in the copy"
wait_idle a
wait_idle b
same_data "after the writes with ack-poll-usec 200"
cmp -n 8388608 "$tmp/src" "$tmp/b.img" || fail "bob does not hold the copied data"
spins=$(ack_poll a spins)
hits=$(ack_poll a hits)
budget=$(ack_poll a budget_usec)
echo "alice: spins $spins, hits $hits, budget now $budget us, spin_ms $(ack_poll a spin_ms)"
# 400 writes and 400 FLUSHes each woke the meta thread to wait for an ack
# while the write crossed the link: it spins whenever the ack is not there
# yet when it looks
[ "$spins" -gt 0 ] || fail "no spin in 800 acks of writes and FLUSHes"
[ "$hits" -le "$spins" ] || fail "more hits ($hits) than spins ($spins)"
[ "$budget" -ge 0 ] && [ "$budget" -le 200 ] || fail "budget $budget out of 0..200"
[ "$(ack_poll b usec)" = 200 ] || fail "bob: ack_poll.usec is $(ack_poll b usec)"
echo "ok: ack-poll-usec 200: the data replicated; status counts the spins"

# down and up again: the meta thread stops in its spin or its sleep, and
# the next connection spins with the same budget (counted anew)
on a disconnect r0
wait_for a connection StandAlone
on a connect r0
on a wait-connect --timeout 20 r0 >/dev/null || fail "no reconnect after disconnect"
wait_for b disk UpToDate
write_flush_pairs
wait_idle a
wait_idle b
same_data "after the reconnect"
[ "$(ack_poll a usec)" = 200 ] || fail "ack_poll.usec after the reconnect: $(ack_poll a usec)"
echo "ok: ack-poll-usec 200: disconnect, connect and more writes"
stop_pair
