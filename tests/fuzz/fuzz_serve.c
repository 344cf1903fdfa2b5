/* fuzz_serve.c: what corral-noded's log server takes from the network
 * (noded/serve.h): a request's path (a log's or an exec's), of which every accepted part must be
 * a name that is safe on a disk, and a Range header, whose range must lie
 * within the file. The first byte picks which. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"
#include "util.h"

static void check_part(const char *p)
{
	if (!*p || strchr(p, '/') || strchr(p, '_') || p[0] == '.' || strstr(p, ".."))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char *s = xstrndup((const char *)data + 1, size - 1);
	if (data[0] & 1) {
		struct serve_log_ref r;
		struct error *err = NULL;
		int (*parse)(const char *, struct serve_log_ref *, struct error **) =
		    data[0] & 2 ? serve_parse_exec_path : serve_parse_log_path;
		if (parse(s, &r, &err) == 0) {
			check_part(r.ns);
			check_part(r.pod);
			check_part(r.container);
			serve_log_ref_clear(&r);
		} else if (!err || r.ns || r.pod || r.container) {
			abort();
		}
		error_free(err);
	} else {
		uint64_t sizes[] = {0, 1, 100, UINT64_MAX};
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			uint64_t start = 0, len = 0;
			if (serve_parse_range(s, sizes[i], &start, &len) == 0 &&
			    (len == 0 || start >= sizes[i] || len > sizes[i] - start))
				abort();
		}
	}
	free(s);
	return 0;
}
