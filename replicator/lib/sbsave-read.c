/*
 * sbsave-read: decoding save sets (validating every manifest field),
 * listing them and discarding one; see sbsave.h. Manifests are read with
 * json-c.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "sbsave-int.h"
#include "sbsave.h"

#define MANIFEST_MAX (256u << 20) /* refuse to read a larger manifest */

struct rd {
	const char *file; /* for messages: the manifest's path */
	char *reason;
	size_t rlen;
	struct sbsave_info *i;
};

static int bad(struct rd *d, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(struct rd *d, const char *field, const char *fmt, ...)
{
	va_list ap;
	char *c;
	int n;

	if (d->rlen == 0)
		return -EINVAL;
	n = snprintf(d->reason, d->rlen, "%s: %s%s", d->file, field ? field : "",
		     field ? ": " : "");
	if (n >= 0 && (size_t)n < d->rlen) {
		va_start(ap, fmt);
		vsnprintf(d->reason + n, d->rlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	/* one line: control characters of the quoted manifest text as '?' */
	for (c = d->reason; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return -EINVAL;
}

/* parent[key] of type t. */
static int field(struct rd *d, json_object *parent, const char *key, json_type t, json_object **out)
{
	if (!json_object_object_get_ex(parent, key, out))
		return bad(d, key, "missing");
	if (!json_object_is_type(*out, t))
		return bad(d, key, "is %s, expected %s",
			   json_type_to_name(json_object_get_type(*out)), json_type_to_name(t));
	return 0;
}

static int get_u64(struct rd *d, json_object *parent, const char *key, const char *name,
		   uint64_t *v)
{
	json_object *o;

	if (!json_object_object_get_ex(parent, key, &o))
		return bad(d, name, "missing");
	if (!json_object_is_type(o, json_type_int))
		return bad(d, name, "is %s, expected an integer",
			   json_type_to_name(json_object_get_type(o)));
	if (json_object_get_int64(o) < 0)
		return bad(d, name, "is negative");
	*v = json_object_get_uint64(o);
	if (*v > INT64_MAX)
		return bad(d, name, "is too large");
	return 0;
}

static int get_str(struct rd *d, json_object *parent, const char *key, char **out)
{
	json_object *o;
	int rc = field(d, parent, key, json_type_string, &o);

	if (rc)
		return rc;
	free(*out);
	*out = strdup(json_object_get_string(o));
	return *out ? 0 : -ENOMEM;
}

static int hex_uuid(struct rd *d, json_object *o, const char *name, uint64_t *v)
{
	const char *s;

	if (!json_object_is_type(o, json_type_string))
		return bad(d, name, "is not a string");
	s = json_object_get_string(o);
	if (strlen(s) != 16 || strspn(s, "0123456789abcdefABCDEF") != 16)
		return bad(d, name, "'%.40s' is not 16 hex digits", s);
	*v = strtoull(s, NULL, 16);
	return 0;
}

static int get_uuids(struct rd *d, json_object *top, const char *key, struct gi *g)
{
	static const char *const slot[] = {"current", "bitmap"};
	json_object *o, *v, *h;
	char name[64];
	int i, rc;

	rc = field(d, top, key, json_type_object, &o);
	for (i = 0; !rc && i < 2; i++) {
		snprintf(name, sizeof(name), "%s.%s", key, slot[i]);
		if (!json_object_object_get_ex(o, slot[i], &v))
			return bad(d, name, "missing");
		rc = hex_uuid(d, v, name, &g->uuid[i == 0 ? GI_CURRENT : GI_BITMAP]);
	}
	if (rc)
		return rc;
	snprintf(name, sizeof(name), "%s.history", key);
	if (!json_object_object_get_ex(o, "history", &h))
		return bad(d, name, "missing");
	if (!json_object_is_type(h, json_type_array) || json_object_array_length(h) != 2)
		return bad(d, name, "is not an array of 2 UUIDs");
	for (i = 0; !rc && i < 2; i++) {
		snprintf(name, sizeof(name), "%s.history[%d]", key, i);
		rc = hex_uuid(d, json_object_array_get_idx(h, (size_t)i), name,
			      &g->uuid[GI_HISTORY0 + i]);
	}
	return rc;
}

static int get_ranges(struct rd *d, json_object *top)
{
	struct sbsave_info *info = d->i;
	uint64_t prev_end = 0, sum = 0, total;
	json_object *a, *e;
	char name[64];
	size_t k, n;
	int rc;

	rc = field(d, top, "ranges", json_type_array, &a);
	if (rc)
		return rc;
	n = json_object_array_length(a);
	info->ranges = calloc(n ? n : 1, sizeof(*info->ranges));
	if (!info->ranges)
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		struct sbsave_range *r = &info->ranges[k];

		e = json_object_array_get_idx(a, k);
		snprintf(name, sizeof(name), "ranges[%zu]", k);
		if (!json_object_is_type(e, json_type_object))
			return bad(d, name, "is not an object");
		snprintf(name, sizeof(name), "ranges[%zu].offset", k);
		rc = get_u64(d, e, "offset", name, &r->offset);
		snprintf(name, sizeof(name), "ranges[%zu].length", k);
		if (!rc)
			rc = get_u64(d, e, "length", name, &r->length);
		if (rc)
			return rc;
		if (r->length == 0)
			return bad(d, name, "is 0");
		if (r->offset > info->device_size || r->length > info->device_size - r->offset)
			return bad(d, name,
				   "%" PRIu64 "+%" PRIu64 " ends past the device (%" PRIu64
				   " bytes)",
				   r->offset, r->length, info->device_size);
		snprintf(name, sizeof(name), "ranges[%zu].offset", k);
		if (k > 0 && r->offset < prev_end)
			return bad(d, name,
				   "%" PRIu64 " overlaps or precedes the previous range "
				   "(ending at %" PRIu64 ")",
				   r->offset, prev_end);
		prev_end = r->offset + r->length;
		sum += r->length;
		info->n_ranges = k + 1;
	}
	rc = get_u64(d, top, "total_bytes", "total_bytes", &total);
	if (!rc && total != sum)
		return bad(d, "total_bytes",
			   "%" PRIu64 " is not the sum of the ranges (%" PRIu64 ")", total, sum);
	info->total_bytes = sum;
	return rc;
}

static int get_header(struct rd *d, json_object *top)
{
	struct sbsave_info *info = d->i;
	json_object *o;
	struct tm tm = {0};
	uint64_t v;
	char *end;
	int rc;

	if (!json_object_is_type(top, json_type_object))
		return bad(d, NULL, "not a JSON object");
	rc = field(d, top, "format", json_type_string, &o);
	if (!rc && strcmp(json_object_get_string(o), SBSAVE_FORMAT) != 0)
		return bad(d, "format", "'%.40s' is not " SBSAVE_FORMAT, json_object_get_string(o));
	if (!rc)
		rc = get_u64(d, top, "version", "version", &v);
	if (!rc && v != SBSAVE_VERSION)
		return bad(d, "version", "%" PRIu64 " is not supported (only %d)", v,
			   SBSAVE_VERSION);
	if (!rc)
		rc = field(d, top, "state", json_type_string, &o);
	if (rc)
		return rc;
	if (strcmp(json_object_get_string(o), "complete") == 0)
		info->complete = true;
	else if (strcmp(json_object_get_string(o), "partial") != 0)
		return bad(d, "state", "'%.40s' is neither complete nor partial",
			   json_object_get_string(o));
	rc = get_str(d, top, "resource", &info->resource);
	if (!rc && !*info->resource)
		return bad(d, "resource", "is empty");
	if (!rc)
		rc = get_u64(d, top, "volume", "volume", &v);
	if (!rc && v > 65535)
		return bad(d, "volume", "%" PRIu64 " is out of range", v);
	info->volume = (unsigned int)v;
	if (!rc)
		rc = get_str(d, top, "node", &info->node);
	if (!rc)
		rc = get_str(d, top, "peer", &info->peer);
	if (!rc)
		rc = get_str(d, top, "policy", &info->policy);
	if (!rc)
		rc = field(d, top, "created", json_type_string, &o);
	if (rc)
		return rc;
	end = strptime(json_object_get_string(o), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!end || *end)
		return bad(d, "created", "'%.40s' is not YYYY-MM-DDTHH:MM:SSZ",
			   json_object_get_string(o));
	info->created = timegm(&tm);
	rc = get_u64(d, top, "device_size", "device_size", &info->device_size);
	if (!rc && info->device_size == 0)
		return bad(d, "device_size", "is 0");
	if (!rc)
		rc = get_uuids(d, top, "local_uuids", &info->local);
	if (!rc)
		rc = get_uuids(d, top, "peer_uuids", &info->peer_uuids);
	return rc;
}

/* The whole manifest (at most MANIFEST_MAX bytes) into a malloc'd buffer. */
static int slurp(struct rd *d, int fd, char **buf, size_t *len)
{
	struct stat st;
	size_t got = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return bad(d, NULL, "not a regular file");
	if (st.st_size > (off_t)MANIFEST_MAX)
		return bad(d, NULL, "%jd bytes is larger than a manifest can be",
			   (intmax_t)st.st_size);
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, *buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	(*buf)[got] = '\0';
	*len = got;
	return 0;
}

static int parse_manifest(struct rd *d, const char *buf, size_t len)
{
	struct json_tokener *tok = json_tokener_new_ex(8);
	enum json_tokener_error e;
	json_object *top;
	size_t end;
	int rc;

	if (!tok)
		return -ENOMEM;
	top = json_tokener_parse_ex(tok, buf, (int)len);
	e = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (e == json_tokener_continue || (!top && e == json_tokener_success))
		return bad(d, NULL, "ends early (truncated, %zu bytes)", len);
	if (e != json_tokener_success)
		return bad(d, NULL, "not valid JSON at byte %zu: %s", end,
			   json_tokener_error_desc(e));
	if (end < len && strspn(buf + end, " \t\r\n") != len - end) { /* a NUL is data too */
		json_object_put(top);
		return bad(d, NULL, "data after the JSON object at byte %zu", end);
	}
	rc = get_header(d, top);
	if (!rc)
		rc = get_ranges(d, top);
	json_object_put(top);
	return rc;
}

/* path's parent directory and last component, trailing slashes ignored:
 * "a/b/" -> "a" and "b", "b" -> "." and "b", "/b" -> "/" and "b". */
static int split_path(const char *path, char **parent, char **name)
{
	size_t len = strlen(path), b, p;

	while (len > 1 && path[len - 1] == '/')
		len--;
	for (b = len; b > 0 && path[b - 1] != '/'; b--)
		;
	for (p = b; p > 1 && path[p - 1] == '/'; p--)
		;
	*name = strndup(path + b, len - b);
	*parent = p == 0 ? strdup(".") : strndup(path, p);
	if (*name && *parent)
		return 0;
	free(*name);
	free(*parent);
	*name = *parent = NULL;
	return -ENOMEM;
}

/* name: the last component of path; resource: the one before (or ""). */
static int path_names(struct sbsave_info *i, const char *path)
{
	char *parent, *pp;
	int rc = split_path(path, &parent, &i->name);

	if (!rc)
		rc = split_path(parent, &pp, &i->resource);
	if (!rc) {
		free(pp);
		if (!strcmp(i->resource, ".") || !strcmp(i->resource, "/"))
			i->resource[0] = '\0';
	}
	free(parent);
	i->path = strdup(path);
	return !rc && !i->path ? -ENOMEM : rc;
}

static int empty_strings(struct sbsave_info *i)
{
	char **s[] = {&i->node, &i->peer, &i->policy};
	size_t k;

	for (k = 0; k < 3; k++)
		if (!*s[k] && !(*s[k] = strdup("")))
			return -ENOMEM;
	return 0;
}

static int check_image(struct rd *d, int dirfd)
{
	struct stat st;
	char file[PATH_MAX];

	snprintf(file, sizeof(file), "%s/" SBSAVE_IMAGE, d->i->path);
	d->file = file;
	if (fstatat(dirfd, SBSAVE_IMAGE, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return -errno;
		/* no manifest and no image: begun, nothing saved yet */
		return d->i->has_manifest ? bad(d, NULL, "missing") : 0;
	}
	if (!S_ISREG(st.st_mode))
		return bad(d, NULL, "not a regular file");
	if (!d->i->has_manifest)
		d->i->device_size = (uint64_t)st.st_size;
	else if ((uint64_t)st.st_size != d->i->device_size)
		return bad(d, NULL, "%jd bytes, but the manifest says device_size %" PRIu64,
			   (intmax_t)st.st_size, d->i->device_size);
	return 0;
}

static int load(struct rd *d, int dirfd)
{
	char file[PATH_MAX], *buf = NULL;
	unsigned int vnr;
	size_t len = 0;
	int fd, rc;
	bool named = sbsave_parse_name(d->i->name, &d->i->created, &vnr);

	snprintf(file, sizeof(file), "%s/" SBSAVE_MANIFEST, d->i->path);
	d->file = file;
	fd = openat(dirfd, SBSAVE_MANIFEST, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno != ENOENT)
		return -errno;
	if (fd < 0) {
		/* a crash right after the mkdir: partial, known by its name */
		if (!named)
			return bad(d, NULL, "missing, and %s is not a save set name", d->i->name);
		d->i->volume = vnr;
		return check_image(d, dirfd);
	}
	d->i->has_manifest = true;
	rc = slurp(d, fd, &buf, &len);
	close(fd);
	if (!rc) {
		free(d->i->resource);
		d->i->resource = NULL;
		rc = parse_manifest(d, buf, len);
	}
	free(buf);
	if (!rc && named && vnr != d->i->volume)
		rc = bad(d, "volume", "%u, but the directory name says v%u", d->i->volume, vnr);
	return rc ? rc : check_image(d, dirfd);
}

int sbsave_load(const char *path, struct sbsave_info **out, char *reason, size_t reason_len)
{
	struct rd d = {.file = path, .reason = reason, .rlen = reason ? reason_len : 0};
	int dirfd, rc;

	if (reason && reason_len)
		reason[0] = '\0';
	if (!path || !out)
		return -EINVAL;
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dirfd < 0) {
		rc = errno == ELOOP ? -ENOTDIR : -errno;
		if (reason && reason_len)
			snprintf(reason, reason_len, "%s: %s", path, strerror(-rc));
		return rc;
	}
	d.i = calloc(1, sizeof(*d.i));
	rc = d.i ? path_names(d.i, path) : -ENOMEM;
	if (!rc)
		rc = load(&d, dirfd);
	if (!rc)
		rc = empty_strings(d.i);
	close(dirfd);
	if (rc) {
		if (rc != -EINVAL && reason && reason_len)
			snprintf(reason, reason_len, "%s: %s", path, strerror(-rc));
		sbsave_info_free(d.i);
		return rc;
	}
	*out = d.i;
	return 0;
}

void sbsave_info_free(struct sbsave_info *i)
{
	if (!i)
		return;
	free(i->path);
	free(i->name);
	free(i->resource);
	free(i->node);
	free(i->peer);
	free(i->policy);
	free(i->ranges);
	free(i);
}

/* ---------------------------------------------------------------- sets */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The save set names in resdir (real directories only), sorted. */
static int set_names(const char *resdir, char ***names, size_t *n)
{
	DIR *dir = opendir(resdir);
	size_t cap = 0;
	struct dirent *e;
	struct stat st;
	int rc = 0;

	*names = NULL;
	*n = 0;
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(dir))) {
		if (!sbsave_parse_name(e->d_name, NULL, NULL) ||
		    fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		if (*n == cap) {
			char **p = realloc(*names, (cap ? 2 * cap : 16) * sizeof(*p));

			if (!p) {
				rc = -ENOMEM;
				break;
			}
			*names = p;
			cap = cap ? 2 * cap : 16;
		}
		if (!((*names)[*n] = strdup(e->d_name))) {
			rc = -ENOMEM;
			break;
		}
		(*n)++;
	}
	closedir(dir);
	if (*n)
		qsort(*names, *n, sizeof(**names), cmp_names);
	return rc;
}

int sbsave_list(const char *resdir, sbsave_list_fn fn, void *arg)
{
	char reason[SBSAVE_REASON_MAX], *path;
	struct sbsave_info *info;
	char **names;
	size_t n, k;
	int rc, err;

	if (!resdir || !fn)
		return -EINVAL;
	rc = set_names(resdir, &names, &n);
	for (k = 0; !rc && k < n; k++) {
		if (asprintf(&path, "%s/%s", resdir, names[k]) < 0) {
			rc = -ENOMEM;
			break;
		}
		info = NULL;
		err = sbsave_load(path, &info, reason, sizeof(reason));
		rc = fn(arg, path, info, err, err ? reason : "");
		sbsave_info_free(info);
		free(path);
	}
	for (k = 0; k < n; k++)
		free(names[k]);
	free(names);
	return rc;
}

static bool set_file(const char *name)
{
	return !strcmp(name, SBSAVE_IMAGE) || !strcmp(name, SBSAVE_MANIFEST) ||
	       !strcmp(name, SBSAVE_MANIFEST_TMP);
}

/* Does the directory hold only a set's files, all regular? */
static int only_set_files(int fd, const char *path, char *reason, size_t rlen)
{
	DIR *dir;
	struct dirent *e;
	struct stat st;
	int dup_fd = dup(fd), rc = 0;

	if (dup_fd < 0 || !(dir = fdopendir(dup_fd))) {
		rc = -errno;
		if (dup_fd >= 0)
			close(dup_fd);
		return rc;
	}
	while (!rc && (e = readdir(dir))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!set_file(e->d_name) || fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode)) {
			snprintf(reason, rlen,
				 "%s: holds '%s', which is not part of a save set; "
				 "not removed",
				 path, e->d_name);
			rc = -ENOTEMPTY;
		}
	}
	closedir(dir);
	return rc;
}

int sbsave_discard(const char *path, char *reason, size_t reason_len)
{
	char dummy[1], *parent = NULL, *name = NULL;
	struct stat st;
	int fd, rc;

	if (!reason || !reason_len) {
		reason = dummy;
		reason_len = sizeof(dummy);
	}
	reason[0] = '\0';
	rc = path ? split_path(path, &parent, &name) : -EINVAL;
	if (!rc && !sbsave_parse_name(name, NULL, NULL)) {
		snprintf(reason, reason_len, "%s: not a save set (the name is not sb-TIME-vN)",
			 path);
		rc = -EINVAL;
	}
	if (!rc && lstat(path, &st) < 0)
		rc = -errno;
	if (!rc && !S_ISDIR(st.st_mode)) {
		snprintf(reason, reason_len, "%s: not a save set (not a directory)", path);
		rc = -EINVAL;
	}
	fd = rc ? -1 : open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (!rc && fd < 0)
		rc = -errno;
	if (!rc)
		rc = only_set_files(fd, path, reason, reason_len);
	/* the manifest goes last: a half-removed set shows as broken */
	if (!rc && ((unlinkat(fd, SBSAVE_MANIFEST_TMP, 0) < 0 && errno != ENOENT) ||
		    (unlinkat(fd, SBSAVE_IMAGE, 0) < 0 && errno != ENOENT) ||
		    (unlinkat(fd, SBSAVE_MANIFEST, 0) < 0 && errno != ENOENT)))
		rc = -errno;
	if (fd >= 0)
		close(fd);
	if (!rc && rmdir(path) < 0)
		rc = -errno;
	if (!rc)
		sbsave_fsync_path(parent);
	if (rc && !reason[0] && reason_len > 1)
		snprintf(reason, reason_len, "%s: %s", path ? path : "(null)", strerror(-rc));
	free(parent);
	free(name);
	return rc;
}
