/*
 * uuidcmp: DRBD 8.4's sync handshake as pure functions
 * (ref/drbd-semantics.md §5.1 uuid_compare, §5.2 drbd_sync_handshake).
 * From both nodes' generation UUIDs, bitmap weights, flags, roles and
 * disk states it decides: no resync, resync as source or target (bitmap
 * based or full), or dropping the connection, with the handlers to run
 * and the log lines to write. Metadata fix-ups some rules imply are
 * returned as data; the inputs are never modified.
 */
#ifndef TANDEM_UUIDCMP_H
#define TANDEM_UUIDCMP_H

#include <stdbool.h>
#include <stdint.h>

#include "gi.h"
#include "sbpolicy.h"
#include "state.h"

/* One node as seen in the handshake (P_UUIDS plus the role). */
struct uuidcmp_side {
	struct gi uuids;
	uint64_t bits;          /* bitmap weight: blocks marked out of sync */
	bool discard_my_data;   /* UUID flag bit 0 */
	bool crashed_primary;   /* bit 1: was Primary when it went down */
	bool inconsistent;      /* bit 2: disk Inconsistent (used while Negotiating) */
	bool skip_initial_sync; /* bit 3: not used by the decision */
	bool primary;           /* role now */
};

/* The result of uuid_compare and the fix-ups its rule implies. */
struct uuidcmp_result {
	int hg;            /* 2, 1, 0, -1, -2, 100, -100, -1000 */
	int rule;          /* DRBD's rule number; 0 = unrelated data */
	bool fix_self;     /* self_gi differs: adopt it and write it to disk */
	bool fix_peer;     /* peer_gi differs: use it as the peer's UUIDs */
	struct gi self_gi; /* own UUIDs after the fix-up (a copy if none) */
	struct gi peer_gi; /* the peer's UUIDs after the fix-up */
};

enum uuidcmp_outcome {
	UUIDCMP_NO_SYNC,     /* Connected */
	UUIDCMP_SYNC_SOURCE, /* WFBitMapS */
	UUIDCMP_SYNC_TARGET, /* WFBitMapT */
	UUIDCMP_DROP,        /* Disconnecting, then StandAlone */
};

enum uuidcmp_drop {
	UUIDCMP_DROP_NONE,
	UUIDCMP_DROP_UNRELATED,       /* no common generation */
	UUIDCMP_DROP_DISCARD_BOTH,    /* both asked for discard-my-data */
	UUIDCMP_DROP_SPLIT_BRAIN,     /* split brain, unresolved */
	UUIDCMP_DROP_INCONSISTENT,    /* would be source with an Inconsistent disk */
	UUIDCMP_DROP_RR_CONFLICT,     /* would make the Primary a SyncTarget */
	UUIDCMP_DROP_DRY_RUN,         /* tentative connect: only report */
};

/* Handlers to run (in this order), bits of uuidcmp_decision.handlers. */
#define UUIDCMP_H_INITIAL_SPLIT_BRAIN 0x1u
#define UUIDCMP_H_PRI_LOST_AFTER_SB   0x2u
#define UUIDCMP_H_SPLIT_BRAIN         0x4u
#define UUIDCMP_H_PRI_LOST            0x8u

#define UUIDCMP_LOG_MAX 2048

struct uuidcmp_input {
	struct uuidcmp_side self;
	struct uuidcmp_side peer;
	enum state_disk disk;  /* own disk state (Negotiating: see self.inconsistent) */
	enum state_disk pdsk;  /* the peer's, from P_STATE (Negotiating: peer flags) */
	bool resolve_conflicts;
	struct sbpolicy_conf asb;
	bool always_asbp;
	enum sbpolicy rr_conflict; /* disconnect, call-pri-lost or violently */
	bool dry_run;              /* tentative / --dry-run connect */
	bool can_demote;           /* for call-pri-lost-after-sb */
	const char *self_name;     /* for discard-node-NAME */
	const char *peer_name;
	const char *resource;      /* for the advice in the log; NULL: "RES" */
};

struct uuidcmp_decision {
	enum uuidcmp_outcome outcome;
	enum uuidcmp_drop drop;
	int hg;              /* the final value (as it would be, for a dry run) */
	bool full_sync;      /* set and write the whole bitmap first */
	bool demote;         /* become Secondary first (call-pri-lost-after-sb) */
	bool split_brain;    /* a split brain was detected (resolved or not) */
	unsigned int handlers; /* UUIDCMP_H_* */
	struct uuidcmp_result cmp;
	char log[UUIDCMP_LOG_MAX]; /* lines, each ending in '\n' */
};

/* uuid_compare: 0 or -EINVAL. */
int uuidcmp_compare(const struct uuidcmp_side *self, const struct uuidcmp_side *peer,
		    bool resolve_conflicts, struct uuidcmp_result *r);
/* drbd_sync_handshake: 0 or -EINVAL. */
int uuidcmp_handshake(const struct uuidcmp_input *in, struct uuidcmp_decision *d);

/* The connection state the decision leads to. */
enum state_conn uuidcmp_next_conn(const struct uuidcmp_decision *d);

const char *uuidcmp_outcome_name(enum uuidcmp_outcome o);
const char *uuidcmp_drop_name(enum uuidcmp_drop r);
/* A handler's name as in the handlers { } section, for one UUIDCMP_H_ bit. */
const char *uuidcmp_handler_name(unsigned int bit);
/* What a rule means, in DRBD's words where it logs some. */
const char *uuidcmp_rule_text(int rule);

#endif
