/* leader.c: the controllers run while this process leads. */
#include "leader.h"
#include "ctrl.h"
#include "leaderelect.h"
#include "log.h"
#include "util.h"

#include <stdlib.h>

struct ctrl_leader {
	struct ctrl *c;
	struct leader *le; /* NULL without election */
	bool failed;
};

static void ctrl_leader__started(void *data)
{
	struct ctrl_leader *cl = data;
	cleanup_error struct error *err = NULL;
	if (ctrl_start(cl->c, &err) < 0) {
		log_error("cannot start the controllers: %s", err->msg);
		cl->failed = true;
		loop_stop(cl->c->loop);
	}
}

static void ctrl_leader__stopped(void *data)
{
	struct ctrl_leader *cl = data;
	ctrl_stop(cl->c);
}

struct ctrl_leader *ctrl_leader_new(struct ctrl *c, struct error **err)
{
	struct ctrl_leader *cl = xcalloc(1, sizeof(*cl));
	cl->c = c;
	if (!c->cfg->leader_elect)
		return cl;
	struct leader_config lc = {
	    .mount = c->mount,
	    .ns = c->cfg->lease_namespace,
	    .name = c->cfg->lease_name,
	    .identity = c->identity,
	    .lease_ms = c->cfg->lease_duration_ms,
	    .renew_ms = c->cfg->renew_deadline_ms,
	    .retry_ms = c->cfg->retry_period_ms,
	    .on_started = ctrl_leader__started,
	    .on_stopped = ctrl_leader__stopped,
	    .data = cl,
	};
	cl->le = leader_new(c->loop, &lc, err);
	if (!cl->le) {
		free(cl);
		return NULL;
	}
	return cl;
}

int ctrl_leader_start(struct ctrl_leader *cl, struct error **err)
{
	if (!cl->le) {
		int r = ctrl_start(cl->c, err);
		if (r < 0)
			cl->failed = true;
		return r;
	}
	return leader_start(cl->le, err);
}

bool ctrl_leader_failed(const struct ctrl_leader *cl)
{
	return cl->failed;
}

void ctrl_leader_free(struct ctrl_leader *cl)
{
	if (!cl)
		return;
	ctrl_stop(cl->c);
	leader_free(cl->le); /* releases the lease if held */
	free(cl);
}
