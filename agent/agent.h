/*
 * The OCF resource agent ocf:tandem:tandem: shared declarations of its
 * parts. main.c reads the OCF environment and dispatches, actions.c runs
 * the actions, ctl.c talks to tandemd, cluster.c to Pacemaker's tools,
 * spawn.c runs child processes, meta-data.c holds the XML, and
 * agent-policy.c decides (pure functions).
 */
#ifndef TANDEM_AGENT_H
#define TANDEM_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "agent-policy.h"
#include "arbc.h"

#ifndef TANDEM_SBINDIR
#define TANDEM_SBINDIR "/usr/sbin"
#endif

#define AGENT_DEFAULT_CONFIG  "/etc/tandem.conf"
#define AGENT_DEFAULT_RUN_DIR "/run/tandem"
/* wfc_timeout: drbd.ocf's 5 s, so that a node whose peer is down starts
 * in seconds (doc/ocf-agent.md has the numbers) */
#define AGENT_DEFAULT_WFC "5"
/* unfence_extra_args: drbd.ocf's, which tandem-unfence-peer accepts
 * (--flock-required and --unfence-only-if-owner-match are no-ops there) */
#define AGENT_DEFAULT_UNFENCE_ARGS                                                               \
	"--quiet --flock-required --flock-timeout 0 --unfence-only-if-owner-match"

/* One run of the agent: its parameters and its time budget. */
struct agent {
	const char *action;
	const char *instance; /* OCF_RESOURCE_INSTANCE, the promotion score's name */
	const char *res;      /* resource */
	const char *config;   /* config */
	const char *run_dir;  /* run_dir */
	const char *node;     /* node: tandem's host name; NULL = uname -n */
	const char *tandemd;  /* tandemd */
	const char *wfc;      /* wfc_timeout */
	const char *scores_text;
	struct agent_policy_scores scores;
	bool stop_outdates_secondary;
	bool remove_if_peer_primary;
	bool unfence;
	bool fail_promote_early; /* fail_promote_early_if_peer_primary */
	bool ignore_missing_notifications;
	const char *unfence_extra_args;
	bool probe;          /* monitor with interval 0 */
	char uname[256];     /* this node as Pacemaker names it */
	struct timespec t0;  /* when the action began */
	long budget_ms;      /* what Pacemaker's timeout leaves for the work */
};

/* Milliseconds left of the budget (never below 0). */
long agent_ms_left(const struct agent *a);
/* Milliseconds since the action began. */
long agent_ms_spent(const struct agent *a);
/* Sleep ms, but not past the budget. */
void agent_sleep_ms(const struct agent *a, long ms);

/* Logging as ocf_log does, on stderr: "tandem(r0)[pid]: INFO: ..." */
enum agent_level {
	AGENT_DEBUG,
	AGENT_INFO,
	AGENT_WARN,
	AGENT_ERR,
	AGENT_CRIT,
};
void agent_log(enum agent_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An error line plus the exit reason Pacemaker shows in crm_mon. */
void agent_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* main.c: load the configuration (its diagnostics logged at lvl); the
 * resource's section for this node in *cr. Returns an OCF exit code:
 * 5 when the file is missing or the resource has no section for this
 * node, 6 when the file is invalid or lacks the resource. */
struct conf;
struct conf_res;
int agent_conf_load(const struct agent *a, enum agent_level lvl, struct conf **out,
		    const struct conf_res **cr);

/* actions.c: each returns an OCF exit code. */
int action_start(struct agent *a);
int action_stop(struct agent *a);
int action_monitor(struct agent *a);
int action_promote(struct agent *a);
int action_demote(struct agent *a);
int action_notify(struct agent *a);
int action_reload_agent(struct agent *a);
/* What the agent needs of the resource's configuration; all false if it
 * cannot be read. */
struct res_facts {
	bool two_primaries; /* net { allow-two-primaries } */
	bool fencing;       /* disk { fencing } other than dont-care */
	bool fence_handler; /* ... and a fence-peer handler */
};
struct res_facts res_facts(const struct agent *a);

/* ctl.c: one JSON request, one response (doc/control-protocol.md). */
struct ctl_status {
	struct agent_policy_view view;
	struct agent_policy_vol *vols;
	char wfc_class[32];
	bool config_pending;   /* up, but its volumes changed in the configuration */
	char export_path[256]; /* volume 0's NBD export */
	char error[1100];      /* why presence is UNKNOWN_RES or BAD_ANSWER */
};

struct ctl_reply {
	bool ok;
	int exit; /* tandemadm's exit code of a refusal */
	int ss;   /* DRBD's state-change error, 0 = none */
	char error[512];
	char hint[512];
};

/* The resource's state; never fails: presence says what was found. */
void ctl_status(const struct agent *a, struct ctl_status *st);
void ctl_status_free(struct ctl_status *st);
/* A command on the resource (up, down, primary, secondary, connect,
 * adjust); 0 with r filled when tandemd answered, else -errno. */
int ctl_command(const struct agent *a, const char *cmd, bool force, struct ctl_reply *r);
/* Does a tandemd answer on the control socket? */
bool ctl_daemon_alive(const struct agent *a);
/* tandem-arbiterd (RUN_DIR/arbiter.sock, doc/arbiter.md §7), at most
 * ARBC_TIMEOUT_MS each; without an answer the callers fall back:
 * the startup timeout class in tandemd's words, or NULL (why says why); */
const char *ctl_arbiter_wfc(const struct agent *a, char *why, size_t len);
/* may the resource be promoted here (why: the arbiter's reason, or why
 * there is no veto)? */
enum arbc_promote ctl_arbiter_may_promote(const struct agent *a, char *why, size_t len);

/* cluster.c: Pacemaker's command-line tools (no cluster: a warning). */
void cluster_publish_score(const struct agent *a, const struct agent_policy_score *s);
/* Does a location constraint forbid promotion here? BLOCK_NONE also when
 * the check could not be made (logged); the constraint's id goes to id. */
enum agent_policy_block cluster_promote_blocker(const struct agent *a, char *id, size_t idlen);
/* unfence_if_all_uptodate: the unfence handler, its result logged. */
void cluster_unfence(const struct agent *a);

/* spawn.c */
/* Run argv (with extra "NAME=value" environment, NULL-terminated, may be
 * NULL) for at most timeout_ms; its stderr is logged at lvl, its stdout
 * returned in *out (malloc'd, NUL-terminated) when out is not NULL.
 * Returns the exit status, 128 + signal, or -errno. */
int spawn_run(char *const argv[], char *const env[], long timeout_ms, enum agent_level lvl,
	      char **out);
/* Start tandemd detached (setsid, closed descriptors) and wait until it
 * answers on the control socket. 0, or an OCF exit code. */
int spawn_tandemd(const struct agent *a);

/* meta-data.c */
void meta_data_print(void);

#endif
