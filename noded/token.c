/* token.c: service-account tokens (token.h), signed and checked with
 * libcrypto's EVP interface. ES256 signatures are the raw r || s pair of
 * 32 bytes each that JWS wants (RFC 7518 §3.4), converted from and to the
 * DER that libcrypto speaks. The private key never leaves this file's
 * struct; nothing here logs a key or a token. */
#include "token.h"
#include "b64url.h"
#include "util.h"

#include <errno.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct token_signer {
	EVP_PKEY *key;
	bool ec;   /* ES256; else RS256 */
	char *kid; /* the key's id */
};

/* s as a JSON string, quoted, onto f. */
static void token__json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* libcrypto's last error, for a message. */
static int token__ssl_error(struct error **err, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256] = "unknown error";
	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return error_set(err, EINVAL, "%s: %s", what, buf);
}

/* The key's id: base64url(SHA-256(DER of the public key)). */
static char *token__kid(EVP_PKEY *key)
{
	unsigned char *der = NULL;
	int n = i2d_PUBKEY(key, &der);
	if (n <= 0)
		return xstrdup("");
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256(der, (size_t)n, md);
	OPENSSL_free(der);
	return b64url_encode(md, sizeof(md));
}

/* Whether key is one we sign with: RSA, or EC on P-256. */
static int token__key_kind(EVP_PKEY *key, bool *ec, struct error **err)
{
	int id = EVP_PKEY_get_base_id(key);
	if (id == EVP_PKEY_RSA) {
		*ec = false;
		return 0;
	}
	if (id == EVP_PKEY_EC) {
		char group[64] = "";
		size_t glen = 0;
		if (EVP_PKEY_get_group_name(key, group, sizeof(group), &glen) != 1 ||
		    (strcmp(group, "prime256v1") && strcmp(group, "P-256")))
			return error_set(err, EINVAL, "an EC key must be on P-256 (ES256), not %s",
					 *group ? group : "an unknown curve");
		*ec = true;
		return 0;
	}
	return error_set(err, EINVAL, "the key is neither RSA nor EC P-256");
}

struct token_signer *token_signer_from_pem(const char *pem, size_t len, struct error **err)
{
	BIO *bio = BIO_new_mem_buf(pem, (int)len);
	if (!bio) {
		token__ssl_error(err, "cannot read the key");
		return NULL;
	}
	EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	BIO_free(bio);
	if (!key) {
		token__ssl_error(err, "not a PEM private key");
		return NULL;
	}
	bool ec = false;
	if (token__key_kind(key, &ec, err) < 0) {
		EVP_PKEY_free(key);
		return NULL;
	}
	struct token_signer *s = xcalloc(1, sizeof(*s));
	s->key = key;
	s->ec = ec;
	s->kid = token__kid(key);
	return s;
}

struct token_signer *token_signer_load(const char *path, struct error **err)
{
	size_t len = 0;
	cleanup_free char *pem = util_read_file(path, &len);
	if (!pem) {
		error_set(err, errno, "%s: %s", path, strerror(errno));
		return NULL;
	}
	struct token_signer *s = token_signer_from_pem(pem, len, err);
	explicit_bzero(pem, len);
	if (!s)
		error_prefix(err, "%s", path);
	return s;
}

void token_signer_free(struct token_signer *s)
{
	if (!s)
		return;
	EVP_PKEY_free(s->key);
	free(s->kid);
	free(s);
}

void token_signer_freep(struct token_signer **s)
{
	token_signer_free(*s);
}

const char *token_signer_alg(const struct token_signer *s)
{
	return s->ec ? "ES256" : "RS256";
}

char *token_claims_json(const struct token_claims *c)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		abort(); /* out of memory: as xmalloc */
	const char *aud = c->audience && *c->audience ? c->audience : c->issuer;
	fputs("{\"aud\":[", f);
	token__json_str(f, aud);
	fprintf(f, "],\"exp\":%lld,\"iat\":%lld,\"iss\":", (long long)c->exp, (long long)c->iat);
	token__json_str(f, c->issuer);
	fputs(",\"kubernetes.io\":{\"namespace\":", f);
	token__json_str(f, c->ns);
	fputs(",\"pod\":{\"name\":", f);
	token__json_str(f, c->pod_name);
	fputs(",\"uid\":", f);
	token__json_str(f, c->pod_uid);
	fputs("},\"serviceaccount\":{\"name\":", f);
	token__json_str(f, c->sa_name);
	fputs(",\"uid\":", f);
	token__json_str(f, c->sa_uid);
	fprintf(f, "}},\"nbf\":%lld,\"sub\":", (long long)c->iat);
	cleanup_free char *sub = xasprintf("system:serviceaccount:%s:%s", c->ns ? c->ns : "",
					   c->sa_name ? c->sa_name : "");
	token__json_str(f, sub);
	fputc('}', f);
	if (fclose(f) != 0)
		abort();
	return out;
}

/* DER ECDSA-Sig-Value to JWS's r || s (64 bytes at out). */
static int token__der_to_raw(const unsigned char *der, size_t n, unsigned char *out)
{
	const unsigned char *p = der;
	ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, (long)n);
	if (!sig)
		return -1;
	const BIGNUM *r = NULL, *s = NULL;
	ECDSA_SIG_get0(sig, &r, &s);
	int ok = BN_bn2binpad(r, out, 32) == 32 && BN_bn2binpad(s, out + 32, 32) == 32;
	ECDSA_SIG_free(sig);
	return ok ? 0 : -1;
}

/* JWS's r || s to DER (malloc'd by libcrypto: OPENSSL_free). */
static int token__raw_to_der(const unsigned char *raw, unsigned char **der)
{
	ECDSA_SIG *sig = ECDSA_SIG_new();
	BIGNUM *r = BN_bin2bn(raw, 32, NULL), *s = BN_bin2bn(raw + 32, 32, NULL);
	if (!sig || !r || !s || ECDSA_SIG_set0(sig, r, s) != 1) {
		BN_free(r);
		BN_free(s);
		ECDSA_SIG_free(sig);
		return -1;
	}
	int n = i2d_ECDSA_SIG(sig, der);
	ECDSA_SIG_free(sig);
	return n;
}

char *token_sign(const struct token_signer *s, const struct token_claims *c, struct error **err)
{
	cleanup_free char *header = xasprintf("{\"alg\":\"%s\",\"kid\":\"%s\",\"typ\":\"JWT\"}",
					      token_signer_alg(s), s->kid);
	cleanup_free char *claims = token_claims_json(c);
	cleanup_free char *h64 = b64url_encode(header, strlen(header));
	cleanup_free char *c64 = b64url_encode(claims, strlen(claims));
	cleanup_free char *input = xasprintf("%s.%s", h64, c64);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	size_t n = 0;
	unsigned char *sig = NULL;
	if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, s->key) != 1 ||
	    EVP_DigestSign(md, NULL, &n, (const unsigned char *)input, strlen(input)) != 1) {
		EVP_MD_CTX_free(md);
		token__ssl_error(err, "cannot sign the token");
		return NULL;
	}
	sig = xmalloc(n);
	if (EVP_DigestSign(md, sig, &n, (const unsigned char *)input, strlen(input)) != 1) {
		EVP_MD_CTX_free(md);
		free(sig);
		token__ssl_error(err, "cannot sign the token");
		return NULL;
	}
	EVP_MD_CTX_free(md);
	unsigned char raw[64];
	if (s->ec && token__der_to_raw(sig, n, raw) < 0) {
		free(sig);
		error_set(err, EINVAL, "cannot sign the token: a malformed ECDSA signature");
		return NULL;
	}
	cleanup_free char *s64 = s->ec ? b64url_encode(raw, sizeof(raw)) : b64url_encode(sig, n);
	free(sig);
	return xasprintf("%s.%s", input, s64);
}

int token_verify(const char *pem, size_t len, const char *jwt, char **payload, struct error **err)
{
	const char *dot1 = strchr(jwt, '.');
	const char *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
	if (!dot2 || strchr(dot2 + 1, '.'))
		return error_set(err, EINVAL, "not a JWS compact serialization (three parts)");
	size_t hlen = 0, slen = 0, plen = 0;
	cleanup_free char *header = b64url_decode(jwt, (size_t)(dot1 - jwt), &hlen);
	cleanup_free char *claims = b64url_decode(dot1 + 1, (size_t)(dot2 - dot1 - 1), &plen);
	cleanup_free char *sig = b64url_decode(dot2 + 1, strlen(dot2 + 1), &slen);
	if (!header || !claims || !sig)
		return error_set(err, EINVAL, "a part is not base64url");
	BIO *bio = BIO_new_mem_buf(pem, (int)len);
	EVP_PKEY *key = bio ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;
	BIO_free(bio);
	if (!key)
		return token__ssl_error(err, "not a PEM public key");
	bool ec = false;
	int r = token__key_kind(key, &ec, err);
	if (r == 0 && !strstr(header, ec ? "\"alg\":\"ES256\"" : "\"alg\":\"RS256\""))
		r = error_set(err, EINVAL, "the header's alg is not %s: %s", ec ? "ES256" : "RS256",
			      header);
	unsigned char *der = NULL;
	int dlen = 0;
	if (r == 0 && ec) {
		dlen = slen == 64 ? token__raw_to_der((const unsigned char *)sig, &der) : -1;
		if (dlen < 0)
			r = error_set(err, EINVAL, "an ES256 signature is 64 bytes, not %zu", slen);
	}
	if (r == 0) {
		EVP_MD_CTX *md = EVP_MD_CTX_new();
		int ok = md && EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
			 EVP_DigestVerify(md, ec ? der : (const unsigned char *)sig,
					  ec ? (size_t)dlen : slen, (const unsigned char *)jwt,
					  (size_t)(dot2 - jwt)) == 1;
		EVP_MD_CTX_free(md);
		ERR_clear_error();
		if (!ok)
			r = error_set(err, EINVAL, "the signature does not verify");
	}
	OPENSSL_free(der);
	EVP_PKEY_free(key);
	if (r == 0 && payload)
		*payload = steal_pointer(&claims);
	return r;
}

/* The integer after "key": in the JSON text s (our own claims: flat
 * numbers at the top level, each key once). */
static int token__json_int(const char *s, const char *key, int64_t *out)
{
	cleanup_free char *pat = xasprintf("\"%s\":", key);
	const char *p = strstr(s, pat);
	if (!p)
		return -1;
	char *end = NULL;
	errno = 0;
	long long v = strtoll(p + strlen(pat), &end, 10);
	if (errno || end == p + strlen(pat))
		return -1;
	*out = v;
	return 0;
}

int token_times(const char *jwt, int64_t *iat, int64_t *exp)
{
	const char *dot1 = jwt ? strchr(jwt, '.') : NULL;
	const char *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
	if (!dot2)
		return -1;
	cleanup_free char *claims = b64url_decode(dot1 + 1, (size_t)(dot2 - dot1 - 1), NULL);
	if (!claims || token__json_int(claims, "iat", iat) < 0 ||
	    token__json_int(claims, "exp", exp) < 0 || *exp <= *iat)
		return -1;
	return 0;
}

int64_t token_refresh_at(int64_t iat, int64_t exp)
{
	return iat + (exp - iat) * 8 / 10;
}

bool token_due(const char *jwt, int64_t now)
{
	int64_t iat, exp;
	if (token_times(jwt, &iat, &exp) < 0)
		return true;
	/* a clock set back before iat: issue again rather than trust it */
	return now >= token_refresh_at(iat, exp) || now < iat;
}
