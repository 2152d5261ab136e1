/*
 * test-conf-parse: the grammar of the configuration parser (sections,
 * host sections, addresses, volumes, device and meta-disk forms, skip)
 * and its error positions, through conf_load_buf(). Includes are in
 * test-conf-include.c, the 8.3/0.7 spellings in test-conf-legacy.c.
 */
#include "unit.h"

/* ---------------------------------------------------------------- sections */

static void test_empty_config(void **state)
{
	struct unit_conf u;

	(void)state;
	unit_load(&u, "# nothing but a comment\n");
	assert_loaded(&u);
	assert_null(conf_resources(u.c));
	assert_string_equal(conf_file(u.c), UNIT_FILE);
	assert_string_equal(conf_hostname(u.c), UNIT_HOST);
	unit_done(&u);
}

static void test_global(void **state)
{
	struct unit_conf u;
	const struct conf_val *v;

	(void)state;
	unit_load(&u, "global {\n"
		      "  usage-count no;\n"
		      "  minor-count 64;\n"
		      "  dialog-refresh 5;\n"
		      "  disable-ip-verification;\n"
		      "  udev-always-use-vnr;\n"
		      "  cmd-timeout-short 3;\n"
		      "}\n" UNIT_RES(""));
	assert_loaded(&u);
	assert_no_warnings(u.d);
	v = conf_global(u.c)->head;
	assert_non_null(v);
	assert_string_equal(v->opt->name, "usage-count"); /* written order is kept */
	assert_string_equal(v->text, "no");
	assert_int_equal(v->loc.line, 2);
	assert_int_equal(v->loc.col, 3);
	assert_int_equal(conf_res_get(u.c, NULL, CONF_SECT_GLOBAL, "minor-count")->v.num, 64);
	assert_int_equal(conf_res_num(u.c, NULL, CONF_SECT_GLOBAL, "dialog-refresh"), 5);
	assert_true(conf_list_find(conf_global(u.c), "disable-ip-verification")->v.yes);
	assert_true(conf_res_bool(u.c, NULL, CONF_SECT_GLOBAL, "udev-always-use-vnr"));
	assert_int_equal(conf_res_num(u.c, NULL, CONF_SECT_GLOBAL, "cmd-timeout-short"), 3);
	assert_int_equal(conf_res_num(u.c, NULL, CONF_SECT_GLOBAL, "cmd-timeout-long"), 600);
	unit_done(&u);

	unit_load(&u, "global { protocol C; }\n");
	assert_rejected(&u);
	assert_error_at(u.d, 1, 10, "protocol");
	unit_done(&u);
}

static void test_common_inheritance(void **state)
{
	struct unit_conf u;
	const struct conf_res *r0, *r1;
	const struct conf_val *v;

	(void)state;
	unit_load(&u, "common {\n"
		      "  net { protocol B; ko-count 3; }\n"
		      "  disk { resync-rate 10M; }\n"
		      "  startup { become-primary-on alpha; wfc-timeout 30; }\n"
		      "  handlers { fence-peer \"/bin/fence\"; }\n"
		      "  options { cpu-mask ff; }\n"
		      "}\n"
		      "resource r0 {\n"
		      "  net { ko-count 5; }\n"
		      "  startup { wfc-timeout 10; }\n" UNIT_HOSTS "}\n"
		      "resource r1 {\n" UNIT_HOSTS_AT("1", "7790") "}\n");
	assert_loaded(&u);
	r0 = conf_find_res(u.c, "r0");
	r1 = conf_find_res(u.c, "r1");
	assert_non_null(r0);
	assert_non_null(r1);
	assert_null(conf_find_res(u.c, "r2"));

	/* from common, the very same value */
	v = conf_res_get(u.c, r0, CONF_SECT_NET, "protocol");
	assert_non_null(v);
	assert_ptr_equal(v, conf_list_find(conf_common(u.c, CONF_SECT_NET), "protocol"));
	assert_string_equal(conf_res_text(u.c, r1, CONF_SECT_NET, "protocol"), "B");
	/* the resource wins, per option */
	v = conf_res_get(u.c, r0, CONF_SECT_NET, "ko-count");
	assert_ptr_equal(v, conf_list_find(&r0->opts[CONF_SECT_NET], "ko-count"));
	assert_int_equal(conf_res_num(u.c, r0, CONF_SECT_NET, "ko-count"), 5);
	assert_int_equal(conf_res_num(u.c, r1, CONF_SECT_NET, "ko-count"), 3);
	assert_int_equal(conf_res_num(u.c, r0, CONF_SECT_STARTUP, "wfc-timeout"), 10);
	assert_int_equal(conf_res_num(u.c, r1, CONF_SECT_STARTUP, "wfc-timeout"), 30);
	assert_int_equal(conf_res_num(u.c, r0, CONF_SECT_DISK, "resync-rate"), 10240);
	assert_string_equal(conf_res_text(u.c, r1, CONF_SECT_STARTUP, "become-primary-on"),
			    "alpha");
	assert_string_equal(conf_res_text(u.c, r1, CONF_SECT_HANDLERS, "fence-peer"), "/bin/fence");
	assert_string_equal(conf_res_text(u.c, r0, CONF_SECT_OPTIONS, "cpu-mask"), "ff");
	/* common is not copied into the resource's own lists */
	assert_null(r1->opts[CONF_SECT_NET].head);
	assert_null(conf_list_find(&r0->opts[CONF_SECT_NET], "protocol"));
	/* defaults */
	assert_null(conf_res_get(u.c, r0, CONF_SECT_NET, "ping-int"));
	assert_int_equal(conf_res_num(u.c, r0, CONF_SECT_NET, "ping-int"), 10);
	assert_int_equal(conf_res_num(u.c, r0, CONF_SECT_NET, "timeout"), 60);
	assert_string_equal(conf_res_text(u.c, r0, CONF_SECT_NET, "after-sb-0pri"), "disconnect");
	assert_true(conf_res_bool(u.c, r0, CONF_SECT_NET, "tcp-cork"));
	assert_false(conf_res_bool(u.c, r0, CONF_SECT_NET, "allow-two-primaries"));
	assert_null(conf_res_text(u.c, r0, CONF_SECT_NET, "verify-alg"));
	unit_done(&u);
}

static void test_resource_and_hosts(void **state)
{
	static const char text[] = UNIT_RES("");
	struct unit_conf u;
	const struct conf_res *r;
	const struct conf_host *a, *b;
	const struct conf_vol *v;

	(void)state;
	unit_load(&u, text);
	assert_loaded(&u);
	assert_no_warnings(u.d);
	r = conf_resources(u.c);
	assert_non_null(r);
	assert_null(r->next);
	assert_string_equal(r->name, "r0");
	assert_string_equal(r->loc.file, UNIT_FILE);
	assert_int_equal(r->loc.line, 1);
	assert_int_equal(r->loc.col, 1);
	assert_int_equal(unit_count_hosts(r), 2);
	a = r->hosts;
	b = a->next;
	assert_int_equal(a->n_names, 1);
	assert_string_equal(a->names[0], "alpha");
	assert_false(a->floating);
	assert_int_equal(a->loc.line, 2);
	assert_int_equal(a->loc.col, 3);
	assert_string_equal(a->addr.af, "ipv4");
	assert_string_equal(a->addr.ip, "10.0.0.1");
	assert_int_equal(a->addr.port, 7789);
	assert_string_equal(b->names[0], "beta");
	assert_string_equal(b->addr.ip, "10.0.0.2");
	v = a->vols;
	assert_non_null(v);
	assert_null(v->next);
	assert_int_equal(v->vnr, 0);
	assert_true(v->implicit);
	assert_null(v->device);
	assert_int_equal(v->minor, 0);
	assert_string_equal(v->disk, "/dev/sda0");
	assert_int_equal(v->md, CONF_MD_INTERNAL);
	assert_ptr_equal(r->me, a);
	assert_ptr_equal(r->peer, b);
	unit_done(&u);

	unit_load_as(&u, "beta", text);
	assert_loaded(&u);
	r = conf_resources(u.c);
	assert_ptr_equal(r->me, r->hosts->next);
	assert_ptr_equal(r->peer, r->hosts);
	unit_done(&u);

	/* not on this node: loads, but has no host section of its own */
	unit_load_as(&u, "gamma", text);
	assert_loaded(&u);
	r = conf_resources(u.c);
	assert_null(r->me);
	assert_null(r->peer);
	unit_done(&u);
}

static void test_hostname_from_environment(void **state)
{
	struct conf_load_opts o = {.hostname = NULL, .no_ip_check = true};
	struct unit_conf u;
	const struct conf_res *r;

	(void)state;
	assert_int_equal(setenv("TANDEM_HOSTNAME", "beta", 1), 0);
	unit_load_opts(&u, UNIT_FILE, UNIT_RES(""), &o);
	unsetenv("TANDEM_HOSTNAME");
	assert_loaded(&u);
	assert_string_equal(conf_hostname(u.c), "beta");
	r = conf_resources(u.c);
	assert_ptr_equal(r->me, r->hosts->next);
	unit_done(&u);
}

/* Resource and host names may be quoted, as drbdadm allows. */
static void test_quoted_names(void **state)
{
	struct unit_conf u;
	const struct conf_res *r;

	(void)state;
	unit_load(&u, "resource \"r0\" {\n"
		      "  on \"alpha\" { device minor 0; disk /dev/sda; address 10.0.0.1:7789; "
		      "meta-disk internal; }\n"
		      "  on beta { device minor 0; disk /dev/sdb; address 10.0.0.2:7789; "
		      "meta-disk internal; }\n"
		      "}\n");
	assert_loaded(&u);
	r = conf_find_res(u.c, "r0");
	assert_non_null(r);
	assert_string_equal(r->hosts->names[0], "alpha");
	assert_ptr_equal(r->me, r->hosts);
	unit_done(&u);
}

static void test_on_several_names(void **state)
{
	static const char text[] =
		"resource r0 {\n"
		"  on alpha alpha-2 alpha.example.com { device minor 0; disk /dev/sda; "
		"address 10.0.0.1:7789; meta-disk internal; }\n"
		"  on beta { device minor 0; disk /dev/sdb; address 10.0.0.2:7789; meta-disk "
		"internal; }\n"
		"}\n";
	struct unit_conf u;
	const struct conf_res *r;
	const struct conf_host *h;

	(void)state;
	unit_load_as(&u, "alpha.example.com", text);
	assert_loaded(&u);
	r = conf_resources(u.c);
	h = r->hosts;
	assert_int_equal(h->n_names, 3);
	assert_string_equal(h->names[0], "alpha");
	assert_string_equal(h->names[1], "alpha-2");
	assert_string_equal(h->names[2], "alpha.example.com");
	assert_true(conf_host_has_name(h, "alpha-2"));
	assert_false(conf_host_has_name(h, "beta"));
	assert_ptr_equal(r->me, h);
	unit_done(&u);
}

static void test_floating(void **state)
{
	struct conf_load_opts local = {.hostname = "nomatch", .no_ip_check = false};
	struct unit_conf u;
	const struct conf_res *r;
	const struct conf_host *a, *b;

	(void)state;
	unit_load(&u, "resource r0 {\n"
		      "  floating 10.0.0.1:7789 { device minor 0; disk /dev/sda; meta-disk "
		      "internal; }\n"
		      "  floating ipv6 [fd00::2]:7790 { device minor 0; disk /dev/sdb; meta-disk "
		      "internal; }\n"
		      "}\n");
	assert_loaded(&u);
	r = conf_resources(u.c);
	a = r->hosts;
	b = a->next;
	assert_true(a->floating);
	assert_int_equal(a->n_names, 0);
	assert_string_equal(a->addr.af, "ipv4");
	assert_string_equal(a->addr.ip, "10.0.0.1");
	assert_int_equal(a->addr.port, 7789);
	assert_int_equal(a->addr.loc.line, 2);
	assert_int_equal(a->addr.loc.col, 12);
	assert_true(b->floating);
	assert_string_equal(b->addr.af, "ipv6");
	assert_string_equal(b->addr.ip, "fd00::2");
	assert_int_equal(b->addr.port, 7790);
	assert_int_equal(unit_count_vols(b), 1);
	assert_null(r->me); /* no_ip_check: floating sections are never this node */
	unit_done(&u);

	/* matched by a local address */
	unit_load_opts(&u, UNIT_FILE,
		       "resource r0 {\n"
		       "  floating ipv4 10.255.255.254:7789 { device minor 0; disk /dev/sda; "
		       "meta-disk internal; }\n"
		       "  floating ipv4 127.0.0.1:7789 { device minor 0; disk /dev/sdb; meta-disk "
		       "internal; }\n"
		       "}\n",
		       &local);
	assert_loaded(&u);
	r = conf_resources(u.c);
	assert_ptr_equal(r->me, r->hosts->next);
	assert_ptr_equal(r->peer, r->hosts);
	unit_done(&u);

	unit_load(&u, "resource r0 {\n"
		      "  floating 10.0.0.1:7789 { address 10.0.0.3:7789; device minor 0; "
		      "disk /dev/sda; meta-disk internal; }\n"
		      "  floating 10.0.0.2:7789 { device minor 0; disk /dev/sdb; "
		      "meta-disk internal; }\n"
		      "}\n");
	assert_rejected(&u);
	assert_error_at(u.d, 2, 28, "address");
	unit_done(&u);
}

/* `floating ADDR:PORT;` without a body takes everything from the resource. */
static void test_floating_without_body(void **state)
{
	struct unit_conf u;
	const struct conf_res *r;
	const struct conf_vol *v;

	(void)state;
	unit_load(&u, "resource r0 {\n"
		      "  device /dev/drbd4; disk /dev/vg/r0; meta-disk internal;\n"
		      "  floating 10.0.0.1:7789;\n"
		      "  floating ipv6 [fd00::2]:7789;\n"
		      "}\n");
	assert_loaded(&u);
	r = conf_resources(u.c);
	assert_int_equal(unit_count_hosts(r), 2);
	v = r->hosts->next->vols;
	assert_non_null(v);
	assert_int_equal(v->minor, 4);
	assert_string_equal(v->disk, "/dev/vg/r0");
	assert_int_equal(v->md, CONF_MD_INTERNAL);
	assert_string_equal(r->hosts->next->addr.ip, "fd00::2");
	unit_done(&u);
}

/* ---------------------------------------------------------------- addresses */

struct addr_case {
	const char *value;
	const char *af, *ip; /* NULL af: an error */
	unsigned int port;
	const char *err;
};

static const struct addr_case addr_cases[] = {
	{"10.0.0.1:7789", "ipv4", "10.0.0.1", 7789, NULL},
	{"ipv4 10.0.0.1:7789", "ipv4", "10.0.0.1", 7789, NULL},
	{"ipv4 192.168.1.1:65535", "ipv4", "192.168.1.1", 65535, NULL},
	{"ipv6 [fd00::1]:7789", "ipv6", "fd00::1", 7789, NULL},
	{"[::1]:1", "ipv6", "::1", 1, NULL},
	{"ipv6 [::ffff:10.0.0.1]:7789", "ipv6", "::ffff:10.0.0.1", 7789, NULL},
	{"10.0.0.1:0", NULL, NULL, 0, "port"},
	{"10.0.0.1:65536", NULL, NULL, 0, "port"},
	{"10.0.0.1", NULL, NULL, 0, "PORT"},
	{"10.0.0.1:", NULL, NULL, 0, "PORT"},
	{"10.0.0.1:77x", NULL, NULL, 0, "PORT"},
	{"host.example:7789", NULL, NULL, 0, "not a valid"},
	{"999.0.0.1:7789", NULL, NULL, 0, "not a valid"},
	{"ipv6 10.0.0.1:7789", NULL, NULL, 0, "brackets"},
	{"ipv4 [::1]:7789", NULL, NULL, 0, "IPv6"},
	{"[fd00::1:7789", NULL, NULL, 0, "address"},
	{"ipv6 [fd00::zz]:7789", NULL, NULL, 0, "not a valid"},
	{"ssocks 10.0.0.1:7789", NULL, NULL, 0, "not supported"},
	{"sdp 10.0.0.1:7789", NULL, NULL, 0, "not supported"},
	{"sci 10.0.0.1:7789", NULL, NULL, 0, "not supported"},
	{"ipx 10.0.0.1:7789", NULL, NULL, 0, "address"},
};

static void test_address_form(void **state)
{
	static const char head[] =
		"  on alpha { device minor 0; disk /dev/sda; meta-disk internal; address ";
	const struct addr_case *ac = *state;
	const char *last = strrchr(ac->value, ' ');
	/* errors and positions are at the ADDRESS:PORT word */
	int col = (int)(sizeof(head) - 1 + (last ? (size_t)(last - ac->value) + 1 : 0)) + 1;
	const char *text = unit_fmt("resource r0 {\n%s%s; }\n"
			       "  on beta { device minor 0; disk /dev/sdb; meta-disk internal; "
			       "address 10.0.0.2:7789; }\n}\n",
			       head, ac->value);
	struct unit_conf u;

	unit_load(&u, text);
	if (ac->af) {
		const struct conf_host *h;

		assert_loaded(&u);
		h = conf_resources(u.c)->hosts;
		assert_string_equal(h->addr.af, ac->af);
		assert_string_equal(h->addr.ip, ac->ip);
		assert_int_equal(h->addr.port, ac->port);
		assert_int_equal(h->addr.loc.line, 2);
		assert_int_equal(h->addr.loc.col, col);
	} else {
		assert_rejected(&u);
		assert_error_at(u.d, 2, col, ac->err);
	}
	unit_done(&u);
}

/* ---------------------------------------------------------------- volumes */

static void test_volumes_in_hosts(void **state)
{
	struct unit_conf u;
	const struct conf_host *a;
	const struct conf_vol *v0, *v1;

	(void)state;
	unit_load(&u, "resource r0 {\n"
		      "  on alpha {\n"
		      "    volume 0 { device minor 0; disk /dev/sda1; meta-disk internal; }\n"
		      "    volume 1 {\n"
		      "      device /dev/drbd1;\n"
		      "      disk /dev/sda2;\n"
		      "      meta-disk internal;\n"
		      "      disk { resync-rate 1M; }\n"
		      "    }\n"
		      "    address 10.0.0.1:7789;\n"
		      "  }\n"
		      "  on beta {\n"
		      "    volume 0 { device minor 0; disk /dev/sdb1; meta-disk internal; }\n"
		      "    volume 1 { device minor 1; disk /dev/sdb2; meta-disk internal; }\n"
		      "    address 10.0.0.2:7789;\n"
		      "  }\n"
		      "}\n");
	assert_loaded(&u);
	a = conf_resources(u.c)->hosts;
	assert_int_equal(unit_count_vols(a), 2);
	v0 = a->vols;
	v1 = v0->next;
	assert_int_equal(v0->vnr, 0);
	assert_false(v0->implicit);
	assert_int_equal(v0->loc.line, 3);
	assert_int_equal(v1->vnr, 1);
	assert_false(v1->implicit);
	assert_string_equal(v1->device, "/dev/drbd1");
	assert_int_equal(v1->minor, 1);
	assert_string_equal(v1->disk, "/dev/sda2");
	assert_int_equal(conf_list_find(&v1->disk_opts, "resync-rate")->v.num, 1024);
	assert_null(v0->disk_opts.head);
	unit_done(&u);

	/* a volume twice, and a bad volume statement */
	unit_load(&u, "resource r0 {\n"
		      "  on alpha {\n"
		      "    volume 0 { device minor 0; disk /dev/sda1; meta-disk internal; }\n"
		      "    volume 0 { device minor 1; disk /dev/sda2; meta-disk internal; }\n"
		      "    volume 1 { address 10.0.0.1:7789; }\n"
		      "    address 10.0.0.1:7789;\n"
		      "  }\n"
		      "  on beta { device minor 0; disk /dev/sdb; address 10.0.0.2:7789; "
		      "meta-disk internal; }\n"
		      "}\n");
	assert_rejected(&u);
	assert_error_at(u.d, 4, 5, "volume 0");
	assert_error_at(u.d, 5, 16, "address");
	unit_done(&u);
}

/* A host's volumes are kept by number, whatever the order they are written in. */
static void test_volumes_by_number(void **state)
{
	struct unit_conf u;
	const struct conf_host *h;

	(void)state;
	unit_load(&u, "resource r0 {\n"
		      "  volume 2 { device minor 2; disk /dev/c; meta-disk internal; }\n"
		      "  on alpha { address 10.0.0.1:7789;\n"
		      "    volume 1 { device minor 1; disk /dev/b; meta-disk internal; }\n"
		      "    volume 0 { device minor 0; disk /dev/a; meta-disk internal; } }\n"
		      "  on beta { address 10.0.0.2:7789;\n"
		      "    volume 0 { device minor 0; disk /dev/a; meta-disk internal; }\n"
		      "    volume 1 { device minor 1; disk /dev/b; meta-disk internal; } }\n"
		      "}\n");
	assert_loaded(&u);
	h = conf_resources(u.c)->hosts;
	assert_int_equal(unit_count_vols(h), 3);
	assert_int_equal(h->vols->vnr, 0);
	assert_int_equal(h->vols->next->vnr, 1);
	assert_int_equal(h->vols->next->next->vnr, 2);
	assert_string_equal(h->vols->next->next->disk, "/dev/c");
	unit_done(&u);
}

static void test_resource_level_volume_inherited(void **state)
{
	struct unit_conf u;
	const struct conf_res *r;
	const struct conf_host *a, *b;
	const struct conf_vol *v;

	(void)state;
	unit_load(&u, "resource r0 {\n"
		      "  device /dev/drbd3;\n"
		      "  disk /dev/vg/r0;\n"
		      "  meta-disk internal;\n"
		      "  disk { on-io-error pass_on; }\n"
		      "  on alpha { address 10.0.0.1:7789; }\n"
		      "  on beta { address 10.0.0.2:7789; disk /dev/vg/other; }\n"
		      "}\n");
	assert_loaded(&u);
	r = conf_resources(u.c);
	a = unit_host(r, "alpha");
	b = unit_host(r, "beta");
	v = unit_vol(a, 0);
	assert_non_null(v);
	assert_true(v->implicit);
	assert_string_equal(v->device, "/dev/drbd3");
	assert_int_equal(v->minor, 3);
	assert_string_equal(v->disk, "/dev/vg/r0");
	assert_int_equal(v->md, CONF_MD_INTERNAL);
	v = unit_vol(b, 0);
	assert_non_null(v);
	assert_string_equal(v->disk, "/dev/vg/other");
	assert_string_equal(v->device, "/dev/drbd3");
	assert_int_equal(v->md, CONF_MD_INTERNAL);
	assert_string_equal(conf_res_text(u.c, r, CONF_SECT_DISK, "on-io-error"), "pass_on");
	unit_done(&u);

	/* resource-level volume sections, completed by a host */
	unit_load(&u, "resource r0 {\n"
		      "  volume 0 { device minor 5; disk /dev/vg/a; meta-disk internal; }\n"
		      "  volume 1 { device minor 6; disk /dev/vg/b; meta-disk /dev/md[1]; disk { "
		      "al-extents 257; } }\n"
		      "  on alpha { address 10.0.0.1:7789; }\n"
		      "  on beta { address 10.0.0.2:7789; volume 1 { disk /dev/vg/c; } }\n"
		      "}\n");
	assert_loaded(&u);
	r = conf_resources(u.c);
	a = unit_host(r, "alpha");
	b = unit_host(r, "beta");
	assert_int_equal(unit_count_vols(a), 2);
	assert_int_equal(unit_count_vols(b), 2);
	v = unit_vol(a, 1);
	assert_false(v->implicit);
	assert_int_equal(v->minor, 6);
	assert_string_equal(v->disk, "/dev/vg/b");
	assert_int_equal(v->md, CONF_MD_INDEXED);
	assert_string_equal(v->md_dev, "/dev/md");
	assert_int_equal(v->md_index, 1);
	assert_int_equal(conf_list_find(&v->disk_opts, "al-extents")->v.num, 257);
	v = unit_vol(b, 1);
	assert_string_equal(v->disk, "/dev/vg/c");
	assert_int_equal(v->minor, 6);
	assert_int_equal(v->md, CONF_MD_INDEXED);
	assert_int_equal(unit_vol(b, 0)->minor, 5);
	unit_done(&u);
}

static void test_volume_forms_mixed(void **state)
{
	struct unit_conf u;

	(void)state;
	/* implicit volume 0 at resource level, volume section in a host */
	unit_load(&u, "resource r0 {\n"
		      "  device /dev/drbd0;\n"
		      "  on alpha { address 10.0.0.1:7789; volume 0 { disk /dev/sda; meta-disk "
		      "internal; } }\n"
		      "  on beta { address 10.0.0.2:7789; disk /dev/sdb; meta-disk internal; }\n"
		      "}\n");
	assert_rejected(&u);
	assert_error_at(u.d, 3, 0, "volume");
	unit_done(&u);

	/* both forms in one resource */
	unit_load(&u, "resource r0 {\n"
		      "  device /dev/drbd0;\n"
		      "  volume 1 { device /dev/drbd1; }\n" UNIT_HOSTS "}\n");
	assert_rejected(&u);
	assert_error_at(u.d, 3, 3, "volume");
	unit_done(&u);

	/* both forms in one host section */
	unit_load(&u, "resource r0 {\n"
		      "  on alpha { volume 1 { device minor 1; disk /dev/a; meta-disk internal; }\n"
		      "    device minor 0; disk /dev/sda; meta-disk internal; "
		      "address 10.0.0.1:7789; }\n"
		      "  on beta { device minor 0; disk /dev/sdb; meta-disk internal; address "
		      "10.0.0.2:7789; }\n"
		      "}\n");
	assert_rejected(&u);
	assert_error_at(u.d, 3, 5, "volume section");
	unit_done(&u);
}

struct dev_case {
	const char *stmt;
	const char *device; /* NULL with minor >= 0: given only as a minor */
	int minor;          /* -2: an error */
	const char *err;
};

static const struct dev_case dev_cases[] = {
	{"device /dev/drbd3;", "/dev/drbd3", 3, NULL},
	{"device drbd4;", "/dev/drbd4", 4, NULL},
	{"device minor 5;", NULL, 5, NULL},
	{"device minor 1048575;", NULL, 1048575, NULL},
	{"device /dev/drbd6 minor 6;", "/dev/drbd6", 6, NULL},
	{"device /dev/drbd_data minor 7;", "/dev/drbd_data", 7, NULL},
	{"device \"/dev/drbd8\";", "/dev/drbd8", 8, NULL},
	{"device /dev/nbd2;", "/dev/nbd2", 2, NULL},
	{"device /dev/drbd8 minor 9;", NULL, -2, "agree"},
	{"device /dev/drbd_data;", NULL, -2, "minor"},
	{"device minor x;", NULL, -2, "minor"},
	{"device minor 1048576;", NULL, -2, "minor"},
	{"device minor -1;", NULL, -2, "minor"},
	{"device;", NULL, -2, "device"},
	{"device /dev/drbd1 minor;", NULL, -2, "device"},
	{"device /dev/drbd1 major 1;", NULL, -2, "device"},
};

static void test_device_form(void **state)
{
	const struct dev_case *dc = *state;
	struct unit_conf u;

	unit_load(&u, unit_fmt("resource r0 {\n"
			  "  on alpha { %s disk /dev/sda; address 10.0.0.1:7789; meta-disk "
			  "internal; }\n"
			  "  on beta { device minor 100; disk /dev/sdb; address 10.0.0.2:7789; "
			  "meta-disk internal; }\n"
			  "}\n",
			  dc->stmt));
	if (dc->minor >= 0) {
		const struct conf_vol *v;

		assert_loaded(&u);
		v = conf_resources(u.c)->hosts->vols;
		assert_int_equal(v->minor, dc->minor);
		if (dc->device)
			assert_string_equal(v->device, dc->device);
		else
			assert_null(v->device);
	} else {
		assert_rejected(&u);
		assert_error_at(u.d, 2, 0, dc->err);
	}
	unit_done(&u);
}

struct md_case {
	const char *stmt;
	enum conf_md_kind kind; /* CONF_MD_UNSET: an error */
	const char *dev;
	int index;
	bool warns;
};

static const struct md_case md_cases[] = {
	{"meta-disk internal;", CONF_MD_INTERNAL, NULL, -1, false},
	{"meta-disk /dev/sdc;", CONF_MD_FLEXIBLE, "/dev/sdc", -1, false},
	{"meta-disk /dev/sdc[2];", CONF_MD_INDEXED, "/dev/sdc", 2, false},
	{"meta-disk /dev/sdc [3];", CONF_MD_INDEXED, "/dev/sdc", 3, false},
	{"meta-disk /dev/sdc[0];", CONF_MD_INDEXED, "/dev/sdc", 0, false},
	{"flexible-meta-disk internal;", CONF_MD_INTERNAL, NULL, -1, true},
	{"flexible-meta-disk /dev/sdd;", CONF_MD_FLEXIBLE, "/dev/sdd", -1, true},
	{"flexible-meta-disk /dev/sdd[1];", CONF_MD_UNSET, NULL, 0, false},
	{"meta-disk /dev/sdc[x];", CONF_MD_UNSET, NULL, 0, false},
	{"meta-disk /dev/sdc[65536];", CONF_MD_UNSET, NULL, 0, false},
	{"meta-disk /dev/sdc[];", CONF_MD_UNSET, NULL, 0, false},
	{"meta-disk /dev/sdc[1;", CONF_MD_UNSET, NULL, 0, false},
	{"meta-disk [1];", CONF_MD_UNSET, NULL, 0, false},
	{"meta-disk;", CONF_MD_UNSET, NULL, 0, false},
	/* two devices, or a device after internal, are typos, not one glued name */
	{"meta-disk /dev/sdc /dev/sdd;", CONF_MD_UNSET, NULL, 0, false},
	{"meta-disk internal /dev/sdc;", CONF_MD_UNSET, NULL, 0, false},
};

static void test_meta_disk_form(void **state)
{
	const struct md_case *mc = *state;
	struct unit_conf u;

	unit_load(&u, unit_fmt("resource r0 {\n"
			  "  on alpha { device minor 0; disk /dev/sda; address 10.0.0.1:7789; "
			  "%s }\n"
			  "  on beta { device minor 0; disk /dev/sdb; address 10.0.0.2:7789; "
			  "meta-disk internal; }\n"
			  "}\n",
			  mc->stmt));
	if (mc->kind != CONF_MD_UNSET) {
		const struct conf_vol *v;

		assert_loaded(&u);
		v = conf_resources(u.c)->hosts->vols;
		assert_int_equal(v->md, mc->kind);
		if (mc->dev)
			assert_string_equal(v->md_dev, mc->dev);
		else
			assert_null(v->md_dev);
		assert_int_equal(v->md_index, mc->index);
		if (mc->warns)
			assert_warning_at(u.d, 2, 68, "meta-disk");
		else
			assert_no_warnings(u.d);
	} else {
		assert_rejected(&u);
		assert_error_at(u.d, 2, 0, "meta-disk");
	}
	unit_done(&u);
}

/* ---------------------------------------------------------------- skip */

static void test_skip(void **state)
{
	struct unit_conf u;
	const struct conf_res *r;

	(void)state;
	unit_load(&u, "skip { anything { nested ; } goes; \"here\" }\n"
		      "skip resource r9 { on x { } }\n"
		      "resource r0 {\n"
		      "  skip { on gamma { } }\n"
		      "  net { skip { protocol A; } ko-count 4; }\n"
		      "  skip disk { on-io-error pass_on; }\n"
		      "  on alpha {\n"
		      "    skip { device /dev/drbd9; }\n"
		      "    volume 0 { skip { disk /dev/nope; } device minor 0; disk /dev/sda; "
		      "meta-disk internal; }\n"
		      "    address 10.0.0.1:7789;\n"
		      "  }\n"
		      "  on beta { volume 0 { device minor 0; disk /dev/sdb; meta-disk internal; } "
		      "address 10.0.0.2:7789; }\n"
		      "}\n"
		      "skip { resource r8 { } }\n");
	assert_loaded(&u);
	assert_no_warnings(u.d);
	assert_null(conf_find_res(u.c, "r9"));
	assert_null(conf_find_res(u.c, "r8"));
	r = conf_find_res(u.c, "r0");
	assert_int_equal(unit_count_hosts(r), 2);
	assert_string_equal(conf_res_text(u.c, r, CONF_SECT_NET, "protocol"), "C");
	assert_int_equal(conf_res_num(u.c, r, CONF_SECT_NET, "ko-count"), 4);
	assert_string_equal(conf_res_text(u.c, r, CONF_SECT_DISK, "on-io-error"), "detach");
	assert_string_equal(r->hosts->vols->disk, "/dev/sda");
	unit_done(&u);
}

/* Statements given twice in a host section: a warning, the last one counts. */
static void test_given_twice(void **state)
{
	struct unit_conf u;
	const struct conf_host *h;

	(void)state;
	unit_load(&u, "resource r0 {\n"
		      "  on alpha {\n"
		      "    device minor 9; device minor 0;\n"
		      "    disk /dev/sda; address 10.0.0.9:1; address 10.0.0.1:7789;\n"
		      "    meta-disk /dev/sdc[0]; disk /dev/sdb; meta-disk internal;\n"
		      "  }\n"
		      "  on beta { device minor 0; disk /dev/sdb; address 10.0.0.2:7789; meta-disk "
		      "internal; }\n"
		      "}\n");
	assert_loaded(&u);
	assert_warning_at(u.d, 3, 21, "first at " UNIT_FILE ":3:5");
	assert_warning_at(u.d, 3, 21, "the last one, minor 0, is used");
	assert_warning_at(u.d, 4, 40, "first at " UNIT_FILE ":4:28");
	assert_warning_at(u.d, 4, 40, "the last one, 10.0.0.1:7789, is used");
	assert_warning_at(u.d, 5, 28, "first as /dev/sda; the last one, /dev/sdb, is used");
	assert_warning_at(u.d, 5, 43, "the last one, internal, is used");
	assert_int_equal(diag_count(u.d, DIAG_WARN), 4);
	h = conf_resources(u.c)->hosts;
	assert_int_equal(h->vols->minor, 0);
	assert_string_equal(h->addr.ip, "10.0.0.1");
	assert_int_equal(h->addr.port, 7789);
	assert_string_equal(h->vols->disk, "/dev/sdb");
	assert_int_equal(h->vols->md, CONF_MD_INTERNAL);
	unit_done(&u);
}

/* The options named name in a list, and the last one of them. */
static unsigned int count_opt(const struct conf_optlist *l, const char *name,
			      const struct conf_val **last)
{
	const struct conf_val *v;
	unsigned int n = 0;

	for (v = l->head; v; v = v->next) {
		if (strcmp(v->opt->name, name) == 0) {
			n++;
			*last = v;
		}
	}
	return n;
}

/*
 * An option set twice in one section (the 8.3-era net section of a user's
 * config: sndbuf-size 512k, then 0 on the next line). drbdadm-84 accepts it
 * and passes both to drbdsetup, where the last one counts: so here too, with
 * a warning that names both positions, the value used and what to do.
 */
static void test_option_set_twice(void **state)
{
	struct unit_conf u;
	const struct conf_res *r;
	const struct conf_val *v = NULL;

	(void)state;
	unit_load(&u, UNIT_RES("  net {\n"
			       "    sndbuf-size 512k;\n"
			       "    ko-count 3;\n"
			       "    sndbuf-size 0;\n"
			       "  }\n"));
	assert_loaded(&u);
	assert_warning_at(u.d, 5, 5, "sndbuf-size: set twice in the same net section");
	assert_warning_at(u.d, 5, 5, "512k at " UNIT_FILE ":3:5, 0 at " UNIT_FILE ":5:5");
	assert_warning_at(u.d, 5, 5, "the last value, 0, is used, as drbdadm does");
	assert_warning_at(u.d, 5, 5, "remove the earlier one");
	assert_int_equal(diag_count(u.d, DIAG_WARN), 1);
	r = conf_find_res(u.c, "r0");
	assert_int_equal(conf_res_num(u.c, r, CONF_SECT_NET, "sndbuf-size"), 0);
	/* the earlier one is gone; the one that counts sits where it was written */
	assert_int_equal(count_opt(&r->opts[CONF_SECT_NET], "sndbuf-size", &v), 1);
	assert_int_equal(v->loc.line, 5);
	assert_string_equal(r->opts[CONF_SECT_NET].head->opt->name, "ko-count");
	assert_ptr_equal(r->opts[CONF_SECT_NET].tail, v);
	unit_done(&u);

	/* twice on one line: the columns tell them apart */
	unit_load(&u, UNIT_RES("  net { protocol C; protocol B; }\n"));
	assert_loaded(&u);
	assert_warning_at(u.d, 2, 21, "C at " UNIT_FILE ":2:9, B at " UNIT_FILE ":2:21");
	assert_string_equal(conf_res_text(u.c, conf_resources(u.c), CONF_SECT_NET, "protocol"),
			    "B");
	unit_done(&u);

	/* a bad second value is an error of its own, not a repeat */
	unit_load(&u, UNIT_RES("  net { ko-count 3; ko-count 201; }\n"));
	assert_rejected(&u);
	assert_error_at(u.d, 2, 30, "201");
	assert_false(unit_has_diag(u.d, DIAG_WARN, 0, 0, "twice"));
	unit_done(&u);
}

struct twice_case {
	const char *name;
	const char *text;
	int line, col;      /* of the warning */
	enum conf_sect sect;
	const char *opt;
	const char *value;  /* the one that counts */
};

/* The same in every kind of section, and through the 8.3 spellings that
 * land on the same option. */
static const struct twice_case twice_cases[] = {
	{"twice in global", "global { minor-count 8; minor-count 16; }\n" UNIT_RES(""), 1, 25,
	 CONF_SECT_GLOBAL, "minor-count", "16"},
	{"twice in common", "common { disk { resync-rate 10M; resync-rate 20M; } }\n" UNIT_RES(""),
	 1, 34, CONF_SECT_DISK, "resync-rate", "20M"},
	{"twice in disk", UNIT_RES("  disk { on-io-error pass_on; on-io-error detach; }\n"), 2, 31,
	 CONF_SECT_DISK, "on-io-error", "detach"},
	{"twice in startup", UNIT_RES("  startup { wfc-timeout 10; wfc-timeout 20; }\n"), 2, 29,
	 CONF_SECT_STARTUP, "wfc-timeout", "20"},
	{"twice in handlers",
	 UNIT_RES("  handlers { split-brain \"/bin/a\"; split-brain \"/bin/b\"; }\n"), 2, 36,
	 CONF_SECT_HANDLERS, "split-brain", "/bin/b"},
	{"twice in options", UNIT_RES("  options { cpu-mask 1; cpu-mask 3; }\n"), 2, 25,
	 CONF_SECT_OPTIONS, "cpu-mask", "3"},
	{"flag twice", UNIT_RES("  startup { wait-after-sb; wait-after-sb; }\n"), 2, 28,
	 CONF_SECT_STARTUP, "wait-after-sb", "yes"},
	{"syncer rate then resync-rate",
	 UNIT_RES("  syncer { rate 10M; }\n  disk { resync-rate 20M; }\n"), 3, 10, CONF_SECT_DISK,
	 "resync-rate", "20M"},
	{"resync-rate then syncer rate",
	 UNIT_RES("  disk { resync-rate 20M; }\n  syncer { rate 10M; }\n"), 3, 12, CONF_SECT_DISK,
	 "resync-rate", "10M"},
	{"no-disk-flushes then disk-flushes yes",
	 UNIT_RES("  disk { no-disk-flushes; disk-flushes yes; }\n"), 2, 27, CONF_SECT_DISK,
	 "disk-flushes", "yes"},
	{"outdate-peer then fence-peer",
	 UNIT_RES("  handlers { outdate-peer \"/bin/a\"; fence-peer \"/bin/b\"; }\n"), 2, 37,
	 CONF_SECT_HANDLERS, "fence-peer", "/bin/b"},
};

static void test_twice_case(void **state)
{
	const struct twice_case *tc = *state;
	const struct conf_optlist *l;
	const struct conf_val *v = NULL;
	const struct conf_res *r;
	struct unit_conf u;

	unit_load(&u, tc->text);
	assert_loaded(&u);
	assert_warning_at(u.d, tc->line, tc->col, "set twice");
	assert_warning_at(u.d, tc->line, tc->col, unit_fmt("the last value, %s,", tc->value));
	r = conf_find_res(u.c, "r0");
	if (tc->sect == CONF_SECT_GLOBAL)
		l = conf_global(u.c);
	else if (strncmp(tc->text, "common", 6) == 0)
		l = conf_common(u.c, tc->sect);
	else
		l = &r->opts[tc->sect];
	assert_int_equal(count_opt(l, tc->opt, &v), 1);
	assert_string_equal(v->text, tc->value);
	assert_string_equal(conf_res_text(u.c, tc->sect == CONF_SECT_GLOBAL ? NULL : r, tc->sect,
					  tc->opt),
			    tc->value);
	unit_done(&u);
}

/* al-extents outside 67..65534: drbdadm-84 does not check it and the 8.4
 * kernel moves it into the range; a warning, not an error. */
static void test_al_extents_clamped(void **state)
{
	struct unit_conf u;

	(void)state;
	unit_load(&u, UNIT_RES("  disk { al-extents 7; }\n"));
	assert_loaded(&u);
	assert_warning_at(u.d, 2, 21, "67 is used");
	assert_int_equal(conf_res_num(u.c, conf_resources(u.c), CONF_SECT_DISK, "al-extents"), 67);
	unit_done(&u);

	unit_load(&u, UNIT_RES("  disk { al-extents 70000; }\n"));
	assert_loaded(&u);
	assert_warning_at(u.d, 2, 21, "65534 is used");
	assert_warning_at(u.d, 2, 10, "6433 is used");
	unit_done(&u);

	unit_load(&u, UNIT_RES("  disk { al-extents 7x; }\n"));
	assert_rejected(&u);
	unit_done(&u);
}

/* Accepted but unsupported or deprecated statements: warned about, skipped. */
static void test_ignored_statements(void **state)
{
	struct unit_conf u;

	(void)state;
	unit_load(&u, UNIT_RES("  ignore-on gamma;\n"
			  "  proxy { memlimit 100M; plugin { zlib level 9; } }\n")
		      "resource r1 {\n"
		      "  on alpha { device minor 1; disk /dev/sda; address 10.0.0.1:7790; "
		      "meta-disk internal; proxy { inside 10.0.0.5:7000; } }\n"
		      "  on beta { device minor 1; disk /dev/sdb; address 10.0.0.2:7790; meta-disk "
		      "internal; }\n"
		      "}\n");
	assert_loaded(&u);
	assert_warning_at(u.d, 2, 3, "ignore-on");
	assert_warning_at(u.d, 3, 3, "proxy");
	assert_warning_at(u.d, 8, 88, "proxy");
	assert_int_equal(unit_count_hosts(conf_find_res(u.c, "r0")), 2);
	unit_done(&u);
}

/* ---------------------------------------------------------------- errors */

struct err_case {
	const char *name;
	const char *text;
	int line, col;
	const char *sub;
};

static const struct err_case err_cases[] = {
	{"missing ';'", "resource r0 {\n  net { protocol C }\n}\n", 2, 20, "missing ';'"},
	{"unknown option", "resource r0 {\n  net { protocl C; }\n}\n", 2, 9, "protocl"},
	{"out of range", "resource r0 {\n  net { ko-count 201; }\n}\n", 2, 18, "201"},
	{"bad enum value", "resource r0 {\n  net { after-sb-1pri discard-everything; }\n}\n", 2, 23,
	 "discard-everything"},
	{"bad boolean", "resource r0 {\n  net { allow-two-primaries maybe; }\n}\n", 2, 29,
	 "boolean"},
	{"bad unit suffix", "resource r0 {\n  disk { resync-rate 10X; }\n}\n", 2, 22, "10X"},
	{"bad hash", "resource r0 {\n  net { verify-alg sha3; }\n}\n", 2, 20, "sha3"},
	{"two values", "resource r0 {\n  net { protocol C B; }\n}\n", 2, 20, "one value"},
	{"needs a value", "resource r0 {\n  net { protocol; }\n}\n", 2, 9, "needs a value"},
	{"flag with a value", "resource r0 {\n  net { discard-my-data yes; }\n}\n", 2, 25, "flag"},
	{"option of another section", "resource r0 {\n  disk { protocol C; }\n}\n", 2, 10,
	 "protocol"},
	/* the 8.3 protocol statement once per resource or common, as drbdadm-84
	 * ("conflicting use of protocol statement") */
	{"8.3 protocol twice in a resource", "resource r0 {\n  protocol C;\n  protocol A;\n}\n",
	 3, 3, "given twice in resource r0 (first at " UNIT_FILE ":2)"},
	{"8.3 protocol twice in common", "common {\n  protocol C; protocol A;\n}\n", 2, 15,
	 "given twice in common"},
	{"'{' after an option", "resource r0 {\n  net { protocol { C } }\n}\n", 2, 18, "'{'"},
	{"unknown top-level keyword", "resourc r0 { }\n", 1, 1, "resourc"},
	{"stray '}'", "}\n", 1, 1, "global"},
	{"resource not closed", "global { }\nresource r0 {\n  net { protocol C; }\n", 2, 1,
	 "not closed"},
	{"section not closed", "resource r0 {\n  net { protocol C;\n", 2, 3, "not closed"},
	{"unterminated string", "resource r0 {\n  handlers { fence-peer \"/bin/x; }\n}\n", 2, 25,
	 "unterminated"},
	{"missing resource name", "resource { }\n", 1, 10, "resource name"},
	{"duplicate resource", "resource r0 { }\nresource r0 { }\n", 2, 1, "twice"},
	{"section given twice", "resource r0 {\n  net { }\n  disk { }\n  net { }\n}\n", 4, 3,
	 "twice"},
	{"global given twice", "global { }\nglobal { }\n", 2, 1, "twice"},
	{"unknown resource statement", "resource r0 {\n  adress 10.0.0.1:7789;\n}\n", 2, 3,
	 "adress"},
	{"include inside a resource", "resource r0 {\n  include \"x.res\";\n}\n", 2, 3, "include"},
	{"unknown host statement", "resource r0 {\n  on alpha { adress 10.0.0.1:7789; }\n}\n", 2,
	 14, "adress"},
	{"on without a name", "resource r0 {\n  on { }\n}\n", 2, 3, "host name"},
	{"bad volume number", "resource r0 {\n  on alpha {\n    volume x { }\n  }\n}\n", 3, 12,
	 "volume number"},
	{"volume number too large", "resource r0 {\n  volume 65536 { }\n}\n", 2, 10,
	 "volume number"},
	{"unknown volume statement", "resource r0 {\n  volume 0 { address 10.0.0.1:7789; }\n}\n", 2,
	 14, "address"},
	{"host section in common", "common {\n  on alpha { }\n}\n", 2, 3, "common"},
	{"unknown section in common", "common {\n  syncr { }\n}\n", 2, 3, "syncr"},
	{"stacked resource", "resource r0 {\n  stacked-on-top-of r1 { }\n}\n", 2, 3, "stacked"},
	{"include without a pattern", "include;\n", 1, 1, "include"},
	{"ipv6 without brackets",
	 "resource r0 {\n  on a { address ipv6 fd00::1:7789; }\n}\n", 2, 23,
	 "brackets"},
};

static void test_error_position(void **state)
{
	const struct err_case *ec = *state;
	struct unit_conf u;

	unit_load(&u, ec->text);
	assert_rejected(&u);
	assert_int_equal(u.rc, -EINVAL);
	assert_error_at(u.d, ec->line, ec->col, ec->sub);
	unit_done(&u);
}

/* One run reports every problem of a file, each at its place. */
static void test_several_errors(void **state)
{
	struct unit_conf u;

	(void)state;
	unit_load(&u, "global { minor-count 0; }\n"                 /* 1 */
		      "common {\n"                                  /* 2 */
		      "  net { protocol D; }\n"                     /* 3 */
		      "}\n"                                         /* 4 */
		      "resource r0 {\n"                             /* 5 */
		      "  disk { resync-rate 5G; al-extents 1; }\n" /* 6 */
		      "  bogus;\n"                                  /* 7 */
		      UNIT_HOSTS                                    /* 8, 9 */
		      "}\n"                                         /* 10 */
		      "resource r1 {\n"                             /* 11 */
		      "  net { ping-int 0; }\n"                     /* 12 */
		      "  on alpha { address 10.0.0.1:99999; }\n"    /* 13 */
		      "}\n");
	assert_rejected(&u);
	assert_error_at(u.d, 1, 22, "minor-count");
	assert_error_at(u.d, 3, 18, "protocol");
	assert_error_at(u.d, 6, 22, "resync-rate");
	assert_warning_at(u.d, 6, 37, "al-extents"); /* raised to 67, as DRBD 8.4 */
	assert_error_at(u.d, 7, 3, "bogus");
	assert_error_at(u.d, 12, 18, "ping-int");
	assert_error_at(u.d, 13, 22, "address");
	assert_true(diag_count(u.d, DIAG_ERR) >= 6);
	unit_done(&u);
}

/* ---------------------------------------------------------------- robustness */

/* Statements with several long values, in a child so that a memory error
 * fails this test and not the whole program. */
static void long_values_child(void *arg)
{
	const char *text = arg;
	struct diag *d;
	struct conf *c = NULL;
	struct conf_load_opts o = {.hostname = UNIT_HOST, .no_ip_check = true};

	if (diag_new(&d) < 0)
		_exit(2);
	conf_load_buf(UNIT_FILE, text, strlen(text), &o, d, &c);
	if (diag_count(d, DIAG_ERR) == 0)
		_exit(3); /* such input must be refused */
	conf_free(c);
	diag_free(d);
}

static void test_long_values(void **state)
{
	char word[201], str[251];
	const char *stmts[4];
	size_t i;

	(void)state;
	memset(word, 'w', sizeof(word) - 1);
	word[sizeof(word) - 1] = '\0';
	memset(str, 's', sizeof(str) - 1);
	str[sizeof(str) - 1] = '\0';
	stmts[0] = unit_fmt("meta-disk %s %s %s %s;", word, word, word, word);
	stmts[1] = unit_fmt("meta-disk \"%s\" \"%s\" \"%s\" \"%s\";", str, str, str, str);
	stmts[2] = unit_fmt("device \"%s\" \"%s\" \"%s\" \"%s\";", str, str, str, str);
	stmts[3] = unit_fmt("address \"%s\" \"%s\";", str, str);
	for (i = 0; i < UNIT_ARRAY_SIZE(stmts); i++) {
		const char *text =
			unit_fmt("resource r0 {\n  on alpha { %s }\n" UNIT_HOSTS "}\n", stmts[i]);

		print_message("statement %zu: %.40s...\n", i, stmts[i]);
		assert_child_ok(unit_in_child(long_values_child, (void *)text));
	}
}

int main(void)
{
	struct CMUnitTest tests[UNIT_ARRAY_SIZE(err_cases) + UNIT_ARRAY_SIZE(addr_cases) +
				UNIT_ARRAY_SIZE(dev_cases) + UNIT_ARRAY_SIZE(md_cases) +
				UNIT_ARRAY_SIZE(twice_cases) + 40];
	size_t n = 0, i;

#define ADD(fn) tests[n++] = (struct CMUnitTest)cmocka_unit_test(fn)
	ADD(test_empty_config);
	ADD(test_global);
	ADD(test_common_inheritance);
	ADD(test_resource_and_hosts);
	ADD(test_hostname_from_environment);
	ADD(test_quoted_names);
	ADD(test_on_several_names);
	ADD(test_floating);
	ADD(test_floating_without_body);
	ADD(test_volumes_in_hosts);
	ADD(test_volumes_by_number);
	ADD(test_resource_level_volume_inherited);
	ADD(test_volume_forms_mixed);
	ADD(test_skip);
	ADD(test_given_twice);
	ADD(test_option_set_twice);
	ADD(test_al_extents_clamped);
	ADD(test_ignored_statements);
	ADD(test_several_errors);
	ADD(test_long_values);
#undef ADD
#define ADD_CASES(fn, table, field)                                                           \
	for (i = 0; i < UNIT_ARRAY_SIZE(table); i++) {                                         \
		tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(fn, (void *)&table[i]); \
		tests[n++].name = table[i].field;                                              \
	}
	ADD_CASES(test_address_form, addr_cases, value);
	ADD_CASES(test_device_form, dev_cases, stmt);
	ADD_CASES(test_meta_disk_form, md_cases, stmt);
	ADD_CASES(test_twice_case, twice_cases, name);
#undef ADD_CASES
	for (i = 0; i < UNIT_ARRAY_SIZE(err_cases); i++) {
		tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(test_error_position,
									(void *)&err_cases[i]);
		tests[n++].name = err_cases[i].name;
	}
	return _cmocka_run_group_tests("conf-parse", tests, n, NULL, unit_teardown);
}
