/*
 * fuzz-sbsave: libFuzzer target for the split-brain save-set reader
 * (replicator/lib/sbsave-read.c; sbsave.h, doc/split-brain-saves.md), on
 * a temporary directory (tmpfs where there is one).
 *
 * Input: the first line is the name of the set's directory (under a
 * resource directory "r0"; a name that is not one path component becomes
 * sb-20231114T221320Z-v0); the rest is its manifest.json. Without a
 * newline the set has no manifest. Then:
 *  - sbsave_parse_name() accepts only names the writer makes: the name
 *    is the one its time and volume give (plus the -K of a name clash);
 *  - sbsave_load() of the set without an image: without a manifest it
 *    succeeds exactly for a save-set name (partial, the name's volume and
 *    time, nothing saved); with one it fails with -EINVAL and a reason
 *    that names the file, "image: missing" when the manifest decoded;
 *  - such a manifest loads with an image of its device_size (and not
 *    with one byte more): the strings are set, the ranges sorted, disjoint,
 *    non-empty, inside the device and summing to total_bytes, the volume
 *    that of the name; sbsave_list() reports the same;
 *  - written again by sbsave.c's writer (when its ranges are small and its
 *    time is one a set name can carry), the new set loads to the same
 *    information, with adjacent ranges merged;
 *  - sbsave_discard() removes each set with a save-set name, and refuses
 *    any other directory with -EINVAL.
 * Anything else is abort()ed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sbsave.h"

#define DEFAULT_NAME "sb-20231114T221320Z-v0"
#define MAX_NAME 80
#define MAX_REWRITE (1u << 20) /* bytes of ranges the writer copies */
#define YEAR_1000 (-30610224000LL)
#define YEAR_10000 253402300800LL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[PATH_MAX];

static void __attribute__((noreturn)) fail(const char *what, int rc, const char *why)
{
	fprintf(stderr, "fuzz-sbsave: %s (rc %d: %s)\n", what, rc, why ? why : "");
	abort();
}

static void rm_root(void)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/r0", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/w", root);
	rmdir(path);
	rmdir(root);
}

static void make_root(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX + 16];

	snprintf(root, sizeof(root), "/dev/shm/fuzz-sbsave-XXXXXX");
	if (!mkdtemp(root)) {
		snprintf(root, sizeof(root), "%s/fuzz-sbsave-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(root))
			fail("mkdtemp", -errno, root);
	}
	snprintf(path, sizeof(path), "%s/r0", root);
	if (mkdir(path, 0700) < 0)
		fail("mkdir", -errno, path);
	atexit(rm_root);
}

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || (len && write(fd, buf, len) != (ssize_t)len) || close(fd) < 0)
		fail("cannot write", -errno, path);
}

/* Remove the set (a directory with only a set's files) the hard way. */
static void remove_set(const char *path)
{
	static const char *const files[] = {SBSAVE_MANIFEST, SBSAVE_MANIFEST ".tmp", SBSAVE_IMAGE};
	char file[PATH_MAX + 32];
	size_t i;

	for (i = 0; i < 3; i++) {
		snprintf(file, sizeof(file), "%s/%s", path, files[i]);
		unlink(file);
	}
	if (rmdir(path) < 0 && errno != ENOENT)
		fail("cannot remove the set", -errno, path);
}

/* Does the reason s start with path (its control characters as '?')? */
static bool names(const char *s, const char *path)
{
	for (; *path; s++, path++)
		if (*s != ((unsigned char)*path < 0x20 || *path == 0x7f ? '?' : *path))
			return false;
	return true;
}

static bool one_line(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

static void check_reason(int rc, const char *why, const char *path)
{
	size_t n = strnlen(why, SBSAVE_REASON_MAX);

	if (rc != -EINVAL)
		fail("unexpected error code", rc, why);
	if (n == 0 || n >= SBSAVE_REASON_MAX - 1 || !one_line(why) || !names(why, path))
		fail("reason empty, truncated, with control characters or not naming the set", rc,
		     why);
}

/* A name that parses is the one the writer makes of its time and volume. */
static void check_name(const char *name)
{
	char want[MAX_NAME + 32];
	unsigned int vnr;
	struct tm tm;
	time_t t;
	size_t n;

	if (!sbsave_parse_name(name, &t, &vnr))
		return;
	if (!gmtime_r(&t, &tm))
		fail("a set name's time is not a time", 0, name);
	n = strftime(want, sizeof(want), "sb-%Y%m%dT%H%M%SZ", &tm);
	snprintf(want + n, sizeof(want) - n, "-v%u", vnr);
	n = strlen(want);
	if (strncmp(name, want, n) || (name[n] && name[n] != '-'))
		fail("a set name is not the one its time and volume give", (int)vnr, name);
}

static void check_info(const struct sbsave_info *i, const char *path, const char *name)
{
	uint64_t sum = 0, end = 0;
	unsigned int vnr;
	size_t k;

	if (!i->path || strcmp(i->path, path) || !i->name || strcmp(i->name, name) ||
	    !i->resource || !i->node || !i->peer || !i->policy)
		fail("path, name or a string is wrong or NULL", 0, path);
	if (sbsave_parse_name(name, NULL, &vnr) && vnr != i->volume)
		fail("the volume is not the name's", (int)i->volume, name);
	if (i->volume > 65535 || i->device_size > INT64_MAX)
		fail("volume or device_size out of range", (int)i->volume, NULL);
	for (k = 0; k < i->n_ranges; k++) {
		const struct sbsave_range *r = &i->ranges[k];

		if (!r->length || (k && r->offset < end) || r->offset > i->device_size ||
		    r->length > i->device_size - r->offset)
			fail("a range is empty, out of order or outside the device", (int)k, NULL);
		end = r->offset + r->length;
		sum += r->length;
	}
	if (sum != i->total_bytes)
		fail("total_bytes is not the sum of the ranges", 0, NULL);
}

struct listed {
	int calls, err;
	struct sbsave_info copy;
};

static int on_set(void *arg, const char *path, const struct sbsave_info *info, int err,
		  const char *reason)
{
	struct listed *l = arg;

	l->calls++;
	l->err = err;
	if (info)
		l->copy = *info;
	return 0;
}

/* sbsave_list() of r0 says what sbsave_load() said of its one set. */
static void check_list(const struct sbsave_info *i, int rc, const char *name)
{
	char resdir[PATH_MAX + 8];
	struct listed l = {0};

	snprintf(resdir, sizeof(resdir), "%s/r0", root);
	if (sbsave_list(resdir, on_set, &l) != 0)
		fail("sbsave_list failed", 0, resdir);
	if (l.calls != sbsave_parse_name(name, NULL, NULL) ||
	    (l.calls && (l.err != rc || (i && (l.copy.volume != i->volume ||
					       l.copy.total_bytes != i->total_bytes ||
					       l.copy.n_ranges != i->n_ranges)))))
		fail("sbsave_list and sbsave_load disagree", l.err, name);
}

/* The ranges of i with adjacent ones merged, as the writer keeps them. */
static size_t merged(const struct sbsave_info *i, struct sbsave_range *out)
{
	size_t k, n = 0;

	for (k = 0; k < i->n_ranges; k++) {
		if (n && out[n - 1].offset + out[n - 1].length == i->ranges[k].offset)
			out[n - 1].length += i->ranges[k].length;
		else
			out[n++] = i->ranges[k];
	}
	return n;
}

static void check_rewrite(const struct sbsave_info *i)
{
	struct sbsave_meta m = {
	    .resource = i->resource,
	    .volume = i->volume,
	    .node = i->node,
	    .peer = i->peer,
	    .policy = i->policy,
	    .local = i->local,
	    .peer_uuids = i->peer_uuids,
	    .device_size = i->device_size,
	    .created = i->created,
	};
	char resdir[PATH_MAX + 8], path[PATH_MAX], why[SBSAVE_REASON_MAX];
	struct sbsave_range *want;
	struct sbsave_info *j = NULL;
	struct sbsave *s = NULL;
	static uint8_t zeros[MAX_REWRITE];
	size_t k, n;
	int rc;

	/* the writer names a set by its time: a 4-digit year, and 0 is "now" */
	if (i->total_bytes > MAX_REWRITE || i->created < YEAR_1000 || i->created >= YEAR_10000 ||
	    !i->created)
		return;
	snprintf(resdir, sizeof(resdir), "%s/w", root);
	rc = sbsave_begin(resdir, &m, &s);
	if (rc == -EFBIG || rc == -EINVAL)
		return; /* an image this file system cannot have */
	if (rc)
		fail("sbsave_begin failed", rc, resdir);
	snprintf(path, sizeof(path), "%s", sbsave_path(s));
	for (k = 0; k < i->n_ranges; k++) {
		rc = sbsave_range(s, i->ranges[k].offset, zeros, (size_t)i->ranges[k].length);
		if (rc)
			fail("sbsave_range of a range that loaded", rc, NULL);
	}
	rc = i->complete ? sbsave_commit(s) : sbsave_flush(s);
	if (rc)
		fail("sbsave_commit or sbsave_flush failed", rc, path);
	rc = sbsave_load(path, &j, why, sizeof(why));
	if (rc)
		fail("a set the writer made does not load", rc, why);
	want = calloc(i->n_ranges ? i->n_ranges : 1, sizeof(*want));
	if (!want)
		fail("calloc", -ENOMEM, NULL);
	n = merged(i, want);
	if (strcmp(j->resource, i->resource) || strcmp(j->node, i->node) ||
	    strcmp(j->peer, i->peer) || strcmp(j->policy, i->policy) || j->volume != i->volume ||
	    j->created != i->created || memcmp(&j->local, &i->local, sizeof(j->local)) ||
	    memcmp(&j->peer_uuids, &i->peer_uuids, sizeof(j->peer_uuids)) ||
	    j->device_size != i->device_size || j->complete != i->complete || !j->has_manifest ||
	    j->total_bytes != i->total_bytes || j->n_ranges != n ||
	    memcmp(j->ranges, want, n * sizeof(*want)))
		fail("the rewritten set loads to other information", 0, path);
	free(want);
	sbsave_info_free(j);
	if (!i->complete && sbsave_abort(s))
		fail("sbsave_abort failed", 0, path);
	rc = sbsave_discard(path, why, sizeof(why));
	if (rc && !(rc == -ENOENT && !i->complete && !i->n_ranges))
		fail("the writer's set cannot be discarded", rc, why);
	rmdir(resdir);
}

/* A manifest that loads is one JSON value, then only white space. */
static void check_json(const char *text, size_t len)
{
	struct json_tokener *tok = json_tokener_new_ex(8);
	json_object *top;
	size_t end;

	if (!tok)
		fail("json_tokener_new_ex", -ENOMEM, NULL);
	top = json_tokener_parse_ex(tok, text, (int)len);
	end = json_tokener_get_parse_end(tok);
	if (!top || end > len || strspn(text + end, " \t\r\n") != len - end)
		fail("a manifest with more than one JSON object loaded", (int)end, text);
	json_object_put(top);
	json_tokener_free(tok);
}

/* device_size as json-c reads it, for the image; false if there is none. */
static bool device_size(const char *text, size_t len, uint64_t *size)
{
	json_object *top = json_tokener_parse(text), *o;
	bool ok = false;

	(void)len;
	if (top && json_object_object_get_ex(top, "device_size", &o) &&
	    json_object_is_type(o, json_type_int) && json_object_get_int64(o) > 0) {
		*size = (uint64_t)json_object_get_int64(o);
		ok = true;
	}
	json_object_put(top);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t nlen = nl ? (size_t)(nl - data) : size, mlen = nl ? size - nlen - 1 : 0;
	char name[MAX_NAME + 1], path[PATH_MAX], file[PATH_MAX + 32], why[SBSAVE_REASON_MAX];
	char *manifest = NULL;
	struct sbsave_info *info = NULL;
	uint64_t dev = 0;
	int rc, fd;

	if (!root[0])
		make_root();
	snprintf(name, sizeof(name), DEFAULT_NAME);
	if (nlen && nlen <= MAX_NAME && !memchr(data, '/', nlen) && !memchr(data, '\0', nlen) &&
	    (nlen > 2 || memcmp(data, "..", nlen))) {
		memcpy(name, data, nlen);
		name[nlen] = '\0';
	}
	check_name(name);
	snprintf(path, sizeof(path), "%s/r0/%s", root, name);
	if (mkdir(path, 0700) < 0)
		fail("mkdir", -errno, path);
	if (nl) {
		manifest = malloc(mlen + 1);
		if (!manifest)
			fail("malloc", -ENOMEM, NULL);
		memcpy(manifest, nl + 1, mlen);
		manifest[mlen] = '\0';
		snprintf(file, sizeof(file), "%s/" SBSAVE_MANIFEST, path);
		write_file(file, manifest, mlen);
	}

	/* no image */
	rc = sbsave_load(path, &info, why, sizeof(why));
	if (!nl) {
		if (!rc != sbsave_parse_name(name, NULL, NULL))
			fail("a set without a manifest loads iff it has a set name", rc, why);
		if (rc)
			check_reason(rc, why, path);
		else if (info->has_manifest || info->complete || info->n_ranges ||
			 info->device_size || strcmp(info->resource, "r0"))
			fail("a set without a manifest is not an empty partial one", 0, path);
		if (!rc)
			check_info(info, path, name);
		check_list(info, rc, name);
		sbsave_info_free(info);
		info = NULL;
	} else {
		if (rc == 0)
			fail("a manifest loaded without its image", 0, path);
		check_reason(rc, why, path);
		snprintf(file, sizeof(file), "%s/" SBSAVE_IMAGE ": missing", path);
		if (strcmp(why, file) == 0 && !device_size(manifest, mlen, &dev))
			fail("the manifest decoded without a device_size", 0, why);
	}

	/* an image of device_size, then one byte larger */
	snprintf(file, sizeof(file), "%s/" SBSAVE_IMAGE, path);
	if (dev && (fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) >= 0) {
		if (ftruncate(fd, (off_t)dev) == 0) {
			rc = sbsave_load(path, &info, why, sizeof(why));
			if (rc)
				fail("the manifest does not load with its image", rc, why);
			check_info(info, path, name);
			check_json(manifest, mlen);
			check_list(info, rc, name);
			if (dev < INT64_MAX && ftruncate(fd, (off_t)dev + 1) == 0) {
				struct sbsave_info *other = NULL;

				rc = sbsave_load(path, &other, why, sizeof(why));
				if (rc != -EINVAL || !strstr(why, "the manifest says device_size"))
					fail("an image of another size was accepted", rc, why);
			}
		}
		close(fd);
	}

	rc = sbsave_discard(path, why, sizeof(why));
	if (sbsave_parse_name(name, NULL, NULL) ? rc != 0 : rc != -EINVAL)
		fail("sbsave_discard of the set", rc, why);
	if (rc)
		remove_set(path);
	if (info)
		check_rewrite(info);
	sbsave_info_free(info);
	free(manifest);
	return 0;
}
