/* taint.h: the taint manager (row "taint-eviction-controller"), as
 * Kubernetes' tainteviction controller: a pod bound to a node with a
 * NoExecute taint it does not tolerate is deleted at once; one that
 * tolerates every such taint is deleted after the least tolerationSeconds
 * of the tolerations it uses for them (never, when none of those has
 * tolerationSeconds), counted from when the manager first saw it so; a
 * change of the taints or of the pod starts the count again from the
 * earlier time or cancels it. Whoever tainted the node (the node lifecycle
 * controller, or a person with sed) makes no difference.
 *
 * The pending deletions are a heap of deadlines under one timer: nothing
 * polls. Each deletion is recorded as an Event on the pod
 * (TaintManagerEviction, "Marking for deletion Pod NS/NAME"), and one
 * cancelled as "Cancelling deletion of Pod NS/NAME". */
#ifndef CORRAL_CTRL_TAINT_H
#define CORRAL_CTRL_TAINT_H

#include <stdbool.h>

#include "ynode.h"

struct ctrl;
struct taintmgr;

enum taint_verdict {
	TAINT_NONE,	   /* no NoExecute taint: nothing to do */
	TAINT_TOLERATED,   /* tolerated for ever */
	TAINT_EVICT_NOW,   /* some taint is not tolerated, or for 0 s */
	TAINT_EVICT_AFTER, /* tolerated for *seconds */
};

/* ToleratesTaint: the effect is the taint's or empty, the key the taint's
 * or empty (operator Exists), and Exists or the same value. */
bool taint_tolerates(const struct ynode *toleration, const struct ynode *taint);
/* What taints (a node's spec.taints, may be NULL) mean for a pod of these
 * tolerations (may be NULL); *seconds gets the time for
 * TAINT_EVICT_AFTER. Pure. */
enum taint_verdict taint_verdict(const struct ynode *taints, const struct ynode *tolerations,
				 long long *seconds);

struct taintmgr *taintmgr_new(struct ctrl *c);
void taintmgr_free(struct taintmgr *t);
/* Deletions waiting (for tests and the log). */
size_t taintmgr_pending(const struct taintmgr *t);

#endif
