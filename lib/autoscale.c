/* autoscale.c: the v2 metrics of a CPU utilization target (autoscale.h). */
#include "autoscale.h"

struct ynode *autoscale_cpu_metrics(long long percent)
{
	struct ynode *target = ynode_new_map();
	ynode_set(target, "type", ynode_new_str("Utilization"));
	ynode_set(target, "averageUtilization", ynode_new_int(percent));
	struct ynode *res = ynode_new_map();
	ynode_set(res, "name", ynode_new_str("cpu"));
	ynode_set(res, "target", target);
	struct ynode *metric = ynode_new_map();
	ynode_set(metric, "type", ynode_new_str("Resource"));
	ynode_set(metric, "resource", res);
	struct ynode *seq = ynode_new_seq();
	ynode_append(seq, metric);
	return seq;
}
