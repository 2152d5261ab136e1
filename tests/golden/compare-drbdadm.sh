#!/bin/sh
# compare-drbdadm.sh: compare tandemadm with Debian drbd-utils' drbdadm-84
# on the golden corpus (TAP).
#
# Every config of the corpus is read by both tools. They must agree on
# whether it is a configuration at all:
#   - corpus/invalid/X.conf (tandem refuses it): drbdadm-84 must refuse it
#     too, unless X is in TANDEM_REJECTS below, the list of configs tandem
#     refuses on purpose although drbdadm-84 accepts them, each with the
#     safety reason;
#   - corpus/valid/X.conf (tandem accepts it): drbdadm-84 must accept it
#     too, unless X is in DRBDADM_REJECTS, the list of tandem extensions and
#     pre-8.4 spellings that drbdadm-84 does not read, each with the reason.
# A listed config on which the two tools agree fails as well: the entry is
# stale, remove it.
#
# For every valid config that drbdadm-84 accepts, moreover:
#   1. `tandemadm dump` and `drbdadm-84 dump` print the same configuration
#      once the documented drbdadm noise is normalised away;
#   2. sh-resources, and sh-dev, sh-ll-dev, sh-md-dev, sh-md-idx, sh-minor and
#      sh-ip of every resource of the node, print the same.
#
# drbdadm-84 takes the node name from uname(2) and checks that the node's
# address is local, so both tools run in a private UTS and network namespace
# (unshare -u -n) whose host name is the node of the case (first line of the
# config, `# node: NAME`) and whose loopback carries every address of the
# config's `address` statements (those of X.conf and of the files under
# X.d/, where its includes live). Floating sections are matched by local
# address; drbdadm refuses a config where both floating addresses of a
# resource are local, so a case with floating sections names the address
# of this node in a second header line, `# local-addr: IP`.
#
# Needs root (unshare) and /usr/lib/drbd/drbdadm-84 (package drbd-utils);
# without either it prints why and exits 77 (skipped).
#
# Environment: TANDEMADM, srcdir as for run-golden.sh; DRBDADM84 (default
# /usr/lib/drbd/drbdadm-84).

LC_ALL=C
export LC_ALL
unset TANDEM_HOSTNAME TANDEM_CONFIG __DRBD_NODE__
DRBD_DONT_WARN_ON_VERSION_MISMATCH=1
export DRBD_DONT_WARN_ON_VERSION_MISMATCH

: "${srcdir:=$(dirname "$0")}"
: "${TANDEMADM:=../../replicator/tandemadm}"
: "${DRBDADM84:=/usr/lib/drbd/drbdadm-84}"

# What drbdadm-84 prints differently by design, and how it is handled:
#
# - Comment lines, runs of blanks and blank lines: drbdadm prints absolute
#   paths in its `# resource ...` / `# defined at` comments and aligns some
#   values differently (meta-disk DEV [N]). Normalised away.
# - drbd-utils 9.22 in v84 mode prints `cmd-timeout-medium 600;` and
#   `cmd-timeout-long 0;` in every global section it prints, whatever the
#   config says (the documented defaults are 121 and 600). Removed from
#   drbdadm's output unless tandem printed the same line.
# - udev-always-use-vnr: drbdadm-84 reads it but never prints it. Removed
#   from tandem's output (and a global section left empty by that).
# - Resource-level `volume N { disk { ... } }` options: drbdadm-84 leaves
#   them out of its dump (it inherits them into the host volumes only when
#   it expands the configuration for other commands); tandem prints them in
#   the host volumes. Cases using them are in EXCLUDE.
# - An option written twice in one section: drbdadm-84 prints every one
#   (and passes them all to drbdsetup, where the last one counts); tandem
#   prints the last one only. In each { } block of drbdadm's dump, only the
#   last `KEYWORD ...;` line of a keyword is kept.
# - drbdadm-84 does not check most enum values (after-sb-*, fencing, ...),
#   the ranges of some options and the cross-option rules (it leaves them
#   to drbdsetup and the kernel); it refuses pre-8.0 keywords
#   (incon-degr-cmd, on-disconnect, syncer group, on-io-error panic,
#   disable-io-hints), the 8.3 options 8.4 ignores (delay-probe-*,
#   *-threshold), skip inside a resource, discard-my-data in a file,
#   on/off/true/false. Hence the two lists below.
#
# Cases whose dump is not compared (the sh-* test still runs): CASE REASON
EXCLUDE='
drbd84-volume-disk-options drbdadm-84 leaves resource-level volume disk options out of its dump
'

# Valid configs (tandem accepts them) that drbdadm-84 refuses: CASE REASON.
DRBDADM_REJECTS='
drbd80-mailing-list pre-8.0 keywords drbdadm-84 no longer reads (disable-io-hints, incon-degr-cmd, on-disconnect, syncer group, on-io-error panic); tandem warns and ignores or maps them
drbd80-two-groups pre-8.0 keywords drbdadm-84 no longer reads (syncer group, on-disconnect, on-io-error panic); tandem warns and ignores or maps them
drbd83-ignored-options 8.3 syncer options 8.4 ignores (delay-probe-*, *-threshold) are parse errors to drbdadm-84; tandem warns and ignores them
skip-nested tandem extension: skip inside a resource, option, host or volume section (drbdadm-84 reads skip at top level only)
tandem-bool-spellings tandem extension: on/off and true/false (drbdadm-84 reads yes and no only)
tandem-quorum the DRBD 9 options quorum and on-no-quorum (issue 18, doc/arbiter.md §6.5): DRBD 8.4 has no quorum, drbdadm-84 does not read them
tandem-warnings discard-my-data in the file and device, disk, address and meta-disk twice in a host section: warnings in tandem, errors in drbdadm-84
'

# Invalid configs (tandem refuses them) that drbdadm-84 accepts, refused on
# purpose: CASE SAFETY-REASON. Any other disagreement is a bug: accept the
# config in tandem (with a warning), or add it here with its reason.
TANDEM_REJECTS='
discard-node-unknown drbdadm-84 turns discard-node-NAME of no host into discard-remote on both nodes, and the 8.4 kernel then refuses the connection (incompatible after-sb-0pri settings)
drbdsetup-refuses drbdadm-84 dump does not check these enum values, drbdsetup-84 refuses them (invalid argument): drbdadm up fails too
host-count drbdadm-84 cannot connect a resource with no peer section or several (use the --peer option); tandem replicates between exactly two hosts and must not guess the peer
kernel-refuses the 8.4 kernel refuses each at up (cpu-mask that does not parse, minor above 1048575, shared-secret over 64 bytes, hmac(crc32c), which would authenticate nothing)
resync-after-unknown drbdadm-84 reports the unknown name itself (and drops the option); the 8.4 kernel refuses a resync-after loop (ERR_RESYNC_AFTER_CYCLE)
stonith-protocol-a the 8.4 kernel refuses it (ERR_STONITH_AND_PROT_A): with protocol A, writes acknowledged before the peer was fenced can be lost
syntax-missing-brace-eof drbdadm-84 takes a file cut short for a whole one; the missing end may hold host sections or options, so tandem refuses it
two-primaries-protocol-b the 8.4 kernel refuses both (ERR_NOT_PROTO_C, ERR_CONG_NOT_PROTO_A): two primaries without protocol C can diverge silently
unsupported features tandem does not have (stacked resources, SDP and SuperSockets, an md4 HMAC): running without them would replicate less, elsewhere or unauthenticated
'

skip_all() {
	echo "1..0 # SKIP $*"
	echo "compare-drbdadm.sh: skipped: $*" >&2
	exit 77
}

bail() {
	echo "Bail out! $*"
	exit 99
}

[ -x "$DRBDADM84" ] || skip_all "$DRBDADM84 not found (install Debian's drbd-utils)"
[ "$(id -u)" = 0 ] || skip_all "needs root to run drbdadm-84 in a private namespace (unshare -u -n)"
command -v unshare >/dev/null 2>&1 || skip_all "unshare not found (util-linux)"
command -v ip >/dev/null 2>&1 || skip_all "ip not found (iproute2)"
unshare -u -n true 2>/dev/null || skip_all "unshare -u -n does not work here"

case $TANDEMADM in
/*) ;;
*) TANDEMADM=$(cd "$(dirname "$TANDEMADM")" 2>/dev/null && pwd)/$(basename "$TANDEMADM") ;;
esac
[ -x "$TANDEMADM" ] || bail "tandemadm not found at '$TANDEMADM' (set TANDEMADM)"
corpus=$(cd "$srcdir/corpus" 2>/dev/null && pwd) || bail "no corpus under srcdir '$srcdir'"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare-drbdadm.XXXXXX") || bail "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

n=0
failed=0

# lookup LIST CASE [TEST]: the reason of a CASE [TEST] line of LIST.
lookup() {
	printf '%s\n' "$1" | awk -v c="$2" -v t="$3" '
		$1 == c && (t == "" || $2 == t) {
			$1 = ""
			if (t != "")
				$2 = ""
			sub(/^ +/, "")
			print
			exit
		}'
}

# result OK NAME [DIAGNOSTICS-FILE [TODO-REASON]]
result() {
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
		[ -n "$3" ] && [ -s "$3" ] && sed 's/^/# /' "$3"
	fi
	return 0
}

skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

# The addresses to put on lo: those of the address statements of the case
# DIR/X and of its included files, and those of `# local-addr:` header lines.
addresses() {
	{
		cat "$1/$2.conf"
		[ -d "$1/$2.d" ] && find "$1/$2.d" -type f -exec cat {} +
	} | sed -n 's/^.*address[[:space:]]\{1,\}\(ipv[46][[:space:]]\{1,\}\)\{0,1\}\[\{0,1\}\([0-9a-fA-F:.]\{1,\}\)\]\{0,1\}:[0-9]\{1,\}[[:space:]]*;.*$/\2/p'
	sed -n 's/^# local-addr:[[:space:]]*//p' "$1/$2.conf" | tr ' ' '\n'
}

# norm FILE: the documented noise removed (see above).
norm() {
	sed -e '/^[[:space:]]*#/d' -e 's/[[:space:]]\{1,\}/ /g' -e 's/^ //' -e 's/ $//' \
		-e '/^$/d' "$1"
}

# last_wins: in each { } block, of the `KEYWORD ...;` lines with the same
# keyword only the last one (normalised input).
last_wins() {
	awk '
		function add(s, k) { n[d]++; line[d, n[d]] = s; key[d, n[d]] = k }
		/{$/ { d++; n[d] = 0; add($0, ""); next }
		/^}$/ && d > 0 {
			add($0, "")
			m = 0
			for (i = 1; i <= n[d]; i++) {
				for (j = i + 1; j <= n[d]; j++)
					if (key[d, i] != "" && key[d, j] == key[d, i])
						break
				if (j > n[d])
					keep[++m] = line[d, i]
			}
			d--
			for (i = 1; i <= m; i++)
				if (d == 0)
					print keep[i]
				else
					add(keep[i], "")
			next
		}
		/;$/ && d > 0 { add($0, $1); next }
		d == 0 { print; next }
		{ add($0, "") }'
}

# drop_empty_global: remove a `global {` `}` pair with nothing in between.
drop_empty_global() {
	awk '$0 == "global {" { held = 1; next }
		held && $0 == "}" { held = 0; next }
		held { print "global {"; held = 0 }
		{ print }'
}

# Runs in the namespace: $1 node, $2 conf, $3 output dir, $4 "sh" to run
# the sh-* commands too (or "-"), $5.. addresses.
# shellcheck disable=SC2016
inside='
	node=$1 conf=$2 out=$3 sh=$4
	shift 4
	ip link set lo up || exit 97
	for a in "$@"; do
		case $a in
		*:*) ip addr add "$a/128" dev lo nodad || exit 97 ;;
		*) ip addr add "$a/32" dev lo || exit 97 ;;
		esac
	done
	hostname "$node" || exit 97
	"$DRBDADM84" -c "$conf" dump >"$out/d.dump" 2>"$out/d.err" </dev/null
	echo $? >"$out/d.rc"
	"$TANDEMADM" -c "$conf" --node "$node" dump >"$out/t.dump" 2>"$out/t.err"
	echo $? >"$out/t.rc"
	[ "$sh" = sh ] || exit 0
	# sh-* transcripts: stdout and exit code of each command
	for tool in d t; do
		if [ $tool = d ]; then
			run() { "$DRBDADM84" -c "$conf" "$@" 2>/dev/null </dev/null; }
		else
			run() { "$TANDEMADM" -c "$conf" --node "$node" "$@" 2>/dev/null; }
		fi
		{
			echo "sh-resources:"
			res=$("$DRBDADM84" -c "$conf" sh-resources 2>/dev/null </dev/null)
			run sh-resources
			echo "exit $?"
			for r in $res; do
				for v in sh-dev sh-ll-dev sh-md-dev sh-md-idx sh-minor sh-ip; do
					echo "$v $r:"
					run $v "$r"
					echo "exit $?"
				done
			done
		} >"$out/$tool.sh"
	done
	exit 0
'

cases_valid=$(cd "$corpus/valid" && for f in ./*.conf; do echo "${f#./}"; done | sort)
cases_invalid=$(cd "$corpus/invalid" && for f in ./*.conf; do echo "${f#./}"; done | sort)
echo "1..$(($(echo "$cases_valid" | wc -w) * 3 + $(echo "$cases_invalid" | wc -w)))"

# run KIND X MODE: both tools on corpus/KIND/X.conf in a namespace; the
# results are in $tmp/KIND-X (d.* drbdadm-84, t.* tandemadm).
run() {
	node=$(sed -n '1s/^# node: *\([^ ]*\).*$/\1/p' "$corpus/$1/$2.conf")
	[ -n "$node" ] || bail "$1/$2: first line is not '# node: NAME'"
	out=$tmp/$1-$2
	mkdir "$out" || bail "mkdir failed"
	# shellcheck disable=SC2046
	(cd "$corpus/$1" && DRBDADM84=$DRBDADM84 TANDEMADM=$TANDEMADM \
		unshare -u -n sh -c "$inside" inside "$node" "$2.conf" "$out" "$3" \
		$(addresses "$corpus/$1" "$2" | sort -u)) >"$out/ns.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || [ ! -f "$out/d.rc" ]; then
		sed 's/^/# /' "$out/ns.log"
		bail "$1/$2: could not set up the namespace (exit code $rc)"
	fi
}

# why FILE: the first lines of drbdadm's messages, on one line.
why() {
	sed -e 's/^[^ ]*\.conf:[0-9]*: //' -e 's/^[[:space:]]*//' "$1" |
		grep -v '^$' | head -n 2 | tr '\n' ' ' | sed 's/ *$//'
}

for conf in $cases_valid; do
	x=${conf%.conf}
	c=valid/$x
	run valid "$x" sh
	d_rc=$(cat "$out/d.rc")

	# 0. drbdadm-84 accepts it too, or is listed as refusing it
	: >"$out/diag"
	listed=$(lookup "$DRBDADM_REJECTS" "$x")
	if [ "$d_rc" = 0 ] && [ -z "$listed" ]; then
		result ok "$c: drbdadm-84 accepts it too"
	elif [ "$d_rc" = 0 ]; then
		echo "drbdadm-84 accepts it, but DRBDADM_REJECTS lists it; remove the entry" >"$out/diag"
		result "not ok" "$c: drbdadm-84 accepts it too" "$out/diag"
	elif [ -n "$listed" ]; then
		result ok "$c: drbdadm-84 refuses it, as listed: $listed"
	else
		{
			echo "drbdadm-84 refuses a config tandem accepts (exit code $d_rc):"
			cat "$out/d.err"
			echo "fix tandem, or add '$x REASON' to DRBDADM_REJECTS"
		} >"$out/diag"
		result "not ok" "$c: drbdadm-84 accepts it too" "$out/diag"
	fi
	if [ "$d_rc" != 0 ]; then
		skip "$c: same dump as drbdadm-84" "drbdadm-84 rejects it ($(why "$out/d.err"))"
		skip "$c: same sh-* output as drbdadm-84" "drbdadm-84 rejects it ($(why "$out/d.err"))"
		continue
	fi

	# 1. dump
	: >"$out/diag"
	excl=$(lookup "$EXCLUDE" "$x")
	if [ -n "$excl" ]; then
		skip "$c: same dump as drbdadm-84" "excluded: $excl"
	elif [ "$(cat "$out/t.rc")" != 0 ]; then
		{
			echo "tandemadm exit code $(cat "$out/t.rc"), drbdadm-84 accepts the config:"
			cat "$out/t.err"
		} >"$out/diag"
		result "not ok" "$c: same dump as drbdadm-84" "$out/diag"
	else
		norm "$out/t.dump" >"$out/t.norm"
		if grep -qx 'udev-always-use-vnr;' "$out/t.norm"; then
			grep -vx 'udev-always-use-vnr;' "$out/t.norm" | drop_empty_global >"$out/t.tmp"
			mv "$out/t.tmp" "$out/t.norm"
		fi
		norm "$out/d.dump" | last_wins | awk -v t="$out/t.norm" '
			BEGIN { while ((getline l <t) > 0) have[l] = 1 }
			($0 == "cmd-timeout-medium 600;" || $0 == "cmd-timeout-long 0;") &&
				!($0 in have) { next }
			{ print }' >"$out/d.norm"
		if cmp -s "$out/d.norm" "$out/t.norm"; then
			result ok "$c: same dump as drbdadm-84"
		else
			echo "normalised dumps differ (--- drbdadm-84, +++ tandemadm):" >"$out/diag"
			diff -u "$out/d.norm" "$out/t.norm" | sed '1,2d' >>"$out/diag"
			result "not ok" "$c: same dump as drbdadm-84" "$out/diag"
		fi
	fi

	# 2. sh-*
	if cmp -s "$out/d.sh" "$out/t.sh"; then
		result ok "$c: same sh-* output as drbdadm-84"
	else
		{
			echo "sh-* transcripts differ (--- drbdadm-84, +++ tandemadm):"
			diff -u "$out/d.sh" "$out/t.sh" | sed '1,2d'
		} >"$out/diag"
		result "not ok" "$c: same sh-* output as drbdadm-84" "$out/diag"
	fi
done

for conf in $cases_invalid; do
	x=${conf%.conf}
	c=invalid/$x
	run invalid "$x" -
	d_rc=$(cat "$out/d.rc")
	: >"$out/diag"
	listed=$(lookup "$TANDEM_REJECTS" "$x")
	if [ "$(cat "$out/t.rc")" = 0 ]; then
		echo "tandemadm accepts it; run-golden.sh says more" >"$out/diag"
		result "not ok" "$c: drbdadm-84 refuses it too" "$out/diag"
	elif [ "$d_rc" != 0 ] && [ -z "$listed" ]; then
		result ok "$c: drbdadm-84 refuses it too"
	elif [ "$d_rc" != 0 ]; then
		{
			echo "drbdadm-84 refuses it, but TANDEM_REJECTS lists it; remove the entry:"
			cat "$out/d.err"
		} >"$out/diag"
		result "not ok" "$c: drbdadm-84 refuses it too" "$out/diag"
	elif [ -n "$listed" ]; then
		result ok "$c: drbdadm-84 accepts it; refused on purpose: $listed"
	else
		{
			echo "tandem refuses a config drbdadm-84 accepts:"
			cat "$out/t.err"
			echo "accept it in tandem (with a warning), or add '$x SAFETY-REASON' to TANDEM_REJECTS"
		} >"$out/diag"
		result "not ok" "$c: drbdadm-84 refuses it too" "$out/diag"
	fi
done

[ $failed -eq 0 ] || echo "# $failed of $n tests failed"
[ $failed -eq 0 ]
