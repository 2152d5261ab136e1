/*
 * arb-core: tandem-arbiterd (see arb-core.h; doc/arbiter.md).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>

#define TICK_MS 100

extern char **environ;

#include <crm/stonith-ng.h>

#include "arb-core-int.h"
#include "log.h"
#include "state.h"

int64_t arb_core_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t arb_core_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

const char *arb_core_node_name(const struct arb_core *a, uint32_t id)
{
	const char *n = arb_table_node_name(a->t, id);

	return n ? n : "?";
}

/* ---------------------------------------------------------------- sending */

void arb_core_header(struct arb_core *a, struct arbmsg *m, uint16_t type)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->nodeid = a->self;
	m->incarnation = a->incarnation;
}

int arb_core_send(struct arb_core *a, struct arbmsg *m)
{
	unsigned char buf[ARBMSG_MAX_LEN];
	size_t len;
	int rc;

	m->seq = ++a->seq;
	rc = arbmsg_encode(m, buf, sizeof(buf), &len);
	if (rc == 0)
		rc = arb_corosync_mcast(a->cs, buf, len);
	if (rc)
		log_err("arbiter: cannot send %s: %s", arbmsg_type_name(m->type), strerror(-rc));
	return rc;
}

static uint64_t since_ring(struct arb_core *a, const struct arb_local_res *r)
{
	size_t i;

	if (r->f.role != ROLE_PRIMARY)
		return 0;
	for (i = 0; i < a->n_since; i++)
		if (!strcmp(a->since[i].res, r->f.resource)) {
			if (a->since[i].s != r->primary_since_s) {
				a->since[i].s = r->primary_since_s;
				a->since[i].ring = arb_table_ring_seq(a->t);
			}
			return a->since[i].ring;
		}
	if (a->n_since < ARB_SINCE_MAX) {
		strcpy(a->since[a->n_since].res, r->f.resource);
		a->since[a->n_since].s = r->primary_since_s;
		a->since[a->n_since].ring = arb_table_ring_seq(a->t);
		return a->since[a->n_since++].ring;
	}
	return arb_table_ring_seq(a->t);
}

static void send_facts(struct arb_core *a, const struct arb_local_res *r)
{
	struct arbmsg m;

	arb_core_header(a, &m, ARBMSG_FACTS);
	m.u.facts = r->f;
	m.u.facts.since_ring = since_ring(a, r);
	m.u.facts.since_s = m.u.facts.since_ring ? r->primary_since_s : 0;
	if (a->joined)
		arb_core_send(a, &m);
}

void arb_core_publish(struct arb_core *a, const struct arb_local_res *lr)
{
	send_facts(a, lr);
}

static void each_facts(void *arg, const struct arb_local_res *r)
{
	send_facts(arg, r);
}

static void send_hello(struct arb_core *a)
{
	struct arbmsg m;

	arb_core_header(a, &m, ARBMSG_HELLO);
	m.u.hello.ring = arb_table_ring_seq(a->t);
	m.u.hello.token_ms = arb_corosync_token_ms(a->cs);
	m.u.hello.flags = a->quorate ? ARBMSG_HELLO_QUORATE : 0;
	if (arb_core_send(a, &m) == 0)
		arb_local_each(a->local, each_facts, a);
}

/* ---------------------------------------------------------------- the local tandemd */

/* Unfencing (§6.1): when a resource with a fencing policy becomes
 * Connected with both disks UpToDate, tandem-unfence-peer removes the
 * fence constraint by its id, also one a crashed handler left behind;
 * it is idempotent, so both nodes may run it. */
static void unfence_check(struct arb_core *a, const struct arb_local_res *r)
{
	bool now = r->f.up && r->f.conn == CONN_CONNECTED && r->f.disk == DISK_UPTODATE &&
		   r->f.pdsk == DISK_UPTODATE;
	char *argv[] = {(char *)TANDEM_SBINDIR "/tandem-unfence-peer", (char *)"--resource",
			(char *)r->f.resource, NULL};
	struct arb_insync *e = NULL;
	size_t i;
	pid_t pid;
	int rc;

	for (i = 0; i < a->n_insync && !e; i++)
		if (!strcmp(a->insync[i].res, r->f.resource))
			e = &a->insync[i];
	if (!e && a->n_insync < ARB_SINCE_MAX) {
		e = &a->insync[a->n_insync++];
		snprintf(e->res, sizeof(e->res), "%s", r->f.resource);
		e->in_sync = false;
	}
	if (!e || now == e->in_sync)
		return;
	e->in_sync = now;
	if (!now || r->f.fencing == 0)
		return;
	rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
	if (rc)
		log_warn("[%s] arbiter: cannot run %s: %s", r->f.resource, argv[0], strerror(rc));
	else
		log_info("[%s] arbiter: both disks UpToDate: %s removes the fence constraint "
			 "(pid %d)",
			 r->f.resource, argv[0], (int)pid);
}

/* The unfence-peer runs that ended. */
static void reap(void)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			log_warn("arbiter: tandem-unfence-peer (pid %d) failed (status %d)",
				 (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void on_local_facts(void *ctx, const struct arb_local_res *r)
{
	struct arb_core *a = ctx;

	if (!a->quorum_told && arb_local_connected(a->local))
		a->quorum_told = arb_local_quorum(a->local, a->quorate) != -ENOTCONN;
	if (!arb_local_connected(a->local))
		a->quorum_told = false;
	log_info("[%s] arbiter: publishing %s/%s %s/%s %s", r->f.resource,
		 state_role_name(r->f.role), r->f.up ? "up" : "down", state_disk_name(r->f.disk),
		 state_disk_name(r->f.pdsk), state_conn_name(r->f.conn));
	send_facts(a, r);
	unfence_check(a, r);
}

static void on_local_gone(void *ctx, const char *res)
{
	struct arb_core *a = ctx;
	struct arbmsg m;

	arb_core_header(a, &m, ARBMSG_GONE);
	snprintf(m.u.gone.resource, sizeof(m.u.gone.resource), "%s", res);
	if (a->joined)
		arb_core_send(a, &m);
}

static const struct arb_local_ops local_ops = {
	.facts = on_local_facts,
	.gone = on_local_gone,
};

/* ---------------------------------------------------------------- views */

enum arb_policy_node arb_core_policy_node(const struct arb_view *v)
{
	switch (v->node) {
	case ARB_NODE_MEMBER:
		return ARB_POLICY_NODE_MEMBER;
	case ARB_NODE_NODEDOWN:
		return ARB_POLICY_NODE_DOWN;
	case ARB_NODE_ABSENT:
		return ARB_POLICY_NODE_ABSENT;
	default:
		return ARB_POLICY_NODE_UNKNOWN;
	}
}

enum arb_policy_proc arb_core_policy_proc(const struct arb_view *v)
{
	if (v->arbiter_member)
		return ARB_POLICY_PROC_MEMBER;
	switch (v->left) {
	case ARB_REASON_LEAVE:
		return ARB_POLICY_PROC_LEAVE;
	case ARB_REASON_PROCDOWN:
		return ARB_POLICY_PROC_PROCDOWN;
	default:
		return ARB_POLICY_PROC_NEVER;
	}
}

enum arb_policy_rec arb_core_policy_rec(const struct arb_view *v)
{
	return v->record == ARB_RECORD_FRESH   ? ARB_POLICY_REC_FRESH
	       : v->record == ARB_RECORD_STALE ? ARB_POLICY_REC_STALE
					       : ARB_POLICY_REC_NONE;
}

/* The local resource res, its peer's id and the view of it. -ENOENT:
 * tandemd does not have res (or it has no peer). */
int arb_core_view(struct arb_core *a, const char *res, struct arb_local_res *lr,
		   uint32_t *peer_id, struct arb_view *v)
{
	if (arb_local_get(a->local, res, lr)) {
		/* tandemd may have the resource since a moment (the agent asks
		 * right after it started tandemd): ask it now */
		arb_local_refresh(a->local);
		if (arb_local_get(a->local, res, lr))
			return -ENOENT;
	}
	*peer_id = 0;
	arb_table_node_id(a->t, lr->f.peer, peer_id);
	if (*peer_id == 0) {
		memset(v, 0, sizeof(*v));
		v->quorate = a->quorate;
		v->node = ARB_NODE_UNKNOWN;
		return 0;
	}
	return arb_table_view(a->t, res, *peer_id, arb_core_now_ms(), v);
}

json_object *arb_core_answer(struct arb_core *a, const struct arb_local_res *lr, uint32_t peer_id)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(true));
	json_object_object_add(o, "peer", json_object_new_string(lr->f.peer));
	json_object_object_add(o, "peer_id", json_object_new_int64(peer_id));
	json_object_object_add(o, "quorate", json_object_new_boolean(a->quorate));
	return o;
}

/* ---------------------------------------------------------------- CPG */

static void log_bad(struct arb_core *a, uint32_t nodeid, const char *err)
{
	int64_t now = arb_core_now_ms();

	if (now - a->bad_logged < 1000) {
		a->bad_quiet++;
		return;
	}
	log_warn("arbiter: dropped a message from node %" PRIu32 " (%s): %s%s", nodeid,
		 arb_core_node_name(a, nodeid), err, a->bad_quiet ? " (and others, not logged)" : "");
	a->bad_logged = now;
	a->bad_quiet = 0;
}

static void on_deliver(void *ctx, uint32_t nodeid, uint32_t pid, const void *buf, size_t len)
{
	struct arb_core *a = ctx;
	char err[ARBMSG_ERR_MAX];
	struct arbmsg m;
	int rc;

	(void)pid;
	rc = arbmsg_decode(buf, len, nodeid, &m, err, sizeof(err));
	if (rc) {
		log_bad(a, nodeid, err);
		return;
	}
	if (m.clamped)
		log_bad(a, nodeid, err);
	rc = arb_table_deliver(a->t, &m, arb_core_now_ms());
	if (rc) {
		log_bad(a, nodeid, rc == -EALREADY ? "a replayed sequence number" : strerror(-rc));
		return;
	}
	switch (m.type) {
	case ARBMSG_OUTDATE_REQ:
		arb_fence_outdate_req(a, &m);
		break;
	case ARBMSG_OUTDATE_ACK:
		arb_fence_outdate_ack(a, &m);
		break;
	case ARBMSG_FACTS:
		arb_sb_step(a); /* a record a split-brain decision waits for */
		break;
	case ARBMSG_SB_VERDICT:
		arb_sb_delivered(a, &m);
		break;
	case ARBMSG_FENCED:
		log_warn("arbiter: node %s reports node %s %s%s%s", arb_core_node_name(a, nodeid),
			 arb_core_node_name(a, m.u.fenced.node),
			 m.u.fenced.how == ARBMSG_HOW_STONITH ? "fenced (fencer confirmed)"
							      : "constrained",
			 m.u.fenced.resource[0] ? " for " : "", m.u.fenced.resource);
		break;
	default:
		break;
	}
}

static void read_nodelist_one(void *arg, uint32_t id, const char *name)
{
	struct arb_core *a = arg;

	if (arb_table_set_node(a->t, id, name))
		log_warn("arbiter: node %" PRIu32 "'s name '%s' cannot be used", id, name);
}

/* Remember when each node that was in the ring left it. */
static void note_left(struct arb_core *a, const uint32_t *nodes, size_t n)
{
	size_t i, j, k;

	for (i = 0; i < a->n_ring; i++) {
		bool still = false;

		for (j = 0; j < n && !still; j++)
			still = nodes[j] == a->ring_nodes[i];
		if (still)
			continue;
		for (k = 0; k < ARB_NODES_MAX; k++)
			if (a->left[k].id == a->ring_nodes[i] || a->left[k].id == 0) {
				a->left[k].id = a->ring_nodes[i];
				a->left[k].at_s = (int64_t)(arb_core_wall_ms() / 1000);
				break;
			}
	}
	a->n_ring = n < ARB_NODES_MAX ? n : ARB_NODES_MAX;
	memcpy(a->ring_nodes, nodes, a->n_ring * sizeof(*nodes));
}

/* Whether Pacemaker's fencer fenced the node since it left the ring (or
 * at all, if this arbiter never saw it in the ring): the fencing Pacemaker
 * does on its own, without the handlers, makes it "known fenced" too. */
static bool fencer_fenced(struct arb_core *a, uint32_t id, const char *name)
{
	time_t t = stonith_api_time(id, name, false);
	int64_t left = 0;
	size_t k;

	for (k = 0; k < ARB_NODES_MAX; k++)
		if (a->left[k].id == id)
			left = a->left[k].at_s;
	if (t <= 0 || (int64_t)t + 1 < left)
		return false;
	log_info("arbiter: Pacemaker's fencer fenced %s at %lld: known fenced", name,
		 (long long)t);
	return true;
}

static void on_ring(void *ctx, uint64_t seq, const uint32_t *nodes, size_t n)
{
	struct arb_core *a = ctx;

	arb_corosync_nodelist(a->cs, read_nodelist_one, a);
	note_left(a, nodes, n);
	if (arb_table_ring(a->t, seq, nodes, n))
		log_err("arbiter: cannot hold the ring's membership");
	log_info("arbiter: ring %" PRIu64 ": %zu node%s%s", seq, n, n == 1 ? "" : "s",
		 arb_core_quorum_known(a) ? "" : " (its quorum not reported yet)");
	arb_fence_redecide(a);
}

static const char *reason_word(enum arb_reason r)
{
	switch (r) {
	case ARB_REASON_LEAVE:
		return "stopped (LEAVE)";
	case ARB_REASON_NODEDOWN:
		return "left the ring (NODEDOWN)";
	case ARB_REASON_PROCDOWN:
		return "died, its node stays (PROCDOWN)";
	default:
		return "left";
	}
}

static void on_group(void *ctx, const struct arb_member *members, size_t n,
		     const struct arb_member *left, size_t n_left)
{
	struct arb_core *a = ctx;
	bool in = false;
	size_t i;

	for (i = 0; i < n_left; i++)
		log_warn("arbiter: the arbiter of node %s %s", arb_core_node_name(a, left[i].nodeid),
			 reason_word(left[i].reason));
	for (i = 0; i < n_left; i++)
		if (left[i].reason == ARB_REASON_NODEDOWN && !a->quorum_wait &&
		    a->quorum_ring <= arb_table_ring_seq(a->t)) {
			/* the ring changes: its quorum comes with its notification */
			a->quorum_wait = true;
			a->quorum_wait_ring = a->quorum_ring;
			log_info("arbiter: a node left the ring: quorum unknown until corosync "
				 "reports it for the new ring");
		}
	if (arb_table_group(a->t, members, n, left, n_left))
		log_err("arbiter: cannot hold the group's membership");
	for (i = 0; i < n; i++)
		in = in || members[i].nodeid == a->self;
	if (in && !a->joined)
		log_info("arbiter: joined the group %s as node %" PRIu32 " (%s)",
			 ARB_COROSYNC_GROUP, a->self, arb_core_node_name(a, a->self));
	a->joined = in;
	/* every change is a barrier: everyone republishes (§4.1) */
	if (in)
		send_hello(a);
	arb_fence_redecide(a);
}

bool arb_core_quorum_known(const struct arb_core *a)
{
	return !a->quorum_wait && a->quorum_ring >= arb_table_ring_seq(a->t);
}

static void on_quorum(void *ctx, bool quorate, uint64_t ring_seq)
{
	struct arb_core *a = ctx;

	if (quorate != a->quorate || !a->quorum_told)
		log_warn("arbiter: this partition is %s (ring %" PRIu64 ")",
			 quorate ? "quorate" : "NOT quorate", ring_seq);
	else
		log_info("arbiter: quorum for ring %" PRIu64 ": %s", ring_seq,
			 quorate ? "quorate" : "NOT quorate");
	a->quorate = quorate;
	if (ring_seq > a->quorum_ring)
		a->quorum_ring = ring_seq;
	if (a->quorum_wait && ring_seq > a->quorum_wait_ring)
		a->quorum_wait = false;
	arb_table_set_quorate(a->t, quorate);
	a->quorum_told = arb_local_quorum(a->local, quorate) != -ENOTCONN;
	arb_fence_redecide(a);
}

static void on_lost(void *ctx, const char *why)
{
	struct arb_core *a = ctx;

	log_err("arbiter: lost corosync (%s): exiting, to be restarted with it", why);
	a->failed = true;
	qb_loop_stop(a->loop);
}

static const struct arb_corosync_ops cs_ops = {
	.deliver = on_deliver,
	.group = on_group,
	.ring = on_ring,
	.quorum = on_quorum,
	.lost = on_lost,
};

/* ---------------------------------------------------------------- requests */

static void req_show(struct arb_core *a, uint64_t client)
{
	json_object *o = arb_table_show(a->t, arb_core_now_ms());
	struct arb_corosync_votes v;

	json_object_object_add(o, "ok", json_object_new_boolean(true));
	json_object_object_add(o, "name", json_object_new_string(arb_core_node_name(a, a->self)));
	json_object_object_add(o, "tandemd",
			       json_object_new_boolean(arb_local_connected(a->local)));
	if (arb_corosync_votes(a->cs, &v) == 0) {
		json_object *jv = json_object_new_object();

		json_object_object_add(jv, "two_node", json_object_new_boolean(v.two_node));
		json_object_object_add(jv, "qdevice", json_object_new_boolean(v.qdevice));
		json_object_object_add(jv, "wait_for_all", json_object_new_boolean(v.wait_for_all));
		json_object_object_add(jv, "node_votes", json_object_new_int64(v.node_votes));
		json_object_object_add(jv, "total_votes", json_object_new_int64(v.total_votes));
		json_object_object_add(jv, "expected_votes",
				       json_object_new_int64(v.expected_votes));
		json_object_object_add(jv, "quorum", json_object_new_int64(v.quorum));
		json_object_object_add(o, "votequorum", jv);
	}
	arb_sock_reply(a->sock, client, o);
}

static void req_fenced(struct arb_core *a, uint64_t client, const char *res, json_object *req)
{
	const char *how = json_object_get_string(json_object_object_get(req, "how"));
	struct arb_local_res lr;
	struct arb_view v;
	struct arbmsg m;
	uint32_t id;

	if (arb_core_view(a, res, &lr, &id, &v) || !id) {
		arb_sock_error(a->sock, client, 10, "no such resource, or its peer is not a node",
			       NULL);
		return;
	}
	if (!how || (strcmp(how, "stonith") && strcmp(how, "constraint"))) {
		arb_sock_error(a->sock, client, 10, "how: must be \"stonith\" or \"constraint\"",
			       NULL);
		return;
	}
	arb_core_header(a, &m, ARBMSG_FENCED);
	m.u.fenced.node = id;
	m.u.fenced.how = !strcmp(how, "stonith") ? ARBMSG_HOW_STONITH : ARBMSG_HOW_CONSTRAINT;
	m.u.fenced.when = arb_core_wall_ms();
	if (m.u.fenced.how == ARBMSG_HOW_CONSTRAINT)
		snprintf(m.u.fenced.resource, sizeof(m.u.fenced.resource), "%s", res);
	if (arb_core_send(a, &m)) {
		arb_sock_error(a->sock, client, 20, "cannot multicast FENCED", NULL);
		return;
	}
	arb_sock_reply(a->sock, client, arb_core_answer(a, &lr, id));
}

static void req_wfc(struct arb_core *a, uint64_t client, const char *res)
{
	struct arb_policy_wfc_in in = {0};
	struct arb_policy_wfc_out out;
	struct arb_local_res lr;
	struct arb_view v;
	const char *name;
	json_object *o;
	uint32_t id;

	if (arb_core_view(a, res, &lr, &id, &v)) {
		arb_sock_error(a->sock, client, 10, "tandemd does not have this resource", NULL);
		return;
	}
	in.node = arb_core_policy_node(&v);
	in.fenced = v.fenced;
	in.rec = arb_core_policy_rec(&v);
	in.disk = (enum state_disk)v.facts.disk;
	in.up = v.facts.up;
	if (arb_policy_wfc(&in, &out)) {
		arb_sock_error(a->sock, client, 20, "bad input to the decision table", NULL);
		return;
	}
	o = arb_core_answer(a, &lr, id);
	name = arb_policy_wfc_name(out.wfc);
	json_object_object_add(o, "class", name ? json_object_new_string(name) : NULL);
	json_object_object_add(o, "why", json_object_new_string(out.why));
	arb_sock_reply(a->sock, client, o);
}

static void req_may_promote(struct arb_core *a, uint64_t client, const char *res)
{
	struct arb_policy_promote_in in = {0};
	struct arb_policy_promote_out out;
	struct arb_policy_qpromote_out q;
	struct arb_local_res lr;
	struct arb_view v;
	json_object *o;
	uint32_t id;

	if (arb_core_view(a, res, &lr, &id, &v)) {
		arb_sock_error(a->sock, client, 10, "tandemd does not have this resource", NULL);
		return;
	}
	in.peer = lr.f.peer;
	in.member = v.arbiter_member;
	in.fenced = v.fenced;
	in.rec = arb_core_policy_rec(&v);
	in.role = (enum state_role)v.facts.role;
	if (!in.fenced && !in.member && id && v.node != ARB_NODE_MEMBER)
		in.fenced = fencer_fenced(a, id, lr.f.peer);
	if (arb_policy_promote(&in, &out) ||
	    arb_policy_quorum_promote((enum arb_policy_quorum)lr.f.quorum, a->quorate, false,
				      &q)) {
		arb_sock_error(a->sock, client, 20, "bad input to the decision table", NULL);
		return;
	}
	o = arb_core_answer(a, &lr, id);
	if (out.ok && !q.ok) {
		out.ok = false;
		snprintf(out.why, sizeof(out.why), "%s", q.why);
	}
	if (out.ok && lr.f.quorum && !arb_core_quorum_known(a)) {
		out.ok = false;
		snprintf(out.why, sizeof(out.why),
			 "the membership changed and corosync has not reported its quorum yet");
	}
	json_object_object_add(o, "allow", json_object_new_boolean(out.ok));
	json_object_object_add(o, "why", json_object_new_string(out.why));
	arb_sock_reply(a->sock, client, o);
}

static void on_request(void *ctx, uint64_t client, json_object *req)
{
	struct arb_core *a = ctx;
	const char *cmd = json_object_get_string(json_object_object_get(req, "cmd"));
	const char *res = json_object_get_string(json_object_object_get(req, "res"));

	if (!cmd)
		arb_sock_error(a->sock, client, 10, "the request has no \"cmd\"", NULL);
	else if (!strcmp(cmd, "show"))
		req_show(a, client);
	else if (!res || !res[0] || strlen(res) > ARBMSG_NAME_MAX)
		arb_sock_error(a->sock, client, 10, "the request has no valid \"res\"", NULL);
	else if (!strcmp(cmd, "fence-peer"))
		arb_fence_request(a, client, res, req);
	else if (!strcmp(cmd, "fenced"))
		req_fenced(a, client, res, req);
	else if (!strcmp(cmd, "wfc"))
		req_wfc(a, client, res);
	else if (!strcmp(cmd, "may-promote"))
		req_may_promote(a, client, res);
	else if (!strcmp(cmd, "sb-verdict"))
		arb_sb_request(a, client, res, req);
	else
		arb_sock_error(a->sock, client, 10, "unknown command",
			       "doc/arbiter.md §7 lists the requests");
	json_object_put(req);
}

/* ---------------------------------------------------------------- life */

static void on_tick(void *data)
{
	struct arb_core *a = data;
	int64_t now = arb_core_now_ms();

	arb_fence_tick(a, now);
	reap();
	arb_sb_step(a);
	qb_loop_timer_add(a->loop, QB_LOOP_MED, TICK_MS * QB_TIME_NS_IN_MSEC, a, on_tick, &a->tick);
}

int arb_core_new(qb_loop_t *loop, const char *run_dir, struct arb_core **out)
{
	struct arb_core *a = calloc(1, sizeof(*a));
	int rc;

	*out = NULL;
	if (!a)
		return -ENOMEM;
	a->loop = loop;
	a->quorate = true; /* until corosync says (CS_TRACK_CURRENT, at once) */
	if (getrandom(&a->incarnation, sizeof(a->incarnation), 0) != sizeof(a->incarnation))
		a->incarnation = (uint64_t)arb_core_wall_ms();
	rc = arb_sock_new(loop, run_dir, on_request, a, &a->sock);
	if (rc) {
		log_err("arbiter: cannot listen on %s/arbiter.sock: %s%s", run_dir, strerror(-rc),
			rc == -EADDRINUSE ? " (another tandem-arbiterd runs on this node)" : "");
		free(a);
		return rc;
	}
	rc = arb_table_new(0, 0, &a->t);
	if (rc == 0)
		rc = arb_local_new(loop, run_dir, &local_ops, a, &a->local);
	if (rc == 0)
		rc = arb_corosync_new(loop, &cs_ops, a, &a->cs);
	if (rc) {
		arb_core_free(a);
		return rc;
	}
	a->self = arb_corosync_nodeid(a->cs);
	arb_table_free(a->t);
	a->t = NULL;
	rc = arb_table_new(a->self, arb_corosync_token_ms(a->cs), &a->t);
	if (rc) {
		arb_core_free(a);
		return rc;
	}
	arb_corosync_nodelist(a->cs, read_nodelist_one, a);
	qb_loop_timer_add(loop, QB_LOOP_MED, TICK_MS * QB_TIME_NS_IN_MSEC, a, on_tick, &a->tick);
	log_info("arbiter: node %" PRIu32 " (%s), token %" PRIu32 " ms, incarnation %016" PRIx64,
		 a->self, arb_core_node_name(a, a->self), arb_corosync_token_ms(a->cs), a->incarnation);
	*out = a;
	return 0;
}

void arb_core_free(struct arb_core *a)
{
	if (!a)
		return;
	qb_loop_timer_del(a->loop, a->tick);
	arb_corosync_free(a->cs);
	arb_local_free(a->local);
	arb_sock_free(a->sock);
	arb_table_free(a->t);
	free(a);
}

bool arb_core_failed(const struct arb_core *a)
{
	return a->failed;
}
