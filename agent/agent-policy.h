/*
 * agent-policy: the decisions of the OCF agent ocf:tandem:tandem as pure
 * functions of what tandemd's status says and of the agent's parameters
 * and environment (doc/ocf-agent.md): the promotion score from the data
 * quality (ref/drbd-semantics.md §11.3), the monitor result, why a
 * promotion must be refused, which location constraints forbid promotion
 * here, what a notification asks for, when a Secondary outdates itself,
 * how long start waits for the peer, and the checks of validate-all.
 * No I/O: main.c, ctl.c and cluster.c gather the facts.
 */
#ifndef TANDEM_AGENT_POLICY_H
#define TANDEM_AGENT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state.h"

/* OCF 1.1 exit codes (ref/ha-stack-apis.md §1.2). */
enum agent_policy_ocf {
	AGENT_POLICY_OCF_SUCCESS = 0,
	AGENT_POLICY_OCF_ERR_GENERIC = 1,
	AGENT_POLICY_OCF_ERR_ARGS = 2,
	AGENT_POLICY_OCF_ERR_UNIMPLEMENTED = 3,
	AGENT_POLICY_OCF_ERR_PERM = 4,
	AGENT_POLICY_OCF_ERR_INSTALLED = 5,
	AGENT_POLICY_OCF_ERR_CONFIGURED = 6,
	AGENT_POLICY_OCF_NOT_RUNNING = 7,
	AGENT_POLICY_OCF_RUNNING_PROMOTED = 8,
	AGENT_POLICY_OCF_FAILED_PROMOTED = 9,
};

/* ---------------------------------------------------------------- the facts */

/* Whether tandemd runs and has the resource up. */
enum agent_policy_presence {
	AGENT_POLICY_NO_DAEMON,   /* nothing answers on the control socket */
	AGENT_POLICY_UNKNOWN_RES, /* tandemd runs without this resource */
	AGENT_POLICY_DOWN,        /* known to tandemd, not up */
	AGENT_POLICY_UP,
	AGENT_POLICY_BAD_ANSWER, /* tandemd answered something unusable */
};

struct agent_policy_vol {
	enum state_disk disk;
	enum state_disk pdsk;
	unsigned int clients; /* NBD clients of the export */
};

/* The resource as tandemd's `status` shows it. */
struct agent_policy_view {
	enum agent_policy_presence presence;
	enum state_role role;
	enum state_role peer;
	enum state_conn conn;
	const struct agent_policy_vol *vols;
	unsigned int n_vols;
	bool fence_handler; /* fencing with a fence-peer handler (tandemd runs it) */
	bool fence_running; /* the fence-peer handler is running now */
	/* status "quorum" (doc/arbiter.md §6.5): the resource has `quorum
	 * majority` and this partition is not quorate. false when tandemd
	 * reports no quorum policy (an older tandemd, or `quorum off`). */
	bool no_quorum;
};

/* Every volume's local disk is d. */
bool agent_policy_all_disks(const struct agent_policy_view *v, enum state_disk d);
/* Every volume has UpToDate data here or, connected, at the peer. */
bool agent_policy_uptodate_access(const struct agent_policy_view *v);
/* NBD clients of all volumes together. */
unsigned int agent_policy_clients(const struct agent_policy_view *v);

/* ---------------------------------------------------------------- parameters */

/* OCF booleans: yes/true/on/1 and no/false/off/0, any case. NULL or ""
 * gives def. -EINVAL for anything else. */
int agent_policy_parse_bool(const char *text, bool def, bool *out);

/* A resource name tandem and drbd.conf accept: [-%+./0-9:=@A-Z_a-z]. */
bool agent_policy_valid_name(const char *name);

/* promotion_scores: four non-decreasing integers, like drbd.ocf's
 * adjust_master_score. */
struct agent_policy_scores {
	int only_consistent; /* local data only Consistent */
	int only_remote;     /* only the peer's data UpToDate */
	int local_ok;        /* local UpToDate, the peer's disk unknown */
	int best;            /* local UpToDate and Primary or the peer's disk known */
};

#define AGENT_POLICY_SCORES_DEFAULT "0 10 1000 10000"

/* 0, or -EINVAL with the reason in err. */
int agent_policy_parse_scores(const char *text, struct agent_policy_scores *out, char *err,
			      size_t errlen);

/*
 * wfc_timeout: how long start waits for the connection. "config" (or
 * NULL): the startup section of the configuration, by the class tandemd
 * reports (default, degraded, peer-outdated) with DRBD's sanity rules; a
 * number of seconds for every class; "none" or "": no wait. *secs: -1 no
 * wait, 0 as long as the start timeout allows (DRBD's "forever"), else
 * seconds. -EINVAL for anything else.
 */
int agent_policy_wfc(const char *param, const char *wfc_class, uint64_t wfc, uint64_t degr,
		     uint64_t outd, long *secs);

/* ---------------------------------------------------------------- decisions */

enum agent_policy_score_op {
	AGENT_POLICY_SCORE_KEEP,   /* leave the attribute as it is */
	AGENT_POLICY_SCORE_SET,    /* crm_attribute --promotion -v value */
	AGENT_POLICY_SCORE_DELETE, /* crm_attribute --promotion -D */
};

struct agent_policy_score {
	enum agent_policy_score_op op;
	int value;
	const char *why; /* for the log */
};

/* The promotion score from the data quality (ref/drbd-semantics.md
 * §11.3); a score ≤ 0 is deleted, never set. 0 (deleted) on a node
 * without quorum under `quorum majority` (no_quorum; doc/arbiter.md
 * §6.5). */
struct agent_policy_score agent_policy_score(const struct agent_policy_view *v,
					     const struct agent_policy_scores *s,
					     bool remove_if_peer_primary);

/* monitor (and probe): 7 not running, 0 Secondary, 8 Primary, 9 Primary
 * without access to UpToDate data, 1 when tandemd's answer is unusable. */
enum agent_policy_ocf agent_policy_monitor(const struct agent_policy_view *v);

/* Whether and why a promotion is refused. */
enum agent_policy_promote {
	AGENT_POLICY_PROMOTE_OK,
	AGENT_POLICY_PROMOTE_ALREADY, /* already Primary: success */
	AGENT_POLICY_PROMOTE_NOT_RUNNING,
	AGENT_POLICY_PROMOTE_PEER_PRIMARY,
	AGENT_POLICY_PROMOTE_OUTDATED,
	AGENT_POLICY_PROMOTE_NO_DATA, /* Inconsistent, Diskless, Failed, ... */
	AGENT_POLICY_PROMOTE_FENCING, /* the peer is not known to be Outdated */
	AGENT_POLICY_PROMOTE_BANNED,  /* a cli-ban constraint */
	AGENT_POLICY_PROMOTE_FENCE_CONSTRAINT,
	AGENT_POLICY_PROMOTE_CONSTRAINT, /* another -INFINITY location constraint */
	AGENT_POLICY_PROMOTE_REFUSED,    /* tandemd refused for another reason */
	AGENT_POLICY_PROMOTE_VETO,       /* tandem-arbiterd refused (doc/arbiter.md §6.4) */
};

/* Before asking tandemd: the refusals the status already shows. */
enum agent_policy_promote agent_policy_promote_check(const struct agent_policy_view *v,
						     bool allow_two_primaries);
/* tandemd refused `primary` with state-change error ss (0 = none). */
enum agent_policy_promote agent_policy_promote_refused(const struct agent_policy_view *v, int ss);
/*
 * Is a refusal transient, so that promote asks again within its timeout
 * (as drbd.ocf loops on `drbdadm primary`)? Transient: the peer is still
 * believed Primary (tandemd has not yet seen it go), fencing has not
 * outdated the peer yet (the handler runs, or runs again on the next
 * `primary`), or the connection is being torn down. Everything else (no
 * UpToDate data, an Outdated disk, a constraint, a refusal tandemd does
 * not explain) fails at once. Returns the reason for the log, or NULL.
 * With fail_early_if_peer_primary (drbd.ocf's
 * fail_promote_early_if_peer_primary) a Primary peer is not waited for.
 */
const char *agent_policy_promote_transient(enum agent_policy_promote p,
					   const struct agent_policy_view *v,
					   bool fail_early_if_peer_primary);
/* "the peer is Primary", ... */
const char *agent_policy_promote_text(enum agent_policy_promote p);
/* What the administrator can do about a refusal (doc/ocf-agent.md). */
const char *agent_policy_promote_hint(enum agent_policy_promote p);

/* ---------------------------------------------------------------- constraints */

/* One `expression` of a rule on #uname. */
struct agent_policy_expr {
	bool ne;           /* operation="ne", else "eq" */
	const char *value; /* the node name */
};

struct agent_policy_rule {
	const char *role;  /* NULL: the constraint's */
	const char *score; /* NULL: the constraint's */
	bool any;          /* boolean-op="or" */
	bool unknown;      /* has expressions other than #uname eq/ne (dates, ...) */
	const struct agent_policy_expr *exprs;
	unsigned int n_exprs;
};

/* One rsc_location of the CIB, reduced to what the agent evaluates. */
struct agent_policy_location {
	const char *id;
	const char *rsc;
	const char *role;
	const char *score;
	const char *node; /* the simple form: node="..." */
	const struct agent_policy_rule *rules;
	unsigned int n_rules;
};

enum agent_policy_block {
	AGENT_POLICY_BLOCK_NONE,
	AGENT_POLICY_BLOCK_BAN,   /* cli-ban-* (crm_resource --ban/--move) */
	AGENT_POLICY_BLOCK_FENCE, /* a fence-peer handler's constraint */
	AGENT_POLICY_BLOCK_OTHER,
};

/*
 * Does the constraint forbid the promoted role of rsc (the primitive) or
 * clone on node? Only -INFINITY counts, for the role Promoted (Master) or
 * every role. Rules with expressions the agent cannot evaluate (date
 * expressions of a ban with a lifetime, other node attributes) never
 * block; *uncertain says one was skipped.
 */
enum agent_policy_block agent_policy_location_blocks(const struct agent_policy_location *l,
						     const char *node, const char *rsc,
						     const char *clone, bool *uncertain);

/* ---------------------------------------------------------------- meta attributes */

/* The clone's meta attributes as Pacemaker passes them (NULL = absent). */
struct agent_policy_meta {
	const char *promotable;
	const char *notify;
	const char *clone_max;
	const char *clone_node_max;
	const char *promoted_max; /* or the deprecated master_max */
	const char *promoted_node_max;
};

struct agent_policy_finding {
	enum agent_policy_ocf rc; /* SUCCESS for a warning or a note */
	char text[256];
};

#define AGENT_POLICY_MAX_FINDINGS 8

/* validate-all's checks of the clone: findings in f (at most max), the
 * worst rc returned. Without any clone meta attribute (ocf-tester,
 * crm_resource --validate) there is nothing to check. notify_optional
 * (ignore_missing_notifications) makes notify=false a warning. */
enum agent_policy_ocf agent_policy_check_meta(const struct agent_policy_meta *m,
					      bool allow_two_primaries, bool notify_optional,
					      const char *res,
					      struct agent_policy_finding *f, unsigned int max,
					      unsigned int *n);

/* ---------------------------------------------------------------- notifications */

enum {
	AGENT_POLICY_NOTIFY_RECONNECT = 1,     /* connect if StandAlone */
	AGENT_POLICY_NOTIFY_RESCORE = 2,       /* publish the score again */
	AGENT_POLICY_NOTIFY_OUTDATE_CHECK = 4, /* agent_policy_outdate_self() */
	AGENT_POLICY_NOTIFY_ADJUST = 8,        /* tandemd re-reads the configuration */
};

/* What a notification of type (pre|post) and operation (start, stop,
 * promote, demote) asks for: a mask of the flags above, -EINVAL for an
 * unknown type or operation. */
int agent_policy_notify(const char *type, const char *operation);

enum agent_policy_outdate {
	AGENT_POLICY_OUTDATE_NO,
	AGENT_POLICY_OUTDATE_YES,
	AGENT_POLICY_OUTDATE_SPLIT_BRAIN, /* we are Primary and so is another node */
};

/*
 * stop_outdates_secondary: should this node mark its data Outdated
 * because Pacemaker has another node promoted? promoted, stopping and
 * demoting are Pacemaker's space-separated node lists (notify_promoted_
 * uname, ..., before the transition; " " when empty); a node that stops
 * or demotes in this transition does not count. In a notification the
 * node must also be disconnected (connected, the peer knows our state);
 * at stop it need not. The other node's name goes to other.
 */
enum agent_policy_outdate agent_policy_outdate_self(const struct agent_policy_view *v,
						    const char *me, const char *promoted,
						    const char *stopping, const char *demoting,
						    bool at_stop, char *other, size_t otherlen);

#endif
