/*
 * conf-dump: print a configuration in canonical DRBD 8.4 form, in the
 * shape of drbd-utils' `drbdadm dump` (so that the two can be diffed),
 * and as JSON (json-c) with effective values for scripts.
 */
#include "config.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <string.h>

#include "conf-int.h"

#define INDENT 4

static void print_value(FILE *f, const char *v)
{
	char buf[1100];

	conf_opt_format_value(v, buf, sizeof(buf));
	fprintf(f, "%3s", buf);
}

/* "keyword value;" with the value in column 25, as drbdadm aligns it. */
static void print_kv(FILE *f, int level, const char *kw, const char *value)
{
	int width = 24 - level * INDENT;

	fprintf(f, "%*s%-*s ", level * INDENT, "", width > 0 ? width : 0, kw);
	print_value(f, value);
	fputs(";\n", f);
}

/* Same, for composite values already formatted (device, address, ...). */
static void print_kv_raw(FILE *f, int level, const char *kw, const char *value)
{
	int width = 24 - level * INDENT;

	fprintf(f, "%*s%-*s %s;\n", level * INDENT, "", width > 0 ? width : 0, kw, value);
}

/* Is the option printed? drbdadm prints global flags bare, so their "no"
 * (the default; global has no inheritance) is not printed at all. */
static bool val_printable(const struct conf_val *v)
{
	return v->v.yes || v->opt->type != CONF_T_BOOL || v->opt->sect != CONF_SECT_GLOBAL;
}

/* Does the section print anything? */
static bool optlist_printable(const struct conf_optlist *l, const char *name)
{
	const struct conf_val *v;

	for (v = l->head; v; v = v->next)
		if (val_printable(v))
			return true;
	return false;
}

static void print_optlist(FILE *f, int level, const char *name, const struct conf_optlist *l)
{
	const struct conf_val *v, *bpo = NULL, *st = NULL;
	bool startup = strcmp(name, "startup") == 0;

	if (!optlist_printable(l, name))
		return; /* no empty section */
	fprintf(f, "%*s%s {\n", level * INDENT, "", name);
	for (v = l->head; v; v = v->next) {
		/* drbdadm prints these two last in startup */
		if (startup && !strcmp(v->opt->name, "become-primary-on"))
			bpo = v;
		else if (startup && !strcmp(v->opt->name, "stacked-timeouts"))
			st = v;
		else if (v->opt->type == CONF_T_FLAG)
			fprintf(f, "%*s%s;\n", (level + 1) * INDENT, "", v->opt->name);
		else
			print_kv(f, level + 1, v->opt->name, v->text);
	}
	/* bare when yes, as drbdadm; "no" only when written (it may override
	 * common's yes) */
	if (st && st->v.yes)
		fprintf(f, "%*s%s;\n", (level + 1) * INDENT, "", st->opt->name);
	else if (st)
		print_kv(f, level + 1, st->opt->name, st->text);
	if (bpo)
		print_kv(f, level + 1, bpo->opt->name, bpo->text);
	fprintf(f, "%*s}\n", level * INDENT, "");
}

static void print_vol(FILE *f, int level, const struct conf_vol *v)
{
	char buf[512];

	if (!v->implicit)
		fprintf(f, "%*svolume %u {\n", level++ * INDENT, "", v->vnr);
	print_optlist(f, level, "disk", &v->disk_opts);
	if (v->device && v->minor >= 0) {
		conf_opt_format_value(v->device, buf, sizeof(buf));
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " minor %d", v->minor);
	}
	else if (v->minor >= 0)
		snprintf(buf, sizeof(buf), "minor %d", v->minor);
	else
		buf[0] = '\0';
	if (buf[0])
		print_kv_raw(f, level, "device", buf);
	if (v->disk)
		print_kv(f, level, "disk", v->disk);
	switch (v->md) {
	case CONF_MD_INTERNAL:
		print_kv_raw(f, level, "meta-disk", "internal");
		break;
	case CONF_MD_FLEXIBLE:
	case CONF_MD_INDEXED:
		/* drbdadm prints an external meta-disk 16 wide at any depth */
		conf_opt_format_value(v->md_dev, buf, sizeof(buf));
		if (v->md == CONF_MD_INDEXED)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " [%d]", v->md_index);
		fprintf(f, "%*s%-16s %s;\n", level * INDENT, "", "meta-disk", buf);
		break;
	case CONF_MD_UNSET:
		break;
	}
	if (!v->implicit)
		fprintf(f, "%*s}\n", --level * INDENT, "");
}

static void format_addr(const struct conf_addr *a, char *buf, size_t len)
{
	if (!strcmp(a->af, "ipv6"))
		snprintf(buf, len, "ipv6 [%s]:%u", a->ip, a->port);
	else
		snprintf(buf, len, "%s %s:%u", a->af, a->ip, a->port);
}

static void print_host(FILE *f, const struct conf_host *h)
{
	const struct conf_vol *v;
	char buf[256];
	unsigned int i;

	if (h->floating) {
		format_addr(&h->addr, buf, sizeof(buf));
		fprintf(f, "%*sfloating %s {\n", INDENT, "", buf);
	} else {
		fprintf(f, "%*son", INDENT, "");
		for (i = 0; i < h->n_names; i++)
			fprintf(f, " %s", h->names[i]);
		fputs(" {\n", f);
	}
	for (v = h->vols; v; v = v->next)
		print_vol(f, 2, v);
	if (!h->floating && h->addr.af) {
		format_addr(&h->addr, buf, sizeof(buf));
		print_kv_raw(f, 2, "address", buf);
	}
	fprintf(f, "%*s}\n", INDENT, "");
}

static bool selected(const char *name, const char *const *res, unsigned int n_res)
{
	unsigned int i;

	if (n_res == 0)
		return true;
	for (i = 0; i < n_res; i++)
		if (!strcmp(res[i], name))
			return true;
	return false;
}

static int check_selection(const struct conf *c, const char *const *res, unsigned int n_res)
{
	unsigned int i;

	for (i = 0; i < n_res; i++)
		if (!conf_find_res(c, res[i]))
			return -ENOENT;
	return 0;
}

int conf_dump(const struct conf *c, const char *const *res, unsigned int n_res, FILE *f)
{
	const struct conf_res *r;
	const struct conf_host *h;
	const struct conf_val *v;
	bool any_common = false;
	int s;

	if (check_selection(c, res, n_res) < 0)
		return -ENOENT;
	if (n_res == 0) {
		size_t i;

		fprintf(f, "# %s\n", c->file);
		if (optlist_printable(&c->global, "global")) {
			/* drbdadm's fixed order: the table's */
			fputs("global {\n", f);
			for (i = 0; i < conf_opts_count; i++) {
				if (conf_opts[i].sect != CONF_SECT_GLOBAL)
					continue;
				v = conf_list_find(&c->global, conf_opts[i].name);
				if (!v || !val_printable(v))
					continue;
				if (v->opt->type == CONF_T_BOOL)
					fprintf(f, "%*s%s;\n", INDENT, "", v->opt->name);
				else
					fprintf(f, "%*s%s %s;\n", INDENT, "", v->opt->name, v->text);
			}
			fputs("}\n\n", f);
		}
		for (s = CONF_SECT_OPTIONS; s < CONF_SECT_COUNT; s++)
			any_common |= optlist_printable(&c->common[s], conf_sect_name(s));
		if (any_common) {
			fputs("common {\n", f);
			for (s = CONF_SECT_OPTIONS; s < CONF_SECT_COUNT; s++)
				print_optlist(f, 1, conf_sect_name(s), &c->common[s]);
			fputs("}\n\n", f);
		}
	}
	for (r = c->res_head; r; r = r->next) {
		if (!selected(r->name, res, n_res))
			continue;
		fprintf(f, "# resource %s on %s: %s, not stacked\n", r->name, c->hostname,
			r->me ? "not ignored" : "ignored");
		fprintf(f, "# defined at %s:%d\n", r->loc.file, r->loc.line);
		fprintf(f, "resource %s {\n", r->name);
		for (h = r->hosts; h; h = h->next)
			print_host(f, h);
		for (s = CONF_SECT_OPTIONS; s < CONF_SECT_COUNT; s++)
			print_optlist(f, 1, conf_sect_name(s), &r->opts[s]);
		fputs("}\n\n", f);
	}
	return ferror(f) ? -EIO : 0;
}

/* ---------------------------------------------------------------- JSON */

static json_object *json_value(const struct conf_val *v)
{
	switch (v->opt->type) {
	case CONF_T_NUM:
		return json_object_new_uint64(v->v.num);
	case CONF_T_BOOL:
	case CONF_T_FLAG:
		return json_object_new_boolean(v->v.yes || v->opt->type == CONF_T_FLAG);
	default:
		return json_object_new_string(v->text);
	}
}

static json_object *json_optlist(const struct conf_optlist *l)
{
	json_object *o = json_object_new_object();
	const struct conf_val *v;

	/* what the text dump prints, so that both round-trip alike */
	for (v = l->head; v; v = v->next)
		if (val_printable(v))
			json_object_object_add(o, v->opt->name, json_value(v));
	return o;
}

static json_object *json_loc(const struct diag_loc *loc)
{
	char buf[4200];

	snprintf(buf, sizeof(buf), "%s:%d", loc->file ? loc->file : "", loc->line);
	return json_object_new_string(buf);
}

static json_object *json_vol(const struct conf_vol *v)
{
	static const char *const kinds[] = {NULL, "internal", "flexible", "indexed"};
	json_object *o = json_object_new_object(), *md = json_object_new_object();

	json_object_object_add(o, "volume", json_object_new_int((int)v->vnr));
	if (v->device)
		json_object_object_add(o, "device", json_object_new_string(v->device));
	else if (v->minor >= 0) {
		char dev[32];

		snprintf(dev, sizeof(dev), "/dev/drbd%d", v->minor);
		json_object_object_add(o, "device", json_object_new_string(dev));
	}
	json_object_object_add(o, "minor", json_object_new_int(v->minor));
	if (v->disk)
		json_object_object_add(o, "disk", json_object_new_string(v->disk));
	if (kinds[v->md])
		json_object_object_add(md, "kind", json_object_new_string(kinds[v->md]));
	if (v->md_dev)
		json_object_object_add(md, "device", json_object_new_string(v->md_dev));
	if (v->md == CONF_MD_INDEXED)
		json_object_object_add(md, "index", json_object_new_int(v->md_index));
	json_object_object_add(o, "meta-disk", md);
	json_object_object_add(o, "disk-options", json_optlist(&v->disk_opts));
	return o;
}

static json_object *json_host(const struct conf_host *h)
{
	json_object *o = json_object_new_object(), *names = json_object_new_array();
	json_object *vols = json_object_new_array(), *addr;
	const struct conf_vol *v;
	unsigned int i;

	for (i = 0; i < h->n_names; i++)
		json_object_array_add(names, json_object_new_string(h->names[i]));
	json_object_object_add(o, "names", names);
	json_object_object_add(o, "floating", json_object_new_boolean(h->floating));
	if (h->addr.af) {
		addr = json_object_new_object();
		json_object_object_add(addr, "af", json_object_new_string(h->addr.af));
		json_object_object_add(addr, "ip", json_object_new_string(h->addr.ip));
		json_object_object_add(addr, "port", json_object_new_int((int)h->addr.port));
		json_object_object_add(o, "address", addr);
	}
	for (v = h->vols; v; v = v->next)
		json_object_array_add(vols, json_vol(v));
	json_object_object_add(o, "volumes", vols);
	return o;
}

/* Every option of the section with its effective value and its source. */
static json_object *json_effective(const struct conf *c, const struct conf_res *r,
				   enum conf_sect s)
{
	json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < conf_opts_count; i++) {
		const struct conf_opt *opt = &conf_opts[i];
		const struct conf_val *v;
		json_object *e;

		if (opt->sect != s)
			continue;
		v = conf_list_find(&r->opts[s], opt->name);
		e = json_object_new_object();
		if (v) {
			json_object_object_add(e, "value", json_value(v));
			json_object_object_add(e, "source", json_object_new_string("resource"));
		} else if ((v = conf_list_find(&c->common[s], opt->name))) {
			json_object_object_add(e, "value", json_value(v));
			json_object_object_add(e, "source", json_object_new_string("common"));
		} else if (opt->def) {
			struct conf_val d = {.opt = opt, .text = opt->def};
			char err[128];

			conf_opt_parse(opt, opt->def, &d.v, err, sizeof(err));
			json_object_object_add(e, "value", json_value(&d));
			json_object_object_add(e, "source", json_object_new_string("default"));
		} else {
			json_object_put(e);
			continue;
		}
		if (v)
			json_object_object_add(e, "defined-at", json_loc(&v->loc));
		json_object_object_add(o, opt->name, e);
	}
	return o;
}

int conf_dump_json(const struct conf *c, const char *const *res, unsigned int n_res, FILE *f)
{
	json_object *root, *common, *list;
	const struct conf_res *r;
	const struct conf_host *h;
	int s, rc = 0;

	if (check_selection(c, res, n_res) < 0)
		return -ENOENT;
	root = json_object_new_object();
	json_object_object_add(root, "file", json_object_new_string(c->file));
	json_object_object_add(root, "hostname", json_object_new_string(c->hostname));
	json_object_object_add(root, "global", json_optlist(&c->global));
	common = json_object_new_object();
	for (s = CONF_SECT_OPTIONS; s < CONF_SECT_COUNT; s++)
		json_object_object_add(common, conf_sect_name(s), json_optlist(&c->common[s]));
	json_object_object_add(root, "common", common);
	list = json_object_new_array();
	for (r = c->res_head; r; r = r->next) {
		json_object *jr, *hosts, *opts, *effective;

		if (!selected(r->name, res, n_res))
			continue;
		jr = json_object_new_object();
		hosts = json_object_new_array();
		opts = json_object_new_object();
		effective = json_object_new_object();
		json_object_object_add(jr, "name", json_object_new_string(r->name));
		json_object_object_add(jr, "defined-at", json_loc(&r->loc));
		json_object_object_add(jr, "on-this-host", json_object_new_boolean(r->me != NULL));
		for (h = r->hosts; h; h = h->next) {
			json_object *jh = json_host(h);

			json_object_object_add(jh, "this-host", json_object_new_boolean(h == r->me));
			json_object_array_add(hosts, jh);
		}
		json_object_object_add(jr, "hosts", hosts);
		for (s = CONF_SECT_OPTIONS; s < CONF_SECT_COUNT; s++) {
			json_object_object_add(opts, conf_sect_name(s), json_optlist(&r->opts[s]));
			json_object_object_add(effective, conf_sect_name(s),
					       json_effective(c, r, s));
		}
		json_object_object_add(jr, "options", opts);
		json_object_object_add(jr, "effective", effective);
		json_object_array_add(list, jr);
	}
	json_object_object_add(root, "resources", list);
	if (fprintf(f, "%s\n",
		    json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_NOSLASHESCAPE)) < 0)
		rc = -EIO;
	json_object_put(root);
	return rc;
}
