/*
 * conf-parse: recursive-descent parser for the DRBD 8.4 configuration
 * grammar (with 8.3 and pre-8.0 spellings), building struct conf.
 *
 * Errors are collected, not fatal: after a bad statement the parser skips
 * to the end of that statement (or block) and goes on, so that one run
 * reports every problem of a file.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "conf-int.h"
#include "conf-lex.h"

/* read_all(): not a regular file (ENOTSUP is close but misleading in messages) */
#define EFTYPE_NOT_REGULAR 1001

void conf_list_append(struct conf_optlist *l, struct conf_val *v)
{
	v->next = NULL;
	if (l->tail)
		l->tail->next = v;
	else
		l->head = v;
	l->tail = v;
}

void *conf_parse_alloc(struct conf_parser *p, size_t size)
{
	return arena_alloc(p->c->arena, size);
}

/* Skip the rest of a statement: up to ';' or a whole { } block; stop
 * before a '}' that closes the enclosing block. */
void conf_parse_skip(struct conf_parser *p)
{
	struct conf_tok t;
	int depth = 0;

	for (;;) {
		conf_lex_peek(p->lx, &t);
		if (t.type == CONF_TOK_EOF)
			return;
		if (t.type == CONF_TOK_RBRACE && depth == 0)
			return;
		conf_lex_next(p->lx, &t);
		if (t.type == CONF_TOK_LBRACE) {
			depth++;
		} else if (t.type == CONF_TOK_RBRACE) {
			if (--depth == 0) {
				/* a block statement ends with its '}' (and an optional ';') */
				conf_lex_peek(p->lx, &t);
				if (t.type == CONF_TOK_SEMI)
					conf_lex_next(p->lx, &t);
				return;
			}
		} else if (t.type == CONF_TOK_SEMI && depth == 0) {
			return;
		}
	}
}

bool conf_parse_expect(struct conf_parser *p, int type, const char *ctx)
{
	struct conf_tok t;

	conf_lex_peek(p->lx, &t);
	if ((int)t.type == type) {
		conf_lex_next(p->lx, &t);
		return true;
	}
	CONF_ERR(p, &t.loc, ctx, "expected %s but found %s%s%s%s", conf_tok_type_name((enum conf_tok_type)type),
	    conf_tok_type_name(t.type), t.type == CONF_TOK_WORD ? " '" : "",
	    t.type == CONF_TOK_WORD ? t.text : "", t.type == CONF_TOK_WORD ? "'" : "");
	return false;
}

/*
 * Read the value words of a statement up to its ';'. Returns the number
 * of values (up to max), or -1 after a syntax error (already reported and
 * skipped).
 */
int conf_parse_values(struct conf_parser *p, const struct conf_tok *kw, struct conf_tok *vals, int max)
{
	struct conf_tok t;
	int n = 0;

	for (;;) {
		conf_lex_peek(p->lx, &t);
		if (t.type == CONF_TOK_SEMI) {
			conf_lex_next(p->lx, &t);
			return n;
		}
		if (t.type == CONF_TOK_WORD || t.type == CONF_TOK_STRING) {
			conf_lex_next(p->lx, &t);
			if (n < max)
				vals[n] = t;
			n++;
			continue;
		}
		if (t.type == CONF_TOK_LBRACE)
			CONF_ERR(p, &t.loc, kw->text, "unexpected '{': '%s' is not a section here",
			    kw->text);
		else
			CONF_ERR(p, &t.loc, kw->text, "missing ';' after '%s'", kw->text);
		conf_parse_skip(p);
		return -1;
	}
}

static const char *sect_spelling(int lsect)
{
	if (lsect == CONF_LSECT_SYNCER)
		return "syncer";
	if (lsect == CONF_LSECT_RESOURCE)
		return "resource";
	return conf_sect_name((enum conf_sect)lsect);
}

/* Take v out of l (it is in it). */
static void list_remove(struct conf_optlist *l, const struct conf_val *v)
{
	struct conf_val **pp, *prev = NULL;

	for (pp = &l->head; *pp; prev = *pp, pp = &(*pp)->next) {
		if (*pp != v)
			continue;
		*pp = v->next;
		if (l->tail == v)
			l->tail = prev;
		return;
	}
}

/*
 * Set an option. One set twice in the same section is not an error:
 * drbdadm-84 accepts it and passes both to drbdsetup, where the last one
 * counts; so here too, with a warning that names both places.
 */
static void add_value(struct conf_parser *p, struct conf_optlist *list, const struct conf_opt *o,
		      const char *text, const struct diag_loc *loc, const struct diag_loc *vloc)
{
	const struct conf_val *old = conf_list_find(list, o->name);
	struct conf_val *v;
	char err[512];
	int rc;

	v = conf_parse_alloc(p, sizeof(*v));
	if (!v)
		return;
	rc = conf_opt_parse(o, text, &v->v, err, sizeof(err));
	if (rc == -ERANGE && o->type == CONF_T_NUM && (o->flags & CONF_OPT_CLAMP)) {
		v->v.num = v->v.num < o->min ? o->min : o->max;
		CONF_WARN(p, vloc, o->name,
			  "%s; %llu is used, as DRBD 8.4 does; write a value in the range", err,
			  (unsigned long long)v->v.num);
	} else if (rc < 0) {
		CONF_ERR(p, vloc, o->name, "%s", err);
		return;
	}
	v->opt = o;
	/* booleans are kept as yes/no: drbdadm reads no other spelling */
	v->text = o->type == CONF_T_BOOL ? (v->v.yes ? "yes" : "no") : text;
	v->loc = *loc;
	if (old) {
		char was[1100], now[1100];

		conf_opt_format_value(old->text, was, sizeof(was));
		conf_opt_format_value(v->text, now, sizeof(now));
		CONF_WARN(p, loc, o->name,
			  "set twice in the same %s section (%s at %s:%d:%d, %s at %s:%d:%d); the "
			  "last value, %s, is used, as drbdadm does; remove the earlier one",
			  conf_sect_name(o->sect), was, old->loc.file, old->loc.line, old->loc.col,
			  now, loc->file, loc->line, loc->col, now);
		list_remove(list, old);
	}
	conf_list_append(list, v);
}

/*
 * One `keyword [value];` statement of an option section. lists[] maps a
 * section to the list that receives its options (NULL: not allowed here).
 */
static void parse_option(struct conf_parser *p, int lsect, struct conf_optlist *const *lists,
			 const struct conf_tok *kw)
{
	const struct conf_legacy *lg = conf_legacy_find(lsect, kw->text);
	const struct conf_opt *o = NULL;
	struct conf_tok vals[2];
	const char *text;
	int n;

	n = conf_parse_values(p, kw, vals, 2);
	if (n < 0)
		return;
	if (lg) {
		char val[1100] = "";

		/* " value" as it would be written, or nothing for a bare flag */
		if (n > 0) {
			val[0] = ' ';
			conf_opt_format_value(vals[0].text, val + 1, sizeof(val) - 1);
		}

		switch (lg->kind) {
		case CONF_LEGACY_IGNORED:
		case CONF_LEGACY_OBSOLETE:
			CONF_WARN(p, &kw->loc, kw->text, "%s", lg->advice);
			return;
		case CONF_LEGACY_NEGATE:
			if (n != 0) {
				CONF_ERR(p, &vals[0].loc, kw->text, "takes no value");
				return;
			}
			CONF_WARN(p, &kw->loc, kw->text,
				  "'%s;' is DRBD 8.3 syntax; write '%s no;' instead", kw->text,
				  lg->new_name);
			o = conf_opt_find(lg->new_sect, lg->new_name);
			if (lists[o->sect])
				add_value(p, lists[o->sect], o, "no", &kw->loc, &kw->loc);
			return;
		case CONF_LEGACY_MOVE:
			o = conf_opt_find(lg->new_sect, lg->new_name);
			if (lg->new_sect == (enum conf_sect)lsect)
				CONF_WARN(p, &kw->loc, kw->text,
					  "'%s' is the old name of '%s'; write '%s%s;' instead",
					  kw->text, lg->new_name, lg->new_name, val);
			else if (lsect == CONF_LSECT_RESOURCE)
				CONF_WARN(p, &kw->loc, kw->text,
					  "'%s%s;' directly in a resource or common section is DRBD "
					  "8.3 syntax; write '%s { %s%s; }' instead",
					  kw->text, val, conf_sect_name(lg->new_sect), lg->new_name, val);
			else
				CONF_WARN(p, &kw->loc, kw->text,
					  "'%s { %s%s; }' is DRBD 8.3 syntax; write '%s { %s%s; }' "
					  "instead",
					  sect_spelling(lsect), kw->text, val,
					  conf_sect_name(lg->new_sect), lg->new_name, val);
			break;
		}
	} else if (lsect < CONF_SECT_COUNT) {
		o = conf_opt_find((enum conf_sect)lsect, kw->text);
	}
	if (!o) {
		enum conf_sect other;

		for (other = CONF_SECT_GLOBAL; other < CONF_SECT_COUNT; other++) {
			if (other != (enum conf_sect)lsect && conf_opt_find(other, kw->text)) {
				CONF_ERR(p, &kw->loc, kw->text,
					 "is a %s option, not a %s one; move it into a %s { } "
					 "section",
					 conf_sect_name(other), sect_spelling(lsect),
					 conf_sect_name(other));
				return;
			}
		}
		CONF_ERR(p, &kw->loc, kw->text, "unknown option in the %s section%s",
		    sect_spelling(lsect),
		    lsect == CONF_LSECT_SYNCER ? " (8.3 syncer options are mapped; this one is not "
						 "one of them)"
						: "; see tandem.conf(5) for the valid ones");
		return;
	}
	if (!lists[o->sect]) {
		CONF_ERR(p, &kw->loc, kw->text, "a %s option is not allowed here",
		    conf_sect_name(o->sect));
		return;
	}
	if (n > 1) {
		CONF_ERR(p, &vals[1].loc, kw->text,
			 "takes one value, %d given; is a ';' missing after '%s'? (quote a value "
			 "that contains blanks)",
			 n, vals[0].text);
		return;
	}
	if (n == 0) {
		if (o->type == CONF_T_BOOL || o->type == CONF_T_FLAG) {
			text = "yes";
		} else {
			CONF_ERR(p, &kw->loc, kw->text, "needs a value");
			return;
		}
	} else {
		if (o->type == CONF_T_FLAG) {
			CONF_ERR(p, &vals[0].loc, kw->text, "is a flag and takes no value");
			return;
		}
		text = vals[0].text;
	}
	if (strcmp(o->name, "on-io-error") == 0 && strcmp(text, "panic") == 0) {
		CONF_WARN(p, &vals[0].loc, kw->text,
		     "'panic' is DRBD 0.7 syntax; tandem uses 'detach'. To stop the node on "
		     "I/O errors, use call-local-io-error with a local-io-error handler");
		text = "detach";
	}
	add_value(p, lists[o->sect], o, text, &kw->loc, n ? &vals[0].loc : &kw->loc);
}

/* `{ option; ... }` after the section keyword. */
void conf_parse_option_block(struct conf_parser *p, int lsect, struct conf_optlist *const *lists,
			       const struct conf_tok *sect_kw)
{
	struct conf_tok t;

	if (!conf_parse_expect(p, CONF_TOK_LBRACE, sect_kw->text)) {
		conf_parse_skip(p);
		return;
	}
	for (;;) {
		conf_lex_next(p->lx, &t);
		if (t.type == CONF_TOK_RBRACE)
			break;
		if (t.type == CONF_TOK_EOF) {
			CONF_ERR(p, &sect_kw->loc, sect_kw->text,
			    "section is not closed: a '}' is missing before the end of the file");
			return;
		}
		if (t.type != CONF_TOK_WORD) {
			CONF_ERR(p, &t.loc, sect_kw->text, "expected an option name but found %s",
			    conf_tok_type_name(t.type));
			if (t.type != CONF_TOK_SEMI)
				conf_parse_skip(p);
			continue;
		}
		if (strcmp(t.text, "skip") == 0) {
			conf_parse_skip(p);
			continue;
		}
		parse_option(p, lsect, lists, &t);
	}
	conf_lex_peek(p->lx, &t);
	if (t.type == CONF_TOK_SEMI)
		conf_lex_next(p->lx, &t);
}

bool conf_parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/* ---------------------------------------------------------------- resources */

/* Each section may appear once per container (drbdadm: "conflicting use
 * of ... section"). Returns false, after an error, for a second one. */
static bool first_use(struct conf_parser *p, struct diag_loc *seen, const struct conf_tok *kw,
		      const char *where)
{
	if (seen->file) {
		CONF_ERR(p, &kw->loc, kw->text,
			 "the %s section is given twice in %s (first at %s:%d); merge them into "
			 "one",
			 kw->text, where, seen->file, seen->line);
		conf_parse_skip(p);
		return false;
	}
	*seen = kw->loc;
	return true;
}

/* The 8.3 `protocol X;` statement of a resource or common section may be
 * written once there, as in drbdadm-84 ("conflicting use of protocol
 * statement"); it may meet a net { protocol } (the last one counts). */
static bool first_protocol(struct conf_parser *p, struct diag_loc *seen, const struct conf_tok *kw,
			   const char *where)
{
	if (seen->file) {
		CONF_ERR(p, &kw->loc, kw->text,
			 "the 'protocol' statement is given twice in %s (first at %s:%d); remove "
			 "one, and write the other as net { protocol X; }",
			 where, seen->file, seen->line);
		conf_parse_skip(p);
		return false;
	}
	*seen = kw->loc;
	return true;
}

/* Slot of a section keyword in a `seen` array (SEEN_MAX slots). */
#define SEEN_MAX 6
static int seen_slot(const char *kw)
{
	static const char *const names[SEEN_MAX] = {"options", "net",      "disk",
						    "startup", "handlers", "syncer"};
	int i;

	for (i = 0; i < SEEN_MAX; i++)
		if (!strcmp(names[i], kw))
			return i;
	return 0;
}

/* Inherit the options of `from` that `into` does not set (copies). */
static void merge_opts(struct conf_parser *p, struct conf_optlist *into,
		       const struct conf_optlist *from)
{
	const struct conf_val *v;

	for (v = from->head; v; v = v->next) {
		struct conf_val *copy;

		if (conf_list_find(into, v->opt->name))
			continue;
		copy = conf_parse_alloc(p, sizeof(*copy));
		if (!copy)
			return;
		*copy = *v;
		conf_list_append(into, copy);
	}
}

/* drbdadm lists a host's volumes by number. */
static void sort_vols(struct conf_vol **head)
{
	struct conf_vol *sorted = NULL, *v, **pp;

	while ((v = *head)) {
		*head = v->next;
		for (pp = &sorted; *pp && (*pp)->vnr < v->vnr; pp = &(*pp)->next)
			;
		v->next = *pp;
		*pp = v;
	}
	*head = sorted;
}

static void parse_resource(struct conf_parser *p, const struct conf_tok *kw)
{
	struct conf_optlist *lists[CONF_SECT_COUNT];
	struct conf_tok name, t;
	struct conf_res *r, *o;
	struct conf_volset vs;
	struct diag_loc seen[SEEN_MAX] = {{0}}, proto_seen = {0};
	char where[300];
	unsigned int errors;
	int i;

	conf_lex_next(p->lx, &name);
	if (name.type != CONF_TOK_WORD && name.type != CONF_TOK_STRING) {
		CONF_ERR(p, &name.loc, "resource", "expected a resource name after 'resource'");
		conf_parse_skip(p);
		return;
	}
	r = conf_parse_alloc(p, sizeof(*r));
	if (!r)
		return;
	r->name = name.text;
	r->loc = kw->loc;
	snprintf(where, sizeof(where), "resource %s", r->name);
	errors = diag_count(p->c->diag, DIAG_ERR);
	for (i = 0; i < CONF_SECT_COUNT; i++)
		lists[i] = i == CONF_SECT_GLOBAL ? NULL : &r->opts[i];
	vs.head = (struct conf_vol **)conf_parse_alloc(p, sizeof(*vs.head));
	vs.what = "this resource";
	if (!vs.head)
		return;
	if (!conf_parse_expect(p, CONF_TOK_LBRACE, "resource")) {
		conf_parse_skip(p);
		return;
	}
	for (;;) {
		conf_lex_next(p->lx, &t);
		if (t.type == CONF_TOK_RBRACE)
			break;
		if (t.type == CONF_TOK_EOF) {
			CONF_ERR(p, &kw->loc, "resource",
			    "resource %s is not closed: a '}' is missing before the end of the file",
			    r->name);
			break;
		}
		if (t.type != CONF_TOK_WORD) {
			CONF_ERR(p, &t.loc, "resource", "expected a statement but found %s",
			    conf_tok_type_name(t.type));
			if (t.type != CONF_TOK_SEMI)
				conf_parse_skip(p);
			continue;
		}
		if (strcmp(t.text, "on") == 0) {
			conf_parse_vol_on(p, r, &t);
		} else if (strcmp(t.text, "floating") == 0) {
			conf_parse_vol_floating(p, r, &t);
		} else if (strcmp(t.text, "volume") == 0) {
			conf_parse_vol_volume(p, &vs, &t);
		} else if (!strcmp(t.text, "net") || !strcmp(t.text, "startup") ||
			   !strcmp(t.text, "handlers") || !strcmp(t.text, "options")) {
			enum conf_sect s = !strcmp(t.text, "net")       ? CONF_SECT_NET
					   : !strcmp(t.text, "startup") ? CONF_SECT_STARTUP
					   : !strcmp(t.text, "handlers") ? CONF_SECT_HANDLERS
									 : CONF_SECT_OPTIONS;

			if (first_use(p, &seen[seen_slot(t.text)], &t, where))
				conf_parse_option_block(p, s, lists, &t);
		} else if (strcmp(t.text, "disk") == 0) {
			struct conf_tok nx;

			conf_lex_peek(p->lx, &nx);
			if (nx.type == CONF_TOK_LBRACE) {
				if (first_use(p, &seen[seen_slot(t.text)], &t, where))
					conf_parse_option_block(p, CONF_SECT_DISK, lists, &t);
			} else {
				struct conf_vol *v = conf_parse_vol_implicit(p, &vs, &t);

				if (v)
					conf_parse_vol_disk_path(p, v, &t);
				else
					conf_parse_skip(p);
			}
		} else if (strcmp(t.text, "syncer") == 0) {
			CONF_WARN(p, &t.loc, "syncer",
			     "the syncer section is DRBD 8.3 syntax; its options are mapped to "
			     "the disk, net and options sections (see each warning below)");
			if (first_use(p, &seen[seen_slot(t.text)], &t, where))
				conf_parse_option_block(p, CONF_LSECT_SYNCER, lists, &t);
		} else if (!strcmp(t.text, "device") || !strcmp(t.text, "meta-disk") ||
			   !strcmp(t.text, "flexible-meta-disk")) {
			struct conf_vol *v = conf_parse_vol_implicit(p, &vs, &t);

			if (v)
				conf_parse_vol_stmt(p, v, &t);
			else
				conf_parse_skip(p);
		} else if (!strcmp(t.text, "protocol")) {
			if (first_protocol(p, &proto_seen, &t, where))
				parse_option(p, CONF_LSECT_RESOURCE, lists, &t);
		} else if (!strcmp(t.text, "incon-degr-cmd")) {
			parse_option(p, CONF_LSECT_RESOURCE, lists, &t);
		} else if (strcmp(t.text, "skip") == 0) {
			conf_parse_skip(p);
		} else if (strcmp(t.text, "ignore-on") == 0) {
			CONF_WARN(p, &t.loc, "ignore-on",
			     "is deprecated and ignored; remove the host from the resource instead");
			conf_parse_skip(p);
		} else if (strcmp(t.text, "proxy") == 0) {
			CONF_WARN(p, &t.loc, "proxy",
			     "DRBD Proxy is not supported by tandem; section ignored");
			conf_parse_skip(p);
		} else if (strcmp(t.text, "stacked-on-top-of") == 0) {
			CONF_ERR(p, &t.loc, "stacked-on-top-of",
			    "stacked resources are not supported by tandem; replicate the lower "
			    "resource only, or use a separate two-node resource");
			conf_parse_skip(p);
		} else {
			CONF_ERR(p, &t.loc, t.text, "unknown statement in resource %s", r->name);
			conf_parse_skip(p);
		}
	}
	conf_lex_peek(p->lx, &t);
	if (t.type == CONF_TOK_SEMI)
		conf_lex_next(p->lx, &t);

	r->damaged = diag_count(p->c->diag, DIAG_ERR) != errors;
	/* Expand resource-level volumes into every host section, as drbdadm does. */
	for (struct conf_host *h = r->hosts; h; h = h->next) {
		for (struct conf_vol *rv = *vs.head; rv; rv = rv->next) {
			struct conf_vol *hv = conf_parse_vol_find(h->vols, rv->vnr);

			if (hv && hv->implicit != rv->implicit) {
				CONF_ERR(p, &hv->loc, "volume",
				    "volume %u is written with a volume section in one place and "
				    "without in another; use one form",
				    rv->vnr);
				continue;
			}
			if (!hv) {
				hv = conf_parse_vol_new(p, rv->vnr, rv->implicit, &rv->loc);
				if (!hv)
					return;
				conf_parse_vol_append(&h->vols, hv);
			}
			if (!hv->device && hv->minor < 0) {
				hv->device = rv->device;
				hv->minor = rv->minor;
			}
			if (!hv->disk)
				hv->disk = rv->disk;
			if (hv->md == CONF_MD_UNSET) {
				hv->md = rv->md;
				hv->md_dev = rv->md_dev;
				hv->md_index = rv->md_index;
			}
			merge_opts(p, &hv->disk_opts, &rv->disk_opts);
		}
	}
	for (struct conf_host *h = r->hosts; h; h = h->next) {
		sort_vols(&h->vols);
		/* inheritance must not mix the two ways of writing volumes */
		if (!r->damaged && h->vols && h->vols->next &&
		    (h->vols->implicit || h->vols->next->implicit))
			CONF_ERR(p, &h->loc, h->floating ? "floating" : "on",
				 "resource %s: volumes written with and without a volume section "
				 "meet in this host section (through inheritance from the "
				 "resource); use volume sections everywhere",
				 r->name);
	}
	for (o = p->c->res_head; o; o = o->next) {
		if (strcmp(o->name, r->name) == 0) {
			CONF_ERR(p, &kw->loc, "resource",
			    "resource %s is defined twice (first at %s:%d); rename or remove one",
			    r->name, o->loc.file, o->loc.line);
			return;
		}
	}
	if (p->c->res_tail)
		p->c->res_tail->next = r;
	else
		p->c->res_head = r;
	p->c->res_tail = r;
}

/* ---------------------------------------------------------------- top level */

static void parse_common(struct conf_parser *p, const struct conf_tok *kw)
{
	struct conf_optlist *lists[CONF_SECT_COUNT];
	struct conf_tok t;
	struct diag_loc seen[SEEN_MAX] = {{0}}, proto_seen = {0};
	int i;

	for (i = 0; i < CONF_SECT_COUNT; i++)
		lists[i] = i == CONF_SECT_GLOBAL ? NULL : &p->c->common[i];
	if (!conf_parse_expect(p, CONF_TOK_LBRACE, "common")) {
		conf_parse_skip(p);
		return;
	}
	for (;;) {
		conf_lex_next(p->lx, &t);
		if (t.type == CONF_TOK_RBRACE)
			break;
		if (t.type == CONF_TOK_EOF) {
			CONF_ERR(p, &kw->loc, "common", "section is not closed: a '}' is missing");
			return;
		}
		if (t.type != CONF_TOK_WORD) {
			CONF_ERR(p, &t.loc, "common", "expected a section but found %s",
			    conf_tok_type_name(t.type));
			if (t.type != CONF_TOK_SEMI)
				conf_parse_skip(p);
			continue;
		}
		if ((!strcmp(t.text, "net") || !strcmp(t.text, "disk") ||
		     !strcmp(t.text, "startup") || !strcmp(t.text, "handlers") ||
		     !strcmp(t.text, "options") || !strcmp(t.text, "syncer")) &&
		    !first_use(p, &seen[seen_slot(t.text)], &t, "common"))
			continue;
		if (!strcmp(t.text, "net"))
			conf_parse_option_block(p, CONF_SECT_NET, lists, &t);
		else if (!strcmp(t.text, "disk"))
			conf_parse_option_block(p, CONF_SECT_DISK, lists, &t);
		else if (!strcmp(t.text, "startup"))
			conf_parse_option_block(p, CONF_SECT_STARTUP, lists, &t);
		else if (!strcmp(t.text, "handlers"))
			conf_parse_option_block(p, CONF_SECT_HANDLERS, lists, &t);
		else if (!strcmp(t.text, "options"))
			conf_parse_option_block(p, CONF_SECT_OPTIONS, lists, &t);
		else if (!strcmp(t.text, "syncer")) {
			CONF_WARN(p, &t.loc, "syncer",
			     "the syncer section is DRBD 8.3 syntax; its options are mapped to "
			     "the disk, net and options sections (see each warning below)");
			conf_parse_option_block(p, CONF_LSECT_SYNCER, lists, &t);
		} else if (!strcmp(t.text, "protocol")) {
			if (first_protocol(p, &proto_seen, &t, "common"))
				parse_option(p, CONF_LSECT_RESOURCE, lists, &t);
		}
		else if (!strcmp(t.text, "skip"))
			conf_parse_skip(p);
		else if (!strcmp(t.text, "on") || !strcmp(t.text, "floating") ||
			 !strcmp(t.text, "volume") || !strcmp(t.text, "device")) {
			CONF_ERR(p, &t.loc, t.text,
			    "not allowed in common; host and volume sections belong in a resource");
			conf_parse_skip(p);
		} else {
			CONF_ERR(p, &t.loc, t.text, "unknown section in common");
			conf_parse_skip(p);
		}
	}
}

static void parse_global(struct conf_parser *p, const struct conf_tok *kw)
{
	struct conf_optlist *lists[CONF_SECT_COUNT] = {0};

	lists[CONF_SECT_GLOBAL] = &p->c->global;
	if (p->c->global_seen.file) {
		CONF_ERR(p, &kw->loc, "global",
			 "the global section is given twice (first at %s:%d); merge them into one",
			 p->c->global_seen.file, p->c->global_seen.line);
		conf_parse_skip(p);
		return;
	}
	p->c->global_seen = kw->loc;
	conf_parse_option_block(p, CONF_SECT_GLOBAL, lists, kw);
}

static void parse_include(struct conf_parser *p, const struct conf_tok *kw)
{
	struct conf_tok w[2];
	char *pattern, *dir, *slash;
	glob_t g;
	int n, rc;
	size_t i;

	n = conf_parse_values(p, kw, w, 2);
	if (n < 0)
		return;
	if (n != 1) {
		CONF_ERR(p, &kw->loc, "include", "expected 'include \"PATTERN\";'");
		return;
	}
	if (w[0].text[0] == '/') {
		pattern = arena_strdup(p->c->arena, w[0].text);
	} else {
		dir = arena_strdup(p->c->arena, p->file);
		if (!dir)
			return;
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		else
			dir = ".";
		pattern = arena_printf(p->c->arena, "%s/%s", dir, w[0].text);
	}
	if (!pattern)
		return;
	rc = conf_glob(p->c, pattern, &g); /* unreadable directories match nothing */
	if (rc == -ENOENT) {
		if (!strpbrk(w[0].text, "*?["))
			CONF_ERR(p, &w[0].loc, "include", "cannot read '%s': no such file", pattern);
		return;
	}
	if (rc == -E2BIG) {
		CONF_ERR(p, &w[0].loc, "include",
			 "expanding '%s' reads more than the %d directory entries that the "
			 "includes of a configuration may read; put the wildcards in the file "
			 "name only, e.g. \"/etc/tandem.d/*.res\"",
			 pattern, CONF_GLOB_ENTRIES_MAX);
		return;
	}
	if (rc != 0) {
		CONF_ERR(p, &w[0].loc, "include", "cannot expand '%s': %s", pattern,
		    rc == -ENOMEM ? "out of memory" : "read error");
		return;
	}
	if (g.gl_pathc > CONF_FILES_MAX) {
		CONF_ERR(p, &w[0].loc, "include",
			 "'%s' matches %zu files, more than the %d a configuration may have; make "
			 "the pattern narrower",
			 pattern, g.gl_pathc, CONF_FILES_MAX);
		globfree(&g);
		return;
	}
	for (i = 0; i < g.gl_pathc; i++)
		if (conf_parse_file(p->c, g.gl_pathv[i], &w[0].loc) == -EMFILE)
			break;
	globfree(&g);
}

static void parse_top(struct conf_parser *p)
{
	struct conf_tok t;

	for (;;) {
		conf_lex_next(p->lx, &t);
		if (t.type == CONF_TOK_EOF)
			return;
		if (t.type != CONF_TOK_WORD) {
			CONF_ERR(p, &t.loc, NULL, "expected global, common, resource, include or skip, "
					     "but found %s",
			    conf_tok_type_name(t.type));
			if (t.type != CONF_TOK_SEMI && t.type != CONF_TOK_RBRACE)
				conf_parse_skip(p);
			continue;
		}
		if (strcmp(t.text, "resource") == 0)
			parse_resource(p, &t);
		else if (strcmp(t.text, "common") == 0)
			parse_common(p, &t);
		else if (strcmp(t.text, "global") == 0)
			parse_global(p, &t);
		else if (strcmp(t.text, "include") == 0)
			parse_include(p, &t);
		else if (strcmp(t.text, "skip") == 0)
			conf_parse_skip(p);
		else {
			CONF_ERR(p, &t.loc, t.text, "unknown top-level keyword; expected global, common, "
					       "resource, include or skip");
			conf_parse_skip(p);
		}
	}
}

int conf_parse_buf(struct conf *c, const char *name, const char *buf, size_t len)
{
	struct conf_parser p = {c, NULL, name};
	int rc;

	rc = conf_lex_new(c->arena, c->diag, name, buf, len, &p.lx);
	if (rc < 0)
		return rc;
	parse_top(&p);
	conf_lex_free(p.lx);
	return 0;
}

/*
 * Read a configuration file. Only regular files: a FIFO, tty or device
 * could block forever or be endless; O_NONBLOCK turns the odd blocking
 * "regular" file (/proc/kmsg) into an error instead of a hang.
 */
static int read_all(const char *path, char **out, size_t *len)
{
	struct statfs sfs;
	struct stat st;
	char *buf;
	size_t n = 0, cap;
	ssize_t r = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EFTYPE_NOT_REGULAR;
	}
	/* /proc and /sys files are not configuration; reading some has side
	 * effects (/proc/kmsg consumes the kernel log) */
	if (fstatfs(fd, &sfs) == 0 &&
	    (sfs.f_type == PROC_SUPER_MAGIC || sfs.f_type == SYSFS_MAGIC)) {
		close(fd);
		return -EFTYPE_NOT_REGULAR;
	}
	if ((uint64_t)st.st_size > CONF_FILE_SIZE_MAX) {
		close(fd);
		return -EFBIG;
	}
	cap = (size_t)st.st_size + 4096; /* /proc files report size 0 */
	if (cap > CONF_FILE_SIZE_MAX + 1)
		cap = CONF_FILE_SIZE_MAX + 1;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (n < cap && (r = read(fd, buf + n, cap - n)) > 0)
		n += (size_t)r;
	err = r < 0 ? -errno : 0;
	close(fd);
	if (!err && n >= cap)
		err = -EFBIG; /* it grew while we read, or lied about its size */
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* The canonical name of path, in the caller's filesystem or the real one. */
static int file_realpath(const struct conf *c, const char *path, char *real, size_t size)
{
	if (c->fs)
		return c->fs->fs_realpath(c->fs_ctx, path, real, size);
	return realpath(path, real) ? 0 : -errno; /* size is PATH_MAX */
}

/* The content of path, in the caller's filesystem or the real one. */
static int file_read(const struct conf *c, const char *path, char **out, size_t *len)
{
	int rc;

	if (!c->fs)
		return read_all(path, out, len);
	rc = c->fs->fs_read(c->fs_ctx, path, CONF_FILE_SIZE_MAX, out, len);
	if (rc == 0 && *len > CONF_FILE_SIZE_MAX) {
		free(*out);
		rc = -EFBIG;
	}
	return rc;
}

int conf_parse_file(struct conf *c, const char *path, const struct diag_loc *from)
{
	char real[PATH_MAX];
	const char *name;
	char *buf = NULL;
	size_t len = 0;
	unsigned int i;
	int rc;

	rc = file_realpath(c, path, real, sizeof(real));
	if (rc < 0) {
		diag_add(c->diag, DIAG_ERR, from, from ? "include" : NULL, "cannot read '%s': %s",
			 path, strerror(-rc));
		return rc;
	}
	/* A file that includes itself is read once, as by drbdadm-84: the
	 * cycle adds nothing, so it is a warning, not an error. */
	for (i = 0; i < c->depth; i++) {
		if (strcmp(c->stack[i], real) == 0) {
			diag_add(c->diag, DIAG_WARN, from, "include",
				 "include cycle: '%s' includes itself (through %u file%s); it is "
				 "read once and this include is skipped, as drbdadm does; remove "
				 "the include",
				 path, c->depth - i, c->depth - i == 1 ? "" : "s");
			return 0;
		}
	}
	for (i = 0; i < c->n_seen; i++)
		if (strcmp(c->seen[i], real) == 0)
			return 0; /* each file is read at most once */
	if (c->n_seen >= CONF_FILES_MAX) {
		diag_add(c->diag, DIAG_ERR, from, "include",
			 "more than %d configuration files; is an include pattern too wide?",
			 CONF_FILES_MAX);
		return -EMFILE;
	}
	if (c->depth > CONF_INCLUDE_DEPTH_MAX) { /* the top file plus 10 levels */
		diag_add(c->diag, DIAG_ERR, from, "include",
			 "includes nested deeper than %d levels at '%s'", CONF_INCLUDE_DEPTH_MAX,
			 path);
		return -ELOOP;
	}
	if (c->n_seen == c->cap_seen) {
		unsigned int cap = c->cap_seen ? 2 * c->cap_seen : 16;
		const char **n = arena_alloc(c->arena, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		if (c->n_seen)
			memcpy(n, c->seen, c->n_seen * sizeof(*n));
		c->seen = n;
		c->cap_seen = cap;
	}
	c->seen[c->n_seen] = arena_strdup(c->arena, real);
	if (!c->seen[c->n_seen])
		return -ENOMEM;
	c->n_seen++;
	rc = file_read(c, path, &buf, &len);
	if (rc < 0) {
		diag_add(c->diag, DIAG_ERR, from, from ? "include" : NULL, "cannot read '%s': %s",
			 path,
			 rc == -EFBIG		      ? "file larger than 16 MiB"
			 : rc == -EFTYPE_NOT_REGULAR ? "not a regular file"
			 : rc == -EAGAIN	      ? "reading it would block"
						      : strerror(-rc));
		return rc;
	}
	name = arena_strdup(c->arena, path);
	c->stack[c->depth++] = c->seen[c->n_seen - 1];
	rc = name ? conf_parse_buf(c, name, buf, len) : -ENOMEM;
	c->depth--;
	free(buf);
	return rc;
}
