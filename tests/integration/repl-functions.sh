# Two tandemd nodes, alice and bob, each in its own network namespace,
# joined by a veth pair (sourced after functions.sh). The control sockets
# are Unix sockets in $tmp, reachable from here; the replication link is
# 10.<N>.<M>.1 <-> .2, unique per test run.
requires_root
command -v ip >/dev/null 2>&1 || skip "ip (iproute2) is not installed"

id=$(( $$ % 250 + 1 ))
ns_a=tnd-a-$$
ns_b=tnd-b-$$
net=10.$(( ($$ / 250) % 200 + 20 )).$id
ip_a=$net.1
ip_b=$net.2

netns_down() {
	for n in a b; do stop_node $n; done
	ip netns del "$ns_a" 2>/dev/null || true
	ip netns del "$ns_b" 2>/dev/null || true
}
cleanup_hooks="$cleanup_hooks netns_down"

ip netns add "$ns_a" || skip "cannot create network namespaces"
ip netns add "$ns_b"
ip link add "va$$" type veth peer name "vb$$"
ip link set "va$$" netns "$ns_a"
ip link set "vb$$" netns "$ns_b"
ip -n "$ns_a" addr add "$ip_a/24" dev "va$$"
ip -n "$ns_b" addr add "$ip_b/24" dev "vb$$"
for n in "$ns_a" "$ns_b"; do ip -n "$n" link set lo up; done
ip -n "$ns_a" link set "va$$" up
ip -n "$ns_b" link set "vb$$" up

# write_repl_conf FILE [NET-OPTIONS [DISK-OPTIONS]]: r0 on alice and bob,
# authenticated with a test secret unless NET-OPTIONS say how to authenticate
write_repl_conf() {
	case ${2:-} in
	*cram-hmac-alg* | *allow-unauthenticated* | *"tls yes"*) wrc_auth= ;;
	*) wrc_auth='cram-hmac-alg sha256; shared-secret "tandem-test";' ;;
	esac
	cat >"$1" <<CONF
resource r0 {
	net { $wrc_auth ${2:-} }
	disk { ${3:-resync-rate 100M; c-plan-ahead 0;} }
	on alice { device minor 0; disk $tmp/a.img; meta-disk internal; address $ip_a:7789; }
	on bob { device minor 0; disk $tmp/b.img; meta-disk internal; address $ip_b:7789; }
}
CONF
}

node_name() { [ "$1" = a ] && echo alice || echo bob; }
node_ns() { [ "$1" = a ] && echo "$ns_a" || echo "$ns_b"; }

# start_node a|b [CONF]
start_node() {
	conf=${2:-$tmp/t.conf}
	rm -f "$tmp/run-$1/tandemd.sock"
	ip netns exec "$(node_ns "$1")" "$TANDEMD" -c "$conf" --node "$(node_name "$1")" \
		--run-dir "$tmp/run-$1" --state-dir "$tmp/state-$1" -f >>"$tmp/tandemd-$1.log" 2>&1 &
	eval "pid_$1=$!"
	i=0
	until [ -S "$tmp/run-$1/tandemd.sock" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || { cat "$tmp/tandemd-$1.log"; fail "tandemd $1 did not start"; }
		sleep 0.05
	done
}

stop_node() {
	eval "p=\${pid_$1:-}"
	[ -n "$p" ] || return 0
	kill -TERM "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
	eval "pid_$1="
}

# on a|b VERB ARGS...: tandemadm against that node's daemon
on() {
	n=$1
	shift
	"$TANDEMADM" -c "${conf_of:-$tmp/t.conf}" --node "$(node_name "$n")" --run-dir "$tmp/run-$n" \
		--state-dir "$tmp/state-$n" "$@"
}

# field a|b NAME: a field of status --json (connection, role, peer_role) or of
# volume 0 (disk, peer_disk, oos)
field() {
	on "$1" status --json r0 | python3 -c '
import json, sys
r = json.load(sys.stdin)["resources"][0]
v = r["volumes"][0]
k = sys.argv[1]
print(r[k] if k in r else v.get(k, v.get("counters", {}).get(k, "")))' "$2"
}

# wait_for a|b NAME VALUE [SECONDS]
wait_for() {
	i=0
	lim=$(( ${4:-30} * 10 ))
	until [ "$(field "$1" "$2")" = "$3" ]; do
		i=$((i + 1))
		if [ $i -ge $lim ]; then
			echo "--- alice"; tail -n 40 "$tmp/tandemd-a.log"
			echo "--- bob"; tail -n 40 "$tmp/tandemd-b.log"
			fail "$(node_name "$1"): $2 is $(field "$1" "$2"), expected $3"
		fi
		sleep 0.1
	done
}

# log_mark a|b: later wait_log calls for that node look only at what the
# daemon logs from now on (an earlier run of the same event does not count)
log_mark() {
	eval "logmark_$1=$(stat -c %s "$tmp/tandemd-$1.log" 2>/dev/null || echo 0)"
}

# wait_log a|b PATTERN [SECONDS]: until the node's log has a line matching
# PATTERN (grep -E) after its mark
wait_log() {
	wl_end=$(($(date +%s) + ${3:-30}))
	until log_since_mark "$1" | grep -Eq -- "$2"; do
		if [ "$(date +%s)" -gt "$wl_end" ]; then
			echo "--- $(node_name "$1")"; tail -n 40 "$tmp/tandemd-$1.log"
			fail "$(node_name "$1") did not log '$2' in ${3:-30} s"
		fi
		sleep 0.1
	done
}
log_since_mark() {
	eval "lm=\${logmark_$1:-0}"
	f=$tmp/tandemd-$1.log
	# a log truncated since the mark (: >log) is read from its start
	[ "$(stat -c %s "$f")" -ge "$lm" ] || lm=0
	tail -c +$((lm + 1)) "$f"
}

# idle a|b: nothing in flight on the node: no local (lo), peer (pe),
# unacknowledged (ua) or application (ap) request
idle() {
	on "$1" status --json r0 | python3 -c '
import json, sys
c = json.load(sys.stdin)["resources"][0]["volumes"][0]["counters"]
sys.exit(0 if c["lo"] == c["pe"] == c["ua"] == c["ap"] == 0 else 1)'
}

# wait_idle a|b [SECONDS]
wait_idle() {
	wi_end=$(($(date +%s) + ${2:-30}))
	until idle "$1"; do
		[ "$(date +%s)" -le "$wi_end" ] || fail "$(node_name "$1") still has requests in flight \
after ${2:-30} s: $(on "$1" status --json r0 | tr -d ' \n' | grep -o '"counters":{[^}]*}')"
		sleep 0.1
	done
}

nbd_uri_of() { echo "nbd+unix:///r0?socket=$tmp/run-$1/r0.nbd"; }

# same_data: the data areas of both backing files are identical
same_data() {
	size=$(( $(field a size_sect) * 512 ))
	cmp -n "$size" "$tmp/a.img" "$tmp/b.img" || fail "the two disks differ ($1)"
}

# blank_pair: fresh metadata on both nodes (write $tmp/t.conf and the
# images first), both daemons started, up and connected, the initial sync
# skipped as for blank disks, alice Primary
blank_pair() {
	on a create-md --force r0 >/dev/null
	on b create-md --force r0 >/dev/null
	start_node a
	start_node b
	on a up r0
	on b up r0
	on a wait-connect --timeout 20 r0 >/dev/null || fail "wait-connect"
	on a new-current-uuid --clear-bitmap r0
	wait_for a peer_disk UpToDate
	on a primary r0
}

# stop_pair: take r0 down on the running nodes and stop their daemons
stop_pair() {
	for n in a b; do
		eval "sp=\${pid_$n:-}"
		[ -z "$sp" ] || { on "$n" down --force r0 2>/dev/null || true; stop_node "$n"; }
	done
}
