/*
 * arb-sb: one split-brain verdict for both nodes (doc/arbiter.md §6.3).
 *
 * Each tandemd that finds a split brain in a handshake asks its arbiter
 * (`sb-verdict`, with the two current UUIDs and its after-sb options).
 * The arbiter first republishes the resource's facts, so that `changes`
 * is the count at the split brain. The decider, the lower node id of the
 * two whose arbiter is a member, decides once it holds both nodes'
 * records with those current UUIDs, and multicasts SB_VERDICT. Both
 * arbiters answer their tandemd with the first verdict delivered for
 * that pair of UUIDs; tandemd applies it and logs its id.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arb-core-int.h"
#include "log.h"
#include "state.h"

#define SB_TIMEOUT_MS 5000 /* the default wait for a verdict */

/* Two current UUIDs are of one generation but for bit 0 (the Primary bit). */
static bool same_uuid(uint64_t a, uint64_t b)
{
	return ((a ^ b) & ~UINT64_C(1)) == 0;
}

static bool same_pair(uint64_t a1, uint64_t b1, uint64_t a2, uint64_t b2)
{
	return (same_uuid(a1, a2) && same_uuid(b1, b2)) || (same_uuid(a1, b2) && same_uuid(b1, a2));
}

static const struct arb_sb_verdict *verdict_for(const struct arb_core *a,
						const struct arb_sb_ask *q)
{
	size_t i;

	for (i = 0; i < ARB_VERDICTS_MAX; i++) {
		const struct arb_sb_verdict *v = &a->verdicts[i];

		if (v->used && !strcmp(v->v.resource, q->res) &&
		    same_pair(v->v.uuid_a, v->v.uuid_b, q->current, q->peer_current))
			return v;
	}
	return NULL;
}

static void answer_verdict(struct arb_core *a, struct arb_sb_ask *q, const struct arb_sb_verdict *v)
{
	json_object *o = json_object_new_object();
	const char *loser = v->v.loser ? arb_table_node_name(a->t, v->v.loser) : NULL;
	char id[64];

	snprintf(id, sizeof(id), "%" PRIu32 ":%016" PRIx64 ":%" PRIu64, v->decider, v->incarnation,
		 v->v.id);
	json_object_object_add(o, "ok", json_object_new_boolean(true));
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "loser", loser ? json_object_new_string(loser) : NULL);
	json_object_object_add(o, "loser_id", json_object_new_int64(v->v.loser));
	json_object_object_add(o, "primaries", json_object_new_int(v->v.primaries));
	json_object_object_add(
		o, "policy",
		json_object_new_string(sbpolicy_name((enum sbpolicy)v->v.policy,
						     (enum sbpolicy_slot)(v->v.primaries <= 2
									      ? v->v.primaries
									      : 0))));
	json_object_object_add(o, "why", json_object_new_string(v->v.reason));
	arb_sock_reply(a->sock, q->client, o);
	q->used = false;
}

/* The node's fresh record of res whose current UUID is cur; false if
 * there is none (yet). */
static bool record_of(struct arb_core *a, const char *res, uint32_t node, uint64_t cur,
		      struct arb_policy_sb_node *out)
{
	struct arb_view v;

	if (arb_table_view(a->t, res, node, arb_core_now_ms(), &v) ||
	    v.record != ARB_RECORD_FRESH || !same_uuid(v.facts.current, cur))
		return false;
	out->id = node;
	out->role = v.facts.role <= ROLE_SECONDARY ? (enum state_role)v.facts.role : ROLE_UNKNOWN;
	out->since.ring = v.facts.since_ring;
	out->since.s = v.facts.since_s;
	out->changes = v.facts.changes;
	out->current = v.facts.current;
	return true;
}

/* The decider's part: once both records are there, decide and multicast. */
static void decide(struct arb_core *a, struct arb_sb_ask *q)
{
	struct arb_policy_sb_in in;
	struct arb_policy_sb_out out;
	struct arb_local_res lr;
	struct arb_view v;
	struct arbmsg m;
	uint32_t peer;

	if (q->decided || arb_core_view(a, q->res, &lr, &peer, &v) || !peer ||
	    arb_policy_sb_decider(a->self, true, peer, v.arbiter_member) != a->self)
		return;
	memset(&in, 0, sizeof(in));
	if (!record_of(a, q->res, a->self, q->current, &in.node[0]) ||
	    !record_of(a, q->res, peer, q->peer_current, &in.node[1]))
		return; /* not yet: the FACTS that come next call again */
	in.after_sb_0pri = q->asb[0];
	in.after_sb_1pri = q->asb[1];
	in.after_sb_2pri = q->asb[2];
	if (q->discard_node[0])
		arb_table_node_id(a->t, q->discard_node, &in.discard_node);
	in.self = a->self;
	if (arb_policy_sb(&in, &out)) {
		log_warn("[%s] arbiter: cannot decide the split brain (%016" PRIX64 "/%016" PRIX64
			 "): no verdict, each node applies its own rules",
			 q->res, q->current, q->peer_current);
		q->decided = true;
		return;
	}
	arb_core_header(a, &m, ARBMSG_SB_VERDICT);
	m.u.sb_verdict.decider = a->self;
	snprintf(m.u.sb_verdict.resource, sizeof(m.u.sb_verdict.resource), "%s", q->res);
	m.u.sb_verdict.loser = out.loser;
	m.u.sb_verdict.policy = (uint8_t)out.policy;
	m.u.sb_verdict.primaries = (uint8_t)out.primaries;
	m.u.sb_verdict.uuid_a = out.uuid_a;
	m.u.sb_verdict.uuid_b = out.uuid_b;
	snprintf(m.u.sb_verdict.reason, sizeof(m.u.sb_verdict.reason), "%.144s", out.why);
	m.u.sb_verdict.id = a->seq + 1; /* arb_core_send() gives it this seq */
	if (arb_core_send(a, &m) == 0) {
		q->decided = true;
		log_info("[%s] arbiter: split brain decided here: loser %s (%s)", q->res,
			 out.loser ? arb_core_node_name(a, out.loser) : "none, disconnect", out.why);
	}
}

void arb_sb_step(struct arb_core *a)
{
	int64_t now = arb_core_now_ms();
	size_t i;

	for (i = 0; i < ARB_PENDING_MAX; i++) {
		struct arb_sb_ask *q = &a->sb_ask[i];
		const struct arb_sb_verdict *v;

		if (!q->used)
			continue;
		v = verdict_for(a, q);
		if (v) {
			answer_verdict(a, q, v);
			continue;
		}
		if (now >= q->deadline) {
			log_warn("[%s] arbiter: no split-brain verdict in time: tandemd applies its "
				 "own rules",
				 q->res);
			arb_sock_error(a->sock, q->client, 20, "no split-brain verdict in time",
				       "tandemd applies the after-sb rules to its own view");
			q->used = false;
			continue;
		}
		decide(a, q);
	}
}

void arb_sb_delivered(struct arb_core *a, const struct arbmsg *m)
{
	const struct arbmsg_sb_verdict *sv = &m->u.sb_verdict;
	struct arb_sb_verdict *slot;
	size_t i;

	for (i = 0; i < ARB_VERDICTS_MAX; i++) {
		const struct arb_sb_verdict *o = &a->verdicts[i];

		if (o->used && !strcmp(o->v.resource, sv->resource) &&
		    same_pair(o->v.uuid_a, o->v.uuid_b, sv->uuid_a, sv->uuid_b)) {
			log_info("[%s] arbiter: a later split-brain verdict from %s ignored: the "
				 "first one stands",
				 sv->resource, arb_core_node_name(a, m->nodeid));
			return;
		}
	}
	slot = &a->verdicts[a->next_verdict];
	a->next_verdict = (a->next_verdict + 1) % ARB_VERDICTS_MAX;
	slot->used = true;
	slot->decider = m->nodeid;
	slot->incarnation = m->incarnation;
	slot->v = *sv;
	log_warn("[%s] arbiter: split-brain verdict %" PRIu32 ":%016" PRIx64 ":%" PRIu64
		 " by %s: %s loses (%s)",
		 sv->resource, m->nodeid, m->incarnation, sv->id, arb_core_node_name(a, m->nodeid),
		 sv->loser ? arb_core_node_name(a, sv->loser) : "nobody, disconnect", sv->reason);
	arb_sb_step(a);
}

static int parse_uuid(json_object *req, const char *key, uint64_t *out)
{
	const char *s = json_object_get_string(json_object_object_get(req, key));
	char *end;

	if (!s || !s[0])
		return -EINVAL;
	*out = strtoull(s, &end, 16);
	return *end ? -EINVAL : 0;
}

void arb_sb_request(struct arb_core *a, uint64_t client, const char *res, json_object *req)
{
	json_object *asb = json_object_object_get(req, "after_sb"), *jt;
	const char *dn = json_object_get_string(json_object_object_get(req, "discard_node"));
	int64_t timeout = SB_TIMEOUT_MS;
	struct arb_local_res lr;
	struct arb_sb_ask *q = NULL;
	size_t i;

	for (i = 0; i < ARB_PENDING_MAX && !q; i++)
		if (!a->sb_ask[i].used)
			q = &a->sb_ask[i];
	if (!q) {
		arb_sock_error(a->sock, client, 20, "too many sb-verdict requests at once", NULL);
		return;
	}
	memset(q, 0, sizeof(*q));
	if (parse_uuid(req, "current", &q->current) ||
	    parse_uuid(req, "peer_current", &q->peer_current) || !asb ||
	    !json_object_is_type(asb, json_type_array) || json_object_array_length(asb) != 3 ||
	    (dn && strlen(dn) > ARBMSG_NAME_MAX)) {
		arb_sock_error(a->sock, client, 10,
			       "sb-verdict needs \"current\" and \"peer_current\" (hex UUIDs) and "
			       "\"after_sb\" (three numbers)",
			       NULL);
		return;
	}
	for (i = 0; i < 3; i++) {
		int p = json_object_get_int(json_object_array_get_idx(asb, i));

		if (p < SBPOLICY_DISCONNECT || p > SBPOLICY_DISCARD_NODE) {
			arb_sock_error(a->sock, client, 10, "after_sb: an unknown policy number",
				       NULL);
			return;
		}
		q->asb[i] = (enum sbpolicy)p;
	}
	if (json_object_object_get_ex(req, "timeout_ms", &jt))
		timeout = json_object_get_int64(jt);
	if (timeout < 100 || timeout > 60000)
		timeout = SB_TIMEOUT_MS;
	snprintf(q->res, sizeof(q->res), "%s", res);
	snprintf(q->discard_node, sizeof(q->discard_node), "%s", dn ? dn : "");
	q->client = client;
	q->deadline = arb_core_now_ms() + timeout;
	q->used = true;
	log_info("[%s] arbiter: tandemd asks for a split-brain verdict (%016" PRIX64 "/%016" PRIX64
		 ")",
		 res, q->current, q->peer_current);
	/* the facts at the split brain, `changes` included, for the decider */
	arb_local_refresh(a->local);
	if (arb_local_get(a->local, res, &lr) == 0)
		arb_core_publish(a, &lr);
	arb_sb_step(a);
}
