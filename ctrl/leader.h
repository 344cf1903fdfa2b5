/* leader.h: corral-ctrl's leadership. With leader election on (the
 * default, as kube-controller-manager's --leader-elect), the controllers
 * run only while this process holds the Lease
 * namespaces/<lease-namespace>/leases/<lease-name>.yaml (lib's
 * leaderelect.h): they start when it takes the lease and stop, letting
 * their writes in flight finish, when it loses it. Without, they run at
 * once. A clean stop hands the lease over. */
#ifndef CORRAL_CTRL_LEADER_H
#define CORRAL_CTRL_LEADER_H

#include <stdbool.h>

#include "error.h"

struct ctrl;
struct ctrl_leader;

struct ctrl_leader *ctrl_leader_new(struct ctrl *c, struct error **err);
/* Starts leading or following (or, without election, the controllers). */
int ctrl_leader_start(struct ctrl_leader *cl, struct error **err);
/* Whether the controllers could not start (the daemon should exit). */
bool ctrl_leader_failed(const struct ctrl_leader *cl);
/* Stops the controllers, hands the lease over and frees. */
void ctrl_leader_free(struct ctrl_leader *cl);

#endif
