/*
 * sbpolicy: DRBD 8.4's automatic split-brain recovery policies
 * (after-sb-0pri, after-sb-1pri, after-sb-2pri) and the rr-conflict
 * values, as pure functions (ref/drbd-semantics.md §6). The caller
 * supplies what both nodes know after the UUID exchange; the result says
 * which side's changes are discarded, or that the split brain stays
 * unresolved. Nothing here demotes, runs a handler or logs: the result
 * says what the caller must do.
 */
#ifndef TANDEM_SBPOLICY_H
#define TANDEM_SBPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Policy values; 0..10 are DRBD's ASB_* numbers as sent in P_PROTOCOL. */
enum sbpolicy {
	SBPOLICY_DISCONNECT = 0,
	SBPOLICY_DISCARD_YOUNGER_PRI = 1, /* discard-younger-primary */
	SBPOLICY_DISCARD_OLDER_PRI = 2,   /* discard-older-primary */
	SBPOLICY_DISCARD_ZERO_CHG = 3,    /* discard-zero-changes */
	SBPOLICY_DISCARD_LEAST_CHG = 4,   /* discard-least-changes */
	SBPOLICY_DISCARD_LOCAL = 5,       /* discard-local */
	SBPOLICY_DISCARD_REMOTE = 6,      /* discard-remote */
	SBPOLICY_CONSENSUS = 7,           /* consensus */
	SBPOLICY_DISCARD_SECONDARY = 8,   /* discard-secondary */
	SBPOLICY_CALL_HELPER = 9,         /* call-pri-lost-after-sb, call-pri-lost */
	SBPOLICY_VIOLENTLY = 10,          /* violently-as0p, violently */
	SBPOLICY_DISCARD_NODE = 11,       /* discard-node-NAME; never on the wire */
};

/* Which option a value belongs to; it decides the accepted words. */
enum sbpolicy_slot {
	SBPOLICY_0PRI,
	SBPOLICY_1PRI,
	SBPOLICY_2PRI,
	SBPOLICY_RR_CONFLICT,
};

#define SBPOLICY_NODE_MAX   128 /* NAME of discard-node-NAME, with its NUL */
#define SBPOLICY_REASON_MAX 256

struct sbpolicy_conf {
	enum sbpolicy after_sb_0pri;
	enum sbpolicy after_sb_1pri;
	enum sbpolicy after_sb_2pri;
	char node[SBPOLICY_NODE_MAX]; /* after_sb_0pri == SBPOLICY_DISCARD_NODE */
};

/* What both nodes know after exchanging UUIDs and states. */
struct sbpolicy_input {
	bool self_primary;      /* roles now */
	bool peer_primary;
	bool self_was_primary;  /* bit 0 of own bitmap UUID: Primary at the split */
	bool peer_was_primary;  /* bit 0 of the peer's bitmap UUID */
	uint64_t ch_self;       /* own bitmap weight (blocks changed) */
	uint64_t ch_peer;       /* the peer's, from P_UUIDS */
	bool resolve_conflicts; /* the tie-break bit; opposite on the two nodes */
	bool can_demote;        /* call-pri-lost-after-sb: would "secondary" succeed? */
	const char *self_name;  /* discard-node-NAME: own host name */
	const char *peer_name;  /* and the peer's (NULL: any other name is the peer) */
};

struct sbpolicy_result {
	/* 1: this node is sync source (the peer's changes are discarded);
	 * -1: this node's changes are discarded; -100: unresolved. */
	int hg;
	int primaries;          /* 0, 1 or 2: which option applied */
	enum sbpolicy policy;   /* its value */
	bool config_error;      /* the value makes no sense for that option */
	bool demote;            /* become Secondary before resyncing as target */
	bool call_pri_lost_after_sb; /* demotion impossible: run that handler */
	char reason[SBPOLICY_REASON_MAX];
};

void sbpolicy_conf_init(struct sbpolicy_conf *c);

/* The config words, exactly; discard-node-NAME copies NAME into node. */
int sbpolicy_parse(enum sbpolicy_slot slot, const char *text, enum sbpolicy *p, char *node,
		   size_t nodelen);
int sbpolicy_parse_0pri(const char *text, enum sbpolicy *p, char *node, size_t nodelen);
int sbpolicy_parse_1pri(const char *text, enum sbpolicy *p);
int sbpolicy_parse_2pri(const char *text, enum sbpolicy *p);
int sbpolicy_parse_rr_conflict(const char *text, enum sbpolicy *p);
/* The config word of p for that option ("discard-node" for NAME values). */
const char *sbpolicy_name(enum sbpolicy p, enum sbpolicy_slot slot);
const char *sbpolicy_slot_name(enum sbpolicy_slot slot);

/* discard-node-NAME as drbdadm sends it: discard-local on NAME, else
 * discard-remote. Other values are returned unchanged. */
enum sbpolicy sbpolicy_localize(enum sbpolicy p, const char *node, const char *self_name);
/* The peer's wire value as this node must read it (local <-> remote);
 * the two nodes' settings are compatible iff mirror(peer) == own. */
enum sbpolicy sbpolicy_mirror(enum sbpolicy peer);

/* Apply the option for the number of Primaries now. 0 or -EINVAL. */
int sbpolicy_decide(const struct sbpolicy_conf *c, const struct sbpolicy_input *in,
		    struct sbpolicy_result *r);

#endif
