/*
 * arb-policy: the decisions of tandem-arbiterd (doc/arbiter.md §6) as pure
 * functions: whether a record still counts (§2), what `fence-peer` does
 * and answers (§6.1, both the requester's and the target's side), which
 * startup timeout applies (§6.2), the one split-brain verdict (§6.3, on
 * top of sbpolicy.h's DRBD rules), the promotion veto (§6.4) and quorum
 * (§6.5). No I/O, no corosync, no clock: the caller passes the facts,
 * ages included, and acts on the answer.
 *
 * Every function that fills an output returns 0, or -EINVAL for an input
 * out of its range (an enum value this version does not know, a NULL
 * pointer), and then leaves the output untouched. Each output carries
 * `why`: one line for the log.
 */
#ifndef TANDEM_ARB_POLICY_H
#define TANDEM_ARB_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "sbpolicy.h"
#include "state.h"

#define ARB_POLICY_TOKEN_MS 1000u    /* totem.token when cmap has none */
#define ARB_POLICY_WHY_MAX 384	     /* the formatted reasons, with their NUL */
#define ARB_POLICY_EXIT_NO_QUORUM 11 /* `primary` refused: "no quorum" */

/* ---------------------------------------------------------------- §2 facts */

/* One (node, resource) record as the table holds it. */
enum arb_policy_rec {
	ARB_POLICY_REC_NONE,  /* never published, or removed (GONE) */
	ARB_POLICY_REC_FRESH, /* its sender is a member, or it is younger than 2 x token */
	ARB_POLICY_REC_STALE, /* counts as unknown, its last values aside */
};

/* The peer node in the ring (totem_confchg) and in cmap's nodelist. */
enum arb_policy_node {
	ARB_POLICY_NODE_MEMBER,	 /* in this partition's ring */
	ARB_POLICY_NODE_DOWN,	 /* left the ring (NODEDOWN): a fencing candidate */
	ARB_POLICY_NODE_ABSENT,	 /* in cmap, not in the ring, never seen leaving it */
	ARB_POLICY_NODE_UNKNOWN, /* not in cmap's nodelist: the arbiter answers nothing */
};

/* The peer's arbiter in the CPG group (confchg). */
enum arb_policy_proc {
	ARB_POLICY_PROC_MEMBER,
	ARB_POLICY_PROC_LEAVE,	  /* it stopped cleanly */
	ARB_POLICY_PROC_PROCDOWN, /* it died, the node stayed */
	ARB_POLICY_PROC_NEVER,	  /* never joined since this arbiter started */
};

/* A record's freshness: the sender is a member of the group, or the
 * record is younger than 2 x token_ms (0: ARB_POLICY_TOKEN_MS). */
bool arb_policy_fresh(uint64_t age_ms, uint32_t token_ms, bool member);
/* NONE without a record, else FRESH or STALE as arb_policy_fresh(). */
enum arb_policy_rec arb_policy_rec_of(bool have, uint64_t age_ms, uint32_t token_ms, bool member);

/* ---------------------------------------------------------------- §6.1 fence-peer */

/* The resource's `fencing` policy, numbered as in FACTS. */
enum arb_policy_fencing {
	ARB_POLICY_DONT_CARE,
	ARB_POLICY_RESOURCE_ONLY,
	ARB_POLICY_RESOURCE_AND_STONITH,
};

/* Where the OUTDATE_REQ to the peer stands. */
enum arb_policy_ask {
	ARB_POLICY_ASK_NOT_SENT,
	ARB_POLICY_ASK_SENT,	 /* delivered, no answer yet, deadline not passed */
	ARB_POLICY_ASK_ANSWERED, /* its OUTDATE_ACK was delivered: `answer` */
	ARB_POLICY_ASK_DEADLINE, /* no answer by its deadline_ms */
};

/* Where the fencer's kick stands (NODEDOWN under resource-and-stonith). */
enum arb_policy_stonith {
	ARB_POLICY_STONITH_NOT_KICKED,
	ARB_POLICY_STONITH_KICKED,    /* asked, not confirmed, deadline not passed */
	ARB_POLICY_STONITH_CONFIRMED, /* the fencer confirmed */
	ARB_POLICY_STONITH_DEADLINE,  /* not confirmed by the deadline */
};

struct arb_policy_fence_in {
	bool quorate;		   /* this partition, as corosync says */
	enum arb_policy_node node; /* the peer node */
	enum arb_policy_proc proc; /* the peer's arbiter; only read for a MEMBER node */
	enum arb_policy_ask ask;   /* only read for a MEMBER node, or when ANSWERED */
	int answer;		   /* ANSWERED: OUTDATE_ACK's result, 3, 4 or 6 */
	enum arb_policy_fencing fencing;
	enum arb_policy_stonith stonith; /* only read under resource-and-stonith */
};

enum arb_policy_fence_action {
	ARB_POLICY_FENCE_FAIL,	     /* nothing: I/O stays frozen; exit 1 */
	ARB_POLICY_FENCE_ASK,	     /* multicast OUTDATE_REQ, then decide again on its answer */
	ARB_POLICY_FENCE_WAIT,	     /* wait for the answer, the fencer or the deadline */
	ARB_POLICY_FENCE_FALLBACK,   /* answer without `exit`: the handler takes the CIB path */
	ARB_POLICY_FENCE_CONSTRAINT, /* place the constraint as the CIB path does; exit 4 */
	ARB_POLICY_FENCE_STONITH,    /* place the constraint, then stonith_api_kick */
	ARB_POLICY_FENCE_DONE,	     /* answer `exit` */
};

#define ARB_POLICY_EXIT_FALLBACK (-1) /* the answer has no exit: fall back */
#define ARB_POLICY_EXIT_PENDING (-2)  /* no answer yet: ASK, WAIT, STONITH */
/* FENCED's `how` (§4.6) */
#define ARB_POLICY_HOW_STONITH 1u
#define ARB_POLICY_HOW_CONSTRAINT 2u

struct arb_policy_fence_out {
	enum arb_policy_fence_action action;
	int exit;	     /* the handler's exit code once the action succeeded */
	unsigned int fenced; /* FENCED to multicast then: 0 none, or ARB_POLICY_HOW_* */
	const char *why;
};

int arb_policy_fence(const struct arb_policy_fence_in *in, struct arb_policy_fence_out *out);

/* The target's side: how far its `outdate` of the resource got. */
enum arb_policy_run {
	ARB_POLICY_RUN_NOT_YET,
	ARB_POLICY_RUN_DONE,	/* tandemd did it; `disk` is the state after it */
	ARB_POLICY_RUN_REFUSED, /* tandemd refused (it was Primary meanwhile) */
	ARB_POLICY_RUN_FAILED,	/* tandemd not reachable, or another error */
};

struct arb_policy_outdate_in {
	enum state_role role; /* the target's own facts */
	enum state_disk disk;
	enum arb_policy_run run;
};

enum arb_policy_ack {
	ARB_POLICY_ACK_SEND,	/* multicast OUTDATE_ACK with `result` */
	ARB_POLICY_ACK_OUTDATE, /* run `outdate` through tandemd, then decide again */
	ARB_POLICY_ACK_NONE,	/* answer nothing: the requester's deadline falls back */
};

struct arb_policy_outdate_out {
	enum arb_policy_ack action;
	int result; /* SEND: 3, 4 or 6; else 0 */
	const char *why;
};

int arb_policy_outdate(const struct arb_policy_outdate_in *in, struct arb_policy_outdate_out *out);

/* ---------------------------------------------------------------- §6.2 wfc */

enum arb_policy_wfc {
	ARB_POLICY_WFC_UNKNOWN,	 /* no answer: the caller uses the metadata flags */
	ARB_POLICY_WFC_DEFAULT,	 /* wfc-timeout */
	ARB_POLICY_WFC_DEGRADED, /* degr-wfc-timeout */
	ARB_POLICY_WFC_OUTDATED, /* outdated-wfc-timeout */
};

struct arb_policy_wfc_in {
	enum arb_policy_node node;
	bool fenced;		 /* known fenced (§4.6) */
	enum arb_policy_rec rec; /* the peer's record of the resource */
	enum state_disk disk;	 /* FRESH: its disk */
	bool up;		 /* FRESH: tandemd has the resource up there */
};

struct arb_policy_wfc_out {
	enum arb_policy_wfc wfc;
	const char *why;
};

int arb_policy_wfc(const struct arb_policy_wfc_in *in, struct arb_policy_wfc_out *out);
/* "default", "degraded", "outdated" as `wfc` answers them; NULL for UNKNOWN. */
const char *arb_policy_wfc_name(enum arb_policy_wfc w);

/* ---------------------------------------------------------------- §6.3 split brain */

/* primary_since (§2): the totem ring sequence the node was in when it
 * became Primary, then its wall clock in seconds; (0, 0) while Secondary.
 * Compares as a pair: the clock only decides within one ring sequence. */
struct arb_policy_since {
	uint64_t ring;
	uint32_t s;
};

/* One node's fresh record of the resource. */
struct arb_policy_sb_node {
	uint32_t id; /* corosync node id, not 0 */
	enum state_role role;
	struct arb_policy_since since; /* primary_since; (0, 0) is the smallest */
	uint64_t changes;	     /* bitmap weight */
	uint64_t current;	     /* current UUID */
};

struct arb_policy_sb_in {
	struct arb_policy_sb_node node[2]; /* in any order: the verdict is the same */
	enum sbpolicy after_sb_0pri;	   /* as configured on `self` */
	enum sbpolicy after_sb_1pri;
	enum sbpolicy after_sb_2pri;
	uint32_t discard_node; /* SBPOLICY_DISCARD_NODE: NAME's node id (0: not one of them) */
	uint32_t self;	       /* the decider, one of the two: whose discard-local is it */
};

struct arb_policy_sb_out {
	uint32_t loser;		 /* whose changes are discarded; 0: disconnect */
	int primaries;		 /* 0, 1, 2: the option that applied */
	enum sbpolicy policy;	 /* its value (SB_VERDICT's policy) */
	bool config_error;	 /* that value is not one of that option's */
	bool pri_lost;		 /* call-pri-lost-after-sb and the loser is Primary: it
				  * gives up the role, or runs pri-lost-after-sb */
	uint32_t id_a, id_b;	 /* the two nodes, lower id first */
	uint64_t uuid_a, uuid_b; /* their current UUIDs, in that order */
	char why[ARB_POLICY_WHY_MAX];
};

/* The decider: the lower id of the two whose arbiter is a member; 0 if
 * neither is. */
uint32_t arb_policy_sb_decider(uint32_t a, bool a_member, uint32_t b, bool b_member);
/* -1, 0, 1 as a is older than, as old as, younger than b. */
int arb_policy_since_cmp(struct arb_policy_since a, struct arb_policy_since b);
/* -EINVAL also for equal ids, an id 0, `self` neither of them, and two
 * current UUIDs of one generation (equal but for bit 0): no split brain. */
int arb_policy_sb(const struct arb_policy_sb_in *in, struct arb_policy_sb_out *out);

/* ---------------------------------------------------------------- §6.4 promotion veto */

struct arb_policy_promote_in {
	const char *peer;	 /* its name, for the reason */
	bool member;		 /* its arbiter is a member of the group */
	bool fenced;		 /* known fenced (§4.6) */
	enum arb_policy_rec rec; /* its record of the resource */
	enum state_role role;	 /* FRESH: its role; STALE: the last known one */
};

struct arb_policy_promote_out {
	bool ok;
	char why[ARB_POLICY_WHY_MAX];
};

int arb_policy_promote(const struct arb_policy_promote_in *in, struct arb_policy_promote_out *out);

/* ---------------------------------------------------------------- §6.5 quorum */

enum arb_policy_quorum { ARB_POLICY_QUORUM_OFF, ARB_POLICY_QUORUM_MAJORITY };
/* on-no-quorum, numbered as in FACTS */
enum arb_policy_onq { ARB_POLICY_ONQ_SUSPEND_IO, ARB_POLICY_ONQ_IO_ERROR };

struct arb_policy_qpromote_out {
	bool ok;
	bool forced; /* allowed by --force only: log `why` */
	int exit;    /* 0, or ARB_POLICY_EXIT_NO_QUORUM */
	const char *why;
};

/* May a Secondary become Primary? */
int arb_policy_quorum_promote(enum arb_policy_quorum q, bool quorate, bool force,
			      struct arb_policy_qpromote_out *out);

enum arb_policy_io {
	ARB_POLICY_IO_ON,      /* writes go on (again, once quorum is back) */
	ARB_POLICY_IO_SUSPEND, /* new writes wait (susp bit 3) */
	ARB_POLICY_IO_ERROR,   /* new writes fail with EIO */
};

struct arb_policy_io_out {
	enum arb_policy_io io;
	const char *why;
};

/* What the resource's writes do with this role and quorum. */
int arb_policy_quorum_io(enum arb_policy_quorum q, enum arb_policy_onq onq, bool quorate,
			 enum state_role role, struct arb_policy_io_out *out);
/* The agent's promotion score: 0 without quorum under majority, else
 * `score` (>= 0). */
int arb_policy_score(enum arb_policy_quorum q, bool quorate, int score, int *out);

#endif
