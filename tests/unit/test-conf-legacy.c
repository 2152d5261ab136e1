/*
 * test-conf-legacy: DRBD 8.3 and older spellings, each mapped to its
 * DRBD 8.4 section and name with a warning at its position, or warned
 * about and ignored.
 */
#include "unit.h"

static const struct conf_val *res_val(const struct unit_conf *u, const char *res,
				      enum conf_sect s, const char *name)
{
	const struct conf_res *r = conf_find_res(u->c, res);

	assert_non_null(r);
	return conf_list_find(&r->opts[s], name);
}

static void test_legacy_syncer(void **state)
{
	static const struct {
		enum conf_sect sect;
		const char *name, *text;
		int line;
	} moved[] = {
		{CONF_SECT_DISK, "resync-rate", "10M", 3},
		{CONF_SECT_DISK, "resync-after", "r1", 4},
		{CONF_SECT_DISK, "al-extents", "257", 5},
		{CONF_SECT_NET, "verify-alg", "sha1", 6},
		{CONF_SECT_NET, "csums-alg", "md5", 7},
		{CONF_SECT_NET, "use-rle", "no", 8},
		{CONF_SECT_OPTIONS, "cpu-mask", "3", 9},
		{CONF_SECT_OPTIONS, "on-no-data-accessible", "suspend-io", 10},
		{CONF_SECT_DISK, "c-plan-ahead", "10", 11},
		{CONF_SECT_DISK, "c-fill-target", "1M", 12},
		{CONF_SECT_DISK, "c-delay-target", "5", 13},
		{CONF_SECT_DISK, "c-max-rate", "100M", 14},
		{CONF_SECT_DISK, "c-min-rate", "1M", 15},
	};
	struct unit_conf u;
	const struct conf_res *r;
	size_t i;

	(void)state;
	unit_load(&u, "resource r0 {\n"
		      "  syncer {\n"
		      "    rate 10M;\n"
		      "    after r1;\n"
		      "    al-extents 257;\n"
		      "    verify-alg sha1;\n"
		      "    csums-alg md5;\n"
		      "    use-rle no;\n"
		      "    cpu-mask 3;\n"
		      "    on-no-data-accessible suspend-io;\n"
		      "    c-plan-ahead 10;\n"
		      "    c-fill-target 1M;\n"
		      "    c-delay-target 5;\n"
		      "    c-max-rate 100M;\n"
		      "    c-min-rate 1M;\n"
		      "    delay-probe-volume 16K;\n"
		      "    delay-probe-interval 100;\n"
		      "    throttle-threshold 20;\n"
		      "    hold-off-threshold 100;\n"
		      "  }\n" UNIT_HOSTS "}\n"
		      "resource r1 {\n" UNIT_HOSTS_AT("1", "7790") "}\n");
	assert_loaded(&u);
	r = conf_find_res(u.c, "r0");
	assert_warning_at(u.d, 2, 3, "syncer");
	for (i = 0; i < UNIT_ARRAY_SIZE(moved); i++) {
		const struct conf_val *v = conf_list_find(&r->opts[moved[i].sect], moved[i].name);

		if (!v)
			fail_msg("syncer option did not land in %s { %s }",
				 conf_sect_name(moved[i].sect), moved[i].name);
		assert_string_equal(v->text, moved[i].text);
		assert_int_equal(v->loc.line, moved[i].line);
		assert_warning_at(u.d, moved[i].line, 5, moved[i].name);
	}
	assert_int_equal(conf_res_num(u.c, r, CONF_SECT_DISK, "resync-rate"), 10240);
	assert_int_equal(conf_res_num(u.c, r, CONF_SECT_DISK, "c-fill-target"), 2048);
	assert_false(conf_res_bool(u.c, r, CONF_SECT_NET, "use-rle"));
	/* the ignored ones: a warning each, and no value anywhere */
	for (i = 16; i <= 19; i++)
		assert_warning_at(u.d, (int)i, 5, "no effect");
	for (i = 0; i < CONF_SECT_COUNT; i++) {
		const struct conf_val *v;

		for (v = r->opts[i].head; v; v = v->next)
			assert_true(v->loc.line < 16);
	}
	unit_done(&u);

	/* the syncer section in common, too */
	unit_load(&u, "common { syncer { rate 1M; } }\n" UNIT_RES(""));
	assert_loaded(&u);
	assert_non_null(conf_list_find(conf_common(u.c, CONF_SECT_DISK), "resync-rate"));
	assert_int_equal(conf_res_num(u.c, conf_resources(u.c), CONF_SECT_DISK, "resync-rate"),
			 1024);
	unit_done(&u);

	/* a syncer option that has no 8.4 home */
	unit_load(&u, UNIT_RES("  syncer { speed 10M; }\n"));
	assert_rejected(&u);
	assert_error_at(u.d, 2, 12, "speed");
	unit_done(&u);
}

static void test_legacy_negations(void **state)
{
	static const struct {
		enum conf_sect sect;
		const char *name;
		int line, col;
	} negated[] = {
		{CONF_SECT_DISK, "disk-barrier", 3, 5},  {CONF_SECT_DISK, "disk-flushes", 3, 22},
		{CONF_SECT_DISK, "disk-drain", 4, 5},    {CONF_SECT_DISK, "md-flushes", 4, 20},
		{CONF_SECT_NET, "tcp-cork", 6, 9},
	};
	struct unit_conf u;
	const struct conf_res *r;
	size_t i;

	(void)state;
	unit_load(&u, UNIT_RES("  disk {\n"
			  "    no-disk-barrier; no-disk-flushes;\n"
			  "    no-disk-drain; no-md-flushes;\n"
			  "  }\n"
			  "  net { no-tcp-cork; }\n"));
	assert_loaded(&u);
	r = conf_resources(u.c);
	for (i = 0; i < UNIT_ARRAY_SIZE(negated); i++) {
		const struct conf_val *v =
			conf_list_find(&r->opts[negated[i].sect], negated[i].name);

		if (!v)
			fail_msg("no-%s did not set %s", negated[i].name, negated[i].name);
		assert_string_equal(v->text, "no");
		assert_false(v->v.yes);
		assert_false(conf_res_bool(u.c, r, negated[i].sect, negated[i].name));
		assert_warning_at(u.d, negated[i].line, negated[i].col,
				  unit_fmt("%s no", negated[i].name));
	}
	unit_done(&u);

	/* in common and in a volume's disk section */
	unit_load(&u, "common { disk { no-disk-flushes; } }\n"
		      "resource r0 {\n"
		      "  on alpha { volume 0 { disk { no-md-flushes; } device minor 0; "
		      "disk /dev/sda; meta-disk internal; } address 10.0.0.1:7789; }\n"
		      "  on beta { device minor 0; disk /dev/sdb; meta-disk internal; address "
		      "10.0.0.2:7789; }\n"
		      "}\n");
	assert_loaded(&u);
	assert_string_equal(conf_list_find(conf_common(u.c, CONF_SECT_DISK), "disk-flushes")->text,
			    "no");
	assert_string_equal(
		conf_list_find(&conf_resources(u.c)->hosts->vols->disk_opts, "md-flushes")->text,
		"no");
	unit_done(&u);

	unit_load(&u, UNIT_RES("  disk { no-disk-flushes yes; }\n"));
	assert_rejected(&u);
	assert_error_at(u.d, 2, 26, "no value");
	unit_done(&u);
}

static void test_legacy_protocol(void **state)
{
	struct unit_conf u;
	const struct conf_val *v;

	(void)state;
	unit_load(&u, UNIT_RES("  protocol A;\n"));
	assert_loaded(&u);
	v = res_val(&u, "r0", CONF_SECT_NET, "protocol");
	assert_non_null(v);
	assert_string_equal(v->text, "A");
	assert_int_equal(v->loc.line, 2);
	assert_warning_at(u.d, 2, 3, "net { protocol A; }");
	unit_done(&u);

	unit_load(&u, "common { protocol B; }\n" UNIT_RES(""));
	assert_loaded(&u);
	assert_string_equal(conf_res_text(u.c, conf_resources(u.c), CONF_SECT_NET, "protocol"),
			    "B");
	assert_warning_at(u.d, 1, 10, "protocol");
	unit_done(&u);

	/* the old and the new position together set it twice: as drbdadm-84,
	 * the later one counts, with a warning */
	unit_load(&u, UNIT_RES("  protocol A;\n  net { protocol C; }\n"));
	assert_loaded(&u);
	assert_warning_at(u.d, 3, 9, "twice");
	assert_string_equal(res_val(&u, "r0", CONF_SECT_NET, "protocol")->text, "C");
	unit_done(&u);
	unit_load(&u, UNIT_RES("  net { protocol C; }\n  protocol A;\n"));
	assert_loaded(&u);
	assert_warning_at(u.d, 3, 3, "twice");
	assert_string_equal(res_val(&u, "r0", CONF_SECT_NET, "protocol")->text, "A");
	unit_done(&u);
}

static void test_legacy_outdate_peer(void **state)
{
	struct unit_conf u;
	const struct conf_val *v;

	(void)state;
	unit_load(&u, UNIT_RES("  handlers { outdate-peer \"/usr/lib/drbd/outdate-peer.sh\"; }\n"));
	assert_loaded(&u);
	v = res_val(&u, "r0", CONF_SECT_HANDLERS, "fence-peer");
	assert_non_null(v);
	assert_string_equal(v->text, "/usr/lib/drbd/outdate-peer.sh");
	assert_null(res_val(&u, "r0", CONF_SECT_HANDLERS, "outdate-peer"));
	assert_warning_at(u.d, 2, 14, "fence-peer");
	unit_done(&u);
}

static void test_legacy_obsolete(void **state)
{
	struct unit_conf u;
	const struct conf_res *r;
	int i;

	(void)state;
	unit_load(&u, UNIT_RES("  incon-degr-cmd \"halt -f\";\n"
			  "  net { on-disconnect reconnect; }\n"
			  "  syncer { group 1; }\n"
			  "  disk { use-bmbv; }\n"));
	assert_loaded(&u);
	assert_warning_at(u.d, 2, 3, "pri-on-incon-degr");
	assert_warning_at(u.d, 3, 9, "obsolete");
	assert_warning_at(u.d, 4, 12, "resync-after");
	assert_warning_at(u.d, 5, 10, "use-bmbv");
	r = conf_resources(u.c);
	for (i = 0; i < CONF_SECT_COUNT; i++)
		assert_null(r->opts[i].head); /* nothing was set */
	unit_done(&u);

	unit_load(&u, "global { disable-io-hints; }\n" UNIT_RES(""));
	assert_loaded(&u);
	assert_warning_at(u.d, 1, 10, "disable-io-hints");
	assert_null(conf_global(u.c)->head);
	unit_done(&u);
}

static void test_legacy_on_io_error_panic(void **state)
{
	struct unit_conf u;

	(void)state;
	unit_load(&u, UNIT_RES("  disk { on-io-error panic; }\n"));
	assert_loaded(&u);
	assert_string_equal(res_val(&u, "r0", CONF_SECT_DISK, "on-io-error")->text, "detach");
	assert_warning_at(u.d, 2, 22, "panic");
	unit_done(&u);
}

/* ---------------------------------------------------------------- every entry */

/* A value the new option accepts, as it would be written. */
static const char *value_for(const struct conf_opt *o)
{
	switch (o->type) {
	case CONF_T_HASH:
		return "sha1";
	case CONF_T_RESOURCE:
		return "r1";
	case CONF_T_HANDLER:
		return "/bin/true";
	default:
		assert_non_null(o->def);
		return o->def;
	}
}

/* The statement that spells entry l in the section it belongs to. */
static const char *legacy_stmt(const struct conf_legacy *l, const char *value)
{
	const char *kv = value ? unit_fmt("%s %s;", l->name, value) : unit_fmt("%s;", l->name);

	switch (l->sect) {
	case CONF_LSECT_SYNCER:
		return unit_fmt("  syncer { %s }\n", kv);
	case CONF_LSECT_RESOURCE:
		return unit_fmt("  %s\n", kv);
	case CONF_SECT_GLOBAL:
		return unit_fmt("global { %s }\n", kv);
	default:
		return unit_fmt("  %s { %s }\n", conf_sect_name((enum conf_sect)l->sect), kv);
	}
}

/* Each entry of the legacy table, written in a configuration: mapped to
 * its 8.4 option (or ignored) with a warning at its keyword. */
static void test_legacy_entry(void **state)
{
	const struct conf_legacy *l = *state;
	const struct conf_opt *o = NULL;
	const char *value = NULL, *stmt, *text;
	const struct conf_res *r;
	struct unit_conf u;
	int line, col, i;

	if (l->kind == CONF_LEGACY_MOVE) {
		o = conf_opt_find(l->new_sect, l->new_name);
		assert_non_null(o);
		value = value_for(o);
	} else if (l->kind == CONF_LEGACY_NEGATE) {
		o = conf_opt_find(l->new_sect, l->new_name);
		assert_non_null(o);
	} else if (l->sect != CONF_SECT_GLOBAL) {
		value = "1";
	}
	stmt = legacy_stmt(l, value);
	col = (int)(strstr(stmt, l->name) - stmt) + 1;
	if (l->sect == CONF_SECT_GLOBAL) {
		text = unit_fmt("%s" UNIT_RES(""), stmt);
		line = 1;
	} else {
		text = unit_fmt("resource r0 {\n%s" UNIT_HOSTS "}\n"
				"resource r1 {\n" UNIT_HOSTS_AT("1", "7790") "}\n",
				stmt);
		line = 2;
	}
	unit_load(&u, text);
	assert_loaded(&u);
	assert_warning_at(u.d, line, col, l->name);
	r = conf_find_res(u.c, "r0");
	if (o) {
		const struct conf_val *v = l->sect == CONF_SECT_GLOBAL
						   ? conf_list_find(conf_global(u.c), o->name)
						   : conf_list_find(&r->opts[o->sect], o->name);

		if (!v)
			fail_msg("%s did not set %s { %s }", stmt, conf_sect_name(o->sect), o->name);
		assert_string_equal(v->text, value ? value : "no");
		assert_int_equal(v->loc.line, line);
	} else {
		assert_null(conf_global(u.c)->head);
		for (i = 0; i < CONF_SECT_COUNT; i++)
			assert_null(r->opts[i].head);
	}
	unit_done(&u);
}

int main(void)
{
	struct CMUnitTest *tests = calloc(conf_legacies_count + 8, sizeof(*tests));
	size_t n = 0, i;
	int rc;

	if (!tests)
		return 1;
#define ADD(fn) tests[n++] = (struct CMUnitTest)cmocka_unit_test(fn)
	ADD(test_legacy_syncer);
	ADD(test_legacy_negations);
	ADD(test_legacy_protocol);
	ADD(test_legacy_outdate_peer);
	ADD(test_legacy_obsolete);
	ADD(test_legacy_on_io_error_panic);
#undef ADD
	for (i = 0; i < conf_legacies_count; i++) {
		tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(test_legacy_entry,
									(void *)&conf_legacies[i]);
		tests[n++].name = conf_legacies[i].name;
	}
	rc = _cmocka_run_group_tests("conf-legacy", tests, n, NULL, unit_teardown);
	free(tests);
	return rc;
}
