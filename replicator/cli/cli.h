/* tandemadm: shared declarations of the command groups. */
#ifndef TANDEM_CLI_H
#define TANDEM_CLI_H

#include "conf.h"

/* Exit codes, as drbdadm's (documented in tandemadm(8)). */
enum {
	EXIT_OK = 0,
	EXIT_USAGE = 1,
	EXIT_OUTDATE_INCONSISTENT = 5,
	EXIT_CONFIG = 10,
	EXIT_EXEC = 20,
	EXIT_NOMEM = 30,
	EXIT_NO_DAEMON = 3, /* tandemd is not running */
	EXIT_WAIT_TIMEOUT = 5,     /* wait-connect/wait-sync: timed out */
	EXIT_WAIT_STANDALONE = 11, /* wait-connect/wait-sync: StandAlone */
};

struct cli {
	const char *config;   /* -c FILE */
	const char *hostname; /* --node NAME */
	const char *verb;
	const char *run_dir;  /* --run-dir */
	const char *state_dir; /* --state-dir */
};

/* Load the configuration, printing its diagnostics; returns an exit code. */
int cli_load_conf(const struct cli *cli, struct conf **out);
/* This node's host section of resource `name`, or an error message and NULL. */
const struct conf_res *cli_local_res(const struct cli *cli, const struct conf *c,
				     const char *name, int *exit_code);

/* cmd-conf.c */
int cmd_dump(struct cli *cli, int argc, char **argv);
int cmd_sh(struct cli *cli, int argc, char **argv);

/* cmd-ctl.c */
const char *cli_run_dir(const struct cli *cli);
int cmd_ctl_change(struct cli *cli, int argc, char **argv);
int cmd_ctl_fault(struct cli *cli, int argc, char **argv);
int cmd_ctl_status(struct cli *cli, int argc, char **argv);
int cmd_ctl_show(struct cli *cli, int argc, char **argv);
int cmd_ctl_dstate(struct cli *cli, const char *res);
int cmd_ctl_outdate(struct cli *cli, const char *res);
int cmd_ctl_events(struct cli *cli, int argc, char **argv);
/* The daemon's status of one resource (NULL and *rc on failure). */
struct json_object *cli_status(struct cli *cli, const char *res, int *rc);

/* cmd-wait.c */
int cmd_wait(struct cli *cli, int argc, char **argv);

/* cmd-sb.c */
const char *cli_state_dir(const struct cli *cli);
int cmd_sb(struct cli *cli, int argc, char **argv);

/* cmd-fence.c */
int cmd_fence(struct cli *cli, int argc, char **argv);

/* cmd-arbiter.c */
int cmd_arbiter(struct cli *cli, int argc, char **argv);

/* cmd-md.c */
int cmd_md(struct cli *cli, int argc, char **argv);

#endif
