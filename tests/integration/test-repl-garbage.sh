#!/bin/sh
# Bad input on the replication port: garbage, a header with an oversized
# length, a truncated P_HELLO, and a real P_HELLO from a node that is not
# the configured peer. Each is refused with a logged reason, the
# node keeps waiting for its real peer, and then connects to it normally.
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

# each bad client waits until alice hangs up on it (she has dealt with it),
# within 30 s (she gives up on the truncated one after 4 ping-timeouts)
ip netns exec "$ns_a" python3 - "$ip_a" <<'PY' || fail "garbage client"
import socket, struct, sys
addr = (sys.argv[1], 7789)
def send(data):
    s = socket.create_connection(addr, timeout=30)
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
send(b"GET / HTTP/1.0\r\n\r\n" * 20)                               # garbage
send(struct.pack(">IHHII", 0x544e444d, 1, 0xffff, 0x7fffffff, 0))   # oversized length
send(struct.pack(">IHHII", 0x544e444d, 1, 0xffff, 290, 0) + b"\0" * 10)  # truncated
PY
[ "$(field a connection)" = WFConnection ] || fail "alice left WFConnection: $(field a connection)"
three_refusals() { [ "$(grep -c 'bad first packet' "$tmp/tandemd-a.log")" -ge 3 ]; }
wait_until 30 "alice to log a refusal for each of the three bad clients" three_refusals
echo "ok: garbage on the replication port refused with a logged reason"

# a real P_HELLO from the wrong node / for the wrong resource: bob's daemon
# with a configuration that names other hosts
cat >"$tmp/other.conf" <<CONF
resource r0 {
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
until grep -q "connection from node 'mallory' refused" "$tmp/tandemd-a.log"; do
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
