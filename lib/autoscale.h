/* autoscale.h: what corral-fs (defaulting a v2 HorizontalPodAutoscaler)
 * and corral-ctrl (converting a v1 one) both build: the v2 metrics list of
 * a CPU utilization target. */
#ifndef CORRAL_AUTOSCALE_H
#define CORRAL_AUTOSCALE_H

#include "ynode.h"

/* [{type: Resource, resource: {name: cpu, target: {type: Utilization,
 * averageUtilization: percent}}}], a new sequence. */
struct ynode *autoscale_cpu_metrics(long long percent);

#endif
