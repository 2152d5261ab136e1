#!/bin/sh
# The harness itself: tcluster builds a 2-node corosync + Pacemaker cluster
# in namespaces, both nodes online with quorum; fence_tcluster is a real
# stonith device that powers a node off and on through its cgroup when
# stonith_admin asks; the network, freeze and power verbs change the
# membership as a real fault would; and down leaves nothing behind.
. "$(dirname "$0")/functions.sh"

# What the machine has before: everything the cluster makes must go again.
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
snapshot() {
	ip netns list | awk '{ print $1 }' | sort >"$tmp/netns.$1"
	find "$cg2" -maxdepth 3 -type d | sort >"$tmp/cgroups.$1"
	awk '{ print $2 }' /proc/self/mounts | sort >"$tmp/mounts.$1"
	ip -o link show | awk -F': ' '{ print $2 }' | sort >"$tmp/links.$1"
}
snapshot before

t0=$(date +%s)
tc up 2 >/dev/null || die "tcluster up 2 failed"
pass "up 2 in $(($(date +%s) - t0)) s"
prefix=$(tc env | sed -n 's/^TC_PREFIX=//p')
cg=$(tc env | sed -n 's/^TC_CG=//p')

# --- Predicates -------------------------------------------------------------
has_quorum() {
	mon_xml "$1" | grep -q '<current_dc present="true".*with_quorum="true"'
}
corosync_quorate() {
	tc exec "$1" corosync-quorumtool -s | grep -q '^Quorate: *Yes'
}
members_are() { [ "$(members "$1")" = "$2" ]; }
# own_ns NS: NS differs between n1, n2 and the host
own_ns() {
	a=$(readlink "/proc/$pid1/ns/$1") b=$(readlink "/proc/$pid2/ns/$1")
	h=$(readlink "/proc/$$/ns/$1")
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] && [ "$a" != "$h" ] &&
		[ "$b" != "$h" ]
}
in_cgroup() { grep -q "/$prefix/$2\$" "/proc/$1/cgroup"; }
hostnames() {
	[ "$(tc exec n1 hostname)" = n1 ] && [ "$(tc exec n2 hostname)" = n2 ]
}
private_run_shm() {
	tc exec n1 sh -c 'echo x >/dev/shm/tc-probe && echo x >/run/tc-probe' &&
		tc exec n1 test -e /dev/shm/tc-probe &&
		! tc exec n2 test -e /dev/shm/tc-probe &&
		! tc exec n2 test -e /run/tc-probe &&
		[ ! -e /dev/shm/tc-probe ] && [ ! -e /run/tc-probe ]
}
own_state() {
	tc exec n1 test -f /var/lib/pacemaker/cib/cib.xml &&
		tc exec n1 grep -q 'dc-deadtime' /var/lib/pacemaker/cib/cib.xml &&
		[ -s "$TC_DIR/nodes/n1/lib/pacemaker/cib/cib.xml" ]
}
addr() {
	tc exec "$1" ip -4 -o addr show dev "$2" |
		awk '{ sub(/\/.*/, "", $4); print $4 }'
}
reach() { tc exec "$1" ping -c 1 -W 1 "$2" >/dev/null 2>&1; }
unreach() { ! reach "$@"; }
metadata_ok() {
	tc exec n1 stonith_admin --metadata -a fence_tcluster 2>/dev/null |
		grep -q '<parameter name="plug"'
}
agent() { TC_DIR=$TC_DIR "$here/fence_tcluster"; }
agent_list() {
	[ "$(printf 'action=list\n' | agent)" = "$(printf 'n1,\nn2,')" ]
}
agent_status() {
	printf 'action=status\nport=%s\n' "$1" | agent
	[ $? -eq "$2" ]
}
registered() {
	tc exec "$1" stonith_admin --list-registered 2>/dev/null |
		grep -qx 'fence-tc'
}
can_fence() {
	tc exec "$1" stonith_admin --list "$2" 2>/dev/null | grep -qx 'fence-tc'
}
powered() { grep -qx "populated $2" "$cg/$1/cgroup.events"; }
frozen() { grep -qx 'frozen 1' "$cg/$1/cgroup.events"; }
fence_logged() { grep -q " $1 $2: $3\$" "$TC_DIR/shared/fence.log"; }
more_fenced() { [ "$(tc fence_count "$1")" -gt "$2" ]; }
seen_offline() { tc wait -n "$1" -t "$3" offline "$2" >/dev/null 2>&1; }
all_online() { tc wait -t "$1" online >/dev/null 2>&1; }
stopped_clean() {
	mon_xml n1 | grep -q \
		'<node name="n2" id="[0-9]*" online="false".*unclean="false"'
}

# --- Both nodes online, with quorum, in each node's own view ----------------
for v in n1 n2; do
	check "$v sees n1 online (crm_mon XML)" node_online "$v" n1
	check "$v sees n2 online (crm_mon XML)" node_online "$v" n2
	check "$v: a DC, partition with quorum" has_quorum "$v"
	check "$v: corosync quorate" corosync_quorate "$v"
done
check "membership n1 n2" members_are n1 "n1 n2"

# --- Isolation: own namespaces, cgroup, /run, /dev/shm, state ---------------
pid1=$(cat "$TC_DIR/nodes/n1/init.pid")
pid2=$(cat "$TC_DIR/nodes/n2/init.pid")
for ns in net mnt uts ipc pid; do
	check "own $ns namespace per node" own_ns "$ns"
done
check "n1 in its own cgroup" in_cgroup "$pid1" n1
check "n2 in its own cgroup" in_cgroup "$pid2" n2
check "hostnames n1, n2" hostnames
check "private /dev/shm and /run" private_run_shm
check "state directories are the node's own" own_state

# --- Two networks -----------------------------------------------------------
ring2=$(addr n2 eth0)
repl2=$(addr n2 eth1)
ring_net=$(tc env | sed -n 's/^TC_RING_NET=//p')
repl_net=$(tc env | sed -n 's/^TC_REPL_NET=//p')
check "n2 on the ring: eth0 $ring2" [ "$ring2" = "$ring_net.2" ]
check "n2 on the replication link: eth1 $repl2" [ "$repl2" = "$repl_net.2" ]
if tc exec n1 sh -c 'command -v ping' >/dev/null 2>&1; then
	check "n1 reaches n2 on the ring" reach n1 "$ring2"
	check "n1 reaches n2 on the link" reach n1 "$repl2"
	tc cut n1 n2 repl
	check "cut n1 n2 repl: the link is down" unreach n1 "$repl2"
	check "cut n1 n2 repl: the ring is not" reach n1 "$ring2"
	check "a cut link keeps the membership" members_are n1 "n1 n2"
	tc uncut n1 n2 repl
	check "uncut: the link is back" reach n1 "$repl2"
	tc partition n2 repl
	check "partition n2 repl: the link is down" unreach n1 "$repl2"
	check "partition n2 repl: the ring is not" reach n1 "$ring2"
	tc heal n2 repl
	check "heal n2 repl: the link is back" reach n1 "$repl2"
else
	echo "note: no ping, reachability of the networks not checked"
fi

# --- The stonith device -----------------------------------------------------
check "stonith_admin --metadata -a fence_tcluster" metadata_ok
check "agent list (stdin protocol)" agent_list
check "agent status n2: on (0)" agent_status n2 0
tc stonith on boot_delay=4 >/dev/null || die "tcluster stonith on failed"
for v in n1 n2; do
	check "$v: fence-tc registered" retry 20 registered "$v"
done
check "n1 can fence n2 with fence-tc" can_fence n1 n2
check "n2 can fence n1 with fence-tc" can_fence n2 n1
tc wait settled >/dev/null 2>&1

# --- Fencing: off, on, reboot -----------------------------------------------
f0=$(tc fence_count n2)
check "stonith_admin --fence n2" tc exec n1 stonith_admin --fence n2 \
	--timeout 30
check "n2 is powered off (its cgroup is empty)" powered n2 0
check "agent status n2: off (2)" agent_status n2 2
check "fence.log: off n2" fence_logged off n2 off
check "n1 sees n2 offline" seen_offline n1 n2 10
check "fence history: n2 fenced" more_fenced n2 "$f0"
check "stonith_admin --unfence n2 (on)" tc exec n1 stonith_admin \
	--unfence n2 --timeout 30
check "n2 is powered on" powered n2 1
check "n2 back online" all_online 30

t1=$(date +%s)
f0=$(tc fence_count n2)
check "stonith_admin --reboot n2" tc exec n1 stonith_admin --reboot n2 \
	--timeout 30
check "fence.log: reboot n2" fence_logged reboot n2 "reboot: off, on in 4s"
check "n2 rebooted: online again" all_online 40
echo "# reboot until online: $(($(date +%s) - t1)) s"
check "fence history: n2 rebooted" more_fenced n2 "$f0"

# --- Membership changes: partition/heal, freeze/thaw, stop/start/kill -------
# Without stonith, both halves of a partition stay up.
tc exec n1 crm_attribute -t crm_config -n stonith-enabled -v false
tc partition n2 ring
check "partition n2 ring: n1 alone" retry 15 members_are n1 n1
check "partition n2 ring: n2 alone" retry 15 members_are n2 n2
check "partition: n1 sees n2 offline" seen_offline n1 n2 15
tc heal
check "heal: both online" all_online 20
check "heal: one membership again" members_are n1 "n1 n2"

tc freeze n2
check "freeze n2: cgroup frozen" frozen n2
check "a frozen n2 leaves the membership" seen_offline n1 n2 15
tc thaw n2
check "thaw n2: online again" all_online 20

check "stop n2 (graceful)" tc stop n2
check "stop n2: powered off" powered n2 0
check "a stopped n2 is offline and clean" stopped_clean
check "start n2" tc start n2
check "start n2: online again" all_online 20
check "kill n2 (power cut)" tc kill n2
check "kill n2: powered off" powered n2 0

# --- Teardown leaves nothing ------------------------------------------------
check "down" tc down
snapshot after
for what in netns cgroups mounts links; do
	new=$(comm -13 "$tmp/$what.before" "$tmp/$what.after")
	ours=$(echo "$new" | grep -e "$prefix" -e "$TC_DIR" -e '^ring-' \
		-e '^repl-' -e '^eth[01]@')
	check "no $what left behind${ours:+: $ours}" [ -z "$ours" ]
	other=$(echo "$new" | grep -v -e "$prefix" -e "$TC_DIR")
	[ -z "$other" ] ||
		echo "# $what that appeared meanwhile (not ours):" \
			"$(echo "$other" | tr '\n' ' ')"
done
check "no process left behind" not pgrep -f -- "$TC_DIR"
check "state directory removed" [ ! -e "$TC_DIR" ]
finish
