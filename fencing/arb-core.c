/*
 * arb-core: tandem-arbiterd (see arb-core.h; doc/arbiter.md).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "arb-core.h"
#include "arb-corosync.h"
#include "arb-local.h"
#include "arb-policy.h"
#include "arb-sock.h"
#include "arb-table.h"
#include "arbmsg.h"
#include "log.h"
#include "state.h"

#define TICK_MS 100
#define PENDING_MAX 32
#define SINCE_MAX 256
#define FENCE_TIMEOUT_MS 30000 /* fence-peer's default */
#define OUTDATE_RETRY_MS 200

/* A fence-peer request of a local handler, waiting for the peer's arbiter. */
struct fence_req {
	bool used;
	uint64_t client;
	uint64_t req; /* OUTDATE_REQ's id */
	char res[ARBMSG_NAME_MAX + 1];
	char peer[ARBMSG_NAME_MAX + 1];
	uint32_t peer_id;
	enum arb_policy_ask ask;
	int answer;
	int64_t deadline; /* CLOCK_MONOTONIC ms */
};

/* A peer's OUTDATE_REQ that this node works on: tandemd refuses `outdate`
 * while it still sees the connection, which the peer lost first. */
struct outdate_job {
	bool used;
	uint32_t requester;
	uint64_t req;
	char res[ARBMSG_NAME_MAX + 1];
	int64_t until, next;
};

/* primary_since's ring: the ring this arbiter was in when it first saw
 * the resource Primary since tandemd's primary_since (§2). */
struct since {
	char res[ARBMSG_NAME_MAX + 1];
	uint32_t s;
	uint64_t ring;
};

struct arb_core {
	qb_loop_t *loop;
	struct arb_corosync *cs;
	struct arb_local *local;
	struct arb_sock *sock;
	struct arb_table *t;
	uint32_t self;
	uint64_t incarnation, seq, next_req;
	bool joined, failed, quorate, quorum_told;
	struct fence_req fence[PENDING_MAX];
	struct outdate_job jobs[PENDING_MAX];
	struct since since[SINCE_MAX];
	size_t n_since;
	qb_loop_timer_handle tick;
	int64_t bad_logged; /* the last "dropped a message" line */
	unsigned int bad_quiet;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static const char *node_name(const struct arb_core *a, uint32_t id)
{
	const char *n = arb_table_node_name(a->t, id);

	return n ? n : "?";
}

/* ---------------------------------------------------------------- sending */

static void header(struct arb_core *a, struct arbmsg *m, uint16_t type)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->nodeid = a->self;
	m->incarnation = a->incarnation;
}

static int send_msg(struct arb_core *a, struct arbmsg *m)
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
	if (a->n_since < SINCE_MAX) {
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

	header(a, &m, ARBMSG_FACTS);
	m.u.facts = r->f;
	m.u.facts.since_ring = since_ring(a, r);
	m.u.facts.since_s = m.u.facts.since_ring ? r->primary_since_s : 0;
	if (a->joined)
		send_msg(a, &m);
}

static void each_facts(void *arg, const struct arb_local_res *r)
{
	send_facts(arg, r);
}

static void send_hello(struct arb_core *a)
{
	struct arbmsg m;

	header(a, &m, ARBMSG_HELLO);
	m.u.hello.ring = arb_table_ring_seq(a->t);
	m.u.hello.token_ms = arb_corosync_token_ms(a->cs);
	m.u.hello.flags = a->quorate ? ARBMSG_HELLO_QUORATE : 0;
	if (send_msg(a, &m) == 0)
		arb_local_each(a->local, each_facts, a);
}

/* ---------------------------------------------------------------- the local tandemd */

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
}

static void on_local_gone(void *ctx, const char *res)
{
	struct arb_core *a = ctx;
	struct arbmsg m;

	header(a, &m, ARBMSG_GONE);
	snprintf(m.u.gone.resource, sizeof(m.u.gone.resource), "%s", res);
	if (a->joined)
		send_msg(a, &m);
}

static const struct arb_local_ops local_ops = {
	.facts = on_local_facts,
	.gone = on_local_gone,
};

/* ---------------------------------------------------------------- views */

static enum arb_policy_node policy_node(const struct arb_view *v)
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

static enum arb_policy_proc policy_proc(const struct arb_view *v)
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

static enum arb_policy_rec policy_rec(const struct arb_view *v)
{
	return v->record == ARB_RECORD_FRESH   ? ARB_POLICY_REC_FRESH
	       : v->record == ARB_RECORD_STALE ? ARB_POLICY_REC_STALE
					       : ARB_POLICY_REC_NONE;
}

/* The local resource res, its peer's id and the view of it. -ENOENT:
 * tandemd does not have res (or it has no peer). */
static int view_of(struct arb_core *a, const char *res, struct arb_local_res *lr,
		   uint32_t *peer_id, struct arb_view *v)
{
	if (arb_local_get(a->local, res, lr))
		return -ENOENT;
	*peer_id = 0;
	arb_table_node_id(a->t, lr->f.peer, peer_id);
	if (*peer_id == 0) {
		memset(v, 0, sizeof(*v));
		v->quorate = a->quorate;
		v->node = ARB_NODE_UNKNOWN;
		return 0;
	}
	return arb_table_view(a->t, res, *peer_id, now_ms(), v);
}

static json_object *answer(struct arb_core *a, const struct arb_local_res *lr, uint32_t peer_id)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(true));
	json_object_object_add(o, "peer", json_object_new_string(lr->f.peer));
	json_object_object_add(o, "peer_id", json_object_new_int64(peer_id));
	json_object_object_add(o, "quorate", json_object_new_boolean(a->quorate));
	return o;
}

/* ---------------------------------------------------------------- fence-peer (§6.1) */

static void fence_decide(struct arb_core *a, struct fence_req *f);

static void fence_reply(struct arb_core *a, struct fence_req *f, const char *action, int exit_code,
			const char *why, const struct arb_local_res *lr)
{
	json_object *o = answer(a, lr, f->peer_id);

	json_object_object_add(o, "action", json_object_new_string(action));
	if (exit_code >= 0)
		json_object_object_add(o, "exit", json_object_new_int(exit_code));
	json_object_object_add(o, "why", json_object_new_string(why));
	if (exit_code >= 0)
		log_info("[%s] arbiter: fence-peer %s: %s, exit %d (%s)", f->res, f->peer, action,
			 exit_code, why);
	else
		log_info("[%s] arbiter: fence-peer %s: %s (%s)", f->res, f->peer, action, why);
	arb_sock_reply(a->sock, f->client, o);
	f->used = false;
}

static void send_outdate_req(struct arb_core *a, struct fence_req *f,
			     const struct arb_local_res *lr)
{
	struct arbmsg m;
	int64_t left = f->deadline - now_ms();

	header(a, &m, ARBMSG_OUTDATE_REQ);
	f->req = ++a->next_req;
	m.u.outdate_req.req = f->req;
	snprintf(m.u.outdate_req.resource, sizeof(m.u.outdate_req.resource), "%s", f->res);
	m.u.outdate_req.target = f->peer_id;
	m.u.outdate_req.deadline_ms = left > 0 ? (uint32_t)left : 0;
	m.u.outdate_req.current = lr->f.current;
	snprintf(m.u.outdate_req.requester, sizeof(m.u.outdate_req.requester), "%s",
		 node_name(a, a->self));
	f->ask = send_msg(a, &m) ? ARB_POLICY_ASK_DEADLINE : ARB_POLICY_ASK_SENT;
}

static void fence_decide(struct arb_core *a, struct fence_req *f)
{
	struct arb_policy_fence_in in = {0};
	struct arb_policy_fence_out out;
	struct arb_local_res lr;
	struct arb_view v;
	uint32_t id;

	if (view_of(a, f->res, &lr, &id, &v)) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "ok", json_object_new_boolean(true));
		json_object_object_add(o, "action", json_object_new_string("fallback"));
		json_object_object_add(o, "why", json_object_new_string(
							 "tandemd does not have the resource"));
		arb_sock_reply(a->sock, f->client, o);
		f->used = false;
		return;
	}
	f->peer_id = id;
	snprintf(f->peer, sizeof(f->peer), "%s", lr.f.peer);
	if (f->ask == ARB_POLICY_ASK_SENT && now_ms() >= f->deadline)
		f->ask = ARB_POLICY_ASK_DEADLINE;
	in.quorate = v.quorate;
	in.node = policy_node(&v);
	in.proc = policy_proc(&v);
	in.ask = f->ask;
	in.answer = f->answer;
	in.fencing = (enum arb_policy_fencing)lr.f.fencing;
	in.stonith = ARB_POLICY_STONITH_NOT_KICKED;
	if (arb_policy_fence(&in, &out)) {
		fence_reply(a, f, "fallback", -1, "bad input to the decision table", &lr);
		return;
	}
	switch (out.action) {
	case ARB_POLICY_FENCE_FAIL:
	case ARB_POLICY_FENCE_DONE:
		fence_reply(a, f, "exit", out.exit, out.why, &lr);
		break;
	case ARB_POLICY_FENCE_FALLBACK:
		fence_reply(a, f, "fallback", -1, out.why, &lr);
		break;
	case ARB_POLICY_FENCE_CONSTRAINT:
		fence_reply(a, f, "constraint", 4, out.why, &lr);
		break;
	case ARB_POLICY_FENCE_STONITH:
		/* the handler places the constraint and asks the fencer */
		fence_reply(a, f, "stonith", 7, out.why, &lr);
		break;
	case ARB_POLICY_FENCE_ASK:
		log_info("[%s] arbiter: fence-peer: %s", f->res, out.why);
		send_outdate_req(a, f, &lr);
		if (f->ask == ARB_POLICY_ASK_DEADLINE)
			fence_decide(a, f);
		break;
	case ARB_POLICY_FENCE_WAIT:
		break;
	}
}

static void req_fence_peer(struct arb_core *a, uint64_t client, const char *res, json_object *req)
{
	json_object *jt;
	int64_t timeout = FENCE_TIMEOUT_MS;
	size_t i;

	if (json_object_object_get_ex(req, "timeout_ms", &jt))
		timeout = json_object_get_int64(jt);
	if (timeout < 100 || timeout > 600000)
		timeout = FENCE_TIMEOUT_MS;
	for (i = 0; i < PENDING_MAX && a->fence[i].used; i++)
		;
	if (i == PENDING_MAX) {
		arb_sock_error(a->sock, client, 20, "too many fence-peer requests at once", NULL);
		return;
	}
	memset(&a->fence[i], 0, sizeof(a->fence[i]));
	a->fence[i].used = true;
	a->fence[i].client = client;
	a->fence[i].deadline = now_ms() + timeout;
	snprintf(a->fence[i].res, sizeof(a->fence[i].res), "%s", res);
	log_info("[%s] arbiter: fence-peer asked (deadline %" PRId64 " ms)", res, timeout);
	fence_decide(a, &a->fence[i]);
}

static void redecide_all(struct arb_core *a)
{
	size_t i;

	for (i = 0; i < PENDING_MAX; i++)
		if (a->fence[i].used)
			fence_decide(a, &a->fence[i]);
}

/* ---------------------------------------------------------------- the peer's OUTDATE_REQ */

static void outdate_work(struct arb_core *a, struct outdate_job *j)
{
	struct arb_policy_outdate_in in = {0};
	struct arb_policy_outdate_out out;
	struct arb_local_res lr;
	struct arbmsg m;
	char why[256] = "";
	uint8_t disk = DISK_DUNKNOWN;
	int rc;

	if (arb_local_get(a->local, j->res, &lr)) {
		log_warn("[%s] arbiter: %s asked to outdate it, but tandemd does not have it: "
			 "no answer (the requester falls back)",
			 j->res, node_name(a, j->requester));
		j->used = false;
		return;
	}
	in.role = (enum state_role)lr.f.role;
	in.disk = (enum state_disk)lr.f.disk;
	in.run = ARB_POLICY_RUN_NOT_YET;
	if (arb_policy_outdate(&in, &out) == 0 && out.action == ARB_POLICY_ACK_OUTDATE) {
		rc = arb_local_outdate(a->local, j->res, &disk, why, sizeof(why));
		arb_local_get(a->local, j->res, &lr);
		in.role = (enum state_role)lr.f.role;
		in.disk = (enum state_disk)disk;
		if (rc == 0)
			in.run = ARB_POLICY_RUN_DONE;
		else if (rc == -EPERM && lr.f.role == ROLE_PRIMARY)
			in.run = ARB_POLICY_RUN_REFUSED;
		else if (now_ms() + OUTDATE_RETRY_MS < j->until) {
			/* still connected here: the link loss reaches this side soon */
			log_debug("[%s] arbiter: outdate refused (%s): trying again", j->res, why);
			j->next = now_ms() + OUTDATE_RETRY_MS;
			return;
		} else
			in.run = ARB_POLICY_RUN_FAILED;
		if (arb_policy_outdate(&in, &out))
			out.action = ARB_POLICY_ACK_NONE;
	}
	j->used = false;
	log_info("[%s] arbiter: outdate asked by %s: %s%s%s", j->res, node_name(a, j->requester),
		 out.why, why[0] ? ": " : "", why);
	if (out.action != ARB_POLICY_ACK_SEND)
		return;
	header(a, &m, ARBMSG_OUTDATE_ACK);
	m.u.outdate_ack.req = j->req;
	m.u.outdate_ack.requester = j->requester;
	m.u.outdate_ack.result = (uint8_t)out.result;
	m.u.outdate_ack.disk = lr.f.disk;
	snprintf(m.u.outdate_ack.resource, sizeof(m.u.outdate_ack.resource), "%s", j->res);
	m.u.outdate_ack.current = lr.f.current;
	send_msg(a, &m);
}

static void on_outdate_req(struct arb_core *a, const struct arbmsg *m)
{
	const struct arbmsg_outdate_req *r = &m->u.outdate_req;
	size_t i;

	if (r->target != a->self)
		return;
	for (i = 0; i < PENDING_MAX && a->jobs[i].used; i++)
		;
	if (i == PENDING_MAX) {
		log_warn("[%s] arbiter: too many outdate requests at once: no answer", r->resource);
		return;
	}
	a->jobs[i].used = true;
	a->jobs[i].requester = m->nodeid;
	a->jobs[i].req = r->req;
	strcpy(a->jobs[i].res, r->resource);
	/* answer before the requester's deadline, with room for the answer */
	a->jobs[i].until = now_ms() + (r->deadline_ms > 1000 ? r->deadline_ms - 1000 : 0);
	a->jobs[i].next = 0;
	outdate_work(a, &a->jobs[i]);
}

static void on_outdate_ack(struct arb_core *a, const struct arbmsg *m)
{
	const struct arbmsg_outdate_ack *k = &m->u.outdate_ack;
	size_t i;

	if (k->requester != a->self)
		return;
	for (i = 0; i < PENDING_MAX; i++) {
		struct fence_req *f = &a->fence[i];

		if (f->used && f->req == k->req && f->ask == ARB_POLICY_ASK_SENT &&
		    m->nodeid == f->peer_id) {
			f->ask = ARB_POLICY_ASK_ANSWERED;
			f->answer = k->result;
			fence_decide(a, f);
		}
	}
}

/* ---------------------------------------------------------------- CPG */

static void log_bad(struct arb_core *a, uint32_t nodeid, const char *err)
{
	int64_t now = now_ms();

	if (now - a->bad_logged < 1000) {
		a->bad_quiet++;
		return;
	}
	log_warn("arbiter: dropped a message from node %" PRIu32 " (%s): %s%s", nodeid,
		 node_name(a, nodeid), err, a->bad_quiet ? " (and others, not logged)" : "");
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
	rc = arb_table_deliver(a->t, &m, now_ms());
	if (rc) {
		log_bad(a, nodeid, rc == -EALREADY ? "a replayed sequence number" : strerror(-rc));
		return;
	}
	switch (m.type) {
	case ARBMSG_OUTDATE_REQ:
		on_outdate_req(a, &m);
		break;
	case ARBMSG_OUTDATE_ACK:
		on_outdate_ack(a, &m);
		break;
	case ARBMSG_FENCED:
		log_warn("arbiter: node %s reports node %s %s%s%s", node_name(a, nodeid),
			 node_name(a, m.u.fenced.node),
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

static void on_ring(void *ctx, uint64_t seq, const uint32_t *nodes, size_t n)
{
	struct arb_core *a = ctx;

	arb_corosync_nodelist(a->cs, read_nodelist_one, a);
	if (arb_table_ring(a->t, seq, nodes, n))
		log_err("arbiter: cannot hold the ring's membership");
	log_info("arbiter: ring %" PRIu64 ": %zu node%s", seq, n, n == 1 ? "" : "s");
	redecide_all(a);
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
		log_warn("arbiter: the arbiter of node %s %s", node_name(a, left[i].nodeid),
			 reason_word(left[i].reason));
	if (arb_table_group(a->t, members, n, left, n_left))
		log_err("arbiter: cannot hold the group's membership");
	for (i = 0; i < n; i++)
		in = in || members[i].nodeid == a->self;
	if (in && !a->joined)
		log_info("arbiter: joined the group %s as node %" PRIu32 " (%s)",
			 ARB_COROSYNC_GROUP, a->self, node_name(a, a->self));
	a->joined = in;
	/* every change is a barrier: everyone republishes (§4.1) */
	if (in)
		send_hello(a);
	redecide_all(a);
}

static void on_quorum(void *ctx, bool quorate)
{
	struct arb_core *a = ctx;

	if (quorate != a->quorate || !a->quorum_told)
		log_warn("arbiter: this partition is %s", quorate ? "quorate" : "NOT quorate");
	a->quorate = quorate;
	arb_table_set_quorate(a->t, quorate);
	a->quorum_told = arb_local_quorum(a->local, quorate) != -ENOTCONN;
	redecide_all(a);
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
	json_object *o = arb_table_show(a->t, now_ms());
	struct arb_corosync_votes v;

	json_object_object_add(o, "ok", json_object_new_boolean(true));
	json_object_object_add(o, "name", json_object_new_string(node_name(a, a->self)));
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

	if (view_of(a, res, &lr, &id, &v) || !id) {
		arb_sock_error(a->sock, client, 10, "no such resource, or its peer is not a node",
			       NULL);
		return;
	}
	if (!how || (strcmp(how, "stonith") && strcmp(how, "constraint"))) {
		arb_sock_error(a->sock, client, 10, "how: must be \"stonith\" or \"constraint\"",
			       NULL);
		return;
	}
	header(a, &m, ARBMSG_FENCED);
	m.u.fenced.node = id;
	m.u.fenced.how = !strcmp(how, "stonith") ? ARBMSG_HOW_STONITH : ARBMSG_HOW_CONSTRAINT;
	m.u.fenced.when = wall_ms();
	if (m.u.fenced.how == ARBMSG_HOW_CONSTRAINT)
		snprintf(m.u.fenced.resource, sizeof(m.u.fenced.resource), "%s", res);
	if (send_msg(a, &m)) {
		arb_sock_error(a->sock, client, 20, "cannot multicast FENCED", NULL);
		return;
	}
	arb_sock_reply(a->sock, client, answer(a, &lr, id));
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

	if (view_of(a, res, &lr, &id, &v)) {
		arb_sock_error(a->sock, client, 10, "tandemd does not have this resource", NULL);
		return;
	}
	in.node = policy_node(&v);
	in.fenced = v.fenced;
	in.rec = policy_rec(&v);
	in.disk = (enum state_disk)v.facts.disk;
	in.up = v.facts.up;
	if (arb_policy_wfc(&in, &out)) {
		arb_sock_error(a->sock, client, 20, "bad input to the decision table", NULL);
		return;
	}
	o = answer(a, &lr, id);
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

	if (view_of(a, res, &lr, &id, &v)) {
		arb_sock_error(a->sock, client, 10, "tandemd does not have this resource", NULL);
		return;
	}
	in.peer = lr.f.peer;
	in.member = v.arbiter_member;
	in.fenced = v.fenced;
	in.rec = policy_rec(&v);
	in.role = (enum state_role)v.facts.role;
	if (arb_policy_promote(&in, &out) ||
	    arb_policy_quorum_promote((enum arb_policy_quorum)lr.f.quorum, a->quorate, false,
				      &q)) {
		arb_sock_error(a->sock, client, 20, "bad input to the decision table", NULL);
		return;
	}
	o = answer(a, &lr, id);
	if (out.ok && !q.ok) {
		out.ok = false;
		snprintf(out.why, sizeof(out.why), "%s", q.why);
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
		req_fence_peer(a, client, res, req);
	else if (!strcmp(cmd, "fenced"))
		req_fenced(a, client, res, req);
	else if (!strcmp(cmd, "wfc"))
		req_wfc(a, client, res);
	else if (!strcmp(cmd, "may-promote"))
		req_may_promote(a, client, res);
	else
		arb_sock_error(a->sock, client, 10, "unknown command",
			       "doc/arbiter.md §7 lists the requests");
	json_object_put(req);
}

/* ---------------------------------------------------------------- life */

static void on_tick(void *data)
{
	struct arb_core *a = data;
	int64_t now = now_ms();
	size_t i;

	for (i = 0; i < PENDING_MAX; i++) {
		if (a->fence[i].used && a->fence[i].ask == ARB_POLICY_ASK_SENT &&
		    now >= a->fence[i].deadline)
			fence_decide(a, &a->fence[i]);
		if (a->jobs[i].used && now >= a->jobs[i].next)
			outdate_work(a, &a->jobs[i]);
	}
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
		a->incarnation = (uint64_t)wall_ms();
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
		 a->self, node_name(a, a->self), arb_corosync_token_ms(a->cs), a->incarnation);
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
