/*
 * uuidcmp: the sync handshake of DRBD 8.4 (drbd_uuid_compare and
 * drbd_sync_handshake in drbd_receiver.c, described in
 * ref/drbd-semantics.md §5.1 and §5.2), for protocol 96 and later.
 *
 * uuidcmp_compare() walks the rule table in DRBD's order; the first rule
 * that matches gives the answer. Rules 34, 35, 51 and 71 recognise a
 * resync whose start or end one node missed and correct the UUIDs in
 * memory; here the corrected sets are returned for the caller to adopt.
 * uuidcmp_handshake() turns the answer into a decision: disk states,
 * split-brain policies, discard-my-data, and the refusals.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uuidcmp.h"

#define M(u) gi_mask(u)
#define CUR GI_CURRENT
#define BM  GI_BITMAP
#define H0  GI_HISTORY0
#define H1  GI_HISTORY1

/* ---------------------------------------------------------------- compare */

/* Equal currents: a resync one side did not see finish (34-37), a
 * replication hiccup (40), or a crash of a Primary (40, 41). */
static int compare_equal(struct uuidcmp_result *r, const struct uuidcmp_side *self,
			 const struct uuidcmp_side *peer, bool resolve_conflicts)
{
	uint64_t *s = r->self_gi.uuid, *p = r->peer_gi.uuid;
	int rct;

	if (p[BM] == 0 && s[BM] != 0) {
		if (M(s[BM]) == M(p[H0]) && M(s[H0]) == M(p[H1])) {
			/* Was source; the peer finished the resync, we
			 * did not: clear our bitmap UUID into history. */
			gi_clear_bitmap(&r->self_gi);
			r->fix_self = true;
			r->rule = 34;
		} else {
			r->rule = 36;
		}
		return 1;
	}
	if (s[BM] == 0 && p[BM] != 0) {
		if (M(s[H0]) == M(p[BM]) && M(s[H1]) == M(p[H0])) {
			gi_clear_bitmap(&r->peer_gi);
			r->fix_peer = true;
			r->rule = 35;
		} else {
			r->rule = 37;
		}
		return -1;
	}

	/* Roles at crash time: 1 = self was Primary, 2 = the peer was. */
	rct = (self->crashed_primary ? 1 : 0) + (peer->crashed_primary ? 2 : 0);
	r->rule = 40;
	if (rct == 0)
		return 0;
	if (self->primary || peer->primary) {
		/* No rotation although a Primary is present: I/O was frozen. */
		r->rule = 41;
		if (self->primary && peer->primary)
			return -100;
		return self->primary ? 1 : -1;
	}
	if (rct == 1)
		return 1;
	if (rct == 2)
		return -1;
	return resolve_conflicts ? -1 : 1;
}

static int compare(struct uuidcmp_result *r, const struct uuidcmp_side *self,
		   const struct uuidcmp_side *peer, bool resolve_conflicts)
{
	uint64_t *s = r->self_gi.uuid, *p = r->peer_gi.uuid;
	uint64_t sc = M(s[CUR]), pc = M(p[CUR]);
	int i, j;

	r->rule = 10;
	if (sc == GI_JUST_CREATED && pc == GI_JUST_CREATED)
		return 0;
	r->rule = 20;
	if ((sc == GI_JUST_CREATED || sc == 0) && pc != GI_JUST_CREATED)
		return -2;
	r->rule = 30;
	if (sc != GI_JUST_CREATED && (pc == GI_JUST_CREATED || pc == 0))
		return 2;
	if (sc == pc)
		return compare_equal(r, self, peer, resolve_conflicts);

	r->rule = 50;
	if (sc == M(p[BM]))
		return -1;
	r->rule = 51;
	if (sc == M(p[H0]) && M(p[H0]) + GI_NEW_BM_OFFSET == M(p[BM])) {
		/* The peer started a resync as source; our P_SYNC_UUID never
		 * arrived. Undo the peer's rotation. */
		p[BM] = p[H0];
		p[H0] = p[H1];
		r->fix_peer = true;
		return -1;
	}
	r->rule = 60;
	for (i = H0; i <= H1; i++)
		if (sc == M(p[i]))
			return -2;

	r->rule = 70;
	if (M(s[BM]) == pc)
		return 1;
	r->rule = 71;
	if (M(s[H0]) == pc && M(s[H0]) + GI_NEW_BM_OFFSET == M(s[BM])) {
		s[BM] = s[H0];
		s[H0] = s[H1];
		r->fix_self = true;
		return 1;
	}
	r->rule = 80;
	for (i = H0; i <= H1; i++)
		if (M(s[i]) == pc)
			return 2;

	r->rule = 90;
	if (M(s[BM]) == M(p[BM]) && M(s[BM]) != 0)
		return 100;
	r->rule = 100;
	for (i = H0; i <= H1; i++)
		for (j = H0; j <= H1; j++)
			if (M(s[i]) == M(p[j]))
				return -100;
	r->rule = 0;
	return -1000;
}

int uuidcmp_compare(const struct uuidcmp_side *self, const struct uuidcmp_side *peer,
		    bool resolve_conflicts, struct uuidcmp_result *r)
{
	if (!self || !peer || !r)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->self_gi = self->uuids;
	r->peer_gi = peer->uuids;
	r->hg = compare(r, self, peer, resolve_conflicts);
	return 0;
}

/* ---------------------------------------------------------------- names */

static const char *const outcome_names[] = {
	[UUIDCMP_NO_SYNC] = "no-sync",
	[UUIDCMP_SYNC_SOURCE] = "sync-source",
	[UUIDCMP_SYNC_TARGET] = "sync-target",
	[UUIDCMP_DROP] = "drop",
};

static const char *const drop_names[] = {
	[UUIDCMP_DROP_NONE] = "none",
	[UUIDCMP_DROP_UNRELATED] = "unrelated-data",
	[UUIDCMP_DROP_DISCARD_BOTH] = "discard-my-data-on-both",
	[UUIDCMP_DROP_SPLIT_BRAIN] = "split-brain",
	[UUIDCMP_DROP_INCONSISTENT] = "source-inconsistent",
	[UUIDCMP_DROP_RR_CONFLICT] = "rr-conflict",
	[UUIDCMP_DROP_DRY_RUN] = "dry-run",
};

#define NAME(table, i) \
	((unsigned int)(i) < sizeof(table) / sizeof(table[0]) ? table[i] : "?")

const char *uuidcmp_outcome_name(enum uuidcmp_outcome o)
{
	return NAME(outcome_names, o);
}

const char *uuidcmp_drop_name(enum uuidcmp_drop r)
{
	return NAME(drop_names, r);
}

const char *uuidcmp_handler_name(unsigned int bit)
{
	switch (bit) {
	case UUIDCMP_H_INITIAL_SPLIT_BRAIN:
		return "initial-split-brain";
	case UUIDCMP_H_PRI_LOST_AFTER_SB:
		return "pri-lost-after-sb";
	case UUIDCMP_H_SPLIT_BRAIN:
		return "split-brain";
	case UUIDCMP_H_PRI_LOST:
		return "pri-lost";
	default:
		return "?";
	}
}

const char *uuidcmp_rule_text(int rule)
{
	switch (rule) {
	case 0:
		return "unrelated data";
	case 10:
		return "both just created";
	case 20:
		return "this node just created";
	case 30:
		return "the peer just created";
	case 34:
		return "was SyncSource, missed the resync finished event, corrected myself";
	case 35:
		return "was SyncTarget, peer missed the resync finished event, corrected peer";
	case 36:
		return "was SyncSource (peer failed to write sync_uuid)";
	case 37:
		return "was SyncTarget (failed to write sync_uuid)";
	case 40:
		return "same current UUID, no bitmap UUIDs";
	case 41:
		return "same current UUID, a crashed Primary, a Primary present";
	case 50:
		return "own current is the peer's bitmap UUID";
	case 51:
		return "Lost last syncUUID packet, corrected";
	case 60:
		return "own current is in the peer's history";
	case 70:
		return "own bitmap UUID is the peer's current";
	case 71:
		return "Last syncUUID did not get through, corrected";
	case 80:
		return "the peer's current is in own history";
	case 90:
		return "same bitmap UUID: both diverged from one generation";
	case 100:
		return "only the histories match";
	default:
		return "?";
	}
}

enum state_conn uuidcmp_next_conn(const struct uuidcmp_decision *d)
{
	switch (d->outcome) {
	case UUIDCMP_NO_SYNC:
		return CONN_CONNECTED;
	case UUIDCMP_SYNC_SOURCE:
		return CONN_WFBITMAPS;
	case UUIDCMP_SYNC_TARGET:
		return CONN_WFBITMAPT;
	default:
		return CONN_DISCONNECTING;
	}
}

/* ---------------------------------------------------------------- log */

static void say(struct uuidcmp_decision *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(struct uuidcmp_decision *d, const char *fmt, ...)
{
	size_t len = strlen(d->log);
	va_list ap;

	if (len + 2 >= sizeof(d->log))
		return;
	va_start(ap, fmt);
	vsnprintf(d->log + len, sizeof(d->log) - len - 1, fmt, ap);
	va_end(ap);
	len = strlen(d->log);
	d->log[len] = '\n';
	d->log[len + 1] = '\0';
}

static unsigned int side_flags(const struct uuidcmp_side *s)
{
	return (s->discard_my_data ? 1u : 0) | (s->crashed_primary ? 2u : 0) |
	       (s->inconsistent ? 4u : 0) | (s->skip_initial_sync ? 8u : 0);
}

static void dump(struct uuidcmp_decision *d, const char *who, const struct gi *g,
		 const struct uuidcmp_side *s)
{
	say(d, "%s %016llX:%016llX:%016llX:%016llX bits:%llu flags:%X", who,
	    (unsigned long long)g->uuid[CUR], (unsigned long long)g->uuid[BM],
	    (unsigned long long)g->uuid[H0], (unsigned long long)g->uuid[H1],
	    (unsigned long long)s->bits, side_flags(s));
}

/* ---------------------------------------------------------------- handshake */

static int drop(struct uuidcmp_decision *d, enum uuidcmp_drop why, int hg)
{
	d->outcome = UUIDCMP_DROP;
	d->drop = why;
	d->hg = hg;
	return 0;
}

/* A disk still Negotiating counts as the UUID flags say. */
static enum state_disk effective(enum state_disk disk, const struct uuidcmp_side *s)
{
	if (disk != DISK_NEGOTIATING)
		return disk;
	return s->inconsistent ? DISK_INCONSISTENT : DISK_CONSISTENT;
}

static void advise_split_brain(struct uuidcmp_decision *d, const char *res)
{
	say(d, "To recover, pick the node whose changes since the split are to be "
	       "discarded and run there: tandemadm disconnect %s; tandemadm secondary %s; "
	       "tandemadm connect --discard-my-data %s",
	    res, res, res);
	say(d, "then on the other node, if it is StandAlone: tandemadm connect %s", res);
}

/* Step 4: the after-sb policies, by the number of Primaries now; *hg is
 * 100, or -100 with always-asbp. */
static int apply_asb(const struct uuidcmp_input *in, struct uuidcmp_decision *d, int *hg)
{
	struct sbpolicy_input si = {
		.self_primary = in->self.primary,
		.peer_primary = in->peer.primary,
		.self_was_primary = (d->cmp.self_gi.uuid[BM] & 1) != 0,
		.peer_was_primary = (d->cmp.peer_gi.uuid[BM] & 1) != 0,
		.ch_self = in->self.bits,
		.ch_peer = in->peer.bits,
		.resolve_conflicts = in->resolve_conflicts,
		.can_demote = in->can_demote,
		.self_name = in->self_name,
		.peer_name = in->peer_name,
	};
	struct sbpolicy_result sr;
	bool forced = *hg == -100;

	if (sbpolicy_decide(&in->asb, &si, &sr) < 0)
		return -EINVAL;
	say(d, "%s", sr.reason);
	if (sr.config_error)
		say(d, "Configuration error.");
	if (sr.call_pri_lost_after_sb)
		d->handlers |= UUIDCMP_H_PRI_LOST_AFTER_SB;
	if (sr.demote) {
		d->demote = true;
		say(d, "Giving up the Primary role.");
	}
	*hg = sr.hg;
	if (abs(sr.hg) >= 100)
		return 0;
	say(d, "Split-Brain detected, %d primaries, automatically solved. Sync from %s node",
	    sr.primaries, sr.hg < 0 ? "peer" : "this");
	if (forced) {
		say(d, "Doing a full sync, since UUIDs were ambiguous.");
		*hg *= 2;
	}
	return 0;
}

/* Steps 7 to 10, once the direction is known. */
static int finish(const struct uuidcmp_input *in, struct uuidcmp_decision *d, int hg,
		  enum state_disk mydisk)
{
	if (hg > 0 && mydisk <= DISK_INCONSISTENT) {
		say(d, "I shall become SyncSource, but I am inconsistent!");
		return drop(d, UUIDCMP_DROP_INCONSISTENT, hg);
	}
	/* DRBD looks at the real disk state here, not a negotiated one. */
	if (hg < 0 && in->self.primary && !d->demote && in->disk >= DISK_CONSISTENT) {
		if (in->rr_conflict != SBPOLICY_VIOLENTLY) {
			if (in->rr_conflict == SBPOLICY_CALL_HELPER)
				d->handlers |= UUIDCMP_H_PRI_LOST;
			say(d, "I shall become SyncTarget, but I am primary!");
			return drop(d, UUIDCMP_DROP_RR_CONFLICT, hg);
		}
		say(d, "Becoming SyncTarget, violating the stable-data assumption");
	}
	if (in->dry_run) {
		if (hg == 0)
			say(d, "dry-run connect: No resync, would become Connected immediately.");
		else
			say(d, "dry-run connect: Would become %s, doing a %s resync.",
			    hg > 0 ? "SyncSource" : "SyncTarget",
			    abs(hg) >= 2 ? "full" : "bit-map based");
		return drop(d, UUIDCMP_DROP_DRY_RUN, hg);
	}
	d->hg = hg;
	if (abs(hg) >= 2) {
		d->full_sync = true;
		say(d, "Writing the whole bitmap, full sync required after the sync handshake.");
	}
	if (hg > 0) {
		d->outcome = UUIDCMP_SYNC_SOURCE;
	} else if (hg < 0) {
		d->outcome = UUIDCMP_SYNC_TARGET;
	} else {
		d->outcome = UUIDCMP_NO_SYNC;
		if (in->self.bits)
			say(d, "No resync, but %llu bits in bitmap!",
			    (unsigned long long)in->self.bits);
	}
	return 0;
}

static void log_fixups(struct uuidcmp_decision *d, const struct uuidcmp_input *in)
{
	const struct uuidcmp_result *c = &d->cmp;

	if (c->rule >= 34 && c->rule <= 37)
		say(d, "%s", uuidcmp_rule_text(c->rule));
	if (c->rule == 41 && c->hg == -100)
		say(d, "Equivalent unrotated UUIDs, but both are primary. Can not resolve this.");
	if (c->rule == 51 || c->rule == 71)
		say(d, "%s:", uuidcmp_rule_text(c->rule));
	if (c->fix_self)
		dump(d, "self", &c->self_gi, &in->self);
	if (c->fix_peer)
		dump(d, "peer", &c->peer_gi, &in->peer);
}

static bool rr_conflict_valid(enum sbpolicy p)
{
	return p == SBPOLICY_DISCONNECT || p == SBPOLICY_CALL_HELPER || p == SBPOLICY_VIOLENTLY;
}

int uuidcmp_handshake(const struct uuidcmp_input *in, struct uuidcmp_decision *d)
{
	const char *res;
	enum state_disk mydisk, peerdisk;
	int hg;

	if (!in || !d || !rr_conflict_valid(in->rr_conflict))
		return -EINVAL;
	memset(d, 0, sizeof(*d));
	res = in->resource ? in->resource : "RES";
	say(d, "sync handshake:");
	dump(d, "self", &in->self.uuids, &in->self);
	dump(d, "peer", &in->peer.uuids, &in->peer);

	/* Sent in P_PROTOCOL, so refused before the UUIDs are compared. */
	if (in->self.discard_my_data && in->peer.discard_my_data) {
		say(d, "incompatible discard-my-data settings");
		say(d, "Both nodes asked to discard their own data; connect one of them "
		       "without --discard-my-data.");
		return drop(d, UUIDCMP_DROP_DISCARD_BOTH, 0);
	}

	uuidcmp_compare(&in->self, &in->peer, in->resolve_conflicts, &d->cmp);
	hg = d->cmp.hg;
	say(d, "uuid_compare()=%d by rule %d", hg, d->cmp.rule);
	log_fixups(d, in);

	if (hg == -1000) {
		const uint64_t *s = in->self.uuids.uuid, *p = in->peer.uuids.uuid;

		say(d, "Unrelated data, aborting!");
		say(d, "This node's UUIDs %016llX:%016llX:%016llX:%016llX and the peer's "
		       "%016llX:%016llX:%016llX:%016llX share no generation.",
		    (unsigned long long)s[CUR], (unsigned long long)s[BM],
		    (unsigned long long)s[H0], (unsigned long long)s[H1],
		    (unsigned long long)p[CUR], (unsigned long long)p[BM],
		    (unsigned long long)p[H0], (unsigned long long)p[H1]);
		say(d, "One side's data must be given up: on that node run 'tandemadm create-md "
		       "%s' (new metadata) or 'tandemadm invalidate %s', then connect again.",
		    res, res);
		return drop(d, UUIDCMP_DROP_UNRELATED, hg);
	}

	mydisk = effective(in->disk, &in->self);
	peerdisk = effective(in->pdsk, &in->peer);
	if ((mydisk == DISK_INCONSISTENT && peerdisk > DISK_INCONSISTENT) ||
	    (peerdisk == DISK_INCONSISTENT && mydisk > DISK_INCONSISTENT)) {
		bool full = hg == -100 || abs(hg) == 2;

		hg = mydisk > DISK_INCONSISTENT ? 1 : -1;
		if (full)
			hg *= 2;
		say(d, "Becoming sync %s due to disk states.", hg > 0 ? "source" : "target");
	}

	if (abs(hg) == 100) {
		d->split_brain = true;
		d->handlers |= UUIDCMP_H_INITIAL_SPLIT_BRAIN;
	}
	if ((hg == 100 || (hg == -100 && in->always_asbp)) && apply_asb(in, d, &hg) < 0)
		return -EINVAL;
	if (hg == -100) {
		if (in->self.discard_my_data)
			hg = -1;
		else if (in->peer.discard_my_data)
			hg = 1;
		if (hg != -100)
			say(d, "Split-Brain detected, manually solved. Sync from %s node",
			    hg < 0 ? "peer" : "this");
	}
	if (hg == -100) {
		say(d, "Split-Brain detected but unresolved, dropping connection!");
		advise_split_brain(d, res);
		d->handlers |= UUIDCMP_H_SPLIT_BRAIN;
		return drop(d, UUIDCMP_DROP_SPLIT_BRAIN, hg);
	}
	return finish(in, d, hg, mydisk);
}
