/*
 * Unit tests for uuidcmp: every rule of uuid_compare (with the role bit
 * set where the rule must ignore it, and the tie-break both ways), the
 * fix-ups rules 34/35/51/71 return, and every step of the sync handshake,
 * as tables. Each compare row is also run from the peer's side, which
 * must reach the mirrored answer by the mirrored rule.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "uuidcmp.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define A 0x1111111111111110ULL
#define B 0x2222222222222220ULL
#define C 0x3333333333333330ULL
#define D 0x4444444444444440ULL
#define E 0x5555555555555550ULL
#define F 0x6666666666666660ULL
#define G 0x7777777777777770ULL
#define H 0x8888888888888880ULL
#define JC GI_JUST_CREATED
#define OFF GI_NEW_BM_OFFSET

#define U(c, b, h0, h1) {{(c), (b), (h0), (h1)}}

/* ---------------------------------------------------------------- compare */

struct crow {
	const char *name;
	struct gi s, p;
	bool scrash, pcrash; /* crashed-primary flags */
	bool spri, ppri;     /* Primary now */
	bool rc;             /* resolve-conflicts */
	int hg, rule;
	bool fix_self, fix_peer;
	struct gi s_after, p_after; /* when fixed */
	bool asym;                  /* the peer's view is not the mirror */
};

static const struct crow crows[] = {
	{"10 both just created", U(JC, 0, 0, 0), U(JC, 0, 0, 0), .hg = 0, .rule = 10},
	{"10 role bit ignored", U(JC | 1, 0, 0, 0), U(JC, 0, 0, 0), .hg = 0, .rule = 10},
	{"20 self just created", U(JC, 0, 0, 0), U(A, 0, 0, 0), .hg = -2, .rule = 20},
	{"20 self zero", U(0, 0, 0, 0), U(A | 1, 0, C, 0), .hg = -2, .rule = 20},
	{"20 self just created, peer zero", U(JC, 0, 0, 0), U(0, 0, 0, 0), .hg = -2,
	 .rule = 20},
	{"20 both zero", U(0, 0, 0, 0), U(0, 0, 0, 0), .hg = -2, .rule = 20, .asym = true},
	{"30 peer just created", U(A, 0, 0, 0), U(JC, 0, 0, 0), .hg = 2, .rule = 30},
	{"30 peer zero", U(A | 1, B, 0, 0), U(0, 0, 0, 0), .hg = 2, .rule = 30},
	{"30 peer just created, role bit", U(A, 0, 0, 0), U(JC | 1, 0, 0, 0), .hg = 2,
	 .rule = 30},
	{"34 missed resync finished", U(A, B, C, 0), U(A, 0, B, C), .hg = 1, .rule = 34,
	 .fix_self = true, .s_after = U(A, 0, B, C)},
	{"34 role bits kept, ignored", U(A | 1, B | 1, C, 0), U(A, 0, B, C | 1), .hg = 1,
	 .rule = 34, .fix_self = true, .s_after = U(A | 1, 0, B | 1, C)},
	{"36 peer failed to store sync UUID", U(A, B, C, 0), U(A, 0, D, E), .hg = 1, .rule = 36},
	{"36 history half matches", U(A, B, C, 0), U(A, 0, B, D), .hg = 1, .rule = 36},
	{"35 peer missed resync finished", U(A, 0, B, C), U(A, B, C, D), .hg = -1, .rule = 35,
	 .fix_peer = true, .p_after = U(A, 0, B, C)},
	{"35 role bits ignored", U(A, 0, B | 1, C), U(A | 1, B, C | 1, D), .hg = -1, .rule = 35,
	 .fix_peer = true, .p_after = U(A | 1, 0, B, C | 1)},
	{"37 failed to store sync UUID", U(A, 0, D, E), U(A, B, C, 0), .hg = -1, .rule = 37},
	{"40 replication hiccup", U(A, 0, C, D), U(A | 1, 0, C, D), .hg = 0, .rule = 40},
	{"40 both bitmap UUIDs set", U(A, B, C, D), U(A, E, C, D), .hg = 0, .rule = 40},
	{"40 primaries but no crash", U(A, 0, C, 0), U(A, 0, C, 0), .spri = true, .ppri = true,
	 .hg = 0, .rule = 40},
	{"40 self crashed primary", U(A, 0, C, 0), U(A, 0, C, 0), .scrash = true, .hg = 1,
	 .rule = 40},
	{"40 peer crashed primary", U(A, 0, C, 0), U(A, 0, C, 0), .pcrash = true, .hg = -1,
	 .rule = 40},
	{"40 both crashed, tie set", U(A, 0, C, 0), U(A, 0, C, 0), .scrash = true,
	 .pcrash = true, .rc = true, .hg = -1, .rule = 40},
	{"40 both crashed, tie clear", U(A, 0, C, 0), U(A, 0, C, 0), .scrash = true,
	 .pcrash = true, .rc = false, .hg = 1, .rule = 40},
	{"41 both primary", U(A | 1, 0, C, 0), U(A | 1, 0, C, 0), .scrash = true, .spri = true,
	 .ppri = true, .hg = -100, .rule = 41},
	{"41 self primary, peer crashed", U(A | 1, 0, C, 0), U(A, 0, C, 0), .pcrash = true,
	 .spri = true, .hg = 1, .rule = 41},
	{"41 peer primary, self crashed", U(A, 0, C, 0), U(A | 1, 0, C, 0), .scrash = true,
	 .ppri = true, .hg = -1, .rule = 41},
	{"50 own current is peer bitmap", U(A, 0, C, 0), U(B, A, C, 0), .hg = -1, .rule = 50},
	{"50 role bit ignored", U(A | 1, 0, C, 0), U(B, A | 1, C, 0), .hg = -1, .rule = 50},
	{"51 lost sync UUID", U(A, 0, C, 0), U(B, A + OFF, A, D), .hg = -1, .rule = 51,
	 .fix_peer = true, .p_after = U(B, A, D, D)},
	{"51 role bits ignored", U(A | 1, 0, C, 0), U(B, (A + OFF) | 1, A | 1, D), .hg = -1,
	 .rule = 51, .fix_peer = true, .p_after = U(B, A | 1, D, D)},
	{"60 not 51 without the offset", U(A, 0, C, 0), U(B, E, A, D), .hg = -2, .rule = 60},
	{"60 own current in peer history1", U(A, 0, 0, 0), U(B, 0, C, A | 1), .hg = -2,
	 .rule = 60},
	{"70 own bitmap is peer current", U(A, B, C, 0), U(B, 0, C, 0), .hg = 1, .rule = 70},
	{"70 role bit ignored", U(A, B | 1, C, 0), U(B | 1, 0, C, 0), .hg = 1, .rule = 70},
	{"71 own sync UUID not sent", U(A, B + OFF, B, D), U(B, 0, C, 0), .hg = 1, .rule = 71,
	 .fix_self = true, .s_after = U(A, B, D, D)},
	{"71 role bits ignored", U(A, (B + OFF) | 1, B, D), U(B | 1, 0, C, 0), .hg = 1,
	 .rule = 71, .fix_self = true, .s_after = U(A, B, D, D)},
	{"80 not 71 without the offset", U(A, E, B, D), U(B, 0, C, 0), .hg = 2, .rule = 80},
	{"80 peer current in own history1", U(A, 0, C, B), U(B | 1, 0, D, 0), .hg = 2,
	 .rule = 80},
	{"90 same bitmap UUID", U(A, C, D, 0), U(B, C, D, 0), .hg = 100, .rule = 90},
	{"90 role bit ignored", U(A, C, D, 0), U(B | 1, C | 1, E, 0), .hg = 100, .rule = 90},
	{"100 not 90 with zero bitmaps", U(A, 0, D, E), U(B, 0, D, F), .hg = -100, .rule = 100},
	{"100 history crosswise", U(A, 0, E, D), U(B, 0, F, E), .hg = -100, .rule = 100},
	{"100 role bit ignored", U(A, C, D | 1, E), U(B, F, G, D), .hg = -100, .rule = 100},
	{"100 empty histories match (as in DRBD)", U(A, 0, 0, 0), U(B, 0, 0, 0), .hg = -100,
	 .rule = 100},
	{"unrelated", U(A, 0, C, D), U(B, 0, E, F), .hg = -1000, .rule = 0},
	{"unrelated with bitmaps", U(A, C, D, E), U(B, F, G, H), .hg = -1000, .rule = 0},
	{"unrelated: only bit 0 is ignored", U(A, 0, C, D), U(B, 0, C + 2, E),
	 .hg = -1000, .rule = 0},
};

static void side(struct uuidcmp_side *s, const struct gi *g, bool crash, bool pri)
{
	memset(s, 0, sizeof(*s));
	s->uuids = *g;
	s->crashed_primary = crash;
	s->primary = pri;
}

static bool gi_eq(const struct gi *a, const struct gi *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static int mirror_rule(int rule)
{
	static const int pairs[][2] = {{20, 30}, {34, 35}, {36, 37}, {50, 70}, {51, 71}, {60, 80}};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pairs); i++) {
		if (pairs[i][0] == rule)
			return pairs[i][1];
		if (pairs[i][1] == rule)
			return pairs[i][0];
	}
	return rule;
}

static int mirror_hg(int hg)
{
	return abs(hg) >= 100 ? hg : -hg;
}

static void test_compare(void **state)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(crows); i++) {
		const struct crow *t = &crows[i];
		struct uuidcmp_side s, p;
		struct uuidcmp_result r;
		const struct gi *sa = t->fix_self ? &t->s_after : &t->s;
		const struct gi *pa = t->fix_peer ? &t->p_after : &t->p;

		side(&s, &t->s, t->scrash, t->spri);
		side(&p, &t->p, t->pcrash, t->ppri);
		assert_int_equal(uuidcmp_compare(&s, &p, t->rc, &r), 0);
		if (r.hg != t->hg || r.rule != t->rule)
			fail_msg("%s: %d by rule %d, want %d by rule %d", t->name, r.hg, r.rule,
				 t->hg, t->rule);
		if (r.fix_self != t->fix_self || r.fix_peer != t->fix_peer)
			fail_msg("%s: fix self %d peer %d, want %d %d", t->name, r.fix_self,
				 r.fix_peer, t->fix_self, t->fix_peer);
		if (!gi_eq(&r.self_gi, sa) || !gi_eq(&r.peer_gi, pa))
			fail_msg("%s: corrected UUIDs differ (self %llX:%llX:%llX:%llX)", t->name,
				 (unsigned long long)r.self_gi.uuid[0],
				 (unsigned long long)r.self_gi.uuid[1],
				 (unsigned long long)r.self_gi.uuid[2],
				 (unsigned long long)r.self_gi.uuid[3]);
		/* The inputs are not touched. */
		if (!gi_eq(&s.uuids, &t->s) || !gi_eq(&p.uuids, &t->p))
			fail_msg("%s: inputs modified", t->name);
	}
}

/* The peer runs the same compare with the sides swapped and the opposite
 * tie-break bit: mirrored answer, mirrored rule, mirrored fix-ups. */
static void test_compare_from_peer(void **state)
{
	unsigned int i, n = 0;

	for (i = 0; i < ARRAY_SIZE(crows); i++) {
		const struct crow *t = &crows[i];
		struct uuidcmp_side s, p;
		struct uuidcmp_result r;

		if (t->asym)
			continue;
		side(&s, &t->p, t->pcrash, t->ppri);
		side(&p, &t->s, t->scrash, t->spri);
		assert_int_equal(uuidcmp_compare(&s, &p, !t->rc, &r), 0);
		if (r.hg != mirror_hg(t->hg) || r.rule != mirror_rule(t->rule))
			fail_msg("%s, from the peer: %d by rule %d, want %d by rule %d", t->name,
				 r.hg, r.rule, mirror_hg(t->hg), mirror_rule(t->rule));
		if (r.fix_self != t->fix_peer || r.fix_peer != t->fix_self)
			fail_msg("%s, from the peer: fix-ups not mirrored", t->name);
		if (t->fix_self && !gi_eq(&r.peer_gi, &t->s_after))
			fail_msg("%s, from the peer: peer copy not corrected alike", t->name);
		if (t->fix_peer && !gi_eq(&r.self_gi, &t->p_after))
			fail_msg("%s, from the peer: own UUIDs not corrected alike", t->name);
		n++;
	}
	assert_int_equal(n, ARRAY_SIZE(crows) - 1);
}

/* Every rule of the table is hit by some row. */
static void test_rules_covered(void **state)
{
	static const int rules[] = {0, 10, 20, 30, 34, 35, 36, 37, 40, 41,
				    50, 51, 60, 70, 71, 80, 90, 100};
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(rules); i++) {
		for (j = 0; j < ARRAY_SIZE(crows); j++)
			if (crows[j].rule == rules[i])
				break;
		if (j == ARRAY_SIZE(crows))
			fail_msg("rule %d has no row", rules[i]);
		assert_string_not_equal(uuidcmp_rule_text(rules[i]), "?");
	}
	assert_string_equal(uuidcmp_rule_text(42), "?");
}

static void test_compare_invalid(void **state)
{
	struct uuidcmp_side s = {0};
	struct uuidcmp_result r;

	assert_int_equal(uuidcmp_compare(NULL, &s, false, &r), -EINVAL);
	assert_int_equal(uuidcmp_compare(&s, NULL, false, &r), -EINVAL);
	assert_int_equal(uuidcmp_compare(&s, &s, false, NULL), -EINVAL);
}

/* ---------------------------------------------------------------- handshake */

/* UUID pairs (self, peer) and what uuid_compare says of them. */
#define G_SAME    U(A, 0, C, D), U(A, 0, C, D)           /* 40: 0 */
#define G_SRC     U(A, B, C, 0), U(B, 0, C, 0)           /* 70: 1 */
#define G_TGT     U(B, 0, C, 0), U(A, B, C, 0)           /* 50: -1 */
#define G_FULLSRC U(A, 0, B, 0), U(B, 0, 0, 0)           /* 80: 2 */
#define G_FULLTGT U(B, 0, 0, 0), U(A, 0, B, 0)           /* 60: -2 */
#define G_JC      U(JC, 0, 0, 0), U(JC, 0, 0, 0)         /* 10: 0 */
#define G_NEW     U(JC, 0, 0, 0), U(A, 0, 0, 0)          /* 20: -2 */
#define G_SB      U(A, C, D, 0), U(B, C, D, 0)           /* 90: 100 */
#define G_SB_PEER_OLDER U(A, C, D, 0), U(B, C | 1, D, 0) /* 90, peer was Primary */
#define G_HIST    U(A, 0, D, E), U(B, 0, D, F)           /* 100: -100 */
#define G_UNREL   U(A, 0, C, D), U(B, 0, E, F)           /* -1000 */
#define G_34      U(A, B, C, 0), U(A, 0, B, C)           /* 34: 1, fixes self */
#define G_51      U(A, 0, C, 0), U(B, A + OFF, A, D)     /* 51: -1, fixes peer */

#define UTD DISK_UPTODATE
#define INC DISK_INCONSISTENT

#define NOSYNC UUIDCMP_NO_SYNC
#define SRC    UUIDCMP_SYNC_SOURCE
#define TGT    UUIDCMP_SYNC_TARGET
#define DROP   UUIDCMP_DROP

#define H_ISB UUIDCMP_H_INITIAL_SPLIT_BRAIN
#define H_SB  UUIDCMP_H_SPLIT_BRAIN
#define H_PLS UUIDCMP_H_PRI_LOST_AFTER_SB
#define H_PL  UUIDCMP_H_PRI_LOST

struct hrow {
	const char *name;
	struct gi s, p;
	/* inputs; disks default to UpToDate (0 means "default") */
	uint64_t sbits, pbits;
	bool sdisc, pdisc, scrash, pcrash, sincons, pincons, spri, ppri;
	enum state_disk disk, pdsk;
	bool diskless;          /* own disk Diskless (0 above means UpToDate) */
	bool rc, always, dry, can_demote;
	enum sbpolicy p0, p1, p2, rr;
	const char *node;
	/* expected */
	enum uuidcmp_outcome out;
	enum uuidcmp_drop drop;
	int hg;
	bool full, demote, sb;
	unsigned int handlers;
	const char *log1, *log2;
	bool nomirror;          /* the peer refuses (see the row) */
};

static const struct hrow hrows[] = {
	/* plain outcomes of the compare */
	{"no sync (rule 40)", G_SAME, .out = NOSYNC, .log1 = "uuid_compare()=0 by rule 40"},
	{"no sync, bits in bitmap", G_SAME, .sbits = 7, .out = NOSYNC,
	 .log1 = "No resync, but 7 bits in bitmap!"},
	{"both just created stay", G_JC, .disk = INC, .pdsk = INC, .out = NOSYNC,
	 .log1 = "by rule 10"},
	{"source, bitmap based (rule 70)", G_SRC, .out = SRC, .hg = 1},
	{"target, bitmap based (rule 50)", G_TGT, .out = TGT, .hg = -1},
	{"full source (rule 80)", G_FULLSRC, .out = SRC, .hg = 2, .full = true,
	 .log1 = "Writing the whole bitmap"},
	{"full target (rule 60)", G_FULLTGT, .out = TGT, .hg = -2, .full = true},
	{"rule 34 fix-up", G_34, .out = SRC, .hg = 1,
	 .log1 = "missed the resync finished event, corrected myself",
	 .log2 = "self 1111111111111110:0000000000000000:2222222222222220:3333333333333330"},
	{"rule 51 fix-up", G_51, .out = TGT, .hg = -1, .log1 = "Lost last syncUUID packet",
	 .log2 = "peer 2222222222222220:1111111111111110:4444444444444440"},
	/* step 1 and P_PROTOCOL refusals */
	{"unrelated data", G_UNREL, .out = DROP, .drop = UUIDCMP_DROP_UNRELATED, .hg = -1000,
	 .log1 = "Unrelated data, aborting!", .log2 = "tandemadm create-md r0"},
	{"unrelated data names both UUID sets", G_UNREL, .out = DROP,
	 .drop = UUIDCMP_DROP_UNRELATED, .hg = -1000,
	 .log1 = "1111111111111110:0000000000000000:3333333333333330:4444444444444440",
	 .log2 = "2222222222222220:0000000000000000:5555555555555550:6666666666666660"},
	{"discard-my-data on both", G_SB, .sdisc = true, .pdisc = true, .out = DROP,
	 .drop = UUIDCMP_DROP_DISCARD_BOTH, .log1 = "incompatible discard-my-data settings"},
	/* step 2: disk states */
	{"new node becomes full target", G_NEW, .disk = INC, .out = TGT, .hg = -2, .full = true,
	 .log1 = "Becoming sync target due to disk states."},
	{"inconsistent self overrides rule 70", G_SRC, .disk = INC, .out = TGT, .hg = -1},
	{"inconsistent peer overrides rule 50", G_TGT, .pdsk = INC, .out = SRC, .hg = 1,
	 .log1 = "Becoming sync source due to disk states."},
	{"override keeps a full sync", G_FULLTGT, .pdsk = INC, .out = SRC, .hg = 2, .full = true},
	{"override ends a split brain (rule 90)", G_SB, .pdsk = INC, .out = SRC, .hg = 1},
	{"override of rule 100 is a full sync", G_HIST, .disk = INC, .out = TGT, .hg = -2,
	 .full = true},
	{"negotiating self counts as inconsistent", G_SRC, .disk = DISK_NEGOTIATING,
	 .sincons = true, .out = TGT, .hg = -1},
	{"negotiating peer counts as consistent", G_SAME, .pdsk = DISK_NEGOTIATING,
	 .out = NOSYNC},
	{"negotiating peer counts as inconsistent", G_SAME, .pdsk = DISK_NEGOTIATING,
	 .pincons = true, .out = SRC, .hg = 1},
	/* steps 3 to 6: split brain */
	{"split brain, disconnect", G_SB, .out = DROP, .drop = UUIDCMP_DROP_SPLIT_BRAIN,
	 .hg = -100, .sb = true, .handlers = H_ISB | H_SB,
	 .log1 = "Split-Brain detected but unresolved, dropping connection!",
	 .log2 = "tandemadm connect --discard-my-data r0"},
	{"0pri least changes, self fewer", G_SB, .sbits = 3, .pbits = 7,
	 .p0 = SBPOLICY_DISCARD_LEAST_CHG, .out = TGT, .hg = -1, .sb = true, .handlers = H_ISB,
	 .log1 = "Split-Brain detected, 0 primaries, automatically solved. Sync from peer node"},
	{"0pri least changes, self more", G_SB, .sbits = 7, .pbits = 3,
	 .p0 = SBPOLICY_DISCARD_LEAST_CHG, .out = SRC, .hg = 1, .sb = true, .handlers = H_ISB,
	 .log1 = "Sync from this node"},
	{"0pri younger primary from bitmap bit 0", G_SB_PEER_OLDER, .sbits = 7, .pbits = 3,
	 .p0 = SBPOLICY_DISCARD_YOUNGER_PRI, .out = TGT, .hg = -1, .sb = true,
	 .handlers = H_ISB},
	{"0pri older primary from bitmap bit 0", G_SB_PEER_OLDER, .sbits = 3, .pbits = 7,
	 .p0 = SBPOLICY_DISCARD_OLDER_PRI, .out = SRC, .hg = 1, .sb = true, .handlers = H_ISB},
	{"0pri discard-node names this node", G_SB, .p0 = SBPOLICY_DISCARD_NODE, .node = "alpha",
	 .out = TGT, .hg = -1, .sb = true, .handlers = H_ISB},
	{"0pri configuration error", G_SB, .p0 = SBPOLICY_CONSENSUS, .out = DROP,
	 .drop = UUIDCMP_DROP_SPLIT_BRAIN, .hg = -100, .sb = true, .handlers = H_ISB | H_SB,
	 .log1 = "Configuration error."},
	{"manually solved here", G_SB, .sdisc = true, .out = TGT, .hg = -1, .sb = true,
	 .handlers = H_ISB, .log1 = "Split-Brain detected, manually solved. Sync from peer node"},
	{"manually solved on the peer", G_SB, .pdisc = true, .out = SRC, .hg = 1, .sb = true,
	 .handlers = H_ISB, .log1 = "manually solved. Sync from this node"},
	{"history only: policies not applied", G_HIST, .sbits = 3, .pbits = 7,
	 .p0 = SBPOLICY_DISCARD_LEAST_CHG, .out = DROP, .drop = UUIDCMP_DROP_SPLIT_BRAIN,
	 .hg = -100, .sb = true, .handlers = H_ISB | H_SB},
	{"history only, always-asbp: full sync", G_HIST, .sbits = 3, .pbits = 7, .always = true,
	 .p0 = SBPOLICY_DISCARD_LEAST_CHG, .out = TGT, .hg = -2, .full = true, .sb = true,
	 .handlers = H_ISB, .log1 = "Doing a full sync, since UUIDs were ambiguous."},
	{"history only, always-asbp, disconnect, discard-my-data", G_HIST, .always = true,
	 .sdisc = true, .out = TGT, .hg = -1, .sb = true, .handlers = H_ISB},
	{"1pri discard-secondary, self primary", G_SB, .spri = true, .sbits = 1, .pbits = 9,
	 .p1 = SBPOLICY_DISCARD_SECONDARY, .out = SRC, .hg = 1, .sb = true, .handlers = H_ISB,
	 .log1 = "1 primaries, automatically solved"},
	{"1pri discard-secondary, self secondary", G_SB, .ppri = true, .sbits = 9, .pbits = 1,
	 .p1 = SBPOLICY_DISCARD_SECONDARY, .out = TGT, .hg = -1, .sb = true, .handlers = H_ISB},
	{"1pri consensus refuses to discard the primary", G_SB, .spri = true, .sbits = 3,
	 .pbits = 7, .p0 = SBPOLICY_DISCARD_LEAST_CHG, .p1 = SBPOLICY_CONSENSUS, .out = DROP,
	 .drop = UUIDCMP_DROP_SPLIT_BRAIN, .hg = -100, .sb = true, .handlers = H_ISB | H_SB},
	{"1pri consensus discards the secondary", G_SB, .ppri = true, .sbits = 3, .pbits = 7,
	 .p0 = SBPOLICY_DISCARD_LEAST_CHG, .p1 = SBPOLICY_CONSENSUS, .out = TGT, .hg = -1,
	 .sb = true, .handlers = H_ISB},
	{"1pri call-pri-lost-after-sb, demotes", G_SB, .spri = true, .sbits = 3, .pbits = 7,
	 .can_demote = true, .p0 = SBPOLICY_DISCARD_LEAST_CHG, .p1 = SBPOLICY_CALL_HELPER,
	 .out = TGT, .hg = -1, .demote = true, .sb = true, .handlers = H_ISB,
	 .log1 = "Giving up the Primary role."},
	{"1pri call-pri-lost-after-sb, cannot demote", G_SB, .spri = true, .sbits = 3,
	 .pbits = 7, .p0 = SBPOLICY_DISCARD_LEAST_CHG, .p1 = SBPOLICY_CALL_HELPER, .out = DROP,
	 .drop = UUIDCMP_DROP_SPLIT_BRAIN, .hg = -100, .sb = true,
	 .handlers = H_ISB | H_PLS | H_SB},
	{"1pri violently, primary loses, rr-conflict", G_SB, .spri = true, .sbits = 3,
	 .pbits = 7, .p0 = SBPOLICY_DISCARD_LEAST_CHG, .p1 = SBPOLICY_VIOLENTLY, .out = DROP,
	 .drop = UUIDCMP_DROP_RR_CONFLICT, .hg = -1, .sb = true, .handlers = H_ISB},
	{"1pri violently, rr-conflict violently", G_SB, .spri = true, .sbits = 3, .pbits = 7,
	 .p0 = SBPOLICY_DISCARD_LEAST_CHG, .p1 = SBPOLICY_VIOLENTLY, .rr = SBPOLICY_VIOLENTLY,
	 .out = TGT, .hg = -1, .sb = true, .handlers = H_ISB},
	{"2pri violently", G_SB, .spri = true, .ppri = true, .sbits = 7, .pbits = 3,
	 .p0 = SBPOLICY_DISCARD_LEAST_CHG, .p2 = SBPOLICY_VIOLENTLY, .out = SRC, .hg = 1,
	 .sb = true, .handlers = H_ISB, .log1 = "2 primaries, automatically solved",
	 .nomirror = true /* the losing Primary meets rr-conflict disconnect */},
	{"2pri violently, loser runs pri-lost", G_SB, .spri = true, .ppri = true, .sbits = 3,
	 .pbits = 7, .p0 = SBPOLICY_DISCARD_LEAST_CHG, .p2 = SBPOLICY_VIOLENTLY,
	 .rr = SBPOLICY_CALL_HELPER, .out = DROP, .drop = UUIDCMP_DROP_RR_CONFLICT, .hg = -1,
	 .sb = true, .handlers = H_ISB | H_PL},
	{"2pri call-pri-lost-after-sb, demotes", G_SB, .spri = true, .ppri = true, .sbits = 3,
	 .pbits = 7, .can_demote = true, .p0 = SBPOLICY_DISCARD_LEAST_CHG,
	 .p2 = SBPOLICY_CALL_HELPER, .out = TGT, .hg = -1, .demote = true, .sb = true,
	 .handlers = H_ISB},
	{"2pri disconnect", G_SB, .spri = true, .ppri = true, .p0 = SBPOLICY_DISCARD_LEAST_CHG,
	 .out = DROP, .drop = UUIDCMP_DROP_SPLIT_BRAIN, .hg = -100, .sb = true,
	 .handlers = H_ISB | H_SB},
	{"rule 41, both primary", G_SAME, .scrash = true, .spri = true, .ppri = true,
	 .out = DROP, .drop = UUIDCMP_DROP_SPLIT_BRAIN, .hg = -100, .sb = true,
	 .handlers = H_ISB | H_SB, .log1 = "Equivalent unrotated UUIDs, but both are primary."},
	{"rule 41, self primary", G_SAME, .scrash = true, .spri = true, .out = SRC, .hg = 1,
	 .log1 = "by rule 41"},
	/* step 7 */
	{"source but inconsistent", G_SRC, .disk = INC, .pdsk = INC, .out = DROP,
	 .drop = UUIDCMP_DROP_INCONSISTENT, .hg = 1,
	 .log1 = "I shall become SyncSource, but I am inconsistent!"},
	{"source but diskless", G_SRC, .diskless = true, .out = DROP,
	 .drop = UUIDCMP_DROP_INCONSISTENT, .hg = 1},
	{"source with an outdated disk", G_SRC, .disk = DISK_OUTDATED, .pdsk = DISK_OUTDATED,
	 .out = SRC, .hg = 1},
	/* step 8 */
	{"rr-conflict disconnect", G_TGT, .spri = true, .out = DROP,
	 .drop = UUIDCMP_DROP_RR_CONFLICT, .hg = -1,
	 .log1 = "I shall become SyncTarget, but I am primary!"},
	{"rr-conflict disconnect, Consistent", G_TGT, .spri = true, .disk = DISK_CONSISTENT,
	 .out = DROP, .drop = UUIDCMP_DROP_RR_CONFLICT, .hg = -1},
	{"rr-conflict call-pri-lost", G_FULLTGT, .spri = true, .rr = SBPOLICY_CALL_HELPER,
	 .out = DROP, .drop = UUIDCMP_DROP_RR_CONFLICT, .hg = -2, .handlers = H_PL},
	{"rr-conflict violently", G_FULLTGT, .spri = true, .rr = SBPOLICY_VIOLENTLY, .out = TGT,
	 .hg = -2, .full = true,
	 .log1 = "Becoming SyncTarget, violating the stable-data assumption"},
	{"primary with an outdated disk may be target", G_TGT, .spri = true,
	 .disk = DISK_OUTDATED, .out = TGT, .hg = -1},
	{"primary still negotiating may be target", G_TGT, .spri = true,
	 .disk = DISK_NEGOTIATING, .out = TGT, .hg = -1},
	{"secondary with a primary peer", G_TGT, .ppri = true, .out = TGT, .hg = -1},
	/* step 9 */
	{"dry run, full target", G_FULLTGT, .dry = true, .out = DROP,
	 .drop = UUIDCMP_DROP_DRY_RUN, .hg = -2,
	 .log1 = "dry-run connect: Would become SyncTarget, doing a full resync."},
	{"dry run, bitmap source", G_SRC, .dry = true, .out = DROP, .drop = UUIDCMP_DROP_DRY_RUN,
	 .hg = 1, .log1 = "Would become SyncSource, doing a bit-map based resync."},
	{"dry run, no sync", G_SAME, .dry = true, .out = DROP, .drop = UUIDCMP_DROP_DRY_RUN,
	 .log1 = "dry-run connect: No resync, would become Connected immediately."},
	{"dry run after a refusal refuses", G_TGT, .dry = true, .spri = true, .out = DROP,
	 .drop = UUIDCMP_DROP_RR_CONFLICT, .hg = -1},
};

static enum state_disk or_default(enum state_disk d)
{
	return d == 0 ? UTD : d;
}

/* The input of a row, as this node (alpha) or as the peer (beta) sees it. */
static void hinput(const struct hrow *t, bool mirror, struct uuidcmp_input *in)
{
	struct uuidcmp_side a = {
		.uuids = t->s, .bits = t->sbits, .discard_my_data = t->sdisc,
		.crashed_primary = t->scrash, .inconsistent = t->sincons, .primary = t->spri,
	};
	struct uuidcmp_side b = {
		.uuids = t->p, .bits = t->pbits, .discard_my_data = t->pdisc,
		.crashed_primary = t->pcrash, .inconsistent = t->pincons, .primary = t->ppri,
	};

	memset(in, 0, sizeof(*in));
	in->self = mirror ? b : a;
	in->peer = mirror ? a : b;
	in->disk = or_default(mirror ? t->pdsk : t->disk);
	in->pdsk = or_default(mirror ? t->disk : t->pdsk);
	if (t->diskless)
		*(mirror ? &in->pdsk : &in->disk) = DISK_DISKLESS;
	in->resolve_conflicts = mirror ? !t->rc : t->rc;
	sbpolicy_conf_init(&in->asb);
	in->asb.after_sb_0pri = t->p0;
	in->asb.after_sb_1pri = t->p1;
	in->asb.after_sb_2pri = t->p2;
	if (t->node)
		snprintf(in->asb.node, sizeof(in->asb.node), "%s", t->node);
	in->always_asbp = t->always;
	in->rr_conflict = t->rr;
	in->dry_run = t->dry;
	in->can_demote = t->can_demote;
	in->self_name = mirror ? "beta" : "alpha";
	in->peer_name = mirror ? "alpha" : "beta";
	in->resource = "r0";
}

static void check_log_shape(const char *name, const char *log)
{
	size_t len = strlen(log);

	if (len == 0 || log[len - 1] != '\n')
		fail_msg("%s: log does not end in a newline", name);
	if (strncmp(log, "sync handshake:\n", 16))
		fail_msg("%s: log does not start with the header", name);
}

static void test_handshake(void **state)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(hrows); i++) {
		const struct hrow *t = &hrows[i];
		struct uuidcmp_input in;
		struct uuidcmp_decision d;

		hinput(t, false, &in);
		assert_int_equal(uuidcmp_handshake(&in, &d), 0);
		if (d.outcome != t->out || d.drop != t->drop || d.hg != t->hg)
			fail_msg("%s: %s/%s hg %d, want %s/%s hg %d\n%s", t->name,
				 uuidcmp_outcome_name(d.outcome), uuidcmp_drop_name(d.drop), d.hg,
				 uuidcmp_outcome_name(t->out), uuidcmp_drop_name(t->drop), t->hg,
				 d.log);
		if (d.full_sync != t->full || d.demote != t->demote || d.split_brain != t->sb)
			fail_msg("%s: full %d demote %d split brain %d, want %d %d %d\n%s",
				 t->name, d.full_sync, d.demote, d.split_brain, t->full, t->demote,
				 t->sb, d.log);
		if (d.handlers != t->handlers)
			fail_msg("%s: handlers %#x, want %#x\n%s", t->name, d.handlers,
				 t->handlers, d.log);
		if (t->log1 && !strstr(d.log, t->log1))
			fail_msg("%s: log lacks '%s'\n%s", t->name, t->log1, d.log);
		if (t->log2 && !strstr(d.log, t->log2))
			fail_msg("%s: log lacks '%s'\n%s", t->name, t->log2, d.log);
		check_log_shape(t->name, d.log);
		if ((d.outcome == DROP) != (d.drop != UUIDCMP_DROP_NONE))
			fail_msg("%s: drop reason and outcome disagree", t->name);
	}
}

/* What the peer decides for the same situation: the opposite direction,
 * the same kind of sync. Only rows where neither node refuses. */
static void test_handshake_from_peer(void **state)
{
	unsigned int i, n = 0;

	for (i = 0; i < ARRAY_SIZE(hrows); i++) {
		const struct hrow *t = &hrows[i];
		struct uuidcmp_input in;
		struct uuidcmp_decision d;
		enum uuidcmp_outcome want;

		if (t->out == DROP || t->nomirror)
			continue;
		want = t->out == SRC ? TGT : t->out == TGT ? SRC : NOSYNC;
		hinput(t, true, &in);
		assert_int_equal(uuidcmp_handshake(&in, &d), 0);
		if (d.outcome != want || d.hg != -t->hg || d.full_sync != t->full)
			fail_msg("%s, from the peer: %s hg %d full %d, want %s hg %d full %d\n%s",
				 t->name, uuidcmp_outcome_name(d.outcome), d.hg, d.full_sync,
				 uuidcmp_outcome_name(want), -t->hg, t->full, d.log);
		if (d.split_brain != t->sb || d.demote)
			fail_msg("%s, from the peer: split brain %d demote %d\n%s", t->name,
				 d.split_brain, d.demote, d.log);
		n++;
	}
	assert_true(n >= 30);
}

/* Handlers only run in DRBD's order of steps; the resource name is
 * optional; the fix-ups of the compare are passed through. */
static void test_handshake_details(void **state)
{
	const struct hrow t34 = {"34", G_34, .out = SRC};
	const struct hrow tsb = {"sb", G_SB, .out = DROP};
	struct uuidcmp_input in;
	struct uuidcmp_decision d;

	hinput(&t34, false, &in);
	assert_int_equal(uuidcmp_handshake(&in, &d), 0);
	assert_int_equal(d.cmp.rule, 34);
	assert_true(d.cmp.fix_self);
	assert_false(d.cmp.fix_peer);
	assert_int_equal(d.cmp.self_gi.uuid[GI_HISTORY0], B);
	assert_int_equal(d.cmp.self_gi.uuid[GI_BITMAP], 0);
	/* the input is untouched */
	assert_int_equal(in.self.uuids.uuid[GI_BITMAP], B);

	hinput(&tsb, false, &in);
	in.resource = NULL;
	assert_int_equal(uuidcmp_handshake(&in, &d), 0);
	assert_non_null(strstr(d.log, "tandemadm connect --discard-my-data RES"));
	assert_non_null(strstr(d.log, "tandemadm connect RES"));

	in.rr_conflict = SBPOLICY_CONSENSUS;
	assert_int_equal(uuidcmp_handshake(&in, &d), -EINVAL);
	in.rr_conflict = SBPOLICY_DISCONNECT;
	in.asb.after_sb_0pri = (enum sbpolicy)77;
	assert_int_equal(uuidcmp_handshake(&in, &d), -EINVAL);
	assert_int_equal(uuidcmp_handshake(NULL, &d), -EINVAL);
	assert_int_equal(uuidcmp_handshake(&in, NULL), -EINVAL);
}

static void test_next_conn_and_names(void **state)
{
	struct uuidcmp_decision d = {0};

	d.outcome = UUIDCMP_NO_SYNC;
	assert_int_equal(uuidcmp_next_conn(&d), CONN_CONNECTED);
	d.outcome = UUIDCMP_SYNC_SOURCE;
	assert_int_equal(uuidcmp_next_conn(&d), CONN_WFBITMAPS);
	d.outcome = UUIDCMP_SYNC_TARGET;
	assert_int_equal(uuidcmp_next_conn(&d), CONN_WFBITMAPT);
	d.outcome = UUIDCMP_DROP;
	assert_int_equal(uuidcmp_next_conn(&d), CONN_DISCONNECTING);

	assert_string_equal(uuidcmp_outcome_name(UUIDCMP_SYNC_TARGET), "sync-target");
	assert_string_equal(uuidcmp_outcome_name((enum uuidcmp_outcome)9), "?");
	assert_string_equal(uuidcmp_drop_name(UUIDCMP_DROP_SPLIT_BRAIN), "split-brain");
	assert_string_equal(uuidcmp_drop_name(UUIDCMP_DROP_RR_CONFLICT), "rr-conflict");
	assert_string_equal(uuidcmp_drop_name((enum uuidcmp_drop)99), "?");
	assert_string_equal(uuidcmp_handler_name(H_ISB), "initial-split-brain");
	assert_string_equal(uuidcmp_handler_name(H_SB), "split-brain");
	assert_string_equal(uuidcmp_handler_name(H_PLS), "pri-lost-after-sb");
	assert_string_equal(uuidcmp_handler_name(H_PL), "pri-lost");
	assert_string_equal(uuidcmp_handler_name(H_ISB | H_SB), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_compare_from_peer),
		cmocka_unit_test(test_rules_covered),
		cmocka_unit_test(test_compare_invalid),
		cmocka_unit_test(test_handshake),
		cmocka_unit_test(test_handshake_from_peer),
		cmocka_unit_test(test_handshake_details),
		cmocka_unit_test(test_next_conn_and_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
