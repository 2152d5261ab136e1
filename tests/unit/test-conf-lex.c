/*
 * test-conf-lex: the tokenizer. Each case renders the whole token stream
 * as "text@line:col" items ("{", "}", ";", "EOF", strings in quotes) and
 * compares it, with the diagnostics the input must produce.
 */
#include "unit.h"

#include "arena.h"
#include "conf-lex.h"

static void free_arena(void *p)
{
	arena_free(p);
}

static void free_lex(void *p)
{
	conf_lex_free(p);
}

struct lexed {
	struct arena *a;
	struct diag *d;
	char *render;
};

static void lex_render(struct lexed *lx, const char *buf, size_t len)
{
	struct conf_lex *l;
	struct conf_tok t;
	size_t cap = 0;
	FILE *f;
	int guard = 0;

	assert_int_equal(arena_new(&lx->a), 0);
	unit_defer(free_arena, lx->a);
	assert_int_equal(diag_new(&lx->d), 0);
	unit_defer(unit_free_diag, lx->d);
	assert_int_equal(conf_lex_new(lx->a, lx->d, "lex.conf", buf, len, &l), 0);
	unit_defer(free_lex, l);
	f = open_memstream(&lx->render, &cap);
	assert_non_null(f);
	do {
		conf_lex_next(l, &t);
		assert_non_null(t.text);
		assert_string_equal(t.loc.file, "lex.conf");
		switch (t.type) {
		case CONF_TOK_WORD:
			fprintf(f, "%s@", t.text);
			break;
		case CONF_TOK_STRING:
			fprintf(f, "\"%s\"@", t.text);
			break;
		case CONF_TOK_LBRACE:
			fputs("{@", f);
			break;
		case CONF_TOK_RBRACE:
			fputs("}@", f);
			break;
		case CONF_TOK_SEMI:
			fputs(";@", f);
			break;
		case CONF_TOK_EOF:
			fputs("EOF@", f);
			break;
		}
		fprintf(f, "%d:%d%s", t.loc.line, t.loc.col, t.type == CONF_TOK_EOF ? "" : " ");
		assert_true(++guard < 10000);
	} while (t.type != CONF_TOK_EOF);
	assert_int_equal(fclose(f), 0);
	unit_str(lx->render);
	unit_release(l);
}

static void lex_done(struct lexed *lx)
{
	unit_release(lx->render);
	unit_release(lx->d);
	unit_release(lx->a);
}

struct lex_case {
	const char *name;
	const char *in;
	size_t len; /* 0 = strlen(in) */
	const char *expect;
};

static const struct lex_case clean_cases[] = {
	{"section", "global { usage-count no; }", 0,
	 "global@1:1 {@1:8 usage-count@1:10 no@1:22 ;@1:24 }@1:26 EOF@1:27"},
	{"no blanks", "a{b;}c", 0, "a@1:1 {@1:2 b@1:3 ;@1:4 }@1:5 c@1:6 EOF@1:7"},
	{"empty input", "", 0, "EOF@1:1"},
	{"only blanks", " \t\n \r\n", 0, "EOF@3:1"},
	{"comments", "# c1 { ;\nresource r0 # c2 { ; }\n{ } # end", 0,
	 "resource@2:1 r0@2:10 {@3:1 }@3:3 EOF@3:10"},
	{"comment ends a word", "a#b c\nd", 0, "a@1:1 d@2:1 EOF@2:2"},
	{"comment at end without newline", "x # y", 0, "x@1:1 EOF@1:6"},
	{"address-like words", "10.0.0.1:7789 [fd00::1]:7789 /dev/sdc[3] discard-node-a 4000s", 0,
	 "10.0.0.1:7789@1:1 [fd00::1]:7789@1:15 /dev/sdc[3]@1:30 discard-node-a@1:42 "
	 "4000s@1:57 EOF@1:62"},
	{"string", "x \"hello world\" y", 0, "x@1:1 \"hello world\"@1:3 y@1:17 EOF@1:18"},
	{"escapes", "\"a\\\"b\\\\c\\nd\"", 0, "\"a\"b\\cnd\"@1:1 EOF@1:13"},
	{"empty string", "\"\" ;", 0, "\"\"@1:1 ;@1:4 EOF@1:5"},
	{"string next to words", "x\"y\"z", 0, "x@1:1 \"y\"@1:2 z@1:5 EOF@1:6"},
	{"specials inside a string", "\"a # {b}; c\"", 0, "\"a # {b}; c\"@1:1 EOF@1:13"},
	{"tabs count one column", "\tfoo\t\tbar", 0, "foo@1:2 bar@1:7 EOF@1:10"},
	{"lines and CR", "a\n\n  b\r\n c", 0, "a@1:1 b@3:3 c@4:2 EOF@4:3"},
	{"EOF after newline", "a\n", 0, "a@1:1 EOF@2:1"},
	{"columns after a string", "\"ab\" c\n\t\"d\";", 0,
	 "\"ab\"@1:1 c@1:6 \"d\"@2:2 ;@2:5 EOF@2:6"},
	{"length bounds the input", "abcdef", 3, "abc@1:1 EOF@1:4"},
	{"blanks of every kind", "a\fb\vc", 0, "a@1:1 b@1:3 c@1:5 EOF@1:6"},
};

static void test_clean(void **state)
{
	const struct lex_case *lc = *state;
	struct lexed lx;

	lex_render(&lx, lc->in, lc->len ? lc->len : strlen(lc->in));
	if (strcmp(lx.render, lc->expect) != 0)
		print_error("input '%s'\n", lc->in);
	assert_string_equal(lx.render, lc->expect);
	assert_no_errors(lx.d);
	assert_no_warnings(lx.d);
	lex_done(&lx);
}

/* ---------------------------------------------------------------- errors */

static void test_unterminated_at_newline(void **state)
{
	struct lexed lx;

	(void)state;
	lex_render(&lx, "x \"abc\ny", 8);
	assert_string_equal(lx.render, "x@1:1 \"abc\"@1:3 y@2:1 EOF@2:2");
	assert_int_equal(diag_count(lx.d, DIAG_ERR), 1);
	assert_error_at(lx.d, 1, 3, "unterminated string");
	lex_done(&lx);
}

static void test_unterminated_at_eof(void **state)
{
	struct lexed lx;

	(void)state;
	lex_render(&lx, "on a {\n  x \"abc", 15);
	assert_int_equal(diag_count(lx.d, DIAG_ERR), 1);
	assert_error_at(lx.d, 2, 5, "unterminated string");
	lex_done(&lx);
}

static void test_backslash_newline_does_not_continue(void **state)
{
	struct lexed lx;
	const char *in = "\"ab\\\ncd";

	(void)state;
	lex_render(&lx, in, strlen(in));
	assert_error_at(lx.d, 1, 1, "unterminated string");
	assert_string_equal(lx.render, "\"ab\"@1:1 cd@2:1 EOF@2:3");
	lex_done(&lx);
}

static char *repeat(char c, size_t n)
{
	char *s = unit_str(malloc(n + 1));

	memset(s, c, n);
	s[n] = '\0';
	return s;
}

static void test_word_limit(void **state)
{
	struct lexed lx;
	char *w = repeat('w', 128), *in;

	(void)state;
	in = unit_fmt("x %s;", w);
	lex_render(&lx, in, strlen(in));
	assert_no_errors(lx.d);
	assert_non_null(strstr(lx.render, w));
	lex_done(&lx);
	unit_release(in);
	unit_release(w);

	w = repeat('w', 129);
	in = unit_fmt("x\n  %s;", w);
	lex_render(&lx, in, strlen(in));
	assert_int_equal(diag_count(lx.d, DIAG_ERR), 1);
	assert_error_at(lx.d, 2, 3, "128");
	/* the next token is still found where it is */
	assert_non_null(strstr(lx.render, ";@2:132 EOF@2:133"));
	lex_done(&lx);
	unit_release(in);
	unit_release(w);
}

static void test_string_limit(void **state)
{
	struct lexed lx;
	char *s = repeat('s', 255), *in;
	size_t i;

	(void)state;
	in = unit_fmt("x \"%s\";", s);
	lex_render(&lx, in, strlen(in));
	assert_no_errors(lx.d);
	assert_non_null(strstr(lx.render, s));
	lex_done(&lx);
	unit_release(in);

	/* escapes count as the character they stand for: 305 bytes, 255 characters */
	unit_release(s);
	s = repeat('s', 305);
	for (i = 0; i < 100; i++)
		s[i] = i % 2 ? '"' : '\\';
	in = unit_fmt("x \"%s\";", s);
	lex_render(&lx, in, strlen(in));
	assert_no_errors(lx.d);
	lex_done(&lx);
	unit_release(in);
	unit_release(s);

	s = repeat('s', 256);
	in = unit_fmt("a\nb\t\"%s\";", s);
	lex_render(&lx, in, strlen(in));
	assert_int_equal(diag_count(lx.d, DIAG_ERR), 1);
	assert_error_at(lx.d, 2, 3, "255");
	assert_non_null(strstr(lx.render, ";@2:261 EOF@2:262"));
	lex_done(&lx);
	unit_release(in);
	unit_release(s);
}

static void test_nul_between_tokens(void **state)
{
	struct lexed lx;
	const char in[] = "a\0b\n\0;";

	(void)state;
	lex_render(&lx, in, sizeof(in) - 1);
	assert_string_equal(lx.render, "a@1:1 b@1:3 ;@2:2 EOF@2:3");
	assert_int_equal(diag_count(lx.d, DIAG_ERR), 2);
	assert_error_at(lx.d, 1, 2, "NUL");
	assert_error_at(lx.d, 2, 1, "NUL");
	lex_done(&lx);
}

/* A NUL inside a string would silently cut the value short (a shared-secret,
 * a handler command): it must be reported like any other NUL byte. */
static void test_nul_in_string(void **state)
{
	struct lexed lx;
	const char in[] = "x \"ab\0cd\";";

	(void)state;
	lex_render(&lx, in, sizeof(in) - 1);
	assert_error_at(lx.d, 1, 6, "NUL");
	lex_done(&lx);
}

static void test_peek(void **state)
{
	struct arena *a;
	struct diag *d;
	struct conf_lex *l;
	struct conf_tok t, p1, p2;
	const char *in = "one two";

	(void)state;
	assert_int_equal(arena_new(&a), 0);
	unit_defer(free_arena, a);
	assert_int_equal(diag_new(&d), 0);
	unit_defer(unit_free_diag, d);
	assert_int_equal(conf_lex_new(a, d, "p.conf", in, strlen(in), &l), 0);
	unit_defer(free_lex, l);
	conf_lex_peek(l, &p1);
	conf_lex_peek(l, &p2);
	assert_string_equal(p1.text, "one");
	assert_string_equal(p2.text, "one");
	conf_lex_next(l, &t);
	assert_int_equal(t.type, CONF_TOK_WORD);
	assert_string_equal(t.text, "one");
	assert_int_equal(t.loc.col, 1);
	conf_lex_peek(l, &p1);
	assert_string_equal(p1.text, "two");
	assert_int_equal(p1.loc.col, 5);
	conf_lex_next(l, &t);
	assert_string_equal(t.text, "two");
	conf_lex_next(l, &t);
	assert_int_equal(t.type, CONF_TOK_EOF);
	conf_lex_next(l, &t); /* EOF is sticky */
	assert_int_equal(t.type, CONF_TOK_EOF);
	unit_release(l);
	unit_release(d);
	unit_release(a);
}

static void test_type_names(void **state)
{
	static const enum conf_tok_type types[] = {CONF_TOK_EOF,    CONF_TOK_WORD,
						   CONF_TOK_STRING, CONF_TOK_LBRACE,
						   CONF_TOK_RBRACE, CONF_TOK_SEMI};
	size_t i, j;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(types); i++) {
		const char *n = conf_tok_type_name(types[i]);

		assert_non_null(n);
		assert_true(strlen(n) > 0);
		assert_string_not_equal(n, "?");
		for (j = 0; j < i; j++)
			assert_string_not_equal(n, conf_tok_type_name(types[j]));
	}
	assert_string_equal(conf_tok_type_name(CONF_TOK_SEMI), "';'");
}

int main(void)
{
	struct CMUnitTest tests[UNIT_ARRAY_SIZE(clean_cases) + 16];
	size_t n = 0, i;

	for (i = 0; i < UNIT_ARRAY_SIZE(clean_cases); i++) {
		tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(test_clean,
									(void *)&clean_cases[i]);
		tests[n++].name = clean_cases[i].name;
	}
#define ADD(fn) tests[n++] = (struct CMUnitTest)cmocka_unit_test(fn)
	ADD(test_unterminated_at_newline);
	ADD(test_unterminated_at_eof);
	ADD(test_backslash_newline_does_not_continue);
	ADD(test_word_limit);
	ADD(test_string_limit);
	ADD(test_nul_between_tokens);
	ADD(test_nul_in_string);
	ADD(test_peek);
	ADD(test_type_names);
#undef ADD
	return _cmocka_run_group_tests("conf-lex", tests, n, NULL, unit_teardown);
}
