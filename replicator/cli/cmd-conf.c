/* tandemadm: configuration verbs (dump, sh-*). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_dump(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	struct conf *c;
	bool json = false;
	int opt, rc, i;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "j", longopts, NULL)) != -1) {
		if (opt != 'j') {
			fprintf(stderr, "usage: tandemadm dump [--json] [RES...]\n");
			return EXIT_USAGE;
		}
		json = true;
	}
	rc = cli_load_conf(cli, &c);
	if (rc)
		return rc;
	for (i = optind; i < argc; i++) {
		if (strcmp(argv[i], "all") == 0) {
			optind = argc;
			break;
		}
		if (!conf_find_res(c, argv[i])) {
			fprintf(stderr, "tandemadm: '%s' is not defined in %s\n", argv[i],
				conf_file(c));
			conf_free(c);
			return EXIT_CONFIG;
		}
	}
	rc = json ? conf_dump_json(c, (const char *const *)argv + optind,
				   (unsigned int)(argc - optind), stdout)
		  : conf_dump(c, (const char *const *)argv + optind, (unsigned int)(argc - optind),
			      stdout);
	conf_free(c);
	if (fflush(stdout) != 0 || rc < 0) {
		fprintf(stderr, "tandemadm: dump: cannot write the output: %s\n",
			strerror(rc < 0 ? -rc : errno));
		return EXIT_EXEC;
	}
	return EXIT_OK;
}

static void sh_vol(const char *verb, const struct conf_host *h, const struct conf_vol *v)
{
	if (!strcmp(verb, "sh-dev")) {
		if (v->device)
			printf("%s\n", v->device);
		else
			printf("/dev/drbd%d\n", v->minor);
	} else if (!strcmp(verb, "sh-ll-dev")) {
		printf("%s\n", v->disk);
	} else if (!strcmp(verb, "sh-md-dev")) {
		printf("%s\n", v->md == CONF_MD_INTERNAL ? v->disk : v->md_dev);
	} else if (!strcmp(verb, "sh-md-idx")) {
		if (v->md == CONF_MD_INDEXED)
			printf("%d\n", v->md_index);
		else
			printf("%s\n", v->md == CONF_MD_INTERNAL ? "internal" : "flexible");
	} else if (!strcmp(verb, "sh-minor")) {
		printf("%d\n", v->minor);
	} else if (!strcmp(verb, "sh-ip")) {
		printf("%s\n", h->addr.ip);
	}
}

int cmd_sh(struct cli *cli, int argc, char **argv)
{
	const struct conf_res *r;
	const struct conf_vol *v;
	struct conf *c;
	const char *sep = "";
	int rc, i;

	if (strcmp(cli->verb, "sh-resources") == 0) {
		if (argc != 1) {
			fprintf(stderr, "usage: tandemadm sh-resources\n");
			return EXIT_USAGE;
		}
		rc = cli_load_conf(cli, &c);
		if (rc)
			return rc;
		for (r = conf_resources(c); r; r = r->next) {
			if (r->me) {
				printf("%s%s", sep, r->name);
				sep = " ";
			}
		}
		printf("\n");
		conf_free(c);
		return EXIT_OK;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: tandemadm %s RES...\n", cli->verb);
		return EXIT_USAGE;
	}
	rc = cli_load_conf(cli, &c);
	if (rc)
		return rc;
	for (i = 1; i < argc; i++) {
		r = cli_local_res(cli, c, argv[i], &rc);
		if (!r)
			break;
		for (v = r->me->vols; v; v = v->next)
			sh_vol(cli->verb, r->me, v);
	}
	conf_free(c);
	return rc;
}
