/* SPDX-License-Identifier: MIT */
/*
 * test_nats_tls.c -- the bridge against servers with TLS, through qtbus_nats_connect_with()
 * and nats.c's own setters; every refusal as nats_secure.h says.
 *   - TLS: a CA, a server certificate (127.0.0.1 and localhost) and client
 *     certificates made at run time with openssl, in the server's directory.  A bridge
 *     that trusts the CA (natsOptions_SetSecure + _LoadCATrustedCertificates, one with
 *     _SetExpectedHostname "localhost") connects and an event crosses to another; one
 *     that trusts another CA, expects another host name, or gives no CA (the system's
 *     are not the test's) is refused.  Mutual TLS: with the client certificate
 *     (_LoadCertificatesChain) it works; without one, or with one of another CA, it
 *     is refused.
 */
#include "nats_secure.h"

static void tls_cases(void)
{
    ns_server server = {.no_jetstream = 1}, mutual = {.no_jetstream = 1};
    ns_prepare(&server);
    make_certificates(server.dir);
    char config[1024], ca[128], other_ca[128], client[128], client_key[128], other_client[128], other_client_key[128];
    snprintf(ca, sizeof ca, "%s/ca.pem", server.dir);
    snprintf(other_ca, sizeof other_ca, "%s/other-ca.pem", server.dir);
    snprintf(client, sizeof client, "%s/client.pem", server.dir);
    snprintf(client_key, sizeof client_key, "%s/client-key.pem", server.dir);
    snprintf(other_client, sizeof other_client, "%s/other-client.pem", server.dir);
    snprintf(other_client_key, sizeof other_client_key, "%s/other-client-key.pem", server.dir);
    snprintf(config, sizeof config,
             "tls {\n  cert_file: \"%s/server.pem\"\n  key_file: \"%s/server-key.pem\"\n  timeout: 10\n}\n", server.dir,
             server.dir);
    server.config = config;
    ns_spawn(&server);

    /* Trusting the CA; one of the two checks the name the certificate gives. */
    natsOptions *oa = options_for(server.url), *ob = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetSecure(oa, true), NATS_OK);
    CHECK_EQ_INT(natsOptions_LoadCATrustedCertificates(oa, ca), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetExpectedHostname(oa, "localhost"), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetSecure(ob, true), NATS_OK);
    CHECK_EQ_INT(natsOptions_LoadCATrustedCertificates(ob, ca), NATS_OK);
    works("TLS", oa, ob, "Secured.tls");
    /* The caller's options stay the caller's: the same ones connect again. */
    works("TLS, the same options again", oa, ob, "Secured.tls");

    natsOptions *wrong = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetSecure(wrong, true), NATS_OK);
    CHECK_EQ_INT(natsOptions_LoadCATrustedCertificates(wrong, other_ca), NATS_OK);
    refused("TLS, another CA trusted", wrong, "unable to get local issuer certificate");
    natsOptions_Destroy(wrong);
    wrong = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetSecure(wrong, true), NATS_OK);
    CHECK_EQ_INT(natsOptions_LoadCATrustedCertificates(wrong, ca), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetExpectedHostname(wrong, "nats.example.invalid"), NATS_OK);
    refused("TLS, another host name expected", wrong, "hostname mismatch");
    natsOptions_Destroy(wrong);
    /* No TLS asked for: nats.c upgrades when the server requires it, and then trusts
     * only the system's CAs, which do not include the test's. */
    wrong = options_for(server.url);
    refused("TLS, no CA given", wrong, "unable to get local issuer certificate");
    natsOptions_Destroy(wrong);

    /* Mutual TLS: the server asks for a client certificate signed by the CA. */
    ns_prepare(&mutual);
    char mutual_config[1024];
    snprintf(mutual_config, sizeof mutual_config,
             "tls {\n  cert_file: \"%s/server.pem\"\n  key_file: \"%s/server-key.pem\"\n  ca_file: \"%s\"\n"
             "  verify: true\n  timeout: 10\n}\n",
             server.dir, server.dir, ca);
    mutual.config = mutual_config;
    ns_spawn(&mutual);
    natsOptions *ma = options_for(mutual.url), *mb = options_for(mutual.url);
    natsOptions *both[] = {ma, mb};
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(natsOptions_SetSecure(both[i], true), NATS_OK);
        CHECK_EQ_INT(natsOptions_LoadCATrustedCertificates(both[i], ca), NATS_OK);
        CHECK_EQ_INT(natsOptions_LoadCertificatesChain(both[i], client, client_key), NATS_OK);
    }
    works("mutual TLS", ma, mb, "Secured.mtls");
    /* With TLS 1.3 the server checks the client's certificate after the client has
     * finished its handshake: nats.c then reads the server's alert, or its closing. */
    /* (The server's log has one handshake error already: ns_spawn's probe of its port.) */
    char says[400];
    int errors = ns_log_count(&mutual, "TLS handshake error");
    wrong = options_for(mutual.url);
    CHECK_EQ_INT(natsOptions_SetSecure(wrong, true), NATS_OK);
    CHECK_EQ_INT(natsOptions_LoadCATrustedCertificates(wrong, ca), NATS_OK);
    refused("mutual TLS, no client certificate", wrong, "Expected 'PONG', got ''|SSL_write error|certificate required");
    natsOptions_Destroy(wrong);
    CHECK_WAIT(ns_log_count(&mutual, "TLS handshake error") == errors + 1, TU_WAIT_MS);
    server_says(&mutual, "TLS handshake error", says, sizeof says);
    printf("%-34s %s\n", "  the server's log:", says);
    wrong = options_for(mutual.url);
    CHECK_EQ_INT(natsOptions_SetSecure(wrong, true), NATS_OK);
    CHECK_EQ_INT(natsOptions_LoadCATrustedCertificates(wrong, ca), NATS_OK);
    CHECK_EQ_INT(natsOptions_LoadCertificatesChain(wrong, other_client, other_client_key), NATS_OK);
    refused("mutual TLS, another CA's client", wrong,
            "Expected 'PONG', got ''|SSL_write error|unknown ca|bad certificate");
    natsOptions_Destroy(wrong);
    CHECK_WAIT(ns_log_count(&mutual, "TLS handshake error") == errors + 2, TU_WAIT_MS);
    server_says(&mutual, "TLS handshake error", says, sizeof says);
    printf("%-34s %s\n", "  the server's log:", says);

    natsOptions_Destroy(ma);
    natsOptions_Destroy(mb);
    natsOptions_Destroy(oa);
    natsOptions_Destroy(ob);
    ns_stop(&mutual);
    ns_stop(&server);
}

int main(void)
{
    secure_begin();
    tls_cases();
    secure_end("test_nats_tls");
    return 0;
}
