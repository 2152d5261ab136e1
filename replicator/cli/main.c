/*
 * tandemadm: the administration tool of tandem (drbdadm's verbs).
 *
 *   tandemadm [-c FILE] [--node NAME] COMMAND [ARGS...]
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define DEFAULT_CONFIG "/etc/tandem.conf"
#define DRBD_CONFIG    "/etc/drbd.conf"

struct cmd {
	const char *name;
	int (*fn)(struct cli *cli, int argc, char **argv);
	const char *args;
	const char *help;
};

static int cmd_help(struct cli *cli, int argc, char **argv);

static const struct cmd cmds[] = {
	{"dump", cmd_dump, "[--json] [RES...]",
	 "print the configuration in canonical DRBD 8.4 form (or JSON)"},
	{"sh-resources", cmd_sh, "", "names of the resources of this node"},
	{"sh-dev", cmd_sh, "RES", "device of each volume of RES on this node"},
	{"sh-ll-dev", cmd_sh, "RES", "backing (lower-level) device of each volume"},
	{"sh-md-dev", cmd_sh, "RES", "meta-data device of each volume"},
	{"sh-md-idx", cmd_sh, "RES", "meta-data index: internal, flexible or N"},
	{"sh-minor", cmd_sh, "RES", "minor number of each volume"},
	{"sh-ip", cmd_sh, "RES", "this node's replication address of RES"},
	{"up", cmd_ctl_change, "RES...", "attach the volumes (tandemd)"},
	{"down", cmd_ctl_change, "[--force] RES...", "demote and detach, metadata marked clean"},
	{"attach", cmd_ctl_change, "RES...", "attach the backing devices and metadata"},
	{"detach", cmd_ctl_change, "[--force] RES...", "detach them"},
	{"primary", cmd_ctl_change, "[--force] RES...", "promote: export the volume over NBD"},
	{"secondary", cmd_ctl_change, "[--force] RES...", "demote (refused while clients are connected)"},
	{"new-current-uuid", cmd_ctl_change, "[--clear-bitmap] RES...", "start a new data generation"},
	{"connect", cmd_ctl_change, "[--discard-my-data] RES...", "connect to the peer (replication)"},
	{"disconnect", cmd_ctl_change, "RES...", "disconnect from the peer (replication)"},
	{"adjust", cmd_ctl_change, "RES...", "apply the configuration to the running resource"},
	{"wait-connect", cmd_wait, "[--timeout S] RES", "wait until connected (wfc timeouts)"},
	{"wait-sync", cmd_wait, "[--timeout S] RES", "wait until connected and both UpToDate"},
	{"invalidate", cmd_ctl_change, "RES...", "discard the local data: full resync from the peer"},
	{"invalidate-remote", cmd_ctl_change, "RES...", "full resync of the peer from here"},
	{"pause-sync", cmd_ctl_change, "RES...", "pause the resync"},
	{"resume-sync", cmd_ctl_change, "RES...", "resume it"},
	{"verify", cmd_ctl_change, "[--start S] [--stop S] RES...", "online verify against the peer (verify-alg)"},
	{"resync-oos", cmd_ctl_change, "RES...", "resync the blocks marked out of sync, from here, now"},
	{"sb-list", cmd_sb, "[--json] RES", "split-brain save sets of RES (--state-dir)"},
	{"sb-show", cmd_sb, "[--json] RES SET", "what a save set holds: ranges, UUIDs, policy"},
	{"sb-discard", cmd_sb, "RES SET", "remove a save set (checked first)"},
	{"resume-io", cmd_ctl_change, "RES...", "lift an I/O freeze of fencing (resource-and-stonith)"},
	{"status", cmd_ctl_status, "[--json] [--verbose] [RES]", "state and counters"},
	{"events", cmd_ctl_events, "[--now] [--json]", "one line per state change, as drbdsetup events2"},
	{"role", cmd_ctl_show, "RES", "role/peer role"},
	{"cstate", cmd_ctl_show, "RES", "connection state"},
	{"sh-status", cmd_ctl_show, "RES", "state as shell variables"},
	{"create-md", cmd_md, "[--force] RES[/VOL]...", "write new metadata (refuses to overwrite)"},
	{"dump-md", cmd_md, "[--force] RES[/VOL]", "print the metadata as text (drbdmeta's format)"},
	{"restore-md", cmd_md, "[--force] FILE RES[/VOL]", "write metadata from a dump-md text"},
	{"apply-al", cmd_md, "RES[/VOL]...", "replay the activity log into the bitmap"},
	{"get-gi", cmd_md, "RES[/VOL]...", "print the generation UUIDs and flags"},
	{"show-gi", cmd_md, "RES[/VOL]...", "get-gi, explained"},
	{"set-gi", cmd_md, "[--force] GI RES[/VOL]", "change UUIDs and flags (CUR:BM:H0:H1:c:u:p:C:f:o:cp)"},
	{"dstate", cmd_md, "RES[/VOL]...", "disk state (tandemd's, else the metadata's)"},
	{"outdate", cmd_md, "RES[/VOL]...", "mark the data Outdated (resource down)"},
	{"wipe-md", cmd_md, "[--force] RES[/VOL]...", "destroy the metadata superblock"},
	{"check-md", cmd_md, "RES[/VOL]...", "check superblock, sizes, activity log, bitmap"},
	{"inject-fault", cmd_ctl_fault, "[--volume N] [--meta] read|write|rw|flush|hang|none RES",
	 "tests: make a backing device fail (TANDEM_FAULT_INJECTION=1)"},
	{"fence-constraints", cmd_fence, "[--clear]", "fence constraints in the CIB; --clear removes stale ones"},
	{"arbiter", cmd_arbiter, "[--json]", "tandem-arbiterd's table: nodes, quorum, facts"},
	{"help", cmd_help, "", "this list"},
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: tandemadm [-c FILE] [--node NAME] COMMAND [ARGS...]\n\n"
		   "options:\n"
		   "  -c, --config FILE  configuration (default %s, else %s)\n"
		   "  -n, --node NAME    act as host NAME instead of `uname -n`\n"
		   "  -r, --run-dir DIR  where tandemd's control socket is (default /run/tandem)\n"
		   "  -s, --state-dir DIR  split-brain save sets (default /var/lib/tandem)\n"
		   "  -V, --version      print the version\n"
		   "  -h, --help         this text\n\n"
		   "commands:\n",
		DEFAULT_CONFIG, DRBD_CONFIG);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-13s %-26s %s\n", cmds[i].name, cmds[i].args, cmds[i].help);
	fprintf(f, "\nSee tandemadm(8) and tandem.conf(5).\n");
}

static int cmd_help(struct cli *cli, int argc, char **argv)
{
	usage(stdout);
	return EXIT_OK;
}

int cli_load_conf(const struct cli *cli, struct conf **out)
{
	struct conf_load_opts opts = {.hostname = cli->hostname, .warn_unauthenticated = true};
	const char *path = cli->config;
	struct diag *d;
	int rc;

	if (!path)
		path = getenv("TANDEM_CONFIG");
	if (!path || !*path)
		path = access(DEFAULT_CONFIG, F_OK) == 0 || access(DRBD_CONFIG, F_OK) != 0
			       ? DEFAULT_CONFIG
			       : DRBD_CONFIG;
	if (diag_new(&d) < 0) {
		fprintf(stderr, "tandemadm: out of memory\n");
		return EXIT_NOMEM;
	}
	rc = conf_load(path, &opts, d, out);
	diag_print(d, stderr);
	if (rc < 0 && rc != -EINVAL && diag_total(d) == 0)
		fprintf(stderr, "tandemadm: cannot load %s: %s\n", path, strerror(-rc));
	if (rc < 0 && diag_count(d, DIAG_ERR) > 0)
		fprintf(stderr, "tandemadm: %s: %u error%s; nothing was changed\n", path,
			diag_count(d, DIAG_ERR), diag_count(d, DIAG_ERR) == 1 ? "" : "s");
	diag_free(d);
	if (rc == -ENOMEM)
		return EXIT_NOMEM;
	return rc < 0 ? EXIT_CONFIG : EXIT_OK;
}

const struct conf_res *cli_local_res(const struct cli *cli, const struct conf *c,
				     const char *name, int *exit_code)
{
	const struct conf_res *r = conf_find_res(c, name);

	*exit_code = EXIT_CONFIG;
	if (!r) {
		fprintf(stderr, "tandemadm: '%s' is not defined in %s; 'tandemadm sh-resources' "
				"lists the resources of this node\n",
			name, conf_file(c));
		return NULL;
	}
	if (!r->me) {
		fprintf(stderr, "tandemadm: resource %s has no host section for this node ('%s'); "
				"check the 'on' names, or use --node NAME\n",
			name, conf_hostname(c));
		return NULL;
	}
	*exit_code = EXIT_OK;
	return r;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'}, {"node", required_argument, NULL, 'n'},
		{"run-dir", required_argument, NULL, 'r'}, {"version", no_argument, NULL, 'V'},
		{"state-dir", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	struct cli cli = {0};
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, "+c:n:r:s:Vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			cli.run_dir = optarg;
			break;
		case 's':
			cli.state_dir = optarg;
			break;
		case 'c':
			cli.config = optarg;
			break;
		case 'n':
			cli.hostname = optarg;
			break;
		case 'V':
			printf("tandemadm %s\n", PACKAGE_VERSION);
			return EXIT_OK;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, "tandemadm: run 'tandemadm --help' for the options\n");
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cli.verb = argv[optind];
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(cmds[i].name, cli.verb) == 0) {
			optind++;
			return cmds[i].fn(&cli, argc - optind + 1, argv + optind - 1);
		}
	}
	fprintf(stderr, "tandemadm: unknown command '%s'; run 'tandemadm help' for the list\n",
		cli.verb);
	return EXIT_USAGE;
}
