/*
 * fence-cib: Pacemaker's CIB as the fence handlers use it. Reads go to a
 * copy of the whole CIB taken by fence_cib_refresh() and are answered by
 * XPath on it; writes are single synchronous CIB operations (create by id,
 * delete by XPath), so that the CIB itself arbitrates concurrent runs:
 * a create fails when the id exists, a conditional delete removes
 * nothing when the constraint changed meanwhile. Legacy return codes of
 * libcib are turned into negative errnos, and their text is kept for
 * fence_cib_error().
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <crm/cib.h>
#include <crm/common/ipc.h>
#include <crm/common/ipc_controld.h>
#include <crm/common/results.h>
#include <crm/common/xml.h>
#include <crm/crm.h>

#include "fence-cib.h"

#define XPATH_MAX 4096

struct fence_cib {
	cib_t *cib;
	xmlNode *xml; /* the whole CIB, from the last refresh */
	bool signed_on;
	char err[256];
};

static int fail(struct fence_cib *c, int legacy_rc, const char *what)
{
	int rc = pcmk_legacy2rc(legacy_rc);

	snprintf(c->err, sizeof(c->err), "%s: %s", what, pcmk_rc_str(rc));
	if (rc == pcmk_rc_ok)
		return 0;
	return rc > 0 ? -rc : -EPROTO;
}

const char *fence_cib_error(const struct fence_cib *c)
{
	return c->err[0] ? c->err : "no error";
}

bool fence_cib_offline(const struct fence_cib *c)
{
	return c->cib->variant == cib_file;
}

static long long now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

struct fence_cib *fence_cib_new(const char *prog)
{
	static bool initialized;
	struct fence_cib *c;

	if (!initialized) {
		/* errors of the library to stderr (tandemd logs them); and the
		 * schemas, without which a CIB_file fails validation on signon */
		crm_log_init(prog, LOG_ERR, FALSE, TRUE, 0, NULL, TRUE);
		crm_xml_init();
		initialized = true;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cib = cib_new();
	if (!c->cib) {
		free(c);
		return NULL;
	}
	return c;
}

int fence_cib_open(struct fence_cib *c, const char *name, unsigned int timeout_s)
{
	long long deadline = now_s() + timeout_s;
	int rc;

	for (;;) {
		rc = c->cib->cmds->signon(c->cib, name, cib_command);
		/* a file does not come back by waiting */
		if (rc == pcmk_ok || now_s() >= deadline || fence_cib_offline(c))
			break;
		sleep(1);
	}
	if (rc != pcmk_ok) {
		const char *file = getenv("CIB_file");

		fail(c, rc, "cannot sign on to the CIB");
		if (fence_cib_offline(c) && file) {
			size_t n = strlen(c->err);

			snprintf(c->err + n, sizeof(c->err) - n, " (CIB_file=%s)", file);
		}
		return -ENOTCONN;
	}
	c->signed_on = true;
	return fence_cib_refresh(c, timeout_s ? timeout_s : 1);
}

void fence_cib_free(struct fence_cib *c)
{
	if (!c)
		return;
	if (c->signed_on)
		c->cib->cmds->signoff(c->cib); /* a CIB_file is written back here */
	cib_delete(c->cib);
	free_xml(c->xml);
	free(c);
}

int fence_cib_refresh(struct fence_cib *c, unsigned int timeout_s)
{
	xmlNode *xml = NULL;
	int rc;

	c->cib->call_timeout = (int)timeout_s;
	rc = c->cib->cmds->query(c->cib, NULL, &xml, cib_sync_call);
	if (rc != pcmk_ok) {
		free_xml(xml);
		return fail(c, rc, "cannot read the CIB");
	}
	free_xml(c->xml);
	c->xml = xml;
	return 0;
}

/* An XPath string literal of v, or -EINVAL if v holds both quotes. */
static int literal(char *buf, size_t len, const char *v)
{
	char q = strchr(v, '\'') ? '"' : '\'';

	if (strchr(v, q))
		return -EINVAL;
	if ((size_t)snprintf(buf, len, "%c%s%c", q, v, q) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* Format an XPath into buf; -ENAMETOOLONG if it does not fit. */
static int __attribute__((format(printf, 3, 4))) xpath(char *buf, size_t len, const char *fmt,
						       ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The first match of an XPath on the cached CIB, or NULL. */
static xmlNode *first(const struct fence_cib *c, const char *path, int *n_matches)
{
	xmlXPathObjectPtr r;
	xmlNode *node = NULL;
	int n;

	if (!c->xml)
		return NULL;
	r = xpath_search(c->xml, path);
	n = numXpathResults(r);
	if (n > 0)
		node = getXpathResult(r, 0);
	freeXpathObject(r);
	if (n_matches)
		*n_matches = n;
	return node;
}

static const char *attr_or(const xmlNode *x, const char *name, const char *dflt)
{
	const char *v = x ? crm_element_value(x, name) : NULL;

	return v ? v : dflt;
}

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* crm-fence-peer's crm_is_not_false(): only no/n/false/0/off are false. */
static bool not_false(const char *v)
{
	return !(!strcasecmp(v, "no") || !strcasecmp(v, "n") || !strcasecmp(v, "false") ||
		 !strcmp(v, "0") || !strcasecmp(v, "off"));
}

static bool cluster_option(const struct fence_cib *c, const char *name, const char *alt)
{
	char path[256];
	xmlNode *x;

	snprintf(path, sizeof(path),
		 "/cib/configuration/crm_config/cluster_property_set/nvpair"
		 "[@name='%s' or @name='%s']",
		 name, alt);
	x = first(c, path, NULL);
	return not_false(attr_or(x, "value", "true"));
}

void fence_cib_facts(const struct fence_cib *c, struct fence_cib_facts *f)
{
	const char *q = attr_or(c->xml, "have-quorum", "0");

	f->quorum = !strcmp(q, "1") || crm_is_true(q);
	f->stonith_enabled = cluster_option(c, "stonith-enabled", "stonith_enabled");
	f->startup_fencing = cluster_option(c, "startup-fencing", "startup_fencing");
	copy(f->validate_with, sizeof(f->validate_with), attr_or(c->xml, "validate-with", ""));
}

#define TANDEM_PRIMITIVE "primitive[@class='ocf' and @provider='tandem' and @type='tandem']"
#define CLONES		 "/cib/configuration/resources//*[self::clone or self::master]"

static bool promotable(const xmlNode *clone)
{
	xmlNode *meta, *nv;

	if (!strcmp((const char *)clone->name, "master"))
		return true;
	for (meta = first_named_child(clone, "meta_attributes"); meta;
	     meta = crm_next_same_xml(meta))
		for (nv = first_named_child(meta, "nvpair"); nv; nv = crm_next_same_xml(nv))
			if (!strcmp(attr_or(nv, "name", ""), "promotable"))
				return crm_is_true(attr_or(nv, "value", "false"));
	return false;
}

int fence_cib_find_clone(const struct fence_cib *c, const char *res, char *id, size_t len)
{
	char lit[FENCE_POLICY_NAME_MAX + 2], path[XPATH_MAX];
	int rc, n, i, n_promotable = 0;
	xmlXPathObjectPtr r;
	xmlNode *x;

	rc = literal(lit, sizeof(lit), res);
	if (rc == 0)
		rc = xpath(path, sizeof(path),
			   CLONES "[.//" TANDEM_PRIMITIVE
				  "[instance_attributes/nvpair[@name='resource' and @value=%s]]]",
			   lit);
	if (rc < 0 || !c->xml)
		return rc < 0 ? rc : -ENOENT;
	r = xpath_search(c->xml, path);
	n = numXpathResults(r);
	for (i = 0; i < n; i++) {
		x = getXpathResult(r, i);
		if (!x)
			continue;
		if (promotable(x) && n_promotable++)
			continue;
		if (promotable(x) || i == 0)
			copy(id, len, attr_or(x, "id", ""));
	}
	freeXpathObject(r);
	if (n == 0)
		return -ENOENT;
	return n_promotable == 1 ? 0 : n_promotable ? -ENOTUNIQ : -EINVAL;
}

int fence_cib_clone_resource(const struct fence_cib *c, const char *id, char *res, size_t len)
{
	char lit[FENCE_POLICY_NAME_MAX + 2], path[XPATH_MAX];
	xmlNode *x;
	int rc;

	rc = literal(lit, sizeof(lit), id);
	if (rc == 0)
		rc = xpath(path, sizeof(path),
			   CLONES "[@id=%s]//" TANDEM_PRIMITIVE
				  "/instance_attributes/nvpair[@name='resource']",
			   lit);
	if (rc < 0)
		return rc;
	x = first(c, path, NULL);
	if (!x)
		return -ENOENT;
	copy(res, len, attr_or(x, "value", ""));
	return 0;
}

bool fence_cib_has_resource(const struct fence_cib *c, const char *id)
{
	char lit[FENCE_POLICY_NAME_MAX + 2], path[XPATH_MAX];

	if (literal(lit, sizeof(lit), id) < 0 ||
	    xpath(path, sizeof(path),
		  "/cib/configuration/resources//*[@id=%s][self::primitive or self::group or "
		  "self::clone or self::master or self::bundle]",
		  lit) < 0)
		return false;
	return first(c, path, NULL) != NULL;
}

int fence_cib_node_state(const struct fence_cib *c, const char *uname, struct fence_node_state *n)
{
	char lit[FENCE_POLICY_NAME_MAX + 2], path[XPATH_MAX];
	xmlNode *x;
	int rc;

	memset(n, 0, sizeof(*n));
	rc = literal(lit, sizeof(lit), uname);
	if (rc == 0)
		rc = xpath(path, sizeof(path), "/cib/status/node_state[@uname=%s]", lit);
	if (rc < 0)
		return rc;
	x = first(c, path, NULL);
	if (!x)
		return 0;
	n->present = true;
	copy(n->in_ccm, sizeof(n->in_ccm), attr_or(x, "in_ccm", ""));
	copy(n->crmd, sizeof(n->crmd), attr_or(x, "crmd", ""));
	copy(n->join, sizeof(n->join), attr_or(x, "join", ""));
	copy(n->expected, sizeof(n->expected), attr_or(x, "expected", ""));
	return 0;
}

bool fence_cib_has_node(const struct fence_cib *c, const char *uname)
{
	char lit[FENCE_POLICY_NAME_MAX + 2], path[XPATH_MAX];

	if (literal(lit, sizeof(lit), uname) < 0 ||
	    xpath(path, sizeof(path), "/cib/configuration/nodes/node[@uname=%s]", lit) < 0)
		return false;
	return first(c, path, NULL) != NULL;
}

int fence_cib_other_node(const struct fence_cib *c, const char *me, char *out, size_t len)
{
	xmlXPathObjectPtr r;
	int i, n, found = 0;

	if (!c->xml)
		return -ENOENT;
	r = xpath_search(c->xml, "/cib/configuration/nodes/node[not(@type='ping') and "
				 "not(@type='remote')]");
	n = numXpathResults(r);
	for (i = 0; i < n; i++) {
		const char *u = attr_or(getXpathResult(r, i), "uname", NULL);

		if (!u || !strcasecmp(u, me))
			continue;
		if (!found++)
			copy(out, len, u);
	}
	freeXpathObject(r);
	return found == 1 ? 0 : found ? -ENOTUNIQ : -ENOENT;
}

/* Only element children count (comments and text do not). */
static xmlNode *next_element(xmlNode *x)
{
	while (x && x->type != XML_ELEMENT_NODE)
		x = x->next;
	return x;
}

/* The rule of a fence constraint: role, -INFINITY, "#uname ne" terms. */
static void parse_rule(xmlNode *rule, struct fence_constraint *fc)
{
	const char *op = attr_or(rule, "boolean-op", "and");
	unsigned int n = 0;
	xmlNode *e;

	copy(fc->role, sizeof(fc->role), attr_or(rule, "role", ""));
	fc->forbids = !strcasecmp(attr_or(rule, "score", ""), "-INFINITY");
	for (e = next_element(rule->children); e; e = next_element(e->next)) {
		if (strcmp((const char *)e->name, "expression") ||
		    strcmp(attr_or(e, "attribute", ""), "#uname") ||
		    strcmp(attr_or(e, "operation", ""), "ne") ||
		    strcmp(attr_or(e, "type", "string"), "string") ||
		    n >= FENCE_POLICY_MAX_NODES) {
			fc->forbids = false;
			continue;
		}
		copy(fc->allowed[n++], sizeof(fc->allowed[0]), attr_or(e, "value", ""));
	}
	fc->n_allowed = n;
	if (n > 1 && strcasecmp(op, "and"))
		fc->forbids = false; /* "ne A or ne B" forbids nothing */
}

static void parse_constraint(xmlNode *x, struct fence_constraint *fc)
{
	xmlNode *rule = next_element(x->children);

	memset(fc, 0, sizeof(*fc));
	copy(fc->rsc, sizeof(fc->rsc), attr_or(x, "rsc", ""));
	if (!rule || strcmp((const char *)rule->name, "rule") || next_element(rule->next) ||
	    crm_element_value(x, "node") || crm_element_value(x, "rsc-pattern"))
		return; /* not the shape we place: forbids stays false */
	parse_rule(rule, fc);
}

int fence_cib_get(const struct fence_cib *c, const char *id, struct fence_constraint *out)
{
	char lit[FENCE_POLICY_NAME_MAX + 2], path[XPATH_MAX];
	xmlNode *x;
	int rc;

	rc = literal(lit, sizeof(lit), id);
	if (rc == 0)
		rc = xpath(path, sizeof(path),
			   "/cib/configuration/constraints/rsc_location[@id=%s]", lit);
	if (rc < 0)
		return rc;
	x = first(c, path, NULL);
	if (!x)
		return -ENOENT;
	parse_constraint(x, out);
	return 0;
}

int fence_cib_each(const struct fence_cib *c, const char *prefix,
		   int (*fn)(const char *id, const struct fence_constraint *fc, void *arg),
		   void *arg)
{
	char lit[FENCE_POLICY_NAME_MAX + 2], path[XPATH_MAX];
	struct fence_constraint *fc;
	xmlXPathObjectPtr r;
	int rc, i, n;

	rc = literal(lit, sizeof(lit), prefix);
	if (rc == 0)
		rc = xpath(path, sizeof(path),
			   "/cib/configuration/constraints/rsc_location[starts-with(@id,%s)]", lit);
	if (rc < 0 || !c->xml)
		return rc;
	fc = malloc(sizeof(*fc));
	if (!fc)
		return -ENOMEM;
	r = xpath_search(c->xml, path);
	n = numXpathResults(r);
	for (i = 0; i < n && rc == 0; i++) {
		xmlNode *x = getXpathResult(r, i);

		if (!x)
			continue;
		parse_constraint(x, fc);
		rc = fn(attr_or(x, "id", ""), fc, arg);
	}
	freeXpathObject(r);
	free(fc);
	return rc;
}

int fence_cib_create(struct fence_cib *c, const char *id, const struct fence_constraint *fc)
{
	char sub[2 * FENCE_POLICY_NAME_MAX + 64];
	xmlNode *loc, *rule, *e;
	unsigned int i;
	int rc;

	loc = create_xml_node(NULL, "rsc_location");
	if (!loc)
		return -ENOMEM;
	crm_xml_add(loc, "id", id);
	crm_xml_add(loc, "rsc", fc->rsc);
	rule = create_xml_node(loc, "rule");
	snprintf(sub, sizeof(sub), "%s-rule", id);
	crm_xml_add(rule, "id", sub);
	crm_xml_add(rule, "role", fc->role);
	crm_xml_add(rule, "score", "-INFINITY");
	for (i = 0; i < fc->n_allowed; i++) {
		if (fence_policy_expr_id(id, fc->allowed[i], sub, sizeof(sub)) < 0) {
			free_xml(loc);
			snprintf(c->err, sizeof(c->err), "node name %s: too long for an id",
				 fc->allowed[i]);
			return -ENAMETOOLONG;
		}
		e = create_xml_node(rule, "expression");
		crm_xml_add(e, "id", sub);
		crm_xml_add(e, "attribute", "#uname");
		crm_xml_add(e, "operation", "ne");
		crm_xml_add(e, "value", fc->allowed[i]);
	}
	rc = c->cib->cmds->create(c->cib, "constraints", loc, cib_sync_call);
	free_xml(loc);
	if (rc == -EEXIST || rc == -ENOTUNIQ) {
		snprintf(c->err, sizeof(c->err), "an element with id %s already exists", id);
		return -EEXIST;
	}
	return rc == pcmk_ok ? 0 : fail(c, rc, "cannot create the constraint");
}

int fence_cib_remove(struct fence_cib *c, const char *id, const struct fence_constraint *expect)
{
	char lit[FENCE_POLICY_NAME_MAX + 2], path[XPATH_MAX];
	size_t len;
	unsigned int i;
	int rc;

	rc = literal(lit, sizeof(lit), id);
	if (rc == 0)
		rc = xpath(path, sizeof(path),
			   "/cib/configuration/constraints/rsc_location[@id=%s]", lit);
	for (i = 0; rc == 0 && expect && i < expect->n_allowed; i++) {
		len = strlen(path);
		rc = literal(lit, sizeof(lit), expect->allowed[i]);
		if (rc == 0)
			rc = xpath(path + len, sizeof(path) - len,
				   "[rule/expression[@attribute='#uname' and @operation='ne' and "
				   "@value=%s]]",
				   lit);
	}
	if (rc == 0 && expect) {
		len = strlen(path);
		rc = xpath(path + len, sizeof(path) - len, "[count(rule/expression)=%u]",
			   expect->n_allowed);
	}
	if (rc < 0)
		return rc;
	rc = c->cib->cmds->remove(c->cib, path, NULL, cib_xpath | cib_sync_call);
	if (rc == -ENXIO) {
		snprintf(c->err, sizeof(c->err), "no constraint %s%s", id,
			 expect ? " as it was read" : "");
		return -ENOENT;
	}
	return rc == pcmk_ok ? 0 : fail(c, rc, "cannot remove the constraint");
}

/* ---------------------------------------------------------------- controller */

struct ping_wait {
	bool done;
	int rc;
	char from[FENCE_POLICY_NAME_MAX];
};

static void ping_cb(pcmk_ipc_api_t *api, enum pcmk_ipc_event type, crm_exit_t status,
		    void *event_data, void *user_data)
{
	const pcmk_controld_api_reply_t *reply = event_data;
	struct ping_wait *w = user_data;

	if (w->done)
		return; /* our own pcmk_disconnect_ipc() reports a disconnect too */
	if (type == pcmk_ipc_event_disconnect) {
		w->done = true;
		w->rc = -ENOTCONN;
		return;
	}
	if (type != pcmk_ipc_event_reply)
		return;
	w->done = true;
	if (status != CRM_EX_OK || !reply || reply->reply_type != pcmk_controld_reply_ping) {
		w->rc = -EPROTO;
		return;
	}
	/* crmadmin -S says "ok" for a controller that works */
	w->rc = reply->data.ping.result && !strcmp(reply->data.ping.result, "ok") ? 0 : -EAGAIN;
	copy(w->from, sizeof(w->from), reply->host_from);
}

int fence_cib_ping(struct fence_cib *c, const char *node, int timeout_ms, char *from, size_t len)
{
	struct ping_wait w = {.rc = -ETIMEDOUT};
	pcmk_ipc_api_t *api = NULL;
	struct timespec t0, t;
	int rc, left;

	if (fence_cib_offline(c))
		return -EOPNOTSUPP;
	rc = pcmk_new_ipc_api(&api, pcmk_ipc_controld);
	if (rc != pcmk_rc_ok)
		return -ENOMEM;
	pcmk_register_ipc_callback(api, ping_cb, &w);
	if (pcmk_connect_ipc(api, pcmk_ipc_dispatch_poll) != pcmk_rc_ok) {
		pcmk_free_ipc_api(api);
		return -ENOTCONN;
	}
	rc = pcmk_controld_api_ping(api, node);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	left = timeout_ms;
	while (rc == pcmk_rc_ok && !w.done && left > 0) {
		rc = pcmk_poll_ipc(api, left);
		if (rc == pcmk_rc_ok)
			pcmk_dispatch_ipc(api);
		else if (rc == EAGAIN)
			break; /* timed out */
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = timeout_ms - (int)((t.tv_sec - t0.tv_sec) * 1000 +
					  (t.tv_nsec - t0.tv_nsec) / 1000000);
	}
	pcmk_disconnect_ipc(api);
	pcmk_free_ipc_api(api);
	if (w.done && w.rc == 0)
		copy(from, len, w.from);
	return w.done ? w.rc : -ETIMEDOUT;
}
