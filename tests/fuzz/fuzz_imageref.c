/* fuzz_imageref.c: image references parsed, normalized, and the
 * normalized form parsed again to itself (a fixed point). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "imageref.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = xstrndup((const char *)data, size);
	struct imageref r;
	struct error *err = NULL;
	if (imageref_parse(s, &r, &err) == 0) {
		char *norm = imageref_string(&r);
		struct imageref again;
		if (imageref_parse(norm, &again, NULL) != 0)
			abort();
		char *norm2 = imageref_string(&again);
		if (strcmp(norm, norm2) != 0)
			abort();
		(void)imageref_default_policy(&again);
		free(norm2);
		free(norm);
		imageref_clear(&again);
		imageref_clear(&r);
	}
	error_free(err);
	free(s);
	return 0;
}
