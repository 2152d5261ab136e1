/*
 * tandemd: the tandem daemon, one per node, serving every resource of the
 * configuration for this node.
 *
 * This build checks and reports the configuration (-t). The data path
 * (metadata, NBD export, replication) is added by the following work
 * items; until then the daemon refuses to start rather than pretend.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "conf.h"
#include "log.h"

#define DEFAULT_CONFIG "/etc/tandem.conf"

static void usage(FILE *f)
{
	fprintf(f, "usage: tandemd [-c FILE] [--node NAME] [-f] [-t] [-v]\n\n"
		   "  -c, --config FILE  configuration (default %s)\n"
		   "  -n, --node NAME    act as host NAME instead of `uname -n`\n"
		   "  -t, --test-config  check the configuration, list this node's resources, "
		   "exit\n"
		   "  -f, --foreground   stay in the foreground, log to stderr\n"
		   "  -v, --verbose      debug logging\n"
		   "  -V, --version      print the version\n\n"
		   "See tandemd(8).\n",
		DEFAULT_CONFIG);
}

static int test_config(const struct conf *c)
{
	const struct conf_res *r;
	const struct conf_vol *v;
	unsigned int n = 0;

	for (r = conf_resources(c); r; r = r->next) {
		if (!r->me)
			continue;
		n++;
		for (v = r->me->vols; v; v = v->next)
			log_res(LOG_INFO, r->name, "volume %u: disk %s, peer %s %s:%u", v->vnr,
				v->disk, r->peer && r->peer->n_names ? r->peer->names[0] : "(floating)",
				r->peer ? r->peer->addr.ip : "-", r->peer ? r->peer->addr.port : 0);
	}
	log_info("%s: configuration OK, %u resource%s for node %s", conf_file(c), n,
		 n == 1 ? "" : "s", conf_hostname(c));
	return EX_OK;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'}, {"node", required_argument, NULL, 'n'},
		{"test-config", no_argument, NULL, 't'},  {"foreground", no_argument, NULL, 'f'},
		{"verbose", no_argument, NULL, 'v'},      {"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	struct log_opts lo = {.ident = "tandemd", .to_stderr = true, .level = LOG_INFO};
	struct conf_load_opts co = {0};
	const char *path = DEFAULT_CONFIG;
	bool test = false;
	struct conf *c;
	struct diag *d;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "c:n:tfvVh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			path = optarg;
			break;
		case 'n':
			co.hostname = optarg;
			break;
		case 't':
			test = true;
			break;
		case 'f':
			break;
		case 'v':
			lo.level = LOG_DEBUG;
			break;
		case 'V':
			printf("tandemd %s\n", PACKAGE_VERSION);
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
		fprintf(stderr, "tandemd: unexpected argument '%s'\n", argv[optind]);
		return EX_USAGE;
	}
	if (log_init(&lo) < 0 || diag_new(&d) < 0) {
		fprintf(stderr, "tandemd: cannot set up logging\n");
		return EX_OSERR;
	}
	rc = conf_load(path, &co, d, &c);
	diag_print(d, stderr);
	diag_free(d);
	if (rc < 0) {
		log_err("%s: configuration not loaded (%s); nothing started", path,
			rc == -EINVAL ? "see the errors above" : strerror(-rc));
		log_fini();
		return EX_CONFIG;
	}
	if (test) {
		rc = test_config(c);
	} else {
		log_err("this build of tandemd has no data path yet; only 'tandemd -t' is "
			"available");
		rc = EX_UNAVAILABLE;
	}
	conf_free(c);
	log_fini();
	return rc;
}
