/*
 * arb-table: the arbiter's table of facts (doc/arbiter.md §1, §2): the
 * nodes with their ring and group membership, the quorum, who was fenced,
 * and one record per (node, resource) from the FACTS messages delivered in
 * CPG's agreed order. Every member applies the same deliveries in the
 * same order, so every member holds the same table.
 *
 * No corosync and no clock here: the caller (tandem-arbiterd) feeds what
 * corosync delivered and passes CLOCK_MONOTONIC milliseconds, so that the
 * cmocka tests drive every path. One opaque struct; not thread-safe (the
 * arbiter's one loop owns it).
 */
#ifndef TANDEM_ARB_TABLE_H
#define TANDEM_ARB_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "arbmsg.h"

struct arb_table;

/* Why a process left the CPG group: corosync's CPG_REASON_* numbers. */
enum arb_reason {
	ARB_REASON_NONE = 0,
	ARB_REASON_JOIN = 1,
	ARB_REASON_LEAVE = 2,    /* the arbiter stopped cleanly; the node is up */
	ARB_REASON_NODEDOWN = 3, /* the node left the ring */
	ARB_REASON_NODEUP = 4,
	ARB_REASON_PROCDOWN = 5, /* the arbiter died; the node is up */
};

/* One entry of a CPG configuration change. */
struct arb_member {
	uint32_t nodeid;
	uint32_t pid;
	enum arb_reason reason;
};

/* A record's standing (§2). */
enum arb_fresh {
	ARB_RECORD_NONE,  /* no record of that node and resource */
	ARB_RECORD_FRESH, /* its sender is a member, or it is younger than 2 x token */
	ARB_RECORD_STALE, /* counts as unknown */
};

/* How a node stands in this partition. */
enum arb_node {
	ARB_NODE_UNKNOWN,  /* not in the nodelist (cmap) */
	ARB_NODE_MEMBER,   /* in the ring */
	ARB_NODE_NODEDOWN, /* left the ring since this arbiter saw it there */
	ARB_NODE_ABSENT,   /* in the nodelist, never seen in the ring */
};

/* What the decision tables (arb-policy.h) need about one peer. */
struct arb_view {
	bool quorate;
	enum arb_node node;       /* the peer node */
	bool arbiter_member;      /* its arbiter is in the group */
	enum arb_reason left;     /* why its arbiter left, if it did */
	bool fenced;              /* known fenced (§4.6) */
	enum arb_fresh record;    /* its record of the resource */
	struct arbmsg_facts facts; /* valid unless record is ARB_RECORD_NONE */
	int64_t age_ms;           /* of the record */
};

int arb_table_new(uint32_t self, uint32_t token_ms, struct arb_table **out);
void arb_table_free(struct arb_table *t);

/* The nodelist (cmap): id and name; a known id gets the new name. */
int arb_table_set_node(struct arb_table *t, uint32_t nodeid, const char *name);
const char *arb_table_node_name(const struct arb_table *t, uint32_t nodeid);
/* -ENOENT if no node has that name. */
int arb_table_node_id(const struct arb_table *t, const char *name, uint32_t *nodeid);

/* totem_confchg: the ring's members now, and the ring sequence. */
int arb_table_ring(struct arb_table *t, uint64_t ring_seq, const uint32_t *nodes, size_t n);
/* confchg: the group's members now and those that left, with reasons.
 * A fenced node that joins again is no longer "known fenced". */
int arb_table_group(struct arb_table *t, const struct arb_member *members, size_t n,
		    const struct arb_member *left, size_t n_left);
void arb_table_set_quorate(struct arb_table *t, bool quorate);
bool arb_table_quorate(const struct arb_table *t);
uint64_t arb_table_ring_seq(const struct arb_table *t);

/*
 * A message delivered by CPG (decoded, its nodeid checked by arbmsg).
 * HELLO of a new incarnation drops that node's records (it republishes
 * them); FACTS replaces the sender's record of the resource; GONE removes
 * it; FENCED marks the node. The other types change nothing here.
 * 0; -EALREADY: seq not above the last of that incarnation (a replay:
 * drop it); -ENOMEM.
 */
int arb_table_deliver(struct arb_table *t, const struct arbmsg *m, int64_t now_ms);

/* The view of peer (node id) for resource res at now_ms. */
int arb_table_view(const struct arb_table *t, const char *res, uint32_t peer, int64_t now_ms,
		   struct arb_view *out);

/* `tandemadm arbiter --json`: nodes, quorum, records with their ages. */
json_object *arb_table_show(const struct arb_table *t, int64_t now_ms);

#endif
