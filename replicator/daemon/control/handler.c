/*
 * handler: the handlers of a resource (handlers { fence-peer "..."; }),
 * run as child processes that never block the daemon.
 *
 * Each runs as `/bin/sh -c COMMAND` in its own session, with DRBD's
 * environment (DRBD_RESOURCE, DRBD_CONF, DRBD_MINOR, DRBD_VOLUME,
 * DRBD_LL_DISK, DRBD_PEER_ADDRESS, DRBD_PEER_AF, DRBD_PEERS) and the
 * TANDEM_* equivalents, so that scripts written for DRBD work unchanged.
 * Its standard output and error go to the log, line by line. When it
 * exits, the caller's callback gets DRBD's result, (status >> 8) & 0xff,
 * or 128 + the signal that killed it. As in drbdadm, a handler that is
 * not configured "succeeds" with 0, also through the callback.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "control/control.h"
#include "front/nbd-srv.h"
#include "peer/peer.h"
#include "state/state-change.h"
#include "volume/volume.h"

struct handler_child {
	struct tandemd *d;
	struct resource *r;
	char name[32];
	char res[128];
	pid_t pid;
	int out;          /* its stdout+stderr, -1 once closed */
	char line[512];
	size_t len;
	bool exited;
	int result;
	handler_done_fn done;
	void *arg;
	struct handler_child *next;
};

static struct handler_child *children;

static void child_line(struct handler_child *c)
{
	c->line[c->len] = '\0';
	if (c->len)
		log_res(LOG_INFO, c->res, "handler %s: %s", c->name, c->line);
	c->len = 0;
}

/* Both the exit status and the end of its output are in: report. */
static void child_finish(struct handler_child *c)
{
	struct handler_child **pp;

	if (!c->exited || c->out >= 0)
		return;
	for (pp = &children; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	log_res(c->result ? LOG_WARNING : LOG_INFO, c->res, "handler %s (pid %ld) exited with %d",
		c->name, (long)c->pid, c->result);
	if (c->done && c->r)
		c->done(c->r, c->name, c->result, c->arg);
	free(c);
}

static int32_t child_readable(int32_t fd, int32_t revents, void *data)
{
	struct handler_child *c = data;
	char buf[512];
	ssize_t n, i;

	n = read(fd, buf, sizeof(buf));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		child_line(c);
		qb_loop_poll_del(c->d->loop, fd);
		close(fd);
		c->out = -1;
		child_finish(c);
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (buf[i] == '\n' || c->len == sizeof(c->line) - 1)
			child_line(c);
		if (buf[i] != '\n')
			c->line[c->len++] = buf[i];
	}
	return 0;
}

static int32_t on_sigchld(int32_t sig, void *data)
{
	struct handler_child *c;
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (c = children; c && c->pid != pid; c = c->next)
			;
		if (!c)
			continue;
		c->exited = true;
		c->result = WIFEXITED(status) ? (status >> 8) & 0xff : 128 + WTERMSIG(status);
		child_finish(c);
	}
	return 0;
}

int handler_init(struct tandemd *d)
{
	return qb_loop_signal_add(d->loop, QB_LOOP_HIGH, SIGCHLD, d, on_sigchld, NULL);
}

/*
 * The handler's environment, built before fork: the daemon's own, minus
 * every variable named here, plus the ones set for this run. Between
 * fork and exec the child of this multi-threaded process may only make
 * async-signal-safe calls: no setenv, no malloc, no stdio.
 */
static const char *const env_names[] = {
    "DRBD_RESOURCE",	 "TANDEM_RESOURCE",  "DRBD_CONF",	  "TANDEM_CONF",
    "DRBD_MINOR",	 "TANDEM_MINOR",     "DRBD_VOLUME",	  "TANDEM_VOLUME",
    "DRBD_LL_DISK",	 "TANDEM_LL_DISK",   "DRBD_PEER_ADDRESS", "TANDEM_PEER_ADDRESS",
    "DRBD_PEER_AF",	 "TANDEM_PEER_AF",   "DRBD_PEERS",	  "TANDEM_PEERS",
    "DRBD_PEER",	 "TANDEM_HANDLER",   "TANDEM_ROLE",	  "TANDEM_DISK",
    "TANDEM_CONNECTION", "TANDEM_PEER_DISK", "TANDEM_RUN_DIR",	  "TANDEM_SB_SAVE",
};

#define ENV_NAMES (sizeof(env_names) / sizeof(env_names[0]))

struct handler_env {
	char *set[ENV_NAMES + 1]; /* "NAME=value" of this run (+ PATH) */
	unsigned int n_set;
	char **envp; /* what the handler gets, NULL-terminated */
	int err;
};

static void env_set(struct handler_env *e, const char *name, const char *value)
{
	char *kv;

	if (!value || e->n_set >= sizeof(e->set) / sizeof(e->set[0]))
		return;
	if (asprintf(&kv, "%s=%s", name, value) < 0) {
		e->err = -ENOMEM;
		return;
	}
	e->set[e->n_set++] = kv;
}

static void env_set2(struct handler_env *e, const char *drbd, const char *tandem, const char *value)
{
	env_set(e, drbd, value);
	env_set(e, tandem, value);
}

/* Is environment entry kv ("NAME=value") one of env_names? */
static bool env_managed(const char *kv)
{
	size_t len = strcspn(kv, "=");
	unsigned int i;

	for (i = 0; i < ENV_NAMES; i++)
		if (strlen(env_names[i]) == len && !strncmp(kv, env_names[i], len))
			return true;
	return false;
}

static void env_free(struct handler_env *e)
{
	unsigned int i;

	for (i = 0; i < e->n_set; i++)
		free(e->set[i]);
	free(e->envp);
}

static int env_build(struct handler_env *e, struct resource *r, const char *name, int vnr)
{
	const struct conf_host *peer = resource_cr(r)->peer;
	const struct conf_vol *cv;
	struct state st = resource_state(r);
	char minors[256] = "", vols[256] = "", disks[1024] = "";
	size_t lm = 0, lv = 0, ld = 0, n_env = 0, k = 0;
	unsigned int i;

	memset(e, 0, sizeof(*e));
	for (i = 0; i < r->n_vols; i++) {
		cv = r->vols[i].cv;
		if (vnr >= 0 && (int)cv->vnr != vnr)
			continue;
		lm += (size_t)snprintf(minors + lm, lm < sizeof(minors) ? sizeof(minors) - lm : 0,
				       "%s%d", lm ? " " : "", cv->minor);
		lv += (size_t)snprintf(vols + lv, lv < sizeof(vols) ? sizeof(vols) - lv : 0, "%s%u",
				       lv ? " " : "", cv->vnr);
		ld += (size_t)snprintf(disks + ld, ld < sizeof(disks) ? sizeof(disks) - ld : 0,
				       "%s%s", ld ? " " : "", cv->disk ? cv->disk : "none");
	}
	env_set2(e, "DRBD_RESOURCE", "TANDEM_RESOURCE", r->name);
	env_set2(e, "DRBD_CONF", "TANDEM_CONF", conf_file(tandemd_conf(r->d)));
	env_set2(e, "DRBD_MINOR", "TANDEM_MINOR", minors);
	env_set2(e, "DRBD_VOLUME", "TANDEM_VOLUME", vols);
	env_set2(e, "DRBD_LL_DISK", "TANDEM_LL_DISK", disks);
	if (peer && peer->addr.ip) {
		env_set2(e, "DRBD_PEER_ADDRESS", "TANDEM_PEER_ADDRESS", peer->addr.ip);
		env_set2(e, "DRBD_PEER_AF", "TANDEM_PEER_AF",
			 peer->addr.af ? peer->addr.af : "ipv4");
	}
	if (peer && peer->n_names) {
		env_set2(e, "DRBD_PEERS", "TANDEM_PEERS", peer->names[0]);
		env_set(e, "DRBD_PEER", peer->names[0]);
	}
	env_set(e, "TANDEM_HANDLER", name);
	env_set(e, "TANDEM_ROLE", state_role_name(st.role));
	env_set(e, "TANDEM_DISK", state_disk_name(st.disk));
	env_set(e, "TANDEM_CONNECTION", state_conn_name(st.conn));
	env_set(e, "TANDEM_PEER_DISK", state_disk_name(st.pdsk));
	env_set(e, "TANDEM_RUN_DIR", r->d->run_dir);
	if (r->sb_save[0])
		env_set(e, "TANDEM_SB_SAVE", r->sb_save);
	if (!getenv("PATH"))
		env_set(e, "PATH", "/sbin:/usr/sbin:/bin:/usr/bin");
	if (e->err)
		goto fail;
	while (environ && environ[n_env])
		n_env++;
	e->envp = calloc(n_env + e->n_set + 1, sizeof(*e->envp));
	if (!e->envp)
		goto fail;
	for (i = 0; i < n_env; i++)
		if (!env_managed(environ[i]))
			e->envp[k++] = environ[i];
	for (i = 0; i < e->n_set; i++)
		e->envp[k++] = e->set[i];
	e->envp[k] = NULL;
	return 0;
fail:
	env_free(e);
	return -ENOMEM;
}

/* The child, between fork and exec: async-signal-safe calls only. Never
 * returns. */
static void __attribute__((noreturn))
child_exec(int out, int devnull, int max_fd, char *const argv[], char *const envp[])
{
	static const char msg[] = "cannot run /bin/sh: errno ";
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	char num[16];
	sigset_t none;
	int fd, err, i;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	sigaction(SIGPIPE, &dfl, NULL);
	setsid();
	if (devnull >= 0)
		dup2(devnull, 0);
	dup2(out, 1);
	dup2(out, 2);
	if (close_range(3, ~0U, 0) < 0) /* before Linux 5.9 */
		for (fd = 3; fd < max_fd; fd++)
			close(fd);
	execve("/bin/sh", argv, envp);
	err = errno;
	i = sizeof(num);
	num[--i] = '\n';
	do {
		num[--i] = (char)('0' + err % 10);
		err /= 10;
	} while (err && i > 0);
	if (write(2, msg, sizeof(msg) - 1) > 0 && write(2, num + i, sizeof(num) - (size_t)i) < 0)
		_exit(126); /* nobody hears it either way */
	_exit(127);
}

/* handler_run from another thread: the loop is not thread-safe, so the
 * child is started from the main loop. */
struct handler_later {
	struct resource *r;
	char name[64];
	int vnr;
	handler_done_fn done;
	void *arg;
};

static void run_later(void *arg)
{
	struct handler_later *l = arg;

	handler_run(l->r, l->name, l->vnr, l->done, l->arg);
	free(l);
}

int handler_run(struct resource *r, const char *name, int vnr, handler_done_fn done, void *arg)
{
	const char *cmd = conf_res_text(tandemd_conf(r->d), resource_cr(r), CONF_SECT_HANDLERS, name);
	char *argv[] = {"sh", "-c", (char *)cmd, NULL};
	struct handler_child *c;
	struct handler_env env;
	int pfd[2], devnull, max_fd, rc;

	if (!pthread_equal(pthread_self(), r->d->main_thread)) {
		struct handler_later *l = calloc(1, sizeof(*l));

		if (!l)
			return -ENOMEM;
		*l = (struct handler_later){.r = r, .vnr = vnr, .done = done, .arg = arg};
		snprintf(l->name, sizeof(l->name), "%s", name);
		if (defer_call(r->d->defer, run_later, l) < 0) {
			free(l);
			return -ENOMEM;
		}
		return 0;
	}
	if (!cmd || !*cmd) {
		log_res(LOG_INFO, r->name, "handler %s: not configured", name);
		return 1;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	rc = env_build(&env, r, name, vnr);
	if (rc < 0) {
		free(c);
		return rc;
	}
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		rc = -errno;
		env_free(&env);
		free(c);
		return rc;
	}
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	max_fd = (int)sysconf(_SC_OPEN_MAX);
	c->d = r->d;
	c->r = r;
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->res, sizeof(c->res), "%s", r->name);
	c->done = done;
	c->arg = arg;
	c->out = pfd[0];
	c->pid = fork();
	if (c->pid == 0)
		child_exec(pfd[1], devnull, max_fd > 0 ? max_fd : 1024, argv, env.envp);
	rc = c->pid < 0 ? -errno : 0;
	env_free(&env);
	if (devnull >= 0)
		close(devnull);
	if (rc < 0) {
		close(pfd[0]);
		close(pfd[1]);
		free(c);
		return rc;
	}
	close(pfd[1]);
	fcntl(c->out, F_SETFL, O_NONBLOCK);
	c->next = children;
	children = c;
	log_res(LOG_NOTICE, r->name, "running handler %s (pid %ld): %s", name, (long)c->pid, cmd);
	rc = qb_loop_poll_add(r->d->loop, QB_LOOP_MED, c->out, POLLIN, c, child_readable);
	if (rc < 0) { /* no output then; the exit still counts */
		close(c->out);
		c->out = -1;
	}
	return 0;
}

/* The resource goes away: its handlers keep running, unreported. */
void handler_forget(struct resource *r)
{
	struct handler_child *c;

	for (c = children; c; c = c->next)
		if (c->r == r)
			c->r = NULL;
}

/* ---------------------------------------------------------------- from other threads */

struct handler_wait {
	struct resource *r;
	char name[32];
	int vnr;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	int result;
	int refs; /* the waiter and the main loop */
};

static void wait_put(struct handler_wait *w)
{
	bool last;

	pthread_mutex_lock(&w->lock);
	last = --w->refs == 0;
	pthread_mutex_unlock(&w->lock);
	if (last) {
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
		free(w);
	}
}

static void wait_finish(struct handler_wait *w, int result)
{
	pthread_mutex_lock(&w->lock);
	w->done = true;
	w->result = result;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	wait_put(w);
}

static void wait_done(struct resource *r, const char *name, int result, void *arg)
{
	wait_finish(arg, result);
}

static void wait_start(void *arg)
{
	struct handler_wait *w = arg;
	int rc = handler_run(w->r, w->name, w->vnr, wait_done, w);

	if (rc != 0)
		wait_finish(w, rc == 1 ? 0 : 1); /* not configured: 0, as drbdadm */
}

int handler_run_wait(struct resource *r, const char *name, int vnr, bool (*abort_fn)(void *),
		     void *arg)
{
	struct handler_wait *w = calloc(1, sizeof(*w));
	int result;

	if (!w)
		return -ENOMEM;
	w->r = r;
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->vnr = vnr;
	w->refs = 2;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (defer_call(r->d->defer, wait_start, w) < 0) {
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
		free(w);
		return -ENOMEM;
	}
	pthread_mutex_lock(&w->lock);
	while (!w->done) {
		struct timespec ts;

		if (abort_fn && abort_fn(arg)) {
			pthread_mutex_unlock(&w->lock);
			wait_put(w);
			return -ECANCELED;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
	}
	result = w->result;
	pthread_mutex_unlock(&w->lock);
	wait_put(w);
	return result;
}
