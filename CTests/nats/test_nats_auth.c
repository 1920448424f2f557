/* SPDX-License-Identifier: MIT */
/*
 * test_nats_auth.c -- the bridge against servers that ask for a user, a token or an NKey,
 * through qtbus_nats_connect_with() and nats.c's own setters, and
 * qtbus_nats_connect() with credentials in the url; every refusal as nats_secure.h says.
 *   - A user and password (_SetUserInfo), a token (_SetToken), an NKey (_SetNKeyFromSeed,
 *     the key pair made at run time with PyPI's nkeys): each works; a wrong password, no
 *     user, a wrong token, an NKey the server does not know, and a known NKey signed
 *     with another seed are refused.
 *   - The same with qtbus_nats_connect() and credentials in the url: a wrong password or
 *     token is QTBUS_EACCES naming the server (the secret as ***), a list "a server at"
 *     it; a port nobody listens on is still QTBUS_EIO, "no server at ... could be reached".
 */
#include "nats_secure.h"

static void auth_cases(void)
{
    /* A user and a password. */
    ns_server server = {.no_jetstream = 1,
                        .config = "authorization {\n  users = [ { user: orders, password: \"s3cret-pw\" } ]\n}\n"};
    ns_start(&server);
    natsOptions *oa = options_for(server.url), *ob = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetUserInfo(oa, "orders", "s3cret-pw"), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetUserInfo(ob, "orders", "s3cret-pw"), NATS_OK);
    works("user and password", oa, ob, "Secured.user");
    natsOptions *wrong = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetUserInfo(wrong, "orders", "guessed"), NATS_OK);
    denied("wrong password", wrong);
    natsOptions_Destroy(wrong);
    wrong = options_for(server.url);
    denied("no user", wrong);
    natsOptions_Destroy(wrong);
    natsOptions_Destroy(oa);
    natsOptions_Destroy(ob);
    /* The same through qtbus_nats_connect, the credentials in the url: the message names
     * the server, the password hidden; beside it, a server that is not there is still
     * QTBUS_EIO, "could be reached" (a refusal is EACCES so that a wrong password is
     * not read as no server: docs/errors.md). */
    char url[160], head[240], closed[64];
    snprintf(url, sizeof url, "nats://orders:guessed@127.0.0.1:%d", server.port);
    snprintf(head, sizeof head,
             "qtbus_nats_connect: the server at nats://orders:***@127.0.0.1:%d was reached and refused access: ",
             server.port);
    url_fails("url, wrong password", url, QTBUS_EACCES, head, "Authorization Violation", "guessed");
    int nobody = ns_free_port();
    snprintf(closed, sizeof closed, "nats://127.0.0.1:%d", nobody);
    snprintf(head, sizeof head, "qtbus_nats_connect: no server at %s could be reached: ", closed);
    url_fails("url, no server there", closed, QTBUS_EIO, head, "No server available for connection", NULL);
    /* A list, the first not there and the second refusing: which one refused is not
     * known, so "a server" of the list. */
    snprintf(url, sizeof url, "nats://127.0.0.1:%d, nats://orders:guessed@127.0.0.1:%d", nobody, server.port);
    snprintf(head, sizeof head,
             "qtbus_nats_connect: a server at nats://127.0.0.1:%d, nats://orders:***@127.0.0.1:%d was reached and "
             "refused access: ",
             nobody, server.port);
    url_fails("url list, the second refusing", url, QTBUS_EACCES, head, "Authorization Violation", "guessed");
    ns_stop(&server);

    /* A token. */
    server = (ns_server){.no_jetstream = 1, .config = "authorization {\n  token: \"t0ken-for-qtbus\"\n}\n"};
    ns_start(&server);
    oa = options_for(server.url);
    ob = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetToken(oa, "t0ken-for-qtbus"), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetToken(ob, "t0ken-for-qtbus"), NATS_OK);
    works("token", oa, ob, "Secured.token");
    wrong = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetToken(wrong, "t0ken-guessed"), NATS_OK);
    denied("wrong token", wrong);
    natsOptions_Destroy(wrong);
    snprintf(url, sizeof url, "nats://t0ken-guessed@127.0.0.1:%d", server.port);
    snprintf(head, sizeof head,
             "qtbus_nats_connect: the server at nats://***@127.0.0.1:%d was reached and refused "
             "access: ",
             server.port);
    url_fails("url, wrong token", url, QTBUS_EACCES, head, "Authorization Violation", "t0ken-guessed");
    natsOptions_Destroy(oa);
    natsOptions_Destroy(ob);
    ns_stop(&server);

    /* An NKey: the server knows the public key, the client signs its nonce with the
     * seed.  The stranger's key pair is as valid, but not the server's. */
    server = (ns_server){.no_jetstream = 1};
    ns_prepare(&server);
    char user[64], stranger[64], config[256], seed[160], stranger_seed[160];
    make_nkey(server.dir, "user", user, sizeof user);
    make_nkey(server.dir, "stranger", stranger, sizeof stranger);
    snprintf(seed, sizeof seed, "%s/user.nk", server.dir);
    snprintf(stranger_seed, sizeof stranger_seed, "%s/stranger.nk", server.dir);
    snprintf(config, sizeof config, "authorization {\n  users = [ { nkey: %s } ]\n}\n", user);
    server.config = config;
    ns_spawn(&server);
    oa = options_for(server.url);
    ob = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetNKeyFromSeed(oa, user, seed), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetNKeyFromSeed(ob, user, seed), NATS_OK);
    works("NKey", oa, ob, "Secured.nkey");
    wrong = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetNKeyFromSeed(wrong, stranger, stranger_seed), NATS_OK);
    denied("unknown NKey", wrong);
    natsOptions_Destroy(wrong);
    /* The server's public key, signed with another seed: the signature fails. */
    wrong = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetNKeyFromSeed(wrong, user, stranger_seed), NATS_OK);
    denied("known NKey, another seed", wrong);
    natsOptions_Destroy(wrong);
    natsOptions_Destroy(oa);
    natsOptions_Destroy(ob);
    ns_stop(&server);
}

int main(void)
{
    secure_begin();
    auth_cases();
    secure_end("test_nats_auth");
    return 0;
}
