/* token.h: service-account tokens, the JSON Web Tokens corral-noded puts
 * in a pod's projected serviceAccountToken volume source, signed with the
 * cluster's service-account key (RS256 for an RSA key, ES256 for an EC
 * P-256 key; libcrypto signs, nothing here is hand-made crypto). Their
 * claims are those of Kubernetes' bound tokens (corral-tree(5), TOKENS):
 *
 *   {"aud":["AUD"],"exp":EXP,"iat":IAT,"iss":"ISSUER",
 *    "kubernetes.io":{"namespace":"NS","pod":{"name":"P","uid":"U"},
 *                     "serviceaccount":{"name":"SA","uid":"SU"}},
 *    "nbf":IAT,"sub":"system:serviceaccount:NS:SA"}
 *
 * and the header {"alg":"RS256","kid":KID,"typ":"JWT"}, KID the unpadded
 * base64url of the SHA-256 of the public key's DER (as Kubernetes names
 * its keys). A token is refreshed once 80% of its lifetime has passed, as
 * the kubelet does. */
#ifndef CORRAL_NODED_TOKEN_H
#define CORRAL_NODED_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define TOKEN_DEFAULT_ISSUER "https://kubernetes.default.svc.cluster.local"

struct token_signer;

/* What one token says. */
struct token_claims {
	const char *issuer;   /* iss */
	const char *audience; /* aud's one item; NULL or "": the issuer */
	const char *ns;	      /* the pod's namespace */
	const char *pod_name, *pod_uid;
	const char *sa_name, *sa_uid; /* sa_uid may be NULL: "" */
	int64_t iat;		      /* issued at (nbf too), Unix seconds */
	int64_t exp;		      /* expires at */
};

/* Loads a PEM private key (PKCS#8 or traditional, RSA or EC P-256) from
 * path. The file is read once, here. */
struct token_signer *token_signer_load(const char *path, struct error **err);
/* The same from PEM text (len bytes). */
struct token_signer *token_signer_from_pem(const char *pem, size_t len, struct error **err);
void token_signer_free(struct token_signer *s);
void token_signer_freep(struct token_signer **s);
#define cleanup_token_signer __attribute__((cleanup(token_signer_freep)))
/* "RS256" or "ES256". */
const char *token_signer_alg(const struct token_signer *s);

/* The signed token (malloc'd, NUL-terminated), or NULL with *err. */
char *token_sign(const struct token_signer *s, const struct token_claims *c, struct error **err);
/* The claims JSON alone (malloc'd): what token_sign() signs. */
char *token_claims_json(const struct token_claims *c);

/* Checks jwt's signature against the public key in pem (len bytes) and the
 * header's alg against the key's type; on success *payload (if not NULL)
 * gets the decoded claims JSON. Expiry is not checked (token_times). */
int token_verify(const char *pem, size_t len, const char *jwt, char **payload, struct error **err);

/* The iat and exp of a token, unverified (the node reads back its own):
 * 0, or -1 when it is not one of ours. */
int token_times(const char *jwt, int64_t *iat, int64_t *exp);
/* When a token issued at iat that expires at exp is due to be replaced:
 * at 80% of its lifetime. */
int64_t token_refresh_at(int64_t iat, int64_t exp);
/* Whether the token in jwt (NULL: none) must be replaced at now. */
bool token_due(const char *jwt, int64_t now);

#endif
