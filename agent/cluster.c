/*
 * cluster: what the agent asks of Pacemaker, through its command-line
 * tools (ref/ha-stack-apis.md §3.2: there is no stable C API for node
 * attributes). The promotion score goes through `crm_attribute
 * --promotion -l reboot`; the location constraints that could forbid a
 * promotion come from `cibadmin --query --scope configuration`, parsed
 * with libxml2 and judged by agent_policy_location_blocks(). Without a
 * cluster both tools exit 102: that is a warning, never a failure, so
 * that ocf-tester and crm_resource --force-* work on a lone node.
 */
#include "config.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"

#define CRM_EX_DISCONNECT 102 /* "Could not connect to the CIB" */
#define CRM_EX_NOSUCH     105
#define CLUSTER_TOOL_MS   30000
#define CLUSTER_MAX_RULES 16
#define CLUSTER_MAX_EXPRS 16

static long tool_ms(const struct agent *a)
{
	long left = agent_ms_left(a);

	return left < 2000 ? 2000 : left > CLUSTER_TOOL_MS ? CLUSTER_TOOL_MS : left;
}

void cluster_publish_score(const struct agent *a, const struct agent_policy_score *s)
{
	enum agent_level lvl = !strcmp(a->action, "monitor") ? AGENT_DEBUG : AGENT_INFO;
	char promo[300], value[16];
	char *argv[8];
	int n = 0, rc;

	if (s->op == AGENT_POLICY_SCORE_KEEP) {
		agent_log(AGENT_DEBUG, "promotion score left as it is: %s", s->why);
		return;
	}
	/* --promotion alone names OCF_RESOURCE_INSTANCE, as Pacemaker expects */
	if (getenv("OCF_RESOURCE_INSTANCE"))
		snprintf(promo, sizeof(promo), "--promotion");
	else
		snprintf(promo, sizeof(promo), "--promotion=%s", a->instance);
	argv[n++] = (char *)"crm_attribute";
	argv[n++] = promo;
	argv[n++] = (char *)"-l";
	argv[n++] = (char *)"reboot";
	if (s->op == AGENT_POLICY_SCORE_SET) {
		snprintf(value, sizeof(value), "%d", s->value);
		argv[n++] = (char *)"-v";
		argv[n++] = value;
	} else {
		argv[n++] = (char *)"-D";
	}
	argv[n] = NULL;
	rc = spawn_run(argv, NULL, tool_ms(a), AGENT_DEBUG, NULL);
	if (rc == 0 || (rc == CRM_EX_NOSUCH && s->op == AGENT_POLICY_SCORE_DELETE)) {
		if (s->op == AGENT_POLICY_SCORE_SET)
			agent_log(lvl, "promotion score %d: %s", s->value, s->why);
		else
			agent_log(lvl, "promotion score removed: %s", s->why);
	} else if (rc == CRM_EX_DISCONNECT) {
		if (s->op == AGENT_POLICY_SCORE_SET)
			agent_log(AGENT_WARN, "no cluster running (crm_attribute exit 102): "
					      "promotion score %s not published (%s)",
				  value, s->why);
		else
			agent_log(AGENT_WARN, "no cluster running (crm_attribute exit 102): "
					      "promotion score not removed (%s)",
				  s->why);
	} else {
		agent_log(AGENT_WARN, "crm_attribute %s %s failed (%s %d): promotion score not %s",
			  promo, s->op == AGENT_POLICY_SCORE_SET ? value : "-D",
			  rc < 0 ? "error" : "exit", rc,
			  s->op == AGENT_POLICY_SCORE_SET ? "published" : "removed");
	}
}

/* ---------------------------------------------------------------- constraints */

static const char *attr(xmlNode *n, const char *name)
{
	xmlAttr *at;

	for (at = n->properties; at; at = at->next)
		if (at->children && !strcmp((const char *)at->name, name))
			return (const char *)at->children->content;
	return NULL;
}

static bool named(xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

static xmlNode *child(xmlNode *n, const char *name)
{
	for (n = n ? n->children : NULL; n; n = n->next)
		if (named(n, name))
			return n;
	return NULL;
}

/* The primitive with this id, depth first. */
static xmlNode *find_primitive(xmlNode *n, const char *id)
{
	xmlNode *c, *hit;

	if (named(n, "primitive") && attr(n, "id") && !strcmp(attr(n, "id"), id))
		return n;
	for (c = n->children; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE && (hit = find_primitive(c, id)))
			return hit;
	return NULL;
}

/* The id of the clone (or deprecated master) that holds the primitive. */
static const char *clone_of(xmlNode *root, const char *prim)
{
	xmlNode *n = find_primitive(root, prim);

	for (n = n ? n->parent : NULL; n && n->type == XML_ELEMENT_NODE; n = n->parent)
		if (named(n, "clone") || named(n, "master"))
			return attr(n, "id");
	return NULL;
}

struct loc_buf {
	struct agent_policy_location l;
	struct agent_policy_rule rules[CLUSTER_MAX_RULES];
	struct agent_policy_expr exprs[CLUSTER_MAX_RULES][CLUSTER_MAX_EXPRS];
};

/* An rsc_location element into the policy's view of it. */
static void read_location(xmlNode *x, struct loc_buf *b)
{
	xmlNode *r, *e;
	unsigned int nr = 0;

	memset(b, 0, sizeof(*b));
	b->l.id = attr(x, "id");
	b->l.rsc = attr(x, "rsc");
	b->l.role = attr(x, "role");
	b->l.score = attr(x, "score");
	b->l.node = attr(x, "node");
	for (r = x->children; r && nr < CLUSTER_MAX_RULES; r = r->next) {
		struct agent_policy_rule *rule = &b->rules[nr];
		const char *op;

		if (!named(r, "rule"))
			continue;
		rule->role = attr(r, "role");
		rule->score = attr(r, "score");
		op = attr(r, "boolean-op");
		rule->any = op && !strcmp(op, "or");
		rule->exprs = b->exprs[nr];
		for (e = r->children; e; e = e->next) {
			const char *a = attr(e, "attribute"), *o = attr(e, "operation");

			if (e->type != XML_ELEMENT_NODE)
				continue;
			if (!named(e, "expression") || !a || strcmp(a, "#uname") || !o ||
			    (strcmp(o, "eq") && strcmp(o, "ne")) || !attr(e, "value") ||
			    rule->n_exprs == CLUSTER_MAX_EXPRS) {
				rule->unknown = true; /* dates, other attributes, nested rules */
				continue;
			}
			b->exprs[nr][rule->n_exprs].ne = !strcmp(o, "ne");
			b->exprs[nr][rule->n_exprs].value = attr(e, "value");
			rule->n_exprs++;
		}
		nr++;
	}
	b->l.rules = b->rules;
	b->l.n_rules = nr;
}

static enum agent_policy_block judge(const struct agent *a, xmlNode *root, char *id,
				     size_t idlen)
{
	enum agent_policy_block kind = AGENT_POLICY_BLOCK_NONE;
	char prim[256];
	const char *clone;
	bool uncertain = false;
	struct loc_buf *b;
	xmlNode *cons, *x;

	/* an anonymous clone's instance has no :N, a unique one has */
	snprintf(prim, sizeof(prim), "%.*s", (int)strcspn(a->instance, ":"), a->instance);
	clone = clone_of(root, prim);
	b = malloc(sizeof(*b));
	if (!b)
		return AGENT_POLICY_BLOCK_NONE;
	/* <configuration> (this query), <cib> or <constraints> */
	cons = named(root, "constraints") ? root : child(root, "constraints");
	if (!cons && named(root, "cib"))
		cons = child(child(root, "configuration"), "constraints");
	for (x = cons ? cons->children : NULL; x; x = x->next) {
		if (!named(x, "rsc_location"))
			continue;
		read_location(x, b);
		kind = agent_policy_location_blocks(&b->l, a->uname, prim, clone, &uncertain);
		if (kind != AGENT_POLICY_BLOCK_NONE) {
			snprintf(id, idlen, "%s", b->l.id);
			break;
		}
	}
	free(b);
	if (uncertain && kind == AGENT_POLICY_BLOCK_NONE)
		agent_log(AGENT_INFO, "a -INFINITY location constraint on %s has a rule the agent "
				      "does not evaluate (a ban with a lifetime?); not counted",
			  clone ? clone : prim);
	return kind;
}

enum agent_policy_block cluster_promote_blocker(const struct agent *a, char *id, size_t idlen)
{
	char *argv[] = {(char *)"cibadmin", (char *)"--query", (char *)"--scope",
			(char *)"configuration", NULL};
	enum agent_policy_block kind;
	char *out = NULL;
	xmlDoc *doc;
	int rc;

	rc = spawn_run(argv, NULL, tool_ms(a), AGENT_DEBUG, &out);
	if (rc == CRM_EX_DISCONNECT) {
		agent_log(AGENT_WARN, "no cluster running (cibadmin exit 102): location "
				      "constraints not checked");
		free(out);
		return AGENT_POLICY_BLOCK_NONE;
	}
	if (rc != 0 || !out) {
		agent_log(AGENT_WARN, "cibadmin --query failed (%s %d): location constraints not "
				      "checked",
			  rc < 0 ? "error" : "exit", rc);
		free(out);
		return AGENT_POLICY_BLOCK_NONE;
	}
	doc = xmlReadMemory(out, (int)strlen(out), "cib.xml", NULL,
			    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	free(out);
	if (!doc || !xmlDocGetRootElement(doc)) {
		agent_log(AGENT_WARN, "cibadmin --query: not XML; location constraints not checked");
		xmlFreeDoc(doc);
		return AGENT_POLICY_BLOCK_NONE;
	}
	kind = judge(a, xmlDocGetRootElement(doc), id, idlen);
	xmlFreeDoc(doc);
	return kind;
}

/* ---------------------------------------------------------------- unfence */

#define UNFENCE_MAX_ARGS 16

/* tandem-unfence-peer next to the tandemd the agent starts, else in
 * configure's sbindir. */
static int unfence_path(const struct agent *a, char *path, size_t len)
{
	const char *slash = strrchr(a->tandemd, '/');

	snprintf(path, len, "%.*s/tandem-unfence-peer", slash ? (int)(slash - a->tandemd) : 0,
		 a->tandemd);
	if (access(path, X_OK) == 0)
		return 0;
	snprintf(path, len, "%s/tandem-unfence-peer", TANDEM_SBINDIR);
	return access(path, X_OK) == 0 ? 0 : -errno;
}

void cluster_unfence(const struct agent *a)
{
	char path[4096], e1[300], e2[300], e3[4200], e4[4200], e5[4200], e6[300], args[1024];
	char *argv[UNFENCE_MAX_ARGS + 2] = {path}, *env[7] = {e1, e2, e3, e4, e5, e6, NULL};
	char *tok, *save;
	int rc, n = 1;

	if ((rc = unfence_path(a, path, sizeof(path))) < 0) {
		agent_log(AGENT_WARN, "unfence_if_all_uptodate: %s: %s; install the fence handlers",
			  path, strerror(-rc));
		return;
	}
	snprintf(args, sizeof(args), "%s", a->unfence_extra_args);
	for (tok = strtok_r(args, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (n > UNFENCE_MAX_ARGS) {
			agent_log(AGENT_WARN, "unfence_extra_args: more than %d words; the rest is "
					      "ignored",
				  UNFENCE_MAX_ARGS);
			break;
		}
		argv[n++] = tok;
	}
	argv[n] = NULL;
	snprintf(e1, sizeof(e1), "DRBD_RESOURCE=%s", a->res);
	snprintf(e2, sizeof(e2), "TANDEM_RESOURCE=%s", a->res);
	snprintf(e3, sizeof(e3), "DRBD_CONF=%s", a->config);
	snprintf(e4, sizeof(e4), "TANDEM_CONF=%s", a->config);
	snprintf(e5, sizeof(e5), "TANDEM_RUN_DIR=%s", a->run_dir);
	if (a->uname[0]) /* Pacemaker's name of this node */
		snprintf(e6, sizeof(e6), "TANDEM_FENCE_NODE=%s", a->uname);
	else
		env[5] = NULL;
	rc = spawn_run(argv, env, tool_ms(a), AGENT_INFO, NULL);
	agent_log(rc == 0 ? AGENT_DEBUG : AGENT_INFO, "%s: exit %d", path, rc);
}
