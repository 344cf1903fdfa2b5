/* endpoints.h: the Endpoints controller (Kubernetes' endpoints
 * controller).
 *
 * For every Service with a selector it keeps namespaces/NS/endpoints/
 * <service>.yaml: the pods of the service's namespace that the selector
 * matches, that have a podIP, are not being deleted and have not ended,
 * ready ones (condition Ready True) in subsets[].addresses and the others
 * in notReadyAddresses (all in addresses when publishNotReadyAddresses),
 * each with ip, nodeName, targetRef and, when the pod's spec.subdomain is
 * the service's name, its spec.hostname; per service port {name, port,
 * protocol} where port is the targetPort, a number or the pod's container
 * port of that name (a pod without it is left out of that port). Addresses
 * with the same ports share a subset, as Kubernetes' RepackSubsets makes
 * them; everything is sorted, so that the same pods give the same file and
 * nothing is written when nothing changed.
 *
 * Services without a selector are left alone (their endpoints are someone
 * else's); when a service goes, its endpoints go too. */
#ifndef CORRAL_CTRL_ENDPOINTS_H
#define CORRAL_CTRL_ENDPOINTS_H

#include <stdbool.h>
#include <stddef.h>

#include "ynode.h"

struct ctrl;
struct endpointsc;

/* Kubernetes' label on the endpoints of a headless service. */
#define ENDPOINTS_HEADLESS_LABEL "service.kubernetes.io/headless"

/* The port that the service port svc_port reaches on pod: its targetPort
 * as a number, or the containerPort named so (with the same protocol),
 * or port when targetPort is absent. 0, or -1 when the pod has none. */
int endpoints_target_port(const struct ynode *svc_port, const struct ynode *pod, long long *out);
/* Whether pod belongs in a service's endpoints at all (podIP, not being
 * deleted unless tolerate_unready, not ended). */
bool endpoints_pod_eligible(const struct ynode *pod, bool tolerate_unready);
/* The Endpoints object for svc with these pods (those its selector
 * matches, in its namespace). */
struct ynode *endpoints_build(const struct ynode *svc, const struct ynode *const *pods, size_t n);

struct endpointsc *endpointsc_new(struct ctrl *c);
void endpointsc_free(struct endpointsc *e);

#endif
