/*
 * tandemadm sb-list | sb-show | sb-discard: the split-brain save sets of a
 * resource (doc/split-brain-saves.md). They read the state directory
 * directly, so they work whether tandemd runs or not.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "sbsave.h"

#define DEFAULT_STATE_DIR "/var/lib/tandem"

const char *cli_state_dir(const struct cli *cli)
{
	if (cli->state_dir)
		return cli->state_dir;
	if (getenv("TANDEM_STATE_DIR") && *getenv("TANDEM_STATE_DIR"))
		return getenv("TANDEM_STATE_DIR");
	return DEFAULT_STATE_DIR;
}

static void fmt_time(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (!t || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "-");
}

static void fmt_gi(const struct gi *g, char *buf, size_t len)
{
	snprintf(buf, len, "%016llX:%016llX:%016llX:%016llX", (unsigned long long)g->uuid[0],
		 (unsigned long long)g->uuid[1], (unsigned long long)g->uuid[2],
		 (unsigned long long)g->uuid[3]);
}

static json_object *info_json(const char *path, const struct sbsave_info *i, int err,
			      const char *reason)
{
	json_object *o = json_object_new_object(), *ra;
	char t[40], g[80];
	size_t k;

	json_object_object_add(o, "name", json_object_new_string(strrchr(path, '/') + 1));
	json_object_object_add(o, "path", json_object_new_string(path));
	if (!i) {
		json_object_object_add(o, "state", json_object_new_string("broken"));
		json_object_object_add(o, "error", json_object_new_string(*reason ? reason
										  : strerror(-err)));
		return o;
	}
	json_object_object_add(o, "state", json_object_new_string(i->complete ? "complete"
									       : "partial"));
	json_object_object_add(o, "volume", json_object_new_int((int)i->volume));
	fmt_time(i->created, t, sizeof(t));
	json_object_object_add(o, "created", json_object_new_string(t));
	json_object_object_add(o, "node", json_object_new_string(i->node));
	json_object_object_add(o, "peer", json_object_new_string(i->peer));
	json_object_object_add(o, "policy", json_object_new_string(i->policy));
	fmt_gi(&i->local, g, sizeof(g));
	json_object_object_add(o, "local_uuids", json_object_new_string(g));
	fmt_gi(&i->peer_uuids, g, sizeof(g));
	json_object_object_add(o, "peer_uuids", json_object_new_string(g));
	json_object_object_add(o, "device_size", json_object_new_uint64(i->device_size));
	json_object_object_add(o, "saved_bytes", json_object_new_uint64(i->total_bytes));
	ra = json_object_new_array();
	for (k = 0; k < i->n_ranges; k++) {
		json_object *r = json_object_new_object();

		json_object_object_add(r, "offset", json_object_new_uint64(i->ranges[k].offset));
		json_object_object_add(r, "length", json_object_new_uint64(i->ranges[k].length));
		json_object_array_add(ra, r);
	}
	json_object_object_add(o, "ranges", ra);
	return o;
}

struct list_ctx {
	json_object *arr;
	bool json;
	unsigned int n;
};

static int list_one(void *arg, const char *path, const struct sbsave_info *i, int err,
		    const char *reason)
{
	struct list_ctx *l = arg;
	char t[40];

	l->n++;
	if (l->json) {
		json_object_array_add(l->arr, info_json(path, i, err, reason));
		return 0;
	}
	if (l->n == 1)
		printf("%-28s %-8s %3s %12s %-20s %-10s %s\n", "SET", "STATE", "VOL", "SAVED_KIB",
		       "CREATED", "PEER", "POLICY");
	if (!i) {
		printf("%-28s %-8s %s\n", strrchr(path, '/') + 1, "broken",
		       *reason ? reason : strerror(-err));
		return 0;
	}
	fmt_time(i->created, t, sizeof(t));
	printf("%-28s %-8s %3u %12llu %-20s %-10s %s\n", strrchr(path, '/') + 1,
	       i->complete ? "complete" : "partial", i->volume,
	       (unsigned long long)i->total_bytes / 1024, t, *i->peer ? i->peer : "-",
	       *i->policy ? i->policy : "-");
	return 0;
}

/* Options [--json], then RES (and SET for sb-show/sb-discard). */
static int parse(struct cli *cli, int argc, char **argv, int nargs, bool *json, char *resdir,
		 size_t len)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "j", longopts, NULL)) != -1) {
		if (opt != 'j') {
			fprintf(stderr, "tandemadm %s: run 'tandemadm help' for the usage\n",
				cli->verb);
			return EXIT_USAGE;
		}
		*json = true;
	}
	if (argc - optind != nargs) {
		fprintf(stderr, "tandemadm %s: expected %s\n", cli->verb,
			nargs == 1 ? "RES" : "RES SET (a name from 'tandemadm sb-list RES')");
		return EXIT_USAGE;
	}
	rc = sbsave_resdir(cli_state_dir(cli), argv[optind], resdir, len);
	if (rc < 0) {
		fprintf(stderr, "tandemadm %s: '%s' is not a resource name\n", cli->verb,
			argv[optind]);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* RESDIR/SET, refusing anything but a save set's name. */
static int set_path(struct cli *cli, const char *resdir, const char *set, char *buf, size_t len)
{
	if (!sbsave_parse_name(set, NULL, NULL)) {
		fprintf(stderr, "tandemadm %s: '%s' is not a save set name (sb-YYYYMMDDTHHMMSSZ-vN); "
				"'tandemadm sb-list RES' lists them\n",
			cli->verb, set);
		return EXIT_USAGE;
	}
	if ((size_t)snprintf(buf, len, "%s/%s", resdir, set) >= len)
		return EXIT_USAGE;
	return EXIT_OK;
}

int cmd_sb(struct cli *cli, int argc, char **argv)
{
	char resdir[PATH_MAX], path[PATH_MAX], reason[SBSAVE_REASON_MAX] = "";
	bool json = false, list = !strcmp(cli->verb, "sb-list");
	struct sbsave_info *info = NULL;
	int rc;

	rc = parse(cli, argc, argv, list ? 1 : 2, &json, resdir, sizeof(resdir));
	if (rc != EXIT_OK)
		return rc;
	if (list) {
		struct list_ctx l = {.arr = json_object_new_array(), .json = json};

		rc = sbsave_list(resdir, list_one, &l);
		if (rc < 0) {
			json_object_put(l.arr);
			fprintf(stderr, "tandemadm sb-list: cannot read %s: %s\n", resdir,
				strerror(-rc));
			return EXIT_EXEC;
		}
		if (json)
			printf("%s\n", json_object_to_json_string_ext(l.arr, JSON_C_TO_STRING_PRETTY));
		else if (!l.n)
			printf("no split-brain save sets in %s\n", resdir);
		json_object_put(l.arr);
		return EXIT_OK;
	}
	rc = set_path(cli, resdir, argv[optind + 1], path, sizeof(path));
	if (rc != EXIT_OK)
		return rc;
	if (!strcmp(cli->verb, "sb-discard")) {
		rc = sbsave_discard(path, reason, sizeof(reason));
		if (rc < 0) {
			fprintf(stderr, "tandemadm sb-discard: %s: %s; nothing was removed\n", path,
				*reason ? reason : strerror(-rc));
			return rc == -ENOENT ? EXIT_USAGE : EXIT_EXEC;
		}
		printf("removed %s\n", path);
		return EXIT_OK;
	}
	rc = sbsave_load(path, &info, reason, sizeof(reason));
	if (rc < 0 && rc != -EINVAL) {
		fprintf(stderr, "tandemadm sb-show: %s: %s\n", path, strerror(-rc));
		return EXIT_USAGE;
	}
	if (json) {
		json_object *o = info_json(path, info, rc, reason);

		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
		json_object_put(o);
	} else if (!info) {
		printf("set:      %s\nstate:    broken: %s\n", path, reason);
	} else {
		char t[40], g[80];
		size_t k;

		fmt_time(info->created, t, sizeof(t));
		printf("set:      %s\nstate:    %s\nresource: %s/%u\ncreated:  %s\n", path,
		       info->complete ? "complete" : "partial (saving did not finish)",
		       info->resource, info->volume, t);
		printf("node:     %s (its changes lost)\npeer:     %s (its data won)\n", info->node,
		       info->peer);
		printf("policy:   %s\n", *info->policy ? info->policy : "-");
		fmt_gi(&info->local, g, sizeof(g));
		printf("uuids:    %s (this node, at the handshake)\n", g);
		fmt_gi(&info->peer_uuids, g, sizeof(g));
		printf("peer:     %s\n", g);
		printf("device:   %llu bytes; saved %llu bytes in %zu range%s (offset length):\n",
		       (unsigned long long)info->device_size,
		       (unsigned long long)info->total_bytes, info->n_ranges,
		       info->n_ranges == 1 ? "" : "s");
		for (k = 0; k < info->n_ranges; k++)
			printf("  %llu %llu\n", (unsigned long long)info->ranges[k].offset,
			       (unsigned long long)info->ranges[k].length);
		printf("image:    %s/" SBSAVE_IMAGE " (see doc/split-brain-saves.md to merge)\n",
		       path);
	}
	sbsave_info_free(info);
	return rc < 0 ? EXIT_EXEC : EXIT_OK;
}
