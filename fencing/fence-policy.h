/*
 * fence-policy: the decisions of the fence handlers as pure functions
 * (ref/drbd-semantics.md section 7, crm-fence-peer.9.sh's rules): how
 * Pacemaker's node_state entry of the peer reads (reachable, fenced,
 * unreachable, wait), which exit code 3/4/5/7 (or 1) tandem-fence-peer
 * returns and whether it places the constraint, when tandem-unfence-peer
 * may remove it, and when `tandemadm fence-constraints` calls one stale.
 * No I/O here: fence-cib.c reads the CIB, fence-ctl.c asks tandemd.
 */
#ifndef TANDEM_FENCE_POLICY_H
#define TANDEM_FENCE_POLICY_H

#include <stdbool.h>
#include <stddef.h>

/* The constraint id is this prefix and the resource name. */
#define FENCE_POLICY_ID_PREFIX "tandem-fence-"
#define FENCE_POLICY_MAX_NODES 8
#define FENCE_POLICY_NAME_MAX  256

/* DRBD's disk states, folded to what the rules need; ordered like DRBD's
 * (worse < better), FENCE_DISK_NONE below all: not known at all. */
enum fence_disk {
	FENCE_DISK_NONE,     /* no volume, or a name we do not know */
	FENCE_DISK_WORSE,    /* Diskless, Attaching, Failed, Negotiating, Inconsistent */
	FENCE_DISK_OUTDATED,
	FENCE_DISK_DUNKNOWN,
	FENCE_DISK_CONSISTENT,
	FENCE_DISK_UPTODATE,
};

/* The peer as Pacemaker sees it. */
enum fence_peer {
	FENCE_PEER_REACHABLE,   /* member, controller online (and answering) */
	FENCE_PEER_FENCED,      /* offline and expected down: fenced or stopped cleanly */
	FENCE_PEER_UNREACHABLE, /* offline, not known to be clean */
	FENCE_PEER_WAIT,        /* Pacemaker is about to fence it, or unsure: poll again */
	FENCE_PEER_UNKNOWN,     /* still not clear when the timeout ran out */
	FENCE_PEER_NO_DC,       /* no DC answered within the DC timeout */
};

/* A node_state entry of the status section (absent: present = false).
 * Pacemaker 2.1.5 writes in_ccm="true|false" and crmd="online|offline";
 * later versions write timestamps, which count as true/online if > 0. */
struct fence_node_state {
	bool present;
	char in_ccm[32];
	char crmd[32];
	char join[32];
	char expected[32];
};

/* The shape of a fence constraint, as placed or as read back. */
struct fence_constraint {
	char rsc[FENCE_POLICY_NAME_MAX];  /* the promotable clone */
	char role[16];                    /* Promoted or Master */
	bool forbids;       /* one rule, score -INFINITY, only "#uname ne" terms ANDed */
	unsigned int n_allowed;
	char allowed[FENCE_POLICY_MAX_NODES][FENCE_POLICY_NAME_MAX];
};

/* An existing constraint with our id, compared to the one we want. */
enum fence_have {
	FENCE_HAVE_NONE,  /* no such constraint */
	FENCE_HAVE_SAME,  /* the same meaning (Master == Promoted, any order) */
	FENCE_HAVE_WIDER, /* our shape, allows this node and others: restrict it */
	FENCE_HAVE_OTHER, /* anything else, e.g. it allows only the peer */
};

enum fence_action {
	FENCE_ACT_NOTHING,
	FENCE_ACT_PLACE,  /* create, or restrict a WIDER one */
	FENCE_ACT_REMOVE, /* both sides are UpToDate again */
};

struct fence_in {
	enum fence_peer peer;  /* after polling: not WAIT */
	enum fence_disk disk;  /* this node, worst volume */
	enum fence_disk pdisk; /* the peer's, as tandemd knows it, worst volume */
	bool quorum;
	bool unreachable_is_outdated; /* --unreachable-peer-is-outdated */
	enum fence_have have;
};

struct fence_out {
	enum fence_action action;
	int exit;        /* the handler's exit code if the action succeeds */
	const char *why; /* one line for the log */
};

/* Why `tandemadm fence-constraints` keeps or removes a constraint. */
enum fence_stale {
	FENCE_STALE_NO,          /* still protects: disconnected or not UpToDate */
	FENCE_STALE_UNKNOWN,     /* tandemd cannot be asked: keep */
	FENCE_STALE_SYNCED,      /* connected, UpToDate/UpToDate */
	FENCE_STALE_NO_RESOURCE, /* tandemd has no such resource */
	FENCE_STALE_NO_CLONE,    /* the constraint's clone is not in the CIB */
};

struct fence_res_state {
	bool clone_exists; /* the constraint's rsc is a resource of the CIB */
	bool asked;        /* tandemd answered */
	bool known;        /* ... and has the resource */
	bool connected;
	enum fence_disk disk, pdisk;
};

/* "UpToDate" -> FENCE_DISK_UPTODATE etc.; NULL or unknown -> NONE. */
enum fence_disk fence_policy_disk(const char *drbd_name);
/* The worse of two (for the volumes of a resource). */
enum fence_disk fence_policy_worse(enum fence_disk a, enum fence_disk b);
/* Connection state names from Connected on (sync, verify, Ahead/Behind). */
bool fence_policy_connected(const char *conn);
const char *fence_policy_peer_name(enum fence_peer p);

/* The peer's state from its node_state entry and the cluster options. */
enum fence_peer fence_policy_classify(const struct fence_node_state *n, bool stonith_enabled,
				      bool startup_fencing);
/* What a peer still in FENCE_PEER_WAIT (or online but not answering) is
 * when the timeout runs out: UNREACHABLE if its controller is recorded
 * offline, else UNKNOWN. */
enum fence_peer fence_policy_timed_out(const struct fence_node_state *n);
/* Is the controller of the node online as its node_state says? */
bool fence_policy_crmd_online(const struct fence_node_state *n);

/* The role spelling for the CIB's validate-with: "Master" before
 * pacemaker-3.7, "Promoted" from there (and for none/next/unknown). */
const char *fence_policy_role(const char *validate_with);
/* Promoted == Master, Unpromoted == Slave. */
bool fence_policy_same_role(const char *a, const char *b);
/* FENCE_POLICY_ID_PREFIX + res, characters outside [A-Za-z0-9._-]
 * replaced by '_'. -ENAMETOOLONG if it does not fit, -EINVAL if empty. */
int fence_policy_id(const char *res, char *buf, size_t len);

/* The id of the expression that allows node `node` in constraint `id`:
 * "ID-expr-NODE", the node name sanitized as in fence_policy_id().
 * -ENAMETOOLONG, -EINVAL as there. */
int fence_policy_expr_id(const char *id, const char *node, char *buf, size_t len);

enum fence_have fence_policy_compare(const struct fence_constraint *have,
				     const struct fence_constraint *want, const char *me);
/* Does the constraint allow the Promoted role on node `name`? */
bool fence_policy_allows(const struct fence_constraint *c, const char *name);

void fence_policy_decide(const struct fence_in *in, struct fence_out *out);
/* Unfence: remove only when this node's and the peer's disks are all
 * UpToDate (exit 0); else keep it: exit 2 (refused), or 1 when this
 * node's state is not known at all. */
void fence_policy_unfence(enum fence_disk disk, enum fence_disk pdisk, struct fence_out *out);
enum fence_stale fence_policy_stale(const struct fence_res_state *s);
const char *fence_policy_stale_text(enum fence_stale s);
static inline bool fence_policy_is_stale(enum fence_stale s)
{
	return s >= FENCE_STALE_SYNCED;
}

#endif
