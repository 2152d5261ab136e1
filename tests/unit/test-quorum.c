/*
 * test-quorum: lib/quorum.c, DRBD 9's quorum / on-no-quorum rules as
 * tandemd applies them (doc/arbiter.md §6.5): the promotion check and what
 * a resource's new I/O does, each as a table over every input, and the
 * settings read from a configuration (defaults, common, the resource's).
 */
#include "unit.h"

#include "quorum.h"

#define OFF QUORUM_OFF
#define MAJ QUORUM_MAJORITY
#define SUSP QUORUM_ONQ_SUSPEND_IO
#define EIOQ QUORUM_ONQ_IO_ERROR

static void test_promote(void **state)
{
	static const struct {
		enum quorum_policy p;
		bool quorate, force;
		int rc;
		bool forced;
	} rows[] = {
		{OFF, true, false, 0, false},
		{OFF, false, false, 0, false},
		{OFF, false, true, 0, false},
		{MAJ, true, false, 0, false},
		{MAJ, true, true, 0, false},
		/* §6.5 item 1: refused without quorum ... */
		{MAJ, false, false, -EPERM, false},
		/* ... and --force still promotes, saying it was forced */
		{MAJ, false, true, 0, true},
	};
	size_t i;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(rows); i++) {
		bool forced = !rows[i].forced;
		int rc = quorum_may_promote(rows[i].p, rows[i].quorate, rows[i].force, &forced);

		if (rc != rows[i].rc || (rc == 0 && forced != rows[i].forced))
			fail_msg("row %zu: rc %d forced %d, expected %d %d", i, rc, forced,
				 rows[i].rc, rows[i].forced);
	}
	assert_int_equal(quorum_may_promote((enum quorum_policy)2, true, false, &(bool){0}),
			 -EINVAL);
	assert_int_equal(quorum_may_promote(MAJ, true, false, NULL), -EINVAL);
	assert_int_equal(QUORUM_EXIT_NO_QUORUM, 11);
}

static void test_io(void **state)
{
	static const struct {
		enum quorum_policy p;
		enum quorum_onq onq;
		bool quorate;
		enum state_role role;
		bool forced;
		enum quorum_io io;
	} rows[] = {
		/* quorum off: never touched */
		{OFF, SUSP, false, ROLE_PRIMARY, false, QUORUM_IO_ON},
		{OFF, EIOQ, false, ROLE_PRIMARY, false, QUORUM_IO_ON},
		/* quorate: I/O goes on */
		{MAJ, SUSP, true, ROLE_PRIMARY, false, QUORUM_IO_ON},
		{MAJ, EIOQ, true, ROLE_PRIMARY, false, QUORUM_IO_ON},
		/* a Secondary has no I/O of its own to hold */
		{MAJ, SUSP, false, ROLE_SECONDARY, false, QUORUM_IO_ON},
		{MAJ, EIOQ, false, ROLE_SECONDARY, false, QUORUM_IO_ON},
		{MAJ, SUSP, false, ROLE_UNKNOWN, false, QUORUM_IO_ON},
		/* §6.5 item 2: a Primary without quorum */
		{MAJ, SUSP, false, ROLE_PRIMARY, false, QUORUM_IO_SUSPEND},
		{MAJ, EIOQ, false, ROLE_PRIMARY, false, QUORUM_IO_ERROR},
		/* promoted with --force without quorum: not undone */
		{MAJ, SUSP, false, ROLE_PRIMARY, true, QUORUM_IO_ON},
		{MAJ, EIOQ, false, ROLE_PRIMARY, true, QUORUM_IO_ON},
	};
	size_t i;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(rows); i++) {
		struct quorum_conf q = {rows[i].p, rows[i].onq};
		enum quorum_io io = quorum_io(q, rows[i].quorate, rows[i].role, rows[i].forced);

		if (io != rows[i].io)
			fail_msg("row %zu: io %d, expected %d", i, io, rows[i].io);
	}
}

#define HOSTS                                                                                      \
	"  on alpha { device minor 0; disk /dev/sda; address 10.0.0.1:7789; meta-disk internal; }\n" \
	"  on beta { device minor 0; disk /dev/sdb; address 10.0.0.2:7789; meta-disk internal; }\n"

static void test_conf(void **state)
{
	static const struct {
		const char *text;
		enum quorum_policy p;
		enum quorum_onq onq;
	} rows[] = {
		{"resource r0 {\n" HOSTS "}\n", OFF, SUSP},
		{"resource r0 {\n  options { quorum majority; }\n" HOSTS "}\n", MAJ, SUSP},
		{"resource r0 {\n  options { quorum majority; on-no-quorum io-error; }\n" HOSTS
		 "}\n",
		 MAJ, EIOQ},
		{"common { options { quorum majority; on-no-quorum io-error; } }\n"
		 "resource r0 {\n" HOSTS "}\n",
		 MAJ, EIOQ},
		{"common { options { quorum majority; on-no-quorum io-error; } }\n"
		 "resource r0 {\n  options { quorum off; }\n" HOSTS "}\n",
		 OFF, EIOQ},
	};
	size_t i;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(rows); i++) {
		struct unit_conf u;
		struct quorum_conf q;

		unit_load(&u, rows[i].text);
		assert_int_equal(u.rc, 0);
		q = quorum_conf_of(u.c, conf_find_res(u.c, "r0"));
		if (q.policy != rows[i].p || q.onq != rows[i].onq)
			fail_msg("row %zu: %s/%s", i, quorum_policy_name(q.policy),
				 quorum_onq_name(q.onq));
	}
	assert_string_equal(quorum_policy_name(MAJ), "majority");
	assert_string_equal(quorum_policy_name(OFF), "off");
	assert_string_equal(quorum_onq_name(EIOQ), "io-error");
	assert_string_equal(quorum_onq_name(SUSP), "suspend-io");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_promote),
		cmocka_unit_test(test_io),
		cmocka_unit_test(test_conf),
	};

	return cmocka_run_group_tests_name("quorum", tests, NULL, unit_teardown);
}
