/* fuzz_quantity.c: libFuzzer harness for quantity_parse(). Besides memory
 * errors it checks the contract: a failure sets an error and leaves the
 * output alone, and whatever parses formats to a string that parses back
 * to the same value. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "quantity.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_free char *s = xstrndup((const char *)data, size);
	struct error *err = NULL;
	int64_t v = 42;
	if (quantity_parse(s, &v, &err) < 0) {
		if (!err || !err->msg || v != 42)
			abort();
		error_free(err);
		return 0;
	}
	if (err)
		abort();

	char buf[32];
	quantity_format(v, buf, sizeof(buf));
	int64_t back = 0;
	if (quantity_parse(buf, &back, NULL) < 0 || back != v)
		abort();
	return 0;
}
