/*
 * test-conf-dump: the drbdadm-shaped dump (exact text, idempotence) and
 * the JSON output (parsed back with json-c).
 */
#include "unit.h"

#include <json-c/json.h>

static char *dump(const struct conf *c, const char *const *res, unsigned int n_res, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*rc = conf_dump(c, res, n_res, f);
	assert_int_equal(fclose(f), 0);
	return unit_str(buf);
}

static char *dump_json(const struct conf *c, const char *const *res, unsigned int n_res, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*rc = conf_dump_json(c, res, n_res, f);
	assert_int_equal(fclose(f), 0);
	return unit_str(buf);
}

static void load_named(struct unit_conf *u, const char *name, const char *text)
{
	struct conf_load_opts o = {.hostname = UNIT_HOST, .no_ip_check = true};

	unit_load_opts(u, name, text, &o);
	assert_loaded(u);
}

/* The text without comment lines (which name the file and line numbers). */
static char *strip_comments(const char *text)
{
	char *out = unit_str(malloc(strlen(text) + 1));
	const char *line = text;
	char *o = out;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);

		if (line[0] != '#') {
			memcpy(o, line, len);
			o += len;
		}
		line += len;
	}
	*o = '\0';
	return out;
}

/* ---------------------------------------------------------------- exact text */

static const char small_conf[] =
	"global { usage-count no; }\n"
	"common { net { protocol C; } disk { resync-rate 10M; } }\n"
	"resource r0 {\n"
	"  net { cram-hmac-alg sha1; shared-secret \"s e\"; max-buffers 8000; }\n"
	"  disk { on-io-error detach; }\n"
	"  handlers { fence-peer \"/usr/lib/drbd/crm-fence-peer.sh\"; }\n"
	"  on alpha { device /dev/drbd0; disk /dev/sda1; address 10.0.0.1:7789; meta-disk "
	"internal; }\n"
	"  on beta gamma { device minor 0; disk /dev/sdb1; address ipv6 [fd00::2]:7789; meta-disk "
	"/dev/sdc[3]; }\n"
	"}\n"
	"resource r1 {\n"
	"  startup { wfc-timeout 30; become-primary-on alpha; }\n"
	"  on alpha {\n"
	"    volume 0 { device /dev/drbd1; disk /dev/sda2; meta-disk internal; }\n"
	"    volume 1 { device minor 2; disk /dev/sda3; meta-disk internal;\n"
	"      disk { al-extents 257; } }\n"
	"    address 10.0.0.1:7790;\n"
	"  }\n"
	"  floating 10.0.0.9:7790 {\n"
	"    volume 0 { device /dev/drbd1; disk /dev/sdb2; meta-disk internal; }\n"
	"    volume 1 { device minor 2; disk /dev/sdb3; meta-disk internal; }\n"
	"  }\n"
	"}\n";

/* What drbdadm-84 dump prints for small_conf, but for the two header comments. */
static const char small_dump[] =
	"# small.conf\n"
	"global {\n"
	"    usage-count no;\n"
	"}\n"
	"\n"
	"common {\n"
	"    net {\n"
	"        protocol           C;\n"
	"    }\n"
	"    disk {\n"
	"        resync-rate      10M;\n"
	"    }\n"
	"}\n"
	"\n"
	"# resource r0 on alpha: not ignored, not stacked\n"
	"# defined at small.conf:3\n"
	"resource r0 {\n"
	"    on alpha {\n"
	"        device           /dev/drbd0 minor 0;\n"
	"        disk             /dev/sda1;\n"
	"        meta-disk        internal;\n"
	"        address          ipv4 10.0.0.1:7789;\n"
	"    }\n"
	"    on beta gamma {\n"
	"        device           minor 0;\n"
	"        disk             /dev/sdb1;\n"
	"        meta-disk        /dev/sdc [3];\n"
	"        address          ipv6 [fd00::2]:7789;\n"
	"    }\n"
	"    net {\n"
	"        cram-hmac-alg    sha1;\n"
	"        shared-secret    \"s e\";\n"
	"        max-buffers      8000;\n"
	"    }\n"
	"    disk {\n"
	"        on-io-error      detach;\n"
	"    }\n"
	"    handlers {\n"
	"        fence-peer       /usr/lib/drbd/crm-fence-peer.sh;\n"
	"    }\n"
	"}\n"
	"\n"
	"# resource r1 on alpha: not ignored, not stacked\n"
	"# defined at small.conf:10\n"
	"resource r1 {\n"
	"    on alpha {\n"
	"        volume 0 {\n"
	"            device       /dev/drbd1 minor 1;\n"
	"            disk         /dev/sda2;\n"
	"            meta-disk    internal;\n"
	"        }\n"
	"        volume 1 {\n"
	"            disk {\n"
	"                al-extents 257;\n"
	"            }\n"
	"            device       minor 2;\n"
	"            disk         /dev/sda3;\n"
	"            meta-disk    internal;\n"
	"        }\n"
	"        address          ipv4 10.0.0.1:7790;\n"
	"    }\n"
	"    floating ipv4 10.0.0.9:7790 {\n"
	"        volume 0 {\n"
	"            device       /dev/drbd1 minor 1;\n"
	"            disk         /dev/sdb2;\n"
	"            meta-disk    internal;\n"
	"        }\n"
	"        volume 1 {\n"
	"            device       minor 2;\n"
	"            disk         /dev/sdb3;\n"
	"            meta-disk    internal;\n"
	"        }\n"
	"    }\n"
	"    startup {\n"
	"        wfc-timeout       30;\n"
	"        become-primary-on alpha;\n"
	"    }\n"
	"}\n"
	"\n";

static void test_exact_text(void **state)
{
	struct unit_conf u;
	char *text;
	int rc;

	(void)state;
	load_named(&u, "small.conf", small_conf);
	text = dump(u.c, NULL, 0, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(text, small_dump);
	unit_release(text);
	unit_done(&u);
}

/* Only the named resources, without global and common; unknown names fail. */
static void test_selection(void **state)
{
	static const char *const r1[] = {"r1"};
	static const char *const both[] = {"r1", "r0"};
	static const char *const bad[] = {"r0", "nope"};
	struct unit_conf u;
	char *text;
	int rc;

	(void)state;
	load_named(&u, "small.conf", small_conf);
	text = dump(u.c, r1, 1, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(small_dump, text)); /* r1's part of the full dump */
	assert_null(strstr(text, "global"));
	assert_null(strstr(text, "common"));
	assert_null(strstr(text, "resource r0"));
	assert_non_null(strstr(text, "resource r1 {"));
	text = dump(u.c, both, 2, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(text, "resource r0 {"));
	assert_non_null(strstr(text, "resource r1 {"));
	assert_true(strstr(text, "resource r0 {") < strstr(text, "resource r1 {")); /* file order */
	text = dump(u.c, bad, 2, &rc);
	assert_int_equal(rc, -ENOENT);
	text = dump_json(u.c, bad, 2, &rc);
	assert_int_equal(rc, -ENOENT);
	unit_done(&u);
}

/* Legacy spellings come out in 8.4 form. */
static void test_dump_is_84_syntax(void **state)
{
	struct unit_conf u;
	char *text;
	int rc;

	(void)state;
	load_named(&u, "old.conf",
		   "resource r0 {\n"
		   "  protocol A;\n"
		   "  syncer { rate 10M; verify-alg sha1; }\n"
		   "  disk { no-disk-flushes; on-io-error panic; }\n"
		   "  handlers { outdate-peer \"/bin/true\"; }\n"
		   "  on alpha { device minor 0; disk /dev/sda; address 10.0.0.1:7789; "
		   "flexible-meta-disk /dev/sdc; }\n"
		   "  on beta { device minor 0; disk /dev/sdb; address 10.0.0.2:7789; meta-disk "
		   "internal; }\n"
		   "}\n");
	text = dump(u.c, NULL, 0, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(text, "    net {\n"
				     "        protocol           A;\n"
				     "        verify-alg       sha1;\n"
				     "    }\n"));
	assert_non_null(strstr(text, "    disk {\n"
				     "        resync-rate      10M;\n"
				     "        disk-flushes      no;\n"
				     "        on-io-error      detach;\n"
				     "    }\n"));
	assert_non_null(strstr(text, "        fence-peer       /bin/true;\n"));
	assert_non_null(strstr(text, "        meta-disk        /dev/sdc;\n"));
	assert_null(strstr(text, "syncer"));
	assert_null(strstr(text, "outdate-peer"));
	assert_null(strstr(text, "flexible"));
	assert_null(strstr(text, "panic"));
	unit_done(&u);
}

/* ---------------------------------------------------------------- idempotence */

static const char big_conf[] =
	"global { usage-count no; minor-count 64; dialog-refresh 0; disable-ip-verification; }\n"
	"common {\n"
	"  protocol B;\n"
	"  syncer { rate 20M; al-extents 3389; csums-alg md5; cpu-mask ff; }\n"
	"  startup { degr-wfc-timeout 60; }\n"
	"  handlers { split-brain \"/usr/lib/drbd/notify.sh root\"; }\n"
	"}\n"
	"resource mysql {\n"
	"  device /dev/drbd0;\n"
	"  disk /dev/vg0/mysql;\n"
	"  meta-disk internal;\n"
	"  net { cram-hmac-alg sha1; shared-secret \"\"; after-sb-0pri discard-node-alice; "
	"tcp-cork no; }\n"
	"  disk { fencing resource-only; size 10G; no-md-flushes; }\n"
	"  handlers { fence-peer \"/bin/sh -c \\\"echo \\\\\\\"fenced\\\\\\\"\\\"\"; }\n"
	"  on alice { address 10.0.0.1:7789; }\n"
	"  on bob bob.example.com { address 10.0.0.2:7789; disk /dev/vg1/mysql; }\n"
	"}\n"
	"resource vm {\n"
	"  options { on-no-data-accessible suspend-io; }\n"
	"  on alice {\n"
	"    volume 0 { device minor 1; disk /dev/vg0/vm-a; meta-disk /dev/ssd[0]; }\n"
	"    volume 7 { device /dev/drbd_vm7 minor 7; disk none; meta-disk /dev/ssd [1]; disk { "
	"c-plan-ahead 0; } }\n"
	"    address ipv6 [fd00::1]:7790;\n"
	"  }\n"
	"  floating ipv6 [fd00::2]:7790 {\n"
	"    volume 0 { device minor 1; disk /dev/vg0/vm-a; meta-disk /dev/ssd; }\n"
	"    volume 7 { device minor 7; disk /dev/vg0/vm-b; meta-disk internal; }\n"
	"  }\n"
	"  startup { become-primary-on both; wfc-timeout 5; }\n"
	"  net { protocol C; allow-two-primaries yes; }\n"
	"}\n";

/* Load, dump, load the dump, dump again: the same configuration. */
static void test_idempotent(void **state)
{
	struct unit_conf u1, u2, u3;
	const struct conf_res *mysql, *vm;
	char *d1, *d2, *d3;
	int rc;

	(void)state;
	load_named(&u1, "big.conf", big_conf);
	d1 = dump(u1.c, NULL, 0, &rc);
	assert_int_equal(rc, 0);
	load_named(&u2, "big.conf", d1);
	assert_no_warnings(u2.d); /* the dump is clean 8.4 syntax */
	d2 = dump(u2.c, NULL, 0, &rc);
	assert_int_equal(rc, 0);
	/* only the "# defined at FILE:LINE" comments may differ */
	assert_string_equal(strip_comments(d2), strip_comments(d1));
	load_named(&u3, "big.conf", d2);
	d3 = dump(u3.c, NULL, 0, &rc);
	assert_string_equal(d3, d2);
	/* and it still says what the input said */
	assert_non_null(
		strstr(d1, "fence-peer       \"/bin/sh -c \\\"echo \\\\\\\"fenced\\\\\\\"\\\"\";"));
	mysql = conf_find_res(u2.c, "mysql");
	vm = conf_find_res(u2.c, "vm");
	assert_non_null(mysql);
	assert_non_null(vm);
	assert_string_equal(conf_res_text(u2.c, mysql, CONF_SECT_HANDLERS, "fence-peer"),
			    "/bin/sh -c \"echo \\\"fenced\\\"\"");
	assert_string_equal(conf_res_text(u2.c, mysql, CONF_SECT_NET, "shared-secret"), "");
	assert_int_equal(conf_res_num(u2.c, vm, CONF_SECT_DISK, "resync-rate"), 20480);
	unit_done(&u3);
	unit_done(&u2);
	unit_done(&u1);
}

/* ---------------------------------------------------------------- drbdadm parity */

/* An option set twice in one section: the dump has the last value only
 * (drbdadm-84's dump prints both, and drbdsetup then uses the last), in
 * the place of the last one; dumping that again changes nothing. */
static void test_option_set_twice(void **state)
{
	static const char want[] = "    net {\n"
				   "        protocol           C;\n"
				   "        max-buffers      8000;\n"
				   "        sndbuf-size        0;\n"
				   "    }\n"
				   "    disk {\n"
				   "        resync-rate      20M;\n"
				   "    }\n";
	struct unit_conf u1, u2;
	char *d1, *d2, *net;
	int rc;

	(void)state;
	load_named(&u1, "twice.conf",
		   "resource r0 {\n"
		   "  protocol C;\n"
		   "  net {\n"
		   "    sndbuf-size 512k;\n"
		   "    max-buffers 8000;\n"
		   "    sndbuf-size 0;\n"
		   "  }\n"
		   "  syncer { rate 10M; }\n"
		   "  disk { resync-rate 20M; }\n" UNIT_HOSTS "}\n");
	assert_warning_at(u1.d, 6, 5, "twice.conf:4:5");
	d1 = dump(u1.c, NULL, 0, &rc);
	assert_int_equal(rc, 0);
	net = strstr(d1, "    net {\n");
	assert_non_null(net);
	if (strncmp(net, want, strlen(want)) != 0)
		fail_msg("expected\n%s\nbut the dump has\n%s", want, net);
	assert_null(strstr(d1, "512k"));
	assert_null(strstr(d1, "10M"));
	load_named(&u2, "twice.conf", d1);
	assert_no_warnings(u2.d);
	d2 = dump(u2.c, NULL, 0, &rc);
	assert_string_equal(strip_comments(d2), strip_comments(d1));
	unit_done(&u2);
	unit_done(&u1);
}

/* drbdadm prints the global options in a fixed order (the option table's),
 * not in the order they were written. */
static void test_global_in_drbdadm_order(void **state)
{
	struct unit_conf u;
	char *text;
	int rc;

	(void)state;
	load_named(&u, "g.conf",
		   "global { usage-count no; minor-count 64; disable-ip-verification; }\n");
	text = dump(u.c, NULL, 0, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(text, "# g.conf\n"
				  "global {\n"
				  "    disable-ip-verification;\n"
				  "    minor-count 64;\n"
				  "    usage-count no;\n"
				  "}\n"
				  "\n");
	unit_done(&u);
}

/* drbdadm prints meta-disk DEV and DEV [N] with the host-level width
 * ("%-16s") at any depth, also inside a volume section. */
static void test_meta_disk_width_in_volume(void **state)
{
	struct unit_conf u;
	char *text;
	int rc;

	(void)state;
	load_named(&u, "v.conf",
		   "resource r0 {\n"
		   "  on alpha { volume 0 { device minor 0; disk /dev/sda; meta-disk /dev/md0; } "
		   "address 10.0.0.1:7789; }\n"
		   "  on beta { volume 0 { device minor 0; disk /dev/sdb; meta-disk /dev/md1[3]; } "
		   "address 10.0.0.2:7789; }\n"
		   "}\n");
	text = dump(u.c, NULL, 0, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(text, "            disk         /dev/sda;\n"
				     "            meta-disk        /dev/md0;\n"));
	assert_non_null(strstr(text, "            disk         /dev/sdb;\n"
				     "            meta-disk        /dev/md1 [3];\n"));
	unit_done(&u);
}

/* ---------------------------------------------------------------- JSON */

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("JSON has no key '%s' in %s", key, json_object_to_json_string(o));
	return v;
}

static json_object *path(json_object *o, const char *p)
{
	char buf[256], *save = NULL, *key;

	snprintf(buf, sizeof(buf), "%s", p);
	for (key = strtok_r(buf, ".", &save); key; key = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, (size_t)atoi(key));
		else
			o = get(o, key);
		if (!o)
			fail_msg("JSON path %s ends at %s", p, key);
	}
	return o;
}

static void assert_json_string(json_object *root, const char *p, const char *want)
{
	json_object *o = path(root, p);

	if (!json_object_is_type(o, json_type_string) || strcmp(json_object_get_string(o), want))
		fail_msg("%s is %s, expected \"%s\"", p, json_object_to_json_string(o), want);
}

static void assert_json_int(json_object *root, const char *p, int64_t want)
{
	json_object *o = path(root, p);

	if (!json_object_is_type(o, json_type_int) || json_object_get_int64(o) != want)
		fail_msg("%s is %s, expected %lld", p, json_object_to_json_string(o),
			 (long long)want);
}

static void assert_json_bool(json_object *root, const char *p, bool want)
{
	json_object *o = path(root, p);

	if (!json_object_is_type(o, json_type_boolean) || json_object_get_boolean(o) != want)
		fail_msg("%s is %s, expected %s", p, json_object_to_json_string(o),
			 want ? "true" : "false");
}

static void free_json(void *p)
{
	json_object_put(p);
}

static json_object *parse_json(const char *text)
{
	enum json_tokener_error jerr = json_tokener_success;
	json_object *root = json_tokener_parse_verbose(text, &jerr);

	if (!root)
		fail_msg("not JSON (%s):\n%s", json_tokener_error_desc(jerr), text);
	return unit_defer(free_json, root);
}

/* The comments are line numbers, for the defined-at checks. */
static const char json_conf[] =
	"global { usage-count no; }\n"                        /* 1 */
	"common {\n"                                          /* 2 */
	"  net { protocol B; ko-count 3; }\n"                 /* 3 */
	"  disk { resync-rate 10M; }\n"                       /* 4 */
	"}\n"                                                 /* 5 */
	"resource r0 {\n"                                     /* 6 */
	"  net { ko-count 5; tcp-cork no; }\n"                /* 7 */
	"  handlers { fence-peer \"/bin/fence \\\"x\\\"\"; }\n" /* 8 */
	"  on alpha { device /dev/drbd0; disk /dev/sda; address 10.0.0.1:7789;\n"
	"    meta-disk /dev/md[2]; }\n"
	"  on beta { device minor 0; disk /dev/sdb; address ipv6 [fd00::2]:7789;\n"
	"    meta-disk internal; }\n"
	"}\n";

static void test_json(void **state)
{
	struct unit_conf u;
	json_object *root, *eff;
	char *out;
	int rc;

	(void)state;
	load_named(&u, "j.conf", json_conf);
	out = dump_json(u.c, NULL, 0, &rc);
	assert_int_equal(rc, 0);
	root = parse_json(out);
	assert_json_string(root, "file", "j.conf");
	assert_json_string(root, "hostname", "alpha");
	assert_json_string(root, "global.usage-count", "no");
	assert_json_string(root, "common.net.protocol", "B");
	assert_json_int(root, "common.net.ko-count", 3);
	assert_json_int(root, "common.disk.resync-rate", 10240);
	assert_int_equal(json_object_array_length(path(root, "resources")), 1);
	assert_json_string(root, "resources.0.name", "r0");
	assert_json_string(root, "resources.0.defined-at", "j.conf:6");
	assert_json_bool(root, "resources.0.on-this-host", true);

	/* hosts */
	assert_json_string(root, "resources.0.hosts.0.names.0", "alpha");
	assert_json_bool(root, "resources.0.hosts.0.this-host", true);
	assert_json_bool(root, "resources.0.hosts.0.floating", false);
	assert_json_string(root, "resources.0.hosts.0.address.af", "ipv4");
	assert_json_string(root, "resources.0.hosts.0.address.ip", "10.0.0.1");
	assert_json_int(root, "resources.0.hosts.0.address.port", 7789);
	assert_json_int(root, "resources.0.hosts.0.volumes.0.volume", 0);
	assert_json_string(root, "resources.0.hosts.0.volumes.0.device", "/dev/drbd0");
	assert_json_int(root, "resources.0.hosts.0.volumes.0.minor", 0);
	assert_json_string(root, "resources.0.hosts.0.volumes.0.disk", "/dev/sda");
	assert_json_string(root, "resources.0.hosts.0.volumes.0.meta-disk.kind", "indexed");
	assert_json_string(root, "resources.0.hosts.0.volumes.0.meta-disk.device", "/dev/md");
	assert_json_int(root, "resources.0.hosts.0.volumes.0.meta-disk.index", 2);
	assert_json_bool(root, "resources.0.hosts.1.this-host", false);
	assert_json_string(root, "resources.0.hosts.1.address.af", "ipv6");
	assert_json_string(root, "resources.0.hosts.1.address.ip", "fd00::2");
	assert_json_string(root, "resources.0.hosts.1.volumes.0.device", "/dev/drbd0");
	assert_json_string(root, "resources.0.hosts.1.volumes.0.meta-disk.kind", "internal");

	/* options as written in the resource */
	assert_json_int(root, "resources.0.options.net.ko-count", 5);
	assert_json_bool(root, "resources.0.options.net.tcp-cork", false);
	assert_json_string(root, "resources.0.options.handlers.fence-peer", "/bin/fence \"x\"");
	assert_false(json_object_object_get_ex(path(root, "resources.0.options.net"), "protocol",
					       NULL));

	/* effective values, with where they come from */
	eff = path(root, "resources.0.effective");
	assert_json_int(eff, "net.ko-count.value", 5);
	assert_json_string(eff, "net.ko-count.source", "resource");
	assert_json_string(eff, "net.ko-count.defined-at", "j.conf:7");
	assert_json_string(eff, "net.protocol.value", "B");
	assert_json_string(eff, "net.protocol.source", "common");
	assert_json_string(eff, "net.protocol.defined-at", "j.conf:3");
	assert_json_int(eff, "disk.resync-rate.value", 10240);
	assert_json_string(eff, "disk.resync-rate.source", "common");
	assert_json_int(eff, "net.ping-int.value", 10);
	assert_json_string(eff, "net.ping-int.source", "default");
	assert_false(json_object_object_get_ex(path(eff, "net.ping-int"), "defined-at", NULL));
	assert_json_int(eff, "net.timeout.value", 60);
	assert_json_int(eff, "disk.c-fill-target.value", 100);
	assert_json_int(eff, "disk.al-extents.value", 1237);
	assert_json_string(eff, "net.after-sb-0pri.value", "disconnect");
	assert_json_bool(eff, "net.tcp-cork.value", false);
	assert_json_string(eff, "net.tcp-cork.source", "resource");
	assert_json_bool(eff, "net.use-rle.value", true);
	assert_json_string(eff, "net.use-rle.source", "default");
	assert_json_string(eff, "disk.on-io-error.value", "detach");
	assert_json_string(eff, "handlers.fence-peer.value", "/bin/fence \"x\"");
	assert_json_string(eff, "options.cpu-mask.value", "0");
	/* options without a default and not set are left out */
	assert_false(json_object_object_get_ex(path(eff, "net"), "verify-alg", NULL));
	assert_false(json_object_object_get_ex(path(eff, "handlers"), "split-brain", NULL));
	/* every section of the option table is there */
	assert_non_null(path(eff, "startup"));
	assert_non_null(path(eff, "options"));
	unit_done(&u);
}

/* Every option of the table appears in the effective values once set. */
static void test_json_every_option_value(void **state)
{
	struct unit_conf u;
	json_object *root;
	char *out;
	int rc;

	(void)state;
	load_named(&u, "e.conf",
		   "resource r0 {\n"
		   "  net { verify-alg sha256; discard-my-data; max-buffers 8K; }\n"
		   "  disk { size 1G; }\n"
		   "  on alpha { device minor 0; disk /dev/sda; address 10.0.0.1:7789; meta-disk "
		   "internal; }\n"
		   "  on beta { device minor 0; disk /dev/sdb; address 10.0.0.2:7789; meta-disk "
		   "internal; }\n"
		   "}\n");
	out = dump_json(u.c, NULL, 0, &rc);
	assert_int_equal(rc, 0);
	root = parse_json(out);
	assert_json_string(root, "resources.0.effective.net.verify-alg.value", "sha256");
	assert_json_bool(root, "resources.0.effective.net.discard-my-data.value", true);
	assert_json_int(root, "resources.0.effective.net.max-buffers.value", 8192);
	assert_json_int(root, "resources.0.effective.disk.size.value", 2097152);
	assert_json_string(root, "resources.0.hosts.0.volumes.0.meta-disk.kind", "internal");
	/* a volume given only by its minor gets its device name */
	assert_json_string(root, "resources.0.hosts.0.volumes.0.device", "/dev/drbd0");
	unit_done(&u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_text),
		cmocka_unit_test(test_selection),
		cmocka_unit_test(test_dump_is_84_syntax),
		cmocka_unit_test(test_idempotent),
		cmocka_unit_test(test_option_set_twice),
		cmocka_unit_test(test_global_in_drbdadm_order),
		cmocka_unit_test(test_meta_disk_width_in_volume),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_every_option_value),
	};

	return cmocka_run_group_tests_name("conf-dump", tests, NULL, unit_teardown);
}
