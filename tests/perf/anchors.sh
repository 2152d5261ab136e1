# anchors.sh: user-space anchors that replicate over the same hops as
# tandemd, for the perf benchmarks (sourced by repl-bench.sh; POSIX sh).
# doc/perf-repl.md explains what each one measures.
#
#   relay   nbdkit's nbd plugin on the Primary's side, relaying every
#           request to the peer's NBD server (bob's nbdkit file plugin):
#           the same hops as a protocol C write (client -> relay -> link ->
#           peer -> link -> relay -> client) with no local disk: the floor
#           of one relay hop.
#   quorum  qemu-storage-daemon on the Primary's side, exporting NBD from a
#           quorum node (vote-threshold 2) over two children: a local raw
#           file and an NBD client of the peer's server. A request completes
#           when both children have completed it: a user-space synchronous
#           replicator doing tandemd's work over the same hops.
#
# Functions (each sets or clears a pid variable of this shell; start them
# in the shell that stops them, not in a subshell):
#
#   anchor_relay_start NS LISTEN PEER_URI [LOG]
#       NS        network namespace to run in ("" = the current one)
#       LISTEN    where the relay listens: /path (a Unix socket) or
#                 HOST:PORT (TCP)
#       PEER_URI  the peer's NBD server, nbd://HOST:PORT/[EXPORT] or
#                 nbd+unix:///[EXPORT]?socket=PATH
#       LOG       file for the daemon's output [/dev/null]
#     Sets anchor_relay_pid; returns once the relay answers an NBD
#     handshake (which also connects it to the peer), 1 after 10 s.
#   anchor_relay_stop
#
#   anchor_quorum_start NS LISTEN PEER_URI LOCAL_FILE [LOG]
#       LOCAL_FILE  the local child: a preallocated file of the export's
#                 size. Not a file that another daemon has open (tandemd's
#                 backing file while tandemd runs): use a separate one of
#                 the same size on the same file system.
#       other arguments as for the relay
#     Sets anchor_quorum_pid. The export is the default one (name "").
#     Settings (environment, read at start):
#       ANCHOR_QUORUM_DIRECT  cache.direct of the local child [off]: off
#                 is buffered I/O with a FLUSH as fdatasync, like tandemd
#                 (no O_DIRECT) and nbdkit's file plugin by default
#       ANCHOR_QUORUM_AIO     aio of the local child [threads]: threads
#                 (qemu's pool) or io_uring
#   anchor_quorum_stop
#       Stop it before the peer's server: qemu's NBD client holds its
#       connection, and an nbdkit waits for its clients when it is told
#       to stop.
#
#   anchor_uri LISTEN        the NBD URI a client uses for LISTEN
#   anchor_check NS URI OFFSET LENGTH READER...
#       writes LENGTH random bytes at OFFSET through URI, flushes, then
#       reads them back through URI and from each READER (an NBD URI, or
#       a file read at the same offset); 0 if every copy matches, else 1
#       with a message on stderr. Needs /usr/bin/python3 with python3-libnbd.
#
# Needs nbdkit (nbd plugin), qemu-storage-daemon (Debian: qemu-system-common),
# nbdinfo (libnbd-bin), ip (for NS).

anchor_uri() {
	case $1 in
	/*) echo "nbd+unix:///?socket=$1" ;;
	*) echo "nbd://$1/" ;;
	esac
}

# anchor__ns NS CMD...: CMD in namespace NS, or here when NS is empty
anchor__ns() {
	_ns=$1
	shift
	if [ -n "$_ns" ]; then
		ip netns exec "$_ns" "$@"
	else
		"$@"
	fi
}

# anchor__bg NS LOG CMD...: CMD in the background, in namespace NS (or
# here), output to LOG; its pid in anchor__pid. A function run with & would
# be a subshell whose pid is not CMD's: & is applied to CMD itself here.
anchor__bg() {
	_ns=$1
	_log=$2
	shift 2
	if [ -n "$_ns" ]; then
		ip netns exec "$_ns" "$@" >>"$_log" 2>&1 &
	else
		"$@" >>"$_log" 2>&1 &
	fi
	anchor__pid=$!
}

# anchor__wait NS URI PID: until an NBD handshake on URI succeeds, while
# PID lives; 10 s at most
anchor__wait() {
	_i=0
	while [ $_i -lt 100 ]; do
		kill -0 "$3" 2>/dev/null || return 1
		anchor__ns "$1" timeout 5 nbdinfo --size "$2" >/dev/null 2>&1 && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# anchor__stop PID: SIGTERM, 5 s, then SIGKILL
anchor__stop() {
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null || true
	_i=0
	while kill -0 "$1" 2>/dev/null && [ $_i -lt 50 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

anchor_relay_start() {
	_log=${4:-/dev/null}
	# -f: foreground, so that $! is nbdkit; the nbd plugin's thread model
	# is parallel, with one connection to the peer per client connection
	case $2 in
	/*)
		rm -f "$2"
		anchor__bg "$1" "$_log" nbdkit -f --exit-with-parent -U "$2" nbd uri="$3"
		;;
	*)
		anchor__bg "$1" "$_log" nbdkit -f --exit-with-parent -i "${2%:*}" -p "${2##*:}" nbd uri="$3"
		;;
	esac
	anchor_relay_pid=$anchor__pid
	anchor__wait "$1" "$(anchor_uri "$2")" "$anchor_relay_pid" || {
		echo "anchors: the relay did not start (see $_log)" >&2
		anchor_relay_stop
		return 1
	}
}

anchor_relay_stop() {
	anchor__stop "${anchor_relay_pid:-}"
	anchor_relay_pid=
}

# anchor__qaddr WHERE: a SocketAddress in JSON for /path, HOST:PORT or an
# NBD URI (nbd://HOST:PORT/..., nbd+unix:///...?socket=PATH)
anchor__qaddr() {
	case $1 in
	nbd+unix:*) printf '{"type":"unix","path":"%s"}' "${1#*socket=}" ;;
	nbd://*)
		_h=${1#nbd://}
		_h=${_h%%/*}
		case $_h in *:*) ;; *) _h=$_h:10809 ;; esac
		printf '{"type":"inet","host":"%s","port":"%s"}' "${_h%:*}" "${_h##*:}"
		;;
	/*) printf '{"type":"unix","path":"%s"}' "$1" ;;
	*) printf '{"type":"inet","host":"%s","port":"%s"}' "${1%:*}" "${1##*:}" ;;
	esac
}

# anchor__qexport URI: the export name in an NBD URI
anchor__qexport() {
	case $1 in
	nbd+unix:*) _e=${1#nbd+unix://}; _e=${_e#/}; echo "${_e%%\?*}" ;;
	*) _e=${1#nbd://}; case $_e in */*) echo "${_e#*/}" ;; *) echo ;; esac ;;
	esac
}

anchor_quorum_start() {
	case ${ANCHOR_QUORUM_DIRECT:-off} in on | true) _dir=true ;; *) _dir=false ;; esac
	_aio=${ANCHOR_QUORUM_AIO:-threads}
	_log=${5:-/dev/null}
	case $2 in /*) rm -f "$2" ;; esac
	# the local child: the file, buffered or not, flushes passed on
	_loc=$(printf '{"driver":"file","node-name":"q-local","filename":"%s","aio":"%s","cache":{"direct":%s,"no-flush":false}}' \
		"$4" "$_aio" "$_dir")
	# the remote child: qemu's NBD client of the peer's server
	_rem=$(printf '{"driver":"nbd","node-name":"q-peer","server":%s,"export":"%s","cache":{"direct":%s,"no-flush":false}}' \
		"$(anchor__qaddr "$3")" "$(anchor__qexport "$3")" "$_dir")
	_quo='{"driver":"quorum","node-name":"q","vote-threshold":2,"children":["q-local","q-peer"]}'
	anchor__bg "$1" "$_log" qemu-storage-daemon --blockdev "$_loc" --blockdev "$_rem" --blockdev "$_quo" \
		--nbd-server "{\"addr\":$(anchor__qaddr "$2")}" \
		--export '{"type":"nbd","id":"q-export","node-name":"q","name":"","writable":true}'
	anchor_quorum_pid=$anchor__pid
	anchor__wait "$1" "$(anchor_uri "$2")" "$anchor_quorum_pid" || {
		echo "anchors: qemu-storage-daemon did not start (see $_log)" >&2
		anchor_quorum_stop
		return 1
	}
}

anchor_quorum_stop() {
	anchor__stop "${anchor_quorum_pid:-}"
	anchor_quorum_pid=
}

anchor_check() {
	_ns=$1
	shift
	anchor__ns "$_ns" /usr/bin/python3 -c '
import os, sys, nbd
uri, off, n, readers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
data = os.urandom(n)
h = nbd.NBD()
h.connect_uri(uri)
h.pwrite(data, off)
h.flush()
copies = [("through " + uri, h.pread(n, off))]
h.shutdown()
for r in readers:
    if "://" in r:
        g = nbd.NBD()
        g.connect_uri(r)
        copies.append((r, g.pread(n, off)))
        g.shutdown()
    else:
        with open(r, "rb") as f:
            f.seek(off)
            copies.append((r, f.read(n)))
bad = [name for name, got in copies if got != data]
for name in bad:
    print("anchors: %d bytes at %d written through %s differ in %s" % (n, off, uri, name), file=sys.stderr)
sys.exit(1 if bad else 0)
' "$@"
}
