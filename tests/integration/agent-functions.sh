# shellcheck shell=sh
# The OCF agent's test helpers (sourced after functions.sh and
# repl-functions.sh, by test-agent.sh and test-agent-ops.sh): the agent
# binary, running it as pacemaker-execd would on alice or bob (ra,
# ra_clone), its exit code and output (expect), the promotion score and
# location constraints in a CIB file (score, expect_score, cons_add,
# cons_del), and stopping the tandemd the agent started (kill_spawned).

if [ -z "${TANDEM_AGENT:-}" ]; then
	if [ -x ../../agent/tandem ]; then
		TANDEM_AGENT=$(cd ../../agent && pwd)/tandem
	else
		TANDEM_AGENT=$(cd "$(dirname "$TANDEMADM")/../agent" && pwd)/tandem
	fi
fi
[ -x "$TANDEM_AGENT" ] || fail "no agent binary at $TANDEM_AGENT (set TANDEM_AGENT)"
echo "agent: $TANDEM_AGENT"

# The daemons the agent starts detach (setsid): stop them by pid file.
kill_spawned() {
	for n in a b; do
		f=$tmp/run-$n/tandemd.pid
		[ -s "$f" ] || continue
		p=$(cat "$f")
		kill -TERM "$p" 2>/dev/null || continue
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.05; done
	done
}
cleanup_hooks="kill_spawned $cleanup_hooks"

# ---------------------------------------------------------------- helpers

# CIB_file for crm_attribute and cibadmin, or a cluster-less environment
cib=$tmp/cib.xml
cibenv="CIB_file=$cib"
conf=$tmp/t.conf

# ra a|b ACTION [NAME=VALUE...]: run the agent as pacemaker-execd would on
# that node; the output goes to $tmp/ra.out, the exit code to $rc.
# wfc_timeout is 20 unless RA_WFC says otherwise (RA_WFC= : not set, the
# agent's default)
ra() {
	n=$1
	act=$2
	shift 2
	set +e
	# shellcheck disable=SC2016,SC2086 # expanded by the inner sh; RA_WFC may be empty
	ip netns exec "$(node_ns "$n")" unshare --uts env -i PATH="$PATH" \
		OCF_ROOT=/usr/lib/ocf OCF_RA_VERSION_MAJOR=1 OCF_RA_VERSION_MINOR=1 \
		OCF_RESOURCE_INSTANCE=r0 OCF_RESOURCE_TYPE=tandem OCF_RESOURCE_PROVIDER=tandem \
		OCF_EXIT_REASON_PREFIX=ocf-exit-reason: \
		OCF_RESKEY_resource=r0 OCF_RESKEY_config="$conf" OCF_RESKEY_run_dir="$tmp/run-$n" \
		OCF_RESKEY_node="$(node_name "$n")" OCF_RESKEY_tandemd="$TANDEMD" \
		${RA_WFC-OCF_RESKEY_wfc_timeout=20} OCF_RESKEY_CRM_meta_timeout=30000 \
		OCF_RESKEY_CRM_meta_interval=20000 TANDEM_STATE_DIR="$tmp/state-$n" "$cibenv" "$@" \
		sh -c 'hostname "$1" && shift && exec "$@"' sh "$(node_name "$n")" \
		"$TANDEM_AGENT" "$act" >"$tmp/ra.out" 2>&1
	rc=$?
	set -e
	{ echo "=== $(node_name "$n") $act: exit $rc"; cat "$tmp/ra.out"; } >>"$tmp/ra.log"
}

# expect RC WHAT [PATTERN]: the last agent run exited RC (and said PATTERN)
expect() {
	if [ "$rc" -ne "$1" ]; then
		cat "$tmp/ra.out"
		fail "$2: exit $rc, expected $1"
	fi
	if [ -n "${3:-}" ] && ! grep -q -- "$3" "$tmp/ra.out"; then
		cat "$tmp/ra.out"
		fail "$2: the output lacks '$3'"
	fi
	echo "ok: $2 (exit $rc)"
}

# score a|b: the node's promotion score in the CIB file, "none" if absent
score() {
	CIB_file=$cib crm_attribute -N "$(node_name "$1")" -n master-r0 -l reboot -G -q \
		2>/dev/null || echo none
}

expect_score() {
	s=$(score "$1")
	[ "$s" = "$2" ] || { cat "$tmp/ra.out"; fail "$3: score of $(node_name "$1") is $s, expected $2"; }
	echo "ok: $3 (score $s)"
}

# cons_add ID XML / cons_del ID: location constraints in the CIB file
cons_add() { CIB_file=$cib cibadmin -C -o constraints -X "$1"; }
cons_del() { CIB_file=$cib cibadmin -D -o constraints -X "<rsc_location id=\"$1\"/>"; }

# ra_clone a|b ACTION [NAME=VALUE...]: ra with the clone's meta attributes
# as Pacemaker passes them for a proper promotable clone
ra_clone() {
	n=$1
	act=$2
	shift 2
	ra "$n" "$act" OCF_RESKEY_CRM_meta_promotable=true OCF_RESKEY_CRM_meta_notify=true \
		OCF_RESKEY_CRM_meta_clone_max=2 OCF_RESKEY_CRM_meta_clone_node_max=1 \
		OCF_RESKEY_CRM_meta_promoted_max=1 OCF_RESKEY_CRM_meta_promoted_node_max=1 "$@"
}

cat >"$cib" <<'XML'
<cib crm_feature_set="3.16.1" validate-with="pacemaker-3.9" epoch="1" num_updates="0" admin_epoch="0">
  <configuration>
    <crm_config/>
    <nodes>
      <node id="1" uname="alice"/>
      <node id="2" uname="bob"/>
    </nodes>
    <resources>
      <clone id="r0-clone">
        <meta_attributes id="r0-clone-meta">
          <nvpair id="r0-clone-promotable" name="promotable" value="true"/>
          <nvpair id="r0-clone-notify" name="notify" value="true"/>
        </meta_attributes>
        <primitive id="r0" class="ocf" provider="tandem" type="tandem">
          <instance_attributes id="r0-ia">
            <nvpair id="r0-ia-resource" name="resource" value="r0"/>
            <nvpair id="r0-ia-config" name="config" value="@TMP@/t.conf"/>
            <nvpair id="r0-ia-run_dir" name="run_dir" value="@TMP@/run-a"/>
            <nvpair id="r0-ia-node" name="node" value="alice"/>
            <nvpair id="r0-ia-tandemd" name="tandemd" value="@TANDEMD@"/>
            <nvpair id="r0-ia-wfc_timeout" name="wfc_timeout" value="none"/>
          </instance_attributes>
        </primitive>
      </clone>
    </resources>
    <constraints/>
  </configuration>
  <status>
    <node_state id="1" uname="alice" in_ccm="true" crmd="online" join="member" expected="member"/>
    <node_state id="2" uname="bob" in_ccm="true" crmd="online" join="member" expected="member"/>
  </status>
</cib>
XML
sed -i -e "s|@TMP@|$tmp|g" -e "s|@TANDEMD@|$TANDEMD|g" "$cib"

