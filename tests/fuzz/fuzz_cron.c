/* fuzz_cron.c: libFuzzer harness for lib/cron.c. The first byte chooses
 * what the rest is: a schedule (after 8 bytes of a start time), TZif data,
 * or a POSIX TZ rule. Besides memory errors it checks the contract: a
 * refused schedule sets an error and no schedule; a next time is after the
 * start and is also the next time after the second before it; a zone's
 * offsets stay within a day. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cron.h"
#include "error.h"
#include "util.h"

static struct cron_zone *fuzz__berlin(void)
{
	static struct cron_zone *z;
	static int tried;
	if (!tried++ && cron_zone_load("Europe/Berlin", &z, NULL) < 0)
		z = NULL;
	return z;
}

/* every: an "@every" schedule, a delay rather than times of a calendar. */
static void fuzz__check_next(const struct cron_schedule *s, const struct cron_zone *z, int64_t t,
			     bool every)
{
	int64_t n = cron_next(s, z, t);
	if (n < 0)
		return;
	if (n <= t || (!every && cron_next(s, z, n - 1) != n))
		abort();
	int64_t again = cron_next(s, z, n);
	if (again >= 0 && again <= n)
		abort();
}

static void fuzz__check_zone(const struct cron_zone *z, int64_t t)
{
	static const int64_t steps[] = {0, 1800, 86400, 86400 * 180, 86400 * 365 * 30};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int off = cron_zone_offset(z, t + (int64_t)steps[i], NULL);
		if (off < -26 * 3600 || off > 26 * 3600)
			abort();
	}
	struct cron_schedule *daily = NULL;
	if (cron_parse("0 0 * * *", &daily, NULL) < 0)
		abort();
	fuzz__check_next(daily, z, t, false);
	cron_free(daily);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t mode = data[0] % 3;
	data++;
	size--;
	/* Start times between 1900 and 2200, from 8 bytes when there are. */
	uint64_t raw = 0;
	if (mode != 1 && size >= 8) {
		memcpy(&raw, data, 8);
		data += 8;
		size -= 8;
	}
	int64_t t = -2208988800LL + (int64_t)(raw % 9467280000ULL);
	if (mode == 1) {
		struct cron_zone *z = NULL;
		struct error *err = NULL;
		if (cron_zone_parse("fuzz", data, size, &z, &err) < 0) {
			if (!err || !err->msg || z)
				abort();
			error_free(err);
			return 0;
		}
		fuzz__check_zone(z, 1700000000);
		cron_zone_free(z);
		return 0;
	}
	cleanup_free char *s = xstrndup((const char *)data, size);
	if (mode == 2) {
		struct cron_zone *z = NULL;
		if (cron_zone_posix(s, &z, NULL) == 0) {
			fuzz__check_zone(z, t);
			cron_zone_free(z);
		}
		return 0;
	}
	struct cron_schedule *sched = NULL;
	struct error *err = NULL;
	if (cron_parse(s, &sched, &err) < 0) {
		if (!err || !err->msg || sched)
			abort();
		error_free(err);
		return 0;
	}
	if (err)
		abort();
	bool every = !strncmp(s, "@every", 6);
	fuzz__check_next(sched, NULL, t, every);
	fuzz__check_next(sched, fuzz__berlin(), t, every);
	cron_free(sched);
	return 0;
}
