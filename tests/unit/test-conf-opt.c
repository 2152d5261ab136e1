/*
 * test-conf-opt: the option table, value checking and unit conversion.
 *
 * One generated test per option of conf_opts[] checks its bounds (or its
 * enum values, boolean words, hash names) and its default; fixed tables
 * check unit conversion as DRBD does it, the DRBD 8.4 limits, and the
 * legacy mapping table.
 */
#include "unit.h"

#include "conf-opt.h"

static int parse(const struct conf_opt *o, const char *text, struct conf_value *v)
{
	char err[512] = "";
	int rc = conf_opt_parse(o, text, v, err, sizeof(err));

	if (rc < 0)
		assert_true(strlen(err) > 0); /* a failure always says why */
	return rc;
}

static void expect_ok(const struct conf_opt *o, const char *text, struct conf_value *v)
{
	char err[512] = "";
	int rc = conf_opt_parse(o, text, v, err, sizeof(err));

	if (rc != 0)
		fail_msg("%s '%s': rc %d (%s)", o->name, text, rc, err);
}

static void expect_rc(const struct conf_opt *o, const char *text, int want)
{
	struct conf_value v;
	int rc = parse(o, text, &v);

	if (rc != want)
		fail_msg("%s '%s': rc %d, expected %d", o->name, text, rc, want);
}

static const struct conf_opt *opt(enum conf_sect s, const char *name)
{
	const struct conf_opt *o = conf_opt_find(s, name);

	if (!o)
		fail_msg("option %s/%s is not in the table", conf_sect_name(s), name);
	return o;
}

/* ---------------------------------------------------------------- per option */

static void check_num(const struct conf_opt *o)
{
	struct conf_value v;
	char buf[32];

	assert_true(o->min <= o->max);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->min);
	expect_ok(o, buf, &v);
	assert_int_equal(v.num, o->min);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->max);
	expect_ok(o, buf, &v);
	assert_int_equal(v.num, o->max);
	if (o->min > 0) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->min - 1);
		expect_rc(o, buf, -ERANGE);
	}
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->max + 1);
	expect_rc(o, buf, -ERANGE);
	expect_rc(o, "many", -EINVAL);
	expect_rc(o, "", -EINVAL);
}

static void check_enum(const struct conf_opt *o)
{
	struct conf_value v;
	bool def_found = false;
	int i;

	assert_non_null(o->enums);
	assert_non_null(o->enums[0]);
	for (i = 0; o->enums[i]; i++) {
		expect_ok(o, o->enums[i], &v);
		assert_int_equal(v.idx, i);
		if (o->def && strcmp(o->def, o->enums[i]) == 0)
			def_found = true;
	}
	if (o->def)
		assert_true(def_found);
	expect_rc(o, "no-such-value", -EINVAL);
	expect_rc(o, "", -EINVAL);
}

static void check_bool(const struct conf_opt *o)
{
	static const struct {
		const char *text;
		bool yes;
	} words[] = {
		{"yes", true}, {"no", false}, {"on", true},
		{"off", false}, {"true", true}, {"false", false},
	};
	struct conf_value v;
	size_t i;

	for (i = 0; i < UNIT_ARRAY_SIZE(words); i++) {
		expect_ok(o, words[i].text, &v);
		assert_int_equal(v.yes, words[i].yes);
	}
	expect_rc(o, "maybe", -EINVAL);
	expect_rc(o, "1", -EINVAL);
	expect_rc(o, "", -EINVAL);
	assert_non_null(o->def);
	assert_true(!strcmp(o->def, "yes") || !strcmp(o->def, "no"));
}

static void check_hash(const struct conf_opt *o)
{
	struct conf_value v;
	int i;

	for (i = 0; conf_hash_names[i]; i++) {
		expect_ok(o, conf_hash_names[i], &v);
		assert_int_equal(v.idx, i);
	}
	expect_rc(o, "sha999", -EINVAL);
	expect_rc(o, "SHA1", -EINVAL);
	expect_rc(o, "", -EINVAL);
}

static void check_hex(const struct conf_opt *o)
{
	static const char *const good[] = {"0", "1", "ff", "FF", "0x3", "deadbeef", "ff,ffffffff"};
	static const char *const bad[] = {"", "g", "0xg", "-1", "3 ", "x3"};
	struct conf_value v;
	size_t i;

	for (i = 0; i < UNIT_ARRAY_SIZE(good); i++)
		expect_ok(o, good[i], &v);
	for (i = 0; i < UNIT_ARRAY_SIZE(bad); i++)
		expect_rc(o, bad[i], -EINVAL);
}

/* Every option: its type's checks, its default, its table entry. */
static void test_option(void **state)
{
	const struct conf_opt *o = *state;
	struct conf_value v;

	assert_non_null(o->name);
	assert_true(o->sect < CONF_SECT_COUNT);
	assert_ptr_equal(conf_opt_find(o->sect, o->name), o);
	assert_non_null(o->help);
	assert_true(strlen(o->help) > 10);
	if (o->type != CONF_T_NUM)
		assert_int_equal(o->unit, CONF_U_NONE);
	if (o->type != CONF_T_ENUM)
		assert_null(o->enums);
	if (o->def)
		expect_ok(o, o->def, &v);
	switch (o->type) {
	case CONF_T_NUM:
		check_num(o);
		break;
	case CONF_T_ENUM:
		check_enum(o);
		break;
	case CONF_T_BOOL:
		check_bool(o);
		break;
	case CONF_T_HASH:
		check_hash(o);
		break;
	case CONF_T_HEX:
		check_hex(o);
		break;
	case CONF_T_STRING:
	case CONF_T_HANDLER:
	case CONF_T_RESOURCE:
	case CONF_T_HOST:
		expect_ok(o, "some-thing", &v);
		break;
	case CONF_T_FLAG:
		assert_null(o->def);
		break;
	}
}

/* ---------------------------------------------------------------- the table */

static void test_table_unique_and_sections(void **state)
{
	size_t i, j;
	unsigned int per_sect[CONF_SECT_COUNT] = {0};

	(void)state;
	assert_true(conf_opts_count > 60);
	for (i = 0; i < conf_opts_count; i++) {
		per_sect[conf_opts[i].sect]++;
		for (j = 0; j < i; j++)
			if (!strcmp(conf_opts[i].name, conf_opts[j].name))
				fail_msg("option %s is in the table twice", conf_opts[i].name);
	}
	for (i = 0; i < CONF_SECT_COUNT; i++)
		assert_true(per_sect[i] > 0);
	assert_null(conf_opt_find(CONF_SECT_DISK, "protocol"));
	assert_null(conf_opt_find(CONF_SECT_NET, "no-such-option"));
	assert_string_equal(conf_sect_name(CONF_SECT_GLOBAL), "global");
	assert_string_equal(conf_sect_name(CONF_SECT_OPTIONS), "options");
	assert_string_equal(conf_sect_name(CONF_SECT_NET), "net");
	assert_string_equal(conf_sect_name(CONF_SECT_DISK), "disk");
	assert_string_equal(conf_sect_name(CONF_SECT_STARTUP), "startup");
	assert_string_equal(conf_sect_name(CONF_SECT_HANDLERS), "handlers");
	assert_string_equal(conf_type_name(CONF_T_NUM), "number");
	assert_string_equal(conf_unit_name(CONF_U_KIB_S), "KiB/s");
}

/* The ranges, units and defaults DRBD 8.4 enforces (drbd_limits.h). */
static const struct limit {
	enum conf_sect sect;
	const char *name;
	enum conf_unit unit;
	const char *def;
	uint64_t min, max;
} drbd_limits[] = {
	{CONF_SECT_GLOBAL, "minor-count", CONF_U_NONE, "32", 1, 255},
	{CONF_SECT_GLOBAL, "dialog-refresh", CONF_U_SECONDS, "1", 0, 600},
	{CONF_SECT_NET, "timeout", CONF_U_DECISEC, "60", 1, 600},
	{CONF_SECT_NET, "connect-int", CONF_U_SECONDS, "10", 1, 120},
	{CONF_SECT_NET, "ping-int", CONF_U_SECONDS, "10", 1, 120},
	{CONF_SECT_NET, "ping-timeout", CONF_U_DECISEC, "5", 1, 300},
	{CONF_SECT_NET, "socket-check-timeout", CONF_U_DECISEC, "0", 0, 300},
	{CONF_SECT_NET, "ko-count", CONF_U_NONE, "7", 0, 200},
	{CONF_SECT_NET, "max-buffers", CONF_U_NONE, "2048", 32, 131072},
	{CONF_SECT_NET, "max-epoch-size", CONF_U_NONE, "2048", 1, 20000},
	{CONF_SECT_NET, "sndbuf-size", CONF_U_BYTES, "0", 0, 10 << 20},
	{CONF_SECT_NET, "rcvbuf-size", CONF_U_BYTES, "0", 0, 10 << 20},
	{CONF_SECT_NET, "unplug-watermark", CONF_U_NONE, "128", 1, 131072},
	{CONF_SECT_NET, "congestion-fill", CONF_U_SECTORS, "0", 0, 10 << 21},
	{CONF_SECT_NET, "congestion-extents", CONF_U_NONE, "1237", 67, 0xfffe},
	{CONF_SECT_DISK, "size", CONF_U_SECTORS, "0", 0, 2ULL << 40},
	{CONF_SECT_DISK, "max-bio-bvecs", CONF_U_NONE, "0", 0, 128},
	{CONF_SECT_DISK, "resync-rate", CONF_U_KIB_S, "250", 1, 4 << 20},
	{CONF_SECT_DISK, "al-extents", CONF_U_NONE, "1237", 67, 0xfffe},
	{CONF_SECT_DISK, "c-plan-ahead", CONF_U_DECISEC, "20", 0, 300},
	{CONF_SECT_DISK, "c-delay-target", CONF_U_DECISEC, "10", 1, 100},
	{CONF_SECT_DISK, "c-fill-target", CONF_U_SECTORS, "100", 0, 1 << 20},
	{CONF_SECT_DISK, "c-max-rate", CONF_U_KIB_S, "102400", 250, 4 << 20},
	{CONF_SECT_DISK, "c-min-rate", CONF_U_KIB_S, "250", 0, 4 << 20},
	{CONF_SECT_DISK, "disk-timeout", CONF_U_DECISEC, "0", 0, 6000},
	{CONF_SECT_DISK, "rs-discard-granularity", CONF_U_BYTES, "0", 0, 1 << 20},
	{CONF_SECT_STARTUP, "wfc-timeout", CONF_U_SECONDS, "0", 0, 300000},
	{CONF_SECT_STARTUP, "degr-wfc-timeout", CONF_U_SECONDS, "0", 0, 300000},
	{CONF_SECT_STARTUP, "outdated-wfc-timeout", CONF_U_SECONDS, "0", 0, 300000},
};

static void test_drbd_limits(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(drbd_limits); i++) {
		const struct limit *l = &drbd_limits[i];
		const struct conf_opt *o = opt(l->sect, l->name);

		if (o->type != CONF_T_NUM || o->unit != l->unit || strcmp(o->def, l->def) ||
		    o->min != l->min || o->max != l->max)
			fail_msg("%s: table has unit %d def %s range %llu..%llu; "
				 "DRBD 8.4 has unit %d def %s range %llu..%llu",
				 l->name, o->unit, o->def, (unsigned long long)o->min,
				 (unsigned long long)o->max, l->unit, l->def,
				 (unsigned long long)l->min, (unsigned long long)l->max);
	}
}

/* Defaults of non-numeric options that changed in 8.4 or are easy to get wrong. */
static void test_drbd_defaults(void **state)
{
	static const struct {
		enum conf_sect sect;
		const char *name, *def;
	} defs[] = {
		{CONF_SECT_NET, "protocol", "C"},
		{CONF_SECT_NET, "after-sb-0pri", "disconnect"},
		{CONF_SECT_NET, "after-sb-1pri", "disconnect"},
		{CONF_SECT_NET, "after-sb-2pri", "disconnect"},
		{CONF_SECT_NET, "rr-conflict", "disconnect"},
		{CONF_SECT_NET, "on-congestion", "block"},
		{CONF_SECT_NET, "use-rle", "yes"},
		{CONF_SECT_NET, "tcp-cork", "yes"},
		{CONF_SECT_NET, "allow-two-primaries", "no"},
		{CONF_SECT_DISK, "on-io-error", "detach"},
		{CONF_SECT_DISK, "fencing", "dont-care"},
		{CONF_SECT_DISK, "disk-barrier", "no"},
		{CONF_SECT_DISK, "disk-flushes", "yes"},
		{CONF_SECT_DISK, "disk-drain", "yes"},
		{CONF_SECT_DISK, "md-flushes", "yes"},
		{CONF_SECT_DISK, "al-updates", "yes"},
		{CONF_SECT_DISK, "read-balancing", "prefer-local"},
		{CONF_SECT_OPTIONS, "on-no-data-accessible", "io-error"},
		/* DRBD 9's (8.4 has no quorum) */
		{CONF_SECT_OPTIONS, "quorum", "off"},
		{CONF_SECT_OPTIONS, "on-no-quorum", "suspend-io"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(defs); i++) {
		const struct conf_opt *o = opt(defs[i].sect, defs[i].name);

		assert_non_null(o->def);
		if (strcmp(o->def, defs[i].def))
			fail_msg("%s: default %s, DRBD 8.4 has %s", o->name, o->def, defs[i].def);
	}
}

/* ---------------------------------------------------------------- conversion */

struct conv {
	const char *text;
	enum conf_unit unit;
	int rc;
	uint64_t want;
};

static const struct conv conversions[] = {
	/* a bare number is taken in the default unit as-is */
	{"0", CONF_U_NONE, 0, 0},
	{"123", CONF_U_SECTORS, 0, 123},
	{"512", CONF_U_KIB, 0, 512},
	{"7", CONF_U_DECISEC, 0, 7},
	{"00042", CONF_U_BYTES, 0, 42},
	/* K, M, G are binary; s is 512-byte sectors; k, m, g too */
	{"5K", CONF_U_NONE, 0, 5120},
	{"5k", CONF_U_NONE, 0, 5120},
	{"1M", CONF_U_BYTES, 0, 1048576},
	{"1m", CONF_U_BYTES, 0, 1048576},
	{"1G", CONF_U_BYTES, 0, 1073741824},
	{"1g", CONF_U_BYTES, 0, 1073741824},
	{"1s", CONF_U_BYTES, 0, 512},
	{"3s", CONF_U_NONE, 0, 1536},
	{"1K", CONF_U_SECTORS, 0, 2},
	{"1M", CONF_U_SECTORS, 0, 2048},
	{"1G", CONF_U_SECTORS, 0, 2097152},
	{"8s", CONF_U_SECTORS, 0, 8},
	{"10M", CONF_U_KIB_S, 0, 10240},
	{"100M", CONF_U_KIB_S, 0, 102400},
	{"4G", CONF_U_KIB_S, 0, 4194304},
	{"2G", CONF_U_KIB, 0, 2097152},
	{"1K", CONF_U_KIB, 0, 1},
	/* converting into a larger unit rounds up */
	{"4000s", CONF_U_KIB, 0, 2000},
	{"4001s", CONF_U_KIB, 0, 2001},
	{"1s", CONF_U_KIB, 0, 1},
	{"1s", CONF_U_KIB_S, 0, 1},
	{"3s", CONF_U_KIB, 0, 2},
	{"1025s", CONF_U_KIB, 0, 513},
	{"0s", CONF_U_KIB, 0, 0},
	{"0K", CONF_U_NONE, 0, 0},
	/* not numbers */
	{"", CONF_U_NONE, -EINVAL, 0},
	{"abc", CONF_U_NONE, -EINVAL, 0},
	{"-1", CONF_U_NONE, -EINVAL, 0},
	{"+1", CONF_U_NONE, -EINVAL, 0},
	{" 1", CONF_U_NONE, -EINVAL, 0},
	{"1 ", CONF_U_NONE, -EINVAL, 0},
	{"1.5M", CONF_U_BYTES, -EINVAL, 0},
	{"12X", CONF_U_NONE, -EINVAL, 0},
	{"12KB", CONF_U_BYTES, -EINVAL, 0},
	{"12Ki", CONF_U_BYTES, -EINVAL, 0},
	{"12T", CONF_U_BYTES, -EINVAL, 0},
	{"0x10", CONF_U_NONE, -EINVAL, 0},
	{"K", CONF_U_NONE, -EINVAL, 0},
	/* overflow of 64 bits, in the digits or through the suffix */
	{"18446744073709551616", CONF_U_BYTES, -ERANGE, 0},
	{"99999999999999999999999", CONF_U_BYTES, -ERANGE, 0},
	{"17179869184G", CONF_U_BYTES, -ERANGE, 0},
	{"17179869183G", CONF_U_BYTES, 0, 18446744072635809792ULL},
	{"17179869184G", CONF_U_KIB, 0, 1ULL << 54},
	{"36028797018963968K", CONF_U_BYTES, -ERANGE, 0},
	{"36028797018963968s", CONF_U_BYTES, -ERANGE, 0},
	{"36028797018963967s", CONF_U_BYTES, 0, 36028797018963967ULL * 512},
	{"1000000000000000000", CONF_U_NONE, 0, 1000000000000000000ULL},
};

static void test_conversion(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(conversions); i++) {
		const struct conv *c = &conversions[i];
		char err[256] = "";
		uint64_t got = 0xdeadbeef;
		int rc = conf_opt_parse_num(c->text, c->unit, &got, err, sizeof(err));

		if (rc != c->rc || (rc == 0 && got != c->want))
			fail_msg("'%s' into %s: rc %d value %llu (%s); expected rc %d value %llu",
				 c->text, conf_unit_name(c->unit), rc, (unsigned long long)got, err,
				 c->rc, (unsigned long long)c->want);
		if (rc < 0)
			assert_true(strlen(err) > 0);
	}
}

/* Suffixed values go through the range check after conversion. */
static void test_range_after_conversion(void **state)
{
	const struct conf_opt *rate = opt(CONF_SECT_DISK, "resync-rate");
	const struct conf_opt *sndbuf = opt(CONF_SECT_NET, "sndbuf-size");
	const struct conf_opt *size = opt(CONF_SECT_DISK, "size");
	const struct conf_opt *fill = opt(CONF_SECT_DISK, "c-fill-target");
	struct conf_value v;

	(void)state;
	expect_ok(rate, "4G", &v);
	assert_int_equal(v.num, 4194304);
	expect_rc(rate, "5G", -ERANGE);
	expect_ok(rate, "1s", &v); /* rounds up to 1 KiB/s, the minimum */
	assert_int_equal(v.num, 1);
	expect_ok(sndbuf, "10M", &v);
	assert_int_equal(v.num, 10485760);
	expect_rc(sndbuf, "10241K", -ERANGE);
	expect_ok(size, "1G", &v);
	assert_int_equal(v.num, 2097152);
	expect_ok(fill, "512M", &v);
	assert_int_equal(v.num, 1048576);
	expect_rc(fill, "513M", -ERANGE);
	expect_rc(rate, "99999999999999999999999", -ERANGE);
	expect_rc(rate, "10X", -EINVAL);
}

static void test_asb_discard_node(void **state)
{
	const struct conf_opt *p0 = opt(CONF_SECT_NET, "after-sb-0pri");
	const struct conf_opt *p1 = opt(CONF_SECT_NET, "after-sb-1pri");
	struct conf_value v;

	(void)state;
	expect_ok(p0, "discard-node-alpha", &v);
	assert_int_equal(v.idx, CONF_ASB_DISCARD_NODE);
	expect_rc(p0, "discard-node-", -EINVAL);
	expect_rc(p1, "discard-node-alpha", -EINVAL);
	expect_ok(p0, "discard-least-changes", &v);
	assert_int_not_equal(v.idx, CONF_ASB_DISCARD_NODE);
}

static void test_shared_secret_length(void **state)
{
	const struct conf_opt *o = opt(CONF_SECT_NET, "shared-secret");
	char secret[66];
	struct conf_value v;

	(void)state;
	memset(secret, 'k', 64);
	secret[64] = '\0';
	expect_ok(o, secret, &v);
	expect_ok(o, "", &v);
	secret[64] = 'k';
	secret[65] = '\0';
	expect_rc(o, secret, -ERANGE);
}

/* ---------------------------------------------------------------- legacy */

static int lsect_valid(int s)
{
	return (s >= 0 && s < CONF_SECT_COUNT) || s == CONF_LSECT_SYNCER ||
	       s == CONF_LSECT_RESOURCE;
}

/* Every entry of the legacy table maps to an option that exists. */
static void test_legacy_table(void **state)
{
	size_t i, j;

	(void)state;
	assert_true(conf_legacies_count > 20);
	for (i = 0; i < conf_legacies_count; i++) {
		const struct conf_legacy *l = &conf_legacies[i];
		const struct conf_opt *o;

		assert_true(lsect_valid(l->sect));
		assert_ptr_equal(conf_legacy_find(l->sect, l->name), l);
		for (j = 0; j < i; j++)
			if (conf_legacies[j].sect == l->sect &&
			    !strcmp(conf_legacies[j].name, l->name))
				fail_msg("legacy %s is in the table twice", l->name);
		switch (l->kind) {
		case CONF_LEGACY_MOVE:
		case CONF_LEGACY_NEGATE:
			assert_non_null(l->new_name);
			o = conf_opt_find(l->new_sect, l->new_name);
			if (!o)
				fail_msg("legacy %s maps to %s/%s, which is not an option", l->name,
					 conf_sect_name(l->new_sect), l->new_name);
			if (l->kind == CONF_LEGACY_NEGATE)
				assert_int_equal(o->type, CONF_T_BOOL);
			break;
		case CONF_LEGACY_IGNORED:
		case CONF_LEGACY_OBSOLETE:
			assert_non_null(l->advice);
			assert_true(strlen(l->advice) > 10);
			break;
		}
		/* a legacy name must not hide a real option of its section */
		if (l->sect < CONF_SECT_COUNT)
			assert_null(conf_opt_find((enum conf_sect)l->sect, l->name));
	}
}

/* The 8.0/8.3 spellings of drbd-semantics.md 1.7, each mapped as DRBD 8.4 does. */
static const struct legacy_want {
	int sect;
	const char *name;
	enum conf_legacy_kind kind;
	enum conf_sect new_sect;
	const char *new_name;
} legacy_wanted[] = {
	{CONF_LSECT_RESOURCE, "protocol", CONF_LEGACY_MOVE, CONF_SECT_NET, "protocol"},
	{CONF_LSECT_SYNCER, "rate", CONF_LEGACY_MOVE, CONF_SECT_DISK, "resync-rate"},
	{CONF_LSECT_SYNCER, "after", CONF_LEGACY_MOVE, CONF_SECT_DISK, "resync-after"},
	{CONF_LSECT_SYNCER, "al-extents", CONF_LEGACY_MOVE, CONF_SECT_DISK, "al-extents"},
	{CONF_LSECT_SYNCER, "c-plan-ahead", CONF_LEGACY_MOVE, CONF_SECT_DISK, "c-plan-ahead"},
	{CONF_LSECT_SYNCER, "c-fill-target", CONF_LEGACY_MOVE, CONF_SECT_DISK, "c-fill-target"},
	{CONF_LSECT_SYNCER, "c-delay-target", CONF_LEGACY_MOVE, CONF_SECT_DISK, "c-delay-target"},
	{CONF_LSECT_SYNCER, "c-max-rate", CONF_LEGACY_MOVE, CONF_SECT_DISK, "c-max-rate"},
	{CONF_LSECT_SYNCER, "c-min-rate", CONF_LEGACY_MOVE, CONF_SECT_DISK, "c-min-rate"},
	{CONF_LSECT_SYNCER, "verify-alg", CONF_LEGACY_MOVE, CONF_SECT_NET, "verify-alg"},
	{CONF_LSECT_SYNCER, "csums-alg", CONF_LEGACY_MOVE, CONF_SECT_NET, "csums-alg"},
	{CONF_LSECT_SYNCER, "use-rle", CONF_LEGACY_MOVE, CONF_SECT_NET, "use-rle"},
	{CONF_LSECT_SYNCER, "cpu-mask", CONF_LEGACY_MOVE, CONF_SECT_OPTIONS, "cpu-mask"},
	{CONF_LSECT_SYNCER, "on-no-data-accessible", CONF_LEGACY_MOVE, CONF_SECT_OPTIONS,
	 "on-no-data-accessible"},
	{CONF_SECT_HANDLERS, "outdate-peer", CONF_LEGACY_MOVE, CONF_SECT_HANDLERS, "fence-peer"},
	{CONF_SECT_DISK, "no-disk-barrier", CONF_LEGACY_NEGATE, CONF_SECT_DISK, "disk-barrier"},
	{CONF_SECT_DISK, "no-disk-flushes", CONF_LEGACY_NEGATE, CONF_SECT_DISK, "disk-flushes"},
	{CONF_SECT_DISK, "no-disk-drain", CONF_LEGACY_NEGATE, CONF_SECT_DISK, "disk-drain"},
	{CONF_SECT_DISK, "no-md-flushes", CONF_LEGACY_NEGATE, CONF_SECT_DISK, "md-flushes"},
	{CONF_SECT_NET, "no-tcp-cork", CONF_LEGACY_NEGATE, CONF_SECT_NET, "tcp-cork"},
	{CONF_LSECT_SYNCER, "delay-probe-volume", CONF_LEGACY_IGNORED, 0, NULL},
	{CONF_LSECT_SYNCER, "delay-probe-interval", CONF_LEGACY_IGNORED, 0, NULL},
	{CONF_LSECT_SYNCER, "throttle-threshold", CONF_LEGACY_IGNORED, 0, NULL},
	{CONF_LSECT_SYNCER, "hold-off-threshold", CONF_LEGACY_IGNORED, 0, NULL},
	{CONF_SECT_DISK, "use-bmbv", CONF_LEGACY_IGNORED, 0, NULL},
	{CONF_LSECT_RESOURCE, "incon-degr-cmd", CONF_LEGACY_OBSOLETE, 0, NULL},
	{CONF_SECT_NET, "on-disconnect", CONF_LEGACY_OBSOLETE, 0, NULL},
	{CONF_LSECT_SYNCER, "group", CONF_LEGACY_OBSOLETE, 0, NULL},
};

static void test_legacy_wanted(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(legacy_wanted); i++) {
		const struct legacy_want *w = &legacy_wanted[i];
		const struct conf_legacy *l = conf_legacy_find(w->sect, w->name);

		if (!l)
			fail_msg("legacy spelling %s (section %d) is not mapped", w->name, w->sect);
		if (l->kind != w->kind)
			fail_msg("legacy %s: kind %d, expected %d", w->name, l->kind, w->kind);
		if (w->new_name) {
			assert_int_equal(l->new_sect, w->new_sect);
			assert_string_equal(l->new_name, w->new_name);
		}
	}
	assert_null(conf_legacy_find(CONF_LSECT_SYNCER, "resync-rate"));
	assert_null(conf_legacy_find(CONF_SECT_NET, "rate"));
	assert_null(conf_legacy_find(CONF_SECT_DISK, "no-tcp-cork"));
}

int main(void)
{
	struct CMUnitTest *tests = calloc(conf_opts_count + 16, sizeof(*tests));
	size_t n = 0, i;
	int rc;

	if (!tests)
		return 1;
	for (i = 0; i < conf_opts_count; i++) {
		tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(test_option,
									(void *)&conf_opts[i]);
		tests[n++].name = conf_opts[i].name;
	}
#define ADD(fn) tests[n++] = (struct CMUnitTest)cmocka_unit_test(fn)
	ADD(test_table_unique_and_sections);
	ADD(test_drbd_limits);
	ADD(test_drbd_defaults);
	ADD(test_conversion);
	ADD(test_range_after_conversion);
	ADD(test_asb_discard_node);
	ADD(test_shared_secret_length);
	ADD(test_legacy_table);
	ADD(test_legacy_wanted);
#undef ADD
	rc = _cmocka_run_group_tests("conf-opt", tests, n, NULL, unit_teardown);
	free(tests);
	return rc;
}
