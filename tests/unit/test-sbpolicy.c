/*
 * Unit tests for sbpolicy: the config words of each option, and every
 * after-sb policy with 0, 1 and 2 Primaries, fewer/equal/more changes
 * and either node Primary before or after the split, as tables. A
 * last test runs both nodes of every combination and checks that they
 * never both become source or both target.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sbpolicy.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- parsing */

struct parse_row {
	const char *name;
	enum sbpolicy_slot slot;
	const char *text;
	int rc;
	enum sbpolicy want;
	const char *node;
};

static const struct parse_row parse_rows[] = {
	{"0pri disconnect", SBPOLICY_0PRI, "disconnect", 0, SBPOLICY_DISCONNECT, NULL},
	{"0pri younger", SBPOLICY_0PRI, "discard-younger-primary", 0,
	 SBPOLICY_DISCARD_YOUNGER_PRI, NULL},
	{"0pri older", SBPOLICY_0PRI, "discard-older-primary", 0, SBPOLICY_DISCARD_OLDER_PRI,
	 NULL},
	{"0pri zero", SBPOLICY_0PRI, "discard-zero-changes", 0, SBPOLICY_DISCARD_ZERO_CHG, NULL},
	{"0pri least", SBPOLICY_0PRI, "discard-least-changes", 0, SBPOLICY_DISCARD_LEAST_CHG,
	 NULL},
	{"0pri local", SBPOLICY_0PRI, "discard-local", 0, SBPOLICY_DISCARD_LOCAL, NULL},
	{"0pri remote", SBPOLICY_0PRI, "discard-remote", 0, SBPOLICY_DISCARD_REMOTE, NULL},
	{"0pri node", SBPOLICY_0PRI, "discard-node-alpha", 0, SBPOLICY_DISCARD_NODE, "alpha"},
	{"0pri node with dashes", SBPOLICY_0PRI, "discard-node-node-1.example", 0,
	 SBPOLICY_DISCARD_NODE, "node-1.example"},
	{"0pri node without name", SBPOLICY_0PRI, "discard-node-", -EINVAL, 0, NULL},
	{"0pri discard-node bare", SBPOLICY_0PRI, "discard-node", -EINVAL, 0, NULL},
	{"0pri consensus", SBPOLICY_0PRI, "consensus", -EINVAL, 0, NULL},
	{"0pri discard-secondary", SBPOLICY_0PRI, "discard-secondary", -EINVAL, 0, NULL},
	{"0pri call-pri-lost-after-sb", SBPOLICY_0PRI, "call-pri-lost-after-sb", -EINVAL, 0,
	 NULL},
	{"0pri violently-as0p", SBPOLICY_0PRI, "violently-as0p", -EINVAL, 0, NULL},
	{"0pri upper case", SBPOLICY_0PRI, "Disconnect", -EINVAL, 0, NULL},
	{"0pri trailing blank", SBPOLICY_0PRI, "disconnect ", -EINVAL, 0, NULL},
	{"0pri prefix only", SBPOLICY_0PRI, "discard-least", -EINVAL, 0, NULL},
	{"0pri empty", SBPOLICY_0PRI, "", -EINVAL, 0, NULL},
	{"1pri disconnect", SBPOLICY_1PRI, "disconnect", 0, SBPOLICY_DISCONNECT, NULL},
	{"1pri consensus", SBPOLICY_1PRI, "consensus", 0, SBPOLICY_CONSENSUS, NULL},
	{"1pri violently-as0p", SBPOLICY_1PRI, "violently-as0p", 0, SBPOLICY_VIOLENTLY, NULL},
	{"1pri discard-secondary", SBPOLICY_1PRI, "discard-secondary", 0,
	 SBPOLICY_DISCARD_SECONDARY, NULL},
	{"1pri call-pri-lost-after-sb", SBPOLICY_1PRI, "call-pri-lost-after-sb", 0,
	 SBPOLICY_CALL_HELPER, NULL},
	{"1pri least", SBPOLICY_1PRI, "discard-least-changes", -EINVAL, 0, NULL},
	{"1pri node", SBPOLICY_1PRI, "discard-node-alpha", -EINVAL, 0, NULL},
	{"1pri violently (rr word)", SBPOLICY_1PRI, "violently", -EINVAL, 0, NULL},
	{"1pri call-pri-lost (rr word)", SBPOLICY_1PRI, "call-pri-lost", -EINVAL, 0, NULL},
	{"2pri disconnect", SBPOLICY_2PRI, "disconnect", 0, SBPOLICY_DISCONNECT, NULL},
	{"2pri violently-as0p", SBPOLICY_2PRI, "violently-as0p", 0, SBPOLICY_VIOLENTLY, NULL},
	{"2pri call-pri-lost-after-sb", SBPOLICY_2PRI, "call-pri-lost-after-sb", 0,
	 SBPOLICY_CALL_HELPER, NULL},
	{"2pri consensus", SBPOLICY_2PRI, "consensus", -EINVAL, 0, NULL},
	{"2pri discard-secondary", SBPOLICY_2PRI, "discard-secondary", -EINVAL, 0, NULL},
	{"2pri younger", SBPOLICY_2PRI, "discard-younger-primary", -EINVAL, 0, NULL},
	{"rr disconnect", SBPOLICY_RR_CONFLICT, "disconnect", 0, SBPOLICY_DISCONNECT, NULL},
	{"rr call-pri-lost", SBPOLICY_RR_CONFLICT, "call-pri-lost", 0, SBPOLICY_CALL_HELPER,
	 NULL},
	{"rr violently", SBPOLICY_RR_CONFLICT, "violently", 0, SBPOLICY_VIOLENTLY, NULL},
	{"rr call-pri-lost-after-sb", SBPOLICY_RR_CONFLICT, "call-pri-lost-after-sb", -EINVAL,
	 0, NULL},
	{"rr violently-as0p", SBPOLICY_RR_CONFLICT, "violently-as0p", -EINVAL, 0, NULL},
	{"rr consensus", SBPOLICY_RR_CONFLICT, "consensus", -EINVAL, 0, NULL},
};

static void test_parse(void **state)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(parse_rows); i++) {
		const struct parse_row *t = &parse_rows[i];
		enum sbpolicy p = (enum sbpolicy)99;
		char node[SBPOLICY_NODE_MAX] = "untouched";
		int rc = sbpolicy_parse(t->slot, t->text, &p, node, sizeof(node));

		if (rc != t->rc)
			fail_msg("%s: '%s' gave %d, want %d", t->name, t->text, rc, t->rc);
		if (rc == 0 && p != t->want)
			fail_msg("%s: '%s' gave %d, want %d", t->name, t->text, p, t->want);
		if (rc == 0 && t->node && strcmp(node, t->node))
			fail_msg("%s: node '%s', want '%s'", t->name, node, t->node);
		if (rc != 0 && p != (enum sbpolicy)99)
			fail_msg("%s: output written on failure", t->name);
	}
}

static void test_parse_wrappers(void **state)
{
	enum sbpolicy p;
	char node[8];
	char longname[SBPOLICY_NODE_MAX + 32];

	assert_int_equal(sbpolicy_parse_0pri("discard-node-beta", &p, node, sizeof(node)), 0);
	assert_int_equal(p, SBPOLICY_DISCARD_NODE);
	assert_string_equal(node, "beta");
	/* The name must fit the buffer, with its NUL. */
	assert_int_equal(sbpolicy_parse_0pri("discard-node-1234567", &p, node, sizeof(node)), 0);
	assert_int_equal(sbpolicy_parse_0pri("discard-node-12345678", &p, node, sizeof(node)),
			 -ENAMETOOLONG);
	assert_int_equal(sbpolicy_parse_0pri("discard-node-beta", &p, NULL, 0), -EINVAL);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	memcpy(longname, "discard-node-", 13);
	assert_int_equal(sbpolicy_parse_0pri(longname, &p, node, sizeof(node)), -ENAMETOOLONG);

	assert_int_equal(sbpolicy_parse_1pri("consensus", &p), 0);
	assert_int_equal(p, SBPOLICY_CONSENSUS);
	assert_int_equal(sbpolicy_parse_2pri("violently-as0p", &p), 0);
	assert_int_equal(p, SBPOLICY_VIOLENTLY);
	assert_int_equal(sbpolicy_parse_2pri("consensus", &p), -EINVAL);
	assert_int_equal(sbpolicy_parse_rr_conflict("call-pri-lost", &p), 0);
	assert_int_equal(p, SBPOLICY_CALL_HELPER);
	assert_int_equal(sbpolicy_parse_1pri(NULL, &p), -EINVAL);
	assert_int_equal(sbpolicy_parse_1pri("consensus", NULL), -EINVAL);
	assert_int_equal(sbpolicy_parse((enum sbpolicy_slot)7, "disconnect", &p, NULL, 0),
			 -EINVAL);
}

/* Every word a slot accepts parses back to the value it names. */
static void test_names(void **state)
{
	static const enum sbpolicy_slot slots[] = {SBPOLICY_0PRI, SBPOLICY_1PRI, SBPOLICY_2PRI,
						   SBPOLICY_RR_CONFLICT};
	unsigned int s, v, accepted = 0;

	for (s = 0; s < ARRAY_SIZE(slots); s++) {
		for (v = 0; v <= SBPOLICY_VIOLENTLY; v++) {
			const char *word = sbpolicy_name((enum sbpolicy)v, slots[s]);
			enum sbpolicy p;

			if (sbpolicy_parse(slots[s], word, &p, NULL, 0) != 0)
				continue;
			accepted++;
			if (p != (enum sbpolicy)v)
				fail_msg("%s: '%s' parses as %d, not %u",
					 sbpolicy_slot_name(slots[s]), word, p, v);
		}
	}
	/* 7 + 5 + 3 + 3 words (discard-node-NAME is not a fixed word) */
	assert_int_equal(accepted, 18);
	assert_string_equal(sbpolicy_name(SBPOLICY_CALL_HELPER, SBPOLICY_1PRI),
			    "call-pri-lost-after-sb");
	assert_string_equal(sbpolicy_name(SBPOLICY_CALL_HELPER, SBPOLICY_RR_CONFLICT),
			    "call-pri-lost");
	assert_string_equal(sbpolicy_name(SBPOLICY_VIOLENTLY, SBPOLICY_RR_CONFLICT), "violently");
	assert_string_equal(sbpolicy_name((enum sbpolicy)42, SBPOLICY_0PRI), "?");
	assert_string_equal(sbpolicy_slot_name(SBPOLICY_2PRI), "after-sb-2pri");
	assert_string_equal(sbpolicy_slot_name((enum sbpolicy_slot)9), "?");
}

static void test_localize_mirror(void **state)
{
	assert_int_equal(sbpolicy_localize(SBPOLICY_DISCARD_NODE, "alpha", "alpha"),
			 SBPOLICY_DISCARD_LOCAL);
	assert_int_equal(sbpolicy_localize(SBPOLICY_DISCARD_NODE, "alpha", "beta"),
			 SBPOLICY_DISCARD_REMOTE);
	assert_int_equal(sbpolicy_localize(SBPOLICY_DISCARD_LEAST_CHG, "alpha", "alpha"),
			 SBPOLICY_DISCARD_LEAST_CHG);
	assert_int_equal(sbpolicy_mirror(SBPOLICY_DISCARD_LOCAL), SBPOLICY_DISCARD_REMOTE);
	assert_int_equal(sbpolicy_mirror(SBPOLICY_DISCARD_REMOTE), SBPOLICY_DISCARD_LOCAL);
	assert_int_equal(sbpolicy_mirror(SBPOLICY_CONSENSUS), SBPOLICY_CONSENSUS);
	/* What alpha sends is what beta must have after mirroring. */
	assert_int_equal(sbpolicy_mirror(sbpolicy_localize(SBPOLICY_DISCARD_NODE, "alpha",
							   "alpha")),
			 sbpolicy_localize(SBPOLICY_DISCARD_NODE, "alpha", "beta"));
}

/* ---------------------------------------------------------------- decisions */

struct row {
	const char *name;
	enum sbpolicy p0, p1, p2;
	const char *node;       /* discard-node-NAME */
	bool sp, pp;            /* Primary now: self, peer */
	bool swas, pwas;        /* Primary at the split (bitmap UUID bit 0) */
	uint64_t chs, chp;      /* changed blocks */
	bool rc;                /* resolve-conflicts */
	bool can_demote;
	int want;
	bool demote, handler, cfgerr;
	const char *why;        /* substring of the reason, or NULL */
};

#define DISC SBPOLICY_DISCONNECT
#define YNG  SBPOLICY_DISCARD_YOUNGER_PRI
#define OLD  SBPOLICY_DISCARD_OLDER_PRI
#define ZERO SBPOLICY_DISCARD_ZERO_CHG
#define LEAST SBPOLICY_DISCARD_LEAST_CHG
#define LOCAL SBPOLICY_DISCARD_LOCAL
#define REMOTE SBPOLICY_DISCARD_REMOTE
#define CONS SBPOLICY_CONSENSUS
#define DSEC SBPOLICY_DISCARD_SECONDARY
#define CALL SBPOLICY_CALL_HELPER
#define VIOL SBPOLICY_VIOLENTLY
#define NODE SBPOLICY_DISCARD_NODE

/* A 0pri row: policy, was-primary self/peer, changes self/peer, tie bit. */
#define R0(n, p, sw, pw, cs, cp, r, w, y) \
	{.name = n, .p0 = p, .swas = sw, .pwas = pw, .chs = cs, .chp = cp, .rc = r, .want = w, \
	 .why = y}

static const struct row rows_0pri[] = {
	R0("disconnect", DISC, 0, 0, 3, 7, 0, -100, "no automatic recovery"),
	R0("disconnect, peer older", DISC, 0, 1, 0, 0, 1, -100, NULL),
	/* discard-younger-primary */
	R0("younger: self younger", YNG, 0, 1, 9, 1, 0, -1, "became Primary later"),
	R0("younger: peer younger", YNG, 1, 0, 1, 9, 1, 1, "this node was Primary"),
	R0("younger: neither, self fewer", YNG, 0, 0, 3, 7, 0, -1, "neither was Primary"),
	R0("younger: both, self more", YNG, 1, 1, 7, 3, 1, 1, "both were Primary"),
	R0("younger: both, equal, tie set", YNG, 1, 1, 4, 4, 1, -1, "tie broken"),
	R0("younger: both, equal, tie clear", YNG, 1, 1, 4, 4, 0, 1, "tie broken"),
	R0("younger: neither, self zero", YNG, 0, 0, 0, 5, 0, -1, "this node changed no block"),
	R0("younger: neither, peer zero", YNG, 0, 0, 5, 0, 1, 1, "the peer changed no block"),
	R0("younger: neither, both zero, tie set", YNG, 0, 0, 0, 0, 1, -1, "neither node"),
	R0("younger: neither, both zero, tie clear", YNG, 0, 0, 0, 0, 0, 1, "neither node"),
	/* discard-older-primary */
	R0("older: self older", OLD, 1, 0, 1, 9, 0, -1, "this node was Primary at the split"),
	R0("older: peer older", OLD, 0, 1, 9, 1, 1, 1, "the peer was Primary"),
	R0("older: both, self fewer", OLD, 1, 1, 3, 7, 1, -1, "using discard-least-changes"),
	R0("older: neither, self more", OLD, 0, 0, 7, 3, 0, 1, NULL),
	R0("older: neither, equal, tie set", OLD, 0, 0, 4, 4, 1, -1, NULL),
	R0("older: neither, equal, tie clear", OLD, 0, 0, 4, 4, 0, 1, NULL),
	R0("older: both, peer zero", OLD, 1, 1, 5, 0, 0, 1, NULL),
	/* discard-zero-changes */
	R0("zero: both zero, tie set", ZERO, 0, 0, 0, 0, 1, -1, "tie broken"),
	R0("zero: both zero, tie clear", ZERO, 0, 0, 0, 0, 0, 1, "tie broken"),
	R0("zero: self zero", ZERO, 0, 0, 0, 5, 0, -1, NULL),
	R0("zero: peer zero", ZERO, 0, 0, 5, 0, 1, 1, NULL),
	R0("zero: both changed, self fewer", ZERO, 0, 0, 3, 7, 0, -100, "both nodes changed"),
	R0("zero: both changed, self more", ZERO, 0, 0, 7, 3, 1, -100, NULL),
	R0("zero: both changed, equal", ZERO, 0, 0, 4, 4, 1, -100, NULL),
	R0("zero: ignores primary age", ZERO, 0, 1, 3, 7, 0, -100, NULL),
	/* discard-least-changes */
	R0("least: self fewer", LEAST, 0, 0, 3, 7, 0, -1, "this node changed 3 blocks, the peer 7"),
	R0("least: self more", LEAST, 0, 0, 7, 3, 1, 1, "the peer's changes are discarded"),
	R0("least: equal, tie set", LEAST, 0, 0, 4, 4, 1, -1, "resolve-conflicts bit (set)"),
	R0("least: equal, tie clear", LEAST, 0, 0, 4, 4, 0, 1, "resolve-conflicts bit (clear)"),
	R0("least: self zero", LEAST, 0, 0, 0, 5, 1, -1, NULL),
	R0("least: peer zero", LEAST, 0, 0, 5, 0, 0, 1, NULL),
	R0("least: ignores primary age", LEAST, 1, 0, 3, 7, 0, -1, NULL),
	R0("least: large counts", LEAST, 0, 0, 1ULL << 40, (1ULL << 40) + 1, 0, -1, NULL),
	/* discard-local / discard-remote (drbdadm's form of discard-node) */
	R0("local: fewer", LOCAL, 0, 0, 3, 7, 0, -1, NULL),
	R0("local: more, older", LOCAL, 1, 0, 7, 3, 1, -1, NULL),
	R0("remote: fewer, younger", REMOTE, 0, 1, 3, 7, 1, 1, NULL),
	R0("remote: more", REMOTE, 0, 0, 7, 3, 0, 1, NULL),
};

static const struct row rows_node[] = {
	{.name = "node: this node", .p0 = NODE, .node = "alpha", .chs = 7, .chp = 3,
	 .want = -1, .why = "this node is alpha"},
	{.name = "node: the peer", .p0 = NODE, .node = "beta", .chs = 3, .chp = 7, .rc = true,
	 .want = 1, .why = "the peer is beta"},
	{.name = "node: unknown name", .p0 = NODE, .node = "gamma", .want = -100,
	 .cfgerr = true},
	{.name = "node: empty name", .p0 = NODE, .node = "", .want = -100, .cfgerr = true},
	{.name = "node: 1pri violently", .p0 = NODE, .p1 = VIOL, .sp = true, .node = "alpha",
	 .want = -1},
	{.name = "node: 2pri call, demote", .p0 = NODE, .p2 = CALL, .sp = true, .pp = true,
	 .node = "alpha", .can_demote = true, .want = -1, .demote = true},
};

/* 1pri rows. The 0pri answer is steered by discard-least-changes: self
 * fewer (3/7) -> -1, self more (7/3) -> 1, or by disconnect -> -100. */
#define R1(n, p, sp_, cs, cp, dem, w, d, h, y) \
	{.name = n, .p0 = LEAST, .p1 = p, .sp = sp_, .pp = !(sp_), .chs = cs, .chp = cp,   \
	 .can_demote = dem, .want = w, .demote = d, .handler = h, .why = y}

static const struct row rows_1pri[] = {
	R1("disconnect, self primary", DISC, 1, 7, 3, 1, -100, 0, 0, "no automatic"),
	R1("disconnect, peer primary", DISC, 0, 3, 7, 1, -100, 0, 0, NULL),
	R1("consensus: primary keeps", CONS, 1, 7, 3, 0, 1, 0, 0, NULL),
	R1("consensus: primary would lose", CONS, 1, 3, 7, 0, -100, 0, 0, "no consensus"),
	R1("consensus: secondary loses", CONS, 0, 3, 7, 0, -1, 0, 0, NULL),
	R1("consensus: secondary would win", CONS, 0, 7, 3, 0, -100, 0, 0, "no consensus"),
	R1("consensus: equal, tie favours the secondary", CONS, 0, 4, 4, 0, -100, 0, 0, NULL),
	R1("violently: primary loses", VIOL, 1, 3, 7, 0, -1, 0, 0, NULL),
	R1("violently: primary keeps", VIOL, 1, 7, 3, 0, 1, 0, 0, NULL),
	R1("violently: secondary wins", VIOL, 0, 7, 3, 0, 1, 0, 0, NULL),
	R1("violently: secondary loses", VIOL, 0, 3, 7, 0, -1, 0, 0, NULL),
	R1("discard-secondary: primary fewer", DSEC, 1, 3, 7, 0, 1, 0, 0, "the Primary"),
	R1("discard-secondary: primary more", DSEC, 1, 7, 3, 0, 1, 0, 0, NULL),
	R1("discard-secondary: secondary more", DSEC, 0, 7, 3, 0, -1, 0, 0, "the Secondary"),
	R1("discard-secondary: secondary fewer", DSEC, 0, 3, 7, 0, -1, 0, 0, NULL),
	R1("call: primary loses, demotes", CALL, 1, 3, 7, 1, -1, 1, 0, "gives up the Primary"),
	R1("call: primary loses, cannot demote", CALL, 1, 3, 7, 0, -100, 0, 1,
	   "pri-lost-after-sb"),
	R1("call: primary keeps", CALL, 1, 7, 3, 0, 1, 0, 0, NULL),
	R1("call: secondary loses", CALL, 0, 3, 7, 0, -1, 0, 0, NULL),
	R1("call: secondary wins", CALL, 0, 7, 3, 1, 1, 0, 0, NULL),
	{.name = "consensus: 0pri disconnect", .p0 = DISC, .p1 = CONS, .sp = true, .chs = 7,
	 .chp = 3, .want = -100},
	{.name = "violently: 0pri disconnect", .p0 = DISC, .p1 = VIOL, .pp = true, .want = -100},
	{.name = "call: 0pri disconnect", .p0 = DISC, .p1 = CALL, .sp = true, .can_demote = true,
	 .want = -100},
	{.name = "consensus: younger primary discarded", .p0 = YNG, .p1 = CONS, .sp = true,
	 .swas = false, .pwas = true, .want = -100},
	{.name = "consensus: older secondary discarded", .p0 = OLD, .p1 = CONS, .pp = true,
	 .swas = true, .pwas = false, .want = -1},
	{.name = "consensus: zero changes on secondary", .p0 = ZERO, .p1 = CONS, .pp = true,
	 .chs = 0, .chp = 5, .want = -1},
	{.name = "consensus: 0pri config error", .p0 = CONS, .p1 = CONS, .sp = true,
	 .want = -100, .cfgerr = true, .why = "not an after-sb-0pri"},
};

#define R2(n, p, cs, cp, dem, w, d, h) \
	{.name = n, .p0 = LEAST, .p2 = p, .sp = true, .pp = true, .chs = cs, .chp = cp, \
	 .can_demote = dem, .want = w, .demote = d, .handler = h}

static const struct row rows_2pri[] = {
	R2("disconnect, fewer", DISC, 3, 7, 1, -100, 0, 0),
	R2("disconnect, more", DISC, 7, 3, 1, -100, 0, 0),
	R2("violently: fewer", VIOL, 3, 7, 0, -1, 0, 0),
	R2("violently: more", VIOL, 7, 3, 0, 1, 0, 0),
	R2("violently: fewer, demotable: no demotion", VIOL, 3, 7, 1, -1, 0, 0),
	R2("call: fewer, demotes", CALL, 3, 7, 1, -1, 1, 0),
	R2("call: fewer, cannot demote", CALL, 3, 7, 0, -100, 0, 1),
	R2("call: more", CALL, 7, 3, 0, 1, 0, 0),
	R2("call: equal, tie clear", CALL, 4, 4, 0, 1, 0, 0),
	{.name = "call: equal, tie set, demotes", .p0 = LEAST, .p2 = CALL, .sp = true,
	 .pp = true, .chs = 4, .chp = 4, .rc = true, .can_demote = true, .want = -1,
	 .demote = true},
	{.name = "violently: 0pri disconnect", .p0 = DISC, .p2 = VIOL, .sp = true, .pp = true,
	 .want = -100},
	{.name = "violently: older primary", .p0 = OLD, .p2 = VIOL, .sp = true, .pp = true,
	 .swas = true, .pwas = false, .want = -1},
};

/* Values each option refuses: Configuration error, -100. */
static const struct row rows_cfgerr[] = {
	{.name = "0pri consensus", .p0 = CONS, .want = -100, .cfgerr = true},
	{.name = "0pri discard-secondary", .p0 = DSEC, .want = -100, .cfgerr = true},
	{.name = "0pri call-pri-lost-after-sb", .p0 = CALL, .want = -100, .cfgerr = true},
	{.name = "0pri violently-as0p", .p0 = VIOL, .want = -100, .cfgerr = true},
	{.name = "1pri younger", .p1 = YNG, .sp = true, .want = -100, .cfgerr = true},
	{.name = "1pri older", .p1 = OLD, .pp = true, .want = -100, .cfgerr = true},
	{.name = "1pri zero", .p1 = ZERO, .sp = true, .want = -100, .cfgerr = true},
	{.name = "1pri least", .p1 = LEAST, .sp = true, .want = -100, .cfgerr = true},
	{.name = "1pri local", .p1 = LOCAL, .sp = true, .want = -100, .cfgerr = true},
	{.name = "1pri remote", .p1 = REMOTE, .pp = true, .want = -100, .cfgerr = true},
	{.name = "1pri node", .p1 = NODE, .pp = true, .want = -100, .cfgerr = true},
	{.name = "2pri younger", .p2 = YNG, .sp = true, .pp = true, .want = -100, .cfgerr = true},
	{.name = "2pri older", .p2 = OLD, .sp = true, .pp = true, .want = -100, .cfgerr = true},
	{.name = "2pri zero", .p2 = ZERO, .sp = true, .pp = true, .want = -100, .cfgerr = true},
	{.name = "2pri least", .p2 = LEAST, .sp = true, .pp = true, .want = -100, .cfgerr = true},
	{.name = "2pri local", .p2 = LOCAL, .sp = true, .pp = true, .want = -100, .cfgerr = true},
	{.name = "2pri remote", .p2 = REMOTE, .sp = true, .pp = true, .want = -100,
	 .cfgerr = true},
	{.name = "2pri consensus", .p2 = CONS, .sp = true, .pp = true, .want = -100,
	 .cfgerr = true},
	{.name = "2pri discard-secondary", .p2 = DSEC, .sp = true, .pp = true, .want = -100,
	 .cfgerr = true},
	{.name = "2pri call with 0pri error", .p0 = VIOL, .p2 = CALL, .sp = true, .pp = true,
	 .can_demote = true, .want = -100, .cfgerr = true},
};

static void fill(const struct row *t, bool mirror, struct sbpolicy_conf *c,
		 struct sbpolicy_input *in)
{
	sbpolicy_conf_init(c);
	c->after_sb_0pri = t->p0;
	c->after_sb_1pri = t->p1;
	c->after_sb_2pri = t->p2;
	if (t->node)
		snprintf(c->node, sizeof(c->node), "%s", t->node);
	memset(in, 0, sizeof(*in));
	in->self_primary = mirror ? t->pp : t->sp;
	in->peer_primary = mirror ? t->sp : t->pp;
	in->self_was_primary = mirror ? t->pwas : t->swas;
	in->peer_was_primary = mirror ? t->swas : t->pwas;
	in->ch_self = mirror ? t->chp : t->chs;
	in->ch_peer = mirror ? t->chs : t->chp;
	in->resolve_conflicts = mirror ? !t->rc : t->rc;
	in->can_demote = t->can_demote;
	in->self_name = mirror ? "beta" : "alpha";
	in->peer_name = mirror ? "alpha" : "beta";
	if (mirror)
		c->after_sb_0pri = sbpolicy_mirror(t->p0);
}

static void run_rows(const struct row *rows, size_t n, int primaries)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct row *t = &rows[i];
		struct sbpolicy_conf c;
		struct sbpolicy_input in;
		struct sbpolicy_result r;

		fill(t, false, &c, &in);
		assert_int_equal(sbpolicy_decide(&c, &in, &r), 0);
		if (r.hg != t->want)
			fail_msg("%s: hg %d, want %d (%s)", t->name, r.hg, t->want, r.reason);
		if (primaries >= 0 && r.primaries != primaries)
			fail_msg("%s: %d primaries, want %d", t->name, r.primaries, primaries);
		if (r.demote != t->demote)
			fail_msg("%s: demote %d, want %d (%s)", t->name, r.demote, t->demote,
				 r.reason);
		if (r.call_pri_lost_after_sb != t->handler)
			fail_msg("%s: pri-lost-after-sb %d, want %d (%s)", t->name,
				 r.call_pri_lost_after_sb, t->handler, r.reason);
		if (r.config_error != t->cfgerr)
			fail_msg("%s: config error %d, want %d (%s)", t->name, r.config_error,
				 t->cfgerr, r.reason);
		if (t->why && !strstr(r.reason, t->why))
			fail_msg("%s: reason '%s' lacks '%s'", t->name, r.reason, t->why);
		if (r.reason[0] == '\0')
			fail_msg("%s: no reason given", t->name);
	}
}

static void test_0pri(void **state)
{
	run_rows(rows_0pri, ARRAY_SIZE(rows_0pri), 0);
}

static void test_node(void **state)
{
	run_rows(rows_node, ARRAY_SIZE(rows_node), -1);
}

static void test_1pri(void **state)
{
	run_rows(rows_1pri, ARRAY_SIZE(rows_1pri), 1);
}

static void test_2pri(void **state)
{
	run_rows(rows_2pri, ARRAY_SIZE(rows_2pri), 2);
}

static void test_config_errors(void **state)
{
	run_rows(rows_cfgerr, ARRAY_SIZE(rows_cfgerr), -1);
}

/* The applied option and value are reported. */
static void test_applied(void **state)
{
	struct sbpolicy_conf c;
	struct sbpolicy_input in = {.self_primary = true, .ch_self = 1, .ch_peer = 2};
	struct sbpolicy_result r;

	sbpolicy_conf_init(&c);
	c.after_sb_0pri = LEAST;
	c.after_sb_1pri = VIOL;
	assert_int_equal(sbpolicy_decide(&c, &in, &r), 0);
	assert_int_equal(r.primaries, 1);
	assert_int_equal(r.policy, VIOL);
	assert_non_null(strstr(r.reason, "after-sb-1pri violently-as0p: after-sb-0pri "
					 "discard-least-changes: "));
	/* Defaults: disconnect everywhere. */
	sbpolicy_conf_init(&c);
	assert_int_equal(c.after_sb_0pri, DISC);
	assert_int_equal(c.after_sb_1pri, DISC);
	assert_int_equal(c.after_sb_2pri, DISC);
	assert_string_equal(c.node, "");
}

static void test_invalid(void **state)
{
	struct sbpolicy_conf c;
	struct sbpolicy_input in = {0};
	struct sbpolicy_result r;

	sbpolicy_conf_init(&c);
	assert_int_equal(sbpolicy_decide(NULL, &in, &r), -EINVAL);
	assert_int_equal(sbpolicy_decide(&c, NULL, &r), -EINVAL);
	assert_int_equal(sbpolicy_decide(&c, &in, NULL), -EINVAL);
	c.after_sb_1pri = (enum sbpolicy)12;
	assert_int_equal(sbpolicy_decide(&c, &in, &r), -EINVAL);
}

/*
 * Both nodes of every combination: policies (0pri including the
 * node-specific ones), who is Primary now and was at the split, change
 * orderings, both tie-break bits. Either both give up, or exactly one is
 * source and the other target. A node that runs pri-lost-after-sb drops
 * the connection, so those pairs are not compared. consensus and
 * discard-secondary never discard the Primary's data.
 */
static void test_both_nodes_agree(void **state)
{
	static const enum sbpolicy p0s[] = {DISC, YNG, OLD, ZERO, LEAST, LOCAL, REMOTE, NODE};
	static const enum sbpolicy p1s[] = {DISC, CONS, VIOL, DSEC, CALL};
	static const enum sbpolicy p2s[] = {DISC, VIOL, CALL};
	static const uint64_t chs[][2] = {{0, 0}, {0, 5}, {5, 0}, {3, 7}, {7, 3}, {4, 4}};
	unsigned int a, b, c, roles, was, ch, bits, checked = 0, resolved = 0;

	for (a = 0; a < ARRAY_SIZE(p0s); a++)
	for (b = 0; b < ARRAY_SIZE(p1s); b++)
	for (c = 0; c < ARRAY_SIZE(p2s); c++)
	for (roles = 0; roles < 4; roles++)
	for (was = 0; was < 4; was++)
	for (ch = 0; ch < ARRAY_SIZE(chs); ch++)
	for (bits = 0; bits < 4; bits++) {
		struct row t = {
			.name = "pair", .p0 = p0s[a], .p1 = p1s[b], .p2 = p2s[c],
			.node = (bits & 2) ? "alpha" : "beta",
			.sp = roles & 1, .pp = (roles & 2) != 0,
			.swas = was & 1, .pwas = (was & 2) != 0,
			.chs = chs[ch][0], .chp = chs[ch][1], .rc = bits & 1,
			.can_demote = true,
		};
		struct sbpolicy_conf cs, cp;
		struct sbpolicy_input is, ip;
		struct sbpolicy_result rs, rp;

		fill(&t, false, &cs, &is);
		fill(&t, true, &cp, &ip);
		assert_int_equal(sbpolicy_decide(&cs, &is, &rs), 0);
		assert_int_equal(sbpolicy_decide(&cp, &ip, &rp), 0);
		checked++;
		if (rs.call_pri_lost_after_sb || rp.call_pri_lost_after_sb)
			continue;
		if (rs.hg == -100 && rp.hg == -100)
			continue;
		if (!((rs.hg == 1 && rp.hg == -1) || (rs.hg == -1 && rp.hg == 1)))
			fail_msg("p0 %s p1 %s p2 %s roles %u was %u ch %llu/%llu rc %u: "
				 "alpha %d (%s), beta %d (%s)",
				 sbpolicy_name(t.p0, SBPOLICY_0PRI),
				 sbpolicy_name(t.p1, SBPOLICY_1PRI),
				 sbpolicy_name(t.p2, SBPOLICY_2PRI), roles, was,
				 (unsigned long long)t.chs, (unsigned long long)t.chp, bits & 1,
				 rs.hg, rs.reason, rp.hg, rp.reason);
		resolved++;
		if (rs.primaries == 1 && (t.p1 == CONS || t.p1 == DSEC) &&
		    ((t.sp && rs.hg != 1) || (!t.sp && rs.hg != -1)))
			fail_msg("%s discarded the Primary's data: %s",
				 sbpolicy_name(t.p1, SBPOLICY_1PRI), rs.reason);
		/* The loser that is Primary gives up the role first. */
		if (rs.demote && !(t.sp && rs.hg == -1))
			fail_msg("demote without losing as Primary: %s", rs.reason);
	}
	assert_int_equal(checked, 8u * 5 * 3 * 4 * 4 * 6 * 4);
	assert_true(resolved > checked / 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_wrappers),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_localize_mirror),
		cmocka_unit_test(test_0pri),
		cmocka_unit_test(test_node),
		cmocka_unit_test(test_1pri),
		cmocka_unit_test(test_2pri),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_applied),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_both_nodes_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
