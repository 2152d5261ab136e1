/*
 * test-conf-check: the semantic rules of conf-check.c. Every rule has
 * configurations that pass and configurations that fail, each a row of
 * one table and a test of its own.
 */
#include "unit.h"

#define HOST_A(m, p)                                                                          \
	"  on alpha { device minor " m "; disk /dev/sda; address 10.0.0.1:" p                  \
	"; meta-disk internal; }\n"
#define HOST_B(m, p)                                                                          \
	"  on beta { device minor " m "; disk /dev/sdb; address 10.0.0.2:" p                   \
	"; meta-disk internal; }\n"
#define HOSTS_AT(m, p) HOST_A(m, p) HOST_B(m, p)
#define HOSTS HOSTS_AT("0", "7789")
/* Resource r0, its body starting on line 2. */
#define RES(body) "resource r0 {\n" body HOSTS "}\n"
/* Resource NAME with minor m and port p, its body on the line after its header. */
#define RES_N(name, m, p, body) "resource " name " {\n" body HOSTS_AT(m, p) "}\n"

enum expect {
	PASS, /* loads without errors or warnings */
	ERR,  /* refused, with this error */
	WARN, /* loads, with this warning */
};

/* 200 characters, for device names longer than any fixed buffer. */
#define LONG_NAME_40 "abcdefghijabcdefghijabcdefghijabcdefghij"
#define LONG_NAME LONG_NAME_40 LONG_NAME_40 LONG_NAME_40 LONG_NAME_40 LONG_NAME_40

/* The tail of a row that loads cleanly. */
#define CLEAN PASS, 0, 0, NULL

struct rule_case {
	const char *name;
	const char *text;
	enum expect expect;
	int line, col;
	const char *sub;
};

static const struct rule_case cases[] = {
	/* fencing resource-and-stonith needs protocol B or C */
	{"stonith with protocol A",
	 RES("  net { protocol A; }\n  disk { fencing resource-and-stonith; }\n"),
	 ERR, 3, 10, "protocol"},
	{"stonith with protocol A from common",
	 "common { net { protocol A; } }\n" RES("  disk { fencing resource-and-stonith; }\n"),
	 ERR, 3, 10, "resource-and-stonith"},
	{"stonith from common with protocol A",
	 "common { disk { fencing resource-and-stonith; } }\n" RES("  protocol A;\n"),
	 ERR, 1, 17, "resource-and-stonith"},
	{"stonith with protocol B",
	 RES("  net { protocol B; }\n  disk { fencing resource-and-stonith; }\n"),
	 CLEAN},
	{"stonith with the default protocol",
	 RES("  disk { fencing resource-and-stonith; }\n"),
	 CLEAN},
	{"resource-only with protocol A",
	 RES("  net { protocol A; }\n  disk { fencing resource-only; }\n"),
	 CLEAN},

	/* allow-two-primaries needs protocol C */
	{"two primaries with protocol B",
	 RES("  net { protocol B; allow-two-primaries; }\n"),
	 ERR, 2, 21, "protocol C"},
	{"two primaries with protocol A",
	 RES("  net { protocol A; allow-two-primaries yes; }\n"),
	 ERR, 2, 21, "protocol C"},
	{"two primaries with protocol C",
	 RES("  net { protocol C; allow-two-primaries; }\n"),
	 CLEAN},
	{"two primaries with the default protocol",
	 RES("  net { allow-two-primaries; }\n"),
	 CLEAN},
	{"two primaries off with protocol A",
	 RES("  net { protocol A; allow-two-primaries no; }\n"),
	 CLEAN},

	/* on-congestion other than block needs protocol A */
	{"pull-ahead with the default protocol",
	 RES("  net { on-congestion pull-ahead; }\n"),
	 ERR, 2, 9, "protocol A"},
	{"disconnect on congestion with protocol B",
	 RES("  net { protocol B; on-congestion disconnect; }\n"),
	 ERR, 2, 21, "protocol A"},
	{"pull-ahead with protocol A",
	 RES("  net { protocol A; on-congestion pull-ahead; }\n"),
	 CLEAN},
	{"block with protocol C",
	 RES("  net { protocol C; on-congestion block; }\n"),
	 CLEAN},

	/* discard-node-NAME names a host of the resource */
	{"discard-node of an unknown host",
	 RES("  net { after-sb-0pri discard-node-gamma; }\n"),
	 ERR, 2, 9, "gamma"},
	{"discard-node of a host",
	 RES("  net { after-sb-0pri discard-node-beta; }\n"),
	 CLEAN},
	{"discard-node of a second host name",
	 "resource r0 {\n"
	 "  net { after-sb-0pri discard-node-beta2; }\n" HOST_A("0", "7789")
	 "  on beta beta2 { device minor 0; disk /dev/sdb; address 10.0.0.2:7789; "
	 "meta-disk internal; }\n"
	 "}\n",
	 CLEAN},
	{"discard-node from common naming no host",
	 "common { net { after-sb-0pri discard-node-zeta; } }\n" RES(""),
	 ERR, 1, 16, "zeta"},

	/* timeout should stay below connect-int and ping-int (drbd.conf(5)); DRBD 8.4
	 * does not enforce it, so it is a warning */
	{"timeout equal to connect-int",
	 RES("  net { timeout 100; connect-int 10; ping-int 20; }\n"),
	 WARN, 2, 9, "below connect-int"},
	{"timeout above connect-int",
	 RES("  net { timeout 300; connect-int 10; ping-int 40; }\n"),
	 WARN, 2, 9, "below connect-int"},
	{"timeout just below connect-int",
	 RES("  net { timeout 99; connect-int 10; ping-int 20; }\n"),
	 CLEAN},
	{"timeout equal to ping-int",
	 RES("  net { timeout 50; ping-int 5; connect-int 20; }\n"),
	 WARN, 2, 9, "below ping-int"},
	{"timeout just below ping-int",
	 RES("  net { timeout 49; ping-int 5; }\n"),
	 CLEAN},
	{"default timeout with connect-int 6",
	 RES("  net { connect-int 6; }\n"),
	 WARN, 1, 1, "below connect-int"},
	{"default timeout with ping-int 6",
	 RES("  net { ping-int 6; }\n"),
	 WARN, 1, 1, "below ping-int"},
	{"default timeout with connect-int 7",
	 RES("  net { connect-int 7; }\n"),
	 CLEAN},
	{"timeout from common",
	 "common { net { timeout 200; } }\n" RES("  net { ping-int 30; }\n"),
	 WARN, 1, 16, "below connect-int"},

	/* resync-after names another resource, without a cycle */
	{"resync-after an unknown resource",
	 RES("  disk { resync-after r9; }\n"),
	 ERR, 2, 10, "r9"},
	{"resync-after itself",
	 RES("  disk { resync-after r0; }\n"),
	 ERR, 2, 10, "itself"},
	{"resync-after cycle of two",
	 RES("  disk { resync-after r1; }\n")
	 RES_N("r1", "1", "7790", "  disk { resync-after r0; }\n"),
	 ERR, 2, 10, "loops"},
	{"resync-after cycle of three",
	 RES("  disk { resync-after r1; }\n")
	 RES_N("r1", "1", "7790", "  disk { resync-after r2; }\n")
	 RES_N("r2", "2", "7791", "  disk { resync-after r0; }\n"),
	 ERR, 2, 10, "loops"},
	{"resync-after chain",
	 RES("  disk { resync-after r1; }\n")
	 RES_N("r1", "1", "7790", "  disk { resync-after r2; }\n")
	 RES_N("r2", "2", "7791", ""),
	 CLEAN},
	{"resync-after a later resource",
	 RES("  disk { resync-after r1; }\n") RES_N("r1", "1", "7790", ""),
	 CLEAN},

	/* become-primary-on */
	{"become-primary-on both without two primaries",
	 RES("  startup { become-primary-on both; }\n"),
	 ERR, 2, 13, "allow-two-primaries"},
	{"become-primary-on both from common",
	 "common { startup { become-primary-on both; } }\n" RES(""),
	 ERR, 1, 20, "allow-two-primaries"},
	{"become-primary-on both with two primaries",
	 RES("  startup { become-primary-on both; }\n  net { allow-two-primaries; }\n"),
	 CLEAN},
	{"become-primary-on an unknown host",
	 RES("  startup { become-primary-on gamma; }\n"),
	 ERR, 2, 13, "gamma"},
	{"become-primary-on a host",
	 RES("  startup { become-primary-on beta; }\n"),
	 CLEAN},

	/* minors, device names and addresses are unique per host */
	{"two resources, distinct minors and ports",
	 RES("") RES_N("r1", "1", "7790", ""),
	 CLEAN},
	{"same minor on one host",
	 RES("")
	 "resource r1 {\n"
	 "  on alpha { device minor 0; disk /dev/sdc; address 10.0.0.1:7790; "
	 "meta-disk internal; }\n"
	 "  on beta { device minor 1; disk /dev/sdc; address 10.0.0.2:7790; "
	 "meta-disk internal; }\n"
	 "}\n",
	 ERR, 6, 14, "minor 0"},
	{"same minor through another name of the host",
	 "resource r0 {\n"
	 "  on alpha alpha2 { device minor 3; disk /dev/sda; address 10.0.0.1:7789; "
	 "meta-disk internal; }\n" HOST_B("0", "7789")
	 "}\n"
	 "resource r1 {\n"
	 "  on alpha2 { device minor 3; disk /dev/sdc; address 10.0.0.3:7790; "
	 "meta-disk internal; }\n"
	 "  on beta { device minor 1; disk /dev/sdc; address 10.0.0.2:7790; "
	 "meta-disk internal; }\n"
	 "}\n",
	 ERR, 6, 15, "minor 3"},
	{"same device name on one host",
	 "resource r0 {\n"
	 "  on alpha { device /dev/drbd_a minor 1; disk /dev/sda; address 10.0.0.1:7789; "
	 "meta-disk internal; }\n" HOST_B("1", "7789")
	 "}\n"
	 "resource r1 {\n"
	 "  on alpha { device /dev/drbd_a minor 2; disk /dev/sdc; address 10.0.0.1:7790; "
	 "meta-disk internal; }\n" HOST_B("2", "7790")
	 "}\n",
	 ERR, 6, 14, "/dev/drbd_a"},
	{"long device names differing at the end",
	 "resource r0 {\n"
	 "  on alpha { device \"/dev/" LONG_NAME "1\" minor 1; disk /dev/sda; "
	 "address 10.0.0.1:7789; meta-disk internal; }\n" HOST_B("1", "7789")
	 "}\n"
	 "resource r1 {\n"
	 "  on alpha { device \"/dev/" LONG_NAME "2\" minor 2; disk /dev/sdc; "
	 "address 10.0.0.1:7790; meta-disk internal; }\n" HOST_B("2", "7790")
	 "}\n",
	 CLEAN},
	{"same address on one host",
	 RES("") RES_N("r1", "1", "7789", ""),
	 ERR, 6, 53, "10.0.0.1:7789"},
	{"same address on both ends",
	 "resource r0 {\n" HOST_A("0", "7789")
	 "  on beta { device minor 0; disk /dev/sdb; address 10.0.0.1:7789; "
	 "meta-disk internal; }\n"
	 "}\n",
	 ERR, 3, 52, "10.0.0.1:7789"},

	/* what every host section needs */
	{"missing device",
	 "resource r0 {\n"
	 "  on alpha { disk /dev/sda; address 10.0.0.1:7789; meta-disk internal; }\n"
	 HOST_B("0", "7789") "}\n",
	 ERR, 2, 14, "missing 'device'"},
	{"missing disk",
	 "resource r0 {\n"
	 "  on alpha { device minor 0; address 10.0.0.1:7789; meta-disk internal; }\n"
	 HOST_B("0", "7789") "}\n",
	 ERR, 2, 14, "missing 'disk'"},
	{"missing meta-disk",
	 "resource r0 {\n"
	 "  on alpha { device minor 0; disk /dev/sda; address 10.0.0.1:7789; }\n"
	 HOST_B("0", "7789") "}\n",
	 ERR, 2, 14, "missing 'meta-disk'"},
	{"missing address",
	 "resource r0 {\n"
	 "  on alpha { device minor 0; disk /dev/sda; meta-disk internal; }\n"
	 HOST_B("0", "7789") "}\n",
	 ERR, 2, 3, "missing 'address'"},
	{"host section without a volume",
	 "resource r0 {\n"
	 "  on alpha { address 10.0.0.1:7789; }\n"
	 HOST_B("0", "7789") "}\n",
	 ERR, 2, 3, "no volume"},

	/* exactly two host sections */
	{"one host section",
	 "resource r0 {\n" HOST_A("0", "7789") "}\n",
	 ERR, 1, 1, "exactly two"},
	{"no host section",
	 "resource r0 {\n  net { protocol C; }\n}\n",
	 ERR, 1, 1, "exactly two"},
	{"three host sections",
	 RES("  on gamma { device minor 0; disk /dev/sdc; address 10.0.0.3:7789; "
	     "meta-disk internal; }\n"),
	 ERR, 1, 1, "exactly two"},
	{"one host twice",
	 "resource r0 {\n" HOST_A("0", "7789")
	 "  on alpha { device minor 0; disk /dev/sdb; address 10.0.0.2:7789; "
	 "meta-disk internal; }\n"
	 "}\n",
	 ERR, 3, 3, "two host sections"},
	{"two floating sections",
	 "resource r0 {\n"
	 "  floating 10.0.0.1:7789 { device minor 0; disk /dev/sda; meta-disk internal; }\n"
	 "  floating 10.0.0.2:7789 { device minor 0; disk /dev/sdb; meta-disk internal; }\n"
	 "}\n",
	 CLEAN},

	/* resource names */
	{"name starting with '-'", RES_N("-r0", "0", "7789", ""), ERR, 1, 1, "-r0"},
	{"name starting with '.'", RES_N(".r0", "0", "7789", ""), ERR, 1, 1, ".r0"},
	{"name with '/'", RES_N("r/0", "0", "7789", ""), ERR, 1, 1, "r/0"},
	{"name with '!'", RES_N("r0!", "0", "7789", ""), ERR, 1, 1, "r0!"},
	{"name with ','", RES_N("r0,1", "0", "7789", ""), ERR, 1, 1, "r0,1"},
	{"name with every allowed character", RES_N("a_Z.9+b:c=d@e%f-", "0", "7789", ""), CLEAN},

	/* authentication */
	{"crc32c for HMAC",
	 RES("  net { cram-hmac-alg crc32c; shared-secret \"s3cret\"; }\n"),
	 ERR, 2, 9, "crc32c"},
	{"sha256 for HMAC",
	 RES("  net { cram-hmac-alg sha256; shared-secret \"s3cret\"; }\n"),
	 CLEAN},
	{"HMAC without a secret",
	 RES("  net { cram-hmac-alg sha1; }\n"),
	 WARN, 2, 9, "shared-secret"},
	{"secret without HMAC",
	 RES("  net { shared-secret \"s3cret\"; }\n"),
	 WARN, 2, 9, "cram-hmac-alg"},

	/* advice */
	{"al-extents above what the ring holds",
	 RES("  disk { al-extents 6434; }\n"),
	 WARN, 2, 10, "6433"},
	{"al-extents the ring holds",
	 RES("  disk { al-extents 6433; }\n"),
	 CLEAN},
	{"discard-my-data in the file",
	 RES("  net { discard-my-data; }\n"),
	 WARN, 2, 9, "discard-my-data"},

	/* quorum (DRBD 9's options) */
	{"on-no-quorum while quorum is off",
	 RES("  options { on-no-quorum io-error; }\n"),
	 WARN, 2, 13, "no effect while quorum is off"},
	{"on-no-quorum from common while quorum is off",
	 "common { options { on-no-quorum io-error; } }\n" RES(""),
	 WARN, 1, 20, "no effect while quorum is off"},
	{"on-no-quorum with quorum majority",
	 RES("  options { quorum majority; on-no-quorum io-error; }\n"
	     "  disk { fencing resource-only; }\n"),
	 CLEAN},
	{"quorum majority from common, on-no-quorum in the resource",
	 "common { options { quorum majority; } disk { fencing resource-and-stonith; } }\n"
	 RES("  options { on-no-quorum suspend-io; }\n"),
	 CLEAN},
	{"quorum majority without a fencing policy",
	 RES("  options { quorum majority; }\n"),
	 WARN, 2, 13, "without a fencing policy"},
	{"quorum with a count", RES("  options { quorum 2; }\n"), ERR, 2, 20, "off, majority"},
	{"on-no-quorum with a bad value",
	 RES("  options { on-no-quorum freeze; }\n"),
	 ERR, 2, 26, "suspend-io, io-error"},
};

static void test_rule(void **state)
{
	const struct rule_case *rc = *state;
	struct unit_conf u;

	unit_load(&u, rc->text);
	switch (rc->expect) {
	case PASS:
		assert_loaded(&u);
		assert_no_warnings(u.d);
		break;
	case ERR:
		assert_rejected(&u);
		assert_int_equal(u.rc, -EINVAL);
		assert_error_at(u.d, rc->line, rc->col, rc->sub);
		break;
	case WARN:
		assert_loaded(&u);
		assert_warning_at(u.d, rc->line, rc->col, rc->sub);
		break;
	}
	unit_done(&u);
}

/* Every rule runs: one resource breaking four rules gets four errors (and
 * the timeout warning). */
static void test_all_rules_reported(void **state)
{
	struct unit_conf u;

	(void)state;
	unit_load(&u, "resource r0 {\n"
		      "  net { protocol A; allow-two-primaries; timeout 200; }\n"
		      "  disk { fencing resource-and-stonith; resync-after r0; }\n"
		      "  startup { become-primary-on gamma; }\n" HOSTS "}\n");
	assert_rejected(&u);
	assert_error_at(u.d, 2, 21, "allow-two-primaries");
	assert_warning_at(u.d, 2, 42, "timeout");
	assert_error_at(u.d, 3, 10, "fencing");
	assert_error_at(u.d, 3, 40, "resync-after");
	assert_error_at(u.d, 4, 13, "gamma");
	unit_done(&u);
}

/* Rules are checked per resource: a problem of one does not leak into another. */
static void test_rules_per_resource(void **state)
{
	struct unit_conf u;

	(void)state;
	unit_load(&u, RES("  net { protocol A; }\n")
			  RES_N("r1", "1", "7790", "  disk { fencing resource-and-stonith; }\n"));
	assert_loaded(&u);
	unit_done(&u);
}

/*
 * The opt-in for an unauthenticated peer (conf_load_opts.warn_unauthenticated,
 * as tandemadm and tandemd load): a resource of this node with a peer and
 * neither cram-hmac-alg nor allow-unauthenticated is warned about at the
 * resource, and conf_res_unauthenticated() says tandemd will refuse it.
 */
static void test_unauthenticated(void **state)
{
	struct conf_load_opts o = {.hostname = UNIT_HOST, .no_ip_check = true,
				   .warn_unauthenticated = true};
	struct unit_conf u;

	(void)state;
	unit_load_opts(&u, UNIT_FILE, RES("") RES_N("r1", "1", "7790", ""), &o);
	assert_loaded(&u);
	assert_warning_at(u.d, 1, 1, "net { allow-unauthenticated yes; }");
	assert_warning_at(u.d, 5, 1, "resource r1: its peer would not be authenticated");
	assert_int_equal(diag_count(u.d, DIAG_WARN), 2);
	assert_true(conf_res_unauthenticated(u.c, conf_find_res(u.c, "r0")));
	unit_done(&u);

	/* a secret (from common too), or the opt-in: nothing to say */
	unit_load_opts(&u, UNIT_FILE,
		       RES("  net { cram-hmac-alg sha256; shared-secret \"s\"; }\n")
			   RES_N("r1", "1", "7790", "  net { allow-unauthenticated yes; }\n"),
		       &o);
	assert_loaded(&u);
	assert_no_warnings(u.d);
	assert_false(conf_res_unauthenticated(u.c, conf_find_res(u.c, "r0")));
	assert_false(conf_res_unauthenticated(u.c, conf_find_res(u.c, "r1")));
	unit_done(&u);
	unit_load_opts(&u, UNIT_FILE,
		       "common { net { cram-hmac-alg sha1; shared-secret \"s\"; } }\n" RES(""), &o);
	assert_loaded(&u);
	assert_no_warnings(u.d);
	unit_done(&u);
	/* allow-unauthenticated no is the default, said explicitly */
	unit_load_opts(&u, UNIT_FILE, RES("  net { allow-unauthenticated no; }\n"), &o);
	assert_warning_at(u.d, 1, 1, "not be authenticated");
	unit_done(&u);

	/* not a resource of this node: not this node's business */
	o.hostname = "gamma";
	unit_load_opts(&u, UNIT_FILE, RES(""), &o);
	assert_no_warnings(u.d);
	assert_false(conf_res_unauthenticated(u.c, conf_find_res(u.c, "r0")));
	unit_done(&u);
	/* and without the option (the library's default), no warning either */
	unit_load(&u, RES(""));
	assert_no_warnings(u.d);
	assert_true(conf_res_unauthenticated(u.c, conf_find_res(u.c, "r0")));
	unit_done(&u);
}

int main(void)
{
	struct CMUnitTest tests[UNIT_ARRAY_SIZE(cases) + 3];
	size_t n = 0, i;

	for (i = 0; i < UNIT_ARRAY_SIZE(cases); i++) {
		tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(test_rule,
									(void *)&cases[i]);
		tests[n++].name = cases[i].name;
	}
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_all_rules_reported);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_rules_per_resource);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_unauthenticated);
	return _cmocka_run_group_tests("conf-check", tests, n, NULL, unit_teardown);
}
