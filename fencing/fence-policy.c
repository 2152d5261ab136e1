/*
 * fence-policy: the fence handlers' decisions as pure functions. The
 * rules follow drbd-utils' crm-fence-peer.9.sh (ref/drbd-semantics.md
 * section 7.1), row by row, so that a cluster moving from DRBD keeps its
 * behaviour; fence-policy.h says what each input means.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fence-policy.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
	const char *name;
	enum fence_disk disk;
} disk_names[] = {
	{"Diskless", FENCE_DISK_WORSE},	    {"Attaching", FENCE_DISK_WORSE},
	{"Failed", FENCE_DISK_WORSE},	    {"Negotiating", FENCE_DISK_WORSE},
	{"Inconsistent", FENCE_DISK_WORSE}, {"Outdated", FENCE_DISK_OUTDATED},
	{"DUnknown", FENCE_DISK_DUNKNOWN},  {"Consistent", FENCE_DISK_CONSISTENT},
	{"UpToDate", FENCE_DISK_UPTODATE},
};

enum fence_disk fence_policy_disk(const char *drbd_name)
{
	size_t i;

	if (!drbd_name)
		return FENCE_DISK_NONE;
	for (i = 0; i < ARRAY_SIZE(disk_names); i++)
		if (!strcmp(drbd_name, disk_names[i].name))
			return disk_names[i].disk;
	return FENCE_DISK_NONE;
}

enum fence_disk fence_policy_worse(enum fence_disk a, enum fence_disk b)
{
	return a < b ? a : b;
}

bool fence_policy_connected(const char *conn)
{
	static const char *const up[] = {
		"Connected",   "StartingSyncS", "StartingSyncT", "WFBitMapS",	"WFBitMapT",
		"WFSyncUUID",  "SyncSource",	"SyncTarget",	 "VerifyS",	"VerifyT",
		"PausedSyncS", "PausedSyncT",	"Ahead",	 "Behind",
	};
	size_t i;

	for (i = 0; conn && i < ARRAY_SIZE(up); i++)
		if (!strcmp(conn, up[i]))
			return true;
	return false;
}

const char *fence_policy_peer_name(enum fence_peer p)
{
	switch (p) {
	case FENCE_PEER_REACHABLE:
		return "reachable";
	case FENCE_PEER_FENCED:
		return "fenced (offline and expected down)";
	case FENCE_PEER_UNREACHABLE:
		return "unreachable (offline, not known to be clean)";
	case FENCE_PEER_WAIT:
		return "about to be fenced";
	case FENCE_PEER_UNKNOWN:
		return "unknown (neither reachable nor fenced)";
	case FENCE_PEER_NO_DC:
		return "unknown (no DC)";
	}
	return "?";
}

/* "true", "yes", "on", "1", or a timestamp > 0 (newer Pacemaker). */
static bool truthy(const char *v)
{
	char *end;
	long long n;

	if (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") ||
	    !strcasecmp(v, "y"))
		return true;
	n = strtoll(v, &end, 10);
	return end != v && !*end && n > 0;
}

bool fence_policy_crmd_online(const struct fence_node_state *n)
{
	return n->present && (!strcmp(n->crmd, "online") || truthy(n->crmd));
}

/*
 * crm-fence-peer's guess_if_pacemaker_will_fence() and the first branch
 * of _check_peer_node_reachable(), which in turn follow Pacemaker's
 * determine_online_status_fencing(): an offline node that is not expected
 * down will be fenced, so it is worth waiting for that; with stonith
 * disabled nothing will happen, so there is no point in waiting.
 */
enum fence_peer fence_policy_classify(const struct fence_node_state *n, bool stonith_enabled,
				      bool startup_fencing)
{
	bool online = fence_policy_crmd_online(n);
	bool in_ccm_known = n->present && n->in_ccm[0];
	bool in_ccm_false = in_ccm_known && !truthy(n->in_ccm);
	bool down = n->present && !strcmp(n->expected, "down");
	bool will_fence = false;

	if (stonith_enabled && (n->present || startup_fencing)) {
		will_fence = !in_ccm_known || (n->present && !strcmp(n->join, "banned"));
		if (!(down && in_ccm_false && !online) && (in_ccm_false || !online))
			will_fence = true;
	}
	if (!will_fence && !online)
		return down && in_ccm_false ? FENCE_PEER_FENCED : FENCE_PEER_UNREACHABLE;
	if (online)
		return FENCE_PEER_REACHABLE;
	return FENCE_PEER_WAIT;
}

enum fence_peer fence_policy_timed_out(const struct fence_node_state *n)
{
	return n->present && n->crmd[0] && !fence_policy_crmd_online(n) ? FENCE_PEER_UNREACHABLE
									: FENCE_PEER_UNKNOWN;
}

const char *fence_policy_role(const char *validate_with)
{
	unsigned int major, minor;
	char tail;

	if (validate_with &&
	    sscanf(validate_with, "pacemaker-%u.%u%c", &major, &minor, &tail) == 2 &&
	    (major < 3 || (major == 3 && minor < 7)))
		return "Master";
	return "Promoted";
}

static bool is_promoted(const char *role)
{
	return !strcasecmp(role, "Promoted") || !strcasecmp(role, "Master");
}

bool fence_policy_same_role(const char *a, const char *b)
{
	if (is_promoted(a) || is_promoted(b))
		return is_promoted(a) && is_promoted(b);
	if (!strcasecmp(a, "Unpromoted") || !strcasecmp(a, "Slave"))
		return !strcasecmp(b, "Unpromoted") || !strcasecmp(b, "Slave");
	return !strcasecmp(a, b);
}

/* prefix + name, the name's characters outside [A-Za-z0-9._-] as '_'
 * (XML ids are NCNames; the prefix makes the first character valid). */
static int id_of(const char *prefix, const char *name, char *buf, size_t len)
{
	size_t plen = strlen(prefix), nlen, i;

	if (!name || !*name)
		return -EINVAL;
	nlen = strlen(name);
	if (plen + nlen + 1 > len)
		return -ENAMETOOLONG;
	memcpy(buf, prefix, plen);
	for (i = 0; i < nlen; i++) {
		char ch = name[i];
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';

		buf[plen + i] = ok ? ch : '_';
	}
	buf[plen + nlen] = '\0';
	return 0;
}

int fence_policy_id(const char *res, char *buf, size_t len)
{
	return id_of(FENCE_POLICY_ID_PREFIX, res, buf, len);
}

int fence_policy_expr_id(const char *id, const char *node, char *buf, size_t len)
{
	char prefix[FENCE_POLICY_NAME_MAX + 32];

	if (!id || !*id)
		return -EINVAL;
	if ((size_t)snprintf(prefix, sizeof(prefix), "%s-expr-", id) >= sizeof(prefix))
		return -ENAMETOOLONG;
	return id_of(prefix, node, buf, len);
}

bool fence_policy_allows(const struct fence_constraint *c, const char *name)
{
	unsigned int i;

	if (!c->forbids || !is_promoted(c->role))
		return true; /* it forbids nothing we know of */
	for (i = 0; i < c->n_allowed; i++)
		if (!strcasecmp(c->allowed[i], name))
			return true;
	return false;
}

/* Every node a allows, b allows too. */
static bool subset(const struct fence_constraint *a, const struct fence_constraint *b)
{
	unsigned int i;

	for (i = 0; i < a->n_allowed; i++)
		if (!fence_policy_allows(b, a->allowed[i]))
			return false;
	return true;
}

enum fence_have fence_policy_compare(const struct fence_constraint *have,
				     const struct fence_constraint *want, const char *me)
{
	if (!have->forbids || strcmp(have->rsc, want->rsc) ||
	    !fence_policy_same_role(have->role, want->role))
		return FENCE_HAVE_OTHER;
	if (subset(have, want) && subset(want, have))
		return FENCE_HAVE_SAME;
	if (fence_policy_allows(have, me))
		return FENCE_HAVE_WIDER;
	return FENCE_HAVE_OTHER;
}

static void out_set(struct fence_out *out, enum fence_action action, int exit_code,
		    const char *why)
{
	out->action = action;
	out->exit = exit_code;
	out->why = why;
}

void fence_policy_decide(const struct fence_in *in, struct fence_out *out)
{
	bool consistent = in->disk >= FENCE_DISK_CONSISTENT;
	bool uptodate = in->disk == FENCE_DISK_UPTODATE;

	if (in->pdisk == FENCE_DISK_UPTODATE && uptodate && in->have != FENCE_HAVE_NONE)
		out_set(out, FENCE_ACT_REMOVE, 1,
			"both disks are UpToDate again (the connection is back): "
			"removing the constraint");
	else if (in->pdisk == FENCE_DISK_UPTODATE)
		out_set(out, FENCE_ACT_NOTHING, 1,
			"the peer's disk is UpToDate (the connection is back): nothing to fence");
	else if (in->disk == FENCE_DISK_NONE)
		out_set(out, FENCE_ACT_NOTHING, 1,
			"this node's disk state is not known (is the resource up?): "
			"not placing the constraint");
	else if (in->have == FENCE_HAVE_OTHER)
		out_set(out, FENCE_ACT_NOTHING, 1,
			"a different constraint with this id exists and does not allow this "
			"node: the peer fenced this node first");
	else if (in->have == FENCE_HAVE_SAME)
		out_set(out, FENCE_ACT_NOTHING, 4, "the constraint is already in place");
	else if (!in->quorum)
		out_set(out, FENCE_ACT_NOTHING, 1,
			"this partition has no quorum: not placing the constraint");
	else if (in->pdisk == FENCE_DISK_WORSE && consistent)
		out_set(out, FENCE_ACT_PLACE, 3, "the peer's disk is Inconsistent or worse");
	else if (in->pdisk == FENCE_DISK_OUTDATED && consistent)
		out_set(out, FENCE_ACT_PLACE, 4, "the peer's disk is already Outdated");
	else if (in->peer == FENCE_PEER_REACHABLE && consistent)
		out_set(out, FENCE_ACT_PLACE, 4,
			"the peer is reachable and this node's disk is Consistent or better");
	else if (in->peer == FENCE_PEER_FENCED && uptodate)
		out_set(out, FENCE_ACT_PLACE, 7,
			"the peer is fenced (offline and expected down), this node is UpToDate");
	else if (uptodate)
		out_set(out, FENCE_ACT_PLACE, 5,
			"the peer is not reachable and not known to be fenced; "
			"this node is UpToDate: placing the constraint anyway");
	else if (in->unreachable_is_outdated && consistent)
		out_set(out, FENCE_ACT_PLACE, 5,
			"the peer is not reachable, this node is only Consistent: "
			"--unreachable-peer-is-outdated forces the constraint (data at risk)");
	else if (in->peer == FENCE_PEER_REACHABLE)
		out_set(out, FENCE_ACT_NOTHING, 5,
			"the peer is reachable but this node is worse than Consistent: "
			"not placing the constraint");
	else
		out_set(out, FENCE_ACT_NOTHING, 5,
			"the peer is not reachable and this node is not UpToDate: "
			"not placing the constraint");
}

void fence_policy_unfence(enum fence_disk disk, enum fence_disk pdisk, struct fence_out *out)
{
	if (disk == FENCE_DISK_UPTODATE && pdisk == FENCE_DISK_UPTODATE)
		out_set(out, FENCE_ACT_REMOVE, 0, "this node and the peer are UpToDate");
	else if (disk == FENCE_DISK_NONE)
		out_set(out, FENCE_ACT_NOTHING, 1,
			"this node's disk state is not known: the constraint stays");
	else
		out_set(out, FENCE_ACT_NOTHING, 2,
			"refused: this node and the peer are not both UpToDate, the "
			"constraint stays");
}

enum fence_stale fence_policy_stale(const struct fence_res_state *s)
{
	if (!s->clone_exists)
		return FENCE_STALE_NO_CLONE;
	if (!s->asked)
		return FENCE_STALE_UNKNOWN;
	if (!s->known)
		return FENCE_STALE_NO_RESOURCE;
	if (s->connected && s->disk == FENCE_DISK_UPTODATE && s->pdisk == FENCE_DISK_UPTODATE)
		return FENCE_STALE_SYNCED;
	return FENCE_STALE_NO;
}

const char *fence_policy_stale_text(enum fence_stale s)
{
	switch (s) {
	case FENCE_STALE_NO:
		return "needed (not connected, or not UpToDate/UpToDate)";
	case FENCE_STALE_UNKNOWN:
		return "unknown (tandemd not reachable)";
	case FENCE_STALE_SYNCED:
		return "stale (connected, UpToDate/UpToDate)";
	case FENCE_STALE_NO_RESOURCE:
		return "stale (tandemd has no such resource)";
	case FENCE_STALE_NO_CLONE:
		return "stale (its clone is not in the CIB)";
	}
	return "?";
}
