/*
 * spawn: the agent's child processes. Tools (crm_attribute, cibadmin,
 * tandemadm, the unfence handler) run with a time limit, their standard
 * error logged line by line and their standard output collected; tandemd
 * is started in a session of its own, so that neither the agent's exit
 * nor pacemaker-execd killing the agent's process group on a timeout
 * (ref/ha-stack-apis.md §10) takes the data path down.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <unistd.h>

#include "agent.h"

#define SPAWN_OUT_MAX (32u << 20) /* a large CIB */

struct spawn_buf {
	char *p;
	size_t len, cap;
};

static int buf_add(struct spawn_buf *b, const char *data, size_t n)
{
	char *np;

	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;

		while (cap < b->len + n + 1)
			cap *= 2;
		if (cap > SPAWN_OUT_MAX)
			return -EFBIG;
		np = realloc(b->p, cap);
		if (!np)
			return -ENOMEM;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

/* Log the complete lines of the child's stderr (all: the rest too). */
static void log_lines(struct spawn_buf *b, const char *who, enum agent_level lvl, bool all)
{
	size_t start = 0;
	char *nl;

	if (!b->p)
		return;
	while (start < b->len && (nl = memchr(b->p + start, '\n', b->len - start))) {
		*nl = '\0';
		if (b->p[start])
			agent_log(lvl, "%s: %s", who, b->p + start);
		start = (size_t)(nl - b->p) + 1;
	}
	if (all && start < b->len) {
		agent_log(lvl, "%s: %s", who, b->p + start);
		start = b->len;
	}
	memmove(b->p, b->p + start, b->len - start);
	b->len -= start;
	b->p[b->len] = '\0';
}

static void child(char *const argv[], char *const env[], int out, int err, bool session)
{
	int null = open("/dev/null", O_RDWR);
	size_t i;

	if (session)
		setsid();
	if (null < 0)
		_exit(127);
	dup2(null, 0);
	dup2(out >= 0 ? out : null, 1);
	dup2(err, 2);
	closefrom(3);
	for (i = 0; env && env[i]; i++)
		putenv(env[i]);
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], argv);
	fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static int spawn(char *const argv[], char *const env[], long timeout_ms, enum agent_level lvl,
		 char **out, bool session)
{
	const char *who = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	struct spawn_buf ob = {0}, eb = {0};
	int op[2] = {-1, -1}, ep[2], status = 0, rc = 0;
	struct timespec t0, t;
	struct pollfd pf[2];
	char chunk[4096];
	bool killed = false;
	pid_t pid;
	ssize_t n;
	int i, open_fds;

	if (out)
		*out = NULL;
	if (pipe2(ep, O_CLOEXEC) < 0 || (out && pipe2(op, O_CLOEXEC) < 0))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(ep[0]);
		close(ep[1]);
		if (out) {
			close(op[0]);
			close(op[1]);
		}
		return rc;
	}
	if (pid == 0)
		child(argv, env, op[1], ep[1], session);
	close(ep[1]);
	if (out)
		close(op[1]);
	pf[0] = (struct pollfd){.fd = ep[0], .events = POLLIN};
	pf[1] = (struct pollfd){.fd = out ? op[0] : -1, .events = POLLIN};
	open_fds = out ? 2 : 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (open_fds > 0) {
		long left;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = timeout_ms - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0) {
			agent_log(AGENT_WARN, "%s did not finish within %ld ms: killed", who, timeout_ms);
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		if (poll(pf, 2, (int)(left > 1000 ? 1000 : left)) < 0 && errno != EINTR)
			break;
		for (i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(pf[i].fd, chunk, sizeof(chunk));
			if (n <= 0) {
				close(pf[i].fd);
				pf[i].fd = -1;
				open_fds--;
			} else if (buf_add(i == 0 ? &eb : &ob, chunk, (size_t)n) < 0) {
				rc = -EFBIG;
			} else if (i == 0) {
				log_lines(&eb, who, lvl, false);
			}
		}
	}
	for (i = 0; i < 2; i++)
		if (pf[i].fd >= 0)
			close(pf[i].fd);
	log_lines(&eb, who, lvl, true);
	free(eb.p);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc < 0 || killed) {
		free(ob.p);
		return rc < 0 ? rc : -ETIMEDOUT;
	}
	if (out)
		*out = ob.p ? ob.p : strdup("");
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int spawn_run(char *const argv[], char *const env[], long timeout_ms, enum agent_level lvl,
	      char **out)
{
	return spawn(argv, env, timeout_ms, lvl, out, false);
}

/* Serialise the agents of several resources starting tandemd at once:
 * a second tandemd would take over the control socket. */
static int lock_run_dir(const struct agent *a)
{
	char path[4096];
	int fd;

	if (mkdir(a->run_dir, 0700) < 0 && errno != EEXIST) {
		agent_fail("cannot create %s: %s", a->run_dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/agent.lock", a->run_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		agent_fail("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK || agent_ms_left(a) <= 0) {
			agent_fail("cannot lock %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		agent_sleep_ms(a, 100);
	}
	return fd;
}

/* The pid in tandemd's pid file, 0 if there is none. */
static pid_t daemon_pid(const struct agent *a)
{
	char path[4096];
	long pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tandemd.pid", a->run_dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1 || pid <= 0)
		pid = 0;
	fclose(f);
	return (pid_t)pid;
}

static bool pid_dead(pid_t pid)
{
	return kill(pid, 0) < 0 && errno == ESRCH;
}

int spawn_tandemd(const struct agent *a)
{
	pid_t pid, seen;
	char *argv[10];
	int lock, rc, n = 0;

	lock = lock_run_dir(a);
	if (lock < 0)
		return AGENT_POLICY_OCF_ERR_GENERIC;
	if (ctl_daemon_alive(a)) { /* another agent was quicker */
		close(lock);
		return AGENT_POLICY_OCF_SUCCESS;
	}
	if (access(a->tandemd, X_OK) < 0) {
		close(lock);
		agent_fail("%s: %s; install tandem or set the parameter tandemd", a->tandemd,
			   strerror(errno));
		return AGENT_POLICY_OCF_ERR_INSTALLED;
	}
	pid = daemon_pid(a);
	if (pid && pid_dead(pid)) { /* the stale pid file of a killed tandemd */
		char path[4096];

		snprintf(path, sizeof(path), "%s/tandemd.pid", a->run_dir);
		unlink(path);
	}
	argv[n++] = (char *)a->tandemd;
	argv[n++] = (char *)"-c";
	argv[n++] = (char *)a->config;
	argv[n++] = (char *)"--run-dir";
	argv[n++] = (char *)a->run_dir;
	if (a->node) {
		argv[n++] = (char *)"--node";
		argv[n++] = (char *)a->node;
	}
	argv[n] = NULL;
	agent_log(AGENT_INFO, "tandemd is not running: starting %s -c %s --run-dir %s%s%s",
		  a->tandemd, a->config, a->run_dir, a->node ? " --node " : "",
		  a->node ? a->node : "");
	/* tandemd forks into the background itself; this waits for the
	 * foreground part, which reports configuration errors */
	rc = spawn(argv, NULL, agent_ms_left(a), AGENT_ERR, NULL, true);
	if (rc != 0) {
		close(lock);
		agent_fail("tandemd did not start (%s %d)%s", rc < 0 ? "error" : "exit", rc,
			   rc == EX_CONFIG ? ": the configuration is invalid, see above" : "");
		return rc == EX_CONFIG ? AGENT_POLICY_OCF_ERR_CONFIGURED
				       : AGENT_POLICY_OCF_ERR_GENERIC;
	}
	/* the daemon writes its pid file after it detached, and removes it
	 * when it exits: either way, once seen, a missing or dead pid means
	 * it is gone and waiting longer is pointless */
	seen = 0;
	while (!ctl_daemon_alive(a)) {
		pid = daemon_pid(a);
		if (pid)
			seen = pid;
		if (seen && (!pid || pid_dead(seen))) {
			close(lock);
			agent_fail("tandemd exited right after it started; see the system log "
				   "(journalctl -t tandemd)");
			return AGENT_POLICY_OCF_ERR_GENERIC;
		}
		if (agent_ms_left(a) <= 0) {
			close(lock);
			agent_fail("tandemd was started but does not answer on %s/tandemd.sock",
				   a->run_dir);
			return AGENT_POLICY_OCF_ERR_GENERIC;
		}
		agent_sleep_ms(a, 50);
	}
	close(lock);
	agent_log(AGENT_INFO, "tandemd answers on %s/tandemd.sock", a->run_dir);
	return AGENT_POLICY_OCF_SUCCESS;
}
