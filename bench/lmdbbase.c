/* lmdbbase: the durable-write ceiling of the disk under corral's store.
 * Commits N LMDB transactions of one ~400-byte put each, with LMDB's
 * default (fully synced) commits, and prints "rate=TXNS_PER_SECOND".
 * bench/run.sh prints corral-fs's single-writer rate against it.
 *   lmdbbase DIR N */
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: lmdbbase DIR N\n");
		return 2;
	}
	int n = atoi(argv[2]);
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	if (mdb_env_create(&env) || mdb_env_set_mapsize(env, 1UL << 30) ||
	    mdb_env_open(env, argv[1], 0, 0600)) {
		fprintf(stderr, "lmdbbase: cannot open %s\n", argv[1]);
		return 1;
	}
	mdb_txn_begin(env, NULL, 0, &txn);
	mdb_dbi_open(txn, NULL, 0, &dbi);
	mdb_txn_commit(txn);
	char key[32], val[400];
	memset(val, 'x', sizeof(val));
	struct timespec a, z;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		MDB_val k = {strlen(key), key}, v = {sizeof(val), val};
		if (mdb_txn_begin(env, NULL, 0, &txn) || mdb_put(txn, dbi, &k, &v, 0) ||
		    mdb_txn_commit(txn)) {
			fprintf(stderr, "lmdbbase: commit failed\n");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &z);
	double s = (double)(z.tv_sec - a.tv_sec) + (double)(z.tv_nsec - a.tv_nsec) / 1e9;
	printf("rate=%.1f\n", n / s);
	mdb_env_close(env);
	return 0;
}
