/*
 * tandemd: the tandem daemon, one per node, serving every resource of the
 * configuration that has a host section for this node.
 *
 * Resources start down, as DRBD's do until `drbdadm up`: `tandemadm up`
 * attaches them. The control socket (doc/control-protocol.md) is served
 * on the event loop; each NBD connection has its own thread.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include "conf.h"
#include "log.h"
#include "control/control.h"
#include "front/nbd-srv.h"
#include "peer/peer.h"
#include "state/state-change.h"
#include "volume/volume.h"

#define DEFAULT_CONFIG  "/etc/tandem.conf"
#define DEFAULT_RUN_DIR "/run/tandem"
#define DEFAULT_STATE_DIR "/var/lib/tandem"

static void usage(FILE *f)
{
	fprintf(f, "usage: tandemd [-c FILE] [--node NAME] [--run-dir DIR] [--state-dir DIR] [-f] [-t] "
		   "[-v]\n\n"
		   "  -c, --config FILE  configuration (default %s)\n"
		   "  -n, --node NAME    act as host NAME instead of `uname -n`\n"
		   "  -r, --run-dir DIR  control socket, NBD sockets, pid file (default %s)\n"
		   "  -s, --state-dir DIR  split-brain save sets (default %s)\n"
		   "  -t, --test-config  check the configuration, list this node's resources, "
		   "exit\n"
		   "  -f, --foreground   stay in the foreground, log to stderr\n"
		   "  -v, --verbose      debug logging\n"
		   "  -V, --version      print the version\n\n"
		   "See tandemd(8).\n",
		DEFAULT_CONFIG, DEFAULT_RUN_DIR, DEFAULT_STATE_DIR);
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

static int32_t on_stop_signal(int32_t sig, void *data)
{
	struct tandemd *d = data;

	log_info("signal %d: taking the resources down and exiting", sig);
	qb_loop_stop(d->loop);
	return 0;
}

static int32_t on_hup(int32_t sig, void *data)
{
	struct tandemd *d = data;
	char msg[2048];

	log_info("SIGHUP: re-reading %s", d->conf_path);
	if (tandemd_reload(d, msg, sizeof(msg)) < 0)
		log_err("%s", msg);
	return 0;
}

/* Detach from the terminal and the caller's session; close what we inherited. */
static int daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	if (setsid() < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	if (chdir("/") < 0)
		return -errno;
	umask(077);
	fd = open("/dev/null", O_RDWR);
	if (fd < 0)
		return -errno;
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
	closefrom(3);
	return 0;
}

static int write_pid_file(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "%ld\n", (long)getpid());
	return fclose(f) == 0 ? 0 : -errno;
}

/* The calls that run against the arrows (tandemd.h): control answers them,
 * itself or through the room to the right that knows. */
static const struct upcalls upcalls = {
	.event = ctl_event,
	.both_uptodate = fence_both_uptodate,
	.device_open = resource_device_open,
	.replicating = peer_live,
	.volume_failed = resource_volume_failed,
	.volume_error_passed = resource_volume_error_passed,
	.handler_run = handler_run,
	.handler_run_wait = handler_run_wait,
	.fence_frozen = fence_frozen,
	.fence_wait = fence_wait,
	.conn_lost = fence_conn_lost,
	.conn_back = fence_conn_back,
	.demote_after_sb = resource_demote_after_sb,
};

static int run(struct tandemd *d)
{
	char path[4096];
	unsigned int i;
	const struct conf_res *cr;
	int rc;

	d->up = &upcalls;
	pthread_rwlock_init(&d->res_lock, NULL);
	for (cr = conf_resources(d->conf); cr; cr = cr->next)
		if (cr->me && tandemd_add_resource(d, cr) < 0)
			return EX_OSERR;
	if (mkdir(d->run_dir, 0700) < 0 && errno != EEXIST) {
		log_err("cannot create %s: %s", d->run_dir, strerror(errno));
		return EX_CANTCREAT;
	}
	d->loop = qb_loop_create();
	d->main_thread = pthread_self(); /* the loop's thread: handlers start there */
	if (!d->loop)
		return EX_OSERR;
	snprintf(path, sizeof(path), "%s/tandemd.sock", d->run_dir);
	rc = ctl_start(d, path, &d->ctl);
	if (rc < 0) {
		log_err("cannot listen on %s: %s (is another tandemd running?)", path,
			strerror(-rc));
		return EX_CANTCREAT;
	}
	rc = defer_start(d->loop, &d->defer);
	if (rc == 0)
		rc = handler_init(d);
	if (rc < 0) {
		log_err("cannot set up the main loop: %s", strerror(-rc));
		return EX_OSERR;
	}
	qb_loop_signal_add(d->loop, QB_LOOP_HIGH, SIGTERM, d, on_stop_signal, NULL);
	qb_loop_signal_add(d->loop, QB_LOOP_HIGH, SIGINT, d, on_stop_signal, NULL);
	qb_loop_signal_add(d->loop, QB_LOOP_HIGH, SIGHUP, d, on_hup, NULL);
	log_info("tandemd %s ready: %u resource%s, control socket %s", PACKAGE_VERSION, d->n_res,
		 d->n_res == 1 ? "" : "s", path);
	qb_loop_run(d->loop);

	for (i = 0; i < d->n_res; i++) {
		struct reply_err e = {0};

		if (resource_down(d->res[i], true, &e) < 0)
			log_res(LOG_ERR, d->res[i]->name, "could not be taken down cleanly: %s",
				e.msg);
	}
	defer_drain(d->defer); /* the events of the shutdown */
	for (i = 0; i < d->n_res; i++) {
		resource_fini(d->res[i]);
		free(d->res[i]);
	}
	ctl_stop(d->ctl);
	defer_stop(d->defer);
	qb_loop_destroy(d->loop);
	free(d->res);
	pthread_rwlock_destroy(&d->res_lock);
	for (i = 0; i < d->n_retired; i++)
		conf_free(d->retired[i]);
	free(d->retired);
	return EX_OK;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'}, {"node", required_argument, NULL, 'n'},
		{"run-dir", required_argument, NULL, 'r'}, {"test-config", no_argument, NULL, 't'},
		{"state-dir", required_argument, NULL, 's'},
		{"foreground", no_argument, NULL, 'f'},   {"verbose", no_argument, NULL, 'v'},
		{"version", no_argument, NULL, 'V'},      {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct log_opts lo = {.ident = "tandemd", .to_stderr = true, .level = LOG_INFO};
	struct tandemd d = {.conf_path = DEFAULT_CONFIG, .quorate = true};
	struct conf_load_opts *co = &d.conf_opts;
	bool test = false, foreground = false;
	char pidfile[4096];
	struct diag *diag;
	int opt, rc;

	co->warn_unauthenticated = true;
	d.run_dir = getenv("TANDEM_RUN_DIR") ? getenv("TANDEM_RUN_DIR") : DEFAULT_RUN_DIR;
	d.state_dir = getenv("TANDEM_STATE_DIR") ? getenv("TANDEM_STATE_DIR") : DEFAULT_STATE_DIR;
	d.fault_injection = getenv("TANDEM_FAULT_INJECTION") &&
			    !strcmp(getenv("TANDEM_FAULT_INJECTION"), "1");
	while ((opt = getopt_long(argc, argv, "c:n:r:s:tfvVh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			d.conf_path = optarg;
			break;
		case 'n':
			co->hostname = optarg;
			break;
		case 'r':
			d.run_dir = optarg;
			break;
		case 's':
			d.state_dir = optarg;
			break;
		case 't':
			test = true;
			break;
		case 'f':
			foreground = true;
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
	if (diag_new(&diag) < 0) {
		fprintf(stderr, "tandemd: out of memory\n");
		return EX_OSERR;
	}
	rc = conf_load(d.conf_path, co, diag, &d.conf);
	diag_print(diag, stderr);
	diag_free(diag);
	if (rc < 0) {
		fprintf(stderr, "tandemd: %s: configuration not loaded (%s); nothing started\n",
			d.conf_path, rc == -EINVAL ? "see the errors above" : strerror(-rc));
		return EX_CONFIG;
	}
	if (!test && !foreground) {
		rc = daemonize();
		if (rc < 0) {
			fprintf(stderr, "tandemd: cannot detach: %s\n", strerror(-rc));
			return EX_OSERR;
		}
		lo.to_stderr = false;
		lo.to_syslog = true;
	}
	if (log_init(&lo) < 0) {
		fprintf(stderr, "tandemd: cannot set up logging\n");
		return EX_OSERR;
	}
	if (test) {
		rc = test_config(d.conf);
	} else {
		/* NBD request buffers (up to 32 MiB) come and go all the time:
		 * keep them in the heap instead of an mmap and munmap each */
		mallopt(M_MMAP_THRESHOLD, 64 << 20);
		mallopt(M_TRIM_THRESHOLD, 256 << 20);
		snprintf(pidfile, sizeof(pidfile), "%s/tandemd.pid", d.run_dir);
		mkdir(d.run_dir, 0700);
		if (write_pid_file(pidfile) < 0)
			log_warn("cannot write %s", pidfile);
		rc = run(&d);
		unlink(pidfile);
	}
	conf_free(d.conf);
	log_fini();
	return rc;
}
