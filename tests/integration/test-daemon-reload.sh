#!/bin/sh
# SIGHUP and `tandemadm adjust` re-read the configuration: a new resource
# appears (down), a broken configuration is refused and the running one
# stays, a running resource keeps running, and a changed disk of a running
# resource takes effect at its next up.
. "$(dirname "$0")/functions.sh"

new_image "$tmp/a.img" 64M
new_image "$tmp/b.img" 64M
new_image "$tmp/c.img" 64M
write_conf "$tmp/t.conf" "$tmp/a.img" internal
adm create-md --force r0 >/dev/null
start_tandemd
ctl up r0 || fail "up r0"

# add r1 (its own minor and port), then SIGHUP
cat >>"$tmp/t.conf" <<CONF
resource r1 {
	net { cram-hmac-alg sha256; shared-secret "tandem-test"; }
	on alice { device minor 1; disk $tmp/b.img; meta-disk internal; address 127.0.0.1:$port2; }
	on bob { device minor 1; disk /dev/null; meta-disk internal; address 127.0.0.2:$port2; }
}
CONF
adm create-md --force r1 >/dev/null
kill -HUP "$tandemd_pid"
i=0
until ctl status r1 >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 50 ] || { cat "$tmp/tandemd.log"; fail "r1 did not appear after SIGHUP"; }
	sleep 0.1
done
ctl up r1 || fail "up r1"
case $(ctl cstate r0) in WFConnection | StandAlone) ;; *) fail "r0 disturbed by the reload" ;; esac
echo "ok: SIGHUP added r1; r0 kept running"

# a broken configuration is refused by adjust, with its errors
cp "$tmp/t.conf" "$tmp/good.conf"
echo 'resource broken { net { protocol Q; } }' >>"$tmp/t.conf"
set +e
ctl adjust r0 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 10 ] || fail "adjust with a broken config: exit $rc, expected 10"
grep -q 'not applied' "$tmp/err" || { cat "$tmp/err"; fail "adjust message"; }
ctl status r1 >/dev/null || fail "r1 lost after a refused reload"
echo "ok: a broken configuration is refused: $(head -n1 "$tmp/err")"

# change r1's disk while it is up: applies at the next up
sed "s|$tmp/b.img|$tmp/c.img|" "$tmp/good.conf" >"$tmp/t.conf"
adm create-md --force r1 >/dev/null 2>&1 || true
ctl adjust r1 || fail "adjust"
grep -q 'takes effect after' "$tmp/tandemd.log" || fail "no notice about the pending change"
ctl down r1 && ctl up r1 || fail "down/up r1"
grep -q "attached $tmp/c.img" "$tmp/tandemd.log" || { cat "$tmp/tandemd.log"; fail "new disk not used"; }
echo "ok: a changed disk takes effect at the next up"
ctl down r0 && ctl down r1
