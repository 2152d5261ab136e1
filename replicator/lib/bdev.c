/*
 * bdev: positioned I/O on a block device or regular file, with optional
 * fault injection for tests.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bdev.h"

struct bdev {
	int fd;
	char *path;
	uint64_t size;
	bool blockdev;
	const struct bdev_faults *faults;
};

int bdev_open(const char *path, bool writable, struct bdev **out)
{
	struct bdev *b;
	struct stat st;
	int err;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->path = strdup(path);
	if (!b->path) {
		free(b);
		return -ENOMEM;
	}
	b->fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (b->fd < 0 || fstat(b->fd, &st) < 0)
		goto fail;
	if (S_ISBLK(st.st_mode)) {
		b->blockdev = true;
		if (ioctl(b->fd, BLKGETSIZE64, &b->size) < 0)
			goto fail;
	} else if (S_ISREG(st.st_mode)) {
		b->size = (uint64_t)st.st_size;
	} else {
		errno = ENODEV;
		goto fail;
	}
	*out = b;
	return 0;
fail:
	err = -errno;
	if (b->fd >= 0)
		close(b->fd);
	free(b->path);
	free(b);
	return err;
}

void bdev_close(struct bdev *b)
{
	if (!b)
		return;
	close(b->fd);
	free(b->path);
	free(b);
}

const char *bdev_path(const struct bdev *b)
{
	return b->path;
}

uint64_t bdev_size(const struct bdev *b)
{
	return b->size;
}

bool bdev_is_blockdev(const struct bdev *b)
{
	return b->blockdev;
}

int bdev_fd(const struct bdev *b)
{
	return b->fd;
}

void bdev_set_faults(struct bdev *b, const struct bdev_faults *f)
{
	b->faults = f;
}

/*
 * Transfer all of [off, off + len), retrying short transfers; the fault
 * hook (tests only) may shorten one system call or fail after it.
 */
static int do_io(struct bdev *b, char *p, size_t len, uint64_t off, bool write, int rwf)
{
	struct bdev_fault (*hook)(void *, uint64_t, size_t) = NULL;
	ssize_t r;

	if (off > b->size || len > b->size - off)
		return write ? -ENOSPC : -ENODATA;
	if (b->faults)
		hook = write ? b->faults->on_write : b->faults->on_read;
	while (len > 0) {
		size_t chunk = len;
		int fault_err = 0;

		if (hook) {
			struct bdev_fault f = hook(b->faults->ctx, off, len);

			chunk = f.len < len ? f.len : len;
			fault_err = f.err;
		}
		if (chunk > 0) {
			struct iovec iov = {p, chunk};

			r = write ? pwritev2(b->fd, &iov, 1, (off_t)off, rwf)
				  : preadv2(b->fd, &iov, 1, (off_t)off, 0);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return -errno;
			if (r == 0)
				return write ? -EIO : -ENODATA;
			p += r;
			off += (uint64_t)r;
			len -= (size_t)r;
		}
		if (fault_err)
			return fault_err;
	}
	return 0;
}

int bdev_pread(struct bdev *b, void *buf, size_t len, uint64_t off)
{
	return do_io(b, buf, len, off, false, 0);
}

static int do_pwrite(struct bdev *b, const void *buf, size_t len, uint64_t off, int rwf)
{
	return do_io(b, (char *)buf, len, off, true, rwf);
}

int bdev_pwrite(struct bdev *b, const void *buf, size_t len, uint64_t off)
{
	return do_pwrite(b, buf, len, off, 0);
}

int bdev_pwrite_sync(struct bdev *b, const void *buf, size_t len, uint64_t off)
{
	int rc = do_pwrite(b, buf, len, off, RWF_DSYNC);

	/* the sync part of the write can fail too: the flush hook models it */
	if (rc == 0 && b->faults && b->faults->on_flush)
		rc = b->faults->on_flush(b->faults->ctx);

	if (rc == -EOPNOTSUPP || rc == -EINVAL) { /* old kernel: write, then flush */
		rc = do_pwrite(b, buf, len, off, 0);
		if (rc == 0)
			rc = bdev_flush(b);
	}
	return rc;
}

int bdev_flush(struct bdev *b)
{
	if (b->faults && b->faults->on_flush) {
		int err = b->faults->on_flush(b->faults->ctx);

		if (!err && b->faults->on_fsync)
			err = b->faults->on_fsync(b->faults->ctx);
		if (err)
			return err;
	}
	return fdatasync(b->fd) < 0 ? -errno : 0;
}

int bdev_zero(struct bdev *b, uint64_t off, uint64_t len)
{
	static const char zeros[65536];
	int rc;

	if (off > b->size || len > b->size - off)
		return -ENOSPC;
	if (!b->faults) {
		if (b->blockdev) {
			uint64_t range[2] = {off, len};

			if (ioctl(b->fd, BLKZEROOUT, range) == 0)
				return 0;
		} else if (fallocate(b->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)off,
				     (off_t)len) == 0) {
			return 0;
		}
	}
	while (len > 0) {
		size_t chunk = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);

		rc = bdev_pwrite(b, zeros, chunk, off);
		if (rc < 0)
			return rc;
		off += chunk;
		len -= chunk;
	}
	return 0;
}
