#!/bin/sh
# cib-examples/: every CIB XML example passes crm_verify; the crmsh and pcs
# scripts build the same configuration as their XML form; and crm_simulate,
# on a file-backed CIB with both nodes online, promotes the instance with
# the highest promotion score, and none that the fence-peer handler's
# constraint forbids. The move/ban/clear commands of the README leave the
# constraints it says. No cluster needed; crmsh and pcs parts are skipped,
# with the reason printed, when the tool is not installed.
. "$(dirname "$0")/functions.sh"
requires crm_verify
requires crm_simulate
requires crm_attribute
requires crm_resource
requires cibadmin
requires python3

ex=$(cd "$(dirname "$0")/../../cib-examples" && pwd)
clone=mysql-data-clone
score=master-mysql-data # promotion score of primitive mysql-data
fence_id=tandem-fence-mysql

# keys FILE: the configuration's key elements, one per line, sorted: ids,
# agents, parameters, meta attributes, operations, constraints. Role
# spellings (Master/Slave), default roles and actions, time units and
# XML ids of nvpairs and ops are normalized away.
cat >"$tmp/keys.py" <<'PY'
import re, sys
import xml.etree.ElementTree as ET

ROLES = {"Master": "Promoted", "Slave": "Unpromoted"}
IGNORED = {"dc-version", "cluster-infrastructure", "cluster-name",
           "have-watchdog", "last-lrm-refresh"}
UNITS = {"ms": 0.001, "msec": 0.001, "s": 1, "sec": 1, "m": 60, "min": 60,
         "h": 3600, "hr": 3600}

def secs(v):
    if v is None:
        return "-"
    m = re.fullmatch(r"\s*(\d+)\s*([a-z]*)\s*", v)
    if not m or m.group(2) not in UNITS and m.group(2) != "":
        return v
    return "%g" % (int(m.group(1)) * UNITS.get(m.group(2), 1))

def role(v, default="Started"):
    return ROLES.get(v, v) if v else default

def score(v):
    return {"inf": "INFINITY", "+INFINITY": "INFINITY", "+inf": "INFINITY",
            "-inf": "-INFINITY"}.get(v, v)

def nvpairs(el, tag):
    d = {}
    for blk in el.findall(tag):
        for p in blk.findall("nvpair"):
            d[p.get("name")] = p.get("value")
    return " ".join("%s=%s" % kv for kv in sorted(d.items()))

out = []
cfg = ET.parse(sys.argv[1]).getroot().find("configuration")
for p in cfg.findall("crm_config/cluster_property_set/nvpair"):
    if p.get("name") not in IGNORED:
        out.append("property %s=%s" % (p.get("name"), p.get("value")))
for sec in ("rsc_defaults", "op_defaults"):
    for blk in cfg.findall(sec):
        out.append("%s %s" % (sec, nvpairs(blk, "meta_attributes")))
for n in cfg.findall("nodes/node"):
    out.append("node %s %s" % (n.get("id"), n.get("uname")))

def resource(el, parent):
    rid = el.get("id")
    if el.tag == "primitive":
        out.append("primitive %s %s:%s:%s in=%s" % (rid, el.get("class"),
                   el.get("provider", "-"), el.get("type"), parent))
        out.append("params %s %s" % (rid, nvpairs(el, "instance_attributes")))
        out.append("meta %s %s" % (rid, nvpairs(el, "meta_attributes")))
        for op in el.findall("operations/op"):
            out.append("op %s %s interval=%s role=%s timeout=%s" % (
                rid, op.get("name"), secs(op.get("interval")),
                role(op.get("role"), "-"), secs(op.get("timeout"))))
        return
    kind = "clone" if el.tag == "master" else el.tag
    meta = nvpairs(el, "meta_attributes")
    if el.tag == "master":
        meta = (meta + " promotable=true").strip()
    out.append("%s %s %s" % (kind, rid, meta))
    for child in el:
        if child.tag in ("primitive", "group", "clone", "master"):
            resource(child, rid)

for el in cfg.find("resources"):
    resource(el, "-")

for c in cfg.find("constraints"):
    cid = c.get("id")
    if c.tag == "rsc_colocation":
        out.append("colocation %s %s:%s with %s:%s score=%s" % (
            cid, c.get("rsc"), role(c.get("rsc-role")), c.get("with-rsc"),
            role(c.get("with-rsc-role")), score(c.get("score"))))
    elif c.tag == "rsc_order":
        out.append("order %s %s:%s then %s:%s kind=%s" % (
            cid, c.get("first"), c.get("first-action", "start"),
            c.get("then"), c.get("then-action", "start"),
            c.get("kind", "Mandatory")))
    elif c.tag == "rsc_location" and c.find("rule") is None:
        out.append("location %s %s node=%s score=%s role=%s" % (
            cid, c.get("rsc"), c.get("node"), score(c.get("score")),
            role(c.get("role"))))
    elif c.tag == "rsc_location":
        for r in c.findall("rule"):
            exprs = sorted("%s %s %s" % (e.get("attribute"),
                           e.get("operation"), e.get("value"))
                           for e in r.findall("expression"))
            out.append("location %s %s rule role=%s score=%s op=%s: %s" % (
                cid, c.get("rsc"), role(r.get("role")),
                score(r.get("score")), r.get("boolean-op", "and"),
                "; ".join(exprs)))
    else:
        out.append("%s %s (not compared)" % (c.tag, cid))
print("\n".join(sorted(out)))
PY
keys() { python3 "$tmp/keys.py" "$1"; }

# both_up IN OUT: IN with alice and bob online (and quorum), after one
# simulated transition (instances started, nothing promoted without scores)
both_up() {
	crm_simulate -x "$1" -q 1 --node-up alice --node-up bob -S -O "$2" \
		>"$tmp/up.out" 2>&1 || { cat "$tmp/up.out"; fail "crm_simulate $1"; }
}

# verify FILE DESC: crm_verify finds no error. The only warnings allowed
# come from the empty status section (no quorum, nodes not yet seen); with
# both nodes online it must be silent.
verify() {
	if ! crm_verify -VV -x "$1" >"$tmp/v.out" 2>&1; then
		if grep -v -e 'warning: Fencing and resource management disabled due to lack of quorum' \
			-e 'warning: Node [a-z]* is unclean but cannot be fenced' \
			-e 'Warnings found during check: config may not be valid' \
			"$tmp/v.out" >"$tmp/v.bad"; then
			cat "$tmp/v.out"
			fail "$2: crm_verify -x $1"
		fi
	fi
	both_up "$1" "$tmp/v-up.xml"
	crm_verify -V -x "$tmp/v-up.xml" >"$tmp/v.out" 2>&1 && [ ! -s "$tmp/v.out" ] ||
		{ cat "$tmp/v.out"; fail "$2: crm_verify with both nodes online"; }
	echo "ok: crm_verify $2"
}

# skeleton FILE OUT: an empty CIB with the nodes of FILE
skeleton() {
	cibadmin --empty >"$2"
	python3 - "$1" >"$tmp/nodes" <<'PY'
import sys, xml.etree.ElementTree as ET
for n in ET.parse(sys.argv[1]).getroot().findall("configuration/nodes/node"):
    print('<node id="%s" uname="%s"/>' % (n.get("id"), n.get("uname")))
PY
	while read -r n; do
		CIB_file=$2 cibadmin -C -o nodes -X "$n" || fail "add $n to $2"
	done <"$tmp/nodes"
}

# same_keys XML OTHER DESC
same_keys() {
	keys "$1" >"$tmp/k.xml"; keys "$2" >"$tmp/k.other"
	diff -u "$tmp/k.xml" "$tmp/k.other" || fail "$3 differs from $(basename "$1")"
}

# agent_missing AGENT: ocf:P:T or stonith:fence_x is not installed here
agent_missing() {
	case $1 in
	ocf:*) p=${1#ocf:}; [ ! -x "/usr/lib/ocf/resource.d/${p%%:*}/${p#*:}" ] ;;
	stonith:*) [ ! -x "/usr/sbin/${1#stonith:}" ] ;;
	systemd:*) ! systemctl cat "${1#systemd:}.service" >/dev/null 2>&1 ;;
	*) return 1 ;;
	esac
}

# ---- 1. crm_verify on every XML example (and a control that must fail)
n=0
for f in "$ex"/*.xml; do
	verify "$f" "$(basename "$f")"
	n=$((n + 1))
done
[ $n -ge 3 ] || fail "only $n XML examples in $ex"

python3 - "$ex/promotable.xml" >"$tmp/nostonith.xml" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r'<primitive id="fence-.*?</primitive>', "", s, flags=re.S)
print(re.sub(r'<rsc_location id="fence-[^>]*/>', "", s))
PY
both_up "$tmp/nostonith.xml" "$tmp/nostonith-up.xml"
crm_verify -V -x "$tmp/nostonith-up.xml" >"$tmp/v.out" 2>&1 &&
	fail "control: crm_verify accepts a CIB without STONITH"
grep -q 'no STONITH resources have been defined' "$tmp/v.out" ||
	{ cat "$tmp/v.out"; fail "control: unexpected crm_verify complaint"; }
echo "ok: control without STONITH fails crm_verify"

# fencing.xml is promotable.xml plus the handler's constraint, nothing else
keys "$ex/promotable.xml" >"$tmp/k.prom"; keys "$ex/fencing.xml" >"$tmp/k.fence"
comm -3 "$tmp/k.prom" "$tmp/k.fence" >"$tmp/k.delta"
[ "$(cat "$tmp/k.delta")" = "	location $fence_id $clone rule role=Promoted score=-INFINITY op=and: #uname ne alice" ] ||
	{ cat "$tmp/k.delta"; fail "fencing.xml is not promotable.xml + $fence_id"; }
echo "ok: fencing.xml = promotable.xml + $fence_id"

# ---- 2. crmsh scripts
if ! command -v crm >/dev/null 2>&1; then
	echo "skip: crm configure scripts: crmsh is not installed"
else
	echo "crmsh: $(crm --version 2>&1 | head -1)"
	# crmsh must be able to show each XML example (it chokes on comments
	# it did not place itself)
	for f in "$ex"/*.xml; do
		cp "$f" "$tmp/show.xml"
		CIB_file=$tmp/show.xml crm configure show >"$tmp/show.out" 2>&1 &&
			! grep -q -e WARNING -e ERROR "$tmp/show.out" ||
			{ cat "$tmp/show.out"; fail "crm configure show $(basename "$f")"; }
		grep -q "^clone $clone mysql-data" "$tmp/show.out" ||
			{ cat "$tmp/show.out"; fail "crm configure show $(basename "$f"): no clone"; }
	done
	echo "ok: crm configure show reads every XML example"
	for ex_name in promotable two-node arbiter-clone; do
		skeleton "$ex/$ex_name.xml" "$tmp/crm-$ex_name.xml"
		# Agents that are not installed make crmsh refuse; only those
		# errors may be overridden (crm -F), anything else fails.
		if ! CIB_file=$tmp/crm-$ex_name.xml crm configure load update \
			"$ex/$ex_name.crm" >"$tmp/crm.out" 2>&1; then
			sed 's/\x1b\[[0-9;]*m//g' "$tmp/crm.out" | grep 'ERROR' >"$tmp/crm.err" || true
			[ -s "$tmp/crm.err" ] || { cat "$tmp/crm.out"; fail "crm: $ex_name.crm"; }
			while read -r line; do
				a=$(echo "$line" | sed -n 's/^ERROR: \(ocf:[^ ]*\|stonith:[^ ]*\|systemd:[^ ]*\): \(got no meta-data\|no such resource agent\).*/\1/p')
				[ -n "$a" ] && agent_missing "$a" ||
					{ cat "$tmp/crm.out"; fail "crm: $ex_name.crm"; }
			done <"$tmp/crm.err"
			echo "note: $(sed -n 's/^ERROR: \([^ ]*\): .*/\1/p' "$tmp/crm.err" | sort -u | tr '\n' ' ')not installed, crm -F for $ex_name.crm"
			CIB_file=$tmp/crm-$ex_name.xml crm -F configure load update \
				"$ex/$ex_name.crm" >"$tmp/crm.out" 2>&1 ||
				{ cat "$tmp/crm.out"; fail "crm -F: $ex_name.crm"; }
		fi
		verify "$tmp/crm-$ex_name.xml" "$ex_name.crm (crmsh)"
		same_keys "$ex/$ex_name.xml" "$tmp/crm-$ex_name.xml" "$ex_name.crm"
		echo "ok: $ex_name.crm builds $ex_name.xml"
	done
fi

# ---- 3. pcs scripts (pcs -f works on a file, offline)
if ! command -v pcs >/dev/null 2>&1; then
	echo "skip: pcs scripts: pcs is not installed"
else
	echo "pcs: $(pcs --version 2>&1 | head -1)"
	for ex_name in promotable two-node arbiter-clone; do
		skeleton "$ex/$ex_name.xml" "$tmp/pcs-$ex_name.xml"
		# Each command of the script on the file; --force only where the
		# agent is not installed here (pcs wants its meta-data).
		(
			set -e
			pcs() {
				case $1.$2 in
				resource.create) a=$4 ;;
				stonith.create) a=stonith:$4 ;;
				*) a= ;;
				esac
				if [ -n "$a" ] && agent_missing "$a"; then
					echo "note: $a is not installed, pcs --force" >&2
					set -- "$@" --force
				fi
				command pcs -f "$tmp/pcs-$ex_name.xml" "$@"
			}
			. "$ex/$ex_name.pcs"
		) >"$tmp/pcs.out" 2>&1 || { cat "$tmp/pcs.out"; fail "pcs: $ex_name.pcs"; }
		grep '^note:' "$tmp/pcs.out" | sort -u
		verify "$tmp/pcs-$ex_name.xml" "$ex_name.pcs (pcs)"
		same_keys "$ex/$ex_name.xml" "$tmp/pcs-$ex_name.xml" "$ex_name.pcs"
		echo "ok: $ex_name.pcs builds $ex_name.xml"
	done
fi

# ---- 4. crm_simulate: promotion follows the scores and the fence constraint

# sim FILE [OUT]: one transition from FILE; its output in $tmp/sim.out
sim() {
	crm_simulate -x "$1" -S ${2:+-O "$2"} >"$tmp/sim.out" 2>&1 ||
		{ cat "$tmp/sim.out"; fail "crm_simulate -x $1"; }
}
# promotes: nodes the transition promotes an instance on (none: "")
promotes() {
	sed -n '/^Transition Summary:/,/^Executing/p' "$tmp/sim.out" |
		grep ' Promote ' | grep -v blocked |
		sed 's/.*-> Promoted \([^ )]*\) ).*/\1/' | tr '\n' ' ' | sed 's/ $//'
}
# promoted: nodes with the promoted instance after the transition
promoted() {
	sed -n '/^Revised Cluster Status:/,$p' "$tmp/sim.out" |
		sed -n 's/^ *\* Promoted: \[ \(.*\) \]$/\1/p'
}
# expect DESC NODE [AFTER]: the transition promotes NODE ("" = none), and
# AFTER (default NODE) has the promoted instance afterwards
expect() {
	[ "$(promotes)" = "$2" ] && [ "$(promoted)" = "${3-$2}" ] ||
		{ cat "$tmp/sim.out"; fail "$1: expected promotion on '${2:-nobody}'"; }
	if [ -z "$2" ] && [ -n "${3-}" ]; then
		echo "ok: $1: no promotion, $3 stays Promoted"
	else
		echo "ok: $1: ${2:-nobody} promoted"
	fi
}
# set_scores FILE ALICE BOB: promotion scores as the agent publishes them
# (crm_attribute --promotion, lifetime reboot); "-" = no score
set_scores() {
	for nv in alice:$2 bob:$3; do
		node=${nv%%:*} v=${nv#*:}
		if [ "$v" = - ]; then
			CIB_file=$1 crm_attribute -N "$node" -p mysql-data -D >/dev/null 2>&1 || true
		else
			CIB_file=$1 crm_attribute -N "$node" -p mysql-data -v "$v" ||
				fail "crm_attribute -p on $node"
		fi
	done
}

both_up "$ex/promotable.xml" "$tmp/up.xml"
sim "$tmp/up.xml"
expect "no promotion scores" ""
grep -q 'Unpromoted: \[ alice bob \]' "$tmp/sim.out" ||
	{ cat "$tmp/sim.out"; fail "instances not started on both nodes"; }

# The score is the transient attribute master-<primitive id> in status.
cp "$tmp/up.xml" "$tmp/s.xml"
set_scores "$tmp/s.xml" 1000 10000
[ "$(CIB_file=$tmp/s.xml crm_attribute -N bob -n "$score" -l reboot -G -q)" = 10000 ] ||
	fail "crm_attribute --promotion does not write $score"
CIB_file=$tmp/s.xml cibadmin -Q --xpath \
	"//status/node_state[@uname='bob']/transient_attributes//nvpair[@name='$score' and @value='10000']" \
	>/dev/null || fail "$score is not a transient attribute of bob"
echo "ok: the promotion score is the transient attribute $score"

sim "$tmp/s.xml" "$tmp/promoted-bob.xml"
expect "alice 1000, bob 10000" bob
grep -q 'mysql-fs.*Started bob' "$tmp/sim.out" &&
	grep -q 'mysql-ip.*Started bob' "$tmp/sim.out" ||
	{ cat "$tmp/sim.out"; fail "filesystem and address not with the promoted instance"; }
echo "ok: filesystem and address follow the promoted instance"

cp "$tmp/up.xml" "$tmp/s.xml"
set_scores "$tmp/s.xml" 10000 1000
CIB_file=$tmp/s.xml crm_simulate -L -S >"$tmp/sim.out" 2>&1 ||
	{ cat "$tmp/sim.out"; fail "crm_simulate -L"; }
expect "alice 10000, bob 1000 (crm_simulate -L)" alice

cp "$tmp/up.xml" "$tmp/s.xml"
set_scores "$tmp/s.xml" 0 -
sim "$tmp/s.xml"
expect "alice 0, bob none" alice

# fencing.xml: the handler's constraint forbids Promoted on bob
both_up "$ex/fencing.xml" "$tmp/fup.xml"
cp "$tmp/fup.xml" "$tmp/f.xml"
set_scores "$tmp/f.xml" 1000 10000
sim "$tmp/f.xml"
expect "$fence_id, alice 1000, bob 10000" alice
crm_simulate -x "$tmp/f.xml" -s 2>&1 | grep -q "promotion score on bob: -INFINITY" ||
	fail "$fence_id does not set bob's promotion score to -INFINITY"

cp "$tmp/fup.xml" "$tmp/f.xml"
set_scores "$tmp/f.xml" - 10000
sim "$tmp/f.xml"
expect "$fence_id, alice none, bob 10000" ""

CIB_file=$tmp/f.xml cibadmin -D -o constraints -X "<rsc_location id=\"$fence_id\"/>" ||
	fail "cannot remove $fence_id"
sim "$tmp/f.xml"
expect "$fence_id removed, bob 10000" bob

# The handler fires while bob is Primary: it is demoted, alice promoted.
cp "$tmp/promoted-bob.xml" "$tmp/f.xml"
sed -n "/<rsc_location id=\"$fence_id\"/,/<\/rsc_location>/p" "$ex/fencing.xml" >"$tmp/fc.xml"
CIB_file=$tmp/f.xml cibadmin -C -o constraints --xml-file "$tmp/fc.xml" ||
	fail "cannot add $fence_id"
sim "$tmp/f.xml"
expect "$fence_id placed while bob is Primary" alice
grep -q 'Demote .*Promoted -> Unpromoted bob' "$tmp/sim.out" ||
	{ cat "$tmp/sim.out"; fail "bob not demoted under $fence_id"; }

# ---- 5. move, ban and clear of the promoted role (README.md)
cp "$tmp/promoted-bob.xml" "$tmp/m.xml"
set_scores "$tmp/m.xml" 10000 10000
CIB_file=$tmp/m.xml crm_resource --move --promoted -r "$clone" -N alice >/dev/null 2>&1 ||
	fail "crm_resource --move --promoted"
CIB_file=$tmp/m.xml cibadmin -Q --xpath \
	"//rsc_location[@id='cli-prefer-$clone' and @role='Promoted' and @node='alice' and @score='INFINITY']" \
	>/dev/null || fail "crm_resource --move --promoted: no cli-prefer-$clone"
sim "$tmp/m.xml" "$tmp/m2.xml"
expect "crm_resource --move --promoted -N alice" alice
CIB_file=$tmp/m2.xml crm_resource --clear -r "$clone" >/dev/null 2>&1 ||
	fail "crm_resource --clear"
CIB_file=$tmp/m2.xml cibadmin -Q --xpath "//rsc_location[starts-with(@id,'cli-')]" \
	>/dev/null 2>&1 && fail "crm_resource --clear left a cli- constraint"
sim "$tmp/m2.xml"
expect "cleared, equal scores" "" alice

cp "$tmp/promoted-bob.xml" "$tmp/m.xml"
CIB_file=$tmp/m.xml crm_resource --ban --promoted -r "$clone" -N bob >/dev/null 2>&1 ||
	fail "crm_resource --ban --promoted"
CIB_file=$tmp/m.xml cibadmin -Q --xpath \
	"//rsc_location[@id='cli-ban-$clone-on-bob' and @role='Promoted' and @score='-INFINITY']" \
	>/dev/null || fail "crm_resource --ban --promoted: no cli-ban-$clone-on-bob"
sim "$tmp/m.xml"
expect "crm_resource --ban --promoted -N bob" alice
grep -q 'Unpromoted: \[ bob \]' "$tmp/sim.out" ||
	{ cat "$tmp/sim.out"; fail "--ban --promoted stopped the instance on bob"; }

if command -v pcs >/dev/null 2>&1; then
	cp "$tmp/promoted-bob.xml" "$tmp/m.xml"
	pcs -f "$tmp/m.xml" resource move "$clone" alice --promoted >/dev/null 2>&1 &&
		fail "pcs 0.11 resource move worked on a file"
	pcs -f "$tmp/m.xml" resource move-with-constraint "$clone" alice --promoted \
		>/dev/null 2>&1 || fail "pcs resource move-with-constraint --promoted"
	CIB_file=$tmp/m.xml cibadmin -Q --xpath \
		"//rsc_location[@id='cli-prefer-$clone' and @role='Promoted' and @node='alice']" \
		>/dev/null || fail "pcs move-with-constraint --promoted: no cli-prefer-$clone"
	pcs -f "$tmp/m.xml" resource clear "$clone" >/dev/null 2>&1 || fail "pcs resource clear"
	CIB_file=$tmp/m.xml cibadmin -Q --xpath "//rsc_location[starts-with(@id,'cli-')]" \
		>/dev/null 2>&1 && fail "pcs resource clear left a cli- constraint"
	echo "ok: pcs move-with-constraint --promoted and clear"
fi

# ---- 6. two-node.xml: a fence race goes against the Secondary's node
both_up "$ex/two-node.xml" "$tmp/t.xml"
set_scores "$tmp/t.xml" 10000 10000
sim "$tmp/t.xml" "$tmp/t2.xml"
p=$(promoted)
[ "$p" = alice ] || [ "$p" = bob ] || fail "two-node: nothing promoted"
[ "$p" = alice ] && u=bob || u=alice
for victim in "$p" "$u"; do
	crm_simulate -x "$tmp/t2.xml" --node-fail "$victim" -S -G "$tmp/g.xml" \
		>"$tmp/sim.out" 2>&1 || { cat "$tmp/sim.out"; fail "crm_simulate --node-fail"; }
	d=$(grep -o 'priority_fencing_delay="[0-9]*"' "$tmp/g.xml" | sort -u)
	[ "$victim" = "$p" ] && want='priority_fencing_delay="20"' || want='priority_fencing_delay="0"'
	[ "$d" = "$want" ] || fail "two-node: fencing $victim: $d, expected $want"
done
echo "ok: two-node: fencing the Primary's node waits 20 s, the Secondary's does not"

# ---- 7. the corosync snippet parses (corosync -t; crypto off: no key here)
if command -v corosync >/dev/null 2>&1; then
	sed -e 's/crypto_cipher: .*/crypto_cipher: none/' \
		-e 's/crypto_hash: .*/crypto_hash: none/' \
		"$ex/two-node-corosync.conf" >"$tmp/corosync.conf"
	corosync -c "$tmp/corosync.conf" -t >"$tmp/cs.out" 2>&1 ||
		grep -q 'No valid name found for local host' "$tmp/cs.out" ||
		{ cat "$tmp/cs.out"; fail "two-node-corosync.conf"; }
	echo "ok: two-node-corosync.conf parses"
else
	echo "skip: two-node-corosync.conf: corosync is not installed"
fi

# ---- 8. fencing.conf is a valid tandem configuration
if [ -x "$TANDEMADM" ]; then
	"$TANDEMADM" -c "$ex/fencing.conf" --node alice dump mysql >"$tmp/dump" ||
		fail "tandemadm rejects fencing.conf"
	grep -q 'fencing *resource-only;' "$tmp/dump" &&
		grep -q 'fence-peer *.*tandem-fence-peer;' "$tmp/dump" ||
		{ cat "$tmp/dump"; fail "fencing.conf: fencing or handler lost"; }
	echo "ok: fencing.conf parses"
else
	echo "skip: fencing.conf: $TANDEMADM not built"
fi
echo "all cib-examples checks passed"
