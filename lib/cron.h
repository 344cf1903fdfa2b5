/* cron.h: CronJob schedules as Kubernetes reads them (robfig/cron's
 * standard parser), and the time zones they are computed in.
 *
 * A schedule is five fields, minute hour day-of-month month day-of-week,
 * each a comma-separated list of "*", "?", "N", "N-M", with an optional
 * "/step" ("N/step" means N to the field's end); months and days also by
 * their three-letter English names in any case, and 7 as Sunday. When
 * both day fields are restricted (neither starts with "*" or "?") a day
 * matches if either does, as in Vixie cron. The macros @yearly
 * (@annually), @monthly, @weekly, @daily (@midnight) and @hourly, and
 * robfig's "@every <Go duration>", are the other forms. "TZ=" and
 * "CRON_TZ=" are refused: the timeZone field says where a schedule runs.
 *
 * Next times are computed in the local time of a zone read from the
 * system's zoneinfo (TZif files, with their POSIX rule for the years after
 * the last transition). Around a change of offset: a local time that does
 * not exist (the skipped hour of spring) is skipped, as robfig/cron does;
 * a local time that happens twice (the repeated hour of autumn) runs once,
 * at its first occurrence, unless the hour field is "*" (then it runs at
 * each, as every hour does).
 *
 * Pure functions; a parsed schedule and a zone are immutable and may be
 * shared between threads. */
#ifndef CORRAL_CRON_H
#define CORRAL_CRON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* The message Kubernetes gives for a TZ= or CRON_TZ= prefix. */
#define CRON_TZ_MESSAGE "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"

struct cron_schedule;
struct cron_zone;

/* Parses spec; EINVAL with robfig/cron's message (and the field it is
 * about) if it does not parse. */
int cron_parse(const char *spec, struct cron_schedule **out, struct error **err);
void cron_free(struct cron_schedule *s);
void cron_freep(struct cron_schedule **s);
#define cleanup_cron __attribute__((cleanup(cron_freep)))

/* The first time (seconds since the epoch) after t at which s runs, in the
 * local time of z (NULL: UTC); -1 if there is none within five years
 * ("0 0 30 2 *"). */
int64_t cron_next(const struct cron_schedule *s, const struct cron_zone *z, int64_t t);

/* Checks a timeZone value as Kubernetes does (its messages), without
 * loading it: EINVAL if it is empty, "Local" or not a zone name. */
int cron_zone_check_name(const char *name, struct error **err);
/* Loads the zone name ("Europe/Berlin", "UTC") from the system's
 * zoneinfo; EINVAL "unknown time zone NAME" if there is none. */
int cron_zone_load(const char *name, struct cron_zone **out, struct error **err);
/* The zone of /etc/localtime (corral-ctrl's own, as kube-controller-manager
 * uses its own for a CronJob without timeZone), or UTC. */
struct cron_zone *cron_zone_local(void);
/* A zone from TZif data (for tests and the fuzzer); EINVAL if it does not
 * parse. */
int cron_zone_parse(const char *name, const unsigned char *data, size_t len, struct cron_zone **out,
		    struct error **err);
/* A zone of one POSIX TZ rule ("CET-1CEST,M3.5.0,M10.5.0/3"). */
int cron_zone_posix(const char *rule, struct cron_zone **out, struct error **err);
void cron_zone_free(struct cron_zone *z);
void cron_zone_freep(struct cron_zone **z);
#define cleanup_cron_zone __attribute__((cleanup(cron_zone_freep)))
/* The zone's UTC offset in seconds (east positive) at t, and whether that
 * is daylight saving time. */
int cron_zone_offset(const struct cron_zone *z, int64_t t, bool *dst);

#endif
