/* test_noded_token.c: service-account tokens (token.h): a token signed
 * with an RSA and with an EC P-256 key verifies with the public key and
 * with nothing else, its claims are Kubernetes' bound-token claims, a
 * changed byte breaks it, and the refresh decision falls at 80% of the
 * lifetime. Keys are made here, with libcrypto. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64url.h"
#include "token.h"
#include "util.h"

/* A key pair: the private key as PEM, the public key as PEM. */
struct keys {
	char *priv, *pub;
};

static char *bio_text(BIO *b)
{
	char *data = NULL;
	long n = BIO_get_mem_data(b, &data);
	return xmemdup0(data, (size_t)n);
}

static struct keys make_keys(bool ec)
{
	EVP_PKEY *k = ec ? EVP_EC_gen("P-256") : EVP_RSA_gen(2048);
	assert_non_null(k);
	BIO *a = BIO_new(BIO_s_mem()), *b = BIO_new(BIO_s_mem());
	assert_int_equal(PEM_write_bio_PrivateKey(a, k, NULL, NULL, 0, NULL, NULL), 1);
	assert_int_equal(PEM_write_bio_PUBKEY(b, k), 1);
	struct keys out = {bio_text(a), bio_text(b)};
	BIO_free(a);
	BIO_free(b);
	EVP_PKEY_free(k);
	return out;
}

static void keys_clear(struct keys *k)
{
	free(k->priv);
	free(k->pub);
}

static const struct token_claims claims = {
    .issuer = TOKEN_DEFAULT_ISSUER,
    .ns = "dev",
    .pod_name = "web",
    .pod_uid = "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
    .sa_name = "default",
    .sa_uid = "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
    .iat = 1700000000,
    .exp = 1700003607,
};

static void sign_and_verify(bool ec)
{
	struct keys k = make_keys(ec), other = make_keys(ec);
	cleanup_error struct error *err = NULL;
	cleanup_token_signer struct token_signer *s =
	    token_signer_from_pem(k.priv, strlen(k.priv), &err);
	assert_non_null(s);
	assert_string_equal(token_signer_alg(s), ec ? "ES256" : "RS256");
	cleanup_free char *jwt = token_sign(s, &claims, &err);
	assert_non_null(jwt);
	cleanup_free char *payload = NULL;
	assert_int_equal(token_verify(k.pub, strlen(k.pub), jwt, &payload, &err), 0);
	cleanup_free char *want = token_claims_json(&claims);
	assert_string_equal(payload, want);
	/* the header names the algorithm and the key */
	size_t hlen = 0;
	cleanup_free char *header = b64url_decode(jwt, (size_t)(strchr(jwt, '.') - jwt), &hlen);
	assert_non_null(header);
	assert_non_null(strstr(header, ec ? "\"alg\":\"ES256\"" : "\"alg\":\"RS256\""));
	assert_non_null(strstr(header, "\"kid\":\""));
	/* another key's public half refuses it */
	struct error *e2 = NULL;
	assert_true(token_verify(other.pub, strlen(other.pub), jwt, NULL, &e2) < 0);
	assert_non_null(strstr(e2->msg, "does not verify"));
	error_free(e2);
	/* so does a changed claim: the payload's first character */
	char *dot = strchr(jwt, '.');
	dot[1] = dot[1] == 'e' ? 'f' : 'e';
	e2 = NULL;
	assert_true(token_verify(k.pub, strlen(k.pub), jwt, NULL, &e2) < 0);
	error_free(e2);
	keys_clear(&k);
	keys_clear(&other);
}

static void test_token_sign__rs256_verifies_with_the_public_key(void **state)
{
	(void)state;
	sign_and_verify(false);
}

static void test_token_sign__es256_verifies_with_the_public_key(void **state)
{
	(void)state;
	sign_and_verify(true);
}

static void test_token_claims__as_kubernetes_bound_tokens(void **state)
{
	(void)state;
	cleanup_free char *j = token_claims_json(&claims);
	assert_string_equal(
	    j, "{\"aud\":[\"https://kubernetes.default.svc.cluster.local\"],\"exp\":1700003607,"
	       "\"iat\":1700000000,\"iss\":\"https://kubernetes.default.svc.cluster.local\","
	       "\"kubernetes.io\":{\"namespace\":\"dev\",\"pod\":{\"name\":\"web\",\"uid\":"
	       "\"1b4e28ba-2fa1-11d2-883f-0016d3cca427\"},\"serviceaccount\":{\"name\":\"default\","
	       "\"uid\":\"6ba7b810-9dad-11d1-80b4-00c04fd430c8\"}},\"nbf\":1700000000,"
	       "\"sub\":\"system:serviceaccount:dev:default\"}");
	struct token_claims c = claims;
	c.audience = "vault";
	c.sa_name = "a\"b";
	cleanup_free char *j2 = token_claims_json(&c);
	assert_non_null(strstr(j2, "\"aud\":[\"vault\"]"));
	assert_non_null(strstr(j2, "\"name\":\"a\\\"b\""));
}

static void test_token_signer__refuses_what_is_not_a_signing_key(void **state)
{
	(void)state;
	struct keys k = make_keys(false);
	struct error *err = NULL;
	/* a public key is not a private key */
	assert_null(token_signer_from_pem(k.pub, strlen(k.pub), &err));
	assert_non_null(err);
	error_free(err);
	err = NULL;
	EVP_PKEY *p384 = EVP_EC_gen("P-384");
	BIO *b = BIO_new(BIO_s_mem());
	PEM_write_bio_PrivateKey(b, p384, NULL, NULL, 0, NULL, NULL);
	cleanup_free char *pem = bio_text(b);
	BIO_free(b);
	EVP_PKEY_free(p384);
	assert_null(token_signer_from_pem(pem, strlen(pem), &err));
	assert_non_null(strstr(err->msg, "P-256"));
	error_free(err);
	err = NULL;
	assert_null(token_signer_load("/nonexistent/sa.key", &err));
	assert_int_equal(err->status, ENOENT);
	error_free(err);
	keys_clear(&k);
}

static void test_token_due__at_80_percent_of_the_lifetime(void **state)
{
	(void)state;
	struct keys k = make_keys(true);
	cleanup_error struct error *err = NULL;
	cleanup_token_signer struct token_signer *s =
	    token_signer_from_pem(k.priv, strlen(k.priv), &err);
	struct token_claims c = claims;
	c.iat = 1000;
	c.exp = 1000 + 3600;
	cleanup_free char *jwt = token_sign(s, &c, &err);
	int64_t iat = 0, exp = 0;
	assert_int_equal(token_times(jwt, &iat, &exp), 0);
	assert_int_equal(iat, 1000);
	assert_int_equal(exp, 4600);
	assert_int_equal(token_refresh_at(iat, exp), 1000 + 2880);
	assert_false(token_due(jwt, 1000));
	assert_false(token_due(jwt, 3879));
	assert_true(token_due(jwt, 3880));
	assert_true(token_due(jwt, 5000));
	/* a clock set back before the token was issued */
	assert_true(token_due(jwt, 999));
	/* no token, or not one of ours */
	assert_true(token_due(NULL, 1000));
	assert_true(token_due("not.a.token", 1000));
	assert_int_equal(token_times("abc", &iat, &exp), -1);
	keys_clear(&k);
}

static void test_b64url__round_trips_unpadded(void **state)
{
	(void)state;
	static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const out[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
	for (size_t i = 0; i < ARRAY_SIZE(in); i++) {
		cleanup_free char *e = b64url_encode(in[i], strlen(in[i]));
		assert_string_equal(e, out[i]);
		size_t n = 0;
		cleanup_free char *d = b64url_decode(e, strlen(e), &n);
		assert_non_null(d);
		assert_int_equal(n, strlen(in[i]));
		assert_memory_equal(d, in[i], n);
	}
	unsigned char bin[] = {0xfb, 0xff, 0xfe};
	cleanup_free char *e = b64url_encode(bin, sizeof(bin));
	assert_string_equal(e, "-__-");
	assert_null(b64url_decode("Zm9v=", 5, NULL));
	assert_null(b64url_decode("Zm+v", 4, NULL));
	assert_null(b64url_decode("Z", 1, NULL));
	assert_null(b64url_decode("Zh", 2, NULL)); /* bits left over */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_token_sign__rs256_verifies_with_the_public_key),
	    cmocka_unit_test(test_token_sign__es256_verifies_with_the_public_key),
	    cmocka_unit_test(test_token_claims__as_kubernetes_bound_tokens),
	    cmocka_unit_test(test_token_signer__refuses_what_is_not_a_signing_key),
	    cmocka_unit_test(test_token_due__at_80_percent_of_the_lifetime),
	    cmocka_unit_test(test_b64url__round_trips_unpadded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
