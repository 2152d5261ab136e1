/*
 * tandem-arbiterd: the corosync CPG arbiter of tandem, one per cluster
 * node (doc/arbiter.md, tandem-arbiterd(8)). It runs in the foreground
 * and logs to stderr (systemd's journal); systemd starts it after
 * corosync and restarts it when corosync comes back.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>

#include <qb/qbloop.h>

#include "arb-core.h"
#include "log.h"

#define DEFAULT_RUN_DIR "/run/tandem"

static void usage(FILE *f)
{
	fprintf(f, "usage: tandem-arbiterd [--run-dir DIR] [-v]\n\n"
		   "  -r, --run-dir DIR  where tandemd.sock is and arbiter.sock goes "
		   "(default %s)\n"
		   "  -v, --verbose      debug logging\n"
		   "  -V, --version      print the version\n\n"
		   "It stays in the foreground and logs to stderr. See tandem-arbiterd(8).\n",
		DEFAULT_RUN_DIR);
}

static int32_t on_stop(int32_t sig, void *data)
{
	log_info("arbiter: signal %d: leaving the group and exiting", sig);
	qb_loop_stop(data);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"run-dir", required_argument, NULL, 'r'}, {"verbose", no_argument, NULL, 'v'},
		{"version", no_argument, NULL, 'V'},	   {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct log_opts lo = {.ident = "tandem-arbiterd", .to_stderr = true, .level = LOG_INFO};
	const char *run_dir = getenv("TANDEM_RUN_DIR") ? getenv("TANDEM_RUN_DIR") : DEFAULT_RUN_DIR;
	struct arb_core *a;
	qb_loop_t *loop;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "r:vVh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			run_dir = optarg;
			break;
		case 'v':
			lo.level = LOG_DEBUG;
			break;
		case 'V':
			printf("tandem-arbiterd %s\n", PACKAGE_VERSION);
			return EX_OK;
		case 'h':
			usage(stdout);
			return EX_OK;
		default:
			usage(stderr);
			return EX_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "tandem-arbiterd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EX_USAGE;
	}
	if (log_init(&lo) < 0) {
		fprintf(stderr, "tandem-arbiterd: cannot set up logging\n");
		return EX_OSERR;
	}
	if (mkdir(run_dir, 0700) < 0 && errno != EEXIST) {
		log_err("cannot create %s: %s", run_dir, strerror(errno));
		log_fini();
		return EX_CANTCREAT;
	}
	signal(SIGPIPE, SIG_IGN);
	loop = qb_loop_create();
	if (!loop) {
		log_err("cannot create the main loop");
		log_fini();
		return EX_OSERR;
	}
	rc = arb_core_new(loop, run_dir, &a);
	if (rc) {
		log_err("tandem-arbiterd not started: %s", rc == -ENOTCONN	  ? "corosync is not running"
							   : rc == -EADDRINUSE ? "another one runs"
									       : strerror(-rc));
		qb_loop_destroy(loop);
		log_fini();
		return rc == -ENOTCONN ? EX_UNAVAILABLE : rc == -EADDRINUSE ? EX_TEMPFAIL : EX_OSERR;
	}
	qb_loop_signal_add(loop, QB_LOOP_HIGH, SIGTERM, loop, on_stop, NULL);
	qb_loop_signal_add(loop, QB_LOOP_HIGH, SIGINT, loop, on_stop, NULL);
	log_info("tandem-arbiterd %s ready: %s/arbiter.sock", PACKAGE_VERSION, run_dir);
	qb_loop_run(loop);
	rc = arb_core_failed(a) ? EX_UNAVAILABLE : EX_OK;
	arb_core_free(a);
	qb_loop_destroy(loop);
	log_fini();
	return rc;
}
