/* kinds_batch.c: the rules of the batch API group's kinds, Job and
 * CronJob. A CronJob's schedule and timeZone are checked by lib's cron
 * parser and zone loader (cron.h), so that corral-fs refuses at the write
 * what corral-ctrl could not run, in Kubernetes' words. */
#include "cron.h"
#include "names.h"
#include "util.h"
#include "validate_impl.h"

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
	cleanup_cron struct cron_schedule *parsed = NULL;
	cleanup_error struct error *serr = NULL;
	if (sched && cron_parse(sched, &parsed, &serr) < 0)
		v_err_invalid_str(c, "schedule", sched, "%s", serr->msg);
	const char *tz = v_get_str(c, spec, "timeZone", OPT);
	cleanup_cron_zone struct cron_zone *zone = NULL;
	cleanup_error struct error *zerr = NULL;
	if (tz && cron_zone_load(tz, &zone, &zerr) < 0)
		v_err_invalid_str(c, "timeZone", tz, "%s", zerr->msg);
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
