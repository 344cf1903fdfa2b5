/* write.c: see write.h. The retry loop is the only place that pairs a
 * reservation with its settle or unreserve: every hook sees exactly one
 * of them for each reserve, whatever the store answers.
 *
 * Every write holds its key (store_lock_key) from its read to its commit:
 * writers of one object take turns, so a write without a resourceVersion
 * never fails for contention (it always wins, corral-tree(5)), and one
 * with a resourceVersion is checked against the revision stored when its
 * turn comes. The retry loop is left for writers that do not take the key
 * (none in corral-fs today). */
#include "write.h"
#include "binding.h"
#include "finalizers.h"
#include "object.h"
#include "util.h"
#include "ynode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WRITE__ATTEMPTS 32 /* rebuilds on a conflict before giving up */

static char *write__owner(const struct write_target *t)
{
	return xasprintf("%s/%s", t->ns ? t->ns : "", t->name);
}

static int write__object(struct store *s, struct admission *adm, const struct write_target *t,
			 const char *text, size_t len, const char *author, struct write_result *out,
			 struct error **err)
{
	cleanup_free char *hpath = xasprintf("%s.yaml", t->key);
	cleanup_free char *owner = write__owner(t);
	for (int attempt = 0;; attempt++) {
		struct store_record old = {0};
		struct error *gerr = NULL;
		/* A new file's first attempt saves a round trip to a remote
		 * store: a write is then one transaction. It only guesses that
		 * no object is stored (one renamed to a backup name is, and a
		 * text may name its resourceVersion): whatever it refuses is
		 * built again on what the store holds, and the store refuses
		 * to create over an object. */
		bool guessed = attempt == 0 && t->expect_absent && !t->create_only;
		int r = guessed ? -ENOENT : store_get(s, t->key, &old, &gerr);
		if (r < 0 && r != -ENOENT) {
			*err = gerr;
			return r;
		}
		error_free(gerr);
		bool have_old = r == 0;
		if (have_old && t->create_only) {
			store_record_clear(&old);
			return error_set(err, EEXIST, "%s: already exists", t->key);
		}

		/* A Binding written to a pod is the pod it binds (binding.h). */
		struct ynode *bound = NULL, *bound_old = NULL;
		r = binding_apply(t, text, len, have_old ? old.yaml : NULL, old.len, &bound,
				  &bound_old, err);
		if (r < 0) {
			store_record_clear(&old);
			if (guessed)
				goto again;
			return r;
		}

		/* Parse, validate, default. */
		struct object_build b = {.kind = t->kind,
					 .ns = t->ns,
					 .name = t->name,
					 .text = text,
					 .len = len,
					 .text_tree = bound,
					 .old_tree = bound_old,
					 .old_yaml = have_old ? old.yaml : NULL,
					 .old_len = old.len,
					 .old_decl_rv = old.decl_rv};
		r = object_build(&b, err);
		if (r < 0) {
			object_build_clear(&b); /* the trees it did not take */
			store_record_clear(&old);
			if (guessed)
				goto again;
			return r;
		}

		/* Admission: the hooks see the stored object as object_build
		 * parsed it; the write that removed an object's last finalizer
		 * as its deletion. */
		struct admission_request rq = {.kind = t->kind,
					       .ns = t->ns,
					       .name = t->name,
					       .owner = owner,
					       .obj = b.gone ? NULL : b.obj,
					       .old = b.old};
		struct admission_ticket *ticket = NULL;
		r = admission_reserve(adm, &rq, &ticket, err);
		if (r < 0) {
			store_record_clear(&old);
			object_build_clear(&b);
			if (guessed)
				goto again;
			return r;
		}
		if (rq.changed && b.declared && !b.gone) {
			free(b.declared);
			b.declared = object_declared(t->kind, b.obj);
		}
		if (b.gone) {
			/* One deletion commit, as a deletion's. */
			free(b.declared);
			free(b.message);
			b.declared = NULL;
			b.message = object_in_history(t->kind, old.yaml, old.len)
					? object_delete_message(t->kind, t->ns, t->name)
					: NULL;
		}

		/* Store. */
		struct store_change c = {.key = t->key,
					 .obj = b.gone ? NULL : b.obj,
					 .expect_rv = have_old ? old.rv : 0,
					 .history_path = b.message ? hpath : NULL,
					 .history_yaml = b.declared,
					 .message = b.message,
					 .author = author,
					 .decl_changed = b.decl_changed,
					 .claims = rq.claims,
					 .nclaims = rq.nclaims};
		struct error *serr = NULL;
		r = store_apply(s, &c, &serr);
		admission_claims_clear(&rq);
		store_record_clear(&old);
		if (r < 0)
			admission_unreserve(adm, &rq, ticket);
		else
			admission_settle(adm, &rq, ticket);
		object_build_clear(&b);
		if (r == -EAGAIN && attempt < WRITE__ATTEMPTS) {
			/* Another write got in between our read and commit:
			 * build again on what it stored. */
			error_free(serr);
			free(c.yaml);
			continue;
		}
		if (r < 0) {
			*err = serr;
			free(c.yaml);
			return r;
		}
		error_free(serr);
		if (b.gone) {
			free(c.yaml);
			memset(out, 0, sizeof(*out));
			return WRITE_GONE;
		}
		out->yaml = c.yaml;
		out->len = c.yaml_len;
		out->rv = c.rv;
		return 0;
	again:
		/* Refused on a guess (above): again, on what is stored. */
		error_free(*err);
		*err = NULL;
	}
}

static int write__delete(struct store *s, struct admission *adm, const struct write_target *t,
			 const char *author, struct error **err)
{
	cleanup_free char *hpath = xasprintf("%s.yaml", t->key);
	cleanup_free char *owner = write__owner(t);
	cleanup_free char *msg = object_delete_message(t->kind, t->ns, t->name);
	for (int attempt = 0;; attempt++) {
		struct store_record old = {0};
		int r = store_get(s, t->key, &old, err);
		if (r < 0)
			return r;
		bool hist = object_in_history(t->kind, old.yaml, old.len);
		uint64_t old_rv = old.rv;
		cleanup_ynode struct ynode *old_obj = NULL;
		yaml_parse_one(old.yaml, old.len, &old_obj, NULL);
		store_record_clear(&old);
		enum finalizers_verdict v = FINALIZERS_DELETE;
		if (old_obj)
			finalizers_decide(t->kind, old_obj, NULL, &v, NULL);
		if (v == FINALIZERS_KEEP)
			return WRITE_KEPT; /* being deleted already: nothing changes */
		/* An object with finalizers is marked, not removed: an update,
		 * to the hooks as to the store, outside the history (nothing
		 * declared changes). */
		cleanup_ynode struct ynode *marked = NULL;
		if (v == FINALIZERS_MARK) {
			marked = ynode_clone(old_obj);
			finalizers_mark(t->kind, marked, time(NULL));
		}
		struct admission_request rq = {.kind = t->kind,
					       .ns = t->ns,
					       .name = t->name,
					       .owner = owner,
					       .obj = marked,
					       .old = old_obj};
		struct admission_ticket *ticket = NULL;
		r = admission_reserve(adm, &rq, &ticket, err);
		if (r < 0)
			return r;
		struct store_change c = {.key = t->key,
					 .obj = marked,
					 .expect_rv = old_rv,
					 .history_path = hist && !marked ? hpath : NULL,
					 .message = marked ? NULL : msg,
					 .author = author,
					 .claims = rq.claims,
					 .nclaims = rq.nclaims};
		struct error *serr = NULL;
		r = store_apply(s, &c, &serr);
		admission_claims_clear(&rq);
		if (r < 0)
			admission_unreserve(adm, &rq, ticket);
		else
			admission_settle(adm, &rq, ticket);
		free(c.yaml);
		if (r == -EAGAIN && attempt < WRITE__ATTEMPTS) {
			error_free(serr);
			continue;
		}
		if (r < 0)
			*err = serr;
		else
			error_free(serr);
		return r < 0 ? r : marked ? WRITE_KEPT : 0;
	}
}

int write_object(struct store *s, struct admission *adm, const struct write_target *t,
		 const char *text, size_t len, const char *author, struct write_result *out,
		 struct error **err)
{
	store_lock_key(s, t->key);
	int r = write__object(s, adm, t, text, len, author, out, err);
	store_unlock_key(s, t->key);
	return r;
}

int write_delete(struct store *s, struct admission *adm, const struct write_target *t,
		 const char *author, struct error **err)
{
	store_lock_key(s, t->key);
	int r = write__delete(s, adm, t, author, err);
	store_unlock_key(s, t->key);
	return r;
}

void write_result_clear(struct write_result *r)
{
	free(r->yaml);
	memset(r, 0, sizeof(*r));
}
