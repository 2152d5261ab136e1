/*
 * fuzz-conf: libFuzzer target for the configuration parser.
 *
 * Loads the input as an in-memory tandem.conf named NAME (its directory
 * does not exist, so relative includes resolve to nothing), prints the
 * diagnostics, and when it loads:
 *  - dumps it as text (conf_dump) and JSON (conf_dump_json), the whole
 *    configuration and each resource selected by name;
 *  - loads the text dump again under the same name, which must succeed,
 *    and dumps that: both dumps must be identical, the text one except
 *    for its "# defined at FILE:LINE" comments, the JSON one except for
 *    its "defined-at" members. Anything else is abort()ed.
 * Everything is freed, so LeakSanitizer checks the library too.
 */
#include "config.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "diag.h"

#define NAME "/nonexistent/fuzz.conf"
#define HOST "alice"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

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
	const struct conf_load_opts opts = {.hostname = HOST};
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
