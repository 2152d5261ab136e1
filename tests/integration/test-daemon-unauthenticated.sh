#!/bin/sh
# The safe default (doc/security.md §2.3): a resource with a peer but no
# cram-hmac-alg/shared-secret replicates only with net {
# allow-unauthenticated yes; }. Without it the configuration loads, every
# tandemadm command warns at the resource's file:line, and `up` is refused
# (exit 10) with the two ways to fix it, leaving the resource down; with a
# secret or the opt-in it comes up. After the fix, adjust + up work.
. "$(dirname "$0")/functions.sh"

new_image "$tmp/d0.img" 32M
new_image "$tmp/d1.img" 32M
new_image "$tmp/d2.img" 32M
write_three() { # R0-NET-OPTIONS
	cat >"$tmp/t.conf" <<CONF
resource r0 {
	net { $1 }
	on alice { device minor 0; disk $tmp/d0.img; meta-disk internal; address 127.0.0.1:$port; }
	on bob { device minor 0; disk /dev/null; meta-disk internal; address 127.0.0.2:$port; }
}
resource r1 {
	net { allow-unauthenticated yes; }
	on alice { device minor 1; disk $tmp/d1.img; meta-disk internal; address 127.0.0.1:$port2; }
	on bob { device minor 1; disk /dev/null; meta-disk internal; address 127.0.0.2:$port2; }
}
resource r2 {
	net { cram-hmac-alg sha256; shared-secret "tandem-test"; }
	on alice { device minor 2; disk $tmp/d2.img; meta-disk internal; address 127.0.0.1:$((port + 2)); }
	on bob { device minor 2; disk /dev/null; meta-disk internal; address 127.0.0.2:$((port + 2)); }
}
CONF
}
write_three "protocol C;"

# the configuration loads; the warning names r0's line, and only r0
adm dump >"$tmp/dump" 2>"$tmp/warn" || { cat "$tmp/warn"; fail "dump refused the configuration"; }
grep -q "t.conf:1:1: warning: shared-secret: resource r0: its peer would not be authenticated" \
	"$tmp/warn" || { cat "$tmp/warn"; fail "no warning at r0's line"; }
[ "$(grep -c "would not be authenticated" "$tmp/warn")" = 1 ] ||
	{ cat "$tmp/warn"; fail "the warning is not for r0 alone"; }
grep -q "allow-unauthenticated yes" "$tmp/warn" || fail "the warning does not name the opt-in"
echo "ok: a configuration without a secret loads, warned about at r0's line"

for r in r0 r1 r2; do adm create-md --force $r >/dev/null 2>&1 || fail "create-md $r"; done
start_tandemd
set +e
ctl up r0 >"$tmp/out" 2>&1
rc=$?
set -e
[ $rc -eq 10 ] || { cat "$tmp/out"; fail "up r0 without a secret: exit $rc, expected 10"; }
grep -q "t.conf:1: resource r0: its peer would not be authenticated" "$tmp/out" ||
	{ cat "$tmp/out"; fail "the refusal does not name the file and line"; }
grep -q 'cram-hmac-alg sha256; shared-secret' "$tmp/out" && grep -q "allow-unauthenticated yes" "$tmp/out" ||
	{ cat "$tmp/out"; fail "the refusal does not say both ways to fix it"; }
[ "$(ctl_field disk r0)" = Diskless ] || fail "r0 was attached although up was refused: $(ctl_field disk r0)"
echo "ok: up r0 refused (exit 10): $(head -n1 "$tmp/out" | cut -c1-100)..."

ctl up r1 || fail "up r1 (allow-unauthenticated yes)"
ctl up r2 || fail "up r2 (a secret)"
for r in r1 r2; do
	[ "$(ctl cstate $r)" = WFConnection ] || fail "$r: $(ctl cstate $r), expected WFConnection"
done
grep -q "\[r1\] allow-unauthenticated: the peer is not authenticated" "$tmp/tandemd.log" ||
	{ cat "$tmp/tandemd.log"; fail "no warning in the log for r1"; }
if grep -q "\[r2\] allow-unauthenticated" "$tmp/tandemd.log"; then fail "r2 has a secret, but the log says it is unauthenticated"; fi
echo "ok: the opt-in and a secret both come up; the opt-in is logged"

# the operator opts in for r0: adjust reloads, up works
write_three "protocol C; allow-unauthenticated yes;"
ctl adjust r0 || fail "adjust after the fix"
ctl up r0 || fail "up r0 after the fix"
[ "$(ctl cstate r0)" = WFConnection ] || fail "r0: $(ctl cstate r0) after the fix"
echo "ok: after the fix, adjust and up bring r0 up"
