/*
 * Unit tests for nbdkdev. This machine has no nbd module, so:
 * - the name check, probe (against the real /sys and a fake sysfs tree),
 *   argument checks, in_use and the symlinks run for real;
 * - attach against /dev/null and a regular file runs the real ioctls,
 *   which fail with ENOTTY;
 * - everything else runs against a fake kernel behind the ioctl seam
 *   (struct nbdkdev_env): a regular file named nbdN stands for the device,
 *   NBD_SET_SOCK keeps a duplicate of the socket as the kernel keeps a
 *   reference, NBD_DO_IT writes the sysfs pid file and reads the socket
 *   until it ends, NBD_DISCONNECT sends NBD_CMD_DISC, NBD_CLEAR_SOCK shuts
 *   the socket down: the ways drivers/block/nbd.c behaves.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <linux/nbd.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h> /* _IO, which <linux/nbd.h> uses */
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "unit.h"

#include "nbdkdev.h"

#define FLAGS (NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH | NBD_FLAG_SEND_FUA | \
	       NBD_FLAG_SEND_TRIM | (1u << 6) /* SEND_WRITE_ZEROES */)
#define SIZE (1ULL << 30)
#define BS 4096u
#define NAME "nbd3"

/* ---------------------------------------------------------------- helpers */

static int fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* pat with its one '@' replaced by s. */
static char *subst(const char *pat, const char *s)
{
	const char *at = strchr(pat, '@');

	if (!at)
		return unit_fmt("%s", pat);
	return unit_fmt("%.*s%s%s", (int)(at - pat), pat, s, at + 1);
}

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

static int reset_env(void **state)
{
	nbdkdev_set_env(NULL);
	return unit_teardown(state);
}

/* ---------------------------------------------------------------- names */

static void test_is_nbd_path(void **state)
{
	static const struct {
		const char *dev;
		bool ok;
	} t[] = {
		{"/dev/nbd0", true},	{"/dev/nbd15", true},	  {"/dev/nbd1234567", true},
		{"/dev/nbd", false},	{"/dev/nbd0p1", false},	  {"/dev/nbda", false},
		{"dev/nbd0", false},	{"/dev/nbd-1", false},	  {"/dev//nbd0", false},
		{"/dev/nbd0/", false},	{"/dev/nbd 0", false},	  {"/dev/nbd00", false},
		{"/dev/nbd01", false},	{"/dev/nbd12345678", false}, {"/dev/sda", false},
		{"nbd0", false},	{"", false},		  {"/dev/nbd0\n", false},
		{"/dev/tandem/r0", false},
	};
	size_t i;

	for (i = 0; i < UNIT_ARRAY_SIZE(t); i++)
		if (nbdkdev_is_nbd_path(t[i].dev) != t[i].ok)
			fail_msg("'%s': expected %d", t[i].dev, t[i].ok);
	assert_false(nbdkdev_is_nbd_path(NULL));
}

/* ---------------------------------------------------------------- probe */

static void test_probe_here(void **state)
{
	char why[512] = "";

	if (access("/sys/module/nbd", F_OK) == 0) {
		print_message("# skip: /sys/module/nbd exists, this kernel has nbd\n");
		return;
	}
	assert_int_equal(nbdkdev_probe("/dev/nbd0", why, sizeof(why)), -ENODEV);
	assert_non_null(strstr(why, "modprobe nbd"));
	assert_non_null(strstr(why, "/dev/nbd0"));
	/* no buffer is fine */
	assert_int_equal(nbdkdev_probe("/dev/nbd0", NULL, 0), -ENODEV);
	assert_int_equal(nbdkdev_probe("/dev/sda", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not an nbd device name"));
	assert_int_equal(nbdkdev_probe(NULL, why, sizeof(why)), -EINVAL);
}

/* The probe rules against a fake sysfs tree, for a device node that does
 * not exist here. */
static void test_probe_fake_sysfs(void **state)
{
	static const char dev[] = "/dev/nbd7654321";
	static const struct {
		const char *files[3]; /* relative to the fake sysfs; "x/" = dir */
		int rc;
		const char *sub[2];
	} t[] = {
		{{NULL}, -ENODEV, {"modprobe nbd", "CONFIG_BLK_DEV_NBD"}},
		{{"module/nbd/parameters/nbds_max=16\n"}, -ENOENT, {"nbds_max=16", "modprobe nbd nbds_max="}},
		{{"module/nbd/"}, -ENOENT, {"nbds_max=?", dev}},
		{{"module/nbd/", "block/nbd7654321/"}, -ENOENT, {"is missing", "create the node"}},
		{{"module/nbd/", "block/nbd7654321/pid=4242\n"}, -EBUSY, {"pid 4242", "nbd-client -d"}},
	};
	size_t i, j;

	if (access(dev, F_OK) == 0) {
		print_message("# skip: %s exists\n", dev);
		return;
	}
	for (i = 0; i < UNIT_ARRAY_SIZE(t); i++) {
		char *root = unit_tmpdir(), why[512] = "";
		struct nbdkdev_env env = {.sysfs = root};

		for (j = 0; j < UNIT_ARRAY_SIZE(t[i].files) && t[i].files[j]; j++) {
			const char *f = t[i].files[j], *eq = strchr(f, '=');
			char *rel = unit_str(strndup(f, eq ? (size_t)(eq - f) : strlen(f)));

			if (eq) {
				unit_write(root, rel, eq + 1);
			} else {
				unit_write(root, unit_fmt("%s.keep", rel), "");
			}
		}
		nbdkdev_set_env(&env);
		if (nbdkdev_probe(dev, why, sizeof(why)) != t[i].rc)
			fail_msg("case %zu: rc %d, why '%s'", i, nbdkdev_probe(dev, NULL, 0), why);
		for (j = 0; j < 2; j++)
			if (!strstr(why, t[i].sub[j]))
				fail_msg("case %zu: '%s' lacks '%s'", i, why, t[i].sub[j]);
		nbdkdev_set_env(NULL);
		unit_release(root);
	}
}

/* ---------------------------------------------------------------- real attach */

static void expect_attach_fails(const char *dev, int rc, const char *sub1, const char *sub2)
{
	struct nbdkdev *k = (struct nbdkdev *)&k;
	char why[512] = "", buf[4];
	int sv[2], n0 = fd_count();

	pair(sv);
	if (nbdkdev_attach(dev, sv[0], SIZE, BS, FLAGS, 30, &k, why, sizeof(why)) != rc)
		fail_msg("%s: expected %d, why '%s'", dev, rc, why);
	assert_null(k);
	if (!strstr(why, sub1) || !strstr(why, sub2))
		fail_msg("%s: '%s' lacks '%s' or '%s'", dev, why, sub1, sub2);
	/* the caller's socket is still open and works */
	assert_true(fd_open(sv[0]));
	assert_int_equal(write(sv[0], "ok", 2), 2);
	assert_int_equal(read(sv[1], buf, sizeof(buf)), 2);
	close(sv[0]);
	close(sv[1]);
	assert_int_equal(fd_count(), n0);
}

static void test_attach_not_nbd(void **state)
{
	char *dir = unit_tmpdir();
	char *file = unit_fmt("%s/disk.img", dir);

	unit_write(dir, "disk.img", "not a block device\n");
	expect_attach_fails("/dev/null", -ENOTTY, "NBD_SET_BLKSIZE on /dev/null",
			    "not an nbd device");
	expect_attach_fails(file, -ENOTTY, "NBD_SET_BLKSIZE on ", "not an nbd device");
	expect_attach_fails(unit_fmt("%s/absent", dir), -ENOENT, "cannot open", "absent");
}

static void test_attach_args(void **state)
{
	static const struct {
		uint64_t size;
		uint32_t bs, flags;
		int rc;
		const char *sub;
	} t[] = {
		{SIZE, 0, FLAGS, -EINVAL, "block size 0"},
		{SIZE, 256, FLAGS, -EINVAL, "power of two"},
		{SIZE, 1000, FLAGS, -EINVAL, "power of two"},
		{SIZE, 131072, FLAGS, -EINVAL, "power of two"},
		{0, BS, FLAGS, -EINVAL, "nonzero multiple"},
		{SIZE + 512, BS, FLAGS, -EINVAL, "nonzero multiple"},
		{1ULL << 63, BS, FLAGS, -EFBIG, "too large"},
		{SIZE, BS, 0x10000, -EINVAL, "16 bits"},
	};
	struct nbdkdev *k = NULL;
	char why[256];
	int sv[2], p[2], d[2];
	size_t i;

	pair(sv);
	for (i = 0; i < UNIT_ARRAY_SIZE(t); i++) {
		why[0] = '\0';
		if (nbdkdev_attach("/dev/null", sv[0], t[i].size, t[i].bs, t[i].flags, 0, &k, why,
				   sizeof(why)) != t[i].rc || !strstr(why, t[i].sub))
			fail_msg("case %zu: why '%s'", i, why);
		assert_null(k);
	}
	/* the socket */
	assert_int_equal(nbdkdev_attach("/dev/null", -1, SIZE, BS, FLAGS, 0, &k, why, sizeof(why)),
			 -EBADF);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(nbdkdev_attach("/dev/null", p[0], SIZE, BS, FLAGS, 0, &k, why, sizeof(why)),
			 -ENOTSOCK);
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, d), 0);
	assert_int_equal(nbdkdev_attach("/dev/null", d[0], SIZE, BS, FLAGS, 0, &k, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "SOCK_STREAM"));
	assert_int_equal(nbdkdev_attach(NULL, sv[0], SIZE, BS, FLAGS, 0, &k, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(nbdkdev_attach("/dev/null", sv[0], SIZE, BS, FLAGS, 0, NULL, NULL, 0),
			 -EINVAL);
	assert_true(fd_open(p[0]) && fd_open(d[0]) && fd_open(sv[0]));
	close(p[0]);
	close(p[1]);
	close(d[0]);
	close(d[1]);
	close(sv[0]);
	close(sv[1]);
	assert_int_equal(nbdkdev_detach(NULL), 0);
	assert_int_equal(nbdkdev_dead(NULL), 1);
}

/* ---------------------------------------------------------------- fake kernel */

struct fake {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned long req[32], arg[32];
	int n;
	int dev_fd;		/* the descriptor the ioctls came on */
	unsigned long fail_req;	/* fail this request with fail_err */
	int fail_err;
	int sock;		/* the "kernel's reference": a dup */
	bool no_pid;		/* DO_IT never writes the pid file */
	bool instant;		/* DO_IT returns 0 at once */
	bool hang;		/* DO_IT ignores everything until released */
	bool released;
	int doit_rc;		/* what DO_IT returns when the socket ends */
	sigset_t doit_mask;	/* the signal mask DO_IT ran with */
	char *pidfile;
};

static void fake_log(struct fake *f, unsigned long req, unsigned long arg)
{
	assert_true(f->n < (int)UNIT_ARRAY_SIZE(f->req));
	f->req[f->n] = req;
	f->arg[f->n++] = arg;
}

static int fake_ioctl(void *ctx, int fd, unsigned long req, unsigned long arg)
{
	static const unsigned char disc[28] = {0x25, 0x60, 0x95, 0x13, 0, 0, 0, 2};
	struct fake *f = ctx;
	char buf[64];
	bool hang;
	int s, rc;

	pthread_mutex_lock(&f->lock);
	fake_log(f, req, arg);
	if (f->dev_fd < 0)
		f->dev_fd = fd;
	if (fd != f->dev_fd || req == f->fail_req) {
		pthread_mutex_unlock(&f->lock);
		return fd != f->dev_fd ? -EBADF : f->fail_err;
	}
	switch (req) {
	case NBD_SET_SOCK:
		f->sock = fcntl((int)arg, F_DUPFD_CLOEXEC, 0);
		break;
	case NBD_DISCONNECT:
		if (f->sock >= 0 && send(f->sock, disc, sizeof(disc), MSG_NOSIGNAL) != sizeof(disc))
			f->doit_rc = -EIO;
		break;
	case NBD_CLEAR_SOCK:
		if (f->sock >= 0)
			shutdown(f->sock, SHUT_RDWR);
		unlink(f->pidfile);
		break;
	case NBD_DO_IT:
		if (f->sock < 0) {
			pthread_mutex_unlock(&f->lock);
			return -EINVAL;
		}
		pthread_sigmask(SIG_BLOCK, NULL, &f->doit_mask);
		if (f->instant) {
			pthread_mutex_unlock(&f->lock);
			return 0;
		}
		if (!f->no_pid) {
			FILE *p = fopen(f->pidfile, "w");

			assert_non_null(p);
			fprintf(p, "%d\n", (int)getpid());
			fclose(p);
		}
		while (f->hang && !f->released)
			pthread_cond_wait(&f->cond, &f->lock);
		s = f->sock;
		hang = f->hang;
		pthread_mutex_unlock(&f->lock);
		if (!hang)
			while (read(s, buf, sizeof(buf)) > 0)
				;
		pthread_mutex_lock(&f->lock); /* NBD_DISCONNECT sets it meanwhile */
		rc = f->doit_rc;
		pthread_mutex_unlock(&f->lock);
		return rc;
	}
	pthread_mutex_unlock(&f->lock);
	return 0;
}

static void fake_free(void *p)
{
	struct fake *f = p;

	if (f->sock >= 0)
		close(f->sock);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

/* A fake kernel and device dir/nbd3 with sysfs dir/sys/block/nbd3;
 * *dev gets the device path. */
static struct fake *fake_new(unsigned int stop_ms, char **dev)
{
	struct fake *f = calloc(1, sizeof(*f));
	char *dir = unit_tmpdir();
	struct nbdkdev_env env = {0};

	assert_non_null(f);
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	f->dev_fd = -1;
	f->sock = -1;
	unit_defer(fake_free, f);
	unit_write(dir, NAME, "");
	unit_write(dir, "sys/block/" NAME "/.keep", "");
	f->pidfile = unit_fmt("%s/sys/block/%s/pid", dir, NAME);
	*dev = unit_fmt("%s/%s", dir, NAME);
	env.sysfs = unit_fmt("%s/sys", dir);
	env.stop_ms = stop_ms;
	env.ioctl = fake_ioctl;
	env.ctx = f;
	nbdkdev_set_env(&env);
	return f;
}

/* The requests from index `from` on are exactly those given (0-ended). */
static void expect_log(struct fake *f, int from, const unsigned long *want)
{
	int i;

	pthread_mutex_lock(&f->lock);
	for (i = 0; want[i]; i++)
		if (from + i >= f->n || f->req[from + i] != want[i])
			fail_msg("request %d: got %#lx, want %#lx (%d logged)", from + i,
				 from + i < f->n ? f->req[from + i] : 0UL, want[i], f->n);
	if (from + i != f->n)
		fail_msg("%d requests logged, expected %d", f->n, from + i);
	pthread_mutex_unlock(&f->lock);
}

static const unsigned long setup_log[] = {
	NBD_SET_BLKSIZE, NBD_SET_SIZE_BLOCKS, NBD_SET_TIMEOUT, NBD_SET_FLAGS, NBD_SET_SOCK,
	NBD_DO_IT, 0,
};

/* The server end: reads what the kernel sends, then closes (or not). */
struct server {
	int fd;
	bool close_on_disc;
	unsigned char req[28];
	ssize_t got;
};

static void *server_main(void *arg)
{
	struct server *s = arg;

	s->got = read(s->fd, s->req, sizeof(s->req));
	if (s->close_on_disc)
		close(s->fd);
	return NULL;
}

static void test_fake_attach_detach(void **state)
{
	struct server srv = {.close_on_disc = true};
	static const unsigned long tail[] = {NBD_DISCONNECT, NBD_CLEAR_QUE, NBD_CLEAR_SOCK, 0};
	struct nbdkdev *k = NULL;
	char why[256] = "", *dev;
	int sv[2], n0 = fd_count();
	struct fake *f = fake_new(2000, &dev);
	sigset_t before, after;
	struct timespec t0;
	pthread_t t;

	pair(sv);
	pthread_sigmask(SIG_BLOCK, NULL, &before);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(nbdkdev_attach(dev, sv[0], SIZE, BS, FLAGS, 30, &k, why, sizeof(why)), 0);
	assert_non_null(k);
	/* it returned on seeing the pid file, not after start_ms (2 s) */
	assert_true(ms_since(&t0) < 1000);
	/* DO_IT runs with every signal blocked; the caller's mask is kept */
	assert_true(sigismember(&f->doit_mask, SIGINT) == 1);
	assert_true(sigismember(&f->doit_mask, SIGTERM) == 1);
	assert_true(sigismember(&f->doit_mask, SIGUSR1) == 1);
	pthread_sigmask(SIG_BLOCK, NULL, &after);
	assert_int_equal(sigismember(&after, SIGUSR1), sigismember(&before, SIGUSR1));
	assert_int_equal(sigismember(&after, SIGINT), sigismember(&before, SIGINT));
	expect_log(f, 0, setup_log);
	assert_int_equal(f->arg[0], BS);
	assert_int_equal(f->arg[1], SIZE / BS);
	assert_int_equal(f->arg[2], 30);
	assert_int_equal(f->arg[3], FLAGS);
	assert_int_equal(f->arg[4], (unsigned long)sv[0]);
	assert_int_equal(access(f->pidfile, F_OK), 0);
	assert_int_equal(nbdkdev_dead(k), 0);
	assert_int_equal(nbdkdev_result(k), 0);
	assert_string_equal(nbdkdev_dev(k), dev);
	/* the caller may close its end once attached: the kernel holds one */
	close(sv[0]);

	srv.fd = sv[1];
	assert_int_equal(pthread_create(&t, NULL, server_main, &srv), 0);
	assert_int_equal(nbdkdev_detach(k), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	/* the server got NBD_CMD_DISC and closed: no CLEAR_SOCK was needed to
	 * end DO_IT, only the final cleanup */
	assert_int_equal(srv.got, 28);
	assert_int_equal(srv.req[7], 2);
	assert_int_equal(srv.req[0], 0x25);
	expect_log(f, 6, tail);
	assert_int_equal(access(f->pidfile, F_OK), -1);
	unit_release(f);
	assert_int_equal(fd_count(), n0);
}

/* The server end goes away: DO_IT returns, dead() says so, detach skips
 * NBD_DISCONNECT. */
static void test_fake_dead(void **state)
{
	static const unsigned long tail[] = {NBD_CLEAR_QUE, NBD_CLEAR_SOCK, 0};
	struct nbdkdev *k = NULL;
	struct timespec t0;
	char *dev;
	int sv[2], n0 = fd_count();
	struct fake *f = fake_new(2000, &dev);

	f->doit_rc = -ETIMEDOUT;
	pair(sv);
	assert_int_equal(nbdkdev_attach(dev, sv[0], SIZE, BS, FLAGS, 30, &k, NULL, 0), 0);
	assert_int_equal(nbdkdev_dead(k), 0);
	close(sv[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!nbdkdev_dead(k) && ms_since(&t0) < 2000)
		sleep_ms(5);
	assert_int_equal(nbdkdev_dead(k), 1);
	assert_int_equal(nbdkdev_result(k), -ETIMEDOUT);
	assert_int_equal(nbdkdev_detach(k), 0);
	expect_log(f, 6, tail);
	/* nbdkdev never closes the caller's descriptor */
	assert_true(fd_open(sv[0]));
	close(sv[0]);
	unit_release(f);
	assert_int_equal(fd_count(), n0);
}

/* The server ignores NBD_CMD_DISC: after the stop time detach shuts the
 * socket down with NBD_CLEAR_SOCK, which ends DO_IT. */
static void test_fake_stubborn_server(void **state)
{
	static const unsigned long tail[] = {NBD_DISCONNECT, NBD_CLEAR_SOCK, NBD_CLEAR_QUE,
					     NBD_CLEAR_SOCK, 0};
	struct nbdkdev *k = NULL;
	struct timespec t0;
	char *dev;
	int sv[2];
	struct fake *f = fake_new(300, &dev);

	pair(sv);
	assert_int_equal(nbdkdev_attach(dev, sv[0], SIZE, BS, FLAGS, 0, &k, NULL, 0), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(nbdkdev_detach(k), 0);
	assert_true(ms_since(&t0) >= 290);
	assert_true(ms_since(&t0) < 3000);
	expect_log(f, 6, tail);
	close(sv[0]);
	close(sv[1]);
}

/* The kernel does not return even after NBD_CLEAR_SOCK: detach gives up
 * with -ETIMEDOUT and the DO_IT thread cleans up when it finally returns
 * (ASan would report a leak or a use after free). */
static void test_fake_hung_kernel(void **state)
{
	static const unsigned long tail[] = {NBD_DISCONNECT, NBD_CLEAR_SOCK, 0};
	static const unsigned long late[] = {NBD_CLEAR_QUE, NBD_CLEAR_SOCK, 0};
	struct nbdkdev *k = NULL;
	struct timespec t0;
	char *dev;
	int sv[2], n0 = fd_count();
	struct fake *f = fake_new(50, &dev);

	f->hang = true;
	pair(sv);
	assert_int_equal(nbdkdev_attach(dev, sv[0], SIZE, BS, FLAGS, 0, &k, NULL, 0), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(nbdkdev_detach(k), -ETIMEDOUT);
	assert_true(ms_since(&t0) >= 90);
	expect_log(f, 6, tail);

	pthread_mutex_lock(&f->lock);
	f->released = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	close(sv[0]);
	close(sv[1]);
	/* the orphaned thread clears, closes the device and frees */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (fd_count() != n0 + 1 /* the fake's dup */ && ms_since(&t0) < 2000)
		sleep_ms(5);
	assert_int_equal(fd_count(), n0 + 1);
	expect_log(f, 8, late);
	sleep_ms(50); /* the free after the close */
	unit_release(f);
}

/* Each setup step failing: the errno and message, and the undo. */
static void test_fake_failures(void **state)
{
	static const struct {
		unsigned long req;
		int err, rc;
		const char *sub;
		int logged; /* requests up to the failing one */
		bool undo;
	} t[] = {
		{NBD_SET_BLKSIZE, -EINVAL, -EINVAL, "block size 4096 refused", 1, false},
		{NBD_SET_BLKSIZE, -EPERM, -EPERM, "CAP_SYS_ADMIN", 1, false},
		{NBD_SET_BLKSIZE, -ENOTTY, -ENOTTY, "not an nbd device", 1, false},
		{NBD_SET_SIZE_BLOCKS, -EINVAL, -EINVAL, "NBD_SET_SIZE_BLOCKS on ", 2, true},
		{NBD_SET_TIMEOUT, -EINVAL, -EINVAL, "NBD_SET_TIMEOUT on ", 3, true},
		{NBD_SET_FLAGS, -ENOTTY, -EOPNOTSUPP, "too old", 4, true},
		{NBD_SET_FLAGS, -EINVAL, -EOPNOTSUPP, "FLUSH, FUA or TRIM", 4, true},
		{NBD_SET_SOCK, -EBUSY, -EBUSY,
		 "NBD_SET_SOCK on @: Device or resource busy: is nbd-client using it?", 5, true},
		{NBD_SET_SOCK, -EINVAL, -EINVAL, "refused the socket", 5, true},
		{NBD_DO_IT, -EBUSY, -EBUSY, "NBD_DO_IT on @: Device or resource busy", 6, true},
		{NBD_DO_IT, -ENOMEM, -ENOMEM, "NBD_DO_IT on @: Cannot allocate memory", 6, true},
	};
	static const unsigned long undo[] = {NBD_CLEAR_QUE, NBD_CLEAR_SOCK, 0};
	static const unsigned long none[] = {0};
	size_t i;

	for (i = 0; i < UNIT_ARRAY_SIZE(t); i++) {
		struct nbdkdev *k = (struct nbdkdev *)&k;
		char why[512] = "", *dev, *sub;
		int sv[2], n0 = fd_count(), rc;
		struct fake *f = fake_new(2000, &dev);

		f->fail_req = t[i].req;
		f->fail_err = t[i].err;
		pair(sv);
		rc = nbdkdev_attach(dev, sv[0], SIZE, BS, FLAGS, 30, &k, why, sizeof(why));
		sub = subst(t[i].sub, dev);
		if (rc != t[i].rc || !strstr(why, sub))
			fail_msg("case %zu: rc %d, why '%s', wanted '%s'", i, rc, why, sub);
		assert_null(k);
		expect_log(f, t[i].logged, t[i].undo ? undo : none);
		assert_true(fd_open(sv[0]));
		close(sv[0]);
		close(sv[1]);
		unit_release(f);
		if (fd_count() != n0)
			fail_msg("case %zu: %d descriptors, expected %d", i, fd_count(), n0);
	}
}

static void test_fake_already_connected(void **state)
{
	char why[512] = "", *dev;
	struct nbdkdev *k = NULL;
	int sv[2];
	struct fake *f = fake_new(2000, &dev);

	write_file(f->pidfile, "77\n");
	pair(sv);
	assert_int_equal(nbdkdev_attach(dev, sv[0], SIZE, BS, FLAGS, 30, &k, why, sizeof(why)),
			 -EBUSY);
	assert_non_null(strstr(why, "already connected"));
	assert_int_equal(f->n, 0);
	close(sv[0]);
	close(sv[1]);
}

/* DO_IT returning 0 before the device ran: the server end was closed. */
static void test_fake_instant_return(void **state)
{
	static const unsigned long undo[] = {NBD_CLEAR_QUE, NBD_CLEAR_SOCK, 0};
	char why[512] = "", *dev;
	struct nbdkdev *k = NULL;
	int sv[2];
	struct fake *f = fake_new(2000, &dev);

	f->instant = true;
	pair(sv);
	assert_int_equal(nbdkdev_attach(dev, sv[0], SIZE, BS, FLAGS, 30, &k, why, sizeof(why)),
			 -ECONNRESET);
	assert_non_null(strstr(why, "returned at once"));
	expect_log(f, 6, undo);
	close(sv[0]);
	close(sv[1]);
}

/* No pid file (sysfs elsewhere): attach waits start_ms, then trusts the
 * running DO_IT. */
static void test_fake_no_pid_file(void **state)
{
	struct nbdkdev_env env = {0};
	struct nbdkdev *k = NULL;
	struct timespec t0;
	char *dev;
	int sv[2];
	struct fake *f = fake_new(2000, &dev);

	f->no_pid = true;
	env.sysfs = unit_fmt("%s.nosys", dev);
	env.start_ms = 100;
	env.stop_ms = 2000;
	env.ioctl = fake_ioctl;
	env.ctx = f;
	nbdkdev_set_env(&env);
	pair(sv);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(nbdkdev_attach(dev, sv[0], SIZE, BS, FLAGS, 0, &k, NULL, 0), 0);
	assert_true(ms_since(&t0) >= 90);
	assert_int_equal(nbdkdev_dead(k), 0);
	close(sv[1]); /* ends DO_IT */
	assert_int_equal(nbdkdev_detach(k), 0);
	close(sv[0]);
}

/* ---------------------------------------------------------------- in use */

/* A block device mounted here (from mountinfo), or NULL. */
static char *mounted_blockdev(void)
{
	FILE *m = fopen("/proc/self/mountinfo", "r");
	char line[4096], *found = NULL;

	if (!m)
		return NULL;
	while (!found && fgets(line, sizeof(line), m)) {
		char *sep = strstr(line, " - "), src[PATH_MAX];
		struct stat st;

		if (sep && sscanf(sep + 3, "%*s %4095s", src) == 1 && !strncmp(src, "/dev/", 5) &&
		    stat(src, &st) == 0 && S_ISBLK(st.st_mode))
			found = strdup(src);
	}
	fclose(m);
	return found;
}

/* An unbound loop device (LOOP_CTL_GET_FREE finds or makes one), or NULL. */
static char *free_loop(void)
{
	struct timespec t0;
	struct stat st;
	char *path;
	int ctl, n;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return NULL;
	n = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	if (n < 0 || asprintf(&path, "/dev/loop%d", n) < 0)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (stat(path, &st) < 0 && ms_since(&t0) < 1000)
		sleep_ms(10); /* devtmpfs makes the node */
	if (stat(path, &st) < 0 || !S_ISBLK(st.st_mode)) {
		free(path);
		return NULL;
	}
	return path;
}

static void test_in_use(void **state)
{
	char *dir = unit_tmpdir(), *mnt, *loop;
	int fd;

	unit_write(dir, "file", "x");
	/* not block devices: "in use" has no meaning there */
	assert_int_equal(nbdkdev_in_use(unit_fmt("%s/file", dir)), -ENOTBLK);
	assert_int_equal(nbdkdev_in_use("/dev/null"), -ENOTBLK);
	assert_int_equal(nbdkdev_in_use(dir), -ENOTBLK);
	assert_int_equal(nbdkdev_in_use(unit_fmt("%s/absent", dir)), -ENOENT);
	assert_int_equal(nbdkdev_in_use(NULL), -EINVAL);

	mnt = mounted_blockdev();
	if (!mnt) {
		print_message("# skip: no mounted block device in mountinfo\n");
	} else {
		int rc = nbdkdev_in_use(unit_str(mnt));

		if (rc == -EPERM || rc == -EACCES)
			print_message("# skip: may not open %s here (%s)\n", mnt, strerror(-rc));
		else
			assert_int_equal(rc, 1);
	}
	/* a free loop device: held while we hold it with O_EXCL, else not */
	loop = free_loop();
	if (!loop) {
		print_message("# skip: no free loop device (needs root and /dev/loop-control)\n");
		return;
	}
	fd = open(unit_str(loop), O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0) {
		print_message("# skip: %s: %s\n", loop, strerror(errno));
		return;
	}
	assert_int_equal(nbdkdev_in_use(loop), 1);
	close(fd);
	assert_int_equal(nbdkdev_in_use(loop), 0);
}

/* ---------------------------------------------------------------- links */

static char *target_of(const char *path)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return unit_str(strdup(buf));
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_link(void **state)
{
	char *dir = unit_tmpdir();
	char *a = unit_fmt("%s/tandem", dir), *b = unit_fmt("%s/tandem/r0", dir);
	char *l = unit_fmt("%s/tandem/r0/0", dir), *f = unit_fmt("%s/file", dir);
	struct stat st, st2;
	mode_t old = umask(077);

	/* create, with parents 0755 whatever the umask */
	assert_int_equal(nbdkdev_link("/dev/nbd0", l), 0);
	umask(old);
	assert_string_equal(target_of(l), "/dev/nbd0");
	assert_int_equal(stat(a, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(stat(b, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	/* again: left alone */
	assert_int_equal(lstat(l, &st), 0);
	assert_int_equal(nbdkdev_link("/dev/nbd0", l), 0);
	assert_int_equal(lstat(l, &st2), 0);
	assert_int_equal(st.st_ino, st2.st_ino);
	/* a stale link is replaced, with no temporary left behind, even over
	 * a leftover temporary of a crashed run */
	assert_int_equal(symlink("junk", unit_fmt("%s.tmp-%ld", l, (long)getpid())), 0);
	assert_int_equal(nbdkdev_link("/dev/nbd1", l), 0);
	assert_string_equal(target_of(l), "/dev/nbd1");
	assert_int_equal(entries(b), 1);
	/* a single-volume name next to it */
	assert_int_equal(nbdkdev_link("/dev/nbd2", unit_fmt("%s/tandem/r1", dir)), 0);
	assert_string_equal(target_of(unit_fmt("%s/tandem/r1", dir)), "/dev/nbd2");

	/* anything else is refused and left alone */
	unit_write(dir, "file", "data");
	assert_int_equal(nbdkdev_link("/dev/nbd0", f), -EEXIST);
	assert_int_equal(lstat(f, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 4);
	assert_int_equal(nbdkdev_link("/dev/nbd0", b), -EEXIST); /* a directory */
	assert_int_equal(nbdkdev_link("/dev/nbd0", unit_fmt("%s/file/x", dir)), -ENOTDIR);
	assert_int_equal(nbdkdev_link("", l), -EINVAL);
	assert_int_equal(nbdkdev_link("/dev/nbd0", NULL), -EINVAL);
}

static void test_unlink(void **state)
{
	char *dir = unit_tmpdir();
	char *l = unit_fmt("%s/tandem/r0", dir), *f = unit_fmt("%s/file", dir);

	assert_int_equal(nbdkdev_link("/dev/nbd1", l), 0);
	/* pointing elsewhere: left alone */
	assert_int_equal(nbdkdev_unlink(l, "/dev/nbd0"), -EEXIST);
	assert_string_equal(target_of(l), "/dev/nbd1");
	assert_int_equal(nbdkdev_unlink(l, "/dev/nbd1"), 0);
	assert_null(target_of(l));
	assert_int_equal(access(unit_fmt("%s/tandem", dir), F_OK), 0); /* dirs stay */
	/* absent: fine */
	assert_int_equal(nbdkdev_unlink(l, "/dev/nbd1"), 0);
	/* not a symlink: left alone */
	unit_write(dir, "file", "data");
	assert_int_equal(nbdkdev_unlink(f, "/dev/nbd1"), -EEXIST);
	assert_int_equal(access(f, F_OK), 0);
	assert_int_equal(nbdkdev_unlink(NULL, "/dev/nbd1"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_nbd_path),
		cmocka_unit_test_teardown(test_probe_here, reset_env),
		cmocka_unit_test_teardown(test_probe_fake_sysfs, reset_env),
		cmocka_unit_test_teardown(test_attach_not_nbd, reset_env),
		cmocka_unit_test_teardown(test_attach_args, reset_env),
		cmocka_unit_test_teardown(test_fake_attach_detach, reset_env),
		cmocka_unit_test_teardown(test_fake_dead, reset_env),
		cmocka_unit_test_teardown(test_fake_stubborn_server, reset_env),
		cmocka_unit_test_teardown(test_fake_hung_kernel, reset_env),
		cmocka_unit_test_teardown(test_fake_failures, reset_env),
		cmocka_unit_test_teardown(test_fake_already_connected, reset_env),
		cmocka_unit_test_teardown(test_fake_instant_return, reset_env),
		cmocka_unit_test_teardown(test_fake_no_pid_file, reset_env),
		cmocka_unit_test_teardown(test_in_use, reset_env),
		cmocka_unit_test_teardown(test_link, reset_env),
		cmocka_unit_test_teardown(test_unlink, reset_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
