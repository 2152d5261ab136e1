#!/bin/sh
# Bring-up (issue 8, scenario 1): tandem installed into a 2-node cluster,
# the initial full sync done by hand as the DRBD documentation does it
# (create-md, up, primary --force on one node, wait-sync, secondary,
# down), then cib-examples/promotable.xml loaded with its Filesystem and
# IPaddr2 replaced by ocf:pacemaker:Dummy stand-ins and its IPMI fencing
# by fence_tcluster.  Pacemaker, through the OCF agent ocf:tandem:tandem,
# must then promote exactly one instance, demote none, and start the
# stand-ins on the promoted node.  Then a change of the reloadable
# parameter promotion_scores: Pacemaker runs the agent's reload-agent, and
# neither restarts nor demotes the resource; the scores take the new value.
#
# TANDEM_DESTDIR is a `make install DESTDIR=...` tree of this build
# (make check-cluster makes it); without it the test is skipped.
. "$(dirname "$0")/functions.sh"

[ -n "${TANDEM_DESTDIR:-}" ] ||
	skip "TANDEM_DESTDIR is not set (make check-cluster installs tandem there)"
dest=$TANDEM_DESTDIR
agent_rel=usr/lib/ocf/resource.d/tandem/tandem
[ -x "$dest/$agent_rel" ] || die "$dest/$agent_rel is missing: is $dest a make install DESTDIR tree?"
sbin=""
for d in usr/sbin usr/local/sbin; do
	[ -x "$dest/$d/tandemd" ] && sbin=$d && break
done
[ -n "$sbin" ] || die "no tandemd under $dest/usr/sbin or $dest/usr/local/sbin"
example=$here/../../cib-examples/promotable.xml
[ -f "$example" ] || die "$example is missing"

# Only the programs and the agent go into the nodes.
mkdir -p "$tmp/inject/$sbin" "$tmp/inject/${agent_rel%/*}"
cp -a "$dest/$sbin/." "$tmp/inject/$sbin/"
cp -a "$dest/$agent_rel" "$tmp/inject/$agent_rel"

tc up 2 "$tmp/inject" >/dev/null || die "tcluster up 2 failed"
repl_net=$(tc env | sed -n 's/^TC_REPL_NET=//p')
PATH_IN=/$sbin:/usr/sbin:/usr/bin:/sbin:/bin
on() {
	on_n=$1
	shift
	tc exec "$on_n" env PATH="$PATH_IN" "$@"
}
check "tandemd and the agent are installed in the nodes" \
	on n1 test -x "/$sbin/tandemd" -a -x "/$agent_rel"

# tandem.conf: the resource "mysql" of the example, over the replication
# link (eth1), a disk image per node.
for n in n1 n2; do
	truncate -s 32M "$TC_DIR/nodes/$n/disk.img"
done
cat >"$tmp/tandem.conf" <<EOF
resource mysql {
	net { protocol C; cram-hmac-alg sha256; shared-secret "tandem-cluster-test"; }
	disk { resync-rate 200M; c-plan-ahead 0; }
	on n1 {
		device minor 0;
		disk $TC_DIR/nodes/n1/disk.img;
		meta-disk internal;
		address $repl_net.1:7789;
	}
	on n2 {
		device minor 0;
		disk $TC_DIR/nodes/n2/disk.img;
		meta-disk internal;
		address $repl_net.2:7789;
	}
}
EOF
for n in n1 n2; do
	tc exec "$n" sh -c 'cat >/etc/tandem.conf' <"$tmp/tandem.conf" ||
		die "cannot write /etc/tandem.conf in $n"
	check "$n: tandemd -t accepts tandem.conf" on "$n" tandemd -t
	check "$n: create-md" on "$n" tandemadm create-md --force mysql
done

# --- The initial sync, by hand ----------------------------------------------
for n in n1 n2; do
	check "$n: tandemd starts" on "$n" tandemd
	check "$n: up mysql" on "$n" tandemadm up mysql
done
check "n1: primary --force" on n1 tandemadm primary --force mysql
t0=$(date +%s)
check "initial sync done" on n1 tandemadm wait-sync --timeout 60 mysql
echo "# initial sync of 32 MiB: $(($(date +%s) - t0)) s"
check "n2: UpToDate" [ "$(on n2 tandemadm dstate mysql)" = UpToDate/UpToDate ]
check "n1: secondary" on n1 tandemadm secondary mysql
for n in n1 n2; do
	check "$n: down mysql" on "$n" tandemadm down mysql
	# The agent starts tandemd itself.
	# shellcheck disable=SC2016 # expanded in the node
	on "$n" sh -c 'kill "$(cat /run/tandem/tandemd.pid)"' 2>/dev/null
	check "$n: tandemd stopped" retry 10 not on "$n" test -e /run/tandem/tandemd.pid
done

# --- The promotable clone under Pacemaker ------------------------------------
# promotable.xml with stand-ins for the filesystem and the address, and
# fence_tcluster for its IPMI fencing (one device per node, as there).
sed -e 's/provider="heartbeat" type="Filesystem"/provider="pacemaker" type="Dummy"/' \
	-e 's/provider="heartbeat" type="IPaddr2"/provider="pacemaker" type="Dummy"/' \
	-e 's/type="fence_ipmilan"/type="fence_tcluster"/' \
	-e '/instance_attributes-\(ip\|username\|password\|lanplus\)"/d' \
	-e 's/"alice"/"n1"/' -e 's/"bob"/"n2"/' \
	"$example" >"$tmp/cib.xml"
sed -n '/<resources>/,/<\/resources>/p' "$tmp/cib.xml" >"$tmp/resources.xml"
sed -n '/<constraints>/,/<\/constraints>/p' "$tmp/cib.xml" >"$tmp/constraints.xml"
check "the example has the clone" grep -q '<clone id="mysql-data-clone">' "$tmp/resources.xml"
# (Its empty status section only gives warnings: no quorum, nodes unseen.)
no_errors() { ! crm_verify -V -x "$1" 2>&1 | grep -e 'error' -e 'not valid'; }
check "crm_verify: no errors in the adapted example" no_errors "$tmp/cib.xml"

check "load the resources" tc exec n1 cibadmin --replace \
	--scope resources --xml-text "$(cat "$tmp/resources.xml")"
check "load the constraints" tc exec n1 cibadmin --replace \
	--scope constraints --xml-text "$(cat "$tmp/constraints.xml")"

t0=$(date +%s)
check "exactly one promoted instance" \
	sh -c "\"$TCLUSTER\" wait -t 120 promoted mysql-data-clone >/dev/null"
echo "# until promoted: $(($(date +%s) - t0)) s"
check "the cluster settles" sh -c "\"$TCLUSTER\" wait -t 60 settled >/dev/null"
p=$(tc promoted mysql-data-clone)
case $p in
n1) u=n2 ;;
n2) u=n1 ;;
*) die "promoted on '$p', not on exactly one node" ;;
esac
check "one Promoted ($p) after settling" [ "$(tc promoted mysql-data-clone | wc -l)" -eq 1 ]
check "$u is Unpromoted" sh -c "\"$TCLUSTER\" wait -t 10 role mysql-data-clone $u Unpromoted >/dev/null"
check "$p is Primary" [ "$(on "$p" tandemadm role mysql)" = Primary/Secondary ]
check "$u is Secondary" [ "$(on "$u" tandemadm role mysql)" = Secondary/Primary ]
check "$p: UpToDate/UpToDate" [ "$(on "$p" tandemadm dstate mysql)" = UpToDate/UpToDate ]
score() {
	tc exec n1 crm_attribute -N "$1" -n master-mysql-data -l reboot -G -q \
		2>/dev/null
}
positive() { s=$(score "$1") && [ "${s:-0}" -gt 0 ]; }
check "a promotion score on $p ($(score "$p"))" positive "$p"
check "a promotion score on $u ($(score "$u"))" positive "$u"
check "fence-alice (n1's) runs on n2" sh -c \
	"\"$TCLUSTER\" wait -t 10 role fence-alice n2 Started >/dev/null"
check "fence-bob (n2's) runs on n1" sh -c \
	"\"$TCLUSTER\" wait -t 10 role fence-bob n1 Started >/dev/null"
check "the filesystem stand-in on $p" \
	sh -c "\"$TCLUSTER\" wait -t 10 role mysql-fs $p Started >/dev/null"
check "the address stand-in on $p" \
	sh -c "\"$TCLUSTER\" wait -t 10 role mysql-ip $p Started >/dev/null"
check "no failed actions" sh -c "\"$TCLUSTER\" wait -t 1 nomatch 'Failed (Resource )?Actions' >/dev/null"

# --- reload-agent (issue 16) ----------------------------------------------------
# promotion_scores is one of the agent's reloadable parameters: a change
# makes Pacemaker run reload-agent on each instance, and no stop, start or
# demote: the same tandemd, Primary throughout; the promotion scores take
# the new value (the fourth: UpToDate and the peer's disk known).
# Pacemaker (2.1.5, and its main branch as of 2026) records a successful
# reload-agent as a start (pcmk__create_history_xml()), so its scheduler
# then takes the promoted instance for Unpromoted and promotes it again:
# the agent finds it "already Primary", and Pacemaker restarts what is
# ordered after the promotion (here the stand-ins for the filesystem and
# the address).  That promote is allowed; what it restarts is printed.
plog() { echo "$TC_DIR/nodes/$1/log/cluster/pacemaker.log"; }
# ops_since NODE LINE [RSC]: the operations on RSC (mysql-data) that
# NODE's executor ran after line LINE of its pacemaker.log
ops_since() {
	tail -n +$(($2 + 1)) "$(plog "$1")" |
		sed -n "s/.*executing - rsc:${3:-mysql-data} action:\([a-z-]*\) .*/\1/p" |
		sort | uniq -c | awk '{ printf "%s%s x%s", s, $2, $1; s = ", " }'
}
tpid() { on "$1" cat /run/tandem/tandemd.pid 2>/dev/null; }
l1=$(wc -l <"$(plog n1)") l2=$(wc -l <"$(plog n2)")
if [ "$p" = n1 ]; then lp=$l1 lu=$l2; else lp=$l2 lu=$l1; fi
pid1=$(tpid n1) pid2=$(tpid n2)
check "crm_resource --set-parameter promotion_scores '0 10 1000 20000'" \
	tc exec n1 crm_resource --resource mysql-data --set-parameter \
	promotion_scores --parameter-value '0 10 1000 20000'
score_is() { [ "$(score "$1")" = "$2" ]; }
check "$p's promotion score becomes 20000" retry 30 score_is "$p" 20000
check "$u's promotion score becomes 20000" retry 30 score_is "$u" 20000
check "the cluster settles" sh -c "\"$TCLUSTER\" wait -t 60 settled >/dev/null"
ops1=$(ops_since n1 "$l1") ops2=$(ops_since n2 "$l2")
echo "# after the change: n1 ran ${ops1:-nothing}; n2 ran ${ops2:-nothing}"
echo "# and on the stand-ins on $p: mysql-fs" \
	"$(ops_since "$p" "$lp" mysql-fs), mysql-ip $(ops_since "$p" "$lp" mysql-ip)"
ran_reload() { echo "$1" | grep -q 'reload-agent x1'; }
no_restart() { ! echo "$1" | grep -Eq '(^|, )(start|stop|demote) '; }
for n in n1 n2; do
	eval "o=\$ops${n#n}"
	check "$n: Pacemaker ran reload-agent" ran_reload "$o"
	check "$n: no stop, start or demote" no_restart "$o"
done
# a promote after the reload, if any, found tandem Primary already
promote_noop() {
	n_prom=$(tail -n +$(($2 + 1)) "$(plog "$1")" |
		grep -c 'executing - rsc:mysql-data action:promote ')
	n_noop=$(tail -n +$(($2 + 1)) "$(plog "$1")" |
		grep -c 'tandem(mysql-data).*mysql is already Primary')
	[ "$n_prom" -eq "$n_noop" ]
}
check "$p: any promote after the reload was a no-op (already Primary)" \
	promote_noop "$p" "$lp"
check "$u: no promote" promote_noop "$u" "$lu"
check "the same tandemd on n1 and n2" [ "$(tpid n1)/$(tpid n2)" = "$pid1/$pid2" ]
check "$p is still the only Promoted" [ "$(tc promoted mysql-data-clone)" = "$p" ]
check "$p is still Primary" [ "$(on "$p" tandemadm role mysql)" = Primary/Secondary ]
agent_reloaded() {
	grep -q 'tandem(mysql-data).*parameters reloaded (promotion_scores 0 10 1000 20000)' \
		"$(plog "$1")"
}
check "$p: the agent logged the new scores" agent_reloaded "$p"
check "$u: the agent logged the new scores" agent_reloaded "$u"
check "no failed actions after the reload" sh -c "\"$TCLUSTER\" wait -t 1 nomatch 'Failed (Resource )?Actions' >/dev/null"
if [ "$nfail" -gt 0 ]; then
	tc exec n1 crm_mon -1 -r -f >&2
	grep -h -e 'mysql-data.*\(error\|warning\|stderr\)' \
		"$TC_DIR"/nodes/*/log/cluster/pacemaker.log 2>/dev/null |
		tail -n 40 >&2
fi
finish
