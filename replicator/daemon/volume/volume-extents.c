/*
 * volume-extents: what the NBD front end asks of the backing file
 * besides data: its allocation (block status) and read-ahead (CACHE).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "volume/volume-int.h"
#include "volume/volume.h"

/*
 * The extent at pos (< end) of the backing file: *hole, and where it
 * ends (*next, at most end). lseek's result does not depend on the file
 * position that it moves, and nothing else uses that position, so that
 * threads may share the descriptor.
 */
static int seek_extent(struct volume *v, uint64_t pos, uint64_t end, uint64_t *next, bool *hole)
{
	int fd = bdev_fd(v->data);
	off_t d, h;

	*hole = false;
	*next = end;
	if (bdev_is_blockdev(v->data))
		return 0;
	d = lseek(fd, (off_t)pos, SEEK_DATA);
	if (d < 0 && errno == ENXIO) { /* no data from pos to the end of the file */
		*hole = true;
		return 0;
	}
	if (d < 0)
		return errno == EINVAL || errno == EOPNOTSUPP ? 0 : -errno;
	if ((uint64_t)d > pos) {
		*hole = true;
		*next = (uint64_t)d < end ? (uint64_t)d : end;
		return 0;
	}
	h = lseek(fd, (off_t)pos, SEEK_HOLE);
	if (h < 0)
		return -errno;
	if ((uint64_t)h > pos && (uint64_t)h < end)
		*next = (uint64_t)h;
	return 0;
}

int volume_extents(struct volume *v, uint64_t off, uint64_t len,
		   int (*emit)(void *arg, uint64_t len, bool hole), void *arg)
{
	uint64_t size = v->size_sect * 512, end, next;
	bool hole;
	int rc;

	if (off >= size || len == 0)
		return -EINVAL;
	end = len < size - off ? off + len : size;
	pthread_mutex_lock(&v->lock);
	rc = volume_enter(v);
	pthread_mutex_unlock(&v->lock);
	if (rc < 0)
		return rc;
	for (; off < end; off = next) {
		rc = seek_extent(v, off, end, &next, &hole);
		if (rc < 0 || emit(arg, next - off, hole))
			break;
	}
	pthread_mutex_lock(&v->lock);
	volume_leave(v);
	pthread_mutex_unlock(&v->lock);
	return rc < 0 ? rc : 0;
}

int volume_cache(struct volume *v, uint64_t off, uint32_t len)
{
	uint64_t size = v->size_sect * 512;
	int rc;

	if (off > size || len > size - off)
		return -EINVAL;
	pthread_mutex_lock(&v->lock);
	rc = volume_enter(v);
	pthread_mutex_unlock(&v->lock);
	if (rc < 0)
		return rc;
	rc = -posix_fadvise(bdev_fd(v->data), (off_t)off, (off_t)len, POSIX_FADV_WILLNEED);
	pthread_mutex_lock(&v->lock);
	volume_leave(v);
	pthread_mutex_unlock(&v->lock);
	return rc;
}
