/* kinds_batch.c: the rules of the batch API group's kinds, Job and
 * CronJob, with the cron schedule parser (the five fields, names, ranges,
 * steps and the @-macros that robfig/cron, Kubernetes' parser, accepts). */
#include "names.h"
#include "util.h"
#include "validate_impl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- Job and CronJob -------------------------------------------------- */

static const char *const completion_modes[] = {"NonIndexed", "Indexed", NULL};
static const char *const replacement_policies[] = {"TerminatingOrFailed", "Failed", NULL};
static const char *const concurrency_policies[] = {"Allow", "Forbid", "Replace", NULL};

static void check_job_spec(struct vctx *c, const struct ynode *spec)
{
	long long v = 0;
	v_get_i32_min(c, spec, "parallelism", 0, NULL);
	bool has_completions = v_get_i32_min(c, spec, "completions", 0, NULL);
	v_get_i32_min(c, spec, "backoffLimit", 0, NULL);
	v_get_i32_min(c, spec, "backoffLimitPerIndex", 0, NULL);
	v_get_i32_min(c, spec, "maxFailedIndexes", 0, NULL);
	v_get_i32_min(c, spec, "ttlSecondsAfterFinished", 0, NULL);
	if (v_get_int(c, spec, "activeDeadlineSeconds", OPT, &v))
		v_check_min(c, "activeDeadlineSeconds", v, 1);
	const char *mode = v_get_enum(c, spec, "completionMode", OPT, completion_modes);
	if (mode && !strcmp(mode, "Indexed") && !has_completions &&
	    v_node_unset(ynode_get(spec, "completions")))
		v_err_required(c, "completions", "when completion mode is Indexed");
	v_get_enum(c, spec, "podReplacementPolicy", OPT, replacement_policies);
	bool manual = false, b;
	v_get_bool(c, spec, "manualSelector", OPT, &manual);
	v_get_bool(c, spec, "suspend", OPT, &b);
	v_get_map(c, spec, "podFailurePolicy", OPT);
	struct ynode *t = v_check_pod_template(c, spec, "template", v_restart_job, true);
	struct ynode *sel = v_check_label_selector(c, spec, "selector", manual ? REQ : OPT);
	if (sel && t)
		v_check_selector_selects(c, sel, t, "job");
}

static void check_job(struct vctx *c, struct ynode *obj)
{
	v_check_required_spec(c, obj, check_job_spec);
}

static void default_job(struct vctx *c, struct ynode *obj)
{
	(void)c;
	struct ynode *spec = ynode_get(obj, "spec");
	if (!spec || spec->type != YNODE_MAP)
		return;
	if (v_node_unset(ynode_get(spec, "completions")) &&
	    v_node_unset(ynode_get(spec, "parallelism")))
		v_default_int(spec, "completions", 1);
	v_default_int(spec, "parallelism", 1);
	v_default_int(spec, "backoffLimit", 6);
	v_default_str(spec, "completionMode", "NonIndexed");
	v_default_bool(spec, "suspend", false);
	v_default_pod_template(spec, "template.spec");
}

static void update_job(struct vctx *c, const struct ynode *obj, const struct ynode *old)
{
	v_check_immutable(c, obj, old, "spec.selector");
	v_check_immutable(c, obj, old, "spec.template");
	v_check_immutable(c, obj, old, "spec.completions");
	v_check_immutable(c, obj, old, "spec.completionMode");
}

/* Job */
const struct kind_rules v_rules_job = {
    .kind = KIND_JOB,
    .name = names_dns1123_subdomain,
    .check = check_job,
    .defaults = default_job,
    .update = update_job,
};

static const char *const cron_months[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
					  "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const cron_days[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

struct cron_field {
	int lo, hi;
	const char *const *names; /* names[i] means lo + i */
};

static const struct cron_field cron_fields[5] = {
    {0, 59, NULL},	  /* minute */
    {0, 23, NULL},	  /* hour */
    {1, 31, NULL},	  /* day of month */
    {1, 12, cron_months}, /* month */
    {0, 6, cron_days},	  /* day of week */
};

/* One value of a cron field, by number or by name; returns -1 if neither. */
static int cron_value(const char *s, size_t n, const struct cron_field *f)
{
	for (size_t i = 0; f->names && f->names[i]; i++)
		if (n == 3 && strncasecmp(s, f->names[i], 3) == 0)
			return f->lo + (int)i;
	if (n == 0 || n > 6)
		return -1;
	int v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* One comma-separated part of a field: "*", "?", "a", "a-b", each with an
 * optional "/step". Returns a malloc'd complaint in robfig/cron's words (the
 * parser Kubernetes uses), or NULL. */
static char *cron_part(const char *p, size_t n, const struct cron_field *f)
{
	cleanup_free char *part = xstrndup(p, n);
	char *slash = strchr(part, '/');
	if (slash && strchr(slash + 1, '/'))
		return xasprintf("too many slashes: %s", part);
	if (slash) {
		*slash = '\0';
		int step =
		    cron_value(slash + 1, strlen(slash + 1), &(struct cron_field){0, 0, NULL});
		if (step <= 0)
			return xasprintf("step of range should be a positive number: %s/%s", part,
					 slash + 1);
	}
	if (!strcmp(part, "*") || !strcmp(part, "?"))
		return NULL;
	char *dash = strchr(part, '-');
	if (dash && strchr(dash + 1, '-'))
		return xasprintf("too many hyphens: %s", part);
	const char *a = part, *b = dash ? dash + 1 : part;
	size_t an = dash ? (size_t)(dash - part) : strlen(part);
	int lo = cron_value(a, an, f), hi = cron_value(b, strlen(b), f);
	if (lo < 0)
		return xasprintf("failed to parse int from %.*s", (int)an, a);
	if (hi < 0)
		return xasprintf("failed to parse int from %s", b);
	if (lo < f->lo)
		return xasprintf("beginning of range (%d) below minimum (%d): %s", lo, f->lo, part);
	if (hi > f->hi)
		return xasprintf("end of range (%d) above maximum (%d): %s", hi, f->hi, part);
	if (lo > hi)
		return xasprintf("beginning of range (%d) beyond end of range (%d): %s", lo, hi,
				 part);
	return NULL;
}

static char *cron_check(const char *s)
{
	static const char *const macros[] = {"@yearly", "@annually", "@monthly", "@weekly",
					     "@daily",	"@midnight", "@hourly",	 NULL};
	while (isspace((unsigned char)*s))
		s++;
	if (!strncmp(s, "TZ=", 3) || !strncmp(s, "CRON_TZ=", 8))
		return xstrdup("cannot use TZ or CRON_TZ in schedule, use timeZone field instead");
	if (s[0] == '@') {
		if (v_in_list(s, macros))
			return NULL;
		if (!strncmp(s, "@every ", 7) && s[7])
			return NULL;
		return xasprintf("unrecognized descriptor: %s", s);
	}
	const char *fields[6];
	size_t lens[6], n = 0;
	for (const char *p = s; *p;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		size_t len = 0;
		while (p[len] && !isspace((unsigned char)p[len]))
			len++;
		if (n < 6) {
			fields[n] = p;
			lens[n] = len;
		}
		n++;
		p += len;
	}
	if (n != 5)
		return xasprintf("Expected exactly 5 fields, found %zu: %s", n, s);
	for (size_t i = 0; i < 5; i++) {
		const char *p = fields[i], *end = fields[i] + lens[i];
		while (p <= end) {
			size_t plen = strcspn(p, ",");
			if (p + plen > end)
				plen = (size_t)(end - p);
			char *why = cron_part(p, plen, &cron_fields[i]);
			if (why)
				return why;
			p += plen + 1;
		}
	}
	return NULL;
}

static void check_cron_job(struct vctx *c, struct ynode *obj)
{
	const char *name = ynode_path_str(obj, "metadata.name");
	if (name && strlen(name) > 52)
		v_err_invalid_str(c, "metadata.name", name, "must be no more than 52 characters");
	struct ynode *spec = v_get_map(c, obj, "spec", REQ);
	if (!spec)
		return;
	size_t mark = v_path_push(c, "spec");
	const char *sched = v_get_str(c, spec, "schedule", REQ);
	cleanup_free char *why = sched ? cron_check(sched) : NULL;
	if (why)
		v_err_invalid_str(c, "schedule", sched, "%s", why);
	v_get_str(c, spec, "timeZone", OPT);
	long long v = 0;
	if (v_get_int(c, spec, "startingDeadlineSeconds", OPT, &v))
		v_check_min(c, "startingDeadlineSeconds", v, 0);
	v_get_enum(c, spec, "concurrencyPolicy", OPT, concurrency_policies);
	bool b = false;
	v_get_bool(c, spec, "suspend", OPT, &b);
	v_get_i32_min(c, spec, "successfulJobsHistoryLimit", 0, NULL);
	v_get_i32_min(c, spec, "failedJobsHistoryLimit", 0, NULL);
	struct ynode *jt = v_get_map(c, spec, "jobTemplate", REQ);
	if (jt) {
		size_t jm = v_path_push(c, "jobTemplate");
		v_check_template_metadata(c, jt, OPT, NULL);
		v_check_required_spec(c, jt, check_job_spec);
		v_path_pop(c, jm);
	}
	v_path_pop(c, mark);
}

static void default_cron_job(struct vctx *c, struct ynode *obj)
{
	(void)c;
	struct ynode *spec = ynode_get(obj, "spec");
	v_default_str(spec, "concurrencyPolicy", "Allow");
	v_default_bool(spec, "suspend", false);
	v_default_int(spec, "successfulJobsHistoryLimit", 3);
	v_default_int(spec, "failedJobsHistoryLimit", 1);
	v_default_pod_template(spec, "jobTemplate.spec.template.spec");
}

/* CronJob */
const struct kind_rules v_rules_cron_job = {
    .kind = KIND_CRON_JOB,
    .name = names_dns1123_subdomain,
    .check = check_cron_job,
    .defaults = default_cron_job,
};
