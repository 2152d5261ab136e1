/*
 * sbsave: split-brain save sets (a sparse image of the diverging blocks
 * and a JSON manifest): set names, writing a set crash-safely, the free
 * space check. The manifest is written with stdio, one range per line (it
 * may list millions), strings escaped by json-c. Reading, listing and
 * discarding sets is in sbsave-read.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <json-c/json.h>

#include "sbsave-int.h"
#include "sbsave.h"

#define NAME_MAX_CLASH 100 /* -2 .. -99 after a name clash */
#define SPACE_SLACK (1u << 20)

struct sbsave {
	char *path; /* the set's directory */
	int dirfd;
	int img;
	struct sbsave_meta m; /* strings point to own copies in str[] */
	char *str[4];
	struct sbsave_range *r;
	size_t n, cap;
	uint64_t bytes;
	int err; /* sticky: a range could not be saved */
};

/* ---------------------------------------------------------------- names */

static bool digits(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

/* A decimal number of 1..5 digits without a leading zero, ending at *end. */
static bool small_num(const char *p, unsigned int *v, const char **end)
{
	size_t n = 0;

	while (n < 6 && p[n] >= '0' && p[n] <= '9')
		n++;
	if (n == 0 || n > 5 || (n > 1 && p[0] == '0'))
		return false;
	*v = (unsigned int)strtoul(p, NULL, 10);
	*end = p + n;
	return true;
}

bool sbsave_parse_name(const char *name, time_t *created, unsigned int *volume)
{
	struct tm tm = {0};
	const char *p;
	unsigned int vnr, k;
	char *end, again[16];
	time_t t;

	/* sb-YYYYMMDDTHHMMSSZ-vN[-K] */
	if (strncmp(name, "sb-", 3) != 0 || !digits(name + 3, 8) || name[11] != 'T' ||
	    !digits(name + 12, 6) || strncmp(name + 18, "Z-v", 3) != 0)
		return false;
	end = strptime(name + 3, "%Y%m%dT%H%M%S", &tm);
	if (!end || end != name + 18)
		return false;
	/* a time that exists, as make_dir() prints it: not February 30 or
	 * second 60, which strptime() takes */
	t = timegm(&tm);
	if (!gmtime_r(&t, &tm) || strftime(again, sizeof(again), "%Y%m%dT%H%M%S", &tm) != 15 ||
	    memcmp(again, name + 3, 15) != 0)
		return false;
	if (!small_num(name + 21, &vnr, &p) || vnr > 65535)
		return false;
	if (*p == '-' && (!small_num(p + 1, &k, &p) || k < 2))
		return false;
	if (*p)
		return false;
	if (created)
		*created = t;
	if (volume)
		*volume = vnr;
	return true;
}

int sbsave_resdir(const char *statedir, const char *resource, char *buf, size_t len)
{
	if (!statedir || !*statedir || !resource || !*resource || strchr(resource, '/') ||
	    !strcmp(resource, ".") || !strcmp(resource, ".."))
		return -EINVAL;
	if ((size_t)snprintf(buf, len, "%s/%s", statedir, resource) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* ---------------------------------------------------------------- writing */

int sbsave_fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* "key": "escaped value"sep; -ENOMEM if json-c cannot escape it. */
static int put_str(FILE *f, const char *key, const char *val, const char *sep)
{
	json_object *o = json_object_new_string(val);
	const char *esc =
	    o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;

	if (esc)
		fprintf(f, "\t\"%s\": %s%s\n", key, esc, sep);
	json_object_put(o);
	return esc ? 0 : -ENOMEM;
}

static void put_uuids(FILE *f, const char *key, const struct gi *g)
{
	fprintf(f,
		"\t\"%s\": {\"current\": \"%016" PRIX64 "\", \"bitmap\": \"%016" PRIX64 "\", "
		"\"history\": [\"%016" PRIX64 "\", \"%016" PRIX64 "\"]},\n",
		key, g->uuid[GI_CURRENT], g->uuid[GI_BITMAP], g->uuid[GI_HISTORY0],
		g->uuid[GI_HISTORY1]);
}

static int put_manifest(FILE *f, const struct sbsave *s, bool complete)
{
	char when[32];
	struct tm tm;
	size_t i;
	int rc;

	gmtime_r(&s->m.created, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(f, "{\n\t\"format\": \"%s\",\n\t\"version\": %d,\n\t\"state\": \"%s\",\n",
		SBSAVE_FORMAT, SBSAVE_VERSION, complete ? "complete" : "partial");
	rc = put_str(f, "resource", s->m.resource, ",");
	fprintf(f, "\t\"volume\": %u,\n", s->m.volume);
	rc = rc ? rc : put_str(f, "node", s->m.node, ",");
	rc = rc ? rc : put_str(f, "peer", s->m.peer, ",");
	fprintf(f, "\t\"created\": \"%s\",\n", when);
	rc = rc ? rc : put_str(f, "policy", s->m.policy, ",");
	fprintf(f, "\t\"device_size\": %" PRIu64 ",\n", s->m.device_size);
	put_uuids(f, "local_uuids", &s->m.local);
	put_uuids(f, "peer_uuids", &s->m.peer_uuids);
	fprintf(f, "\t\"total_bytes\": %" PRIu64 ",\n\t\"ranges\": [", s->bytes);
	for (i = 0; i < s->n; i++)
		fprintf(f, "%s\n\t\t{\"offset\": %" PRIu64 ", \"length\": %" PRIu64 "}",
			i ? "," : "", s->r[i].offset, s->r[i].length);
	fprintf(f, "%s]\n}\n", s->n ? "\n\t" : "");
	return rc;
}

/* Replace the manifest atomically: temporary file, fsync, rename, fsync
 * of the directory. */
static int write_manifest(struct sbsave *s, bool complete)
{
	int fd, rc = 0;
	FILE *f;

	fd = openat(s->dirfd, SBSAVE_MANIFEST_TMP, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		close(fd);
		goto out;
	}
	errno = 0;
	rc = put_manifest(f, s, complete);
	if (!rc && (fflush(f) != 0 || ferror(f)))
		rc = -(errno ? errno : EIO);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (fclose(f) != 0 && !rc)
		rc = -errno;
	if (!rc && renameat(s->dirfd, SBSAVE_MANIFEST_TMP, s->dirfd, SBSAVE_MANIFEST) < 0)
		rc = -errno;
	if (!rc && fsync(s->dirfd) < 0)
		rc = -errno;
out:
	if (rc)
		unlinkat(s->dirfd, SBSAVE_MANIFEST_TMP, 0);
	return rc;
}

static void free_set(struct sbsave *s)
{
	size_t i;

	if (s->img >= 0)
		close(s->img);
	if (s->dirfd >= 0)
		close(s->dirfd);
	for (i = 0; i < 4; i++)
		free(s->str[i]);
	free(s->r);
	free(s->path);
	free(s);
}

/* Remove a set holding no saved data, and the struct. */
static void remove_set(struct sbsave *s)
{
	char *parent = strdup(s->path), *slash;

	unlinkat(s->dirfd, SBSAVE_MANIFEST_TMP, 0);
	unlinkat(s->dirfd, SBSAVE_MANIFEST, 0);
	unlinkat(s->dirfd, SBSAVE_IMAGE, 0);
	rmdir(s->path);
	if (parent && (slash = strrchr(parent, '/'))) {
		*slash = '\0';
		sbsave_fsync_path(*parent ? parent : "/");
	}
	free(parent);
	free_set(s);
}

static int make_dir(struct sbsave *s, const char *resdir)
{
	char base[64], name[80];
	struct tm tm;
	int k;

	gmtime_r(&s->m.created, &tm);
	strftime(base, sizeof(base), "sb-%Y%m%dT%H%M%SZ", &tm);
	for (k = 1; k < NAME_MAX_CLASH; k++) {
		if (k == 1)
			snprintf(name, sizeof(name), "%s-v%u", base, s->m.volume);
		else
			snprintf(name, sizeof(name), "%s-v%u-%d", base, s->m.volume, k);
		free(s->path);
		if (asprintf(&s->path, "%s/%s", resdir, name) < 0) {
			s->path = NULL;
			return -ENOMEM;
		}
		if (mkdir(s->path, 0700) == 0)
			return sbsave_fsync_path(resdir);
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int sbsave_begin(const char *resdir, const struct sbsave_meta *m, struct sbsave **out)
{
	const char *src[4];
	struct sbsave *s;
	size_t i;
	int rc;

	if (!resdir || !m || !out || !m->resource || !*m->resource || m->device_size == 0 ||
	    m->volume > 65535 || m->device_size > INT64_MAX)
		return -EINVAL;
	if (mkdir(resdir, 0700) < 0 && errno != EEXIST)
		return -errno;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dirfd = s->img = -1;
	s->m = *m;
	if (!s->m.created)
		s->m.created = time(NULL);
	src[0] = m->resource;
	src[1] = m->node;
	src[2] = m->peer;
	src[3] = m->policy;
	for (i = 0; i < 4; i++)
		if (!(s->str[i] = strdup(src[i] ? src[i] : ""))) {
			free_set(s);
			return -ENOMEM;
		}
	s->m.resource = s->str[0];
	s->m.node = s->str[1];
	s->m.peer = s->str[2];
	s->m.policy = s->str[3];
	rc = make_dir(s, resdir);
	if (rc) {
		free_set(s);
		return rc;
	}
	s->dirfd = open(s->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0) {
		rc = -errno;
		rmdir(s->path);
		free_set(s);
		return rc;
	}
	s->img = openat(s->dirfd, SBSAVE_IMAGE, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (s->img < 0 || ftruncate(s->img, (off_t)m->device_size) < 0)
		rc = -errno;
	if (!rc)
		rc = write_manifest(s, false);
	if (rc) {
		remove_set(s);
		return rc;
	}
	*out = s;
	return 0;
}

static int pwrite_all(int fd, const uint8_t *p, uint64_t len, uint64_t off)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

/* The first range that ends at or after off (so it touches or follows). */
static size_t first_touching(const struct sbsave *s, uint64_t off)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->r[mid].offset + s->r[mid].length < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Write the parts of [off, end) no range covers yet. */
static int write_gaps(struct sbsave *s, size_t i, uint64_t off, uint64_t end, const uint8_t *buf)
{
	uint64_t pos = off;
	int rc;

	for (; i < s->n && s->r[i].offset < end; i++) {
		if (s->r[i].offset > pos) {
			rc = pwrite_all(s->img, buf + (pos - off), s->r[i].offset - pos, pos);
			if (rc)
				return rc;
			s->bytes += s->r[i].offset - pos;
		}
		if (s->r[i].offset + s->r[i].length > pos)
			pos = s->r[i].offset + s->r[i].length;
	}
	if (pos < end) {
		rc = pwrite_all(s->img, buf + (pos - off), end - pos, pos);
		if (rc)
			return rc;
		s->bytes += end - pos;
	}
	return 0;
}

int sbsave_range(struct sbsave *s, uint64_t off, const void *buf, size_t len)
{
	uint64_t end = off + len;
	size_t i, j;
	int rc;

	if (!s || (!buf && len))
		return -EINVAL;
	if (off > s->m.device_size || len > s->m.device_size - off)
		return -ERANGE;
	if (len == 0)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct sbsave_range *r = realloc(s->r, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		s->r = r;
		s->cap = cap;
	}
	i = first_touching(s, off);
	rc = write_gaps(s, i, off, end, buf);
	if (rc) {
		s->err = rc;
		return rc;
	}
	/* ranges i..j-1 touch [off, end): they become one */
	for (j = i; j < s->n && s->r[j].offset <= end; j++) {
		if (s->r[j].offset < off)
			off = s->r[j].offset;
		if (s->r[j].offset + s->r[j].length > end)
			end = s->r[j].offset + s->r[j].length;
	}
	if (j == i) {
		memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(*s->r));
		s->n++;
	} else if (j > i + 1) {
		memmove(&s->r[i + 1], &s->r[j], (s->n - j) * sizeof(*s->r));
		s->n -= j - i - 1;
	}
	s->r[i].offset = off;
	s->r[i].length = end - off;
	return 0;
}

int sbsave_flush(struct sbsave *s)
{
	int rc;

	if (!s)
		return -EINVAL;
	if (fsync(s->img) < 0)
		return -errno;
	rc = write_manifest(s, false);
	return s->err ? s->err : rc;
}

int sbsave_commit(struct sbsave *s)
{
	int rc;

	if (!s)
		return -EINVAL;
	rc = s->err;
	if (!rc && fsync(s->img) < 0)
		rc = -errno;
	if (!rc)
		rc = write_manifest(s, true);
	else if (fsync(s->img) == 0)
		write_manifest(s, false); /* best effort: keep what was saved */
	free_set(s);
	return rc;
}

int sbsave_abort(struct sbsave *s)
{
	int rc;

	if (!s)
		return -EINVAL;
	if (s->n == 0) {
		remove_set(s);
		return 0;
	}
	rc = fsync(s->img) < 0 ? -errno : write_manifest(s, false);
	free_set(s);
	return rc;
}

const char *sbsave_path(const struct sbsave *s)
{
	return s->path;
}

uint64_t sbsave_bytes(const struct sbsave *s)
{
	return s->bytes;
}

int sbsave_space_ok(const char *dir, uint64_t bytes, uint64_t *avail)
{
	struct statvfs v;
	uint64_t have, need;

	if (!dir)
		return -EINVAL;
	if (statvfs(dir, &v) < 0)
		return -errno;
	have = (uint64_t)v.f_bavail * v.f_frsize;
	if (avail)
		*avail = have;
	/* the manifest is at most ~50 bytes per range and a range at least a
	 * 4 KiB block: bytes/64 covers it, with 1 MiB for the file system */
	need = bytes + bytes / 64 + SPACE_SLACK;
	if (need < bytes || have < need)
		return -ENOSPC;
	if (v.f_files && v.f_favail < 4)
		return -ENOSPC;
	return 0;
}
