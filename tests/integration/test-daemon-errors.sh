#!/bin/sh
# The operator gets a clear message and a documented exit code when the
# daemon is not running (3), the resource is unknown (10), the resource is
# down (10), and a control request is garbage; the daemon keeps serving.
. "$(dirname "$0")/functions.sh"

new_image "$tmp/d.img" 64M
write_conf "$tmp/t.conf" "$tmp/d.img" internal
adm create-md --force r0 >/dev/null

expect() { # EXIT PATTERN CMD...
	want=$1 pat=$2; shift 2
	set +e
	"$@" >"$tmp/out" 2>&1; rc=$?
	set -e
	[ $rc -eq "$want" ] || { cat "$tmp/out"; fail "$*: exit $rc, expected $want"; }
	grep -q -- "$pat" "$tmp/out" || { cat "$tmp/out"; fail "$*: message lacks '$pat'"; }
	echo "ok: exit $rc: $(head -n1 "$tmp/out")"
}

expect 3 "tandemd is not running" ctl status
start_tandemd
expect 10 "not a resource of this node" ctl up nosuch
expect 10 "is down" ctl primary r0
ctl up r0 || fail "up"
# garbage on the control socket: an error line, and the daemon goes on
python3 - "$rundir/tandemd.sock" <<'PY' || fail "garbage request"
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"this is not json\n{\"cmd\":\"nosuch\"}\n")
data = b""
while data.count(b"\n") < 2:
    chunk = s.recv(4096)
    if not chunk: break
    data += chunk
lines = data.decode().splitlines()
assert '"ok":false' in lines[0] and "not a JSON object" in lines[0], lines
assert "unknown command" in lines[1], lines
PY
echo "ok: garbage requests get error answers"
[ "$(ctl cstate r0)" = "WFConnection" ] || fail "daemon not serving after garbage"
ctl disconnect r0
[ "$(ctl cstate r0)" = "StandAlone" ] || fail "disconnect: $(ctl cstate r0)"
ctl connect r0
cstate_is() { [ "$(ctl cstate r0)" = "$1" ]; }
wait_until 20 "WFConnection after connect" cstate_is WFConnection
ctl down r0
expect 10 "is down" ctl connect r0
echo "ok: daemon still serving"

# the event stream: the current state with --now, then one line per change
ctl events --now >"$tmp/events" 2>&1 &
evpid=$!
# the changes below only count once the stream has given the current state
wait_grep "$tmp/events" '^exists -$' 20
ctl up r0 && ctl primary --force r0 && ctl secondary r0 && ctl down r0 || fail "state changes"
# the last change the loop below looks for (it checks the order of the others)
wait_grep "$tmp/events" '^change device name:r0 disk:Diskless$' 20
kill $evpid 2>/dev/null; wait $evpid 2>/dev/null || true
for want in 'exists resource name:r0 role:Secondary' 'exists -' \
	'change device name:r0 disk:Inconsistent' 'change resource name:r0 role:Primary' \
	'change device name:r0 disk:UpToDate' 'change resource name:r0 role:Secondary' \
	'change device name:r0 disk:Diskless'; do
	n=$(grep -nx "$want" "$tmp/events" | head -n1 | cut -d: -f1)
	[ -n "$n" ] || { cat "$tmp/events"; fail "events: no '$want'"; }
	[ "$n" -gt "${last:-0}" ] || { cat "$tmp/events"; fail "events: '$want' out of order"; }
	last=$n
done
echo "ok: events --now: $(wc -l <"$tmp/events") lines, every state change in order"
