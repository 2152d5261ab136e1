#!/bin/sh
# Bad input on the replication port: a connection from another address
# than the peer's, and from the peer's address garbage, a header with an
# oversized length, a truncated P_HELLO, and a real P_HELLO from a node that
# is not the configured peer. Each is refused with its reason and real
# source address (status: refused, last_refused; the log, rate-limited),
# the node keeps waiting for its real peer, and then connects to it normally.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"

new_image "$tmp/a.img" 32M
new_image "$tmp/b.img" 32M
write_repl_conf "$tmp/t.conf" 'connect-int 1; timeout 5; ping-timeout 5;'
on a create-md --force r0 >/dev/null
on b create-md --force r0 >/dev/null
start_node a
on a up r0
wait_for a connection WFConnection

refused() { field a refused; }
last_refused() { field a last_refused; }

# each bad client waits until alice hangs up on it (she has dealt with it),
# within 30 s (she gives up on the truncated one at the 5 s deadline before
# authentication); all but the first come from bob's address, the peer's
BAD=$(cat <<'PY'
import socket, struct, sys
addr = (sys.argv[1], 7789)
def send(data):
    s = socket.socket()
    s.settimeout(30)
    s.bind((sys.argv[2], 0))
    s.connect(addr)
    try:
        s.sendall(data)
        while True:
            try:
                if not s.recv(4096):
                    break
            except ConnectionResetError:
                break
    finally:
        s.close()
if sys.argv[3] == "hello":
    send(struct.pack(">IHHII", 0x544e444d, 1, 0xffff, 280, 0) + b"\0" * 280)
    sys.exit(0)
if sys.argv[3] == "again":
    for _ in range(int(sys.argv[4])):
        send(b"GET / HTTP/1.0\r\n\r\n" * 20)                       # garbage
    sys.exit(0)
send(b"GET / HTTP/1.0\r\n\r\n" * 20)                               # garbage
send(struct.pack(">IHHII", 0x544e444d, 1, 0xffff, 0x7fffffff, 0))   # oversized length
send(struct.pack(">IHHII", 0x544e444d, 1, 0xffff, 290, 0) + b"\0" * 10)  # truncated
PY
)
# from alice's own address: not the peer's, closed before anything is read
ip netns exec "$ns_a" python3 -c "$BAD" "$ip_a" "$ip_a" hello || fail "client from alice's address"
wait_log a "connection from $ip_a:[0-9]+ refused: not the peer's address $ip_b"
[ "$(refused)" = 1 ] || fail "refused is $(refused) after one connection from another address"
echo "ok: a connection from another address than the peer's is refused unread, with its address"

ip netns exec "$ns_b" python3 -c "$BAD" "$ip_a" "$ip_b" bad || fail "garbage client"
[ "$(field a connection)" = WFConnection ] || fail "alice left WFConnection: $(field a connection)"
four_refusals() { [ "$(refused)" -ge 4 ]; }
wait_until 30 "alice to count a refusal for each of the three bad clients" four_refusals
[ "$(refused)" = 4 ] || fail "refused is $(refused), expected 4"
last_refused | grep -Eq "^connection from $ip_b:[0-9]+ refused: " ||
	fail "last_refused does not name bob's address: $(last_refused)"
# the log is rate-limited (doc/wire-protocol.md 5.5): one line per 10 s, and
# besides that up to 4 per 10 s whose reason is not among the last 4
# logged. The three reasons above are new, so each is logged at once.
n=$(grep -c 'refused: bad first packet' "$tmp/tandemd-a.log" || true)
[ "$n" = 3 ] || fail "$n of 3 new refusal reasons logged, want each at once"
# the same garbage 20 times more: counted, but only the one line per 10 s
# window that has begun since then may be logged
t0=$(date +%s)
ip netns exec "$ns_b" python3 -c "$BAD" "$ip_a" "$ip_b" again 20 || fail "repeated garbage client"
twenty_more() { [ "$(refused)" -ge 24 ]; }
wait_until 30 "alice to count the 20 repeated refusals" twenty_more
t1=$(date +%s)
[ "$(refused)" = 24 ] || fail "refused is $(refused), expected 24"
m=$(grep -c 'refused: bad first packet' "$tmp/tandemd-a.log" || true)
allowed=$((3 + (t1 - t0) / 10 + 1))
[ "$m" -le "$allowed" ] ||
	fail "$m refusals logged for 24 bad connections in $((t1 - t0)) s, the log is not rate-limited (at most $allowed)"
n=$m
echo "ok: garbage on the replication port refused and counted; the log rate-limited ($n logged)"

# a real P_HELLO from the wrong node / for the wrong resource: bob's daemon
# with a configuration that names other hosts
cat >"$tmp/other.conf" <<CONF
resource r0 {
	net { cram-hmac-alg sha256; shared-secret "tandem-test"; }
	on mallory { device minor 0; disk $tmp/b.img; meta-disk internal; address $ip_b:7789; }
	on alice { device minor 0; disk $tmp/a.img; meta-disk internal; address $ip_a:7789; }
}
CONF
ip netns exec "$ns_b" "$TANDEMD" -c "$tmp/other.conf" --node mallory --run-dir "$tmp/run-m" -f \
	>"$tmp/tandemd-m.log" 2>&1 &
pid_m=$!
i=0
until [ -S "$tmp/run-m/tandemd.sock" ]; do i=$((i + 1)); [ $i -lt 600 ] || fail "mallory's daemon did not start in 30 s"; sleep 0.05; done
"$TANDEMADM" -c "$tmp/other.conf" --node mallory --run-dir "$tmp/run-m" up r0
i=0
until last_refused | grep -q "it claims node 'mallory', the configured peer is 'bob'"; do
	i=$((i + 1)); [ $i -lt 300 ] || { tail "$tmp/tandemd-a.log"; fail "mallory not refused in 30 s"; }
	sleep 0.1
done
kill "$pid_m"; wait "$pid_m" 2>/dev/null || true
[ "$(field a connection)" = WFConnection ] || fail "alice left WFConnection after mallory"
echo "ok: a node that is not the configured peer is refused"

# the real peer still connects
start_node b
on b up r0
wait_for a connection Connected
wait_for b connection Connected
echo "ok: the real peer connects afterwards"
