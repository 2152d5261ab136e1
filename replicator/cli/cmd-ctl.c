/*
 * tandemadm: verbs answered by the running daemon over its control socket
 * (doc/control-protocol.md): up, down, attach, detach, primary, secondary,
 * role, cstate, dstate, status, sh-status, new-current-uuid, connect,
 * disconnect, adjust.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ctlc.h"

const char *cli_run_dir(const struct cli *cli)
{
	const char *env = getenv("TANDEM_RUN_DIR");

	if (cli->run_dir)
		return cli->run_dir;
	return env && *env ? env : "/run/tandem";
}

/* One request, one response, on a connection of its own (ctlc.h); no
 * deadline: tandemd answers when the command is done. NULL with
 * *exit_code set when the daemon cannot be reached or does not answer
 * (the connection message is not printed if quiet). */
static json_object *ctl_call(const struct cli *cli, json_object *req, bool quiet, int *exit_code)
{
	json_object *resp = NULL;
	struct ctlc *c;
	int rc;

	*exit_code = EXIT_NO_DAEMON;
	rc = ctlc_open(cli_run_dir(cli), CTLC_FOREVER, &c);
	if (rc < 0) {
		if (!quiet)
			fprintf(stderr,
				"tandemadm: %s: tandemd is not running (cannot connect to "
				"%s/" CTLC_SOCK_NAME ": %s); "
				"start it with 'tandemd' or 'systemctl start tandemd'\n",
				cli->verb, cli_run_dir(cli), strerror(-rc));
		return NULL;
	}
	*exit_code = EXIT_EXEC;
	rc = ctlc_send(c, req, CTLC_FOREVER);
	if (rc < 0)
		fprintf(stderr, "tandemadm: %s: cannot talk to tandemd: %s\n", cli->verb,
			strerror(-rc));
	else if ((rc = ctlc_recv(c, CTLC_FOREVER, &resp)) == -ECONNRESET)
		fprintf(stderr, "tandemadm: %s: tandemd closed the connection without an answer\n",
			cli->verb);
	else if (rc < 0)
		fprintf(stderr, "tandemadm: %s: cannot read tandemd's answer: %s\n", cli->verb,
			ctlc_strerror(rc));
	ctlc_close(c);
	return resp;
}

static bool resp_ok(json_object *resp, const struct cli *cli, int *exit_code)
{
	json_object *ok, *v;

	if (json_object_object_get_ex(resp, "ok", &ok) && json_object_get_boolean(ok)) {
		*exit_code = EXIT_OK;
		return true;
	}
	*exit_code = json_object_object_get_ex(resp, "exit", &v) ? json_object_get_int(v)
								 : EXIT_EXEC;
	if (json_object_object_get_ex(resp, "error", &v))
		fprintf(stderr, "tandemadm: %s: %s\n", cli->verb, json_object_get_string(v));
	if (json_object_object_get_ex(resp, "hint", &v))
		fprintf(stderr, "tandemadm: %s: %s\n", cli->verb, json_object_get_string(v));
	return false;
}

static json_object *request(const char *cmd, const char *res)
{
	json_object *req = json_object_new_object();

	json_object_object_add(req, "cmd", json_object_new_string(cmd));
	if (res)
		json_object_object_add(req, "res", json_object_new_string(res));
	return req;
}

static json_object *status_of(struct cli *cli, const char *res, int *rc);

/* primary refused because fencing must outdate the peer first, and tandemd
 * started fence-peer (drbdadm runs the handler itself and retries; here
 * the daemon runs it): wait for its verdict, up to two minutes. */
static bool fencing_for_promote(json_object *resp)
{
	json_object *v;

	return json_object_object_get_ex(resp, "ss", &v) && json_object_get_int(v) == -7 &&
	       json_object_object_get_ex(resp, "hint", &v) &&
	       strstr(json_object_get_string(v), "fence-peer is running");
}

static void wait_fence_peer(struct cli *cli, const char *res)
{
	int i, rc;

	fprintf(stderr, "tandemadm primary: %s: waiting for fence-peer's verdict\n", res);
	for (i = 0; i < 1200; i++) {
		json_object *st = status_of(cli, res, &rc), *list, *r, *f, *run;
		bool running = false;

		if (st && json_object_object_get_ex(st, "resources", &list) &&
		    (r = json_object_array_get_idx(list, 0)) &&
		    json_object_object_get_ex(r, "fencing", &f) &&
		    json_object_object_get_ex(f, "running", &run))
			running = json_object_get_boolean(run);
		json_object_put(st);
		if (!running)
			return;
		usleep(100000);
	}
}

/* Verbs that change state: one request per resource. */
int cmd_ctl_change(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"force", no_argument, NULL, 'f'},
		{"clear-bitmap", no_argument, NULL, 'b'},
		{"discard-my-data", no_argument, NULL, 'd'},
		{"start", required_argument, NULL, 's'},
		{"stop", required_argument, NULL, 'S'},
		{NULL, 0, NULL, 0},
	};
	bool force = false, clear = false, discard = false;
	long long start = -1, stop = -1;
	int opt, i, rc, worst = EXIT_OK;
	char *end;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "f", longopts, NULL)) != -1) {
		if (opt == 'f')
			force = true;
		else if (opt == 'b')
			clear = true;
		else if (opt == 'd')
			discard = true;
		else if ((opt == 's' || opt == 'S') && strcmp(cli->verb, "verify") == 0) {
			long long n = strtoll(optarg, &end, 10);

			if (*end || n < 0 || end == optarg) {
				fprintf(stderr, "tandemadm verify: --%s %s: not a sector number\n",
					opt == 's' ? "start" : "stop", optarg);
				return EXIT_USAGE;
			}
			*(opt == 's' ? &start : &stop) = n;
		} else
			return EXIT_USAGE;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: tandemadm %s [--force] RES...\n", cli->verb);
		return EXIT_USAGE;
	}
	for (i = optind; i < argc; i++) {
		json_object *req = request(cli->verb, argv[i]), *resp;

		json_object_object_add(req, "force", json_object_new_boolean(force));
		json_object_object_add(req, "clear_bitmap", json_object_new_boolean(clear));
		json_object_object_add(req, "discard_my_data", json_object_new_boolean(discard));
		if (start >= 0)
			json_object_object_add(req, "start", json_object_new_int64(start));
		if (stop >= 0)
			json_object_object_add(req, "stop", json_object_new_int64(stop));
		resp = ctl_call(cli, req, false, &rc);
		if (resp && !strcmp(cli->verb, "primary") && fencing_for_promote(resp)) {
			json_object_put(resp);
			wait_fence_peer(cli, argv[i]);
			resp = ctl_call(cli, req, false, &rc);
		}
		json_object_put(req);
		if (resp)
			resp_ok(resp, cli, &rc);
		json_object_put(resp);
		worst = worst > rc ? worst : rc;
	}
	return worst;
}

/* inject-fault [--volume N] [--meta] read|write|rw|flush|hang|none RES: tests only
 * (tandemd must run with TANDEM_FAULT_INJECTION=1). */
int cmd_ctl_fault(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"volume", required_argument, NULL, 'v'},
		{"meta", no_argument, NULL, 'm'},
		{NULL, 0, NULL, 0},
	};
	json_object *req, *resp;
	bool meta = false;
	int opt, rc, vnr = 0;
	char *end;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (opt == 'v') {
			vnr = (int)strtol(optarg, &end, 10);
			if (*end || vnr < 0) {
				fprintf(stderr, "tandemadm inject-fault: --volume %s: not a volume number\n",
					optarg);
				return EXIT_USAGE;
			}
		} else if (opt == 'm') {
			meta = true;
		} else {
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr,
			"usage: tandemadm inject-fault [--volume N] [--meta] read|write|rw|flush|hang|none RES\n");
		return EXIT_USAGE;
	}
	req = request("inject-fault", argv[optind + 1]);
	json_object_object_add(req, "fail", json_object_new_string(argv[optind]));
	json_object_object_add(req, "volume", json_object_new_int(vnr));
	json_object_object_add(req, "meta", json_object_new_boolean(meta));
	resp = ctl_call(cli, req, false, &rc);
	json_object_put(req);
	if (resp)
		resp_ok(resp, cli, &rc);
	json_object_put(resp);
	return rc;
}

static json_object *status_of(struct cli *cli, const char *res, int *rc);

json_object *cli_status(struct cli *cli, const char *res, int *rc)
{
	return status_of(cli, res, rc);
}

static json_object *status_of(struct cli *cli, const char *res, int *rc)
{
	json_object *req = request("status", res), *resp = ctl_call(cli, req, false, rc);

	json_object_put(req);
	if (resp && !resp_ok(resp, cli, rc)) {
		json_object_put(resp);
		return NULL;
	}
	return resp;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static uint64_t jnum(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? (uint64_t)json_object_get_int64(v) : 0;
}

static double jdbl(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_double(v) : 0;
}

/* The resync or verify progress as /proc/drbd shows it. */
static void print_sync(json_object *sync, const char *what)
{
	double pct = jdbl(sync, "percent");
	uint64_t eta = jnum(sync, "eta_s");
	int i, bar = (int)(pct / 5.0);

	printf("      [");
	for (i = 0; i < 20; i++)
		putchar(i < bar ? '=' : i == bar ? '>' : '.');
	printf("] %s: %.1f%% (%llu/%llu)K\n", what, pct, (unsigned long long)jnum(sync, "left_kib"),
	       (unsigned long long)jnum(sync, "total_kib"));
	printf("      finish: %llu:%02llu:%02llu speed: %llu K/sec\n",
	       (unsigned long long)eta / 3600, (unsigned long long)eta / 60 % 60,
	       (unsigned long long)eta % 60, (unsigned long long)jnum(sync, "speed_kib_s"));
}

static void print_status(json_object *r, bool verbose)
{
	json_object *vols, *v, *c, *sync;
	size_t i;

	printf("%s role:%s\n", jstr(r, "name"), jstr(r, "role"));
	if (json_object_object_get_ex(r, "warnings", &c))
		for (i = 0; i < json_object_array_length(c); i++)
			printf("  warning: %s\n", json_object_get_string(json_object_array_get_idx(c, i)));
	if (json_object_object_get_ex(r, "fencing", &c)) {
		json_object *fz, *run, *last;

		if (json_object_object_get_ex(c, "io_frozen", &fz) && json_object_get_boolean(fz))
			printf("  I/O frozen by fencing (%s): writes wait for fence-peer's verdict or "
			       "the peer; 'tandemadm resume-io %s' lifts it\n",
			       jstr(c, "policy"), jstr(r, "name"));
		if (json_object_object_get_ex(c, "running", &run) && json_object_get_boolean(run))
			printf("  fence-peer is running\n");
		else if (json_object_object_get_ex(c, "last_result", &last))
			printf("  fence-peer: last exit code %d\n", json_object_get_int(last));
	}
	if (*jstr(r, "sb_save"))
		printf("  split-brain save: %s (tandemadm sb-list %s)\n", jstr(r, "sb_save"),
		       jstr(r, "name"));
	if (!json_object_object_get_ex(r, "volumes", &vols))
		return;
	for (i = 0; i < json_object_array_length(vols); i++) {
		v = json_object_array_get_idx(vols, i);
		printf("  volume:%s disk:%s", jstr(v, "volume"), jstr(v, "disk"));
		if (*jstr(v, "export"))
			printf(" export:%s clients:%s", jstr(v, "export"), jstr(v, "clients"));
		printf("\n");
		if (verbose && json_object_object_get_ex(v, "counters", &c))
			printf("      ns:%llu nr:%llu dw:%llu dr:%llu al:%llu bm:%llu lo:%llu pe:%llu "
			       "ua:%llu ap:%llu oos:%llu\n",
			       (unsigned long long)jnum(c, "ns"), (unsigned long long)jnum(c, "nr"),
			       (unsigned long long)jnum(c, "dw"), (unsigned long long)jnum(c, "dr"),
			       (unsigned long long)jnum(c, "al"), (unsigned long long)jnum(c, "bm"),
			       (unsigned long long)jnum(c, "lo"), (unsigned long long)jnum(c, "pe"),
			       (unsigned long long)jnum(c, "ua"), (unsigned long long)jnum(c, "ap"),
			       (unsigned long long)jnum(c, "oos"));
	}
	printf("  %s connection:%s", *jstr(r, "peer") ? jstr(r, "peer") : "peer",
	       jstr(r, "connection"));
	if (strcmp(jstr(r, "peer_role"), "Unknown"))
		printf(" role:%s", jstr(r, "peer_role"));
	printf("\n");
	if (jnum(r, "integrity_failures"))
		printf("  data-integrity-alg: %llu digest mismatches (each one reconnected and "
		       "resynced)\n",
		       (unsigned long long)jnum(r, "integrity_failures"));
	for (i = 0; i < json_object_array_length(vols); i++) {
		v = json_object_array_get_idx(vols, i);
		if (!*jstr(v, "replication"))
			continue;
		printf("    volume:%s replication:%s peer-disk:%s\n", jstr(v, "volume"),
		       jstr(v, "replication"), jstr(v, "peer_disk"));
		if (json_object_object_get_ex(v, "sync", &sync))
			print_sync(sync, "sync'ed");
		if (json_object_object_get_ex(v, "verify", &sync)) {
			print_sync(sync, "verified");
			printf("      out of sync so far: %llu 4k blocks\n",
			       (unsigned long long)jnum(sync, "out_of_sync_blocks"));
		}
	}
}

int cmd_ctl_status(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"verbose", no_argument, NULL, 'v'},
		{NULL, 0, NULL, 0},
	};
	bool json = false, verbose = false;
	json_object *resp, *list;
	int opt, rc;
	size_t i;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "jv", longopts, NULL)) != -1) {
		if (opt == 'j')
			json = true;
		else if (opt == 'v')
			verbose = true;
		else
			return EXIT_USAGE;
	}
	resp = status_of(cli, optind < argc ? argv[optind] : NULL, &rc);
	if (!resp)
		return rc;
	json_object_object_get_ex(resp, "resources", &list);
	if (json) {
		json_object_object_del(resp, "ok");
		printf("%s\n", json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PRETTY));
	} else {
		for (i = 0; i < json_object_array_length(list); i++)
			print_status(json_object_array_get_idx(list, i), verbose);
	}
	json_object_put(resp);
	return EXIT_OK;
}

/*
 * dstate: the daemon's view when it runs and has the resource up, else the
 * state recorded in the metadata (offline, like drbdadm on a down node).
 * Returns -1 when the caller should fall back to the metadata.
 */
/* The daemon's status of res when it runs and has res up (*r points into
 * it; put it when done), else NULL. */
static json_object *up_status(struct cli *cli, const char *res, json_object **r)
{
	json_object *req = request("status", res), *resp, *list, *up;
	int rc;

	resp = ctl_call(cli, req, true, &rc);
	json_object_put(req);
	if (!resp || !resp_ok(resp, cli, &rc) || !json_object_object_get_ex(resp, "resources", &list) ||
	    !(*r = json_object_array_get_idx(list, 0)) || !json_object_object_get_ex(*r, "up", &up) ||
	    !json_object_get_boolean(up)) {
		json_object_put(resp);
		return NULL;
	}
	return resp;
}

int cmd_ctl_dstate(struct cli *cli, const char *res)
{
	json_object *resp, *r, *vols, *v;
	size_t i;

	resp = up_status(cli, res, &r);
	if (!resp)
		return -1;
	json_object_object_get_ex(r, "volumes", &vols);
	for (i = 0; i < json_object_array_length(vols); i++) {
		v = json_object_array_get_idx(vols, i);
		printf("%s/%s\n", jstr(v, "disk"), jstr(v, "peer_disk"));
	}
	json_object_put(resp);
	return EXIT_OK;
}

/* outdate of a resource that is up: tandemd does it (exit code), else -1. */
int cmd_ctl_outdate(struct cli *cli, const char *res)
{
	json_object *req, *resp, *r;
	int rc;

	resp = up_status(cli, res, &r);
	if (!resp)
		return -1;
	json_object_put(resp);
	req = request("outdate", res);
	resp = ctl_call(cli, req, false, &rc);
	json_object_put(req);
	if (resp)
		resp_ok(resp, cli, &rc);
	json_object_put(resp);
	return rc;
}

/* role, cstate, sh-status: one resource, printed as drbdadm does. */
int cmd_ctl_show(struct cli *cli, int argc, char **argv)
{
	json_object *resp, *list, *r, *vols, *v;
	int rc;
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: tandemadm %s RES\n", cli->verb);
		return EXIT_USAGE;
	}
	resp = status_of(cli, argv[1], &rc);
	if (!resp)
		return rc;
	json_object_object_get_ex(resp, "resources", &list);
	r = json_object_array_get_idx(list, 0);
	json_object_object_get_ex(r, "volumes", &vols);
	if (!strcmp(cli->verb, "role")) {
		printf("%s/%s\n", jstr(r, "role"), jstr(r, "peer_role"));
	} else if (!strcmp(cli->verb, "cstate")) {
		printf("%s\n", jstr(r, "connection"));
	} else { /* sh-status: shell-evaluable, like drbdsetup sh-status */
		printf("_res_name=%s\n_role=%s\n_peer=%s\n_cstate=%s\n", jstr(r, "name"),
		       jstr(r, "role"), jstr(r, "peer_role"), jstr(r, "connection"));
		for (i = 0; i < json_object_array_length(vols); i++) {
			v = json_object_array_get_idx(vols, i);
			printf("_volume=%s\n_minor=%s\n_disk=%s\n_pdsk=%s\n_size_sect=%s\n_export=%s\n"
			       "_clients=%s\n_sh_status_process\n",
			       jstr(v, "volume"), jstr(v, "minor"), jstr(v, "disk"),
			       jstr(v, "peer_disk"), jstr(v, "size_sect"), jstr(v, "export"),
			       *jstr(v, "clients") ? jstr(v, "clients") : "0");
		}
	}
	json_object_put(resp);
	return EXIT_OK;
}

/* Print one event line as `drbdsetup events2` does (or the JSON). */
static void print_event(json_object *ev, bool json)
{
	json_object *vols, *v, *end;
	const char *what;
	size_t i;

	if (json) {
		printf("%s\n", json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN));
		return;
	}
	if (!strcmp(jstr(ev, "event"), "exists")) {
		if (json_object_object_get_ex(ev, "end", &end)) {
			printf("exists -\n");
			return;
		}
		printf("exists resource name:%s role:%s\n", jstr(ev, "name"), jstr(ev, "role"));
		printf("exists connection name:%s connection:%s role:%s\n", jstr(ev, "name"),
		       jstr(ev, "connection"), jstr(ev, "peer_role"));
		if (json_object_object_get_ex(ev, "volumes", &vols)) {
			for (i = 0; i < json_object_array_length(vols); i++) {
				v = json_object_array_get_idx(vols, i);
				printf("exists device name:%s volume:%s minor:%s disk:%s\n",
				       jstr(ev, "name"), jstr(v, "volume"), jstr(v, "minor"),
				       jstr(v, "disk"));
			}
		}
		return;
	}
	what = jstr(ev, "what");
	if (!strcmp(what, "susp-fen")) { /* I/O frozen by fencing, as DRBD 9's events2 */
		printf("change resource name:%s suspended:%s\n", jstr(ev, "res"),
		       !strcmp(jstr(ev, "new"), "1") ? "fencing" : "no");
		return;
	}
	if (!strcmp(what, "peer")) { /* the peer's role, as events2 shows it */
		printf("change connection name:%s role:%s\n", jstr(ev, "res"), jstr(ev, "new"));
		return;
	}
	printf("change %s name:%s %s:%s\n",
	       !strcmp(what, "role")	     ? "resource"
	       : !strcmp(what, "disk")	     ? "device"
	       : !strcmp(what, "peer-disk") ? "peer-device"
					     : "connection",
	       jstr(ev, "res"), what, jstr(ev, "new"));
}

int cmd_ctl_events(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"now", no_argument, NULL, 'n'},
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	json_object *req, *ev;
	bool now = false, json = false;
	struct ctlc *c;
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (opt == 'n')
			now = true;
		else if (opt == 'j')
			json = true;
		else
			return EXIT_USAGE;
	}
	rc = ctlc_open(cli_run_dir(cli), CTLC_FOREVER, &c);
	if (rc < 0) {
		fprintf(stderr,
			"tandemadm: events: tandemd is not running (cannot connect to "
			"%s/" CTLC_SOCK_NAME ": %s)\n",
			cli_run_dir(cli), strerror(-rc));
		return EXIT_NO_DAEMON;
	}
	req = request("events", NULL);
	json_object_object_add(req, "now", json_object_new_boolean(now));
	rc = ctlc_send(c, req, CTLC_FOREVER);
	json_object_put(req);
	if (rc == 0)
		rc = ctlc_recv(c, CTLC_FOREVER, &ev); /* {"ok":true} */
	if (rc < 0) {
		fprintf(stderr, "tandemadm: events: tandemd closed the connection\n");
		ctlc_close(c);
		return EXIT_EXEC;
	}
	if (!resp_ok(ev, cli, &rc)) { /* e.g. "only root may control tandemd" */
		json_object_put(ev);
		ctlc_close(c);
		return rc;
	}
	json_object_put(ev);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* until tandemd closes; a line that is not JSON is skipped */
	while ((rc = ctlc_recv(c, CTLC_FOREVER, &ev)) == 0 || rc == -EPROTO) {
		if (ev)
			print_event(ev, json);
		json_object_put(ev);
	}
	ctlc_close(c);
	return EXIT_OK;
}
