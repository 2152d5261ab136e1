/*
 * arb-policy: the arbiter's decision tables (doc/arbiter.md §6), each a
 * list of rules tried in order, the first that matches decides. The
 * split-brain verdict does not restate DRBD's rules: it hands the two
 * records to sbpolicy_decide() as "self" (the lower node id) and "peer"
 * and turns its answer, which is the same whichever node asks, into a
 * node id; arb-policy.h says what each input means.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "arb-policy.h"
#include "quorum.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- §2 facts */

bool arb_policy_fresh(uint64_t age_ms, uint32_t token_ms, bool member)
{
	if (token_ms == 0)
		token_ms = ARB_POLICY_TOKEN_MS;
	return member || age_ms < 2 * (uint64_t)token_ms;
}

enum arb_policy_rec arb_policy_rec_of(bool have, uint64_t age_ms, uint32_t token_ms, bool member)
{
	if (!have)
		return ARB_POLICY_REC_NONE;
	return arb_policy_fresh(age_ms, token_ms, member) ? ARB_POLICY_REC_FRESH
							  : ARB_POLICY_REC_STALE;
}

static bool bad_role(enum state_role r)
{
	return (unsigned int)r > ROLE_SECONDARY;
}

static bool bad_disk(enum state_disk d)
{
	return (unsigned int)d > DISK_UPTODATE;
}

/* ---------------------------------------------------------------- §6.1 fence-peer */

static void fence_set(struct arb_policy_fence_out *out, enum arb_policy_fence_action action,
		      int exit_code, unsigned int fenced, const char *why)
{
	out->action = action;
	out->exit = exit_code;
	out->fenced = fenced;
	out->why = why;
}

/* The peer left the ring: the constraint, and the fencer under stonith. */
static void fence_nodedown(const struct arb_policy_fence_in *in, struct arb_policy_fence_out *out)
{
	if (in->fencing == ARB_POLICY_RESOURCE_ONLY) {
		fence_set(out, ARB_POLICY_FENCE_CONSTRAINT, 4, ARB_POLICY_HOW_CONSTRAINT,
			  "the peer node left the ring (NODEDOWN): placing the constraint");
		return;
	}
	if (in->fencing == ARB_POLICY_DONT_CARE) {
		/* §6.1 has no such row: do what tandem does without an arbiter */
		fence_set(out, ARB_POLICY_FENCE_FALLBACK, ARB_POLICY_EXIT_FALLBACK, 0,
			  "the peer node left the ring, fencing is dont-care: "
			  "falling back to the CIB path");
		return;
	}
	switch (in->stonith) {
	case ARB_POLICY_STONITH_NOT_KICKED:
		fence_set(out, ARB_POLICY_FENCE_STONITH, ARB_POLICY_EXIT_PENDING, 0,
			  "the peer node left the ring (NODEDOWN): placing the constraint "
			  "and asking the fencer");
		break;
	case ARB_POLICY_STONITH_KICKED:
		fence_set(out, ARB_POLICY_FENCE_WAIT, ARB_POLICY_EXIT_PENDING, 0,
			  "waiting for the fencer to confirm");
		break;
	case ARB_POLICY_STONITH_CONFIRMED:
		fence_set(out, ARB_POLICY_FENCE_DONE, 7, ARB_POLICY_HOW_STONITH,
			  "the fencer confirmed that the peer node was fenced");
		break;
	case ARB_POLICY_STONITH_DEADLINE:
		fence_set(out, ARB_POLICY_FENCE_DONE, 5, 0,
			  "the fencer did not confirm by the deadline: the peer is unreachable, "
			  "the constraint stays");
		break;
	}
}

static void fence_answered(int answer, struct arb_policy_fence_out *out)
{
	if (answer == 4)
		fence_set(out, ARB_POLICY_FENCE_DONE, 4, 0, "the peer's arbiter outdated its disk");
	else if (answer == 3)
		fence_set(out, ARB_POLICY_FENCE_DONE, 3, 0,
			  "the peer's disk is Inconsistent or worse");
	else
		fence_set(out, ARB_POLICY_FENCE_DONE, 6, 0,
			  "the peer is Primary: it refused to be outdated");
}

int arb_policy_fence(const struct arb_policy_fence_in *in, struct arb_policy_fence_out *out)
{
	if (!in || !out || (unsigned int)in->node > ARB_POLICY_NODE_UNKNOWN ||
	    (unsigned int)in->proc > ARB_POLICY_PROC_NEVER ||
	    (unsigned int)in->ask > ARB_POLICY_ASK_DEADLINE ||
	    (unsigned int)in->fencing > ARB_POLICY_RESOURCE_AND_STONITH ||
	    (unsigned int)in->stonith > ARB_POLICY_STONITH_DEADLINE)
		return -EINVAL;
	if (in->ask == ARB_POLICY_ASK_ANSWERED && in->answer != 3 && in->answer != 4 &&
	    in->answer != 6)
		return -EINVAL;

	if (!in->quorate)
		fence_set(out, ARB_POLICY_FENCE_FAIL, 1, 0,
			  "this partition is not quorate: no outdating, no fencing; "
			  "I/O stays frozen");
	else if (in->ask == ARB_POLICY_ASK_ANSWERED)
		/* delivered before the peer left, if it did: it stands */
		fence_answered(in->answer, out);
	else if (in->node == ARB_POLICY_NODE_UNKNOWN)
		fence_set(out, ARB_POLICY_FENCE_FALLBACK, ARB_POLICY_EXIT_FALLBACK, 0,
			  "the peer is not in corosync's nodelist: falling back to the CIB path");
	else if (in->node == ARB_POLICY_NODE_ABSENT)
		fence_set(out, ARB_POLICY_FENCE_FALLBACK, ARB_POLICY_EXIT_FALLBACK, 0,
			  "the peer node was never seen leaving the ring: "
			  "falling back to the CIB path");
	else if (in->node == ARB_POLICY_NODE_DOWN)
		fence_nodedown(in, out);
	else if (in->proc == ARB_POLICY_PROC_LEAVE)
		fence_set(out, ARB_POLICY_FENCE_FALLBACK, ARB_POLICY_EXIT_FALLBACK, 0,
			  "the peer's arbiter stopped (LEAVE): falling back to the CIB path");
	else if (in->proc == ARB_POLICY_PROC_PROCDOWN)
		fence_set(out, ARB_POLICY_FENCE_FALLBACK, ARB_POLICY_EXIT_FALLBACK, 0,
			  "the peer's arbiter died (PROCDOWN): falling back to the CIB path");
	else if (in->proc == ARB_POLICY_PROC_NEVER)
		fence_set(out, ARB_POLICY_FENCE_FALLBACK, ARB_POLICY_EXIT_FALLBACK, 0,
			  "the peer's arbiter never joined: falling back to the CIB path");
	else if (in->ask == ARB_POLICY_ASK_NOT_SENT)
		fence_set(out, ARB_POLICY_FENCE_ASK, ARB_POLICY_EXIT_PENDING, 0,
			  "asking the peer's arbiter to outdate the peer");
	else if (in->ask == ARB_POLICY_ASK_SENT)
		fence_set(out, ARB_POLICY_FENCE_WAIT, ARB_POLICY_EXIT_PENDING, 0,
			  "waiting for the peer's arbiter to answer");
	else
		fence_set(out, ARB_POLICY_FENCE_FALLBACK, ARB_POLICY_EXIT_FALLBACK, 0,
			  "the peer's arbiter did not answer by the deadline: "
			  "falling back to the CIB path");
	return 0;
}

static void ack_set(struct arb_policy_outdate_out *out, enum arb_policy_ack action, int result,
		    const char *why)
{
	out->action = action;
	out->result = result;
	out->why = why;
}

int arb_policy_outdate(const struct arb_policy_outdate_in *in, struct arb_policy_outdate_out *out)
{
	if (!in || !out || bad_role(in->role) || bad_disk(in->disk) ||
	    (unsigned int)in->run > ARB_POLICY_RUN_FAILED)
		return -EINVAL;

	switch (in->run) {
	case ARB_POLICY_RUN_NOT_YET:
		if (in->role == ROLE_PRIMARY)
			ack_set(out, ARB_POLICY_ACK_SEND, 6, "this node is Primary: not outdated");
		else if (in->disk <= DISK_INCONSISTENT)
			ack_set(out, ARB_POLICY_ACK_SEND, 3,
				"this node's disk is Inconsistent or worse");
		else
			ack_set(out, ARB_POLICY_ACK_OUTDATE, 0, "outdating this node's disk");
		break;
	case ARB_POLICY_RUN_DONE:
		if (in->disk == DISK_OUTDATED)
			ack_set(out, ARB_POLICY_ACK_SEND, 4, "this node's disk is Outdated");
		else if (in->disk <= DISK_INCONSISTENT)
			ack_set(out, ARB_POLICY_ACK_SEND, 3,
				"this node's disk is Inconsistent or worse");
		else
			ack_set(out, ARB_POLICY_ACK_NONE, 0,
				"outdate succeeded but the disk is not Outdated: no answer");
		break;
	case ARB_POLICY_RUN_REFUSED:
		ack_set(out, ARB_POLICY_ACK_SEND, 6,
			"tandemd refused to outdate (this node became Primary)");
		break;
	case ARB_POLICY_RUN_FAILED:
		ack_set(out, ARB_POLICY_ACK_NONE, 0,
			"outdate failed (tandemd not reachable?): no answer, the requester "
			"falls back");
		break;
	}
	return 0;
}

/* ---------------------------------------------------------------- §6.2 wfc */

static void wfc_set(struct arb_policy_wfc_out *out, enum arb_policy_wfc wfc, const char *why)
{
	out->wfc = wfc;
	out->why = why;
}

int arb_policy_wfc(const struct arb_policy_wfc_in *in, struct arb_policy_wfc_out *out)
{
	bool fresh;

	if (!in || !out || (unsigned int)in->node > ARB_POLICY_NODE_UNKNOWN ||
	    (unsigned int)in->rec > ARB_POLICY_REC_STALE || bad_disk(in->disk))
		return -EINVAL;
	fresh = in->rec == ARB_POLICY_REC_FRESH;

	if (in->node == ARB_POLICY_NODE_UNKNOWN)
		wfc_set(out, ARB_POLICY_WFC_UNKNOWN,
			"the peer is not in corosync's nodelist: use the metadata flags");
	else if (in->fenced)
		wfc_set(out, ARB_POLICY_WFC_DEGRADED, "the peer node is known fenced");
	else if (in->node != ARB_POLICY_NODE_MEMBER)
		wfc_set(out, ARB_POLICY_WFC_DEGRADED, "the peer node is not a member of the ring");
	else if (fresh && in->disk == DISK_OUTDATED)
		wfc_set(out, ARB_POLICY_WFC_OUTDATED, "the peer's disk is Outdated");
	else if (fresh && in->up)
		wfc_set(out, ARB_POLICY_WFC_DEFAULT, "the peer has the resource up");
	else
		wfc_set(out, ARB_POLICY_WFC_DEFAULT,
			"the peer node is a member, the resource is not up there yet");
	return 0;
}

const char *arb_policy_wfc_name(enum arb_policy_wfc w)
{
	switch (w) {
	case ARB_POLICY_WFC_DEFAULT:
		return "default";
	case ARB_POLICY_WFC_DEGRADED:
		return "degraded";
	case ARB_POLICY_WFC_OUTDATED:
		return "outdated";
	case ARB_POLICY_WFC_UNKNOWN:
		break;
	}
	return NULL;
}

/* ---------------------------------------------------------------- §6.3 split brain */

uint32_t arb_policy_sb_decider(uint32_t a, bool a_member, uint32_t b, bool b_member)
{
	if (a_member && b_member)
		return a < b ? a : b;
	if (a_member)
		return a;
	return b_member ? b : 0;
}

int arb_policy_since_cmp(struct arb_policy_since a, struct arb_policy_since b)
{
	if (a.ring != b.ring)
		return a.ring < b.ring ? -1 : 1;
	if (a.s != b.s)
		return a.s < b.s ? -1 : 1;
	return 0;
}

static bool since_zero(struct arb_policy_since p)
{
	return p.ring == 0 && p.s == 0;
}

/* Every `from` in buf becomes `to`, as long as it fits. */
static void replace_all(char *buf, size_t len, const char *from, const char *to)
{
	char tmp[ARB_POLICY_WHY_MAX];
	size_t flen = strlen(from), tlen = strlen(to), o = 0;
	const char *s = buf, *hit;

	if (!flen || !strstr(buf, from))
		return;
	while ((hit = strstr(s, from)) && o + (size_t)(hit - s) + tlen < sizeof(tmp)) {
		memcpy(tmp + o, s, (size_t)(hit - s));
		o += (size_t)(hit - s);
		memcpy(tmp + o, to, tlen);
		o += tlen;
		s = hit + flen;
	}
	snprintf(tmp + o, sizeof(tmp) - o, "%s", s);
	snprintf(buf, len, "%s", tmp);
}

/* discard-local and discard-remote are the decider's words; with
 * discard-node-NAME they become the node id NAME stands for (0: none). */
static uint32_t discard_id(const struct arb_policy_sb_in *in, uint32_t a, uint32_t b)
{
	uint32_t other = in->self == a ? b : a;

	switch (in->after_sb_0pri) {
	case SBPOLICY_DISCARD_LOCAL:
		return in->self;
	case SBPOLICY_DISCARD_REMOTE:
		return other;
	default:
		return in->discard_node == a || in->discard_node == b ? in->discard_node : 0;
	}
}

/* sbpolicy's reason speaks as "this node" (a) to "the peer" (b), of the
 * state at the split; the verdict names the nodes and primary_since. */
static void sb_reason(const struct arb_policy_sb_in *in, uint32_t a, uint32_t b, uint32_t gone,
		      const char *text, struct arb_policy_sb_out *out)
{
	char na[24], nb[24], from[64], to[64];
	static const char *const fixed[][2] = {
		{"; this node gives up the Primary role", ""},
		{"neither was Primary at the split", "neither is Primary"},
		{"both were Primary at the split", "both have the same primary_since"},
		{"was Primary at the split", "has the smaller primary_since"},
		{"became Primary later", "the larger"},
		{"resolve-conflicts bit (set)", "lower node id"},
		{" here, ", " on this node, "},
	};
	size_t i;

	snprintf(out->why, sizeof(out->why), "%s", text);
	for (i = 0; i < ARRAY_SIZE(fixed); i++)
		replace_all(out->why, sizeof(out->why), fixed[i][0], fixed[i][1]);
	snprintf(na, sizeof(na), "node %" PRIu32, a);
	snprintf(nb, sizeof(nb), "node %" PRIu32, b);
	replace_all(out->why, sizeof(out->why), "this node", na);
	replace_all(out->why, sizeof(out->why), "the peer", nb);
	if (gone) { /* by_node's "node 2 is 2: " says nothing more */
		snprintf(from, sizeof(from), "node %" PRIu32 " is %" PRIu32 ": ", gone, gone);
		replace_all(out->why, sizeof(out->why), from, "");
	}
	if (in->after_sb_0pri == SBPOLICY_DISCARD_LOCAL ||
	    in->after_sb_0pri == SBPOLICY_DISCARD_REMOTE) {
		snprintf(from, sizeof(from), "discard-node-%" PRIu32, gone);
		snprintf(to, sizeof(to), "%s of node %" PRIu32,
			 sbpolicy_name(in->after_sb_0pri, SBPOLICY_0PRI), in->self);
		replace_all(out->why, sizeof(out->why), from, to);
	} else if (in->after_sb_0pri == SBPOLICY_DISCARD_NODE && !gone) {
		snprintf(to, sizeof(to), "discard-node-%" PRIu32 ": not one of the two nodes",
			 in->discard_node);
		replace_all(out->why, sizeof(out->why),
			    "discard-node-: Configuration error "
			    "(not an after-sb-0pri policy)",
			    to);
	}
	if (out->pri_lost) {
		size_t len = strlen(out->why);

		snprintf(out->why + len, sizeof(out->why) - len,
			 "; node %" PRIu32 " is Primary: it gives up the role or runs "
			 "pri-lost-after-sb",
			 out->loser);
	}
}

static bool bad_sb_policy(enum sbpolicy p)
{
	return (unsigned int)p > SBPOLICY_DISCARD_NODE;
}

int arb_policy_sb(const struct arb_policy_sb_in *in, struct arb_policy_sb_out *out)
{
	const struct arb_policy_sb_node *a, *b;
	struct sbpolicy_input si = {0};
	struct sbpolicy_result r;
	struct sbpolicy_conf c;
	char sa[16], sb[16];
	uint32_t gone;
	int cmp, rc;

	if (!in || !out || bad_sb_policy(in->after_sb_0pri) || bad_sb_policy(in->after_sb_1pri) ||
	    bad_sb_policy(in->after_sb_2pri) || bad_role(in->node[0].role) ||
	    bad_role(in->node[1].role))
		return -EINVAL;
	/* the lower node id plays "self": both orders give one verdict */
	a = &in->node[0];
	b = &in->node[1];
	if (a->id > b->id) {
		a = &in->node[1];
		b = &in->node[0];
	}
	if (a->id == 0 || a->id == b->id || (in->self != a->id && in->self != b->id) ||
	    (a->current | 1) == (b->current | 1))
		return -EINVAL;

	sbpolicy_conf_init(&c);
	c.after_sb_0pri = in->after_sb_0pri;
	c.after_sb_1pri = in->after_sb_1pri;
	c.after_sb_2pri = in->after_sb_2pri;
	gone = discard_id(in, a->id, b->id);
	if (in->after_sb_0pri == SBPOLICY_DISCARD_LOCAL ||
	    in->after_sb_0pri == SBPOLICY_DISCARD_REMOTE)
		c.after_sb_0pri = SBPOLICY_DISCARD_NODE;
	if (gone)
		snprintf(c.node, sizeof(c.node), "%" PRIu32, gone);
	snprintf(sa, sizeof(sa), "%" PRIu32, a->id);
	snprintf(sb, sizeof(sb), "%" PRIu32, b->id);

	si.self_primary = a->role == ROLE_PRIMARY;
	si.peer_primary = b->role == ROLE_PRIMARY;
	/* DRBD's "Primary at the split" is the older Primary: the smaller
	 * primary_since ((0, 0), not Primary, is the smallest of all) */
	cmp = arb_policy_since_cmp(a->since, b->since);
	si.self_was_primary = cmp < 0 || (cmp == 0 && !since_zero(a->since));
	si.peer_was_primary = cmp > 0 || (cmp == 0 && !since_zero(b->since));
	si.ch_self = a->changes;
	si.ch_peer = b->changes;
	si.resolve_conflicts = true; /* a tie discards "self": the lower node id */
	si.can_demote = true;	     /* whether it can is the loser's tandemd's business */
	si.self_name = sa;
	si.peer_name = sb;
	rc = sbpolicy_decide(&c, &si, &r);
	if (rc < 0)
		return rc;

	memset(out, 0, sizeof(*out));
	out->loser = r.hg == 1 ? b->id : r.hg == -1 ? a->id : 0;
	out->primaries = r.primaries;
	out->policy = r.primaries == 0	 ? in->after_sb_0pri
		      : r.primaries == 1 ? in->after_sb_1pri
					 : in->after_sb_2pri;
	out->config_error = r.config_error;
	out->pri_lost = out->policy == SBPOLICY_CALL_HELPER && out->loser &&
			(out->loser == a->id ? a : b)->role == ROLE_PRIMARY;
	out->id_a = a->id;
	out->id_b = b->id;
	out->uuid_a = a->current;
	out->uuid_b = b->current;
	sb_reason(in, a->id, b->id, gone, r.reason, out);
	return 0;
}

/* ---------------------------------------------------------------- §6.4 promotion veto */

int arb_policy_promote(const struct arb_policy_promote_in *in, struct arb_policy_promote_out *out)
{
	const char *peer;
	bool fresh, stale;

	if (!in || !out || (unsigned int)in->rec > ARB_POLICY_REC_STALE || bad_role(in->role))
		return -EINVAL;
	peer = in->peer && *in->peer ? in->peer : "?";
	fresh = in->rec == ARB_POLICY_REC_FRESH;
	stale = in->rec == ARB_POLICY_REC_STALE;

	out->ok = false;
	if (in->member && fresh && in->role == ROLE_PRIMARY) {
		snprintf(out->why, sizeof(out->why), "peer %s is still Primary", peer);
	} else if (in->fenced) {
		out->ok = true;
		snprintf(out->why, sizeof(out->why), "peer %s is known fenced", peer);
	} else if (fresh && in->role == ROLE_PRIMARY) {
		/* its arbiter left less than 2 x token ago: the record holds */
		snprintf(out->why, sizeof(out->why), "peer %s is still Primary", peer);
	} else if (fresh) {
		out->ok = true;
		snprintf(out->why, sizeof(out->why), "peer %s is %s", peer,
			 in->role == ROLE_SECONDARY ? "Secondary" : "of Unknown role");
	} else if (stale && in->role == ROLE_SECONDARY) {
		out->ok = true;
		snprintf(out->why, sizeof(out->why), "peer %s was Secondary in its last record",
			 peer);
	} else {
		snprintf(out->why, sizeof(out->why),
			 "peer %s's state is unknown and it was not fenced", peer);
	}
	return 0;
}

/* ---------------------------------------------------------------- §6.5 quorum */

/* The rules are tandemd's own (lib/quorum.c): the arbiter only words them. */
int arb_policy_quorum_promote(enum arb_policy_quorum q, bool quorate, bool force,
			      struct arb_policy_qpromote_out *out)
{
	bool forced;
	int rc;

	if (!out || (unsigned int)q > ARB_POLICY_QUORUM_MAJORITY)
		return -EINVAL;
	rc = quorum_may_promote(q == ARB_POLICY_QUORUM_MAJORITY ? QUORUM_MAJORITY : QUORUM_OFF,
				quorate, force, &forced);
	out->ok = rc == 0;
	out->forced = forced;
	out->exit = rc ? ARB_POLICY_EXIT_NO_QUORUM : 0;
	out->why = rc			       ? "no quorum"
		   : forced		       ? "no quorum, promoted anyway: primary --force"
		   : q == ARB_POLICY_QUORUM_OFF ? "quorum off"
						: "this partition is quorate";
	return 0;
}

int arb_policy_quorum_io(enum arb_policy_quorum q, enum arb_policy_onq onq, bool quorate,
			 enum state_role role, struct arb_policy_io_out *out)
{
	struct quorum_conf c;

	if (!out || (unsigned int)q > ARB_POLICY_QUORUM_MAJORITY ||
	    (unsigned int)onq > ARB_POLICY_ONQ_IO_ERROR || bad_role(role))
		return -EINVAL;
	c.policy = q == ARB_POLICY_QUORUM_MAJORITY ? QUORUM_MAJORITY : QUORUM_OFF;
	c.onq = onq == ARB_POLICY_ONQ_IO_ERROR ? QUORUM_ONQ_IO_ERROR : QUORUM_ONQ_SUSPEND_IO;
	switch (quorum_io(c, quorate, role, false)) {
	case QUORUM_IO_SUSPEND:
		out->io = ARB_POLICY_IO_SUSPEND;
		out->why = "no quorum: new writes wait for it (on-no-quorum suspend-io)";
		break;
	case QUORUM_IO_ERROR:
		out->io = ARB_POLICY_IO_ERROR;
		out->why = "no quorum: new writes fail (on-no-quorum io-error)";
		break;
	default:
		out->io = ARB_POLICY_IO_ON;
		out->why = q == ARB_POLICY_QUORUM_OFF ? "quorum off"
			   : quorate		      ? "this partition is quorate"
						      : "no quorum, but not Primary: nothing to do";
	}
	return 0;
}

int arb_policy_score(enum arb_policy_quorum q, bool quorate, int score, int *out)
{
	if (!out || (unsigned int)q > ARB_POLICY_QUORUM_MAJORITY || score < 0)
		return -EINVAL;
	*out = q == ARB_POLICY_QUORUM_MAJORITY && !quorate ? 0 : score;
	return 0;
}
