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
#include "object.h"
#include "util.h"
#include "ynode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
		int r = store_get(s, t->key, &old, &gerr);
		if (r < 0 && r != -ENOENT) {
			*err = gerr;
			return r;
		}
		error_free(gerr);
		bool have_old = r == 0;

		/* Parse, validate, default. */
		struct object_build b = {.kind = t->kind,
					 .ns = t->ns,
					 .name = t->name,
					 .text = text,
					 .len = len,
					 .old_yaml = have_old ? old.yaml : NULL,
					 .old_len = old.len,
					 .old_decl_rv = old.decl_rv};
		r = object_build(&b, err);
		if (r < 0) {
			store_record_clear(&old);
			return r;
		}

		/* Admission: the hooks see the stored object as object_build
		 * parsed it. */
		struct admission_request rq = {.kind = t->kind,
					       .ns = t->ns,
					       .name = t->name,
					       .owner = owner,
					       .obj = b.obj,
					       .old = b.old};
		struct admission_ticket *ticket = NULL;
		r = admission_reserve(adm, &rq, &ticket, err);
		if (r < 0) {
			store_record_clear(&old);
			object_build_clear(&b);
			return r;
		}
		if (rq.changed && b.declared) {
			free(b.declared);
			b.declared = object_declared(t->kind, b.obj);
		}

		/* Store. */
		struct store_change c = {.key = t->key,
					 .obj = b.obj,
					 .expect_rv = have_old ? old.rv : 0,
					 .history_path = b.message ? hpath : NULL,
					 .history_yaml = b.declared,
					 .message = b.message,
					 .author = author,
					 .decl_changed = b.decl_changed};
		struct error *serr = NULL;
		r = store_apply(s, &c, &serr);
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
		out->yaml = c.yaml;
		out->len = c.yaml_len;
		out->rv = c.rv;
		return 0;
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
		if (admission_applies(adm, t->kind))
			yaml_parse_one(old.yaml, old.len, &old_obj, NULL);
		store_record_clear(&old);
		struct admission_request rq = {
		    .kind = t->kind, .ns = t->ns, .name = t->name, .owner = owner, .old = old_obj};
		struct admission_ticket *ticket = NULL;
		r = admission_reserve(adm, &rq, &ticket, err);
		if (r < 0)
			return r;
		struct store_change c = {.key = t->key,
					 .expect_rv = old_rv,
					 .history_path = hist ? hpath : NULL,
					 .message = msg,
					 .author = author};
		struct error *serr = NULL;
		r = store_apply(s, &c, &serr);
		if (r < 0)
			admission_unreserve(adm, &rq, ticket);
		else
			admission_settle(adm, &rq, ticket);
		if (r == -EAGAIN && attempt < WRITE__ATTEMPTS) {
			error_free(serr);
			continue;
		}
		if (r < 0)
			*err = serr;
		else
			error_free(serr);
		return r;
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
