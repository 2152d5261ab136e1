#!/bin/sh
# Control-socket replies larger than the socket buffer reach a slow reader
# whole: the status of 1000 resources (~440 KB), two pipelined requests,
# and an event stream with --now followed by changes, read a few KiB at a
# time after a pause, are complete JSON lines in order, while the daemon
# answers other clients meanwhile. A client that leaves more than 4 MiB
# unread is dropped (logged once), and the daemon carries on.
. "$(dirname "$0")/functions.sh"
requires python3

n=1000
new_image "$tmp/d.img" 64M
{
	i=0
	while [ $i -lt $n ]; do
		disk=/dev/null
		[ $i -eq 0 ] && disk=$tmp/d.img
		printf 'resource res%04d {\n' $i
		printf '\tnet { cram-hmac-alg sha256; shared-secret "tandem-test"; }\n'
		printf '\ton alice { device minor %d; disk %s; meta-disk internal; address 127.0.0.1:%d; }\n' \
			$i "$disk" $((port + i))
		printf '\ton bob { device minor %d; disk /dev/null; meta-disk internal; address 127.0.0.2:%d; }\n}\n' \
			$i $((port + i))
		i=$((i + 1))
	done
} >"$tmp/t.conf"
adm create-md --force res0000 >/dev/null
start_tandemd
sock=$rundir/tandemd.sock

# status of all: much more than a Unix socket takes at once (~200 KiB)
python3 - "$sock" $n <<'PY' || fail "slow reader of a large status"
import json, socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])

def slow_lines(s, count):
    """read count lines, 4 KiB at a time with pauses"""
    data = b""
    s.settimeout(30)
    while data.count(b"\n") < count:
        chunk = s.recv(4096)
        if not chunk:
            raise SystemExit("EOF after %d bytes, %d lines: a reply was cut short"
                             % (len(data), data.count(b"\n")))
        data += chunk
        time.sleep(0.001)
    return data

s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.sendall(b'{"cmd":"status"}\n{"cmd":"status","res":"res0999"}\n')
time.sleep(1)  # the daemon's send is short now: the rest must wait for us
# meanwhile the daemon answers another client
o = socket.socket(socket.AF_UNIX)
o.connect(path)
o.settimeout(10)
o.sendall(b'{"cmd":"status","res":"res0001"}\n')
one = b""
while not one.endswith(b"\n"):
    c = o.recv(65536)
    assert c, "no answer to another client while a slow one waits"
    one += c
assert json.loads(one)["resources"][0]["name"] == "res0001", one[:200]
data = slow_lines(s, 2)
first, second, rest = data.split(b"\n", 2)
assert rest == b"", "unexpected bytes after the two answers: %r" % rest[:100]
big = json.loads(first)
assert big["ok"] is True, first[:200]
names = [r["name"] for r in big["resources"]]
assert names == ["res%04d" % i for i in range(n)], "status lists %d resources" % len(names)
small = json.loads(second)
assert [r["name"] for r in small["resources"]] == ["res0999"], second[:200]
print("ok: %d-byte status and a pipelined answer, complete and in order, to a slow reader"
      % len(first))
PY

# tandemadm (the library's client, ctlc) takes the same long answer
ctl status --json >"$tmp/all.json" || fail "tandemadm status of $n resources"
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["resources"]))' \
	"$tmp/all.json")" = "$n" ] || fail "tandemadm status does not list $n resources"
echo "ok: tandemadm status --json of $n resources ($(wc -c <"$tmp/all.json") bytes)"

# the event stream: 1000 "exists" lines, the end marker, then the changes
# that happened while the client was not reading, all whole and in order
python3 - "$sock" $n "$TANDEMADM" "$tmp/t.conf" "$rundir" <<'PY' || fail "slow event reader"
import json, socket, subprocess, sys, time
path, n, adm, conf, rundir = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.sendall(b'{"cmd":"events","now":true}\n')
time.sleep(0.5)
for verb in ("up", "primary", "secondary", "down"):
    args = [adm, "-c", conf, "--node", "alice", "--run-dir", rundir, verb, "res0000"]
    if verb == "primary":
        args.insert(-1, "--force")
    subprocess.run(args, check=True)
s.settimeout(30)
data = b""
lines = []
while not any(b'"new":"Secondary"' in l and b'"what":"role"' in l for l in lines):
    chunk = s.recv(4096)
    if not chunk:
        raise SystemExit("the event stream ended after %d bytes" % len(data))
    data += chunk
    lines = data.split(b"\n")[:-1]
    time.sleep(0.001)
ev = [json.loads(l) for l in lines]  # every line whole
assert ev[0] == {"ok": True}, ev[0]
exists = [e for e in ev[1:n + 1]]
assert [e.get("name") for e in exists] == ["res%04d" % i for i in range(n)], "exists lines"
assert all(e["event"] == "exists" for e in exists)
assert ev[n + 1] == {"event": "exists", "end": True}, ev[n + 1]
changes = [(e["what"], e["new"]) for e in ev[n + 2:] if e["res"] == "res0000"]
assert ("role", "Primary") in changes and ("role", "Secondary") in changes, changes
assert changes.index(("role", "Primary")) < changes.index(("role", "Secondary")), changes
print("ok: %d event lines (%d bytes), complete and in order, to a slow reader"
      % (len(ev), len(data)))
PY

# a client that asks and never reads: dropped past 4 MiB unread
python3 - "$sock" <<'PY' || fail "a client that does not read"
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'{"cmd":"status"}\n' * 20)  # ~9 MB of answers
time.sleep(2)
s.settimeout(10)
got = 0
try:
    while True:
        c = s.recv(1 << 20)
        if not c:
            break
        got += len(c)
except ConnectionResetError:
    pass
except socket.timeout:
    raise SystemExit("still connected with %d bytes read: not dropped" % got)
assert got < 9 * 440000, "read %d bytes: the daemon buffered everything" % got
print("ok: dropped after %d bytes of 20 answers" % got)
PY
grep -q 'control client dropped: more than 4 MiB' "$tmp/tandemd.log" ||
	{ cat "$tmp/tandemd.log"; fail "no log line for the dropped client"; }
r=$(ctl role res0001) && [ "$r" = "Secondary/Unknown" ] || fail "daemon not serving after the drop: $r"
echo "ok: a client leaving more than 4 MiB unread is dropped, logged; the daemon carries on"
