#!/bin/sh
# compare-drbdadm.sh: compare tandemadm with Debian drbd-utils' drbdadm-84
# on the valid corpus (TAP).
#
# For every corpus/valid/X.conf that drbdadm-84 accepts:
#   1. `tandemadm dump` and `drbdadm-84 dump` print the same configuration
#      once the documented drbdadm noise is normalised away;
#   2. sh-resources, and sh-dev, sh-ll-dev, sh-md-dev, sh-md-idx, sh-minor and
#      sh-ip of every resource of the node, print the same.
# A config drbdadm-84 refuses is reported as skipped (`# SKIP drbdadm-84
# rejects it (its message)`), not failed: the corpus deliberately holds
# pre-8.0 keywords and tandem extensions that drbdadm-84 does not read.
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
#   the ranges of some options (al-extents) and the cross-option rules (it
#   leaves them to the kernel); it refuses pre-8.0 keywords (incon-degr-cmd,
#   on-disconnect, syncer group, on-io-error panic, disable-io-hints), the
#   8.3 options 8.4 ignores (delay-probe-*, *-threshold), skip inside a
#   resource, discard-my-data in a file, on/off/true/false. Such configs are
#   skipped (drbdadm rejects them), and the invalid corpus is not compared.
#
# Cases whose dump is not compared (the sh-* test still runs): CASE REASON
EXCLUDE='
drbd84-volume-disk-options drbdadm-84 leaves resource-level volume disk options out of its dump
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
corpus=$(cd "$srcdir/corpus/valid" 2>/dev/null && pwd) || bail "no corpus under srcdir '$srcdir'"

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
# and of its included files, and those of `# local-addr:` header lines.
addresses() {
	{
		cat "$corpus/$1.conf"
		[ -d "$corpus/$1.d" ] && find "$corpus/$1.d" -type f -exec cat {} +
	} | sed -n 's/^.*address[[:space:]]\{1,\}\(ipv[46][[:space:]]\{1,\}\)\{0,1\}\[\{0,1\}\([0-9a-fA-F:.]\{1,\}\)\]\{0,1\}:[0-9]\{1,\}[[:space:]]*;.*$/\2/p'
	sed -n 's/^# local-addr:[[:space:]]*//p' "$corpus/$1.conf" | tr ' ' '\n'
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

# Runs in the namespace: $1 node, $2 conf, $3 output dir, $4.. addresses.
# shellcheck disable=SC2016
inside='
	node=$1 conf=$2 out=$3
	shift 3
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

cases=$(cd "$corpus" && for f in ./*.conf; do echo "${f#./}"; done | sort)
echo "1..$(($(echo "$cases" | wc -w) * 2))"

for conf in $cases; do
	x=${conf%.conf}
	c=valid/$x
	node=$(sed -n '1s/^# node: *\([^ ]*\).*$/\1/p' "$corpus/$conf")
	[ -n "$node" ] || bail "$c: first line is not '# node: NAME'"
	out=$tmp/$x
	mkdir "$out" || bail "mkdir failed"
	# shellcheck disable=SC2046
	(cd "$corpus" && DRBDADM84=$DRBDADM84 TANDEMADM=$TANDEMADM \
		unshare -u -n sh -c "$inside" inside "$node" "$conf" "$out" \
		$(addresses "$x" | sort -u)) >"$out/ns.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || [ ! -f "$out/d.rc" ]; then
		sed 's/^/# /' "$out/ns.log"
		bail "$c: could not set up the namespace (exit code $rc)"
	fi

	if [ "$(cat "$out/d.rc")" != 0 ]; then
		why=$(sed -e 's/^[^ ]*\.conf:[0-9]*: //' -e 's/^[[:space:]]*//' "$out/d.err" |
			grep -v '^$' | head -n 2 | tr '\n' ' ' | sed 's/ *$//')
		skip "$c: same dump as drbdadm-84" "drbdadm-84 rejects it ($why)"
		skip "$c: same sh-* output as drbdadm-84" "drbdadm-84 rejects it ($why)"
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

[ $failed -eq 0 ] || echo "# $failed of $n tests failed"
[ $failed -eq 0 ]
