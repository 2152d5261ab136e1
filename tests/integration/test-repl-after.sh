#!/bin/sh
# resync-after: r1 resyncs only once r0 has finished (PausedSync* meanwhile),
# on two nodes in network namespaces.
. "$(dirname "$0")/functions.sh"
. "$(dirname "$0")/repl-functions.sh"

for f in a0 b0 a1 b1; do new_image "$tmp/$f.img" 32M; done
cat >"$tmp/t.conf" <<CONF
common { net { connect-int 1; timeout 5; cram-hmac-alg sha256; shared-secret "tandem-test"; } }
resource r0 {
	disk { resync-rate 4M; c-plan-ahead 0; }
	on alice { device minor 0; disk $tmp/a0.img; meta-disk internal; address $ip_a:7789; }
	on bob { device minor 0; disk $tmp/b0.img; meta-disk internal; address $ip_b:7789; }
}
resource r1 {
	disk { resync-rate 100M; c-plan-ahead 0; resync-after r0; }
	on alice { device minor 1; disk $tmp/a1.img; meta-disk internal; address $ip_a:7790; }
	on bob { device minor 1; disk $tmp/b1.img; meta-disk internal; address $ip_b:7790; }
}
CONF
for r in r0 r1; do on a create-md --force $r >/dev/null; on b create-md --force $r >/dev/null; done
start_node a
start_node b
on a up r0 r1
on b up r0 r1
on a wait-connect --timeout 20 r0 >/dev/null && on a wait-connect --timeout 20 r1 >/dev/null ||
	fail "connect"
on a primary --force r0
on a primary --force r1
cstate1() { on b status --json r1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["resources"][0]["connection"])'; }
i=0
until [ "$(cstate1)" = PausedSyncT ]; do
	i=$((i + 1)); [ $i -lt 100 ] || { tail -20 "$tmp/tandemd-b.log"; fail "r1 on bob: $(cstate1), expected PausedSyncT"; }
	sleep 0.1
done
[ "$(field b connection)" = SyncTarget ] || fail "r0 on bob: $(field b connection)"
grep -q 'resync waits for r0 (resync-after)' "$tmp/tandemd-b.log" || fail "not logged"
echo "ok: r1 waits (PausedSyncT) while r0 resyncs"
on b wait-sync --timeout 60 r0 >/dev/null || fail "r0 sync"
on b wait-sync --timeout 60 r1 >/dev/null || fail "r1 sync after r0"
cmp -n 30000000 "$tmp/a1.img" "$tmp/b1.img" || fail "r1 differs"
echo "ok: r1 resynced after r0 finished"
