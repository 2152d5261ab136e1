/*
 * The OCF resource agent ocf:tandem:tandem (doc/ocf-agent.md): reads the
 * OCF environment (OCF_RESKEY_* parameters, OCF_RESKEY_CRM_meta_* meta
 * attributes, ref/ha-stack-apis.md §1.3), logs as ocf_log does, and
 * dispatches the action named by its one argument. validate-all lives
 * here; the other actions are in actions.c.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "conf.h"
#include "diag.h"

static char log_tag[300] = "tandem";
static bool log_debug;

/* ---------------------------------------------------------------- logging */

void agent_log(enum agent_level lvl, const char *fmt, ...)
{
	static const char *const names[] = {"DEBUG", "INFO", "WARNING", "ERROR", "CRIT"};
	char msg[2048];
	va_list ap;

	if (lvl == AGENT_DEBUG && !log_debug)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s[%ld]: %s: %s\n", log_tag, (long)getpid(), names[lvl], msg);
}

void agent_fail(const char *fmt, ...)
{
	const char *prefix = getenv("OCF_EXIT_REASON_PREFIX");
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	agent_log(AGENT_ERR, "%s", msg);
	fprintf(stderr, "%s%s\n", prefix && *prefix ? prefix : "ocf-exit-reason:", msg);
}

/* ---------------------------------------------------------------- time */

long agent_ms_spent(const struct agent *a)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - a->t0.tv_sec) * 1000 + (t.tv_nsec - a->t0.tv_nsec) / 1000000;
}

long agent_ms_left(const struct agent *a)
{
	long left = a->budget_ms - agent_ms_spent(a);

	return left > 0 ? left : 0;
}

void agent_sleep_ms(const struct agent *a, long ms)
{
	struct timespec ts;

	if (ms > agent_ms_left(a))
		ms = agent_ms_left(a);
	if (ms <= 0)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The advertised timeouts of the meta-data, for runs by hand. */
static long default_timeout_ms(const char *action)
{
	static const struct {
		const char *action;
		long ms;
	} t[] = {
		{"start", 240000},  {"stop", 100000},  {"promote", 90000},
		{"demote", 90000},  {"notify", 90000}, {"validate-all", 30000},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(action, t[i].action))
			return t[i].ms;
	return 20000;
}

/* Pacemaker's timeout less a margin for the agent's own exit. */
static long budget_ms(const char *action)
{
	const char *s = getenv("OCF_RESKEY_CRM_meta_timeout");
	long t = s ? strtol(s, NULL, 10) : 0, margin;

	if (t <= 0)
		t = default_timeout_ms(action);
	margin = t / 10;
	if (margin < 1000)
		margin = 1000;
	if (margin > 10000)
		margin = 10000;
	return t - margin > 500 ? t - margin : 500;
}

/* ---------------------------------------------------------------- environment */

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static const char *param(const char *name)
{
	char key[128];

	snprintf(key, sizeof(key), "OCF_RESKEY_%s", name);
	return env(key);
}

static const char *meta(const char *name)
{
	char key[128];

	snprintf(key, sizeof(key), "OCF_RESKEY_CRM_meta_%s", name);
	return env(key);
}

/*
 * ocf:linbit:drbd's parameters that tandem knows under another name: an
 * operator who replaces the agent keeps them working, with a warning
 * that names the new one (doc/ocf-agent.md, "Coming from ocf:linbit:drbd").
 */
static const struct {
	const char *drbd;
	const char *tandem;
} renamed[] = {
	{"drbd_resource", "resource"},
	{"drbdconf", "config"},
	{"adjust_master_score", "promotion_scores"},
	{"remove_master_score_if_peer_primary", "remove_promotion_score_if_peer_primary"},
};

/* drbd.ocf's parameters that mean nothing for tandem: warned about, ignored. */
static const struct {
	const char *name;
	const char *why;
} ignored[] = {
	{"require_drbd_module_version_ge", "tandem has no kernel module"},
	{"require_drbd_module_version_lt", "tandem has no kernel module"},
	{"connect_only_after_promote", "tandem connects at start, as drbd.ocf does by default"},
};

/* A parameter by its tandem name, or its drbd.ocf name (with a warning). */
static const char *param_or_renamed(const char *name)
{
	size_t i;

	if (param(name))
		return param(name);
	for (i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++)
		if (!strcmp(renamed[i].tandem, name) && param(renamed[i].drbd)) {
			agent_log(AGENT_WARN, "parameter %s is drbd.ocf's name: rename it to %s",
				  renamed[i].drbd, name);
			return param(renamed[i].drbd);
		}
	return NULL;
}

/* Actions for which bad promotion_scores are fatal; the others fall back
 * to the defaults with a warning, as drbd.ocf does, because a failed
 * monitor, notify or demote would make Pacemaker recover a resource that
 * is working. */
static bool scores_fatal(const char *action)
{
	return !strcmp(action, "start") || !strcmp(action, "validate-all") ||
	       !strcmp(action, "reload-agent");
}

/* The parameters into a; problems are logged and give an OCF exit code. */
static int read_params(struct agent *a)
{
	static const struct {
		const char *name;
		size_t off;
	} bools[] = {
		{"stop_outdates_secondary", offsetof(struct agent, stop_outdates_secondary)},
		{"unfence_if_all_uptodate", offsetof(struct agent, unfence)},
		{"fail_promote_early_if_peer_primary", offsetof(struct agent, fail_promote_early)},
		{"ignore_missing_notifications",
		 offsetof(struct agent, ignore_missing_notifications)},
	};
	const enum agent_policy_ocf bad = AGENT_POLICY_OCF_ERR_CONFIGURED;
	int rc = AGENT_POLICY_OCF_SUCCESS;
	struct sockaddr_un sa;
	const char *rm;
	char err[256], scratch[8];
	long secs;
	size_t i;

	a->res = param_or_renamed("resource");
	a->config = param_or_renamed("config") ? param_or_renamed("config") : AGENT_DEFAULT_CONFIG;
	a->run_dir = param("run_dir") ? param("run_dir") : AGENT_DEFAULT_RUN_DIR;
	a->node = param("node");
	a->tandemd = param("tandemd") ? param("tandemd") : TANDEM_SBINDIR "/tandemd";
	a->wfc = getenv("OCF_RESKEY_wfc_timeout"); /* "" means something here */
	if (!a->wfc)
		a->wfc = AGENT_DEFAULT_WFC;
	a->scores_text = param_or_renamed("promotion_scores");
	a->unfence_extra_args = getenv("OCF_RESKEY_unfence_extra_args"); /* "": none */
	if (!a->unfence_extra_args)
		a->unfence_extra_args = AGENT_DEFAULT_UNFENCE_ARGS;
	a->instance = env("OCF_RESOURCE_INSTANCE") ? env("OCF_RESOURCE_INSTANCE") : a->res;
	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (param(ignored[i].name))
			agent_log(AGENT_WARN, "parameter %s of drbd.ocf is ignored: %s; remove it",
				  ignored[i].name, ignored[i].why);
	if (!a->res) {
		agent_fail("the parameter 'resource' is required: the name of the tandem resource");
		return bad;
	}
	if (!agent_policy_valid_name(a->res)) {
		agent_fail("resource '%s': a resource name has only [-%%+./0-9:=@A-Z_a-z]", a->res);
		return bad;
	}
	if (agent_policy_parse_scores(a->scores_text, &a->scores, err, sizeof(err)) < 0) {
		agent_policy_parse_scores(NULL, &a->scores, scratch, sizeof(scratch));
		if (scores_fatal(a->action)) {
			agent_fail("promotion_scores %s", err);
			rc = bad;
		} else {
			agent_log(AGENT_WARN, "promotion_scores %s; using the default '%s' (fix the "
					      "parameter: start and validate-all fail on it)",
				  err, AGENT_POLICY_SCORES_DEFAULT);
		}
	}
	for (i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
		bool *b = (bool *)((char *)a + bools[i].off);

		if (agent_policy_parse_bool(param(bools[i].name), false, b) < 0) {
			agent_fail("%s='%s' is not a boolean (true or false)", bools[i].name,
				   param(bools[i].name));
			rc = bad;
		}
	}
	/* drbd.ocf also takes "unexpected" here: tandem removes the score
	 * whenever the peer is Primary, which covers it */
	rm = param_or_renamed("remove_promotion_score_if_peer_primary");
	if (rm && !strcasecmp(rm, "unexpected")) {
		agent_log(AGENT_WARN, "remove_promotion_score_if_peer_primary=unexpected is taken "
				      "as true: the score is removed whenever the peer is Primary");
		a->remove_if_peer_primary = true;
	} else if (agent_policy_parse_bool(rm, false, &a->remove_if_peer_primary) < 0) {
		agent_fail("remove_promotion_score_if_peer_primary='%s' is not a boolean (true or "
			   "false)",
			   rm);
		rc = bad;
	}
	if (agent_policy_wfc(a->wfc, "default", 0, 0, 0, &secs) < 0) {
		agent_fail("wfc_timeout='%s': expected config, none or a number of seconds", a->wfc);
		rc = bad;
	}
	if (a->run_dir[0] != '/' || a->config[0] != '/' || a->tandemd[0] != '/') {
		agent_fail("run_dir, config and tandemd must be absolute paths");
		rc = bad;
	}
	if (strlen(a->run_dir) + sizeof("/tandemd.sock") > sizeof(sa.sun_path)) {
		agent_fail("run_dir '%s' is too long for a Unix socket path: use a shorter one",
			   a->run_dir);
		rc = bad;
	}
	return rc;
}

static void read_node_name(struct agent *a)
{
	struct utsname u;

	if (meta("on_node"))
		snprintf(a->uname, sizeof(a->uname), "%s", meta("on_node"));
	else if (uname(&u) == 0)
		snprintf(a->uname, sizeof(a->uname), "%s", u.nodename);
}

/* ---------------------------------------------------------------- configuration */

int agent_conf_load(const struct agent *a, enum agent_level lvl, struct conf **out,
		    const struct conf_res **cr)
{
	struct conf_load_opts opts = {.hostname = a->node};
	struct diag *d;
	unsigned int i;
	int rc;

	*out = NULL;
	*cr = NULL;
	if (access(a->config, R_OK) < 0) {
		agent_log(lvl, "%s: %s", a->config, strerror(errno));
		return AGENT_POLICY_OCF_ERR_INSTALLED;
	}
	if (diag_new(&d) < 0)
		return AGENT_POLICY_OCF_ERR_GENERIC;
	rc = conf_load(a->config, &opts, d, out);
	for (i = 0; i < diag_total(d); i++) {
		enum diag_sev sev;
		struct diag_loc loc;
		const char *kw, *msg;

		if (diag_get(d, i, &sev, &loc, &kw, &msg))
			agent_log(sev == DIAG_ERR ? lvl : AGENT_WARN, "%s:%d: %s%s%s",
				  loc.file ? loc.file : a->config, loc.line, kw ? kw : "",
				  kw ? ": " : "", msg);
	}
	diag_free(d);
	if (rc < 0) {
		agent_log(lvl, "%s: the configuration is invalid (%s)", a->config,
			  rc == -EINVAL ? "see above" : strerror(-rc));
		return rc == -ENOMEM ? AGENT_POLICY_OCF_ERR_GENERIC : AGENT_POLICY_OCF_ERR_CONFIGURED;
	}
	*cr = conf_find_res(*out, a->res);
	if (!*cr) {
		agent_log(lvl, "resource %s is not defined in %s", a->res, a->config);
		return AGENT_POLICY_OCF_ERR_CONFIGURED;
	}
	if (!(*cr)->me) {
		agent_log(AGENT_WARN, "resource %s has no host section for this node ('%s') in %s; "
				      "check the 'on' names (or the parameter node)",
			  a->res, conf_hostname(*out), a->config);
		*cr = NULL;
		return AGENT_POLICY_OCF_ERR_INSTALLED;
	}
	return AGENT_POLICY_OCF_SUCCESS;
}

/* ---------------------------------------------------------------- validate-all */

static int validate_all(struct agent *a, int rc)
{
	const struct agent_policy_meta m = {
		.promotable = meta("promotable"),
		.notify = meta("notify"),
		.clone_max = meta("clone_max"),
		.clone_node_max = meta("clone_node_max"),
		.promoted_max = meta("promoted_max") ? meta("promoted_max") : meta("master_max"),
		.promoted_node_max = meta("promoted_node_max") ? meta("promoted_node_max")
							       : meta("master_node_max"),
	};
	struct agent_policy_finding f[AGENT_POLICY_MAX_FINDINGS];
	int level = env("OCF_CHECK_LEVEL") ? atoi(env("OCF_CHECK_LEVEL")) : 0, crc, mrc;
	const struct conf_res *cr = NULL;
	struct conf *c = NULL;
	unsigned int i, n;
	bool two = false;

	crc = agent_conf_load(a, AGENT_ERR, &c, &cr);
	if (crc == AGENT_POLICY_OCF_ERR_INSTALLED && c) {
		/* the resource has no host section for this node */
		cr = conf_find_res(c, a->res);
		if (level < 10) {
			agent_log(AGENT_INFO, "the host section is checked at OCF_CHECK_LEVEL=10");
			crc = AGENT_POLICY_OCF_SUCCESS;
		}
	}
	if (crc != AGENT_POLICY_OCF_SUCCESS) {
		agent_fail("%s: %s (see above)", a->config,
			   crc == AGENT_POLICY_OCF_ERR_INSTALLED
				   ? "missing, or no host section for this node"
				   : "invalid, or the resource is not in it");
		if (rc == AGENT_POLICY_OCF_SUCCESS)
			rc = crc;
	}
	if (cr)
		two = conf_res_bool(c, cr, CONF_SECT_NET, "allow-two-primaries");
	conf_free(c);
	mrc = agent_policy_check_meta(&m, two, a->ignore_missing_notifications, a->res, f,
				      AGENT_POLICY_MAX_FINDINGS, &n);
	for (i = 0; i < n; i++) {
		if (f[i].rc == AGENT_POLICY_OCF_SUCCESS)
			agent_log(AGENT_INFO, "%s", f[i].text);
		else
			agent_fail("%s", f[i].text);
	}
	if (rc == AGENT_POLICY_OCF_SUCCESS)
		rc = mrc;
	if (level >= 10 && access(a->tandemd, X_OK) < 0) {
		agent_fail("%s: %s", a->tandemd, strerror(errno));
		if (rc == AGENT_POLICY_OCF_SUCCESS)
			rc = AGENT_POLICY_OCF_ERR_INSTALLED;
	}
	if (rc == AGENT_POLICY_OCF_SUCCESS)
		agent_log(AGENT_INFO, "%s: the parameters, the clone and %s are valid", a->res,
			  a->config);
	return rc;
}

/* ---------------------------------------------------------------- dispatch */

static void usage(FILE *f)
{
	fprintf(f, "usage: tandem {start|stop|monitor|promote|demote|notify|reload-agent|"
		   "validate-all|meta-data}\n\n"
		   "The OCF resource agent ocf:tandem:tandem; it expects the OCF environment\n"
		   "(OCF_RESKEY_resource=...). See ocf_tandem_tandem(7).\n");
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(struct agent *a);
	} actions[] = {
		{"start", action_start},     {"stop", action_stop},
		{"monitor", action_monitor}, {"promote", action_promote},
		{"demote", action_demote},   {"notify", action_notify},
		{"reload-agent", action_reload_agent},
	};
	struct agent a = {0};
	const char *d = env("HA_debug");
	int rc;
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return AGENT_POLICY_OCF_ERR_ARGS;
	}
	a.action = argv[1];
	if (!strcmp(a.action, "meta-data")) {
		meta_data_print();
		return AGENT_POLICY_OCF_SUCCESS;
	}
	if (!strcmp(a.action, "usage") || !strcmp(a.action, "help")) {
		usage(stdout);
		return AGENT_POLICY_OCF_SUCCESS;
	}
	signal(SIGPIPE, SIG_IGN);
	clock_gettime(CLOCK_MONOTONIC, &a.t0);
	log_debug = (d && strcmp(d, "0")) || env("OCF_TRACE_RA");
	/* the tag first: read_params() already logs */
	if (env("OCF_RESOURCE_INSTANCE") || env("OCF_RESKEY_resource"))
		snprintf(log_tag, sizeof(log_tag), "tandem(%s)",
			 env("OCF_RESOURCE_INSTANCE") ? env("OCF_RESOURCE_INSTANCE")
						      : env("OCF_RESKEY_resource"));
	rc = read_params(&a);
	a.budget_ms = budget_ms(a.action);
	a.probe = !strcmp(a.action, "monitor") && meta("interval") && !strcmp(meta("interval"), "0");
	read_node_name(&a);
	if (!strcmp(a.action, "validate-all"))
		return a.res ? validate_all(&a, rc) : rc;
	for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (!strcmp(a.action, actions[i].name))
			break;
	if (i == sizeof(actions) / sizeof(actions[0])) {
		agent_log(AGENT_ERR, "action '%s' is not implemented", a.action);
		usage(stderr);
		return AGENT_POLICY_OCF_ERR_UNIMPLEMENTED;
	}
	if (!a.res)
		return rc;
	/* a stop must not fail on a bad parameter: the node would be fenced */
	if (rc != AGENT_POLICY_OCF_SUCCESS && strcmp(a.action, "stop"))
		return rc;
	agent_log(AGENT_DEBUG, "%s (budget %ld ms)", a.action, a.budget_ms);
	return actions[i].fn(&a);
}
