/* test_strmap.c: lib's hash map: its hash is FNV-1a, keys that share a
 * home slot (deletion in the middle and across the table's end), growth,
 * byte keys with NULs, iteration, a map that keeps the caller's keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnv.h"
#include "strmap.h"

/* n keys whose hash falls in slot home of a 16-slot table. */
static void same_home(unsigned home, char keys[][16], size_t n)
{
	size_t found = 0;
	for (unsigned i = 0; found < n; i++) {
		char k[16];
		snprintf(k, sizeof(k), "k%u", i);
		if ((fnv1a(k, strlen(k)) & 15) == home)
			memcpy(keys[found++], k, sizeof(k));
	}
}

static void test_strmap__shared_home_slots(void **state)
{
	(void)state;
	assert_true(strmap_hash("foobar") == fnv1a("foobar", 6));
	/* Home 14 and 15: the runs wrap past the table's end. */
	for (unsigned home = 0; home < 16; home += 7) {
		char keys[6][16];
		same_home(home, keys, 6);
		struct strmap *m = strmap_new();
		for (size_t i = 0; i < 6; i++)
			assert_null(strmap_set(m, keys[i], (void *)(i + 1)));
		for (size_t i = 0; i < 6; i++)
			assert_ptr_equal(strmap_get(m, keys[i]), (void *)(i + 1));
		/* Out of the middle of the run, then its head. */
		assert_ptr_equal(strmap_del(m, keys[2]), (void *)3);
		assert_ptr_equal(strmap_del(m, keys[0]), (void *)1);
		assert_null(strmap_del(m, keys[0]));
		assert_null(strmap_get(m, keys[2]));
		assert_false(strmap_has(m, keys[0]));
		for (size_t i = 0; i < 6; i++)
			if (i != 0 && i != 2)
				assert_ptr_equal(strmap_get(m, keys[i]), (void *)(i + 1));
		assert_int_equal(strmap_count(m), 4);
		/* Set again: a new entry, then a replacement. */
		assert_null(strmap_set(m, keys[2], (void *)30));
		assert_ptr_equal(strmap_set(m, keys[2], (void *)31), (void *)30);
		assert_ptr_equal(strmap_get(m, keys[2]), (void *)31);
		assert_ptr_equal(strmap_get_hashed(m, keys[5], strmap_hash(keys[5])), (void *)6);
		strmap_free(m, NULL);
	}
}

static void test_strmap__grows_and_removes(void **state)
{
	(void)state;
	struct strmap *m = strmap_new();
	char key[32];
	for (long i = 0; i < 20000; i++) {
		snprintf(key, sizeof(key), "ns/pod-%ld", i);
		assert_null(strmap_set(m, key, (void *)(i + 1)));
	}
	assert_int_equal(strmap_count(m), 20000);
	for (long i = 0; i < 20000; i += 2) {
		snprintf(key, sizeof(key), "ns/pod-%ld", i);
		assert_ptr_equal(strmap_del(m, key), (void *)(i + 1));
	}
	assert_int_equal(strmap_count(m), 10000);
	for (long i = 0; i < 20000; i++) {
		snprintf(key, sizeof(key), "ns/pod-%ld", i);
		if (i % 2)
			assert_ptr_equal(strmap_get(m, key), (void *)(i + 1));
		else
			assert_false(strmap_has(m, key));
	}
	assert_null(strmap_get(m, "ns/pod-"));
	assert_null(strmap_get(m, ""));
	strmap_free(m, NULL);
}

static void test_strmap__byte_keys(void **state)
{
	(void)state;
	struct strmap *m = strmap_new();
	static const char a[] = {3, 'w', 'e', 'b', 0}, b[] = {3, 'w', 'e', 'b', 0, 1};
	assert_null(strmap_setn(m, a, sizeof(a), (void *)1));
	assert_null(strmap_setn(m, b, sizeof(b), (void *)2));
	assert_null(strmap_setn(m, "\3web", 4, (void *)3));
	assert_int_equal(strmap_count(m), 3);
	assert_ptr_equal(strmap_getn(m, a, sizeof(a)), (void *)1);
	assert_ptr_equal(strmap_getn(m, b, sizeof(b)), (void *)2);
	/* A string key is the byte key of its strlen() bytes. */
	assert_ptr_equal(strmap_get(m, "\3web"), (void *)3);
	assert_true(strmap_hasn(m, a, sizeof(a)));
	assert_ptr_equal(strmap_deln(m, a, sizeof(a)), (void *)1);
	assert_false(strmap_hasn(m, a, sizeof(a)));
	assert_ptr_equal(strmap_getn(m, b, sizeof(b)), (void *)2);
	strmap_free(m, NULL);
}

static int freed;
static void count_free(void *p)
{
	freed++;
	free(p);
}

/* A borrowing map compares against the caller's bytes and neither copies
 * nor frees them: a key held in its value serves as it is. */
static void test_strmap__borrows_keys(void **state)
{
	(void)state;
	struct strmap *m = strmap_new_borrowing();
	char *keys[100];
	for (int i = 0; i < 100; i++) {
		keys[i] = malloc(32);
		snprintf(keys[i], 32, "name-%d", i);
		assert_null(strmap_set(m, keys[i], keys[i]));
	}
	char probe[32];
	snprintf(probe, sizeof(probe), "name-%d", 42);
	assert_ptr_equal(strmap_get(m, probe), keys[42]);
	const char *k;
	void *v;
	for (size_t i = 0; strmap_next(m, &i, &k, &v);)
		assert_ptr_equal(k, v); /* the very bytes given */
	/* deleted, then freed by its owner: the map does not touch it again */
	assert_ptr_equal(strmap_del(m, probe), keys[42]);
	free(keys[42]);
	assert_null(strmap_get(m, probe));
	for (int i = 0; i < 100; i++)
		if (i != 42)
			assert_ptr_equal(strmap_get(m, keys[i]), keys[i]);
	assert_int_equal(strmap_count(m), 99);
	freed = 0;
	strmap_free(m, count_free); /* the values free the keys, once */
	assert_int_equal(freed, 99);
}

static void test_strmap__iterates_every_key_once(void **state)
{
	(void)state;
	struct strmap *m = strmap_new();
	char key[32];
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "uid-%d", i);
		int *v = malloc(sizeof(*v));
		*v = i;
		strmap_set(m, key, v);
	}
	char seen[1000] = {0};
	size_t n = 0;
	const char *k;
	void *v;
	for (size_t i = 0; strmap_next(m, &i, &k, &v);) {
		int x = *(int *)v;
		snprintf(key, sizeof(key), "uid-%d", x);
		assert_string_equal(k, key);
		assert_int_equal(seen[x], 0);
		seen[x] = 1;
		n++;
	}
	assert_int_equal(n, 1000);
	size_t i = 0;
	assert_true(strmap_next(m, &i, NULL, NULL));
	freed = 0;
	strmap_free(m, count_free);
	assert_int_equal(freed, 1000);
	struct strmap *empty = strmap_new();
	i = 0;
	assert_false(strmap_next(empty, &i, &k, &v));
	strmap_free(empty, count_free);
	strmap_free(NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_strmap__shared_home_slots),
	    cmocka_unit_test(test_strmap__grows_and_removes),
	    cmocka_unit_test(test_strmap__byte_keys),
	    cmocka_unit_test(test_strmap__iterates_every_key_once),
	    cmocka_unit_test(test_strmap__borrows_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
