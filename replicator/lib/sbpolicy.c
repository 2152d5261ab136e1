/*
 * sbpolicy: the after-sb-0pri/1pri/2pri split-brain recovery policies of
 * DRBD 8.4 (drbd_asb_recover_0p/1p/2p in drbd_receiver.c, described in
 * ref/drbd-semantics.md §6), and the parsing of their config words.
 *
 * The 0pri policy is the core: the 1pri and 2pri policies that recover
 * automatically (consensus, violently-as0p, call-pri-lost-after-sb) run
 * it and then accept, reject or act on its answer. Both nodes run the
 * same function with the roles swapped and the tie-break bit inverted, so
 * they reach opposite answers (one source, one target) or both give up.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sbpolicy.h"

#define NODE_PREFIX "discard-node-"

static const char *const names[] = {
	[SBPOLICY_DISCONNECT] = "disconnect",
	[SBPOLICY_DISCARD_YOUNGER_PRI] = "discard-younger-primary",
	[SBPOLICY_DISCARD_OLDER_PRI] = "discard-older-primary",
	[SBPOLICY_DISCARD_ZERO_CHG] = "discard-zero-changes",
	[SBPOLICY_DISCARD_LEAST_CHG] = "discard-least-changes",
	[SBPOLICY_DISCARD_LOCAL] = "discard-local",
	[SBPOLICY_DISCARD_REMOTE] = "discard-remote",
	[SBPOLICY_CONSENSUS] = "consensus",
	[SBPOLICY_DISCARD_SECONDARY] = "discard-secondary",
	[SBPOLICY_CALL_HELPER] = "call-pri-lost-after-sb",
	[SBPOLICY_VIOLENTLY] = "violently-as0p",
	[SBPOLICY_DISCARD_NODE] = "discard-node",
};

#define N_POLICIES (sizeof(names) / sizeof(names[0]))
#define BIT(p) (1u << (p))

/* The values each option accepts (discard-node-NAME is matched apart). */
static const unsigned int allowed[] = {
	[SBPOLICY_0PRI] = BIT(SBPOLICY_DISCONNECT) | BIT(SBPOLICY_DISCARD_YOUNGER_PRI) |
			  BIT(SBPOLICY_DISCARD_OLDER_PRI) | BIT(SBPOLICY_DISCARD_ZERO_CHG) |
			  BIT(SBPOLICY_DISCARD_LEAST_CHG) | BIT(SBPOLICY_DISCARD_LOCAL) |
			  BIT(SBPOLICY_DISCARD_REMOTE) | BIT(SBPOLICY_DISCARD_NODE),
	[SBPOLICY_1PRI] = BIT(SBPOLICY_DISCONNECT) | BIT(SBPOLICY_CONSENSUS) |
			  BIT(SBPOLICY_DISCARD_SECONDARY) | BIT(SBPOLICY_CALL_HELPER) |
			  BIT(SBPOLICY_VIOLENTLY),
	[SBPOLICY_2PRI] = BIT(SBPOLICY_DISCONNECT) | BIT(SBPOLICY_CALL_HELPER) |
			  BIT(SBPOLICY_VIOLENTLY),
	[SBPOLICY_RR_CONFLICT] = BIT(SBPOLICY_DISCONNECT) | BIT(SBPOLICY_CALL_HELPER) |
				 BIT(SBPOLICY_VIOLENTLY),
};

static const char *const slot_names[] = {
	[SBPOLICY_0PRI] = "after-sb-0pri",
	[SBPOLICY_1PRI] = "after-sb-1pri",
	[SBPOLICY_2PRI] = "after-sb-2pri",
	[SBPOLICY_RR_CONFLICT] = "rr-conflict",
};

#define N_SLOTS (sizeof(slot_names) / sizeof(slot_names[0]))

void sbpolicy_conf_init(struct sbpolicy_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->after_sb_0pri = SBPOLICY_DISCONNECT;
	c->after_sb_1pri = SBPOLICY_DISCONNECT;
	c->after_sb_2pri = SBPOLICY_DISCONNECT;
}

const char *sbpolicy_name(enum sbpolicy p, enum sbpolicy_slot slot)
{
	if ((unsigned int)p >= N_POLICIES)
		return "?";
	if (slot == SBPOLICY_RR_CONFLICT && p == SBPOLICY_CALL_HELPER)
		return "call-pri-lost";
	if (slot == SBPOLICY_RR_CONFLICT && p == SBPOLICY_VIOLENTLY)
		return "violently";
	return names[p];
}

const char *sbpolicy_slot_name(enum sbpolicy_slot slot)
{
	return (unsigned int)slot < N_SLOTS ? slot_names[slot] : "?";
}

int sbpolicy_parse(enum sbpolicy_slot slot, const char *text, enum sbpolicy *p, char *node,
		   size_t nodelen)
{
	const size_t plen = strlen(NODE_PREFIX);
	unsigned int i;

	if (!text || !p || (unsigned int)slot >= N_SLOTS)
		return -EINVAL;
	for (i = 0; i < N_POLICIES; i++) {
		if (i == SBPOLICY_DISCARD_NODE || !(allowed[slot] & BIT(i)))
			continue;
		if (!strcmp(text, sbpolicy_name((enum sbpolicy)i, slot))) {
			*p = (enum sbpolicy)i;
			return 0;
		}
	}
	if (slot != SBPOLICY_0PRI || strncmp(text, NODE_PREFIX, plen) || text[plen] == '\0')
		return -EINVAL;
	if (!node || nodelen == 0)
		return -EINVAL;
	if (strlen(text + plen) >= nodelen)
		return -ENAMETOOLONG;
	strcpy(node, text + plen);
	*p = SBPOLICY_DISCARD_NODE;
	return 0;
}

int sbpolicy_parse_0pri(const char *text, enum sbpolicy *p, char *node, size_t nodelen)
{
	return sbpolicy_parse(SBPOLICY_0PRI, text, p, node, nodelen);
}

int sbpolicy_parse_1pri(const char *text, enum sbpolicy *p)
{
	return sbpolicy_parse(SBPOLICY_1PRI, text, p, NULL, 0);
}

int sbpolicy_parse_2pri(const char *text, enum sbpolicy *p)
{
	return sbpolicy_parse(SBPOLICY_2PRI, text, p, NULL, 0);
}

int sbpolicy_parse_rr_conflict(const char *text, enum sbpolicy *p)
{
	return sbpolicy_parse(SBPOLICY_RR_CONFLICT, text, p, NULL, 0);
}

enum sbpolicy sbpolicy_localize(enum sbpolicy p, const char *node, const char *self_name)
{
	if (p != SBPOLICY_DISCARD_NODE || !node || !self_name)
		return p;
	return strcmp(node, self_name) ? SBPOLICY_DISCARD_REMOTE : SBPOLICY_DISCARD_LOCAL;
}

enum sbpolicy sbpolicy_mirror(enum sbpolicy peer)
{
	if (peer == SBPOLICY_DISCARD_REMOTE)
		return SBPOLICY_DISCARD_LOCAL;
	if (peer == SBPOLICY_DISCARD_LOCAL)
		return SBPOLICY_DISCARD_REMOTE;
	return peer;
}

/* ---------------------------------------------------------------- reasons */

static void why(struct sbpolicy_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void why(struct sbpolicy_result *r, const char *fmt, ...)
{
	size_t len = strlen(r->reason);
	va_list ap;

	if (len + 1 >= sizeof(r->reason))
		return;
	va_start(ap, fmt);
	vsnprintf(r->reason + len, sizeof(r->reason) - len, fmt, ap);
	va_end(ap);
}

static int verdict(struct sbpolicy_result *r, int hg)
{
	if (hg == 1)
		why(r, ": the peer's changes are discarded");
	else if (hg == -1)
		why(r, ": this node's changes are discarded");
	return hg;
}

static int config_error(struct sbpolicy_result *r, enum sbpolicy_slot slot)
{
	r->config_error = true;
	why(r, "Configuration error (not an %s policy)", sbpolicy_slot_name(slot));
	return -100;
}

static int tie_break(const struct sbpolicy_input *in, struct sbpolicy_result *r)
{
	why(r, ", tie broken by the resolve-conflicts bit (%s)",
	    in->resolve_conflicts ? "set" : "clear");
	return verdict(r, in->resolve_conflicts ? -1 : 1);
}

/* ---------------------------------------------------------------- policies */

static int by_primary_age(const struct sbpolicy_input *in, enum sbpolicy p,
			  struct sbpolicy_result *r)
{
	bool self_loses;

	if (in->self_was_primary == in->peer_was_primary) {
		why(r, "%s Primary at the split, no decision; using discard-least-changes "
		       "instead: ",
		    in->self_was_primary ? "both were" : "neither was");
		return 0;
	}
	/* The one that was not Primary at the split became Primary later. */
	self_loses = p == SBPOLICY_DISCARD_YOUNGER_PRI ? !in->self_was_primary
						       : in->self_was_primary;
	why(r, "%s was Primary at the split, %s became Primary later",
	    in->self_was_primary ? "this node" : "the peer",
	    in->self_was_primary ? "the peer" : "this node");
	return verdict(r, self_loses ? -1 : 1);
}

static int by_zero_changes(const struct sbpolicy_input *in, struct sbpolicy_result *r)
{
	if (in->ch_self == 0 && in->ch_peer == 0) {
		why(r, "neither node changed any block");
		return tie_break(in, r);
	}
	if (in->ch_peer == 0) {
		why(r, "the peer changed no block");
		return verdict(r, 1);
	}
	if (in->ch_self == 0) {
		why(r, "this node changed no block");
		return verdict(r, -1);
	}
	return 0;
}

static int by_least_changes(const struct sbpolicy_input *in, struct sbpolicy_result *r)
{
	why(r, "this node changed %llu blocks, the peer %llu", (unsigned long long)in->ch_self,
	    (unsigned long long)in->ch_peer);
	if (in->ch_self < in->ch_peer)
		return verdict(r, -1);
	if (in->ch_self > in->ch_peer)
		return verdict(r, 1);
	return tie_break(in, r);
}

static int by_node(const struct sbpolicy_conf *c, const struct sbpolicy_input *in,
		   struct sbpolicy_result *r)
{
	if (c->node[0] && in->self_name && !strcmp(c->node, in->self_name)) {
		why(r, "this node is %s", c->node);
		return verdict(r, -1);
	}
	if (c->node[0] && in->self_name && (!in->peer_name || !strcmp(c->node, in->peer_name))) {
		why(r, "the peer is %s", c->node);
		return verdict(r, 1);
	}
	return config_error(r, SBPOLICY_0PRI);
}

/* discard-younger/older-primary fall back to discard-zero-changes, and
 * all three then to discard-least-changes (zero-changes itself gives up). */
static int by_age_then_changes(const struct sbpolicy_input *in, enum sbpolicy p,
			       struct sbpolicy_result *r)
{
	int hg = 0;

	if (p != SBPOLICY_DISCARD_ZERO_CHG)
		hg = by_primary_age(in, p, r);
	if (hg == 0)
		hg = by_zero_changes(in, r);
	if (hg != 0)
		return hg;
	if (p == SBPOLICY_DISCARD_ZERO_CHG) {
		why(r, "both nodes changed blocks (%llu here, %llu on the peer)",
		    (unsigned long long)in->ch_self, (unsigned long long)in->ch_peer);
		return -100;
	}
	return by_least_changes(in, r);
}

/* drbd_asb_recover_0p: 1, -1 or -100. */
static int recover_0p(const struct sbpolicy_conf *c, const struct sbpolicy_input *in,
		      struct sbpolicy_result *r)
{
	enum sbpolicy p = c->after_sb_0pri;

	if (p == SBPOLICY_DISCARD_NODE)
		why(r, "after-sb-0pri " NODE_PREFIX "%s: ", c->node);
	else
		why(r, "after-sb-0pri %s: ", sbpolicy_name(p, SBPOLICY_0PRI));
	switch (p) {
	case SBPOLICY_DISCONNECT:
		why(r, "no automatic recovery");
		return -100;
	case SBPOLICY_DISCARD_YOUNGER_PRI:
	case SBPOLICY_DISCARD_OLDER_PRI:
	case SBPOLICY_DISCARD_ZERO_CHG:
		return by_age_then_changes(in, p, r);
	case SBPOLICY_DISCARD_LEAST_CHG:
		return by_least_changes(in, r);
	case SBPOLICY_DISCARD_LOCAL:
		why(r, "discard this node's data");
		return -1;
	case SBPOLICY_DISCARD_REMOTE:
		why(r, "discard the peer's data");
		return 1;
	case SBPOLICY_DISCARD_NODE:
		return by_node(c, in, r);
	default:
		return config_error(r, SBPOLICY_0PRI);
	}
}

/* call-pri-lost-after-sb: the 0pri answer; a Primary that must lose its
 * data gives up the role, else the pri-lost-after-sb handler runs. */
static int call_helper(const struct sbpolicy_conf *c, const struct sbpolicy_input *in,
		       struct sbpolicy_result *r)
{
	int hg = recover_0p(c, in, r);

	if (hg != -1 || !in->self_primary)
		return hg;
	if (in->can_demote) {
		r->demote = true;
		why(r, "; this node gives up the Primary role");
		return -1;
	}
	r->call_pri_lost_after_sb = true;
	why(r, "; this node cannot give up the Primary role: pri-lost-after-sb");
	return -100;
}

/* drbd_asb_recover_1p */
static int recover_1p(const struct sbpolicy_conf *c, const struct sbpolicy_input *in,
		      struct sbpolicy_result *r)
{
	int hg;

	switch (c->after_sb_1pri) {
	case SBPOLICY_DISCONNECT:
		why(r, "no automatic recovery");
		return -100;
	case SBPOLICY_CONSENSUS:
		hg = recover_0p(c, in, r);
		if (hg == -1 && !in->self_primary)
			return -1;
		if (hg == 1 && in->self_primary)
			return 1;
		if (hg != -100)
			why(r, "; no consensus: that would discard the Primary's data");
		return -100;
	case SBPOLICY_VIOLENTLY:
		return recover_0p(c, in, r);
	case SBPOLICY_DISCARD_SECONDARY:
		why(r, "this node is %s", in->self_primary ? "the Primary" : "the Secondary");
		return verdict(r, in->self_primary ? 1 : -1);
	case SBPOLICY_CALL_HELPER:
		return call_helper(c, in, r);
	default:
		return config_error(r, SBPOLICY_1PRI);
	}
}

/* drbd_asb_recover_2p */
static int recover_2p(const struct sbpolicy_conf *c, const struct sbpolicy_input *in,
		      struct sbpolicy_result *r)
{
	switch (c->after_sb_2pri) {
	case SBPOLICY_DISCONNECT:
		why(r, "no automatic recovery");
		return -100;
	case SBPOLICY_VIOLENTLY:
		return recover_0p(c, in, r);
	case SBPOLICY_CALL_HELPER:
		return call_helper(c, in, r);
	default:
		return config_error(r, SBPOLICY_2PRI);
	}
}

int sbpolicy_decide(const struct sbpolicy_conf *c, const struct sbpolicy_input *in,
		    struct sbpolicy_result *r)
{
	enum sbpolicy_slot slot;

	if (!c || !in || !r)
		return -EINVAL;
	if ((unsigned int)c->after_sb_0pri >= N_POLICIES ||
	    (unsigned int)c->after_sb_1pri >= N_POLICIES ||
	    (unsigned int)c->after_sb_2pri >= N_POLICIES)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->primaries = (in->self_primary ? 1 : 0) + (in->peer_primary ? 1 : 0);
	slot = (enum sbpolicy_slot)r->primaries;
	switch (slot) {
	case SBPOLICY_0PRI:
		r->policy = c->after_sb_0pri;
		r->hg = recover_0p(c, in, r);
		break;
	case SBPOLICY_1PRI:
		r->policy = c->after_sb_1pri;
		why(r, "after-sb-1pri %s: ", sbpolicy_name(r->policy, slot));
		r->hg = recover_1p(c, in, r);
		break;
	default:
		r->policy = c->after_sb_2pri;
		why(r, "after-sb-2pri %s: ", sbpolicy_name(r->policy, slot));
		r->hg = recover_2p(c, in, r);
		break;
	}
	return 0;
}
