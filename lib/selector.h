/* selector.h: Kubernetes label selectors, read from the three spellings a
 * manifest or a person uses, and matched against an object's labels.
 *
 * What matches what (as in Kubernetes):
 *   - a LabelSelector that is present but empty ({}) matches everything;
 *   - an absent or null LabelSelector (NULL node, `selector: null`) matches
 *     nothing;
 *   - an equality map (ReplicationController and Service `selector`) that is
 *     absent, null or empty matches nothing: a Service without a selector
 *     gets no endpoints, and an RC must never adopt every pod in sight;
 *   - the string form "" (kubectl -l '') matches everything.
 * A NULL struct selector pointer matches nothing as well.
 *
 * Keys are checked as qualified names and values as label values
 * (names.h); errors name the field, e.g.
 *   matchExpressions[1].operator: Unsupported value: "Foo": supported
 *   values: "DoesNotExist", "Exists", "In", "NotIn"
 * so that a caller only adds the path in front ("spec.selector"). */
#ifndef CORRAL_SELECTOR_H
#define CORRAL_SELECTOR_H

#include <stdbool.h>

#include "error.h"

struct ynode;
struct selector;

/* A metav1.LabelSelector: {matchLabels: {k: v}, matchExpressions: [{key,
 * operator: In|NotIn|Exists|DoesNotExist, values: [...]}]}. Unknown fields
 * are refused (as kubectl's strict validation does). */
int selector_parse_labelselector(const struct ynode *node, struct selector **out,
				 struct error **err);
/* An equality map {k: v, ...}: every key present with that value. */
int selector_parse_map(const struct ynode *map, struct selector **out, struct error **err);
/* kubectl's -l syntax: "a=b,c!=d,e in (x,y),f notin (z),g,!h" ("==" is
 * "="; whitespace between tokens is allowed). */
int selector_parse_string(const char *s, struct selector **out, struct error **err);

/* labels is the object's metadata.labels mapping, or NULL for none. "k!=v"
 * and "k notin (...)" match when k is absent, as in Kubernetes. */
bool selector_matches(const struct selector *sel, const struct ynode *labels);
/* True when sel has no requirements and so matches every object. */
bool selector_is_empty(const struct selector *sel);
/* True when sel matches no object at all (absent selector, or NULL). */
bool selector_is_nothing(const struct selector *sel);

/* The string form, requirements sorted by key and values sorted, as
 * Kubernetes prints it (and selector_parse_string() reads it back): ""
 * for an empty selector; "<none>", which does not parse, for nothing.
 * Returns a malloc'd string. */
char *selector_format(const struct selector *sel);

void selector_free(struct selector *sel);
void selector_freep(struct selector **sel);
#define cleanup_selector __attribute__((cleanup(selector_freep)))

#endif
