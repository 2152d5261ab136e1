# shellcheck shell=sh disable=SC2015
# (SC2015: "A && B || C" here means C when A or B fails, as intended.)
# The test client of the cluster scenarios (issue 8), sourced after
# functions.sh: it writes checksummed 4 KiB blocks through the NBD export of
# the promoted node and checks them back later, through whichever node is
# promoted then.
#
#   client_write NODE COUNT   write COUNT new blocks through NODE's export
#   client_verify NODE        read every acknowledged block back through
#                             NODE's export and compare its checksum
#   client_acked              how many writes were acknowledged so far
#   client_serves NODE        true if NODE's export serves a 4 KiB read
#   client_nbdsh NODE ARG...  nbdsh ARG... in NODE (the system's python)
#
# Each block holds a header "tandem-client seq=N off=O" and random bytes.
# Block N goes to offset ((N - 1) mod CLIENT_SPAN) * 4096, so later blocks
# overwrite earlier ones once the span is full. The client runs nbdsh in
# the node (tcluster exec), against /run/tandem/RES.nbd. Before each write
# it prints "issued SEQ OFFSET SHA256" to the host-side ledger, and after
# the export acknowledged it (with FUA when offered, so that under protocol
# C an acknowledged write is on stable storage on both nodes) one line
# "SEQ OFFSET SHA256". A node that dies in the middle leaves exactly the
# acknowledged writes, plus the one in flight as issued only.
# client_verify accepts at each offset what the guarantee allows: the last
# acknowledged write, or a later write that was issued but never
# acknowledged (it may or may not have reached the disk). Older data,
# zeros or anything else is a failure.
#
# Environment:
#   CLIENT_RES     tandem resource (export) name, default mysql
#   CLIENT_LEDGER  the ledger file, default $tmp/client.ledger
#   CLIENT_SPAN    blocks the client uses, default 2048 (8 MiB), at most
#                  the size of the export
#
# Both return 0 on success; client_write returns 1 if fewer than COUNT
# writes were acknowledged, client_verify 1 if a block differs or cannot
# be read (and prints which, with the sequence number found there).

: "${CLIENT_RES:=mysql}"
: "${CLIENT_LEDGER:=${tmp:?client.sh needs functions.sh}/client.ledger}"
: "${CLIENT_SPAN:=2048}"

# client_uri: the export's NBD URI, as seen in a node
client_uri() {
	echo "nbd+unix:///$CLIENT_RES?socket=/run/tandem/$CLIENT_RES.nbd"
}

# client_nbdsh NODE ARG...: nbdsh in NODE, with the system's PATH (nbdsh
# runs "python3" from PATH, and the Python module nbd is the system's)
client_nbdsh() {
	cn_node=$1
	shift
	"$TCLUSTER" exec "$cn_node" env PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		nbdsh "$@"
}

# client_serves NODE: NODE's export serves a read
client_serves() {
	client_nbdsh "$1" -u "$(client_uri)" -c 'h.pread(4096, 0)' \
		>/dev/null 2>&1
}

# client_acked: the number of acknowledged writes in the ledger
client_acked() {
	if [ -f "$CLIENT_LEDGER" ]; then
		grep -c '^[0-9]* [0-9]* [0-9a-f]*$' "$CLIENT_LEDGER"
	else
		echo 0
	fi
}

# client_write NODE COUNT [TIMES]: with TIMES, each acknowledgement's
# CLOCK_REALTIME in ms is appended there too ("SEQ MS"), as the client saw it
client_write() {
	cw_node=$1
	cw_count=$2
	cw_times=${3:-}
	# a line cut short by an older writer's death must not swallow our first
	if [ -s "$CLIENT_LEDGER" ] && [ -n "$(tail -c 1 "$CLIENT_LEDGER")" ]; then
		echo >>"$CLIENT_LEDGER"
	fi
	cw_before=$(client_acked)
	# sequence numbers are never reused, not even an unacknowledged one's
	cw_first=$(($(awk 'NF == 3 && $1 > m { m = $1 }
		NF == 4 && $1 == "issued" && $2 > m { m = $2 }
		END { print m + 0 }' "$CLIENT_LEDGER" 2>/dev/null || echo 0) + 1))
	client_nbdsh "$cw_node" -u "$(client_uri)" -c "
import hashlib, os, sys, time
first, count, span = $cw_first, $cw_count, $CLIENT_SPAN
times = bool('$cw_times')
nblk = min(span, h.get_size() // 4096)
flags = nbd.CMD_FLAG_FUA if h.can_fua() else 0
for seq in range(first, first + count):
    off = ((seq - 1) % nblk) * 4096
    head = b'tandem-client seq=%d off=%d\n' % (seq, off)
    buf = head + os.urandom(4096 - len(head))
    sha = hashlib.sha256(buf).hexdigest()
    # one write(2) per line: print() writes the newline separately, and a
    # writer killed between the two leaves a line the next one runs into
    os.write(1, b'issued %d %d %s\n' % (seq, off, sha.encode()))
    h.pwrite(buf, off, flags)
    os.write(1, b'%d %d %s\n' % (seq, off, sha.encode()))
    if times:
        os.write(3, b'%d %d\n' % (seq, time.time_ns() // 1000000))
if not flags:
    h.flush()
" >>"$CLIENT_LEDGER" 3>>"${cw_times:-/dev/null}"
	cw_rc=$?
	cw_n=$(($(client_acked) - cw_before))
	if [ "$cw_rc" -ne 0 ] || [ "$cw_n" -ne "$cw_count" ]; then
		echo "client_write $cw_node: $cw_n of $cw_count writes" \
			"acknowledged (nbdsh exit $cw_rc)" >&2
		return 1
	fi
	return 0
}

# The ledger check, in Python, reading blocks through h.pread (an nbdsh
# handle, or the file reader that client_verify_disk defines): for each
# offset, the last acknowledged write must be there, or a later write that
# was issued and never acknowledged (it may or may not have landed); never
# older data, zeros or anything else.
client_check_py='
import hashlib, re, sys
last = {}    # offset -> (seq, sha) of its last acknowledged write
issued = {}  # offset -> [(seq, sha)] of writes issued there
acked = set()
for line in sys.stdin:
    f = line.split()
    if len(f) == 3 and f[0].isdigit():
        seq, off = int(f[0]), int(f[1])
        acked.add(seq)
        if off not in last or last[off][0] < seq:
            last[off] = (seq, f[2])
    elif len(f) == 4 and f[0] == "issued" and f[1].isdigit():
        issued.setdefault(int(f[2]), []).append((int(f[1]), f[3]))
bad = inflight = 0
for off in sorted(last):
    seq, want = last[off]
    # later writes that were issued and never acknowledged may be there
    later = {s: d for s, d in issued.get(off, []) if s > seq and s not in acked}
    got = hashlib.sha256(h.pread(4096, off)).hexdigest()
    if got == want:
        continue
    if got in later.values():
        inflight += 1
        continue
    bad += 1
    buf = h.pread(4096, off)
    m = re.match(rb"tandem-client seq=(\d+) off=(\d+)\n", buf)
    found = ("seq %s" % m.group(1).decode()) if m else \
            ("zeros" if buf == bytes(4096) else "foreign data")
    if bad <= 10:
        print("block at %d: expected seq %d%s, found %s" %
              (off, seq, " or later unacknowledged seq %s" %
               ",".join(str(s) for s in sorted(later)) if later else "",
               found), file=sys.stderr)
print("%s: %d blocks checked (last seq %d), %d bad, %d hold a write that "
      "was in flight and never acknowledged" %
      (WHERE, len(last), max(s for s, _ in last.values()), bad, inflight))
sys.exit(1 if bad else 0)
'

client_ledger_nonempty() {
	if [ "$(client_acked)" -eq 0 ]; then
		echo "client_verify: the ledger $CLIENT_LEDGER is empty:" \
			"call client_write first" >&2
		return 1
	fi
}

# client_verify NODE: the ledger against NODE's export (NODE is Primary)
client_verify() {
	client_ledger_nonempty || return 1
	client_nbdsh "$1" -u "$(client_uri)" -c "WHERE = '$1'
$client_check_py" <"$CLIENT_LEDGER"
}

# client_verify_disk NODE: the ledger against NODE's backing disk, read
# from the host (a Secondary has no export; its data area starts at 0)
client_verify_disk() {
	client_ledger_nonempty || return 1
	python3 -c "
import os
class File:
    def __init__(self, path):
        self.fd = os.open(path, os.O_RDONLY)
    def pread(self, n, off):
        return os.pread(self.fd, n, off)
h = File('$TC_DIR/nodes/$1/disk.img')
WHERE = '$1 (its disk)'
$client_check_py" <"$CLIENT_LEDGER"
}

# --- Bring-up shared by test-move, test-standby, test-linkcut and
# scripts/demo-cluster.sh ------------------------------------------------------
# tandem_cluster_up [DISK [CONF [NET]]]: a 2-node cluster with
# TANDEM_DESTDIR's tandemd, tandemadm, handlers and OCF agent injected; the
# resource CLIENT_RES on a 32 MiB file per node (protocol C; DISK: more
# options for its disk section, CONF: more lines for the resource section,
# where @sbin@ stands for the directory of the programs, such as
# /usr/local/sbin; NET: its net options but the protocol, by default
# "connect-int 1; ping-int 1; ping-timeout 5; timeout 5;", fast for the
# tests); both blank disks declared in sync (new-current-uuid
# --clear-bitmap, DRBD's "skip initial sync"); then promotable.xml loaded
# with Dummy stand-ins for the filesystem and the address, fence_tcluster
# for its IPMI devices (pcmk_reboot_action=off) and the agent starting
# tandemd through a wrapper that logs to the node's /var/log/tandemd.log.
# Returns 1 with a message on failure. Sets P (the promoted node), U (the
# other), sbin; on NODE CMD... runs CMD in NODE with tandem on PATH; tlog
# NODE prints NODE's tandemd log.
tandem_cluster_up() {
	tu_disk=${1:-}
	tu_conf=${2:-}
	tu_netopt=${3:-connect-int 1; ping-int 1; ping-timeout 5; timeout 5;}
	tu_dest=${TANDEM_DESTDIR:?}
	tu_agent=usr/lib/ocf/resource.d/tandem/tandem
	[ -x "$tu_dest/$tu_agent" ] || {
		echo "$tu_dest/$tu_agent is missing: is $tu_dest a make" \
			"install DESTDIR tree?" >&2
		return 1
	}
	sbin=""
	for tu_d in usr/sbin usr/local/sbin; do
		[ -x "$tu_dest/$tu_d/tandemd" ] && sbin=$tu_d && break
	done
	[ -n "$sbin" ] || {
		echo "no tandemd under $tu_dest/usr/sbin or usr/local/sbin" >&2
		return 1
	}
	tu_example=${here:?}/../../cib-examples/promotable.xml
	mkdir -p "$tmp/inject/$sbin" "$tmp/inject/${tu_agent%/*}"
	cp -a "$tu_dest/$sbin/." "$tmp/inject/$sbin/"
	cp -a "$tu_dest/$tu_agent" "$tmp/inject/$tu_agent"
	cat >"$tmp/inject/$sbin/tandemd-fg" <<EOT
#!/bin/sh
/$sbin/tandemd -f "\$@" </dev/null >>/var/log/tandemd.log 2>&1 &
EOT
	chmod 755 "$tmp/inject/$sbin/tandemd-fg"

	"$TCLUSTER" up 2 "$tmp/inject" >/dev/null || {
		echo "tcluster up 2 failed" >&2
		return 1
	}
	tu_net=$("$TCLUSTER" env | sed -n 's/^TC_REPL_NET=//p')
	for tu_n in n1 n2; do
		truncate -s 32M "$TC_DIR/nodes/$tu_n/disk.img"
	done
	{
		echo "resource $CLIENT_RES {"
		echo "	net { protocol C; cram-hmac-alg sha256; shared-secret \"tandem-cluster-test\"; $tu_netopt }"
		echo "	disk { resync-rate 200M; c-plan-ahead 0; $tu_disk }"
		[ -z "$tu_conf" ] || echo "$tu_conf" | sed "s|@sbin@|/$sbin|g"
		for tu_i in 1 2; do
			echo "	on n$tu_i {"
			echo "		device minor 0;"
			echo "		disk $TC_DIR/nodes/n$tu_i/disk.img;"
			echo "		meta-disk internal;"
			echo "		address $tu_net.$tu_i:7789;"
			echo "	}"
		done
		echo "}"
	} >"$tmp/tandem.conf"
	for tu_n in n1 n2; do
		"$TCLUSTER" exec "$tu_n" sh -c 'cat >/etc/tandem.conf' \
			<"$tmp/tandem.conf" &&
			on "$tu_n" tandemadm create-md --force "$CLIENT_RES" \
				>/dev/null &&
			on "$tu_n" tandemd-fg &&
			retry 10 on "$tu_n" test -S /run/tandem/tandemd.sock &&
			on "$tu_n" tandemadm up "$CLIENT_RES" || {
			echo "$tu_n: cannot bring $CLIENT_RES up:" \
				"$(tlog "$tu_n")" >&2
			return 1
		}
	done
	on n1 tandemadm wait-connect --timeout 20 "$CLIENT_RES" >/dev/null &&
		on n1 tandemadm new-current-uuid --clear-bitmap "$CLIENT_RES" &&
		retry 10 tu_dstate_is n2 UpToDate/UpToDate || {
		echo "the blank disks are not UpToDate/UpToDate: $(tlog n1)" >&2
		return 1
	}
	# The agent starts tandemd itself, through the wrapper.
	# shellcheck disable=SC2016 # expanded in the node
	for tu_n in n1 n2; do
		on "$tu_n" tandemadm down "$CLIENT_RES" &&
			on "$tu_n" sh -c 'kill "$(cat /run/tandem/tandemd.pid)"' &&
			retry 10 not on "$tu_n" test -e /run/tandem/tandemd.pid || {
			echo "$tu_n: cannot stop tandemd" >&2
			return 1
		}
	done

	sed -e 's/provider="heartbeat" type="Filesystem"/provider="pacemaker" type="Dummy"/' \
		-e 's/provider="heartbeat" type="IPaddr2"/provider="pacemaker" type="Dummy"/' \
		-e 's/type="fence_ipmilan"/type="fence_tcluster"/' \
		-e '/instance_attributes-\(ip\|username\|password\|lanplus\)"/d' \
		-e 's|\( *\)\(<nvpair id="fence-\([a-z]*\)-instance_attributes-pcmk_host_list"\)|\1<nvpair id="fence-\3-ra" name="pcmk_reboot_action" value="off"/>\n\1\2|' \
		-e "s|\( *\)\(<nvpair id=\"mysql-data-instance_attributes-resource\"\)|\1<nvpair id=\"mysql-data-ia-tandemd\" name=\"tandemd\" value=\"/$sbin/tandemd-fg\"/>\n\1\2|" \
		-e "s/name=\"resource\" value=\"mysql\"/name=\"resource\" value=\"$CLIENT_RES\"/" \
		-e 's/"alice"/"n1"/' -e 's/"bob"/"n2"/' \
		"$tu_example" >"$tmp/cib.xml"
	for tu_a in pcmk_reboot_action tandemd; do
		grep -q "name=\"$tu_a\"" "$tmp/cib.xml" || {
			echo "promotable.xml has changed: cannot add $tu_a" >&2
			return 1
		}
	done
	# The machine is shared and its load is no cluster's own: without this
	# Pacemaker throttles ("High CPU load detected") and runs the two
	# starts one after the other, the first waiting out wfc_timeout.
	"$TCLUSTER" exec n1 crm_attribute -t crm_config -n load-threshold \
		-v 10000% >/dev/null 2>&1
	for tu_s in resources constraints; do
		sed -n "/<$tu_s>/,/<\/$tu_s>/p" "$tmp/cib.xml" >"$tmp/$tu_s.xml"
		"$TCLUSTER" exec n1 cibadmin --replace --scope "$tu_s" \
			--xml-text "$(cat "$tmp/$tu_s.xml")" || {
			echo "cannot load the $tu_s of promotable.xml" >&2
			return 1
		}
	done
	"$TCLUSTER" wait -t 60 promoted mysql-data-clone >/dev/null || {
		echo "mysql-data-clone is not promoted on one node" >&2
		"$TCLUSTER" exec n1 crm_mon -1 -A >&2
		grep -h 'mysql-data' "$TC_DIR"/nodes/*/log/cluster/pacemaker.log |
			grep -i -e 'tandem(' -e error -e warn -e refused |
			tail -n 20 >&2
		return 1
	}
	P=$("$TCLUSTER" promoted mysql-data-clone)
	case $P in
	n1) U=n2 ;;
	n2) U=n1 ;;
	*) echo "promoted on '$P'" >&2; return 1 ;;
	esac
	"$TCLUSTER" wait -t 30 role mysql-data-clone "$U" Unpromoted \
		>/dev/null && "$TCLUSTER" wait -t 30 settled >/dev/null || {
		echo "mysql-data-clone is not Unpromoted on $U" >&2
		return 1
	}
}
tu_dstate_is() { [ "$(on "$1" tandemadm dstate "$CLIENT_RES")" = "$2" ]; }

# arbiter_start NODE: tandem-arbiterd in NODE, logging to its
# /var/log/tandem-arbiterd.log, until its socket is there
arbiter_start() {
	on "$1" sh -c "/$sbin/tandem-arbiterd </dev/null \
		>>/var/log/tandem-arbiterd.log 2>&1 &" &&
		retry 10 on "$1" test -S /run/tandem/arbiter.sock
}
# alog NODE: NODE's arbiter log
alog() { cat "$TC_DIR/nodes/$1/log/tandem-arbiterd.log" 2>/dev/null; }
# arbiter_records NODE: in NODE's arbiter, the fresh records of CLIENT_RES
# whose tandemd has it up, as "node:role:disk" lines
arbiter_records() {
	on "$1" tandemadm arbiter --json 2>/dev/null | python3 -c '
import json, sys
t = json.load(sys.stdin)
for r in t.get("records", []):
    if r["resource"] == sys.argv[1] and r["fresh"] and r["up"]:
        print("%s:%s:%s" % (r["node"], r["role"], r["disk"]))
' "$CLIENT_RES"
}

# on NODE CMD...: CMD in NODE, with tandem's programs on PATH
on() {
	on_n=$1
	shift
	"$TCLUSTER" exec "$on_n" \
		env PATH="/${sbin:-usr/sbin}:/usr/sbin:/usr/bin:/sbin:/bin" "$@"
}
# tlog NODE: NODE's tandemd log (tandem_cluster_up's wrapper writes it)
tlog() { cat "$TC_DIR/nodes/$1/log/tandemd.log" 2>/dev/null; }

# --- Waiting on the client and timing the export ------------------------------
# client_wait_acked N [SECONDS]: until the ledger holds at least N
# acknowledged writes (a background client_write is under way), at most
# SECONDS (default 30)
client_wait_acked() {
	# shellcheck disable=SC2016 # expanded by that sh
	retry "${2:-30}" sh -c '[ "$(grep -c "^[0-9]* [0-9]* [0-9a-f]*$" \
		"$1" 2>/dev/null)" -ge "$2" ]' - "$CLIENT_LEDGER" "$1"
}

# client_probe_start NODE FILE [SECONDS]: a probe in NODE, in the
# background, that tries every 20 ms to connect to the export and read
# 4 KiB, and writes to FILE "ready" once it runs and "served MS" (the epoch
# time in ms of its first successful read) then; it gives up after SECONDS
# (default 60).  The probe's Python starts before what it times: its own
# cost is one connection and one read, a few ms, not nbdsh's 0.5 s.
client_probe_start() {
	: >"$2"
	client_nbdsh "$1" -c "
import sys, time
print('ready', flush=True)
end = time.time() + ${3:-60}
while time.time() < end:
    g = nbd.NBD()
    try:
        g.connect_uri('$(client_uri)')
        g.pread(4096, 0)
        print('served %d' % int(time.time() * 1000), flush=True)
        sys.exit(0)
    except nbd.Error:
        pass
    finally:
        del g
    time.sleep(0.02)
print('gave up', flush=True)
sys.exit(1)
" >>"$2" 2>&1 &
	client_probe_pid=$!
	retry 20 grep -q '^ready' "$2"
}

# client_probe_wait FILE: waits for the probe started last; sets
# probe_served to the time of its first successful read (epoch ms), or
# fails (not in a subshell: the probe is this shell's child)
client_probe_wait() {
	wait "$client_probe_pid"
	probe_served=$(sed -n 's/^served \([0-9]*\)$/\1/p' "$1")
	[ -n "$probe_served" ]
}

# --- CPU starvation ---------------------------------------------------------------
# The machine may be shared: a node that waits for a CPU is slow for a
# reason that is not the product's.  Each node's cgroup counts it (PSI,
# cpu.pressure): "full ... total=US" grows while every runnable task of
# the node waits for a CPU, that is while the node makes no progress for
# want of one.  The tests print what a timing took, and how much of it the
# node spent so; their bounds apply to the rest.
# stall_start NODE: samples NODE's stall every 50 ms into $tmp/stall.NODE
# (epoch us, stall us), in the background, until stall_stop or until the
# node's cgroup is gone; nothing without PSI
stall_pids="" stall_nodes=""
stall_start() {
	ss_f=$("$TCLUSTER" env | sed -n 's/^TC_CG=//p')/$1/cpu.pressure
	: >"$tmp/stall.$1"
	[ -r "$ss_f" ] || return 0
	stall_nodes="$stall_nodes $1"
	# shellcheck disable=SC2016 # bash's, without a fork per sample
	bash -c 'while { read -r _ && read -r _ _ _ _ t; } <"$1" 2>/dev/null; do
		echo "${EPOCHREALTIME/./} ${t#total=}"
		sleep 0.05
	done' - "$ss_f" >>"$tmp/stall.$1" 2>/dev/null &
	stall_pids="$stall_pids $!"
	# its first sample, before what it measures
	retry 5 test -s "$tmp/stall.$1"
}
stall_stop() {
	# a sample after what was measured, in every file
	ss_now=$(date +%s%6N)
	for ss_n in $stall_nodes; do
		ss_f=$tmp/stall.$ss_n
		[ -s "$ss_f" ] || continue
		# shellcheck disable=SC2016 # expanded by that sh
		retry 2 sh -c '[ "$(tail -n 1 "$1" | cut -d" " -f1)" -ge "$2" ]' \
			- "$ss_f" "$ss_now"
	done
	for ss_p in $stall_pids; do
		kill "$ss_p" 2>/dev/null
		wait "$ss_p" 2>/dev/null
	done
	stall_pids="" stall_nodes=""
}
# stall_ms NODE FROM TO: how many of the ms between the epoch times FROM
# and TO (ms) NODE spent waiting for a CPU (interpolated between samples);
# 0 without PSI, "?" if the samples do not cover the interval
stall_ms() {
	[ -s "$tmp/stall.$1" ] || { echo 0; return; }
	awk -v a="$2" -v b="$3" '
	BEGIN { n = 0 }
	function at(x,   i) {
		for (i = 1; i < n; i++)
			if (t[i] >= x)
				return s[i - 1] + (s[i] - s[i - 1]) * (x - t[i - 1]) / (t[i] - t[i - 1])
		return s[n - 1]
	}
	{ t[n] = $1 / 1000; s[n] = $2 / 1000; n++ }
	END {
		if (n < 2 || a < t[0] || b > t[n - 1] || b < a) { print "?"; exit }
		printf "%d\n", at(b) - at(a) + 0.5
	}' "$tmp/stall.$1"
}

# --- Times from the logs ----------------------------------------------------------
# Every log here is written in the same clock (one machine, UTC), with
# milliseconds: tandemd's "Dec 03 18:47:22.662 tandemd: ...", fence.log's
# "2026-12-03 18:47:22.662 n2[123] off n1: off", Pacemaker's
# "Dec 03 18:47:22.662 n2 pacemaker-... ".
# log_ms LINE: the epoch time in ms of a log line
log_ms() {
	case $1 in
	[0-9][0-9][0-9][0-9]-*) date -d "$(echo "$1" | cut -c1-23)" +%s%3N ;;
	*) date -d "$(echo "$1" | cut -c1-19)" +%s%3N ;;
	esac
}
# first_ms ERE FILE...: the time of the first line matching ERE, or fails
first_ms() {
	fm_re=$1
	shift
	fm_l=$(grep -hE -- "$fm_re" "$@" 2>/dev/null | head -n 1)
	[ -n "$fm_l" ] && log_ms "$fm_l"
}
# fenced_ms VICTIM: when fence_tcluster finished powering VICTIM off (its
# last "off" in fence.log): Pacemaker's fencing of it is complete then
fenced_ms() {
	fd_l=$(grep -E " (off|reboot) $1: (reboot: )?off$" \
		"$TC_DIR/shared/fence.log" 2>/dev/null | tail -n 1)
	[ -n "$fd_l" ] && log_ms "$fd_l"
}
# primary_ms NODE: when NODE's tandemd last became Primary
primary_ms() {
	pm_l=$(tlog "$1" | grep 'role( Secondary -> Primary )' | tail -n 1)
	[ -n "$pm_l" ] && log_ms "$pm_l"
}

# --- The agent's and Pacemaker's view -----------------------------------------
# agent_log NODE: the agent's lines (tandem(RSC)[PID]: LEVEL: ...) that
# Pacemaker logged on NODE, without Pacemaker's prefix
agent_log() {
	grep -h 'tandem(' "$TC_DIR/nodes/$1/log/cluster/pacemaker.log" \
		2>/dev/null
}
# failures NODE: the failed operations and non-zero fail counts in NODE's
# view (crm_mon --output-as=xml: its <failures> section, the fail-count of
# every resource's history, a resource marked failed); nothing when there
# are none
failures() {
	"$TCLUSTER" exec "$1" crm_mon -1 -r --include=failcounts \
		--output-as=xml 2>/dev/null |
		grep -E '<failure |fail-count="[1-9]| failed="true"'
}
# no_failures NODE: none (and says what there is otherwise)
no_failures() {
	nf=$(failures "$1")
	[ -z "$nf" ] && return 0
	echo "$nf" | sed 's/^ */# failure: /'
	return 1
}

# --- The recommended fencing ---------------------------------------------------------
# The configuration of doc/fence-handlers.md, as tandem_cluster_up's DISK
# and CONF arguments: `fencing resource-only`, fence-peer, unfence-peer and
# after-resync-target.  The tests' *-fencing.sh variants set
# TANDEM_FENCING=1 and run their test with it.
# shellcheck disable=SC2034 # for the tests that source this file
FENCE_DISK="fencing resource-only;"
# shellcheck disable=SC2034
FENCE_HANDLERS='	handlers {
		fence-peer "@sbin@/tandem-fence-peer";
		unfence-peer "@sbin@/tandem-unfence-peer";
		after-resync-target "@sbin@/tandem-unfence-peer";
	}'
# fence_constraint: the tandem-fence-RES constraint's allowed node, if any
fence_constraint() {
	"$TCLUSTER" exec "${1:-n1}" cibadmin --query --scope constraints \
		2>/dev/null | tr -d '\n' |
		grep -o "<rsc_location id=\"tandem-fence-$CLIENT_RES\".*</rsc_location>" |
		sed -n 's/.*attribute="#uname" operation="ne" value="\([^"]*\)".*/\1/p'
}

# --- Moves ----------------------------------------------------------------------------
# timed_move TO ON CMD...: runs CMD, a move of the Promoted role to node
# TO, in node ON (under `timeout 90`), in the background, with a probe in
# TO (client_probe_start); sets t_serve (when TO's export first served a
# read) and t_cmd (when CMD returned), in ms since CMD was started, and
# t_cmd_stall, the ms of t_cmd that ON spent waiting for a CPU
# (stall_ms); prints CMD's output; returns CMD's status
# shellcheck disable=SC2034 # t_cmd, t_serve and t_cmd_stall are for the caller
timed_move() {
	tm_to=$1 tm_on=$2
	shift 2
	client_probe_start "$tm_to" "$tmp/move.probe" 95 || return 1
	stall_start "$tm_on"
	tm_t0=$(date +%s%3N)
	"$TCLUSTER" exec "$tm_on" timeout 90 "$@" >"$tmp/move.out" 2>&1 &
	tm_pid=$!
	wait "$tm_pid"
	tm_rc=$?
	tm_t1=$(date +%s%3N)
	t_cmd=$((tm_t1 - tm_t0))
	t_serve=""
	client_probe_wait "$tmp/move.probe" &&
		t_serve=$((probe_served - tm_t0))
	stall_stop
	t_cmd_stall=$(stall_ms "$tm_on" "$tm_t0" "$tm_t1")
	cat "$tmp/move.out"
	return "$tm_rc"
}
# within_cpu BOUND MS STALL: MS, less STALL when known, is at most BOUND
within_cpu() {
	case $3 in
	'' | '?') [ "$2" -le "$1" ] ;;
	*) [ $(($2 - $3)) -le "$1" ] ;;
	esac
}

# --- The arbiter, more (issue 18's scenarios) -------------------------------------
# arbiter_table_is NODE LINE...: NODE's arbiter_records are exactly the
# lines LINE... ("node:role:disk"), in any order
arbiter_table_is() {
	at_n=$1
	shift
	[ "$(arbiter_records "$at_n" | sort)" = "$(printf '%s\n' "$@" | sort)" ]
}
# arbiter_ask NODE JSON: one request to NODE's tandem-arbiterd on
# /run/tandem/arbiter.sock (doc/arbiter.md §7: one JSON object a line, as
# tandemadm arbiter sends "show"); prints the answer's line; fails if
# nothing answers within 10 s
arbiter_ask() {
	on "$1" python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect("/run/tandem/arbiter.sock")
s.sendall(sys.argv[1].encode() + b"\n")
buf = b""
while not buf.endswith(b"\n"):
    d = s.recv(65536)
    if not d:
        break
    buf += d
if not buf.strip():
    sys.exit(1)
sys.stdout.write(buf.decode())
' "$2"
}
# json_get KEY: the value of KEY in the JSON object on stdin (true/false
# for booleans, "null" for null), or nothing
json_get() {
	python3 -c '
import json, sys
try:
    v = json.load(sys.stdin).get(sys.argv[1])
except ValueError:
    sys.exit(1)
print(json.dumps(v) if isinstance(v, (bool, type(None))) else v)
' "$1"
}
# arbiter_record_of NODE WHO KEY: in NODE's arbiter table, the record of
# CLIENT_RES published by WHO: its KEY (fresh, age_ms, role, ...)
arbiter_record_of() {
	on "$1" tandemadm arbiter --json 2>/dev/null | python3 -c '
import json, sys
for r in json.load(sys.stdin).get("records", []):
    if r["resource"] == sys.argv[1] and r["node"] == sys.argv[2]:
        v = r.get(sys.argv[3])
        print(json.dumps(v) if isinstance(v, (bool, type(None))) else v)
' "$CLIENT_RES" "$2" "$3"
}
# arbiter_node_of NODE WHO KEY: in NODE's arbiter table, node WHO's KEY
# (ring, arbiter, left, fenced)
arbiter_node_of() {
	on "$1" tandemadm arbiter --json 2>/dev/null | python3 -c '
import json, sys
for n in json.load(sys.stdin).get("nodes", []):
    if n["name"] == sys.argv[1]:
        v = n.get(sys.argv[2])
        print(json.dumps(v) if isinstance(v, (bool, type(None))) else v)
' "$2" "$3"
}
# ack_times_between FILE FROM TO: the acknowledgements of a client_write
# TIMES file ("SEQ MS") strictly between the epoch ms FROM and TO
ack_times_between() {
	awk -v a="$2" -v b="$3" '$2 > a && $2 < b' "$1"
}
# tlog_ms NODE ERE [AFTER]: the epoch ms of NODE's first tandemd log line
# matching ERE at or after the epoch ms AFTER (default 0)
tlog_ms() {
	tlog "$1" | grep -E -- "$2" | while read -r tm_l; do
		tm_t=$(log_ms "$tm_l") || continue
		[ "$tm_t" -ge "${3:-0}" ] && { echo "$tm_t"; break; }
	done
}
# alog_ms NODE ERE [AFTER]: the same in NODE's arbiter log
alog_ms() {
	alog "$1" | grep -E -- "$2" | while read -r am_l; do
		am_t=$(log_ms "$am_l") || continue
		[ "$am_t" -ge "${3:-0}" ] && { echo "$am_t"; break; }
	done
}

# arbiter_pair NODE PRIMARY SECONDARY: NODE's arbiter holds both fresh
# records of CLIENT_RES, PRIMARY's as Primary and SECONDARY's as
# Secondary, both UpToDate (in either order)
arbiter_pair() {
	ap_got=$(arbiter_records "$1" | sort | tr '\n' ' ')
	[ "$ap_got" = "$(printf '%s\n' "$2:Primary:UpToDate" "$3:Secondary:UpToDate" |
		sort | tr '\n' ' ')" ]
}
# disks_same NODE: the data areas of the two nodes' backing files are
# equal (NODE's tandemd gives the size; the metadata is at their end)
disks_same() {
	ds_sect=$(on "$1" tandemadm status --json "$CLIENT_RES" |
		sed -n 's/.*"size_sect": *\([0-9]*\).*/\1/p' | head -n 1)
	[ -n "$ds_sect" ] && cmp -n $((ds_sect * 512)) \
		"$TC_DIR/nodes/n1/disk.img" "$TC_DIR/nodes/n2/disk.img"
}
