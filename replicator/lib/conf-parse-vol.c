/*
 * conf-parse-vol: host sections (on, floating) and volume sections of the
 * configuration grammar: device, disk, meta-disk and address statements.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conf-int.h"
#include "conf-lex.h"

struct conf_vol *conf_parse_vol_new(struct conf_parser *p, unsigned int vnr, bool implicit,
				const struct diag_loc *loc)
{
	struct conf_vol *v = conf_parse_alloc(p, sizeof(*v));

	if (!v)
		return NULL;
	v->vnr = vnr;
	v->implicit = implicit;
	v->minor = -1;
	v->md_index = -1;
	v->loc = *loc;
	return v;
}

void conf_parse_vol_append(struct conf_vol **head, struct conf_vol *v)
{
	while (*head)
		head = &(*head)->next;
	*head = v;
}

struct conf_vol *conf_parse_vol_find(struct conf_vol *head, unsigned int vnr)
{
	for (; head; head = head->next)
		if (head->vnr == vnr)
			return head;
	return NULL;
}

/* The minor of a /dev/drbdN (or tandem's /dev/nbdN) name, or -1. */
static int minor_of_name(const char *dev)
{
	unsigned long m;

	if (strncmp(dev, "/dev/drbd", 9) == 0 && conf_parse_uint(dev + 9, (1ul << 20) - 1, &m))
		return (int)m;
	if (strncmp(dev, "/dev/nbd", 8) == 0 && conf_parse_uint(dev + 8, (1ul << 20) - 1, &m))
		return (int)m;
	return -1;
}

static void parse_device(struct conf_parser *p, struct conf_vol *v, const struct conf_tok *kw)
{
	struct conf_tok w[4];
	unsigned long m;
	const char *path = NULL;
	int n, minor = -1, named;

	n = conf_parse_values(p, kw, w, 4);
	if (n < 0)
		return;
	if (n == 2 && strcmp(w[0].text, "minor") == 0) {
		if (!conf_parse_uint(w[1].text, (1ul << 20) - 1, &m)) {
			CONF_ERR(p, &w[1].loc, "device", "minor '%s' is not a number in 0..1048575",
			    w[1].text);
			return;
		}
		minor = (int)m;
	} else if (n == 1 || (n == 3 && strcmp(w[1].text, "minor") == 0)) {
		path = w[0].text;
		if (path[0] != '/')
			path = arena_printf(p->c->arena, "/dev/%s", path);
		if (!path)
			return;
		named = minor_of_name(path);
		if (n == 3) {
			if (!conf_parse_uint(w[2].text, (1ul << 20) - 1, &m)) {
				CONF_ERR(p, &w[2].loc, "device",
				    "minor '%s' is not a number in 0..1048575", w[2].text);
				return;
			}
			minor = (int)m;
			if (named >= 0 && named != minor) {
				CONF_ERR(p, &w[2].loc, "device",
				    "'%s' names minor %d but 'minor %d' is given; make them agree",
				    path, named, minor);
				return;
			}
		} else if (named >= 0) {
			minor = named;
		} else {
			CONF_ERR(p, &w[0].loc, "device",
			    "cannot tell the minor number from '%s'; write 'device %s minor N;'",
			    path, path);
			return;
		}
	} else {
		CONF_ERR(p, &kw->loc, "device",
		    "expected 'device /dev/drbdN;', 'device minor N;' or 'device PATH minor N;'");
		return;
	}
	if (v->minor >= 0 || v->device) {
		/* v->loc is where the earlier device statement is */
		char now[600];

		if (path)
			snprintf(now, sizeof(now), "%s", path);
		else
			snprintf(now, sizeof(now), "minor %d", minor);
		CONF_WARN(p, &kw->loc, "device",
			  "given twice in this section (first at %s:%d:%d); the last one, %s, is "
			  "used; remove the earlier one",
			  v->loc.file, v->loc.line, v->loc.col, now);
	}
	v->device = path;
	v->minor = minor;
	v->loc = kw->loc;
}

static void parse_meta_disk(struct conf_parser *p, struct conf_vol *v, const struct conf_tok *kw)
{
	char buf[CONF_LEX_STRING_MAX * 2 + 8];
	struct conf_tok w[4];
	unsigned long idx;
	size_t used;
	char *open;
	int n, i;

	n = conf_parse_values(p, kw, w, 4);
	if (n < 0)
		return;
	/* DEV, and after it at most an index written "[N]", "[ N ]" or the like */
	if (n >= 1 && n <= 4 && n > 1 && w[1].text[0] != '[') {
		CONF_ERR(p, &w[1].loc, kw->text,
			 "unexpected '%s' after '%s'; expected 'internal', DEV or DEV[INDEX]",
			 w[1].text, w[0].text);
		return;
	}
	if (n < 1 || n > 4) {
		CONF_ERR(p, &kw->loc, kw->text, "expected 'internal', DEV or DEV[INDEX]");
		return;
	}
	if (strcmp(kw->text, "flexible-meta-disk") == 0)
		CONF_WARN(p, &kw->loc, kw->text,
			  "'flexible-meta-disk' is DRBD 8.3 syntax; write 'meta-disk %s;' instead",
			  w[0].text);
	for (i = 0, used = 0; i < n; i++) {
		size_t len = strlen(w[i].text);

		if (used + len >= sizeof(buf)) {
			CONF_ERR(p, &kw->loc, kw->text, "the value is too long");
			return;
		}
		memcpy(buf + used, w[i].text, len + 1);
		used += len;
	}
	if (v->md != CONF_MD_UNSET)
		CONF_WARN(p, &kw->loc, kw->text,
			  "given twice in this section; the last one, %s, is used; remove the "
			  "earlier one",
			  buf);
	if (strcmp(buf, "internal") == 0) {
		v->md = CONF_MD_INTERNAL;
		v->md_dev = NULL;
		v->md_index = -1;
		return;
	}
	open = strchr(buf, '[');
	if (!open) {
		v->md = CONF_MD_FLEXIBLE;
		v->md_dev = arena_strdup(p->c->arena, buf);
		v->md_index = -1;
		return;
	}
	if (strcmp(kw->text, "flexible-meta-disk") == 0) {
		CONF_ERR(p, &kw->loc, kw->text, "takes no [INDEX]; use 'meta-disk DEV[INDEX];'");
		return;
	}
	i = (int)strlen(open + 1);
	if (open == buf || i < 2 || open[i] != ']') {
		CONF_ERR(p, &kw->loc, kw->text, "'%s' is not of the form DEV[INDEX]", buf);
		return;
	}
	*open = '\0';
	open[i] = '\0';
	if (!conf_parse_uint(open + 1, 65535, &idx)) {
		CONF_ERR(p, &kw->loc, kw->text, "index '%s' is not a number in 0..65535", open + 1);
		return;
	}
	v->md = CONF_MD_INDEXED;
	v->md_dev = arena_strdup(p->c->arena, buf);
	v->md_index = (int)idx;
}

void conf_parse_vol_disk_path(struct conf_parser *p, struct conf_vol *v, const struct conf_tok *kw)
{
	struct conf_tok w[2];
	int n = conf_parse_values(p, kw, w, 2);

	if (n < 0)
		return;
	if (n != 1) {
		CONF_ERR(p, &kw->loc, "disk", "expected 'disk PATH;' or 'disk { options }'");
		return;
	}
	if (v->disk)
		CONF_WARN(p, &kw->loc, "disk",
			  "given twice in this section, first as %s; the last one, %s, is used; "
			  "remove the earlier one",
			  v->disk, w[0].text);
	v->disk = w[0].text;
}

/*
 * Statements that describe one volume: device, disk, meta-disk. Returns
 * false if kw is none of them.
 */
bool conf_parse_vol_stmt(struct conf_parser *p, struct conf_vol *v, const struct conf_tok *kw)
{
	struct conf_tok t;

	if (strcmp(kw->text, "device") == 0) {
		parse_device(p, v, kw);
	} else if (strcmp(kw->text, "meta-disk") == 0 ||
		   strcmp(kw->text, "flexible-meta-disk") == 0) {
		parse_meta_disk(p, v, kw);
	} else if (strcmp(kw->text, "disk") == 0) {
		conf_lex_peek(p->lx, &t);
		if (t.type == CONF_TOK_LBRACE) {
			struct conf_optlist *lists[CONF_SECT_COUNT] = {0};

			lists[CONF_SECT_DISK] = &v->disk_opts;
			conf_parse_option_block(p, CONF_SECT_DISK, lists, kw);
		} else {
			conf_parse_vol_disk_path(p, v, kw);
		}
	} else {
		return false;
	}
	return true;
}

struct conf_vol *conf_parse_vol_implicit(struct conf_parser *p, struct conf_volset *vs,
				     const struct conf_tok *kw)
{
	struct conf_vol *v = conf_parse_vol_find(*vs->head, 0);

	if (v && v->implicit)
		return v;
	for (v = *vs->head; v; v = v->next) {
		CONF_ERR(p, &kw->loc, kw->text,
		    "'%s' outside a volume section, but %s also has 'volume %u'; put it inside "
		    "a volume section",
		    kw->text, vs->what, v->vnr);
		return NULL;
	}
	v = conf_parse_vol_new(p, 0, true, &kw->loc);
	if (v)
		conf_parse_vol_append(vs->head, v);
	return v;
}

void conf_parse_vol_volume(struct conf_parser *p, struct conf_volset *vs, const struct conf_tok *kw)
{
	struct conf_tok t, n;
	struct conf_vol *v, *scratch;
	unsigned long vnr;

	conf_lex_next(p->lx, &n);
	if (n.type != CONF_TOK_WORD || !conf_parse_uint(n.text, 65535, &vnr)) {
		CONF_ERR(p, &n.loc, "volume", "expected a volume number in 0..65535");
		conf_parse_skip(p);
		return;
	}
	v = conf_parse_vol_find(*vs->head, (unsigned int)vnr);
	if (v && v->implicit) {
		CONF_ERR(p, &kw->loc, "volume",
		    "volume %lu mixed with device/disk/meta-disk statements outside a volume "
		    "section in %s; use volume sections only",
		    vnr, vs->what);
		v = NULL;
	} else if (v) {
		CONF_ERR(p, &kw->loc, "volume", "volume %lu is defined twice in %s (first at %s:%d)",
		    vnr, vs->what, v->loc.file, v->loc.line);
		v = NULL;
	} else {
		for (scratch = *vs->head; scratch; scratch = scratch->next)
			if (scratch->implicit)
				CONF_ERR(p, &kw->loc, "volume",
				    "volume %lu mixed with device/disk/meta-disk statements "
				    "outside a volume section in %s; use volume sections only",
				    vnr, vs->what);
		v = conf_parse_vol_new(p, (unsigned int)vnr, false, &kw->loc);
		if (!v)
			return;
		conf_parse_vol_append(vs->head, v);
	}
	scratch = v ? v : conf_parse_vol_new(p, (unsigned int)vnr, false, &kw->loc);
	if (!scratch || !conf_parse_expect(p, CONF_TOK_LBRACE, "volume")) {
		conf_parse_skip(p);
		return;
	}
	for (;;) {
		conf_lex_next(p->lx, &t);
		if (t.type == CONF_TOK_RBRACE)
			break;
		if (t.type == CONF_TOK_EOF) {
			CONF_ERR(p, &kw->loc, "volume", "section is not closed: a '}' is missing");
			return;
		}
		if (t.type != CONF_TOK_WORD) {
			CONF_ERR(p, &t.loc, "volume", "expected a statement but found %s",
			    conf_tok_type_name(t.type));
			if (t.type != CONF_TOK_SEMI)
				conf_parse_skip(p);
			continue;
		}
		if (strcmp(t.text, "skip") == 0) {
			conf_parse_skip(p);
			continue;
		}
		if (!conf_parse_vol_stmt(p, scratch, &t)) {
			CONF_ERR(p, &t.loc, t.text,
			    "unknown statement in a volume section; expected device, disk or "
			    "meta-disk");
			conf_parse_skip(p);
		}
	}
}

/* ---------------------------------------------------------------- hosts */

static bool parse_address_text(struct conf_parser *p, const char *af, const char *text,
			       const struct diag_loc *loc, struct conf_addr *a)
{
	char ip[INET6_ADDRSTRLEN + 2];
	unsigned char bin[sizeof(struct in6_addr)];
	const char *colon;
	unsigned long port;
	size_t iplen;

	if (af && strcmp(af, "ipv4") && strcmp(af, "ipv6")) {
		if (!strcmp(af, "ssocks") || !strcmp(af, "sci") || !strcmp(af, "sdp"))
			CONF_ERR(p, loc, "address",
			    "address family '%s' is not supported by tandem; use ipv4 or ipv6 "
			    "(TCP)",
			    af);
		else
			CONF_ERR(p, loc, "address", "unknown address family '%s'; use ipv4 or ipv6",
			    af);
		return false;
	}
	colon = strrchr(text, ':');
	if (!colon || !conf_parse_uint(colon + 1, 65535, &port) || port == 0) {
		CONF_ERR(p, loc, "address", "'%s' is not ADDRESS:PORT with a port in 1..65535", text);
		return false;
	}
	iplen = (size_t)(colon - text);
	if (text[0] == '[') {
		if (iplen < 3 || text[iplen - 1] != ']' || iplen - 2 >= sizeof(ip)) {
			CONF_ERR(p, loc, "address", "'%s': an IPv6 address is written [ADDR]:PORT",
			    text);
			return false;
		}
		memcpy(ip, text + 1, iplen - 2);
		ip[iplen - 2] = '\0';
		if (!af)
			af = "ipv6";
		if (strcmp(af, "ipv6") != 0) {
			CONF_ERR(p, loc, "address", "'%s' is an IPv6 address; write 'address ipv6 %s;'",
			    text, text);
			return false;
		}
	} else {
		if (iplen >= sizeof(ip)) {
			CONF_ERR(p, loc, "address", "'%s' is not a valid address", text);
			return false;
		}
		memcpy(ip, text, iplen);
		ip[iplen] = '\0';
		if (!af)
			af = "ipv4";
		if (strcmp(af, "ipv6") == 0) {
			CONF_ERR(p, loc, "address", "an IPv6 address is written in brackets: [ADDR]:PORT");
			return false;
		}
	}
	if (inet_pton(strcmp(af, "ipv6") == 0 ? AF_INET6 : AF_INET, ip, bin) != 1) {
		CONF_ERR(p, loc, "address", "'%s' is not a valid %s address (host names are not "
				       "allowed here)",
		    ip, af);
		return false;
	}
	a->af = af;
	a->ip = arena_strdup(p->c->arena, ip);
	a->port = (unsigned int)port;
	a->loc = *loc;
	return true;
}

static void parse_address(struct conf_parser *p, struct conf_host *h, const struct conf_tok *kw)
{
	struct conf_tok w[3];
	int n = conf_parse_values(p, kw, w, 3);

	if (n < 0)
		return;
	if (n >= 2 && strcmp(w[0].text, "ipv4") && strcmp(w[0].text, "ipv6") &&
	    strcmp(w[0].text, "ssocks") && strcmp(w[0].text, "sci") && strcmp(w[0].text, "sdp")) {
		CONF_ERR(p, &w[1].loc, "address",
			 "unexpected '%s' after the address; is a ';' missing after '%s'?",
			 w[1].text, w[0].text);
		return;
	}
	if (n < 1 || n > 2) {
		CONF_ERR(p, &kw->loc, "address", "expected 'address [ipv4|ipv6] ADDRESS:PORT;'");
		return;
	}
	if (h->floating) {
		CONF_ERR(p, &kw->loc, "address",
		    "a floating section takes its address from its header; remove this line");
		return;
	}
	if (h->addr.af)
		CONF_WARN(p, &kw->loc, "address",
			  "given twice in this section (first at %s:%d:%d); the last one, %s, is "
			  "used; remove the earlier one",
			  h->addr.loc.file, h->addr.loc.line, h->addr.loc.col, w[n - 1].text);
	parse_address_text(p, n == 2 ? w[0].text : NULL, w[n - 1].text, &w[n - 1].loc, &h->addr);
}

static void parse_host_body(struct conf_parser *p, struct conf_host *h, const struct conf_tok *kw)
{
	struct conf_tok t;
	struct conf_volset vs = {&h->vols, NULL};
	unsigned int errors = diag_count(p->c->diag, DIAG_ERR);

	vs.what = h->floating ? "this floating section" : "this host section";
	if (!conf_parse_expect(p, CONF_TOK_LBRACE, kw->text)) {
		conf_parse_skip(p);
		return;
	}
	for (;;) {
		conf_lex_next(p->lx, &t);
		if (t.type == CONF_TOK_RBRACE)
			break;
		if (t.type == CONF_TOK_EOF) {
			CONF_ERR(p, &kw->loc, kw->text, "section is not closed: a '}' is missing");
			h->damaged = true;
			return;
		}
		if (t.type != CONF_TOK_WORD) {
			CONF_ERR(p, &t.loc, kw->text, "expected a statement but found %s",
			    conf_tok_type_name(t.type));
			if (t.type != CONF_TOK_SEMI)
				conf_parse_skip(p);
			continue;
		}
		if (strcmp(t.text, "address") == 0) {
			parse_address(p, h, &t);
		} else if (strcmp(t.text, "volume") == 0) {
			conf_parse_vol_volume(p, &vs, &t);
		} else if (strcmp(t.text, "skip") == 0) {
			conf_parse_skip(p);
		} else if (strcmp(t.text, "proxy") == 0) {
			CONF_WARN(p, &t.loc, "proxy", "DRBD Proxy is not supported by tandem; section "
						 "ignored");
			conf_parse_skip(p);
		} else if (!strcmp(t.text, "device") || !strcmp(t.text, "disk") ||
			   !strcmp(t.text, "meta-disk") || !strcmp(t.text, "flexible-meta-disk")) {
			struct conf_vol *v = conf_parse_vol_implicit(p, &vs, &t);

			if (v)
				conf_parse_vol_stmt(p, v, &t);
			else
				conf_parse_skip(p);
		} else {
			CONF_ERR(p, &t.loc, t.text,
			    "unknown statement in a host section; expected address, volume, device, "
			    "disk or meta-disk");
			conf_parse_skip(p);
		}
	}
	h->damaged = diag_count(p->c->diag, DIAG_ERR) != errors;
	conf_lex_peek(p->lx, &t);
	if (t.type == CONF_TOK_SEMI)
		conf_lex_next(p->lx, &t);
}

static void host_append(struct conf_res *r, struct conf_host *h)
{
	struct conf_host **pp = &r->hosts;

	while (*pp)
		pp = &(*pp)->next;
	*pp = h;
}

void conf_parse_vol_on(struct conf_parser *p, struct conf_res *r, const struct conf_tok *kw)
{
	struct conf_tok t, names[64];
	struct conf_host *h;
	unsigned int n = 0, i;

	for (;;) {
		conf_lex_peek(p->lx, &t);
		if (t.type != CONF_TOK_WORD && t.type != CONF_TOK_STRING)
			break;
		conf_lex_next(p->lx, &t);
		if (n == 64) {
			CONF_ERR(p, &t.loc, "on", "more than 64 host names in one 'on' section");
			conf_parse_skip(p);
			return;
		}
		names[n++] = t;
	}
	if (n == 0) {
		CONF_ERR(p, &kw->loc, "on", "expected a host name after 'on'");
		conf_parse_skip(p);
		return;
	}
	h = conf_parse_alloc(p, sizeof(*h));
	if (!h || !(h->names = conf_parse_alloc(p, n * sizeof(*h->names))))
		return;
	for (i = 0; i < n; i++)
		h->names[i] = names[i].text;
	h->n_names = n;
	h->loc = kw->loc;
	parse_host_body(p, h, kw);
	host_append(r, h);
}

void conf_parse_vol_floating(struct conf_parser *p, struct conf_res *r, const struct conf_tok *kw)
{
	struct conf_tok w[2], t;
	struct conf_host *h;
	int n = 0;

	for (;;) {
		conf_lex_peek(p->lx, &t);
		if (t.type != CONF_TOK_WORD)
			break;
		conf_lex_next(p->lx, &t);
		if (n < 2)
			w[n] = t;
		n++;
	}
	if (n < 1 || n > 2) {
		CONF_ERR(p, &kw->loc, "floating", "expected 'floating [ipv4|ipv6] ADDRESS:PORT { ... }'");
		conf_parse_skip(p);
		return;
	}
	h = conf_parse_alloc(p, sizeof(*h));
	if (!h)
		return;
	h->floating = true;
	h->loc = kw->loc;
	parse_address_text(p, n == 2 ? w[0].text : NULL, w[n - 1].text, &w[n - 1].loc, &h->addr);
	/* `floating ADDR:PORT;` without a body: everything is inherited */
	conf_lex_peek(p->lx, &t);
	if (t.type == CONF_TOK_SEMI)
		conf_lex_next(p->lx, &t);
	else
		parse_host_body(p, h, kw);
	host_append(r, h);
}

