/* restore.h: rebuilding a lost live store from the history (corral-fs
 * --restore). Only the declared objects are in the history; status and
 * controller-owned objects are made again by their owners. */
#ifndef CORRAL_FS_RESTORE_H
#define CORRAL_FS_RESTORE_H

#include "error.h"
#include "history.h"
#include "store.h"

/* Fills an empty store from the history's last commit; the revision goes
 * on from the history's. -EEXIST when the store is not empty. */
int restore_from_history(struct store *store, struct history *h, struct error **err);

#endif
