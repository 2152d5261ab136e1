/*
 * fence-handler: options, lock and local state shared by the two fence
 * handlers. The options are crm-fence-peer's where they mean the same
 * (--timeout, --dc-timeout, --network-hickup, --role, --master-id as an
 * alias of --id); the crm-fence-peer options that have no meaning here
 * are accepted with a warning, so that a handlers section written for
 * DRBD keeps working when only the path changes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "fence-handler.h"

#define CTL_TIMEOUT_MS 5000

enum {
	OPT_HICKUP = 256,
	OPT_LOCK_TIMEOUT,
	OPT_RUN_DIR,
	OPT_UNREACHABLE,
	OPT_IGNORED,     /* crm-fence-peer flags without meaning here */
	OPT_IGNORED_ARG, /* ... and those with an argument */
	OPT_FENCING_ATTRIBUTE,
	OPT_LIST,
	OPT_CLEAR,
};

static const struct option longopts[] = {
	{"resource", required_argument, NULL, 'r'},
	{"id", required_argument, NULL, 'i'},
	{"master-id", required_argument, NULL, 'i'},
	{"node", required_argument, NULL, 'n'},
	{"peer", required_argument, NULL, 'P'},
	{"role", required_argument, NULL, 'l'},
	{"timeout", required_argument, NULL, 't'},
	{"dc-timeout", required_argument, NULL, 'd'},
	{"network-hickup", required_argument, NULL, OPT_HICKUP},
	{"net-hickup", required_argument, NULL, OPT_HICKUP},
	{"lock-timeout", required_argument, NULL, OPT_LOCK_TIMEOUT},
	{"flock-timeout", required_argument, NULL, OPT_LOCK_TIMEOUT},
	{"run-dir", required_argument, NULL, OPT_RUN_DIR},
	{"unreachable-peer-is-outdated", no_argument, NULL, OPT_UNREACHABLE},
	{"fencing-attribute", required_argument, NULL, OPT_FENCING_ATTRIBUTE},
	{"quiet", no_argument, NULL, 'q'},
	{"list", no_argument, NULL, OPT_LIST},
	{"clear", no_argument, NULL, OPT_CLEAR},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{"logfacility", required_argument, NULL, OPT_IGNORED_ARG},
	{"id-prefix", required_argument, NULL, OPT_IGNORED_ARG},
	{"lock-dir", required_argument, NULL, OPT_IGNORED_ARG},
	{"lock-file", required_argument, NULL, OPT_IGNORED_ARG},
	{"flock-required", no_argument, NULL, OPT_IGNORED},
	{"CTS-mode", no_argument, NULL, OPT_IGNORED},
	{"suicide-on-failure-if-primary", no_argument, NULL, OPT_IGNORED},
	{"unfence-only-if-owner-match", no_argument, NULL, OPT_IGNORED},
	{NULL, 0, NULL, 0},
};

static void usage(const struct fence_handler_opts *o, FILE *f)
{
	fprintf(f,
		"usage: %s [OPTIONS]\n"
		"  tandemd runs it as a handler, with DRBD_RESOURCE, DRBD_PEERS and TANDEM_*\n"
		"  in the environment (see %s(8) and doc/fence-handlers.md)\n\n"
		"  -r, --resource RES       the tandem resource (default $DRBD_RESOURCE)\n"
		"  -i, --id CLONE           the promotable clone (default: found in the CIB)\n"
		"  -n, --node NAME          this node's Pacemaker name (default `uname -n`)\n"
		"  -P, --peer NAME          the peer's (default first of $DRBD_PEERS)\n"
		"  -l, --role ROLE          Promoted or Master (default: by the CIB schema)\n"
		"  -t, --timeout S          wait for the peer to be definite (default 90)\n"
		"  -d, --dc-timeout S       wait for a DC and the CIB (default 20)\n"
		"      --network-hickup S   wait for the link if the peer is alive (default 0)\n"
		"      --lock-timeout S     wait for another run on this resource (default 120)\n"
		"      --run-dir DIR        tandemd's run directory (default $TANDEM_RUN_DIR)\n"
		"      --unreachable-peer-is-outdated  (only from a terminal) place the\n"
		"                           constraint while only Consistent\n"
		"  -q, --quiet              only print what changes and errors\n"
		"      --list               (tandem-fence-peer) list the fence constraints of\n"
		"                           all resources, stale or needed\n"
		"      --clear              (tandem-fence-peer) ... and remove the stale ones\n",
		o->prog, o->prog);
}

static int seconds(const struct fence_handler_opts *o, const char *what, const char *v,
		   unsigned int *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || (*end && strcmp(end, "s")) || n < 0 || n > 86400) {
		fprintf(stderr, "%s: %s %s: not a number of seconds (0..86400)\n", o->prog, what,
			v);
		return -EINVAL;
	}
	*out = (unsigned int)n;
	return 0;
}

/* A timeout from the environment; a bad value is an error, as on the
 * command line: a handler that silently waits longer or shorter than
 * configured is worse than one that fails loudly. */
static int env_seconds(const struct fence_handler_opts *o, const char *var, unsigned int *out)
{
	const char *v = getenv(var);

	if (v && *v && seconds(o, var, v, out) < 0) {
		fprintf(stderr, "%s: fix or unset %s in the environment\n", o->prog, var);
		return -EINVAL;
	}
	return 0;
}

static void first_word(char *dst, size_t len, const char *src)
{
	size_t n;

	src += strspn(src, " \t");
	n = strcspn(src, " \t");
	snprintf(dst, len, "%.*s", (int)(n < len ? n : len - 1), src);
}

int fence_handler_parse(struct fence_handler_opts *o, int argc, char **argv)
{
	const char *slash = strrchr(argv[0], '/'), *v;
	struct utsname u;
	int opt, idx = 0;

	memset(o, 0, sizeof(*o));
	o->prog = slash ? slash + 1 : argv[0];
	o->res = getenv("DRBD_RESOURCE");
	o->clone_id = getenv("TANDEM_FENCE_CLONE");
	o->run_dir = getenv("TANDEM_RUN_DIR");
	o->timeout = 90;
	o->dc_timeout = 20;
	o->lock_timeout = 120;
	if (env_seconds(o, "TANDEM_FENCE_TIMEOUT", &o->timeout) < 0 ||
	    env_seconds(o, "TANDEM_FENCE_DC_TIMEOUT", &o->dc_timeout) < 0 ||
	    env_seconds(o, "TANDEM_FENCE_NETWORK_HICKUP", &o->hickup) < 0 ||
	    env_seconds(o, "TANDEM_FENCE_LOCK_TIMEOUT", &o->lock_timeout) < 0)
		return 1;
	if ((v = getenv("TANDEM_FENCE_NODE")) && *v)
		snprintf(o->me, sizeof(o->me), "%s", v);
	else if (uname(&u) == 0)
		snprintf(o->me, sizeof(o->me), "%s", u.nodename);
	if ((v = getenv("DRBD_PEERS")) && *v)
		first_word(o->peer, sizeof(o->peer), v);
	else if ((v = getenv("DRBD_PEER")) && *v)
		first_word(o->peer, sizeof(o->peer), v);

	optind = 1;
	while ((opt = getopt_long(argc, argv, "r:i:n:P:l:t:d:qhV", longopts, &idx)) != -1) {
		int rc = 0;

		switch (opt) {
		case 'r':
			o->res = optarg;
			break;
		case 'i':
			o->clone_id = optarg;
			break;
		case 'n':
			snprintf(o->me, sizeof(o->me), "%s", optarg);
			break;
		case 'P':
			snprintf(o->peer, sizeof(o->peer), "%s", optarg);
			break;
		case 'l':
			o->role = optarg;
			break;
		case 't':
			rc = seconds(o, "--timeout", optarg, &o->timeout);
			break;
		case 'd':
			rc = seconds(o, "--dc-timeout", optarg, &o->dc_timeout);
			break;
		case OPT_HICKUP:
			rc = seconds(o, "--network-hickup", optarg, &o->hickup);
			break;
		case OPT_LOCK_TIMEOUT:
			rc = seconds(o, "--lock-timeout", optarg, &o->lock_timeout);
			break;
		case OPT_RUN_DIR:
			o->run_dir = optarg;
			break;
		case OPT_UNREACHABLE:
			/* as crm-fence-peer: an operator's decision, never a config's */
			o->unreachable_is_outdated = isatty(0);
			if (!o->unreachable_is_outdated)
				fprintf(stderr, "%s: --unreachable-peer-is-outdated is only honoured "
						"from a terminal; ignored\n",
					o->prog);
			break;
		case OPT_FENCING_ATTRIBUTE:
			if (strcmp(optarg, "#uname")) {
				fprintf(stderr, "%s: --fencing-attribute %s: only #uname is "
						"supported\n",
					o->prog, optarg);
				rc = -EINVAL;
			}
			break;
		case OPT_IGNORED:
		case OPT_IGNORED_ARG:
			fprintf(stderr, "%s: ignoring crm-fence-peer option --%s (see %s(8))\n",
				o->prog, longopts[idx].name, o->prog);
			break;
		case 'q':
			o->quiet = true;
			break;
		case OPT_LIST:
			o->list = true;
			break;
		case OPT_CLEAR:
			o->list = o->clear = true;
			break;
		case 'h':
			usage(o, stdout);
			return 0;
		case 'V':
			printf("%s %s\n", o->prog, PACKAGE_VERSION);
			return 0;
		default:
			usage(o, stderr);
			return 1;
		}
		if (rc < 0)
			return 1;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", o->prog, argv[optind]);
		return 1;
	}
	if (!o->run_dir || !*o->run_dir)
		o->run_dir = "/run/tandem";
	if (o->list)
		return -1; /* all resources: no DRBD_RESOURCE needed */
	if (!o->res || !*o->res) {
		fprintf(stderr, "%s: no resource: DRBD_RESOURCE is not set (tandemd sets it for "
				"handlers) and there is no --resource\n",
			o->prog);
		return 1;
	}
	if (!o->me[0]) {
		fprintf(stderr, "%s: cannot tell this node's name: use --node\n", o->prog);
		return 1;
	}
	return -1;
}

int fence_handler_lock(const struct fence_handler_opts *o)
{
	char path[4096];
	long long waited = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/fence-%s.lock", o->run_dir, o->res);
	for (char *p = path + strlen(o->run_dir) + 1; *p; p++)
		if (*p == '/')
			*p = '_';
	mkdir(o->run_dir, 0700);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		fence_handler_say(o, "warning: cannot open the lock %s: %s; going on without it",
				  path, strerror(errno));
		return -1;
	}
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			fence_handler_say(o, "warning: cannot lock %s: %s; going on without it",
					  path, strerror(errno));
			break;
		}
		if (waited >= (long long)o->lock_timeout * 10) {
			fence_handler_say(o, "warning: %s is still locked after %u s; going on "
					     "without it",
					  path, o->lock_timeout);
			break;
		}
		usleep(100000);
		waited++;
	}
	return fd;
}

static const char *env_or_empty(const char *var)
{
	const char *v = getenv(var);

	return v ? v : "";
}

const char *fence_handler_local(const struct fence_handler_opts *o, struct fence_ctl_res *st)
{
	int rc = fence_ctl_status(o->run_dir, o->res, CTL_TIMEOUT_MS, st);

	if (rc == 0)
		return "tandemd";
	if (rc == -ENOENT) {
		fence_handler_say(o, "tandemd has no resource %s", o->res);
		memset(st, 0, sizeof(*st));
		return NULL;
	}
	if (!o->quiet)
		fence_handler_say(o, "cannot ask tandemd (%s/tandemd.sock): %s; using the "
				     "environment",
				  o->run_dir, fence_ctl_error(rc));
	rc = fence_ctl_from_env(st);
	if (rc == 0)
		return "environment";
	if (rc == -EINVAL)
		fence_handler_say(o, "TANDEM_DISK='%s', TANDEM_PEER_DISK='%s': not DRBD disk "
				     "states (UpToDate, Outdated, DUnknown, ...)",
				  env_or_empty("TANDEM_DISK"), env_or_empty("TANDEM_PEER_DISK"));
	else
		fence_handler_say(o, "the disk states are not known: tandemd cannot be asked "
				     "and TANDEM_DISK is not set (is tandemd running?)");
	memset(st, 0, sizeof(*st));
	return NULL;
}

void fence_handler_say(const struct fence_handler_opts *o, const char *fmt, ...)
{
	va_list ap;

	printf("%s: %s: ", o->prog, o->res ? o->res : "?");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static long long elapsed_ns(void)
{
	static struct timespec t0;
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	if (!t0.tv_sec && !t0.tv_nsec)
		t0 = t;
	return (long long)(t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec);
}

long long fence_handler_elapsed(void)
{
	/* whole seconds of real elapsed time: tv_sec alone would count a
	 * second that has barely begun, and cut --timeout short by up to 1 s */
	return elapsed_ns() / 1000000000LL;
}

long long fence_handler_elapsed_ms(void)
{
	return elapsed_ns() / 1000000LL;
}

const char *fence_handler_disk_name(enum fence_disk d)
{
	switch (d) {
	case FENCE_DISK_NONE:
		return "unknown";
	case FENCE_DISK_WORSE:
		return "Inconsistent or worse";
	case FENCE_DISK_OUTDATED:
		return "Outdated";
	case FENCE_DISK_DUNKNOWN:
		return "DUnknown";
	case FENCE_DISK_CONSISTENT:
		return "Consistent";
	case FENCE_DISK_UPTODATE:
		return "UpToDate";
	}
	return "?";
}
