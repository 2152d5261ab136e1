/*
 * tandemadm arbiter [--json]: tandem-arbiterd's table of facts
 * (doc/arbiter.md §7, the `show` request on RUNDIR/arbiter.sock): the
 * nodes of the cluster with their membership, this partition's quorum and
 * ring, and one line per (node, resource) record with its age.
 */
#include "config.h"

#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "arbc.h"
#include "cli.h"
#include "ctlc.h"
#include "state.h"

static json_object *get(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A field as text: a string as it is, a boolean as yes/no, a number. */
static const char *text(json_object *o, const char *key, char *buf, size_t len)
{
	json_object *v = get(o, key);

	if (!v || json_object_is_type(v, json_type_null))
		return "-";
	if (json_object_is_type(v, json_type_boolean))
		return json_object_get_boolean(v) ? "yes" : "no";
	if (json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	snprintf(buf, len, "%s", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	return buf;
}

/* A state field: its name, also when the arbiter sends the number of
 * lib/state.h. */
static const char *state_text(json_object *o, const char *key, char *buf, size_t len)
{
	json_object *v = get(o, key);
	int n;

	if (!v || !json_object_is_type(v, json_type_int))
		return text(o, key, buf, len);
	n = json_object_get_int(v);
	if (!strcmp(key, "role") && n >= ROLE_UNKNOWN && n <= ROLE_SECONDARY)
		return state_role_name((enum state_role)n);
	if (!strcmp(key, "connection") && n >= CONN_STANDALONE && n <= CONN_BEHIND)
		return state_conn_name((enum state_conn)n);
	if ((!strcmp(key, "disk") || !strcmp(key, "peer_disk")) && n >= DISK_DISKLESS &&
	    n <= DISK_UPTODATE)
		return state_disk_name((enum state_disk)n);
	return text(o, key, buf, len);
}

static bool flag(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return v && json_object_get_boolean(v);
}

static void print_table(json_object *resp)
{
	json_object *nodes = get(resp, "nodes"), *recs = get(resp, "records"), *n;
	char b1[64], b2[64], b3[64], b4[64], b5[64], b6[64], age[32];
	size_t i, len;

	printf("tandem-arbiterd on %s (node %s): %s, ring %s, token %s ms\n",
	       text(resp, "name", b1, sizeof(b1)), text(resp, "self", b2, sizeof(b2)),
	       flag(resp, "quorate") ? "quorate" : "NOT quorate",
	       text(resp, "ring", b3, sizeof(b3)), text(resp, "token_ms", b4, sizeof(b4)));
	len = nodes && json_object_is_type(nodes, json_type_array) ? json_object_array_length(nodes)
								   : 0;
	printf("\nnodes:\n  %-6s %-20s %-7s %-8s %-7s %s\n", "id", "name", "ring", "arbiter",
	       "fenced", "left");
	for (i = 0; i < len; i++) {
		const char *left;

		n = json_object_array_get_idx(nodes, i);
		left = text(n, "left", b3, sizeof(b3));
		printf("  %-6s %-20s %-7s %-8s %-7s %s\n", text(n, "nodeid", b1, sizeof(b1)),
		       text(n, "name", b2, sizeof(b2)), flag(n, "ring") ? "yes" : "no",
		       flag(n, "arbiter") ? "yes" : "no", flag(n, "fenced") ? "yes" : "no",
		       left[0] ? left : "-");
	}
	if (!len)
		printf("  (none)\n");
	len =
	    recs && json_object_is_type(recs, json_type_array) ? json_object_array_length(recs) : 0;
	printf("\nrecords:\n  %-20s %-16s %-10s %-12s %-14s %-12s %-6s %s\n", "node", "resource",
	       "role", "disk", "connection", "peer disk", "fresh", "age");
	for (i = 0; i < len; i++) {
		json_object *a;

		n = json_object_array_get_idx(recs, i);
		a = get(n, "age_ms");
		if (a && json_object_is_type(a, json_type_int))
			snprintf(age, sizeof(age), "%.1f s",
				 (double)json_object_get_int64(a) / 1000);
		else
			snprintf(age, sizeof(age), "-");
		printf("  %-20s %-16s %-10s %-12s %-14s %-12s %-6s %s\n",
		       text(n, "node", b1, sizeof(b1)),
		       text(n, "resource", b2, sizeof(b2)), state_text(n, "role", b3, sizeof(b3)),
		       state_text(n, "disk", b4, sizeof(b4)), state_text(n, "connection", b5, sizeof(b5)),
		       state_text(n, "peer_disk", b6, sizeof(b6)), flag(n, "fresh") ? "fresh" : "stale",
		       age);
	}
	if (!len)
		printf("  (none)\n");
}

int cmd_arbiter(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {NULL, 0, NULL, 0},
	};
	json_object *req, *resp = NULL, *v;
	bool json = false;
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (opt != 'j')
			return EXIT_USAGE;
		json = true;
	}
	if (optind != argc) {
		fprintf(stderr, "usage: tandemadm arbiter [--json]\n");
		return EXIT_USAGE;
	}
	req = arbc_request("show", NULL);
	if (!req)
		return EXIT_NOMEM;
	rc = arbc_call(cli_run_dir(cli), req, ARBC_TIMEOUT_MS, &resp);
	json_object_put(req);
	if (rc < 0 && ctlc_no_daemon(rc)) {
		fprintf(stderr,
			"tandemadm arbiter: tandem-arbiterd is not running on this node "
			"(%s/" CTLC_ARBITER_SOCK_NAME "): start it with systemctl start "
			"tandem-arbiterd\n",
			cli_run_dir(cli));
		return EXIT_NO_DAEMON;
	}
	if (rc < 0) {
		fprintf(stderr,
			"tandemadm arbiter: tandem-arbiterd (%s/" CTLC_ARBITER_SOCK_NAME "): %s\n",
			cli_run_dir(cli), ctlc_strerror(rc));
		return EXIT_NO_DAEMON;
	}
	if (!(v = get(resp, "ok")) || !json_object_get_boolean(v)) {
		fprintf(stderr, "tandemadm arbiter: tandem-arbiterd refused: %s\n",
			(v = get(resp, "error")) ? json_object_get_string(v) : "no reason given");
		rc = (v = get(resp, "exit")) && json_object_get_int(v) > 0 ? json_object_get_int(v)
									   : EXIT_EXEC;
		json_object_put(resp);
		return rc;
	}
	if (json)
		printf("%s\n", json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PRETTY));
	else
		print_table(resp);
	json_object_put(resp);
	return EXIT_OK;
}
