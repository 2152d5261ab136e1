/*
 * arb-fence: fence-peer in tandem-arbiterd (doc/arbiter.md §6.1): the
 * requester's side (a local handler asks; OUTDATE_REQ to the peer's
 * arbiter; the answer, the deadline, or a membership change decides) and
 * the target's side (a peer's OUTDATE_REQ: `outdate` through tandemd,
 * retried while tandemd still sees the link the peer lost first).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "arb-core-int.h"
#include "log.h"
#include "state.h"

#define FENCE_TIMEOUT_MS 30000 /* fence-peer's default */
#define OUTDATE_RETRY_MS 200

/* ---------------------------------------------------------------- fence-peer (§6.1) */

static void fence_decide(struct arb_core *a, struct arb_fence_req *f);

static void fence_reply(struct arb_core *a, struct arb_fence_req *f, const char *action, int exit_code,
			const char *why, const struct arb_local_res *lr)
{
	json_object *o = arb_core_answer(a, lr, f->peer_id);

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

static void send_outdate_req(struct arb_core *a, struct arb_fence_req *f,
			     const struct arb_local_res *lr)
{
	struct arbmsg m;
	int64_t left = f->deadline - arb_core_now_ms();

	arb_core_header(a, &m, ARBMSG_OUTDATE_REQ);
	f->req = ++a->next_req;
	m.u.outdate_req.req = f->req;
	snprintf(m.u.outdate_req.resource, sizeof(m.u.outdate_req.resource), "%s", f->res);
	m.u.outdate_req.target = f->peer_id;
	m.u.outdate_req.deadline_ms = left > 0 ? (uint32_t)left : 0;
	m.u.outdate_req.current = lr->f.current;
	snprintf(m.u.outdate_req.requester, sizeof(m.u.outdate_req.requester), "%s",
		 arb_core_node_name(a, a->self));
	f->ask = arb_core_send(a, &m) ? ARB_POLICY_ASK_DEADLINE : ARB_POLICY_ASK_SENT;
}

static void fence_decide(struct arb_core *a, struct arb_fence_req *f)
{
	struct arb_policy_fence_in in = {0};
	struct arb_policy_fence_out out;
	struct arb_local_res lr;
	struct arb_view v;
	uint32_t id;

	if (arb_core_view(a, f->res, &lr, &id, &v)) {
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
	if (f->ask == ARB_POLICY_ASK_SENT && arb_core_now_ms() >= f->deadline)
		f->ask = ARB_POLICY_ASK_DEADLINE;
	if (f->ask != ARB_POLICY_ASK_ANSWERED && !arb_core_quorum_known(a)) {
		/* a node left the ring and corosync has not yet said whether this
		 * side keeps quorum (a qdevice answers after its poll): the rows
		 * of §6.1 need it; wait for it, never decide on the old value */
		if (arb_core_now_ms() >= f->deadline)
			fence_reply(a, f, "exit", 1,
				    "corosync did not report this partition's quorum for the new "
				    "membership by the deadline: no outdating, no fencing; I/O stays "
				    "frozen",
				    &lr);
		return;
	}
	in.quorate = v.quorate;
	in.node = arb_core_policy_node(&v);
	in.proc = arb_core_policy_proc(&v);
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

void arb_fence_request(struct arb_core *a, uint64_t client, const char *res, json_object *req)
{
	json_object *jt;
	int64_t timeout = FENCE_TIMEOUT_MS;
	size_t i;

	if (json_object_object_get_ex(req, "timeout_ms", &jt))
		timeout = json_object_get_int64(jt);
	if (timeout < 100 || timeout > 600000)
		timeout = FENCE_TIMEOUT_MS;
	for (i = 0; i < ARB_PENDING_MAX && a->fence[i].used; i++)
		;
	if (i == ARB_PENDING_MAX) {
		arb_sock_error(a->sock, client, 20, "too many fence-peer requests at once", NULL);
		return;
	}
	memset(&a->fence[i], 0, sizeof(a->fence[i]));
	a->fence[i].used = true;
	a->fence[i].client = client;
	a->fence[i].deadline = arb_core_now_ms() + timeout;
	snprintf(a->fence[i].res, sizeof(a->fence[i].res), "%s", res);
	log_info("[%s] arbiter: fence-peer asked (deadline %" PRId64 " ms)", res, timeout);
	fence_decide(a, &a->fence[i]);
}

void arb_fence_redecide(struct arb_core *a)
{
	size_t i;

	for (i = 0; i < ARB_PENDING_MAX; i++)
		if (a->fence[i].used)
			fence_decide(a, &a->fence[i]);
}

/* ---------------------------------------------------------------- the peer's OUTDATE_REQ */

static void outdate_work(struct arb_core *a, struct arb_outdate_job *j)
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
			 j->res, arb_core_node_name(a, j->requester));
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
		else if (arb_core_now_ms() + OUTDATE_RETRY_MS < j->until) {
			/* still connected here: the link loss reaches this side soon */
			log_debug("[%s] arbiter: outdate refused (%s): trying again", j->res, why);
			j->next = arb_core_now_ms() + OUTDATE_RETRY_MS;
			return;
		} else
			in.run = ARB_POLICY_RUN_FAILED;
		if (arb_policy_outdate(&in, &out))
			out.action = ARB_POLICY_ACK_NONE;
	}
	j->used = false;
	log_info("[%s] arbiter: outdate asked by %s: %s%s%s", j->res, arb_core_node_name(a, j->requester),
		 out.why, why[0] ? ": " : "", why);
	if (out.action != ARB_POLICY_ACK_SEND)
		return;
	arb_core_header(a, &m, ARBMSG_OUTDATE_ACK);
	m.u.outdate_ack.req = j->req;
	m.u.outdate_ack.requester = j->requester;
	m.u.outdate_ack.result = (uint8_t)out.result;
	m.u.outdate_ack.disk = lr.f.disk;
	snprintf(m.u.outdate_ack.resource, sizeof(m.u.outdate_ack.resource), "%s", j->res);
	m.u.outdate_ack.current = lr.f.current;
	arb_core_send(a, &m);
}

void arb_fence_outdate_req(struct arb_core *a, const struct arbmsg *m)
{
	const struct arbmsg_outdate_req *r = &m->u.outdate_req;
	size_t i;

	if (r->target != a->self)
		return;
	for (i = 0; i < ARB_PENDING_MAX && a->jobs[i].used; i++)
		;
	if (i == ARB_PENDING_MAX) {
		log_warn("[%s] arbiter: too many outdate requests at once: no answer", r->resource);
		return;
	}
	a->jobs[i].used = true;
	a->jobs[i].requester = m->nodeid;
	a->jobs[i].req = r->req;
	strcpy(a->jobs[i].res, r->resource);
	/* answer before the requester's deadline, with room for the answer */
	a->jobs[i].until = arb_core_now_ms() + (r->deadline_ms > 1000 ? r->deadline_ms - 1000 : 0);
	a->jobs[i].next = 0;
	outdate_work(a, &a->jobs[i]);
}

void arb_fence_outdate_ack(struct arb_core *a, const struct arbmsg *m)
{
	const struct arbmsg_outdate_ack *k = &m->u.outdate_ack;
	size_t i;

	if (k->requester != a->self)
		return;
	for (i = 0; i < ARB_PENDING_MAX; i++) {
		struct arb_fence_req *f = &a->fence[i];

		if (f->used && f->req == k->req && f->ask == ARB_POLICY_ASK_SENT &&
		    m->nodeid == f->peer_id) {
			f->ask = ARB_POLICY_ASK_ANSWERED;
			f->answer = k->result;
			fence_decide(a, f);
		}
	}
}

void arb_fence_tick(struct arb_core *a, int64_t now)
{
	size_t i;

	for (i = 0; i < ARB_PENDING_MAX; i++) {
		if (a->fence[i].used &&
		    (a->fence[i].ask == ARB_POLICY_ASK_SENT || !arb_core_quorum_known(a)) &&
		    now >= a->fence[i].deadline)
			fence_decide(a, &a->fence[i]);
		if (a->jobs[i].used && now >= a->jobs[i].next)
			outdate_work(a, &a->jobs[i]);
	}
}
