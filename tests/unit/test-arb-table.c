/* Unit tests for arb-table, the arbiter's table of facts (doc/arbiter.md
 * §1, §2): what the ring and group changes, the deliveries and the clock
 * make of one peer's view, which the decision tables then read. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "arb-table.h"
#include "state.h"

#define TOKEN 1000 /* totem.token, ms: records of absent nodes last 2 s */

static const struct arb_member M1 = {1, 101, ARB_REASON_JOIN};
static const struct arb_member M2 = {2, 202, ARB_REASON_JOIN};

/* Two named nodes, both in the ring and the group, quorate. */
static struct arb_table *pair(void)
{
	struct arb_table *t = NULL;
	const uint32_t ring[] = {1, 2};
	const struct arb_member g[] = {M1, M2};

	assert_int_equal(arb_table_new(1, TOKEN, &t), 0);
	assert_int_equal(arb_table_set_node(t, 1, "alice"), 0);
	assert_int_equal(arb_table_set_node(t, 2, "bob"), 0);
	assert_int_equal(arb_table_ring(t, 8, ring, 2), 0);
	assert_int_equal(arb_table_group(t, g, 2, NULL, 0), 0);
	arb_table_set_quorate(t, true);
	return t;
}

static struct arbmsg msg(uint16_t type, uint32_t node, uint64_t inc, uint64_t seq)
{
	struct arbmsg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.major = ARBMSG_MAJOR;
	m.nodeid = node;
	m.incarnation = inc;
	m.seq = seq;
	return m;
}

static struct arbmsg facts(uint32_t node, uint64_t inc, uint64_t seq, const char *res,
			   enum state_role role, enum state_disk disk)
{
	struct arbmsg m = msg(ARBMSG_FACTS, node, inc, seq);

	snprintf(m.u.facts.resource, sizeof(m.u.facts.resource), "%s", res);
	snprintf(m.u.facts.peer, sizeof(m.u.facts.peer), "%s", node == 1 ? "bob" : "alice");
	m.u.facts.role = (uint8_t)role;
	m.u.facts.disk = (uint8_t)disk;
	m.u.facts.conn = CONN_CONNECTED;
	m.u.facts.pdsk = DISK_UPTODATE;
	m.u.facts.current = 0x1234ULL << 8;
	m.u.facts.up = 1;
	return m;
}

static struct arb_view view(const struct arb_table *t, const char *res, uint32_t peer,
			    int64_t now)
{
	struct arb_view v;

	assert_int_equal(arb_table_view(t, res, peer, now, &v), 0);
	return v;
}

static void test_names(void **state)
{
	struct arb_table *t = pair();
	uint32_t id = 0;

	(void)state;
	assert_string_equal(arb_table_node_name(t, 2), "bob");
	assert_null(arb_table_node_name(t, 3));
	assert_int_equal(arb_table_node_id(t, "alice", &id), 0);
	assert_int_equal(id, 1);
	assert_int_equal(arb_table_node_id(t, "carol", &id), -ENOENT);
	assert_int_equal(arb_table_set_node(t, 0, "zero"), -EINVAL);
	assert_int_equal(arb_table_set_node(t, 3, ""), -EINVAL);
	/* a node in the ring that cmap does not name is unknown */
	{
		const uint32_t ring[] = {1, 2, 3};

		assert_int_equal(arb_table_ring(t, 12, ring, 3), 0);
		assert_int_equal(view(t, "r0", 3, 0).node, ARB_NODE_UNKNOWN);
		assert_int_equal(arb_table_ring_seq(t), 12);
	}
	arb_table_free(t);
}

static void test_facts_fresh(void **state)
{
	struct arb_table *t = pair();
	struct arbmsg m = facts(2, 77, 1, "r0", ROLE_PRIMARY, DISK_UPTODATE);
	struct arb_view v;

	(void)state;
	v = view(t, "r0", 2, 0);
	assert_int_equal(v.record, ARB_RECORD_NONE);
	assert_int_equal(v.node, ARB_NODE_MEMBER);
	assert_true(v.arbiter_member);
	assert_true(v.quorate);
	assert_int_equal(arb_table_deliver(t, &m, 1000), 0);
	/* a member's record stays fresh however old: it republishes changes */
	v = view(t, "r0", 2, 1000 + 60000);
	assert_int_equal(v.record, ARB_RECORD_FRESH);
	assert_int_equal(v.facts.role, ROLE_PRIMARY);
	assert_int_equal(v.age_ms, 60000);
	/* another resource, another record */
	assert_int_equal(view(t, "r1", 2, 1000).record, ARB_RECORD_NONE);
	/* a later record replaces it */
	m = facts(2, 77, 2, "r0", ROLE_SECONDARY, DISK_UPTODATE);
	assert_int_equal(arb_table_deliver(t, &m, 5000), 0);
	v = view(t, "r0", 2, 5000);
	assert_int_equal(v.facts.role, ROLE_SECONDARY);
	assert_int_equal(v.age_ms, 0);
	arb_table_free(t);
}

/* The arbiter died (PROCDOWN) or stopped (LEAVE): the node is up, its
 * record is fresh for two tokens, then stale. */
static void test_procdown_stale(void **state)
{
	const enum arb_reason reasons[] = {ARB_REASON_PROCDOWN, ARB_REASON_LEAVE};
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		struct arb_table *t = pair();
		struct arbmsg m = facts(2, 77, 1, "r0", ROLE_PRIMARY, DISK_UPTODATE);
		const struct arb_member left = {2, 202, reasons[i]};
		struct arb_view v;

		assert_int_equal(arb_table_deliver(t, &m, 1000), 0);
		assert_int_equal(arb_table_group(t, &M1, 1, &left, 1), 0);
		v = view(t, "r0", 2, 1000 + 2 * TOKEN - 1);
		assert_int_equal(v.node, ARB_NODE_MEMBER);
		assert_false(v.arbiter_member);
		assert_int_equal(v.left, reasons[i]);
		assert_int_equal(v.record, ARB_RECORD_FRESH);
		assert_int_equal(view(t, "r0", 2, 1000 + 2 * TOKEN).record, ARB_RECORD_STALE);
		arb_table_free(t);
	}
}

/* NODEDOWN: the node left the ring, whichever callback comes first. */
static void test_nodedown(void **state)
{
	struct arb_table *t = pair();
	const struct arb_member left = {2, 202, ARB_REASON_NODEDOWN};
	const uint32_t ring[] = {1};
	struct arb_view v;

	(void)state;
	assert_int_equal(arb_table_group(t, &M1, 1, &left, 1), 0);
	v = view(t, "r0", 2, 0);
	assert_int_equal(v.node, ARB_NODE_NODEDOWN);
	assert_int_equal(v.left, ARB_REASON_NODEDOWN);
	assert_int_equal(arb_table_ring(t, 12, ring, 1), 0);
	assert_int_equal(view(t, "r0", 2, 0).node, ARB_NODE_NODEDOWN);
	arb_table_set_quorate(t, false);
	assert_false(view(t, "r0", 2, 0).quorate);
	assert_false(arb_table_quorate(t));
	arb_table_free(t);

	/* the ring change first, then the group's */
	t = pair();
	assert_int_equal(arb_table_ring(t, 12, ring, 1), 0);
	v = view(t, "r0", 2, 0);
	assert_int_equal(v.node, ARB_NODE_NODEDOWN);
	assert_true(v.arbiter_member); /* until the group change comes */
	assert_int_equal(arb_table_group(t, &M1, 1, &left, 1), 0);
	assert_false(view(t, "r0", 2, 0).arbiter_member);
	arb_table_free(t);
}

/* A node of the nodelist never seen in the ring is ABSENT, not NODEDOWN:
 * only a node seen leaving is a fencing candidate (§6.1). */
static void test_absent(void **state)
{
	struct arb_table *t = NULL;
	const uint32_t alone[] = {1}, both[] = {1, 2};

	(void)state;
	assert_int_equal(arb_table_new(1, TOKEN, &t), 0);
	assert_int_equal(arb_table_set_node(t, 1, "alice"), 0);
	assert_int_equal(arb_table_set_node(t, 2, "bob"), 0);
	assert_int_equal(arb_table_ring(t, 4, alone, 1), 0);
	assert_int_equal(view(t, "r0", 2, 0).node, ARB_NODE_ABSENT);
	assert_int_equal(arb_table_ring(t, 8, both, 2), 0);
	assert_int_equal(view(t, "r0", 2, 0).node, ARB_NODE_MEMBER);
	assert_int_equal(arb_table_ring(t, 12, alone, 1), 0);
	assert_int_equal(view(t, "r0", 2, 0).node, ARB_NODE_NODEDOWN);
	arb_table_free(t);
}

/* FENCED: known fenced until the node's arbiter is a member again. */
static void test_fenced(void **state)
{
	struct arb_table *t = pair();
	const struct arb_member left = {2, 202, ARB_REASON_NODEDOWN};
	const struct arb_member both[] = {M1, M2};
	struct arbmsg m = msg(ARBMSG_FENCED, 1, 5, 1);

	(void)state;
	m.u.fenced.node = 2;
	m.u.fenced.how = ARBMSG_HOW_STONITH;
	/* a member is not fenced: ignored */
	assert_int_equal(arb_table_deliver(t, &m, 0), 0);
	assert_false(view(t, "r0", 2, 0).fenced);
	assert_int_equal(arb_table_group(t, &M1, 1, &left, 1), 0);
	m.seq = 2;
	assert_int_equal(arb_table_deliver(t, &m, 0), 0);
	assert_true(view(t, "r0", 2, 0).fenced);
	assert_true(view(t, "r0", 2, 100000).fenced); /* no expiry by time */
	assert_int_equal(arb_table_group(t, both, 2, NULL, 0), 0);
	assert_false(view(t, "r0", 2, 0).fenced);
	assert_int_equal(view(t, "r0", 2, 0).node, ARB_NODE_MEMBER);
	arb_table_free(t);
}

/* A replayed or old seq is refused; a new incarnation's HELLO drops the
 * node's records (it republishes what it still has). */
static void test_seq_incarnation(void **state)
{
	struct arb_table *t = pair();
	struct arbmsg m = facts(2, 77, 5, "r0", ROLE_PRIMARY, DISK_UPTODATE);
	struct arbmsg hello = msg(ARBMSG_HELLO, 2, 78, 1);
	struct arbmsg mine = facts(1, 9, 1, "r0", ROLE_SECONDARY, DISK_UPTODATE);

	(void)state;
	assert_int_equal(arb_table_deliver(t, &m, 0), 0);
	assert_int_equal(arb_table_deliver(t, &mine, 0), 0);
	assert_int_equal(arb_table_deliver(t, &m, 0), -EALREADY);
	m.seq = 4;
	m.u.facts.role = ROLE_SECONDARY;
	assert_int_equal(arb_table_deliver(t, &m, 0), -EALREADY);
	assert_int_equal(view(t, "r0", 2, 0).facts.role, ROLE_PRIMARY); /* unchanged */
	assert_int_equal(arb_table_deliver(t, &hello, 10), 0);
	assert_int_equal(view(t, "r0", 2, 10).record, ARB_RECORD_NONE);
	assert_int_equal(view(t, "r0", 1, 10).record, ARB_RECORD_FRESH); /* not ours */
	/* the new incarnation's seq starts again from 1 */
	m = facts(2, 78, 2, "r0", ROLE_SECONDARY, DISK_OUTDATED);
	assert_int_equal(arb_table_deliver(t, &m, 20), 0);
	assert_int_equal(view(t, "r0", 2, 20).facts.disk, DISK_OUTDATED);
	arb_table_free(t);
}

static void test_gone(void **state)
{
	struct arb_table *t = pair();
	struct arbmsg a = facts(2, 7, 1, "r0", ROLE_SECONDARY, DISK_UPTODATE);
	struct arbmsg b = facts(2, 7, 2, "r1", ROLE_SECONDARY, DISK_UPTODATE);
	struct arbmsg g = msg(ARBMSG_GONE, 2, 7, 3);

	(void)state;
	strcpy(g.u.gone.resource, "r0");
	assert_int_equal(arb_table_deliver(t, &a, 0), 0);
	assert_int_equal(arb_table_deliver(t, &b, 0), 0);
	assert_int_equal(arb_table_deliver(t, &g, 0), 0);
	assert_int_equal(view(t, "r0", 2, 0).record, ARB_RECORD_NONE);
	assert_int_equal(view(t, "r1", 2, 0).record, ARB_RECORD_FRESH);
	assert_int_equal(arb_table_view(t, NULL, 2, 0, &(struct arb_view){0}), -EINVAL);
	arb_table_free(t);
}

static void test_show(void **state)
{
	struct arb_table *t = pair();
	struct arbmsg m = facts(2, 7, 1, "r0", ROLE_PRIMARY, DISK_UPTODATE);
	json_object *o, *recs, *r, *x;

	(void)state;
	m.u.facts.since_ring = 8;
	m.u.facts.since_s = 1733300000;
	assert_int_equal(arb_table_deliver(t, &m, 100), 0);
	o = arb_table_show(t, 600);
	assert_true(json_object_object_get_ex(o, "records", &recs));
	assert_int_equal(json_object_array_length(recs), 1);
	r = json_object_array_get_idx(recs, 0);
	assert_true(json_object_object_get_ex(r, "node", &x));
	assert_string_equal(json_object_get_string(x), "bob");
	assert_true(json_object_object_get_ex(r, "role", &x));
	assert_string_equal(json_object_get_string(x), "Primary");
	assert_true(json_object_object_get_ex(r, "age_ms", &x));
	assert_int_equal(json_object_get_int64(x), 500);
	assert_true(json_object_object_get_ex(r, "current_uuid", &x));
	assert_string_equal(json_object_get_string(x), "0000000000123400");
	assert_true(json_object_object_get_ex(o, "quorate", &x));
	assert_true(json_object_get_boolean(x));
	json_object_put(o);
	arb_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_facts_fresh),
		cmocka_unit_test(test_procdown_stale),
		cmocka_unit_test(test_nodedown),
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_fenced),
		cmocka_unit_test(test_seq_incarnation),
		cmocka_unit_test(test_gone),
		cmocka_unit_test(test_show),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
