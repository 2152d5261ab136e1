/*
 * cmd-fence: `tandemadm fence-constraints [--clear]`, the fence
 * constraints (tandem-fence-RES) that the fence-peer handler left in
 * Pacemaker's CIB, whether each one still protects anything, and with
 * --clear the stale ones removed (ref/ha-stack-apis.md section 9, pain
 * point 1: a leftover fence constraint blocks promotion forever).
 *
 * The work is done by `tandem-fence-peer --list` / `--clear`, run as a
 * child: it shares the CIB code and the staleness rules with the
 * handlers, and tandemadm stays free of Pacemaker's libraries (libcib
 * pulls in glib, libxml2 and libcrmcommon, which a node without
 * Pacemaker does not have). doc/fence-handlers.md describes the verb.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

/* TANDEM_FENCE_PEER, else $(sbindir)/tandem-fence-peer if it exists,
 * else tandem-fence-peer on PATH. */
static const char *fence_peer_path(void)
{
	const char *env = getenv("TANDEM_FENCE_PEER");

	if (env && *env)
		return env;
#ifdef TANDEM_SBINDIR
	if (access(TANDEM_SBINDIR "/tandem-fence-peer", X_OK) == 0)
		return TANDEM_SBINDIR "/tandem-fence-peer";
#endif
	return "tandem-fence-peer";
}

static void fence_usage(FILE *f)
{
	fprintf(f, "usage: tandemadm fence-constraints [--clear]\n"
		   "  list the fence constraints (tandem-fence-RES) in Pacemaker's CIB and\n"
		   "  whether each one is still needed; --clear removes the stale ones\n"
		   "  (connected and UpToDate/UpToDate, or their resource or clone is gone)\n");
}

int cmd_fence(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"clear", no_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *prog = fence_peer_path();
	char *args[8];
	bool clear = false;
	int opt, rc, status, n = 0;
	pid_t pid;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'C':
			clear = true;
			break;
		case 'h':
			fence_usage(stdout);
			return EXIT_OK;
		default:
			fence_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tandemadm: %s: unexpected argument '%s' (it takes no resource: "
				"it looks at every tandem-fence-* constraint)\n",
			cli->verb, argv[optind]);
		return EXIT_USAGE;
	}
	args[n++] = (char *)prog;
	args[n++] = clear ? "--clear" : "--list";
	args[n++] = "--run-dir";
	args[n++] = (char *)cli_run_dir(cli);
	args[n] = NULL;

	fflush(NULL);
	rc = posix_spawnp(&pid, prog, NULL, NULL, args, environ);
	if (rc) {
		fprintf(stderr, "tandemadm: %s: cannot run %s: %s; install tandem's fence "
				"handlers, or name the program in TANDEM_FENCE_PEER\n",
			cli->verb, prog, strerror(rc));
		return EXIT_EXEC;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "tandemadm: %s: waiting for %s: %s\n", cli->verb, prog,
				strerror(errno));
			return EXIT_EXEC;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return EXIT_OK;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		fprintf(stderr, "tandemadm: %s: cannot run %s; install tandem's fence handlers, "
				"or name the program in TANDEM_FENCE_PEER\n",
			cli->verb, prog);
		return EXIT_EXEC;
	}
	/* its message is above */
	if (WIFSIGNALED(status))
		fprintf(stderr, "tandemadm: %s: %s killed by signal %d\n", cli->verb, prog,
			WTERMSIG(status));
	return EXIT_EXEC;
}
