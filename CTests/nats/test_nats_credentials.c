/* SPDX-License-Identifier: MIT */
/*
 * test_nats_credentials.c -- the bridge against a server in operator mode, through
 * qtbus_nats_connect_with() and nats.c's own setters; every refusal as
 * nats_secure.h says.
 *   - A credentials file (_SetUserCredentialsFromFiles): the server in operator mode,
 *     an operator, an account and users made at run time (what the nsc tool makes,
 *     which Debian does not package: here python3 makes the NKeys with nkeys and signs
 *     the JWTs in chain with them), the account preloaded in a MEMORY resolver.  The
 *     user's file works; a user whose JWT has expired, and one signed by an account
 *     the operator does not know, are refused.
 */
#include "nats_secure.h"

/* A user JWT and its seed in a credentials file, against a server in operator mode. */
static void credentials_case(void)
{
    ns_server server = {.no_jetstream = 1};
    ns_prepare(&server);
    make_credentials(server.dir);
    char *config = read_file(server.dir, "operator.conf");
    server.config = config;
    ns_spawn(&server);
    char creds[160];
    snprintf(creds, sizeof creds, "%s/user.creds", server.dir);
    natsOptions *oa = options_for(server.url), *ob = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetUserCredentialsFromFiles(oa, creds, NULL), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetUserCredentialsFromFiles(ob, creds, NULL), NATS_OK);
    works("credentials file", oa, ob, "Secured.creds");
    const char *refusals[][2] = {{"expired", "credentials file, expired JWT"},
                                 {"stranger", "credentials file, unknown account"}};
    for (int i = 0; i < 2; i++) {
        snprintf(creds, sizeof creds, "%s/%s.creds", server.dir, refusals[i][0]);
        natsOptions *wrong = options_for(server.url);
        CHECK_EQ_INT(natsOptions_SetUserCredentialsFromFiles(wrong, creds, NULL), NATS_OK);
        denied(refusals[i][1], wrong);
        natsOptions_Destroy(wrong);
    }
    natsOptions_Destroy(oa);
    natsOptions_Destroy(ob);
    ns_stop(&server);
    free(config);
}

int main(void)
{
    secure_begin();
    credentials_case();
    secure_end("test_nats_credentials");
    return 0;
}
