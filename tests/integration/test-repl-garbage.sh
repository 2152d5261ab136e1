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

ip netns exec "$ns_a" python3 - "$ip_a" <<'PY' || fail "garbage client"
import socket, struct, sys, time
addr = (sys.argv[1], 7789)
def send(data, wait=0.3):
    s = socket.create_connection(addr, timeout=3)
    try:
        s.sendall(data)
        time.sleep(wait)
        try:
            s.recv(4096)
        except OSError:
            pass
    finally:
        s.close()
send(b"GET / HTTP/1.0\r\n\r\n" * 20)                               # garbage
send(struct.pack(">IHHII", 0x544e444d, 1, 0xffff, 0x7fffffff, 0))   # oversized length
send(struct.pack(">IHHII", 0x544e444d, 1, 0xffff, 290, 0) + b"\0" * 10)  # truncated
PY
sleep 1
[ "$(field a connection)" = WFConnection ] || fail "alice left WFConnection: $(field a connection)"
grep -q 'bad first packet' "$tmp/tandemd-a.log" || { cat "$tmp/tandemd-a.log"; fail "no refusal logged"; }
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
until [ -S "$tmp/run-m/tandemd.sock" ]; do i=$((i + 1)); [ $i -lt 100 ] || fail "mallory"; sleep 0.05; done
"$TANDEMADM" -c "$tmp/other.conf" --node mallory --run-dir "$tmp/run-m" up r0
i=0
until grep -q "connection from node 'mallory' refused" "$tmp/tandemd-a.log"; do
	i=$((i + 1)); [ $i -lt 100 ] || { tail "$tmp/tandemd-a.log"; fail "mallory not refused"; }
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
