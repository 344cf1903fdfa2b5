/* config.h: the daemons' configuration file, /etc/corral/corral.conf (INI,
 * read with inih). One section per daemon ([fs], [ctrl], [sched], [noded],
 * [dns]) and [cluster] for what they share.
 *
 * A daemon declares its keys in a table; config_load() fills the fields it
 * points at: first every default, then the key's value in [cluster] if any,
 * then in the daemon's own section, whatever order the file has them in.
 * Flags come last and win: the daemon applies them with config_set(). A key
 * the table does not know is an error in the daemon's own section, ignored
 * in [cluster] (another daemon may use it) and in the other sections. */
#ifndef CORRAL_CONFIG_H
#define CORRAL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define CONFIG_DEFAULT_PATH   "/etc/corral/corral.conf"
#define CONFIG_SHARED_SECTION "cluster"

enum config_type {
	CONFIG_STRING,	 /* char **: malloc'd, freed by config_free() */
	CONFIG_INT,	 /* int *: decimal */
	CONFIG_BOOL,	 /* bool *: true/false, yes/no, on/off, 1/0 */
	CONFIG_DURATION, /* uint64_t *, milliseconds: "0", "250ms", "30s", "1h30m" */
	CONFIG_DOUBLE,	 /* double *: a decimal number ("0.1", "0.55") */
};

struct config_key {
	const char *name; /* as in the file: "resync-period" */
	enum config_type type;
	void *ptr;	 /* the field, of the type above */
	const char *def; /* default, written as in the file; NULL: leave as is */
	long long min;	 /* CONFIG_INT, CONFIG_DURATION (ms), CONFIG_DOUBLE: inclusive range, */
	long long max;	 /* checked when min < max */
};

/* Tables end with an entry whose name is NULL. */
#define CONFIG_KEYS_END                                                                            \
	{                                                                                          \
		.name = NULL                                                                       \
	}

/* path NULL means CONFIG_DEFAULT_PATH, which may be missing (defaults only);
 * a path given explicitly must exist. Errors name file:line and the key. */
int config_load(const char *path, const char *section, const struct config_key *keys,
		struct error **err);
/* Sets one key from text (a flag's value), checked as in the file. */
int config_set(const struct config_key *keys, const char *name, const char *value,
	       struct error **err);
/* Frees the strings of the table's CONFIG_STRING fields and clears them. */
void config_free(const struct config_key *keys);

/* Flags met while parsing the command line, applied over the file once it
 * is loaded (a flag wins over the file), in the order given. */
struct config_flags {
	struct config_flag {
		char *name;
		char *value;
	} * v;
	size_t n;
};

/* Remembers --name=value; a NULL value (an optional argument left out, as
 * in --leader-elect) is "true". */
void config_flags_add(struct config_flags *f, const char *name, const char *value);
/* config_set() of each, the error prefixed with "--name". */
int config_flags_apply(const struct config_flags *f, const struct config_key *keys,
		       struct error **err);
void config_flags_clear(struct config_flags *f);

/* The value parsers, for flags that are not in a table. */
int config_parse_int(const char *s, long long min, long long max, long long *out,
		     struct error **err);
int config_parse_bool(const char *s, bool *out, struct error **err);
int config_parse_duration(const char *s, uint64_t *ms, struct error **err);
/* A finite decimal number within [min, max] when min < max. */
int config_parse_double(const char *s, long long min, long long max, double *out,
			struct error **err);

#endif
