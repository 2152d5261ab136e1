/*
 * nbdkdev: attach a kernel nbd device to a connection the daemon serves
 * over a socketpair (classic NBD ioctls), detach it, tell whether it is
 * held open, and keep its stable symlink. See nbdkdev.h for the protocol.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/nbd.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nbdkdev.h"

#define NBDKDEV_START_MS 2000u
#define NBDKDEV_STOP_MS  5000u
#define NBDKDEV_POLL_MS  10u
#define NBDKDEV_MIN_BS   512u
#define NBDKDEV_MAX_BS   65536u

struct nbdkdev {
	char *dev;
	char *pidpath;		/* <sysfs>/block/nbdN/pid */
	int fd;
	struct nbdkdev_env env;	/* a copy: the DO_IT thread may outlive detach */
	pthread_t thr;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* signalled when DO_IT returns */
	bool done;		/* under lock */
	bool orphaned;		/* under lock: the DO_IT thread frees k */
	atomic_int dead;	/* == done, readable without the lock */
	atomic_int result;
};

static struct nbdkdev_env env_now;

void nbdkdev_set_env(const struct nbdkdev_env *env)
{
	if (env)
		env_now = *env;
	else
		memset(&env_now, 0, sizeof(env_now));
}

static struct nbdkdev_env env_get(void)
{
	struct nbdkdev_env e = env_now;

	if (!e.sysfs)
		e.sysfs = "/sys";
	if (!e.start_ms)
		e.start_ms = NBDKDEV_START_MS;
	if (!e.stop_ms)
		e.stop_ms = NBDKDEV_STOP_MS;
	return e;
}

static int say(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int say(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

static int kio(const struct nbdkdev *k, unsigned long req, unsigned long arg)
{
	if (k->env.ioctl)
		return k->env.ioctl(k->env.ctx, k->fd, req, arg);
	return ioctl(k->fd, req, arg) < 0 ? -errno : 0;
}

static const char *req_name(unsigned long req)
{
	switch (req) {
	case NBD_SET_BLKSIZE:		return "NBD_SET_BLKSIZE";
	case NBD_SET_SIZE_BLOCKS:	return "NBD_SET_SIZE_BLOCKS";
	case NBD_SET_TIMEOUT:		return "NBD_SET_TIMEOUT";
	case NBD_SET_FLAGS:		return "NBD_SET_FLAGS";
	case NBD_SET_SOCK:		return "NBD_SET_SOCK";
	case NBD_DO_IT:			return "NBD_DO_IT";
	default:			return "nbd ioctl";
	}
}

/* Read a one-line sysfs file into buf without its newline. */
static int read_line(const char *path, char *buf, size_t sz)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sz - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* ------------------------------------------------------------- probing */

bool nbdkdev_is_nbd_path(const char *dev)
{
	static const char pfx[] = "/dev/nbd";
	const char *p;
	size_t n;

	if (!dev || strncmp(dev, pfx, sizeof(pfx) - 1) != 0)
		return false;
	p = dev + sizeof(pfx) - 1;
	n = strspn(p, "0123456789");
	return n >= 1 && n <= 7 && p[n] == '\0' && (p[0] != '0' || n == 1);
}

int nbdkdev_probe(const char *dev, char *why, size_t len)
{
	struct nbdkdev_env e = env_get();
	const char *name;
	char path[PATH_MAX], val[64];
	struct stat st;
	int err;

	if (!nbdkdev_is_nbd_path(dev))
		return say(why, len, -EINVAL, "'%s' is not an nbd device name (expected /dev/nbdN)",
			   dev ? dev : "(null)");
	name = dev + strlen("/dev/");
	snprintf(path, sizeof(path), "%s/block/%s/pid", e.sysfs, name);
	if (exists(path)) {
		if (read_line(path, val, sizeof(val)) < 0)
			strcpy(val, "?");
		return say(why, len, -EBUSY,
			   "%s is already connected (pid %s): disconnect it first (nbd-client -d %s)",
			   dev, val, dev);
	}
	if (stat(dev, &st) == 0) {
		if (!S_ISBLK(st.st_mode))
			return say(why, len, -ENOTBLK, "%s exists but is not a block device", dev);
		return 0;
	}
	err = errno;
	if (err != ENOENT)
		return say(why, len, -err, "%s: %s", dev, strerror(err));
	snprintf(path, sizeof(path), "%s/block/%s", e.sysfs, name);
	if (exists(path))
		return say(why, len, -ENOENT,
			   "the kernel has %s but %s is missing: create the node (devtmpfs or udev normally does)",
			   name, dev);
	snprintf(path, sizeof(path), "%s/module/nbd", e.sysfs);
	if (exists(path)) {
		snprintf(path, sizeof(path), "%s/module/nbd/parameters/nbds_max", e.sysfs);
		if (read_line(path, val, sizeof(val)) < 0)
			strcpy(val, "?");
		return say(why, len, -ENOENT,
			   "%s does not exist: the nbd module has nbds_max=%s devices; reload it with more (modprobe -r nbd; modprobe nbd nbds_max=N)",
			   dev, val);
	}
	return say(why, len, -ENODEV,
		   "%s: the kernel has no nbd module loaded: run 'modprobe nbd' (the kernel needs CONFIG_BLK_DEV_NBD)",
		   dev);
}

/* ------------------------------------------------------------- attaching */

static void ts_after(struct timespec *ts, unsigned int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Everything but the thread: ioctls to undo, descriptor, memory. */
static void release(struct nbdkdev *k, bool configured)
{
	if (configured) {
		kio(k, NBD_CLEAR_QUE, 0);
		kio(k, NBD_CLEAR_SOCK, 0);
	}
	if (k->fd >= 0)
		close(k->fd);
	pthread_cond_destroy(&k->cond);
	pthread_mutex_destroy(&k->lock);
	free(k->pidpath);
	free(k->dev);
	free(k);
}

static void *doit_main(void *arg)
{
	struct nbdkdev *k = arg;
	int rc = kio(k, NBD_DO_IT, 0);
	bool orphan;

	pthread_mutex_lock(&k->lock);
	atomic_store(&k->result, rc);
	atomic_store(&k->dead, 1);
	k->done = true;
	orphan = k->orphaned;
	pthread_cond_broadcast(&k->cond);
	pthread_mutex_unlock(&k->lock);
	if (orphan)
		release(k, true);
	return NULL;
}

/* Wait up to ms for DO_IT to return; true if it has. */
static bool wait_done(struct nbdkdev *k, unsigned int ms)
{
	struct timespec until;
	bool done;

	ts_after(&until, ms);
	pthread_mutex_lock(&k->lock);
	while (!k->done && pthread_cond_timedwait(&k->cond, &k->lock, &until) != ETIMEDOUT)
		;
	done = k->done;
	pthread_mutex_unlock(&k->lock);
	return done;
}

static int explain(const struct nbdkdev *k, unsigned long req, unsigned long arg, int rc,
		   char *why, size_t len)
{
	const char *n = req_name(req), *d = k->dev, *e = strerror(-rc);

	if (rc == -EPERM || rc == -EACCES)
		return say(why, len, rc, "%s on %s: %s: the nbd ioctls need CAP_SYS_ADMIN (run as root)",
			   n, d, e);
	if (req == NBD_SET_FLAGS && (rc == -ENOTTY || rc == -EINVAL))
		return say(why, len, -EOPNOTSUPP,
			   "%s on %s: %s: this kernel is too old to take the transmission flags, so it would never send FLUSH, FUA or TRIM",
			   n, d, e);
	if (rc == -ENOTTY)
		return say(why, len, rc, "%s on %s: %s: not an nbd device", n, d, e);
	if (rc == -EINVAL && req == NBD_SET_BLKSIZE)
		return say(why, len, rc,
			   "%s on %s: %s: block size %lu refused (the kernel takes a power of two from 512 to its page size), or this is not an nbd device, or one controlled over netlink",
			   n, d, e, arg);
	if (rc == -EINVAL && req == NBD_SET_SOCK)
		return say(why, len, rc, "%s on %s: %s: the kernel refused the socket", n, d, e);
	if (rc == -EBUSY && (req == NBD_SET_SOCK || req == NBD_DO_IT))
		return say(why, len, rc, "%s on %s: %s: is nbd-client using it?", n, d, e);
	return say(why, len, rc, "%s on %s: %s", n, d, e);
}

static int check_args(int sock, uint64_t size, uint32_t bs, uint32_t flags, char *why,
		      size_t len)
{
	struct stat st;
	socklen_t sl;
	int type;

	if (bs < NBDKDEV_MIN_BS || bs > NBDKDEV_MAX_BS || (bs & (bs - 1)))
		return say(why, len, -EINVAL, "block size %u is not a power of two from 512 to 65536",
			   bs);
	if (size == 0 || size % bs)
		return say(why, len, -EINVAL, "size %llu is not a nonzero multiple of the block size %u",
			   (unsigned long long)size, bs);
	if (size > (uint64_t)INT64_MAX || size / bs > ULONG_MAX)
		return say(why, len, -EFBIG, "size %llu is too large for the kernel",
			   (unsigned long long)size);
	if (flags > 0xffffu)
		return say(why, len, -EINVAL, "transmission flags 0x%x do not fit in 16 bits", flags);
	if (sock < 0 || fstat(sock, &st) < 0)
		return say(why, len, -EBADF, "socket descriptor %d is not open", sock);
	if (!S_ISSOCK(st.st_mode))
		return say(why, len, -ENOTSOCK, "descriptor %d is not a socket", sock);
	sl = sizeof(type);
	if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &sl) < 0 || type != SOCK_STREAM)
		return say(why, len, -EINVAL,
			   "descriptor %d is not a stream socket (use socketpair(AF_UNIX, SOCK_STREAM))",
			   sock);
	return 0;
}

/* <sysfs>/block/<name of dev, symlinks resolved>/pid */
static int pid_path(struct nbdkdev *k)
{
	char *real = realpath(k->dev, NULL);
	const char *base;
	int n;

	if (!real)
		return -errno;
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	n = asprintf(&k->pidpath, "%s/block/%s/pid", k->env.sysfs, base);
	free(real);
	if (n < 0) {
		k->pidpath = NULL;
		return -ENOMEM;
	}
	return 0;
}

static struct nbdkdev *alloc(const char *dev)
{
	struct nbdkdev *k = calloc(1, sizeof(*k));
	pthread_condattr_t ca;
	int rc;

	if (!k)
		return NULL;
	k->fd = -1;
	k->env = env_get();
	k->dev = strdup(dev);
	if (!k->dev || pthread_condattr_init(&ca) != 0) {
		free(k->dev);
		free(k);
		return NULL;
	}
	rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!rc)
		rc = pthread_cond_init(&k->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (!rc && pthread_mutex_init(&k->lock, NULL) != 0) {
		pthread_cond_destroy(&k->cond);
		rc = -1;
	}
	if (rc) {
		free(k->dev);
		free(k);
		return NULL;
	}
	return k;
}

/*
 * Start the DO_IT thread with every signal blocked (a signal would
 * interrupt NBD_DO_IT, and the kernel then shuts the connection down), and
 * wait until the pid file shows the device running or DO_IT returns.
 */
static int start(struct nbdkdev *k, char *why, size_t len)
{
	struct timespec until, step, now;
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&k->thr, NULL, doit_main, k);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return say(why, len, -rc, "cannot start the NBD_DO_IT thread for %s: %s", k->dev,
			   strerror(rc));
	ts_after(&until, k->env.start_ms);
	pthread_mutex_lock(&k->lock);
	for (;;) {
		if (k->done)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (exists(k->pidpath) || !ts_before(&now, &until)) {
			pthread_mutex_unlock(&k->lock);
			return 0;
		}
		ts_after(&step, NBDKDEV_POLL_MS);
		pthread_cond_timedwait(&k->cond, &k->lock, ts_before(&step, &until) ? &step : &until);
	}
	pthread_mutex_unlock(&k->lock);
	pthread_join(k->thr, NULL);
	rc = atomic_load(&k->result);
	if (rc == 0)
		return say(why, len, -ECONNRESET,
			   "NBD_DO_IT on %s returned at once: the server end of the socket is closed",
			   k->dev);
	return explain(k, NBD_DO_IT, 0, rc, why, len);
}

int nbdkdev_attach(const char *dev, int sock, uint64_t size_bytes, uint32_t block_size,
		   uint32_t nbd_flags, uint32_t timeout_s, struct nbdkdev **out, char *why,
		   size_t len)
{
	const struct {
		unsigned long req, arg;
	} steps[] = {
		{NBD_SET_BLKSIZE, block_size},
		{NBD_SET_SIZE_BLOCKS, (unsigned long)(size_bytes / (block_size ? block_size : 1))},
		{NBD_SET_TIMEOUT, timeout_s},
		{NBD_SET_FLAGS, nbd_flags},
		{NBD_SET_SOCK, (unsigned long)sock},
	};
	bool configured = false;
	struct nbdkdev *k;
	size_t i;
	int rc;

	if (out)
		*out = NULL;
	if (!dev || !out)
		return say(why, len, -EINVAL, "nbdkdev_attach: no device or no result pointer");
	rc = check_args(sock, size_bytes, block_size, nbd_flags, why, len);
	if (rc)
		return rc;
	k = alloc(dev);
	if (!k)
		return say(why, len, -ENOMEM, "%s: out of memory", dev);
	rc = pid_path(k);
	if (rc) {
		say(why, len, rc, "cannot open %s: %s", dev, strerror(-rc));
		goto fail;
	}
	if (exists(k->pidpath)) {
		rc = say(why, len, -EBUSY, "%s is already connected (%s exists): is nbd-client using it?",
			 dev, k->pidpath);
		goto fail;
	}
	k->fd = open(dev, O_RDWR | O_CLOEXEC);
	if (k->fd < 0) {
		rc = -errno;
		say(why, len, rc, "cannot open %s: %s", dev, strerror(-rc));
		goto fail;
	}
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		rc = kio(k, steps[i].req, steps[i].arg);
		if (rc) {
			rc = explain(k, steps[i].req, steps[i].arg, rc, why, len);
			goto fail;
		}
		configured = true;
	}
	rc = start(k, why, len);
	if (rc)
		goto fail;
	*out = k;
	return 0;
fail:
	/* CLEAR_SOCK also drops the socket reference and resets the setup
	 * task, so another thread may attach later */
	release(k, configured);
	return rc;
}

int nbdkdev_detach(struct nbdkdev *k)
{
	pthread_t thr;

	if (!k)
		return 0;
	if (!atomic_load(&k->dead))
		kio(k, NBD_DISCONNECT, 0);
	if (!wait_done(k, k->env.stop_ms)) {
		/* the server did not close its end: shut the socket down */
		kio(k, NBD_CLEAR_SOCK, 0);
		if (!wait_done(k, k->env.stop_ms)) {
			pthread_mutex_lock(&k->lock);
			if (!k->done) {
				k->orphaned = true;
				thr = k->thr;
				pthread_mutex_unlock(&k->lock);
				pthread_detach(thr);
				return -ETIMEDOUT;
			}
			pthread_mutex_unlock(&k->lock);
		}
	}
	pthread_join(k->thr, NULL);
	release(k, true);
	return 0;
}

int nbdkdev_dead(const struct nbdkdev *k)
{
	return k ? atomic_load(&k->dead) : 1;
}

int nbdkdev_result(const struct nbdkdev *k)
{
	return k ? atomic_load(&k->result) : -EINVAL;
}

const char *nbdkdev_dev(const struct nbdkdev *k)
{
	return k ? k->dev : NULL;
}

/* ------------------------------------------------------------- in use */

int nbdkdev_in_use(const char *dev)
{
	struct stat st;
	int fd;

	if (!dev)
		return -EINVAL;
	if (stat(dev, &st) < 0)
		return -errno;
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;
	/* O_EXCL without O_CREAT on a block device: fails with EBUSY if
	 * anyone holds it exclusively (open(2)) */
	fd = open(dev, O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno == EBUSY ? 1 : -errno;
	close(fd);
	return 0;
}

/* ------------------------------------------------------------- links */

enum { LINK_ABSENT, LINK_OURS, LINK_OTHER_TARGET };

/* What is at path: LINK_*, -EEXIST (not a symlink) or a negative errno. */
static int link_state(const char *path, const char *dev)
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? LINK_ABSENT : -errno;
	if (!S_ISLNK(st.st_mode))
		return -EEXIST;
	n = readlink(path, target, sizeof(target));
	if (n < 0)
		return errno == ENOENT ? LINK_ABSENT : -errno;
	if ((size_t)n < sizeof(target) && (size_t)n == strlen(dev) && !memcmp(target, dev, (size_t)n))
		return LINK_OURS;
	return LINK_OTHER_TARGET;
}

static int mkparents(const char *path)
{
	char *p = strdup(path), *s;
	struct stat st;
	int rc = 0;

	if (!p)
		return -ENOMEM;
	for (s = strchr(p + 1, '/'); s && !rc; s = strchr(s + 1, '/')) {
		if (s[-1] == '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) == 0) {
			if (chmod(p, 0755) < 0) /* whatever the umask */
				rc = -errno;
		} else {
			if (errno != EEXIST)
				rc = -errno;
			else if (stat(p, &st) < 0)
				rc = -errno;
			else if (!S_ISDIR(st.st_mode))
				rc = -ENOTDIR;
		}
		*s = '/';
	}
	free(p);
	return rc;
}

/* Replace whatever symlink is at path by one to dev, atomically. */
static int replace_link(const char *dev, const char *path)
{
	char *tmp;
	int rc = 0;

	if (asprintf(&tmp, "%s.tmp-%ld", path, (long)getpid()) < 0)
		return -ENOMEM;
	if (unlink(tmp) < 0 && errno != ENOENT)
		rc = -errno;
	else if (symlink(dev, tmp) < 0)
		rc = -errno;
	else if (rename(tmp, path) < 0) {
		rc = -errno;
		unlink(tmp);
	}
	free(tmp);
	return rc;
}

int nbdkdev_link(const char *dev, const char *link_path)
{
	int rc, tries;

	if (!dev || !*dev || !link_path || !*link_path)
		return -EINVAL;
	rc = mkparents(link_path);
	if (rc)
		return rc;
	for (tries = 0; tries < 2; tries++) {
		rc = link_state(link_path, dev);
		switch (rc) {
		case LINK_OURS:
			return 0;
		case LINK_OTHER_TARGET:
			return replace_link(dev, link_path);
		case LINK_ABSENT:
			if (symlink(dev, link_path) == 0)
				return 0;
			if (errno != EEXIST)
				return -errno;
			continue; /* created meanwhile: look again */
		default:
			return rc;
		}
	}
	return -EEXIST;
}

int nbdkdev_unlink(const char *link_path, const char *dev)
{
	int rc;

	if (!dev || !*dev || !link_path || !*link_path)
		return -EINVAL;
	rc = link_state(link_path, dev);
	switch (rc) {
	case LINK_ABSENT:
		return 0;
	case LINK_OURS:
		return unlink(link_path) < 0 && errno != ENOENT ? -errno : 0;
	case LINK_OTHER_TARGET:
		return -EEXIST;
	default:
		return rc;
	}
}
