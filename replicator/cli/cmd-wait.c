/*
 * cmd-wait: wait-connect and wait-sync, the startup waits of DRBD's init
 * script (ref/drbd-semantics.md §8). Which timeout class applies is
 * tandem-arbiterd's answer when it has one (doc/arbiter.md §6.2: the
 * peer's node gone or fenced, the peer Outdated, or simply not up yet),
 * else tandemd's (its metadata flags at attach); the timeout comes from
 * the startup section: wfc-timeout, degr-wfc-timeout after a degraded
 * shutdown, outdated-wfc-timeout when the peer was marked Outdated; 0
 * waits forever. StandAlone ends the wait (split brain, refusal) unless
 * wait-after-sb is set.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arbc.h"
#include "cli.h"
#include "ctlc.h"

static const char *field(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

/* The effective timeout of the class, with DRBD's sanity rules. */
static uint64_t timeout_for(const struct conf *c, const struct conf_res *cr, const char *cls)
{
	uint64_t wfc = conf_res_num(c, cr, CONF_SECT_STARTUP, "wfc-timeout");
	uint64_t degr = conf_res_num(c, cr, CONF_SECT_STARTUP, "degr-wfc-timeout");
	uint64_t outd = conf_res_num(c, cr, CONF_SECT_STARTUP, "outdated-wfc-timeout");

	if (wfc > 0 && (degr == 0 || degr > wfc))
		degr = wfc;
	if (degr > 0 && (outd == 0 || outd > degr))
		outd = degr;
	if (!strcmp(cls, "degraded"))
		return degr;
	if (!strcmp(cls, "peer-outdated"))
		return outd;
	return wfc;
}

/* The class tandem-arbiterd answers for res, or NULL (why says why). */
static const char *arbiter_class(struct cli *cli, const char *res, char *why, size_t len)
{
	json_object *req = arbc_request("wfc", res), *resp = NULL;
	const char *cls;
	int rc = -ENOMEM;

	if (req)
		rc = arbc_call(cli_run_dir(cli), req, ARBC_TIMEOUT_MS, &resp);
	cls = arbc_wfc_class(rc, resp, why, len);
	json_object_put(req);
	json_object_put(resp);
	return cls;
}

static bool synced(json_object *r)
{
	json_object *vols, *v;
	size_t i;

	if (strcmp(field(r, "connection"), "Connected"))
		return false;
	if (!json_object_object_get_ex(r, "volumes", &vols))
		return false;
	for (i = 0; i < json_object_array_length(vols); i++) {
		v = json_object_array_get_idx(vols, i);
		if (strcmp(field(v, "disk"), "UpToDate") || strcmp(field(v, "peer_disk"), "UpToDate"))
			return false;
	}
	return true;
}

static bool connected(const char *conn)
{
	static const char *const ok[] = {"Connected",  "StartingSyncS", "StartingSyncT",
					 "WFBitMapS",  "WFBitMapT",	"WFSyncUUID",
					 "SyncSource", "SyncTarget",	"VerifyS",
					 "VerifyT",    "PausedSyncS",	"PausedSyncT",
					 "Ahead",      "Behind"};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(conn, ok[i]))
			return true;
	return false;
}

int cmd_wait(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"timeout", required_argument, NULL, 't'},
		{NULL, 0, NULL, 0},
	};
	bool sync = !strcmp(cli->verb, "wait-sync");
	long timeout = -1;
	const struct conf_res *cr;
	struct conf *c = NULL;
	struct timespec t0, t;
	int opt, rc;
	char *end;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "t:", longopts, NULL)) != -1) {
		if (opt != 't')
			return EXIT_USAGE;
		timeout = strtol(optarg, &end, 10);
		if (*end || timeout < 0) {
			fprintf(stderr, "tandemadm %s: --timeout %s: not a number of seconds\n",
				cli->verb, optarg);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "usage: tandemadm %s [--timeout SECONDS] RES\n", cli->verb);
		return EXIT_USAGE;
	}
	rc = cli_load_conf(cli, &c);
	if (rc)
		return rc;
	cr = cli_local_res(cli, c, argv[optind], &rc);
	if (!cr) {
		conf_free(c);
		return rc;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		json_object *resp = cli_status(cli, argv[optind], &rc), *list, *r;
		char conn[64];

		if (!resp || !json_object_object_get_ex(resp, "resources", &list) ||
		    !(r = json_object_array_get_idx(list, 0))) {
			json_object_put(resp);
			conf_free(c);
			return rc ? rc : EXIT_EXEC;
		}
		if (timeout < 0) {
			char why[512];
			const char *cls = arbiter_class(cli, argv[optind], why, sizeof(why));
			const char *src = "tandem-arbiterd";

			if (!cls) {
				cls = *field(r, "wfc_class") ? field(r, "wfc_class") : "default";
				src = "the metadata flags";
			}
			timeout = (long)timeout_for(c, cr, cls);
			if (timeout)
				fprintf(stderr, "tandemadm %s: %s: %s timeout class (from %s%s%s): "
						"waiting up to %ld s\n",
					cli->verb, argv[optind], cls, src, why[0] ? ": " : "", why,
					timeout);
			else
				fprintf(stderr, "tandemadm %s: %s: %s timeout class (from %s%s%s): "
						"waiting without a limit\n",
					cli->verb, argv[optind], cls, src, why[0] ? ": " : "", why);
		}
		snprintf(conn, sizeof(conn), "%s", field(r, "connection"));
		if (sync ? synced(r) : connected(conn)) {
			printf("%s: %s\n", argv[optind], conn);
			json_object_put(resp);
			conf_free(c);
			return EXIT_OK;
		}
		if (!strcmp(conn, "StandAlone") &&
		    !conf_res_bool(c, cr, CONF_SECT_STARTUP, "wait-after-sb")) {
			fprintf(stderr,
				"tandemadm %s: %s is StandAlone (refused by the peer, split brain, or "
				"disconnected): not waiting; see the log, or set wait-after-sb\n",
				cli->verb, argv[optind]);
			json_object_put(resp);
			conf_free(c);
			return EXIT_WAIT_STANDALONE;
		}
		json_object_put(resp);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (timeout > 0 && t.tv_sec - t0.tv_sec >= timeout) {
			fprintf(stderr, "tandemadm %s: %s: timed out after %ld s (still %s)\n",
				cli->verb, argv[optind], timeout, conn);
			conf_free(c);
			return EXIT_WAIT_TIMEOUT;
		}
		usleep(200000);
	}
}
