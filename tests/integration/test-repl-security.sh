#!/bin/sh
# Attacks on the replication port before authentication
# (doc/wire-protocol.md §5.4 version 2, §5.5), by wire-impostor.py, which
# speaks the setup phase from the document alone, against alice; two
# resources r0 and r1 share the secret through common. For each attack:
# alice logs "connection from IP:PORT refused: <reason>" with the
# impostor's real address, her resource keeps its state (WFConnection, disk
# UpToDate, data unchanged), and the real bob connects afterwards within
# the pre-auth deadline plus connect-int.
#
#   0  control: the impostor with the secret authenticates both sockets
#   R  a burst of 200 refused connections logs one line; the next line
#      counts the suppressed ones
#   1  a third address claiming to be bob: refused before a byte is read
#   2  bob's address, no secret: a made-up response
#   8  bob's address: garbage instead of a P_HELLO
#   3a reflection between r0 and r1 (alice as acceptor answers nothing
#      before the initiator's proof)
#   3b alice as initiator proves herself to an impostor that listens on
#      bob's address; her proof relayed into r1
#   5  the same proof replayed on a new attempt of r0
#   4  relayed into a meta socket of the proof's conn_id
#   6  bob with a wrong secret, then the right one
#   7  a stalled P_HELLO header: closed at its deadline, logged
#   9  a flood of stalled connections from bob's address (one every 20 ms,
#      each kept open): bob still connects within 4 s, in the middle of it
#   and a stranger while Connected; in the end alice's data is unchanged
#
# Timing (a loaded 2-core machine): connect-int is 1 s, ping-timeout the
# default 0.5 s, so alice waits 2 s (4 x ping-timeout) for each packet and
# 5 s for the whole setup of a socket. "Bob connects within the pre-auth
# deadline" is checked as: alice Connected within 5 s + connect-int + 3 s
# of slack = 9 s of the moment bob (or the stall) started; unloaded it
# takes 0.2-2 s (7: about 6 s). A lock-out would never connect.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"
requires python3

impostor=$(cd "$(dirname "$0")" && pwd)/wire-impostor.py
[ -f "$impostor" ] || fail "no $impostor"
CONNECT_BOUND=9 # s: 5 s pre-auth deadline + connect-int 1 s + 3 s slack
ip_c=$net.3 # the third address, on bob's side of the link
ip -n "$ns_b" addr add "$ip_c/24" dev "vb$$"

# the same 1 MiB of data at the start of both disks of each resource, so
# that skipping the initial sync leaves both UpToDate with data worth
# comparing
head -c 1M /dev/urandom >"$tmp/seed"
for f in a b a1 b1; do
	new_image "$tmp/$f.img" 32M
	dd if="$tmp/seed" of="$tmp/$f.img" conv=notrunc status=none
done

# write_sec_conf FILE SECRET (timeout 0.9 s: below connect-int, as the
# configuration check asks)
write_sec_conf() {
	cat >"$1" <<CONF
common { net { cram-hmac-alg sha256; shared-secret "$2"; connect-int 1; timeout 9; } }
resource r0 {
	on alice { device minor 0; disk $tmp/a.img; meta-disk internal; address $ip_a:7789; }
	on bob { device minor 0; disk $tmp/b.img; meta-disk internal; address $ip_b:7789; }
}
resource r1 {
	on alice { device minor 1; disk $tmp/a1.img; meta-disk internal; address $ip_a:7790; }
	on bob { device minor 1; disk $tmp/b1.img; meta-disk internal; address $ip_b:7790; }
}
CONF
}
write_sec_conf "$tmp/t.conf" s3cret
write_sec_conf "$tmp/bad.conf" wrong

# rfield a|b RES NAME: field, for any resource, from sh-status (no python:
# each python3 start costs most of a second on a loaded machine)
rfield() {
	case $3 in
	connection) k=_cstate ;; role) k=_role ;; disk) k=_disk ;; peer_disk) k=_pdsk ;;
	size_sect) k=_size_sect ;; *) fail "rfield: no field $3" ;;
	esac
	on "$1" sh-status "$2" | sed -n "s/^$k=//p" | head -n 1
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
re() { printf '%s' "$1" | sed 's/[].[]/\\&/g'; } # an address as a grep -E pattern

# wait_res a|b RES VALUE SECONDS: until the connection state of RES is VALUE,
# bounded in wall-clock time
wait_res() {
	wr_end=$(($(date +%s) + $4))
	until [ "$(rfield "$1" "$2" connection)" = "$3" ]; do
		if [ "$(date +%s)" -gt "$wr_end" ]; then
			echo "--- alice"; tail -n 30 "$tmp/tandemd-a.log"
			echo "--- bob"; tail -n 30 "$tmp/tandemd-b.log"
			fail "$(node_name "$1") $2: $(rfield "$1" "$2" connection) after $4 s, expected $3"
		fi
		sleep 0.1
	done
}

# imp NS OUT MODE ARGS...: the impostor in a namespace, its key=value
# output in OUT (and in the test's log)
imp() {
	i_ns=$1 i_out=$2
	shift 2
	ip netns exec "$i_ns" python3 "$impostor" "$@" >"$i_out" 2>"$i_out.err" ||
		{ cat "$i_out" "$i_out.err"; fail "wire-impostor $*: could not run its attack"; }
	sed 's/^/    impostor: /' "$i_out"
}
kv() { sed -n "s/^$1=//p" "$2" | head -n 1; }
want_kv() { # want_kv FILE KEY VALUE WHAT
	[ "$(kv "$2" "$1")" = "$3" ] || { cat "$1"; fail "$4: $2=$(kv "$2" "$1"), expected $3"; }
}

# refused RES IP:PORT REASON-PATTERN: alice logged the refusal of that very
# connection (the impostor's source port, from its getsockname)
refused() {
	wait_log a "\[$1\] connection from $(re "$2") refused: $3" 10
}

# unchanged RES: what an unauthenticated stranger must not change
unchanged() {
	us=$(on a sh-status "$1")
	u=$(for k in cstate role disk; do printf '%s\n' "$us" | sed -n "s/^_$k=//p"; done | paste -sd /)
	[ "$u" = WFConnection/Secondary/UpToDate ] ||
		fail "alice $1 is $u after the attack, expected WFConnection/Secondary/UpToDate"
}

# bob_away RES: bob leaves RES (StandAlone, his listener closed), alice waits
bob_away() {
	on b disconnect "$1"
	wait_res a "$1" WFConnection 10
}

# bob_back RES WHAT: bob connects RES; alice is Connected within the bound
bob_back() {
	bb_t0=$(now)
	on b connect "$1"
	wait_res a "$1" Connected "$CONNECT_BOUND"
	bb=$(elapsed "$bb_t0")
	le "$bb" "$CONNECT_BOUND" || fail "$2: bob connected after $bb s, bound $CONNECT_BOUND s"
	echo "ok: $2: then bob connects ($1, in $bb s)"
}

data_sum() { head -c "$(( $(rfield a "$1" size_sect) * 512 ))" "$2" | sha256sum; }

# ---------------------------------------------------------------- setup
peer_uptodate() { [ "$(rfield a "$1" peer_disk)" = UpToDate ]; }
for r in r0 r1; do
	on a create-md --force "$r" >/dev/null
	on b create-md --force "$r" >/dev/null
done
start_node a
start_node b
for r in r0 r1; do on a up "$r"; on b up "$r"; done
for r in r0 r1; do
	wait_res a "$r" Connected 20
	on a new-current-uuid --clear-bitmap "$r"
done
for r in r0 r1; do
	wait_until 20 "$r: bob UpToDate after new-current-uuid" peer_uptodate "$r"
done
sum0=$(data_sum r0 "$tmp/a.img")
sum1=$(data_sum r1 "$tmp/a1.img")
echo "ok: r0 and r1 connected, authenticated, UpToDate on both nodes"

# ---------------------------------------------------------------- 0 control
# The impostor's encodings of P_HELLO, P_AUTH_CHALLENGE, P_AUTH_RESPONSE and
# M (§5.4) are right: with the secret it authenticates the data and the meta
# socket as bob (and alice, the acceptor, sends nothing before its proof).
# Without this, every refusal below could be a bug in the impostor.
bob_away r0
log_mark a
imp "$ns_b" "$tmp/o0" auth "$ip_a:7789" --bind "$ip_b" --secret s3cret
want_kv "$tmp/o0" data_ok yes "control, data socket"
want_kv "$tmp/o0" meta_ok yes "control, meta socket"
grep -q '^early_bytes' "$tmp/o0" && fail "control: alice sent something before the initiator's proof"
wait_log a "\[r0\] connected to bob \($(re "$(kv local "$tmp/o0")")\), as acceptor, authenticated \(cram-hmac-version 2\)" 10
wait_res a r0 WFConnection 10 # the impostor hung up
echo "ok: 0 control: with the secret the impostor authenticates both sockets"
bob_back r0 "0 control"

# ---------------------------------------------------------------- R rate limit
# 200 connections from a stranger's address on r1 in at most 3 s, each
# closed by alice before the next: one line (bound: 3), the rest counted
# and named in r1's next logged refusal, which 3a below provokes more than
# 10 s later.
bob_away r1
log_mark a
t_burst=$(date +%s)
imp "$ns_b" "$tmp/oR" burst "$ip_a:7790" --bind "$ip_c" --count 200 --seconds 3 --timeout 5
n_burst=$(kv connections "$tmp/oR")
[ "$n_burst" -ge 50 ] || fail "rate limit: only $n_burst connections in 3 s"
lines=$(log_since_mark a | grep -c '\[r1\] connection from .* refused' || true)
[ "$lines" -ge 1 ] && [ "$lines" -le 3 ] ||
	{ log_since_mark a | grep refused | head; fail "rate limit: $lines refusals logged for $n_burst connections"; }
log_since_mark a | grep -Eq "\[r1\] connection from $(re "$ip_c"):[0-9]+ refused: not the peer's address" ||
	fail "rate limit: the first refusal is not logged"
unchanged r1
echo "ok: R rate limit: $n_burst refused connections in $(kv elapsed "$tmp/oR") s, $lines line(s) logged"

# ---------------------------------------------------------------- 1 third address
# A stranger's address claiming bob's name: closed before one byte is read,
# so alice never answers with her P_HELLO (§5.1 would have her answer any
# P_HELLO she read).
bob_away r0
log_mark a
imp "$ns_b" "$tmp/o1" hello "$ip_a:7789" --bind "$ip_c" --timeout 10
want_kv "$tmp/o1" received_bytes 0 "1 third address"
refused r0 "$(kv local "$tmp/o1")" "not the peer's address $(re "$ip_b")"
unchanged r0
echo "ok: 1 third address: refused before reading, logged with $(kv local "$tmp/o1")"
bob_back r0 "1 third address"

# ---------------------------------------------------------------- 2 no secret
bob_away r0
log_mark a
imp "$ns_b" "$tmp/o2" wrong-response "$ip_a:7789" --bind "$ip_b"
want_kv "$tmp/o2" got_response no "2 no secret"
refused r0 "$(kv local "$tmp/o2")" "Authentication of peer failed"
unchanged r0
echo "ok: 2 bob's address without the secret: refused, alice answered nothing"
bob_back r0 "2 no secret"

# ---------------------------------------------------------------- 8 garbage
bob_away r0
log_mark a
imp "$ns_b" "$tmp/o8" garbage "$ip_a:7789" --bind "$ip_b" --bytes 512
want_kv "$tmp/o8" got_hello no "8 garbage"
refused r0 "$(kv local "$tmp/o8")" "bad first packet"
unchanged r0
echo "ok: 8 garbage from bob's address: refused"
bob_back r0 "8 garbage"

# ---------------------------------------------------------------- 3a reflection
# The impostor opens an attempt on r0 and one on r1 and gives each the
# other's challenge as its own: DRBD's version 1 would answer at once, and
# alice's answer on one would be the proof the other expects. Version 2's
# acceptor waits for the initiator's proof; the impostor waits 1 s (below
# alice's 2 s for a packet) for an answer to relay, then has to make one up.
#
# The rate limit is per time, so this needs r1's burst 10 s behind it:
# there is no event to wait for, only the clock (usually passed already).
bob_away r0
while [ "$(date +%s)" -lt $((t_burst + 11)) ]; do sleep 0.2; done
log_mark a
imp "$ns_b" "$tmp/o3a" reflect "$ip_a:7789" "$ip_a:7790" --bind "$ip_b" --res r0 --res2 r1 --wait 1
want_kv "$tmp/o3a" got_response_a no "3a reflection, r0"
want_kv "$tmp/o3a" got_response_b no "3a reflection, r1"
refused r0 "$(kv local_a "$tmp/o3a")" "Authentication of peer failed"
refused r1 "$(kv local_b "$tmp/o3a")" "Authentication of peer failed"
unchanged r0
unchanged r1
echo "ok: 3a reflection r0 <-> r1: alice answered neither, both refused"
# ... and this r1 line reports the burst
sup=$(log_since_mark a | sed -n 's/.*\[r1\] connection from .* refused: .*(and \([0-9]*\) more like it in the last \([0-9]*\) s)$/\1 \2/p' | head -n 1)
[ -n "$sup" ] || { log_since_mark a | grep '\[r1\]'; fail "rate limit: r1's next refusal does not count the suppressed ones"; }
set -- $sup
[ "$1" -ge $((n_burst - lines)) ] || fail "rate limit: $1 suppressed refusals reported, $n_burst - $lines expected"
[ "$2" -ge 10 ] && [ "$2" -le 60 ] || fail "rate limit: over $2 s"
echo "ok: R rate limit: the next line reports $1 suppressed refusals in $2 s"
bob_back r0 "3a reflection"
bob_back r1 "3a reflection" # a fresh rate limit on r1 for 3b

# ---------------------------------------------------------------- 3b relay
# The impostor listens on bob's address:port for r0; alice connects as
# initiator and, as version 2 has her, proves herself first. That proof
# (checked genuine with the secret, which the attack does not use) is
# relayed into an attempt on r1, with the same conn_id: refused, since M
# names the resource, the roles, the names and alice's fresh challenge.
bob_away r1
bob_away r0
log_mark a
imp "$ns_b" "$tmp/cap" capture "$ip_b:7789" --out "$tmp/capture.json" --check-secret s3cret --timeout 10
want_kv "$tmp/cap" captured yes "3b capture"
want_kv "$tmp/cap" capture_valid yes "3b capture"
# alice's own attempt fails, with the impostor's address: bob's listener
refused r0 "$ip_b:7789" "Authentication of peer failed: it closed the connection"
imp "$ns_b" "$tmp/o3b" relay "$ip_a:7790" --bind "$ip_b" --res r1 --in "$tmp/capture.json"
want_kv "$tmp/o3b" got_response no "3b relay into r1"
refused r1 "$(kv local "$tmp/o3b")" "Authentication of peer failed"
unchanged r1
unchanged r0
echo "ok: 3b alice's proof on r0 (as initiator) relayed into r1: refused"
bob_back r0 "3b relay"

# ---------------------------------------------------------------- 5 replay
# The recorded exchange replayed to alice on r0: same conn_id, alice's old
# challenge offered back, her proof: her fresh challenge (and the role) is
# in M.
bob_away r0
log_mark a
imp "$ns_b" "$tmp/o5" relay "$ip_a:7789" --bind "$ip_b" --res r0 --in "$tmp/capture.json"
want_kv "$tmp/o5" got_response no "5 replay"
refused r0 "$(kv local "$tmp/o5")" "Authentication of peer failed"
unchanged r0
echo "ok: 5 replay of alice's recorded proof: refused"
bob_back r0 "5 replay"

# ---------------------------------------------------------------- 4 data -> meta
# A meta socket is paired only with an authenticated data socket of its
# conn_id (§5.1 step 5): the impostor opens a data socket with the captured
# conn_id, cannot prove it, and offers the captured data-socket proof on a
# meta socket of that conn_id. Alice never starts authentication on the
# meta socket, and refuses the data socket at its deadline.
bob_away r0
log_mark a
imp "$ns_b" "$tmp/o4" meta-relay "$ip_a:7789" --bind "$ip_b" --res r0 --in "$tmp/capture.json"
want_kv "$tmp/o4" meta_got_challenge no "4 meta relay"
want_kv "$tmp/o4" meta_got_response no "4 meta relay"
want_kv "$tmp/o4" got_response no "4 meta relay, data socket"
case $(kv meta_closed "$tmp/o4") in eof | reset) ;; *) fail "4: alice kept the meta socket open" ;; esac
refused r0 "$(kv local "$tmp/o4")" "during authentication: no response in time"
unchanged r0
echo "ok: 4 data-socket proof relayed into a meta socket: no authentication on it, refused"
bob_back r0 "4 meta relay"

# ---------------------------------------------------------------- 6 wrong secret
# The real bob with another secret: a misconfiguration between the real
# nodes is retried, not a lock-out: both stay WFConnection.
on b down r0
on b down r1
stop_node b
log_mark a
start_node b "$tmp/bad.conf"
conf_of=$tmp/bad.conf on b up r0
wait_log a "\[r0\] connection from $(re "$ip_b"):[0-9]+ refused: Authentication of peer failed" 10
conf_of=$tmp/bad.conf wait_res b r0 WFConnection 5
unchanged r0
echo "ok: 6 bob with a wrong secret: refused, logged with his address, both WFConnection"
conf_of=$tmp/bad.conf on b down r0
stop_node b
start_node b
t6=$(now)
on b up r0
on b up r1
wait_res a r0 Connected "$CONNECT_BOUND"
wait_res a r1 Connected "$CONNECT_BOUND"
echo "ok: 6 wrong secret: then bob with the right one connects r0 and r1 (in $(elapsed "$t6") s)"

# ---------------------------------------------------------------- 7 stall
# 16 header bytes of a P_HELLO, then silence on an open socket: alice
# closes it at its deadline (5 s) and logs it; nothing else waits for it.
bob_away r0
log_mark a
imp "$ns_b" "$tmp/o7" stall "$ip_a:7789" --bind "$ip_b" --timeout 30
sed 's/^/    impostor: /' "$tmp/o7"
case $(kv closed "$tmp/o7") in eof | reset) ;; *) fail "7: alice never closed the stalled socket" ;; esac
# closed at the deadline: not before 4 x ping-timeout, not much after 5 s
c7=$(kv closed_after "$tmp/o7")
le 1.5 "$c7" && le "$c7" 8 || fail "7: the stalled socket was closed after $c7 s, expected 2..5 s"
refused r0 "$(kv local "$tmp/o7")" "no P_HELLO in time"
unchanged r0
echo "ok: 7 stalled header: closed after $c7 s, logged"
bob_back r0 "7 stall"

# ---------------------------------------------------------------- 9 flood
# A process on bob's own address opens a connection every 20 ms, each as
# far as it gets without the secret, and keeps them all open: more than
# the 8 sockets alice sets up at once. Each new one evicts the one that
# got least far, so the real bob, connecting in the middle of it, is in
# within his own connect-int and a round trip: not after the 5 s deadline
# of the stalls ahead of him.
flood_bound=4 # s: connect-int 1 s + the handshake + slack; below the 5 s deadline
bob_away r0
log_mark a
ip netns exec "$ns_b" python3 "$impostor" flood "$ip_a:7789" --bind "$ip_b" --interval 0.02 \
	--seconds 8 --count 400 --full 16 --timeout 5 >"$tmp/o9" 2>"$tmp/o9.err" &
flood_pid=$!
kill_flood() { [ -z "${flood_pid:-}" ] || kill "$flood_pid" 2>/dev/null || true; }
cleanup_hooks="kill_flood $cleanup_hooks"
wait_grep "$tmp/o9" '^flooding=yes' 10
t9=$(now)
on b connect r0
wait_res a r0 Connected "$flood_bound"
d9=$(elapsed "$t9")
wait "$flood_pid" || { cat "$tmp/o9" "$tmp/o9.err"; fail "9: the flood tool failed"; }
flood_pid=
sed 's/^/    impostor: /' "$tmp/o9"
le "$d9" "$flood_bound" || fail "9: bob connected $d9 s into the flood, bound $flood_bound s"
[ "$(kv closed_by_daemon "$tmp/o9")" -ge 8 ] || fail "9: alice closed only $(kv closed_by_daemon "$tmp/o9") flood connections"
wait_log a "\[r0\] connection from $(re "$ip_b"):[0-9]+ refused: 8 connections from the peer's address are in setup" 10
[ "$(on a sh-status r0 | sed -n 's/^_disk=//p')" = UpToDate ] || fail "9: alice's r0 is not UpToDate after the flood"
echo "ok: 9 flood of $(kv opened "$tmp/o9") stalled connections from bob's address: bob connected in $d9 s"

# ---------------------------------------------------------------- while connected
# A stranger while both resources are Connected changes nothing. The
# observation window is the impostor's 3 s wait for an answer, longer than
# alice's 2 s for a packet and the time she needs to close a stranger.
imp "$ns_b" "$tmp/oC" hello "$ip_a:7789" --bind "$ip_c" --timeout 3
want_kv "$tmp/oC" received_bytes 0 "a stranger while Connected"
for r in r0 r1; do
	[ "$(on a cstate "$r")/$(on b cstate "$r")" = Connected/Connected ] ||
		fail "$r: $(on a cstate "$r")/$(on b cstate "$r") after a stranger, expected Connected"
done
echo "ok: a stranger while Connected: both resources stay Connected"

# ---------------------------------------------------------------- the data
[ "$(data_sum r0 "$tmp/a.img")" = "$sum0" ] || fail "alice's r0 data changed"
[ "$(data_sum r1 "$tmp/a1.img")" = "$sum1" ] || fail "alice's r1 data changed"
same_data "after the attacks"
cmp -n "$(( $(rfield a r1 size_sect) * 512 ))" "$tmp/a1.img" "$tmp/b1.img" || fail "r1's disks differ"
for r in r0 r1; do
	[ "$(rfield a "$r" disk)/$(rfield a "$r" peer_disk)" = UpToDate/UpToDate ] ||
		fail "$r: $(rfield a "$r" disk)/$(rfield a "$r" peer_disk) at the end"
done
echo "ok: alice's data unchanged by every attack, both resources UpToDate on both nodes"
