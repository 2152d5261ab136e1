/*
 * fuzz-conf: libFuzzer target for the configuration parser.
 *
 * Loads the input as an in-memory tandem.conf named NAME, prints the
 * diagnostics, and when it loads:
 *  - dumps it as text (conf_dump) and JSON (conf_dump_json), the whole
 *    configuration and each resource selected by name;
 *  - loads the text dump again under the same name, which must succeed,
 *    and dumps that: both dumps must be identical, the text one except
 *    for its "# defined at FILE:LINE" comments, the JSON one except for
 *    its "defined-at" members. Anything else is abort()ed.
 * Everything is freed, so LeakSanitizer checks the library too.
 *
 * Includes never reach the real filesystem: they read memfs, a fixed tree
 * in memory (struct conf_fs). NAME's directory holds a tandem.d/ and a
 * drbd.d/ of includes, good and bad, and /t holds 16 directories 0 to f
 * of 4096 empty files 000 to fff each, so that "/t/x/x" with '*' for x
 * reads more than CONF_GLOB_ENTRIES_MAX directory entries and "/t/0/x"
 * matches more than CONF_FILES_MAX files. Few large directories rather
 * than a deep tree of small ones: glob grows its list of matches once a
 * directory, which with ASan's realloc costs quadratically in their number.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf.h"
#include "diag.h"

#define NAME "/etc/tandem.conf"
#define HOST "alice"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

/* ---------------------------------------------------------------- memfs */

#define MEMFS_TREE       "/t"
#define MEMFS_TREE_DEPTH 2
/* the hex digits of the names at each level of the tree: 16 directories
 * 0 to f of 4096 files 000 to fff */
static const unsigned int memfs_tree_width[MEMFS_TREE_DEPTH] = {1, 3};

#define MEMFS_HOSTS(minor, port)                                                                \
	"\tdevice minor " minor "; disk /dev/x" minor "; meta-disk internal;\n"                \
	"\ton alice { address 10.0.0.1:" port "; }\n\ton bob { address 10.0.0.2:" port "; }\n"

/* The files (text) and directories (NULL) apart from the tree, by canonical name. */
static const struct memfs_node {
	const char *path;
	const char *text;
} memfs_nodes[] = {
	{"/", NULL},
	{"/etc", NULL},
	/* the input's own name: an include of it closes a cycle */
	{NAME, "include \"tandem.d/*.res\";\n"},
	{"/etc/tandem.d", NULL},
	{"/etc/tandem.d/global_common.conf",
	 "global { usage-count no; }\ncommon { net { protocol C; } }\n"},
	{"/etc/tandem.d/a.res",
	 "include \"global_common.conf\";\nresource a {\n" MEMFS_HOSTS("1", "7789") "}\n"},
	{"/etc/tandem.d/b.res", "resource b {\n" MEMFS_HOSTS("2", "7790") "}\n"},
	{"/etc/tandem.d/.hidden.res", "resource hidden {\n" MEMFS_HOSTS("3", "7791") "}\n"},
	{"/etc/tandem.d/broken.conf", "resource {\n\tnet { ko-count 999; }\n"},
	{"/etc/tandem.d/empty.conf", ""},
	{"/etc/tandem.d/sub", NULL}, /* a directory that "*" matches */
	{"/etc/drbd.conf", "include \"drbd.d/global_common.conf\";\ninclude \"drbd.d/*.res\";\n"},
	{"/etc/drbd.d", NULL},
	{"/etc/drbd.d/global_common.conf", "common { disk { on-io-error detach; } }\n"},
	/* the same file as tandem.d's, read once */
	{"/etc/drbd.d/a.res", "include \"../tandem.d/a.res\";\n"},
	{"/etc/drbd.d/self.res", "include \"self.res\";\n"},
	{"/etc/drbd.d/r0.res", "resource r0 {\n" MEMFS_HOSTS("4", "7792") "}\n"},
	{MEMFS_TREE, NULL},
};

/* memfs is the harness, not the target: its branches are no coverage */
#define MEMFS_FN static __attribute__((no_sanitize("coverage")))

MEMFS_FN bool memfs_is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* Is path (canonical) the tree or in it, and how deep (0 = MEMFS_TREE)? */
MEMFS_FN bool memfs_in_tree(const char *path, int *depth)
{
	const char *p = path + strlen(MEMFS_TREE);
	unsigned int i;

	if (strncmp(path, MEMFS_TREE, strlen(MEMFS_TREE)) != 0 || (*p && *p != '/'))
		return false;
	for (*depth = 0; *p; (*depth)++) {
		if (*depth >= MEMFS_TREE_DEPTH || *p++ != '/')
			return false;
		for (i = 0; i < memfs_tree_width[*depth]; i++)
			if (!memfs_is_hex(*p++))
				return false;
		if (*p && *p != '/')
			return false;
	}
	return true;
}

/* The node of path (canonical), NULL if none; in the tree one for all its
 * directories and one for all its files. */
MEMFS_FN const struct memfs_node *memfs_find(const char *path)
{
	static const struct memfs_node tree_dir = {MEMFS_TREE, NULL}, tree_file = {MEMFS_TREE, ""};
	size_t i;
	int depth;

	if (memfs_in_tree(path, &depth)) {
		if (depth > MEMFS_TREE_DEPTH)
			return NULL;
		return depth < MEMFS_TREE_DEPTH ? &tree_dir : &tree_file;
	}
	for (i = 0; i < sizeof(memfs_nodes) / sizeof(memfs_nodes[0]); i++)
		if (strcmp(memfs_nodes[i].path, path) == 0)
			return &memfs_nodes[i];
	return NULL;
}

/* realpath(3) in memfs: no symbolic links, so "." and ".." are lexical. */
MEMFS_FN int memfs_realpath(void *ctx, const char *path, char *real, size_t size)
{
	const struct memfs_node *m = &memfs_nodes[0]; /* "/" */
	const char *p = path;
	size_t len = 0, n;
	char *slash;

	(void)ctx;
	if (*p != '/' || size < 2)
		return -ENOENT; /* every name here is absolute, as NAME is */
	real[0] = '\0';
	for (;;) {
		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 0)
			break;
		if (m->text)
			return -ENOTDIR;
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			slash = strrchr(real, '/');
			len = slash ? (size_t)(slash - real) : 0;
			real[len] = '\0';
		} else if (n != 1 || p[0] != '.') {
			if (len + 1 + n >= size)
				return -ENAMETOOLONG;
			real[len++] = '/';
			memcpy(real + len, p, n);
			len += n;
			real[len] = '\0';
			m = memfs_find(real);
			if (!m)
				return -ENOENT;
		}
		p += n;
	}
	if (m->text && path[strlen(path) - 1] == '/')
		return -ENOTDIR;
	if (len == 0)
		strcpy(real, "/");
	return 0;
}

MEMFS_FN const struct memfs_node *memfs_lookup(const char *path, char *real, int *rc)
{
	*rc = memfs_realpath(NULL, path, real, PATH_MAX);
	return *rc < 0 ? NULL : memfs_find(real);
}

struct memfs_dir {
	const char *path; /* a directory of memfs_nodes; NULL: of the tree */
	int depth;        /* in the tree */
	unsigned int pos; /* of ".", "..", then the children */
	size_t node;      /* the next of memfs_nodes to look at */
	struct dirent ent;
};

MEMFS_FN int memfs_opendir(void *ctx, const char *path, void **out)
{
	const struct memfs_node *m;
	struct memfs_dir *d;
	char real[PATH_MAX];
	int rc;

	(void)ctx;
	m = memfs_lookup(path, real, &rc);
	if (!m)
		return rc;
	if (m->text)
		return -ENOTDIR;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	if (!memfs_in_tree(real, &d->depth))
		d->path = m->path;
	*out = d;
	return 0;
}

/* Is node a child of directory dir (both canonical)? */
MEMFS_FN bool memfs_is_child(const char *dir, const char *node)
{
	size_t n = dir[1] ? strlen(dir) : 0;

	return strncmp(node, dir, n) == 0 && node[n] == '/' && node[n + 1] &&
	       !strchr(node + n + 1, '/');
}

MEMFS_FN struct dirent *memfs_dirent(struct memfs_dir *d, const char *name, unsigned char type)
{
	memcpy(d->ent.d_name, name, strlen(name) + 1); /* names here are short */
	d->ent.d_type = type;
	d->ent.d_ino = ++d->pos;
	return &d->ent;
}

MEMFS_FN int memfs_readdir(void *ctx, void *dir, struct dirent **ent)
{
	static const char digits[] = "0123456789abcdef";
	struct memfs_dir *d = dir;
	const struct memfs_node *m;
	char name[8] = "";
	unsigned int i, n, w;

	(void)ctx;
	*ent = NULL;
	if (d->pos < 2) {
		*ent = memfs_dirent(d, d->pos ? ".." : ".", DT_DIR);
	} else if (!d->path) {
		w = memfs_tree_width[d->depth];
		n = d->pos - 2;
		if (n < 1u << (4 * w)) {
			for (i = w; i-- > 0; n /= 16)
				name[i] = digits[n % 16];
			*ent = memfs_dirent(d, name,
					    d->depth + 1 < MEMFS_TREE_DEPTH ? DT_DIR : DT_REG);
		}
	} else {
		for (; !*ent && d->node < sizeof(memfs_nodes) / sizeof(memfs_nodes[0]); d->node++) {
			m = &memfs_nodes[d->node];
			if (memfs_is_child(d->path, m->path))
				*ent = memfs_dirent(d, strrchr(m->path, '/') + 1,
						    m->text ? DT_REG : DT_DIR);
		}
	}
	return 0;
}

MEMFS_FN void memfs_closedir(void *ctx, void *dir)
{
	(void)ctx;
	free(dir);
}

MEMFS_FN int memfs_stat(void *ctx, const char *path, struct stat *st)
{
	const struct memfs_node *m;
	char real[PATH_MAX];
	int rc;

	(void)ctx;
	m = memfs_lookup(path, real, &rc);
	if (!m)
		return rc;
	memset(st, 0, sizeof(*st));
	st->st_mode = m->text ? S_IFREG | 0644 : S_IFDIR | 0755;
	st->st_nlink = 1;
	st->st_size = m->text ? (off_t)strlen(m->text) : 0;
	return 0;
}

MEMFS_FN int memfs_read(void *ctx, const char *path, size_t max, char **buf, size_t *len)
{
	const struct memfs_node *m;
	char real[PATH_MAX];
	int rc;

	(void)ctx;
	m = memfs_lookup(path, real, &rc);
	if (!m)
		return rc;
	if (!m->text)
		return -EISDIR;
	*len = strlen(m->text);
	if (*len > max)
		return -EFBIG;
	/* exactly its length, so that ASan sees a read past the end */
	*buf = malloc(*len ? *len : 1);
	if (!*buf)
		return -ENOMEM;
	memcpy(*buf, m->text, *len);
	return 0;
}

static const struct conf_fs memfs = {
	.fs_opendir = memfs_opendir,
	.fs_readdir = memfs_readdir,
	.fs_closedir = memfs_closedir,
	.fs_stat = memfs_stat,
	.fs_realpath = memfs_realpath,
	.fs_read = memfs_read,
};

/* ---------------------------------------------------------------- dumps */

struct dumps {
	char *text;
	size_t text_len;
	char *json;
	size_t json_len;
};

static void dumps_free(struct dumps *d)
{
	free(d->text);
	free(d->json);
	memset(d, 0, sizeof(*d));
}

/* Print a message and the dumps involved, then abort(). */
static void __attribute__((noreturn))
fail(const char *what, const char *a, const char *b, const struct diag *d)
{
	fprintf(stderr, "fuzz-conf: %s\n", what);
	if (a)
		fprintf(stderr, "---- first dump\n%s\n", a);
	if (b)
		fprintf(stderr, "---- second dump\n%s\n", b);
	if (d) {
		fprintf(stderr, "---- diagnostics\n");
		diag_print(d, stderr);
	}
	abort();
}

/* conf_dump or conf_dump_json into a malloc()ed string. */
static char *dump_to_string(const struct conf *c, bool json, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int rc;

	if (!f)
		abort();
	rc = json ? conf_dump_json(c, NULL, 0, f) : conf_dump(c, NULL, 0, f);
	if (fclose(f) != 0 || rc != 0) {
		fprintf(stderr, "fuzz-conf: %s returned %d\n", json ? "conf_dump_json" : "conf_dump",
			rc);
		abort();
	}
	return buf;
}

static void dump_all(const struct conf *c, struct dumps *out)
{
	out->text = dump_to_string(c, false, &out->text_len);
	out->json = dump_to_string(c, true, &out->json_len);
}

/* The text dump without its "# defined at FILE:LINE" lines. */
static char *strip_locations(const char *text)
{
	size_t len = strlen(text);
	char *out = malloc(len + 1), *w = out;
	const char *line, *nl;

	if (!out)
		abort();
	for (line = text; *line; line = nl) {
		nl = strchr(line, '\n');
		nl = nl ? nl + 1 : line + strlen(line);
		if (strncmp(line, "# defined at ", 13) == 0)
			continue;
		memcpy(w, line, (size_t)(nl - line));
		w += nl - line;
	}
	*w = '\0';
	return out;
}

/* Remove every "defined-at" member, at any depth. */
static void json_strip_locations(json_object *o)
{
	size_t i;

	if (json_object_is_type(o, json_type_array)) {
		for (i = 0; i < json_object_array_length(o); i++)
			json_strip_locations(json_object_array_get_idx(o, i));
	} else if (json_object_is_type(o, json_type_object)) {
		json_object_object_del(o, "defined-at");
		json_object_object_foreach(o, key, val)
		{
			(void)key;
			json_strip_locations(val);
		}
	}
}

static json_object *json_parse_stripped(const char *text)
{
	json_object *o = json_tokener_parse(text);

	if (!o)
		fail("conf_dump_json printed text that is not JSON", text, NULL, NULL);
	json_strip_locations(o);
	return o;
}

/* Dumps of a resource selection, and of a selection naming no resource. */
static void dump_selections(const struct conf *c)
{
	const char *bogus[] = {"no such resource, as names have no blanks"};
	const struct conf_res *r;
	const char *sel[1];

	for (r = conf_resources(c); r; r = r->next) {
		if (conf_find_res(c, r->name) != r)
			fail("conf_find_res does not find a resource by its name", r->name, NULL,
			     NULL);
		sel[0] = r->name;
		if (conf_dump(c, sel, 1, devnull) != 0 || conf_dump_json(c, sel, 1, devnull) != 0)
			fail("dumping one resource failed", r->name, NULL, NULL);
	}
	if (conf_dump(c, bogus, 1, devnull) == 0 || conf_dump_json(c, bogus, 1, devnull) == 0)
		fail("dumping a resource that does not exist succeeded", NULL, NULL, NULL);
}

static void check_roundtrip(const struct conf_load_opts *opts, const struct dumps *first)
{
	struct dumps second = {0};
	struct diag *d = NULL;
	struct conf *c = NULL;
	char *a, *b;
	json_object *ja, *jb;

	if (diag_new(&d) < 0)
		abort();
	if (conf_load_buf(NAME, first->text, first->text_len, opts, d, &c) < 0)
		fail("the text dump of a configuration that loads does not load", first->text,
		     NULL, d);
	dump_all(c, &second);

	a = strip_locations(first->text);
	b = strip_locations(second.text);
	if (strcmp(a, b) != 0)
		fail("the text dump changes when it is loaded and dumped again", first->text,
		     second.text, d);
	free(a);
	free(b);

	ja = json_parse_stripped(first->json);
	jb = json_parse_stripped(second.json);
	if (!json_object_equal(ja, jb))
		fail("the JSON dump changes when the text dump is loaded and dumped again",
		     first->json, second.json, d);
	json_object_put(ja);
	json_object_put(jb);

	dumps_free(&second);
	conf_free(c);
	diag_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct conf_load_opts opts = {.hostname = HOST, .fs = &memfs};
	struct dumps first = {0};
	struct diag *d = NULL;
	struct conf *c = NULL;
	int rc;

	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		if (!devnull)
			abort();
	}
	if (diag_new(&d) < 0)
		abort();
	rc = conf_load_buf(NAME, (const char *)data, size, &opts, d, &c);
	diag_print(d, devnull);
	if (rc < 0) {
		if (c)
			fail("conf_load_buf failed but returned a configuration", NULL, NULL, d);
		if (diag_count(d, DIAG_ERR) == 0 && rc == -EINVAL)
			fail("conf_load_buf refused the input without an error", NULL, NULL, d);
		diag_free(d);
		return 0;
	}
	if (!c || diag_count(d, DIAG_ERR) != 0)
		fail("conf_load_buf succeeded with errors or without a configuration", NULL, NULL,
		     d);
	dump_all(c, &first);
	dump_selections(c);
	check_roundtrip(&opts, &first);

	dumps_free(&first);
	conf_free(c);
	diag_free(d);
	return 0;
}
