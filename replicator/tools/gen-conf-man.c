/*
 * gen-conf-man: print the OPTIONS part of tandem.conf(5) in POD, from the
 * option table (conf-opt.c), so that the man page cannot drift from it.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "conf-opt.h"

static void print_enum(const char *const *e)
{
	int i;

	for (i = 0; e[i]; i++)
		printf("%sC<%s>", i ? ", " : "", e[i]);
}

static const char *lsect(int s)
{
	if (s == CONF_LSECT_SYNCER)
		return "syncer";
	if (s == CONF_LSECT_RESOURCE)
		return "resource";
	return conf_sect_name((enum conf_sect)s);
}

/* The legacy spellings, from the same table the parser applies. */
static void print_legacy(void)
{
	size_t i;

	printf("=head1 LEGACY SYNTAX\n\n"
	       "These DRBD 8.3 and older spellings are accepted, each with a warning that "
	       "names its modern form; B<dump> prints the modern form.\n\n=over 4\n\n");
	for (i = 0; i < conf_legacies_count; i++) {
		const struct conf_legacy *l = &conf_legacies[i];

		printf("=item C<%s { %s }>\n\n", lsect(l->sect), l->name);
		switch (l->kind) {
		case CONF_LEGACY_MOVE:
			printf("Becomes C<%s { %s }>.\n\n", conf_sect_name(l->new_sect),
			       l->new_name);
			break;
		case CONF_LEGACY_NEGATE:
			printf("Becomes C<%s { %s no; }>.\n\n", conf_sect_name(l->new_sect),
			       l->new_name);
			break;
		case CONF_LEGACY_IGNORED:
		case CONF_LEGACY_OBSOLETE:
			printf("It %s.\n\n", l->advice);
			break;
		}
	}
	printf("=item C<disk { on-io-error panic; }>\n\n"
	       "DRBD 0.7's value; taken as C<detach>. Use C<call-local-io-error> with a "
	       "B<local-io-error> handler to stop the node.\n\n"
	       "=item C<flexible-meta-disk DEV;>\n\nBecomes C<meta-disk DEV;>.\n\n"
	       "=item C<syncer { ... }>\n\n"
	       "The section itself; its options are mapped as listed above.\n\n=back\n\n");
}

int main(void)
{
	enum conf_sect s;
	size_t i;

	for (s = CONF_SECT_GLOBAL; s < CONF_SECT_COUNT; s++) {
		printf("=head2 %s { }\n\n=over 4\n\n", conf_sect_name(s));
		for (i = 0; i < conf_opts_count; i++) {
			const struct conf_opt *o = &conf_opts[i];

			if (o->sect != s)
				continue;
			printf("=item B<%s>", o->name);
			switch (o->type) {
			case CONF_T_NUM:
				printf(" I<number>");
				break;
			case CONF_T_BOOL:
				printf(" [B<yes>|B<no>]");
				break;
			case CONF_T_FLAG:
				break;
			case CONF_T_HANDLER:
				printf(" I<\"command\">");
				break;
			default:
				printf(" I<%s>", conf_type_name(o->type));
				break;
			}
			printf("\n\n%s\n\n", o->help);
			printf("Type: %s", conf_type_name(o->type));
			if (o->type == CONF_T_NUM) {
				printf("; range %llu..%llu", (unsigned long long)o->min,
				       (unsigned long long)o->max);
				if (o->unit != CONF_U_NONE)
					printf(" %s (suffixes K, M, G and s convert)",
					       conf_unit_name(o->unit));
			}
			if (o->type == CONF_T_ENUM) {
				printf("; one of ");
				print_enum(o->enums);
				if (o->flags & CONF_OPT_ASB)
					printf(", C<discard-node-NAME>");
			}
			if (o->type == CONF_T_HASH) {
				printf("; one of ");
				print_enum(conf_hash_names);
			}
			if (o->def)
				printf("; default C<%s>", o->def);
			printf(".\n\n");
		}
		printf("=back\n\n");
	}
	print_legacy();
	return 0;
}
