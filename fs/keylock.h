/* keylock.h: first-come-first-served locks on store keys, within one
 * process (store_lock_key()); the same for every store backend. */
#ifndef CORRAL_FS_KEYLOCK_H
#define CORRAL_FS_KEYLOCK_H

struct keylocks;

struct keylocks *keylocks_new(void);
void keylocks_free(struct keylocks *k);
void keylocks_lock(struct keylocks *k, const char *key);
void keylocks_unlock(struct keylocks *k, const char *key);

#endif
