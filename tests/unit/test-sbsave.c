/*
 * test-sbsave: split-brain save sets in a temporary directory. Set names;
 * a full round trip (manifest fields, image content at its offsets, holes
 * elsewhere, a sparse image); range merging as a table; the first copy of
 * a block wins; range errors; every kind of corrupt manifest rejected with
 * a reason naming the file and field; partial sets (in progress, aborted,
 * without a manifest) listed as such; discard refusing what is not a save
 * set; the free-space check.
 */
#include "unit.h"

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/resource.h>

#include "sbsave.h"

#define DEV_SIZE (1u << 20)
#define T0 ((time_t)1700000000) /* 2023-11-14T22:13:20Z */
#define T0_NAME "sb-20231114T221320Z-v0"

static struct sbsave_meta meta(void)
{
	struct sbsave_meta m = {
	    .resource = "r0",
	    .volume = 0,
	    .node = "alpha",
	    .peer = "beta",
	    .policy = "after-sb-0pri=discard-least-changes",
	    .local = {{0x1111111111111111ULL, 0x2222222222222222ULL, 0x3333333333333332ULL, 0}},
	    .peer_uuids = {{0xAAAAAAAAAAAAAAAAULL, 0x2222222222222222ULL, 0x3333333333333332ULL,
			    0x4444444444444444ULL}},
	    .device_size = DEV_SIZE,
	    .created = T0,
	};

	return m;
}

static void free_info(void *p)
{
	sbsave_info_free(p);
}

static char *resdir_in(const char *tmp)
{
	char buf[PATH_MAX];

	assert_int_equal(sbsave_resdir(tmp, "r0", buf, sizeof(buf)), 0);
	return unit_str(strdup(buf));
}

static struct sbsave_info *load_ok(const char *path)
{
	char reason[SBSAVE_REASON_MAX];
	struct sbsave_info *i = NULL;
	int rc = sbsave_load(path, &i, reason, sizeof(reason));

	if (rc)
		fail_msg("sbsave_load(%s) = %d: %s", path, rc, reason);
	return unit_defer(free_info, i);
}

static void fill(uint8_t *b, size_t len, uint8_t seed)
{
	size_t k;

	for (k = 0; k < len; k++)
		b[k] = (uint8_t)(seed + k * 7);
}

static void test_names(void **state)
{
	static const struct {
		const char *name;
		bool ok;
		unsigned int vnr;
	} t[] = {
	    {T0_NAME, true, 0},
	    {"sb-20231114T221320Z-v12", true, 12},
	    {"sb-20231114T221320Z-v0-2", true, 0},
	    {"sb-20231114T221320Z-v65535-99", true, 65535},
	    {"sb-20231114T221320Z-v65536", false, 0},
	    {"sb-20231114T221320Z-v01", false, 0},
	    {"sb-20231114T221320Z-v0-1", false, 0},
	    {"sb-20231114T221320Z-v0-", false, 0},
	    {"sb-20231114T221320Z-v", false, 0},
	    {"sb-20231114T221320-v0", false, 0},
	    {"sb-20231314T221320Z-v0", false, 0},
	    {"sb-2023111XT221320Z-v0", false, 0},
	    {"sb-20231114T221320Z-v0/", false, 0},
	    {"xb-20231114T221320Z-v0", false, 0},
	    {"", false, 0},
	};
	char buf[32];
	unsigned int vnr;
	time_t when;
	size_t i;

	for (i = 0; i < UNIT_ARRAY_SIZE(t); i++) {
		vnr = 999;
		when = 0;
		if (sbsave_parse_name(t[i].name, &when, &vnr) != t[i].ok)
			fail_msg("'%s' should %sparse", t[i].name, t[i].ok ? "" : "not ");
		if (t[i].ok) {
			assert_int_equal(vnr, t[i].vnr);
			assert_int_equal(when, T0);
		}
	}
	assert_int_equal(sbsave_resdir("/var/lib/tandem", "r0", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/var/lib/tandem/r0");
	assert_int_equal(sbsave_resdir("/s", "a/b", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sbsave_resdir("/s", "..", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sbsave_resdir("/s", "", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sbsave_resdir("/var/lib/tandem", "a-long-resource-name", buf, 20),
			 -ENAMETOOLONG);
}

static void test_round_trip(void **state)
{
	static uint8_t a[4096], b[8192], z[512], got[8192];
	const char *tmp = unit_tmpdir(), *res = resdir_in(tmp);
	struct sbsave_meta m = meta();
	struct sbsave *s = NULL;
	struct sbsave_info *i;
	struct stat st;
	char *path, *img;
	int fd;

	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	fill(z, sizeof(z), 3);
	/* the resource directory does not exist yet: begin creates it */
	assert_int_equal(sbsave_begin(res, &m, &s), 0);
	path = unit_str(strdup(sbsave_path(s)));
	assert_string_equal(path, unit_fmt("%s/" T0_NAME, res));
	assert_int_equal(sbsave_range(s, 65536, b, sizeof(b)), 0);
	assert_int_equal(sbsave_range(s, 4096, a, sizeof(a)), 0);
	assert_int_equal(sbsave_range(s, DEV_SIZE - 512, z, sizeof(z)), 0);
	assert_int_equal(sbsave_bytes(s), 4096 + 8192 + 512);
	assert_int_equal(sbsave_commit(s), 0);

	i = load_ok(path);
	assert_true(i->has_manifest);
	assert_true(i->complete);
	assert_string_equal(i->path, path);
	assert_string_equal(i->name, T0_NAME);
	assert_string_equal(i->resource, "r0");
	assert_int_equal(i->volume, 0);
	assert_string_equal(i->node, "alpha");
	assert_string_equal(i->peer, "beta");
	assert_string_equal(i->policy, m.policy);
	assert_int_equal(i->created, T0);
	assert_memory_equal(&i->local, &m.local, sizeof(m.local));
	assert_memory_equal(&i->peer_uuids, &m.peer_uuids, sizeof(m.peer_uuids));
	assert_int_equal(i->device_size, DEV_SIZE);
	assert_int_equal(i->total_bytes, 4096 + 8192 + 512);
	assert_int_equal(i->n_ranges, 3);
	assert_int_equal(i->ranges[0].offset, 4096);
	assert_int_equal(i->ranges[0].length, 4096);
	assert_int_equal(i->ranges[1].offset, 65536);
	assert_int_equal(i->ranges[1].length, 8192);
	assert_int_equal(i->ranges[2].offset, DEV_SIZE - 512);
	assert_int_equal(i->ranges[2].length, 512);
	unit_release(i);
	/* a trailing slash names the same set */
	i = load_ok(unit_fmt("%s//", path));
	assert_string_equal(i->name, T0_NAME);
	assert_string_equal(i->resource, "r0");
	unit_release(i);

	/* the image: the device's size, data at its own offsets, holes
	 * elsewhere, and sparse */
	img = unit_fmt("%s/image", path);
	fd = open(img, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, DEV_SIZE);
	assert_true((uint64_t)st.st_blocks * 512 < DEV_SIZE / 4);
	assert_int_equal(pread(fd, got, 4096, 4096), 4096);
	assert_memory_equal(got, a, 4096);
	assert_int_equal(pread(fd, got, 8192, 65536), 8192);
	assert_memory_equal(got, b, 8192);
	assert_int_equal(pread(fd, got, 512, DEV_SIZE - 512), 512);
	assert_memory_equal(got, z, 512);
	memset(a, 0, sizeof(a));
	assert_int_equal(pread(fd, got, 4096, 0), 4096);
	assert_memory_equal(got, a, 4096);
	assert_int_equal(pread(fd, got, 4096, 65536 + 8192), 4096);
	assert_memory_equal(got, a, 4096);
	close(fd);
	/* nothing left behind */
	assert_int_equal(access(unit_fmt("%s/manifest.json.tmp", path), F_OK), -1);
	assert_int_equal(stat(res, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(stat(img, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

/* Range merging: each case is a sequence of saves, then the ranges. */
struct merge_case {
	const char *what;
	struct sbsave_range in[6];
	size_t n_in;
	struct sbsave_range want[4];
	size_t n_want;
	uint64_t bytes;
};

static const struct merge_case merges[] = {
    {"adjacent after", {{0, 4096}, {4096, 4096}}, 2, {{0, 8192}}, 1, 8192},
    {"adjacent before", {{4096, 4096}, {0, 4096}}, 2, {{0, 8192}}, 1, 8192},
    {"bridging a gap", {{0, 4096}, {8192, 4096}, {4096, 4096}}, 3, {{0, 12288}}, 1, 12288},
    {"overlapping", {{100, 100}, {150, 150}}, 2, {{100, 200}}, 1, 200},
    {"contained", {{0, 1000}, {100, 10}}, 2, {{0, 1000}}, 1, 1000},
    {"containing", {{100, 10}, {0, 1000}}, 2, {{0, 1000}}, 1, 1000},
    {"same twice", {{512, 512}, {512, 512}}, 2, {{512, 512}}, 1, 512},
    {"disjoint, any order",
     {{5000, 10}, {1000, 10}, {3000, 10}},
     3,
     {{1000, 10}, {3000, 10}, {5000, 10}},
     3,
     30},
    {"one swallows four",
     {{0, 10}, {20, 10}, {40, 10}, {60, 10}, {200, 1}, {5, 60}},
     6,
     {{0, 70}, {200, 1}},
     2,
     71},
    {"up to the end", {{DEV_SIZE - 10, 10}, {DEV_SIZE - 20, 10}}, 2, {{DEV_SIZE - 20, 20}}, 1, 20},
    {"empty saves nothing", {{100, 0}}, 1, {{0, 0}}, 0, 0},
};

static void test_merge(void **state)
{
	static uint8_t data[DEV_SIZE];
	const char *res = resdir_in(unit_tmpdir());
	size_t c, k;

	for (c = 0; c < UNIT_ARRAY_SIZE(merges); c++) {
		const struct merge_case *mc = &merges[c];
		struct sbsave_meta m = meta();
		struct sbsave *s = NULL;
		struct sbsave_info *i;
		char *path;

		m.volume = (unsigned int)c; /* a set of its own */
		assert_int_equal(sbsave_begin(res, &m, &s), 0);
		for (k = 0; k < mc->n_in; k++)
			assert_int_equal(sbsave_range(s, mc->in[k].offset, data, mc->in[k].length),
					 0);
		if (sbsave_bytes(s) != mc->bytes)
			fail_msg("%s: %" PRIu64 " bytes saved, expected %" PRIu64, mc->what,
				 sbsave_bytes(s), mc->bytes);
		path = unit_str(strdup(sbsave_path(s)));
		assert_int_equal(sbsave_commit(s), 0);
		i = load_ok(path);
		if (i->n_ranges != mc->n_want)
			fail_msg("%s: %zu ranges, expected %zu", mc->what, i->n_ranges, mc->n_want);
		for (k = 0; k < mc->n_want; k++)
			if (i->ranges[k].offset != mc->want[k].offset ||
			    i->ranges[k].length != mc->want[k].length)
				fail_msg("%s: range %zu is %" PRIu64 "+%" PRIu64, mc->what, k,
					 i->ranges[k].offset, i->ranges[k].length);
		assert_int_equal(i->total_bytes, mc->bytes);
		unit_release(i);
	}
}

/* A block saved twice keeps its first copy: that one predates the resync. */
static void test_first_copy_wins(void **state)
{
	const char *res = resdir_in(unit_tmpdir());
	uint8_t one[100], two[100], got[150];
	struct sbsave_meta m = meta();
	struct sbsave *s = NULL;
	char *path;
	int fd;

	memset(one, 'A', sizeof(one));
	memset(two, 'B', sizeof(two));
	assert_int_equal(sbsave_begin(res, &m, &s), 0);
	assert_int_equal(sbsave_range(s, 1000, one, 100), 0);
	assert_int_equal(sbsave_range(s, 1050, two, 100), 0);
	assert_int_equal(sbsave_range(s, 950, two, 100), 0);
	assert_int_equal(sbsave_bytes(s), 200);
	path = unit_str(strdup(sbsave_path(s)));
	assert_int_equal(sbsave_commit(s), 0);
	fd = open(unit_fmt("%s/image", path), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, got, 150, 950), 150);
	close(fd);
	assert_memory_equal(got, two, 50);	 /* 950..999: new */
	assert_memory_equal(got + 50, one, 100); /* 1000..1099: the first copy */
}

static void test_range_errors(void **state)
{
	const char *res = resdir_in(unit_tmpdir());
	struct sbsave_meta m = meta();
	struct sbsave *s = NULL;
	uint8_t b[16] = {0};
	char *path;

	assert_int_equal(sbsave_begin(res, &m, &s), 0);
	assert_int_equal(sbsave_range(s, DEV_SIZE - 8, b, 16), -ERANGE);
	assert_int_equal(sbsave_range(s, DEV_SIZE, b, 1), -ERANGE);
	assert_int_equal(sbsave_range(s, UINT64_MAX - 4, b, 16), -ERANGE);
	assert_int_equal(sbsave_range(s, 0, NULL, 16), -EINVAL);
	assert_int_equal(sbsave_range(s, DEV_SIZE, b, 0), 0);
	assert_int_equal(sbsave_bytes(s), 0);
	/* an aborted set with nothing saved is removed */
	path = unit_str(strdup(sbsave_path(s)));
	assert_int_equal(sbsave_abort(s), 0);
	assert_int_equal(access(path, F_OK), -1);
	/* bad metadata */
	m.device_size = 0;
	assert_int_equal(sbsave_begin(res, &m, &s), -EINVAL);
	m = meta();
	m.resource = NULL;
	assert_int_equal(sbsave_begin(res, &m, &s), -EINVAL);
	m = meta();
	assert_int_equal(sbsave_begin(unit_fmt("%s/no/such", res), &m, &s), -ENOENT);
}

/* A range that cannot be written (RLIMIT_FSIZE makes pwrite fail with
 * EFBIG) keeps the set from completing; what was saved stays listed. */
static void test_write_error(void **state)
{
	const char *res = resdir_in(unit_tmpdir());
	struct sbsave_meta m = meta();
	struct sbsave *s = NULL;
	struct sbsave_info *i;
	struct rlimit old, lim;
	uint8_t b[4096] = {3};
	char *path;
	int rc;

	assert_int_equal(sbsave_begin(res, &m, &s), 0);
	path = unit_str(strdup(sbsave_path(s)));
	assert_int_equal(sbsave_range(s, 0, b, sizeof(b)), 0);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 65536;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	rc = sbsave_range(s, 512 * 1024, b, sizeof(b));
	assert_int_equal(sbsave_range(s, 8192, b, sizeof(b)), 0);
	assert_int_equal(sbsave_flush(s), -EFBIG);
	assert_int_equal(sbsave_commit(s), -EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(rc, -EFBIG);
	i = load_ok(path);
	assert_false(i->complete);
	assert_int_equal(i->n_ranges, 2);
	assert_int_equal(i->ranges[1].offset, 8192);
	assert_int_equal(i->total_bytes, 8192);
}

static void test_name_clash(void **state)
{
	const char *res = resdir_in(unit_tmpdir());
	struct sbsave_meta m = meta();
	struct sbsave *s1 = NULL, *s2 = NULL;
	uint8_t b[512] = {1};

	assert_int_equal(sbsave_begin(res, &m, &s1), 0);
	assert_int_equal(sbsave_begin(res, &m, &s2), 0);
	assert_string_equal(sbsave_path(s2), unit_fmt("%s/" T0_NAME "-2", res));
	assert_int_equal(sbsave_range(s2, 0, b, sizeof(b)), 0);
	assert_int_equal(sbsave_commit(s2), 0);
	assert_int_equal(sbsave_commit(s1), 0);
	assert_int_equal(load_ok(unit_fmt("%s/" T0_NAME "-2", res))->total_bytes, 512);
	assert_int_equal(load_ok(unit_fmt("%s/" T0_NAME, res))->n_ranges, 0);
}

/* ---------------------------------------------------------------- corruption */

static __attribute__((noinline)) char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	int c;

	assert_non_null(f);
	assert_non_null(o);
	while ((c = fgetc(f)) != EOF)
		fputc(c, o);
	fclose(f);
	fclose(o);
	return unit_str(buf);
}

static void spit(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

struct corrupt {
	const char *from, *to; /* replace from by to; from NULL: truncate at to's length */
	const char *field;     /* what the reason must name */
};

static const struct corrupt corrupts[] = {
    {NULL, "", "ends early"},
    {NULL, "{\n\t\"format\": \"tandem-sb", "ends early"},
    {"\"state\": \"complete\"", "\"state\": \"done\"", "state"},
    {"\"format\": \"tandem-sbsave\"", "\"format\": \"other\"", "format"},
    {"\"version\": 1", "\"version\": 2", "version"},
    {"\"version\": 1,", "", "version: missing"},
    {"\"volume\": 0", "\"volume\": \"0\"", "volume"},
    {"\"volume\": 0", "\"volume\": 3", "directory name"},
    {"\"resource\": \"r0\"", "\"resource\": \"\"", "resource"},
    {"\"resource\": \"r0\"", "\"resource\": 5", "resource"},
    {"\"node\": \"alpha\",", "", "node: missing"},
    {"2023-11-14T22:13:20Z", "2023-11-14 22:13", "created"},
    {"\"device_size\": 1048576", "\"device_size\": 2097152", "image"},
    {"\"device_size\": 1048576", "\"device_size\": 8000", "ranges[1].length"},
    {"\"device_size\": 1048576", "\"device_size\": -1", "device_size"},
    {"\"current\": \"1111111111111111\"", "\"current\": \"11111111111111\"", "local_uuids.current"},
    {"\"current\": \"AAAAAAAAAAAAAAAA\"", "\"current\": \"AAAAAAAAAAAAAAAG\"",
     "peer_uuids.current"},
    {"\"history\": [\"3333333333333332\", \"4444444444444444\"]",
     "\"history\": [\"3333333333333332\"]", "peer_uuids.history"},
    {"\"total_bytes\": 8192", "\"total_bytes\": 8191", "total_bytes"},
    {"{\"offset\": 0, \"length\": 4096}", "{\"offset\": 0, \"length\": 0}", "ranges[0].length"},
    {"{\"offset\": 0, \"length\": 4096}", "{\"offset\": -4096, \"length\": 4096}",
     "ranges[0].offset"},
    {"{\"offset\": 8192, \"length\": 4096}", "{\"offset\": 2048, \"length\": 4096}",
     "ranges[1].offset"},
    {"{\"offset\": 0, \"length\": 4096}", "[0, 4096]", "ranges[0]"},
    {"{\"offset\": 0, \"length\": 4096}", "{\"length\": 4096}", "ranges[0].offset: missing"},
    {"\n}\n", "\n}\n{}", "data after"},
    {"{\n\t\"format\"", "[\n\t\"format\"", "not valid JSON"},
};

static void test_corrupt(void **state)
{
	const char *res = resdir_in(unit_tmpdir());
	char reason[SBSAVE_REASON_MAX], *path, *mf, *good;
	struct sbsave_meta m = meta();
	struct sbsave *s = NULL;
	struct sbsave_info *i;
	uint8_t b[4096] = {7};
	size_t c;

	assert_int_equal(sbsave_begin(res, &m, &s), 0);
	assert_int_equal(sbsave_range(s, 0, b, sizeof(b)), 0);
	assert_int_equal(sbsave_range(s, 8192, b, sizeof(b)), 0);
	path = unit_str(strdup(sbsave_path(s)));
	assert_int_equal(sbsave_commit(s), 0);
	mf = unit_fmt("%s/manifest.json", path);
	good = slurp(mf);
	for (c = 0; c < UNIT_ARRAY_SIZE(corrupts); c++) {
		const struct corrupt *k = &corrupts[c];
		char *text;
		int rc;

		if (!k->from) {
			spit(mf, k->to, strlen(k->to));
		} else {
			char *at = strstr(good, k->from);

			if (!at)
				fail_msg("case %zu: '%s' is not in the manifest:\n%s", c, k->from,
					 good);
			text = unit_fmt("%.*s%s%s", (int)(at - good), good, k->to,
					at + strlen(k->from));
			spit(mf, text, strlen(text));
		}
		i = NULL;
		reason[0] = '\0';
		rc = sbsave_load(path, &i, reason, sizeof(reason));
		if (rc != -EINVAL || i)
			fail_msg("case %zu (%s): rc %d, expected -EINVAL", c, k->field, rc);
		if (!strstr(reason, k->field) ||
		    (!strstr(reason, "manifest.json") && !strstr(reason, "image")))
			fail_msg("case %zu: reason '%s' does not name %s and the file", c, reason,
				 k->field);
	}
	/* the original decodes again: the cases were the only problem */
	spit(mf, good, strlen(good));
	assert_int_equal(load_ok(path)->n_ranges, 2);
	/* a missing image */
	assert_int_equal(unlink(unit_fmt("%s/image", path)), 0);
	assert_int_equal(sbsave_load(path, &i, reason, sizeof(reason)), -EINVAL);
	assert_non_null(strstr(reason, "image: missing"));
}

/* ---------------------------------------------------------------- listing */

struct seen {
	char name[8][64];
	int err[8];
	bool complete[8], has_manifest[8];
	size_t n_ranges[8];
	uint64_t size[8];
	char reason[8][SBSAVE_REASON_MAX];
	size_t n;
};

static int collect(void *arg, const char *path, const struct sbsave_info *i, int err,
		   const char *reason)
{
	struct seen *v = arg;
	const char *slash = strrchr(path, '/');

	if (v->n == 8)
		return -E2BIG;
	snprintf(v->name[v->n], sizeof(v->name[0]), "%s", slash ? slash + 1 : path);
	v->err[v->n] = err;
	snprintf(v->reason[v->n], sizeof(v->reason[0]), "%s", reason);
	if (i) {
		v->complete[v->n] = i->complete;
		v->has_manifest[v->n] = i->has_manifest;
		v->n_ranges[v->n] = i->n_ranges;
		v->size[v->n] = i->device_size;
	}
	v->n++;
	return 0;
}

static void end_live(void *p)
{
	sbsave_commit(p);
}

static int stop_at_first(void *arg, const char *path, const struct sbsave_info *i, int err,
			 const char *reason)
{
	(*(int *)arg)++;
	return 42;
}

static void test_partial_and_list(void **state)
{
	const char *tmp = unit_tmpdir(), *res = resdir_in(tmp);
	struct sbsave_meta m = meta();
	struct sbsave *s = NULL, *live = NULL;
	struct sbsave_info *i;
	struct seen v;
	uint8_t b[4096] = {9};
	char *p1, *p3;
	int calls = 0;

	memset(&v, 0, sizeof(v));
	/* no resource directory: no sets */
	assert_int_equal(sbsave_list(res, collect, &v), 0);
	assert_int_equal(v.n, 0);

	/* set 1 (v0): saved, flushed, then aborted: partial with its ranges */
	assert_int_equal(sbsave_begin(res, &m, &s), 0);
	p1 = unit_str(strdup(sbsave_path(s)));
	assert_int_equal(sbsave_range(s, 0, b, sizeof(b)), 0);
	i = load_ok(p1); /* in progress: partial, the begin manifest */
	assert_true(i->has_manifest);
	assert_false(i->complete);
	assert_int_equal(i->n_ranges, 0);
	unit_release(i);
	assert_int_equal(sbsave_flush(s), 0);
	assert_int_equal(load_ok(p1)->n_ranges, 1);
	assert_int_equal(sbsave_range(s, 8192, b, sizeof(b)), 0);
	assert_int_equal(sbsave_abort(s), 0);
	i = load_ok(p1);
	assert_false(i->complete);
	assert_int_equal(i->n_ranges, 2);
	unit_release(i);

	/* set 2 (v1): complete */
	m.volume = 1;
	assert_int_equal(sbsave_begin(res, &m, &s), 0);
	assert_int_equal(sbsave_range(s, 0, b, sizeof(b)), 0);
	assert_int_equal(sbsave_commit(s), 0);

	/* set 3 (v2): a crash before any manifest: only the image */
	m.volume = 2;
	assert_int_equal(sbsave_begin(res, &m, &s), 0);
	p3 = unit_str(strdup(sbsave_path(s)));
	assert_int_equal(sbsave_range(s, 0, b, sizeof(b)), 0);
	assert_int_equal(sbsave_flush(s), 0);
	assert_int_equal(sbsave_abort(s), 0);
	assert_int_equal(unlink(unit_fmt("%s/manifest.json", p3)), 0);

	/* set 4 (v3): corrupt; set 5: a bare directory (crash after mkdir);
	 * set 6 (v5): still being written */
	m.volume = 3;
	assert_int_equal(sbsave_begin(res, &m, &s), 0);
	p3 = unit_str(strdup(sbsave_path(s)));
	assert_int_equal(sbsave_range(s, 0, b, sizeof(b)), 0);
	assert_int_equal(sbsave_abort(s), 0);
	unit_write(p3, "manifest.json", "{\"format\": ");
	assert_int_equal(mkdir(unit_fmt("%s/sb-20231114T221320Z-v4", res), 0700), 0);
	m.volume = 5;
	assert_int_equal(sbsave_begin(res, &m, &live), 0);
	unit_defer(end_live, live);

	/* not sets: ignored */
	unit_write(res, "notes/readme", "x");
	unit_write(res, "sb-20231114T221320Z-v6", "a file, not a directory");
	assert_int_equal(mkdir(unit_fmt("%s/sb-bogus", res), 0700), 0);
	assert_int_equal(symlink(p1, unit_fmt("%s/sb-20231114T221320Z-v7", res)), 0);

	assert_int_equal(sbsave_list(res, collect, &v), 0);
	assert_int_equal(v.n, 6);
	/* v0: aborted, partial, both ranges */
	assert_string_equal(v.name[0], T0_NAME);
	assert_int_equal(v.err[0], 0);
	assert_true(v.has_manifest[0] && !v.complete[0]);
	assert_int_equal(v.n_ranges[0], 2);
	/* v1: complete */
	assert_true(v.has_manifest[1] && v.complete[1]);
	/* v2: no manifest: partial, size from the image */
	assert_int_equal(v.err[2], 0);
	assert_true(!v.has_manifest[2] && !v.complete[2]);
	assert_int_equal(v.size[2], DEV_SIZE);
	/* v3: corrupt, with a reason */
	assert_int_equal(v.err[3], -EINVAL);
	assert_non_null(strstr(v.reason[3], "sb-20231114T221320Z-v3/manifest.json"));
	assert_non_null(strstr(v.reason[3], "ends early"));
	/* v4: bare: partial, nothing saved */
	assert_string_equal(v.name[4], "sb-20231114T221320Z-v4");
	assert_int_equal(v.err[4], 0);
	assert_true(!v.has_manifest[4] && !v.complete[4]);
	assert_int_equal(v.size[4], 0);
	/* v5: being written: partial */
	assert_int_equal(v.err[5], 0);
	assert_true(v.has_manifest[5] && !v.complete[5]);
	assert_int_equal(sbsave_list(res, stop_at_first, &calls), 42);
	assert_int_equal(calls, 1);
	unit_release(live);
}

/* ---------------------------------------------------------------- discard */

static void test_discard(void **state)
{
	const char *res = resdir_in(unit_tmpdir());
	char reason[SBSAVE_REASON_MAX], *p, *other;
	struct sbsave_meta m = meta();
	struct sbsave *s = NULL;
	uint8_t b[512] = {5};

	assert_int_equal(sbsave_begin(res, &m, &s), 0);
	p = unit_str(strdup(sbsave_path(s)));
	assert_int_equal(sbsave_range(s, 0, b, sizeof(b)), 0);
	assert_int_equal(sbsave_commit(s), 0);

	/* a directory without a set name */
	other = unit_fmt("%s/keep", res);
	unit_write(res, "keep/image", "precious");
	assert_int_equal(sbsave_discard(other, reason, sizeof(reason)), -EINVAL);
	assert_non_null(strstr(reason, "not a save set"));
	assert_int_equal(access(unit_fmt("%s/image", other), F_OK), 0);
	/* a set name on a symbolic link to a set, and on a regular file */
	assert_int_equal(symlink(p, unit_fmt("%s/sb-20231114T221320Z-v8", res)), 0);
	assert_int_equal(
	    sbsave_discard(unit_fmt("%s/sb-20231114T221320Z-v8", res), reason, sizeof(reason)),
	    -EINVAL);
	assert_int_equal(access(unit_fmt("%s/manifest.json", p), F_OK), 0);
	unit_write(res, "sb-20231114T221320Z-v9", "file");
	assert_int_equal(
	    sbsave_discard(unit_fmt("%s/sb-20231114T221320Z-v9", res), reason, sizeof(reason)),
	    -EINVAL);
	/* a set directory holding something else */
	unit_write(p, "notes.txt", "mine");
	assert_int_equal(sbsave_discard(p, reason, sizeof(reason)), -ENOTEMPTY);
	assert_non_null(strstr(reason, "notes.txt"));
	assert_int_equal(access(unit_fmt("%s/image", p), F_OK), 0);
	assert_int_equal(access(unit_fmt("%s/manifest.json", p), F_OK), 0);
	assert_int_equal(unlink(unit_fmt("%s/notes.txt", p)), 0);
	/* "image" that is a directory is not a set's image */
	assert_int_equal(mkdir(unit_fmt("%s/sb-20231114T221320Z-v10", res), 0700), 0);
	assert_int_equal(mkdir(unit_fmt("%s/sb-20231114T221320Z-v10/image", res), 0700), 0);
	assert_int_equal(
	    sbsave_discard(unit_fmt("%s/sb-20231114T221320Z-v10", res), reason, sizeof(reason)),
	    -ENOTEMPTY);
	/* the set itself, and a trailing slash */
	assert_int_equal(sbsave_discard(unit_fmt("%s/", p), reason, sizeof(reason)), 0);
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(sbsave_discard(p, reason, sizeof(reason)), -ENOENT);
	/* a bare set directory (crash after mkdir) can be discarded */
	assert_int_equal(mkdir(unit_fmt("%s/sb-20231114T221320Z-v11", res), 0700), 0);
	assert_int_equal(sbsave_discard(unit_fmt("%s/sb-20231114T221320Z-v11", res), NULL, 0), 0);
}

static void test_space(void **state)
{
	const char *tmp = unit_tmpdir();
	uint64_t avail = 0;

	assert_int_equal(sbsave_space_ok(tmp, 4096, &avail), 0);
	assert_true(avail > 4096);
	assert_int_equal(sbsave_space_ok(tmp, avail, NULL), -ENOSPC);
	assert_int_equal(sbsave_space_ok(tmp, UINT64_MAX - 10, NULL), -ENOSPC);
	assert_int_equal(sbsave_space_ok(unit_fmt("%s/none", tmp), 1, NULL), -ENOENT);
	if (avail > (64u << 20))
		assert_int_equal(sbsave_space_ok(tmp, avail - (avail / 128), NULL), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_merge),
	    cmocka_unit_test(test_first_copy_wins),
	    cmocka_unit_test(test_range_errors),
	    cmocka_unit_test(test_write_error),
	    cmocka_unit_test(test_name_clash),
	    cmocka_unit_test(test_corrupt),
	    cmocka_unit_test(test_partial_and_list),
	    cmocka_unit_test(test_discard),
	    cmocka_unit_test(test_space),
	};

	return cmocka_run_group_tests(tests, NULL, unit_teardown);
}
