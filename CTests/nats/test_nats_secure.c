/* SPDX-License-Identifier: MIT */
/*
 * test_nats_secure.c -- the bridge against secured servers, through
 * qtbus_nats_connect_with() and nats.c's own setters, and its operations:
 *   - TLS: a CA, a server certificate (127.0.0.1 and localhost) and client
 *     certificates made at run time with openssl, in the server's directory.  A bridge
 *     that trusts the CA (natsOptions_SetSecure + _LoadCATrustedCertificates, one with
 *     _SetExpectedHostname "localhost") connects and an event crosses to another; one
 *     that trusts another CA, expects another host name, or gives no CA (the system's
 *     are not the test's) is refused.  Mutual TLS: with the client certificate
 *     (_LoadCertificatesChain) it works; without one, or with one of another CA, it
 *     is refused.
 *   - A user and password (_SetUserInfo), a token (_SetToken), an NKey (_SetNKeyFromSeed,
 *     the key pair made at run time with PyPI's nkeys, which scripts/deps.sh installs
 *     into its virtual environment, whose python3 CMake passes as PYTHON3): each works; a wrong password, no user, a wrong token, an NKey the
 *     server does not know, and a known NKey signed with another seed are refused.
 *   - Every refusal: *out NULL, one MISUSE record, nothing left running (the process
 *     has as many threads, /proc/self/task, right after the call as before it), and
 *     qtbus_errmsg() in nats.c's words (printed): a refusal of the credentials is
 *     QTBUS_EACCES, "a server of nats_options was reached and refused access"; a TLS
 *     failure QTBUS_EIO, "no server of nats_options could be reached".  The same with
 *     qtbus_nats_connect() and credentials in the url: a wrong password or token is
 *     QTBUS_EACCES naming the server (the secret as ***), a list "a server at" it; a
 *     port nobody listens on is still QTBUS_EIO, "no server at ... could be reached".
 *   - Retry on failed connect (_SetRetryOnFailedConnect) with no server yet.  With a
 *     connected callback, nats.c's way to ask for it asynchronously: the connect
 *     returns QTBUS_OK at once, the bridges export and import, the server starts on
 *     that port, and events cross.  With none (NULL), nats.c retries inside the
 *     connect: it returns once the server is up, or QTBUS_EIO when MaxReconnect tries
 *     are spent, with nothing left running.
 *   - A server restart: qtbus_nats_stats_get() shows reconnects 1, and published and
 *     received as many as crossed.
 *   - qtbus_nats_attach() on a connection of the test's own, which echoes (nats.c's
 *     default): a bridge that exports and imports a type over it dispatches no event
 *     twice and publishes none again, events cross both ways, and qtbus_nats_close()
 *     leaves the connection open and usable (a publish on it still reaches the other
 *     bridge); the test destroys it.
 *   - qtbus_nats_unexport / _unimport / _unimport_subtype: the type stops crossing;
 *     QTBUS_ESTALE, with qtbus_errmsg(), for what is not exported or imported; the
 *     same import made again works.
 *
 *   - A credentials file (_SetUserCredentialsFromFiles): the server in operator mode,
 *     an operator, an account and users made at run time (what the nsc tool makes,
 *     which Debian does not package: here python3 makes the NKeys with nkeys and signs
 *     the JWTs in chain with them), the account preloaded in a MEMORY resolver.  The
 *     user's file works; a user whose JWT has expired, and one signed by an account
 *     the operator does not know, are refused.
 */
#include "nats_server.h"

#include <nats/nats.h>
#include <qtbus_nats.h>

#include <dirent.h>
#include <stdarg.h>

#ifndef PYTHON3
#define PYTHON3 "python3"
#endif

static qtbus_bus *bus_a, *bus_b;

/* ------------------------------------------------------------------------------------
 * What the test looks at: MISUSE records, threads, events received
 * ---------------------------------------------------------------------------------- */

static atomic_int misuse;

static void hook(const qtbus_trace_record *r, void *userdata)
{
    (void)userdata;
    if (r->kind == QTBUS_TRACE_MISUSE) atomic_fetch_add(&misuse, 1);
}

/* The threads of this process now. */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The threads once none is starting or ending (the last threads of a connection
 * closed just before may take a moment to end): the same count for 100 ms. */
static int settled_thread_count(void)
{
    int n = thread_count(), same = 0;
    int64_t until = tu_now_ms() + TU_WAIT_MS;
    while (same < 5) {
        CHECK(tu_now_ms() < until);
        tu_sleep_ms(20);
        int m = thread_count();
        same = m == n ? same + 1 : 0;
        n = m;
    }
    return n;
}

/* What a subscription on a bus received: how many, and the last one's bytes.  Each is
 * a static made with INBOX (its lock ready), reset by listen_on. */
typedef struct inbox {
    atomic_int count;
    pthread_mutex_t lock;
    char last[128];
} inbox;
#define INBOX { .lock = PTHREAD_MUTEX_INITIALIZER }

static void deliver(const qtbus_event *e, void *userdata)
{
    inbox *box = userdata;
    size_t size = 0;
    const char *data = qtbus_event_data(e, &size);
    pthread_mutex_lock(&box->lock);
    snprintf(box->last, sizeof box->last, "%.*s", (int)size, data ? data : "");
    pthread_mutex_unlock(&box->lock);
    atomic_fetch_add(&box->count, 1);
}

static qtbus_token listen_on(qtbus_bus *bus, const char *type, inbox *box)
{
    pthread_mutex_lock(&box->lock);
    atomic_store(&box->count, 0);
    box->last[0] = '\0';
    pthread_mutex_unlock(&box->lock);
    qtbus_token token;
    CHECK_EQ_INT(qtbus_subscribe(bus, type, NULL, deliver, box, NULL, &token), QTBUS_OK);
    return token;
}

/* Whether the last event `box` received had the bytes `text`. */
static int last_is(inbox *box, const char *text)
{
    pthread_mutex_lock(&box->lock);
    int same = strcmp(box->last, text) == 0;
    pthread_mutex_unlock(&box->lock);
    return same;
}

/* Dispatches `type` (and `subtype`, or NULL) with `text` as its bytes; returns
 * qtbus_dispatch's count. */
static int send_sub(qtbus_bus *bus, const char *type, const char *subtype, const char *text)
{
    qtbus_event_desc d = tu_event(type, subtype);
    d.data = text;
    d.size = strlen(text);
    return qtbus_dispatch(bus, &d);
}

static int send_text(qtbus_bus *bus, const char *type, const char *text)
{
    return send_sub(bus, type, NULL, text);
}

/* `what` and a colon, padded to a column. */
static const char *label(const char *what)
{
    static char out[64];
    snprintf(out, sizeof out, "%s:", what);
    return out;
}

/* ------------------------------------------------------------------------------------
 * Files made at run time
 * ---------------------------------------------------------------------------------- */

/* Runs a shell command (formatted) in `dir`, its output in dir/make.log, shown if it fails. */
static void sh(const char *dir, const char *format, ...)
{
    char body[4096], cmd[4400];
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(body, sizeof body, format, ap);
    va_end(ap);
    CHECK(n > 0 && (size_t)n < sizeof body);
    snprintf(cmd, sizeof cmd, "cd '%s' && { %s ; } >>make.log 2>&1", dir, body);
    if (system(cmd) != 0) {
        char show[200];
        snprintf(show, sizeof show, "cat '%s/make.log' >&2", dir);
        if (system(show) != 0) fprintf(stderr, "(no make.log)\n");
        fprintf(stderr, "this failed: %s\n", body);
        tu_fail(__FILE__, __LINE__,
                "a command making the test's files failed (scripts/deps.sh installs openssl, and "
                "nkeys in the virtual environment whose python3 is QTBUS_PYTHON3)");
    }
}

/* The first line of dir/name, without its newline. */
static void read_line(const char *dir, const char *name, char *out, size_t size)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    CHECK(fgets(out, (int)size, f) != NULL);
    fclose(f);
    out[strcspn(out, "\r\n")] = '\0';
}

/* In `dir`: ca.pem (the test's CA), other-ca.pem (a CA nobody uses), server.pem and
 * server-key.pem (127.0.0.1 and localhost, signed by ca.pem), client.pem and
 * client-key.pem (a client certificate signed by ca.pem), other-client.pem and
 * other-client-key.pem (signed by other-ca.pem).  P-256 keys: quick to make.  Every
 * setting is on the command line or in the files made here, so that the machine's
 * openssl.cnf changes nothing. */
static void make_certificates(const char *dir)
{
    sh(dir, "printf '%%s\\n' '[req]' 'distinguished_name = dn' '[dn]' '[ca]' "
            "'basicConstraints = critical,CA:TRUE' 'keyUsage = critical,keyCertSign,cRLSign' > openssl.cnf && "
            "printf '%%s\\n' 'subjectAltName = IP:127.0.0.1,DNS:localhost' 'extendedKeyUsage = serverAuth' "
            "> server.ext && "
            "printf '%%s\\n' 'extendedKeyUsage = clientAuth' > client.ext");
    const char *key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    sh(dir, "openssl req -config openssl.cnf -x509 -extensions ca %s -days 2 -subj /CN=qtbus-test-ca "
            "-keyout ca-key.pem -out ca.pem", key);
    sh(dir, "openssl req -config openssl.cnf -x509 -extensions ca %s -days 2 -subj /CN=qtbus-other-ca "
            "-keyout other-ca-key.pem -out other-ca.pem", key);
    const struct { const char *name, *cn, *ca, *ext; } certs[] = {
        { "server", "127.0.0.1", "ca", "server.ext" },
        { "client", "qtbus-client", "ca", "client.ext" },
        { "other-client", "qtbus-other-client", "other-ca", "client.ext" },
    };
    for (size_t i = 0; i < sizeof certs / sizeof certs[0]; i++) {
        sh(dir, "openssl req -config openssl.cnf %s -subj /CN=%s -keyout %s-key.pem -out %s.csr && "
                "openssl x509 -req -in %s.csr -CA %s.pem -CAkey %s-key.pem -CAcreateserial -days 2 "
                "-extfile %s -out %s.pem",
           key, certs[i].cn, certs[i].name, certs[i].name, certs[i].name, certs[i].ca, certs[i].ca,
           certs[i].ext, certs[i].name);
    }
}

/* An NKey user in `dir`: <name>.nk holds its seed, `public_key` gets its public key
 * (56 characters, U...), made by PyPI's nkeys from 32 random bytes.  Run from / so that
 * no directory named nats or nkeys is taken for a package. */
static void make_nkey(const char *dir, const char *name, char *public_key, size_t size)
{
    sh(dir, "cd / && '%s' -c 'import os, sys, nkeys\n"
            "seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)\n"
            "open(sys.argv[1] + \".nk\", \"wb\").write(seed + b\"\\n\")\n"
            "public_key = nkeys.from_seed(bytearray(seed)).public_key\n"
            "open(sys.argv[1] + \".pub\", \"wb\").write(public_key + b\"\\n\")' '%s/%s'",
       PYTHON3, dir, name);
    char pub[64];
    snprintf(pub, sizeof pub, "%s.pub", name);
    read_line(dir, pub, public_key, size);
    CHECK_MSG(strlen(public_key) == 56 && public_key[0] == 'U', "not an NKey user's public key: %s", public_key);
}

/* Writes creds.py into `dir`: run there, it makes an operator, an account and its users
 * (NKeys from PyPI's nkeys, JWTs signed with them, as nsc would), and writes
 * operator.conf (the server's configuration: the operator, the account preloaded) and
 * user.creds, expired.creds (a JWT that expired a minute ago) and stranger.creds (a
 * user of an account the operator does not know). */
static void make_credentials(const char *dir)
{
    static const char script[] =
    "import base64, hashlib, json, os, sys, time\n"
    "import nkeys\n"
    "\n"
    "def keypair(prefix):\n"
    "    seed = nkeys.encode_seed(os.urandom(32), prefix)\n"
    "    kp = nkeys.from_seed(bytearray(seed))\n"
    "    return seed.decode(), kp.public_key.decode(), kp\n"
    "\n"
    "def b64(data):\n"
    "    return base64.urlsafe_b64encode(data).rstrip(b\"=\").decode()\n"
    "\n"
    "def jwt(claims, signer):\n"
    "    header = b64(json.dumps({\"typ\": \"JWT\", \"alg\": \"ed25519-nkey\"}).encode())\n"
    "    claims = dict(claims, iat=int(time.time()))\n"
    "    digest = hashlib.sha256(json.dumps(claims, sort_keys=True).encode()).digest()\n"
    "    claims[\"jti\"] = base64.b32encode(digest).decode().rstrip(\"=\")\n"
    "    body = b64(json.dumps(claims).encode())\n"
    "    return header + \".\" + body + \".\" + b64(signer.sign((header + \".\" + body).encode()))\n"
    "\n"
    "def user(name, account_pub, account, extra={}):\n"
    "    seed, pub, _ = keypair(nkeys.PREFIX_BYTE_USER)\n"
    "    nats = {\"pub\": {}, \"sub\": {}, \"subs\": -1, \"data\": -1, \"payload\": -1,\n"
    "            \"type\": \"user\", \"version\": 2}\n"
    "    token = jwt(dict({\"iss\": account_pub, \"sub\": pub, \"name\": name, \"nats\": nats}, **extra), account)\n"
    "    with open(name + \".creds\", \"w\") as f:\n"
    "        f.write(\"-----BEGIN NATS USER JWT-----\\n\" + token + \"\\n------END NATS USER JWT------\\n\\n\"\n"
    "                \"-----BEGIN USER NKEY SEED-----\\n\" + seed + \"\\n------END USER NKEY SEED------\\n\")\n"
    "\n"
    "os.chdir(sys.argv[1])\n"
    "_, op_pub, op = keypair(nkeys.PREFIX_BYTE_OPERATOR)\n"
    "_, acc_pub, acc = keypair(nkeys.PREFIX_BYTE_ACCOUNT)\n"
    "_, other_pub, other = keypair(nkeys.PREFIX_BYTE_ACCOUNT)\n"
    "limits = {\"subs\": -1, \"data\": -1, \"payload\": -1, \"imports\": -1, \"exports\": -1,\n"
    "          \"wildcards\": True, \"conn\": -1, \"leaf\": -1}\n"
    "account = {\"limits\": limits, \"default_permissions\": {\"pub\": {}, \"sub\": {}},\n"
    "           \"type\": \"account\", \"version\": 2}\n"
    "op_jwt = jwt({\"iss\": op_pub, \"sub\": op_pub, \"name\": \"qtbus-test\",\n"
    "              \"nats\": {\"type\": \"operator\", \"version\": 2}}, op)\n"
    "acc_jwt = jwt({\"iss\": op_pub, \"sub\": acc_pub, \"name\": \"QTBUS\", \"nats\": account}, op)\n"
    "user(\"user\", acc_pub, acc)\n"
    "user(\"expired\", acc_pub, acc, {\"exp\": int(time.time()) - 60})\n"
    "user(\"stranger\", other_pub, other)\n"
    "with open(\"operator.conf\", \"w\") as f:\n"
    "    f.write('operator: \"%s\"\\nresolver: MEMORY\\n' % op_jwt)\n"
    "    f.write('resolver_preload: {\\n  %s: \"%s\"\\n}\\n' % (acc_pub, acc_jwt))\n";
    char path[160];
    snprintf(path, sizeof path, "%s/creds.py", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL && fputs(script, f) >= 0 && fclose(f) == 0);
    sh(dir, "cd / && '%s' '%s/creds.py' '%s'", PYTHON3, dir, dir);
}

/* The whole of dir/name, malloc'd. */
static char *read_file(const char *dir, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    CHECK(fseek(f, 0, SEEK_END) == 0);
    long size = ftell(f);
    CHECK(size > 0 && fseek(f, 0, SEEK_SET) == 0);
    char *text = malloc((size_t)size + 1);
    CHECK(text != NULL && fread(text, 1, (size_t)size, f) == (size_t)size);
    text[size] = '\0';
    fclose(f);
    return text;
}

/* The server's last log line that contains `text`, after its "[ERR] " when it has one. */
static void server_says(const ns_server *s, const char *text, char *out, size_t size)
{
    char path[96], line[1024];
    snprintf(path, sizeof path, "%s/server.log", s->dir);
    FILE *f = fopen(path, "r");
    out[0] = '\0';
    while (f && fgets(line, sizeof line, f)) {
        if (!strstr(line, text)) continue;
        const char *from = strstr(line, "[ERR] ");
        from = from ? from + 6 : line;
        size_t n = strcspn(from, "\r\n");
        if (n >= size) n = size - 1;
        memcpy(out, from, n);
        out[n] = '\0';
    }
    if (f) fclose(f);
}

/* ------------------------------------------------------------------------------------
 * Connecting with nats.c options
 * ---------------------------------------------------------------------------------- */

static const qtbus_nats_options defaults = { .url = NULL };

/* Options for the server at `url`: 10 s to connect (TLS under valgrind is slow; the
 * servers give the TLS handshake as long), retries 100 ms apart. */
static natsOptions *options_for(const char *url)
{
    natsOptions *o = NULL;
    CHECK_EQ_INT(natsOptions_Create(&o), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetURL(o, url), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetTimeout(o, 10000), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetReconnectWait(o, 100), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetMaxReconnect(o, -1), NATS_OK);
    return o;
}

/* Two bridges, bus_a's and bus_b's, connected with `oa` and `ob`: an event of `type`
 * dispatched on bus_a crosses to bus_b, with its bytes. */
static void works(const char *what, natsOptions *oa, natsOptions *ob, const char *type)
{
    qtbus_nats *ba = NULL, *bb = NULL;
    int rc = qtbus_nats_connect_with(bus_a, oa, &defaults, &ba);
    CHECK_MSG(rc == QTBUS_OK, "%s: %s", what, qtbus_errmsg());
    rc = qtbus_nats_connect_with(bus_b, ob, &defaults, &bb);
    CHECK_MSG(rc == QTBUS_OK, "%s: %s", what, qtbus_errmsg());
    CHECK_EQ_INT(qtbus_nats_export(ba, type), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bb, type), QTBUS_OK);
    static inbox box = INBOX;
    qtbus_token token = listen_on(bus_b, type, &box);
    char text[64];
    snprintf(text, sizeof text, "over %s", what);
    CHECK_EQ_INT(send_text(bus_a, type, text), 1);
    CHECK_WAIT(atomic_load(&box.count) == 1, TU_WAIT_MS);
    CHECK(last_is(&box, text));
    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(token), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&misuse), 0);
    printf("%-34s connected; %s \"%s\" crossed from bus a to bus b\n", label(what), type, text);
}

/* A connect with `o` that fails with `status`: qtbus_errmsg() starting with `head`
 * and holding nats.c's words (one of the '|'-separated `words`), *out NULL, one MISUSE
 * record, and as many threads right after as before.  Returns how long the connect
 * took, in ms. */
static int64_t connect_fails(const char *what, natsOptions *o, int status, const char *head, const char *words)
{
    qtbus_nats *bridge = (qtbus_nats *)&bus_a;   /* not NULL: the call must set it */
    atomic_store(&misuse, 0);
    int threads = settled_thread_count();
    int64_t start = tu_now_ms();
    int rc = qtbus_nats_connect_with(bus_a, o, &defaults, &bridge);
    int64_t took = tu_now_ms() - start;
    int after = thread_count();
    char message[600];
    snprintf(message, sizeof message, "%s", qtbus_errmsg());
    printf("%-34s %s in %lld ms, threads %d -> %d, *out %s: %s\n", label(what), tu_status_name(rc), (long long)took,
           threads, after, bridge ? "set" : "NULL", message);
    CHECK_EQ_INT(rc, status);
    CHECK(bridge == NULL);
    CHECK_MSG(strstr(message, head) == message, "the message does not start with \"%s\"", head);
    int found = 0;
    char list[200];
    snprintf(list, sizeof list, "%s", words);
    char *save = NULL;
    for (char *w = strtok_r(list, "|", &save); w && !found; w = strtok_r(NULL, "|", &save))
        found = strstr(message, w) != NULL;
    CHECK_MSG(found, "none of \"%s\" is in the message", words);
    CHECK_EQ_INT(atomic_load(&misuse), 1);
    atomic_store(&misuse, 0);
    CHECK_EQ_INT(after, threads);
    return took;
}

/* A connect that TLS refuses, or that finds no server: QTBUS_EIO, "could not be
 * reached" (nats.c does not tell a refused client certificate from a server that
 * closed the connection). */
static int64_t refused(const char *what, natsOptions *o, const char *words)
{
    return connect_fails(what, o, QTBUS_EIO, "qtbus_nats_connect_with: no server of nats_options could be reached: ",
                         words);
}

/* A connect whose credentials the server refuses: QTBUS_EACCES, the server reached. */
static int64_t denied(const char *what, natsOptions *o)
{
    return connect_fails(what, o, QTBUS_EACCES,
                         "qtbus_nats_connect_with: a server of nats_options was reached and refused access: ",
                         "Authorization Violation");
}

/* qtbus_nats_connect() to `url` fails with `status`, qtbus_errmsg() starting with
 * `head` and holding `words` and none of `secret` (the url's password or token), one
 * MISUSE record, *out NULL. */
static void url_fails(const char *what, const char *url, int status, const char *head, const char *words,
                      const char *secret)
{
    qtbus_nats *bridge = (qtbus_nats *)&bus_a;
    qtbus_nats_options o = { .url = url };
    atomic_store(&misuse, 0);
    int64_t start = tu_now_ms();
    int rc = qtbus_nats_connect(bus_a, &o, &bridge);
    int64_t took = tu_now_ms() - start;
    char message[600];
    snprintf(message, sizeof message, "%s", qtbus_errmsg());
    printf("%-34s %s in %lld ms: %s\n", label(what), tu_status_name(rc), (long long)took, message);
    CHECK_EQ_INT(rc, status);
    CHECK(bridge == NULL);
    CHECK_MSG(strstr(message, head) == message, "the message does not start with \"%s\"", head);
    CHECK_MSG(strstr(message, words) != NULL, "\"%s\" is not in the message", words);
    CHECK(!secret || strstr(message, secret) == NULL);
    CHECK_EQ_INT(atomic_load(&misuse), 1);
    atomic_store(&misuse, 0);
}

/* ------------------------------------------------------------------------------------
 * Secured servers
 * ---------------------------------------------------------------------------------- */

static void tls_cases(void)
{
    ns_server server = { .no_jetstream = 1 }, mutual = { .no_jetstream = 1 };
    ns_prepare(&server);
    make_certificates(server.dir);
    char config[1024], ca[128], other_ca[128], client[128], client_key[128], other_client[128],
        other_client_key[128];
    snprintf(ca, sizeof ca, "%s/ca.pem", server.dir);
    snprintf(other_ca, sizeof other_ca, "%s/other-ca.pem", server.dir);
    snprintf(client, sizeof client, "%s/client.pem", server.dir);
    snprintf(client_key, sizeof client_key, "%s/client-key.pem", server.dir);
    snprintf(other_client, sizeof other_client, "%s/other-client.pem", server.dir);
    snprintf(other_client_key, sizeof other_client_key, "%s/other-client-key.pem", server.dir);
    snprintf(config, sizeof config,
             "tls {\n  cert_file: \"%s/server.pem\"\n  key_file: \"%s/server-key.pem\"\n  timeout: 10\n}\n",
             server.dir, server.dir);
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
    natsOptions *both[] = { ma, mb };
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

static void auth_cases(void)
{
    /* A user and a password. */
    ns_server server = { .no_jetstream = 1,
                         .config = "authorization {\n  users = [ { user: orders, password: \"s3cret-pw\" } ]\n}\n" };
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
    server = (ns_server){ .no_jetstream = 1, .config = "authorization {\n  token: \"t0ken-for-qtbus\"\n}\n" };
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
    snprintf(head, sizeof head, "qtbus_nats_connect: the server at nats://***@127.0.0.1:%d was reached and refused "
             "access: ", server.port);
    url_fails("url, wrong token", url, QTBUS_EACCES, head, "Authorization Violation", "t0ken-guessed");
    natsOptions_Destroy(oa);
    natsOptions_Destroy(ob);
    ns_stop(&server);

    /* An NKey: the server knows the public key, the client signs its nonce with the
     * seed.  The stranger's key pair is as valid, but not the server's. */
    server = (ns_server){ .no_jetstream = 1 };
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

/* A user JWT and its seed in a credentials file, against a server in operator mode. */
static void credentials_case(void)
{
    ns_server server = { .no_jetstream = 1 };
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
    const char *refusals[][2] = { { "expired", "credentials file, expired JWT" },
                                  { "stranger", "credentials file, unknown account" } };
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

/* ------------------------------------------------------------------------------------
 * A server that is not up yet; a restart
 * ---------------------------------------------------------------------------------- */

/* nats.c's connected callback: with one, a connect with no server up returns at once. */
static atomic_int connected_calls;
static void on_connected(natsConnection *nc, void *closure)
{
    (void)nc;
    (void)closure;
    atomic_fetch_add(&connected_calls, 1);
}

/* Dispatches `type` on bus_a until `box` has one more (the receiving bridge's
 * subscription may reach a server that has just come up after the sender's first
 * publish), then `more` events, and waits until they are there; returns how many
 * were dispatched. */
static int cross_when_up(const char *type, inbox *box, int more)
{
    int before = atomic_load(&box->count), sent = 0;
    int64_t until = tu_now_ms() + TU_WAIT_MS;
    while (atomic_load(&box->count) == before) {
        CHECK(tu_now_ms() < until);
        CHECK_EQ_INT(send_text(bus_a, type, "probe"), 1);
        sent++;
        int64_t wait = tu_now_ms() + 200;
        while (atomic_load(&box->count) == before && tu_now_ms() < wait) tu_sleep_ms(1);
    }
    for (int i = 0; i < more; i++) CHECK_EQ_INT(send_text(bus_a, type, "after"), 1);
    CHECK_WAIT(atomic_load(&box->count) >= before + 1 + more, TU_WAIT_MS);
    return sent + more;
}

/* No server yet, retry on failed connect with a connected callback: the connects
 * return QTBUS_OK at once, the bridges export and import, and events cross once the
 * server is up. */
static void retry_case(void)
{
    ns_server server = { .no_jetstream = 1 };
    ns_prepare(&server);   /* a port, nobody listening on it */
    CHECK(!ns_accepts(server.port));
    natsOptions *oa = options_for(server.url), *ob = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetRetryOnFailedConnect(oa, true, on_connected, NULL), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetRetryOnFailedConnect(ob, true, on_connected, NULL), NATS_OK);
    qtbus_nats *ba = NULL, *bb = NULL;
    int64_t start = tu_now_ms();
    CHECK_EQ_INT(qtbus_nats_connect_with(bus_a, oa, &defaults, &ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_connect_with(bus_b, ob, &defaults, &bb), QTBUS_OK);
    int64_t took = tu_now_ms() - start;
    CHECK(ba != NULL && bb != NULL);
    CHECK_EQ_INT(qtbus_nats_is_connected(ba), 0);
    CHECK_EQ_INT(qtbus_nats_is_connected(bb), 0);
    CHECK_MSG(took < 1000, "two connects with no server took %lld ms", (long long)took);
    printf("%-34s both connects QTBUS_OK in %lld ms, not connected yet (port %d)\n", "retry, callback, no server:",
           (long long)took, server.port);

    CHECK_EQ_INT(qtbus_nats_export(ba, "Early"), QTBUS_OK);
    atomic_store(&misuse, 0);
    start = tu_now_ms();
    int rc = qtbus_nats_import(bb, "Early");
    took = tu_now_ms() - start;
    printf("%-34s %s in %lld ms%s%s\n", "retry, import before the server:", tu_status_name(rc), (long long)took,
           rc == QTBUS_OK ? "" : ": ", rc == QTBUS_OK ? "" : qtbus_errmsg());
    /* The header: while not connected, an import returns QTBUS_OK at once and its
     * subscription is sent when the connection is made. */
    CHECK_EQ_INT(rc, QTBUS_OK);
    CHECK_MSG(took < 1000, "an import with no server took %lld ms", (long long)took);
    CHECK_EQ_INT(atomic_load(&misuse), 0);
    static inbox box = INBOX;
    qtbus_token token = listen_on(bus_b, "Early", &box);
    /* Dispatched while no server is up: it waits in ba's reconnect buffer. */
    CHECK_EQ_INT(send_text(bus_a, "Early", "before the server"), 1);

    ns_spawn(&server);
    CHECK_WAIT(qtbus_nats_is_connected(ba) && qtbus_nats_is_connected(bb), TU_WAIT_MS);
    CHECK_WAIT(atomic_load(&connected_calls) == 2, TU_WAIT_MS);
    /* ba's buffered event and bb's subscription race to the new server: the buffered
     * one may or may not reach bb.  What is dispatched from now on crosses. */
    int early = atomic_load(&box.count);
    int sent = cross_when_up("Early", &box, 10);
    printf("%-34s both connected (the connected callback ran %d times); the event from before %s; %d dispatched "
           "after, %d crossed\n",
           "retry, server started:", atomic_load(&connected_calls),
           early ? "crossed too" : "did not cross (it raced b's subscription)", sent, atomic_load(&box.count) - early);
    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(token), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&misuse), 0);
    natsOptions_Destroy(oa);
    natsOptions_Destroy(ob);
    ns_stop(&server);
}

/* Starts the server after a pause, on its own thread, which also stops it when told:
 * ns_spawn's child has PR_SET_PDEATHSIG, which follows the thread that forked it, not
 * the process, so that thread lives as long as the server; and the server's pid is
 * that thread's alone. */
typedef struct starter {
    ns_server *server;
    atomic_int stop;
} starter;

static void *start_later(void *p)
{
    starter *st = p;
    tu_sleep_ms(500);
    ns_spawn(st->server);
    while (!atomic_load(&st->stop)) tu_sleep_ms(5);
    ns_stop(st->server);
    return NULL;
}

/* Retry on failed connect without a connected callback, as nats.c does it: the
 * connect itself retries, ReconnectWait apart, until a server is up (QTBUS_OK) or its
 * MaxReconnect tries are spent (QTBUS_EIO). */
static void retry_blocking_case(void)
{
    ns_server server = { .no_jetstream = 1 };
    ns_prepare(&server);
    natsOptions *o = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetRetryOnFailedConnect(o, true, NULL, NULL), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetMaxReconnect(o, 5), NATS_OK);
    CHECK(refused("retry, no callback, 5 tries", o, "No server available for connection") >= 400);

    /* Tries for ever: the connect returns once the server is up, 500 ms later. */
    CHECK_EQ_INT(natsOptions_SetMaxReconnect(o, -1), NATS_OK);
    pthread_t thread;
    starter st = { .server = &server };
    CHECK_EQ_INT(pthread_create(&thread, NULL, start_later, &st), 0);
    qtbus_nats *bridge = NULL;
    int64_t start = tu_now_ms();
    int rc = qtbus_nats_connect_with(bus_a, o, &defaults, &bridge);
    int64_t took = tu_now_ms() - start;
    CHECK_MSG(rc == QTBUS_OK, "%s", qtbus_errmsg());
    CHECK(took >= 400);
    CHECK_EQ_INT(qtbus_nats_is_connected(bridge), 1);
    qtbus_nats *receiver = ns_bridge(&server, bus_b, 0, 0);
    CHECK_EQ_INT(qtbus_nats_export(bridge, "Later"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(receiver, "Later"), QTBUS_OK);
    static inbox box = INBOX;
    qtbus_token token = listen_on(bus_b, "Later", &box);
    CHECK_EQ_INT(send_text(bus_a, "Later", "later"), 1);
    CHECK_WAIT(atomic_load(&box.count) == 1, TU_WAIT_MS);
    printf("%-34s QTBUS_OK after %lld ms, when the server came up; an event crossed\n",
           "retry, no callback, server later:", (long long)took);
    CHECK_EQ_INT(qtbus_nats_close(bridge), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(receiver), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(token), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&misuse), 0);
    natsOptions_Destroy(o);
    atomic_store(&st.stop, 1);   /* the starter stops the server */
    pthread_join(thread, NULL);
}

static void print_stats(const char *what, const qtbus_nats_stats *s)
{
    printf("%-34s published %llu, received %llu, dropped %llu, reconnects %llu, pending %llu\n", label(what),
           (unsigned long long)s->published, (unsigned long long)s->received, (unsigned long long)s->dropped,
           (unsigned long long)s->reconnects, (unsigned long long)s->pending);
}

static void restart_case(void)
{
    ns_server server = { .no_jetstream = 1 };
    ns_start(&server);
    qtbus_nats *ba = ns_bridge(&server, bus_a, 0, 0), *bb = ns_bridge(&server, bus_b, 0, 0);
    CHECK_EQ_INT(qtbus_nats_export(ba, "Tick"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bb, "Tick"), QTBUS_OK);
    static inbox box = INBOX;
    qtbus_token token = listen_on(bus_b, "Tick", &box);
    for (int i = 0; i < 100; i++) CHECK_EQ_INT(send_text(bus_a, "Tick", "before"), 1);
    CHECK_WAIT(atomic_load(&box.count) == 100, TU_WAIT_MS);
    qtbus_nats_stats sa, sb;
    CHECK_EQ_INT(qtbus_nats_stats_get(ba, &sa), QTBUS_OK);
    CHECK_WAIT(qtbus_nats_stats_get(bb, &sb) == QTBUS_OK && sb.pending == 0, TU_WAIT_MS);
    print_stats("before the restart, a", &sa);
    print_stats("before the restart, b", &sb);
    CHECK_EQ_U64(sa.published, 100);
    CHECK_EQ_U64(sb.received, 100);
    CHECK_EQ_U64(sa.reconnects + sb.reconnects + sa.dropped + sb.dropped, 0);

    ns_kill(&server);
    CHECK_WAIT(!qtbus_nats_is_connected(ba) && !qtbus_nats_is_connected(bb), TU_WAIT_MS);
    ns_restart(&server);
    CHECK_WAIT(qtbus_nats_is_connected(ba) && qtbus_nats_is_connected(bb), TU_WAIT_MS);
    int sent = cross_when_up("Tick", &box, 100);
    CHECK_EQ_INT(qtbus_nats_stats_get(ba, &sa), QTBUS_OK);
    /* Closing a flushes what it published; b's thread then has dispatched everything. */
    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_WAIT(qtbus_nats_stats_get(bb, &sb) == QTBUS_OK && sb.pending == 0, TU_WAIT_MS);
    CHECK_IDLE(bus_b);
    tu_sleep_ms(50);
    int crossed = atomic_load(&box.count);
    CHECK_EQ_INT(qtbus_nats_stats_get(bb, &sb), QTBUS_OK);
    print_stats("after the restart, a", &sa);
    print_stats("after the restart, b", &sb);
    printf("%-34s a dispatched 100 before the restart and %d after it, b's handler got %d\n", "  what crossed:",
           sent, crossed);
    CHECK_EQ_U64(sa.published, (uint64_t)(100 + sent));
    CHECK_EQ_U64(sa.dropped, 0);
    CHECK_EQ_U64(sa.reconnects, 1);
    CHECK_EQ_U64(sb.received, (uint64_t)crossed);
    CHECK_EQ_U64(sb.dropped, 0);
    CHECK_EQ_U64(sb.pending, 0);
    CHECK_EQ_U64(sb.reconnects, 1);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(token), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&misuse), 0);
    ns_stop(&server);
}

/* ------------------------------------------------------------------------------------
 * A connection of the application's; undoing exports and imports
 * ---------------------------------------------------------------------------------- */

static void attach_case(void)
{
    ns_server server = { .no_jetstream = 1 };
    ns_start(&server);
    /* nats.c's defaults: echo on, so the server sends this connection what it publishes. */
    natsConnection *conn = NULL;
    CHECK_EQ_INT(natsConnection_ConnectTo(&conn, server.url), NATS_OK);
    qtbus_nats *ba = NULL;
    /* A server with headers (nats-server 2.2 or later): natsConnection_HasHeaderSupport
     * says so with NATS_OK, which the bridge once read as "no" (fixed in d2c936a). */
    CHECK_EQ_INT(natsConnection_HasHeaderSupport(conn), NATS_OK);
    int rc = qtbus_nats_attach(bus_a, conn, &defaults, &ba);
    CHECK_MSG(rc == QTBUS_OK, "qtbus_nats_attach on a server with headers: %s %s", tu_status_name(rc), qtbus_errmsg());
    qtbus_nats *bb = ns_bridge(&server, bus_b, 0, 0);
    qtbus_nats *bridges[] = { ba, bb };
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(qtbus_nats_export(bridges[i], "Echo"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bridges[i], "Echo"), QTBUS_OK);
    }
    static inbox on_a = INBOX, on_b = INBOX;
    qtbus_token ta = listen_on(bus_a, "Echo", &on_a), tb = listen_on(bus_b, "Echo", &on_b);

    /* a -> b.  The server echoes it to a's connection too: a drops it (its own). */
    CHECK_EQ_INT(send_text(bus_a, "Echo", "from a"), 2);   /* the handler and the export */
    CHECK_WAIT(atomic_load(&on_b.count) == 1 && last_is(&on_b, "from a"), TU_WAIT_MS);
    /* b -> a.  b published it after the echo was on its way to a, on the same
     * connection: once it is dispatched, an echo not dropped would have been too. */
    CHECK_EQ_INT(send_text(bus_b, "Echo", "from b"), 2);
    CHECK_WAIT(last_is(&on_a, "from b"), TU_WAIT_MS);
    CHECK_EQ_INT(atomic_load(&on_a.count), 2);   /* its own, once; b's */
    /* a dispatched b's event from NATS, and does not publish it again: b gets a's next
     * one after its own two, nothing between. */
    CHECK_EQ_INT(send_text(bus_a, "Echo", "from a again"), 2);
    CHECK_WAIT(last_is(&on_b, "from a again"), TU_WAIT_MS);
    CHECK_EQ_INT(atomic_load(&on_b.count), 3);
    qtbus_nats_stats sa;
    CHECK_EQ_INT(qtbus_nats_stats_get(ba, &sa), QTBUS_OK);
    print_stats("attached, a", &sa);
    CHECK_EQ_U64(sa.published, 2);
    CHECK_EQ_U64(sa.received, 1);   /* b's; the echoes of its own two are not counted */
    CHECK_EQ_U64(sa.dropped, 0);
    CHECK_EQ_INT(atomic_load(&on_a.count), 3);   /* its own two, once each; b's */
    printf("%-34s a's handler got %d (its own 2 events once each, b's 1), b's got %d (its own 1, a's 2): no echo, "
           "no loop\n",
           "attached, echo on:", atomic_load(&on_a.count), atomic_load(&on_b.count));

    /* Closed: the connection is still the application's, open, and works. */
    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(natsConnection_Status(conn), NATS_CONN_STATUS_CONNECTED);
    CHECK(!natsConnection_IsClosed(conn));
    CHECK_EQ_INT(natsConnection_PublishString(conn, "qtbus.e._.Echo", "plain, after close"), NATS_OK);
    CHECK_EQ_INT(natsConnection_FlushTimeout(conn, TU_WAIT_MS), NATS_OK);
    CHECK_WAIT(last_is(&on_b, "plain, after close"), TU_WAIT_MS);
    CHECK_EQ_INT(atomic_load(&on_a.count), 3);   /* a's bridge is gone: nothing more for a */
    printf("%-34s the connection is still connected; a publish on it reached b (\"plain, after close\")\n",
           "attached, after qtbus_nats_close:");
    natsConnection_Destroy(conn);

    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(ta), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(tb), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&misuse), 0);
    ns_stop(&server);
}

/* `call` is QTBUS_ESTALE with one MISUSE record; qtbus_errmsg() printed. */
#define CHECK_STALE(call)                                                                                   \
    do {                                                                                                  \
        atomic_store(&misuse, 0);                                                                         \
        CHECK_EQ_INT((call), QTBUS_ESTALE);                                                               \
        printf("%-34s QTBUS_ESTALE: %s\n", #call ":", qtbus_errmsg());                                    \
        CHECK(strstr(qtbus_errmsg(), "by this bridge (or no longer is)") != NULL);                        \
        CHECK_EQ_INT(atomic_load(&misuse), 1);                                                            \
        atomic_store(&misuse, 0);                                                                         \
    } while (0)

static void undo_case(void)
{
    ns_server server = { .no_jetstream = 1 };
    ns_start(&server);
    qtbus_nats *ba = ns_bridge(&server, bus_a, 0, 0), *bb = ns_bridge(&server, bus_b, 0, 0);
    const char *types[] = { "Gone", "Mark", "Price" };
    for (int i = 0; i < 3; i++) CHECK_EQ_INT(qtbus_nats_export(ba, types[i]), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bb, "Gone"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bb, "Mark"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import_subtype(bb, "Price", "EUR"), QTBUS_OK);
    static inbox gone = INBOX, mark = INBOX, price = INBOX;
    qtbus_token tokens[] = { listen_on(bus_b, "Gone", &gone), listen_on(bus_b, "Mark", &mark),
                             listen_on(bus_b, "Price", &price) };
    CHECK_EQ_INT(send_text(bus_a, "Gone", "1"), 1);
    CHECK_WAIT(atomic_load(&gone.count) == 1, TU_WAIT_MS);

    /* Unexported: a's bus no longer has the export's subscription, so nothing is
     * published (the dispatch reaches no handler); Mark still crosses. */
    CHECK_EQ_INT(qtbus_nats_unexport(ba, "Gone"), QTBUS_OK);
    CHECK_EQ_INT(send_text(bus_a, "Gone", "2"), 0);
    CHECK_EQ_INT(send_text(bus_a, "Mark", "1"), 1);
    CHECK_WAIT(atomic_load(&mark.count) == 1, TU_WAIT_MS);
    CHECK_EQ_INT(atomic_load(&gone.count), 1);
    printf("%-34s Gone no longer crosses (dispatch counts 0 handlers on a; Mark after it crossed)\n",
           "unexport(Gone):");
    CHECK_STALE(qtbus_nats_unexport(ba, "Gone"));
    CHECK_STALE(qtbus_nats_unexport(ba, "Never"));
    CHECK_STALE(qtbus_nats_unexport(ba, "Go*"));
    CHECK_EQ_INT(qtbus_nats_export(ba, "Gone"), QTBUS_OK);

    /* Unimported: unimport returns once the server has dropped the subscription, so it
     * sends b no more Mark.  Gone, published after it, arrives; two imports are two
     * nats.c subscriptions, whose events are not ordered between them, so a Mark sent
     * by mistake could come a little later: 100 ms more for it to show. */
    CHECK_EQ_INT(qtbus_nats_unimport(bb, "Mark"), QTBUS_OK);
    CHECK_EQ_INT(send_text(bus_a, "Mark", "2"), 1);
    CHECK_EQ_INT(send_text(bus_a, "Gone", "3"), 1);
    CHECK_WAIT(atomic_load(&gone.count) == 2 && last_is(&gone, "3"), TU_WAIT_MS);
    tu_sleep_ms(100);
    CHECK_EQ_INT(atomic_load(&mark.count), 1);
    printf("%-34s Mark no longer crosses (Gone, exported again, does)\n", "unimport(Mark):");
    CHECK_STALE(qtbus_nats_unimport(bb, "Mark"));
    CHECK_STALE(qtbus_nats_unimport(bb, "Never"));
    /* Imported again: crosses again. */
    CHECK_EQ_INT(qtbus_nats_import(bb, "Mark"), QTBUS_OK);
    CHECK_EQ_INT(send_text(bus_a, "Mark", "3"), 1);
    CHECK_WAIT(atomic_load(&mark.count) == 2 && last_is(&mark, "3"), TU_WAIT_MS);
    printf("%-34s Mark crosses again\n", "import(Mark) again:");

    /* One subtype. */
    CHECK_EQ_INT(send_sub(bus_a, "Price", "EUR", "1.10"), 1);
    CHECK_WAIT(atomic_load(&price.count) == 1, TU_WAIT_MS);
    CHECK_STALE(qtbus_nats_unimport(bb, "Price"));   /* only a subtype of it is imported */
    CHECK_EQ_INT(qtbus_nats_unimport_subtype(bb, "Price", "EUR"), QTBUS_OK);
    CHECK_EQ_INT(send_sub(bus_a, "Price", "EUR", "1.20"), 1);
    CHECK_EQ_INT(send_text(bus_a, "Mark", "4"), 1);
    CHECK_WAIT(atomic_load(&mark.count) == 3, TU_WAIT_MS);
    tu_sleep_ms(100);
    CHECK_EQ_INT(atomic_load(&price.count), 1);
    printf("%-34s Price/EUR no longer crosses\n", "unimport_subtype(Price, EUR):");
    CHECK_STALE(qtbus_nats_unimport_subtype(bb, "Price", "EUR"));
    CHECK_STALE(qtbus_nats_unimport_subtype(bb, "Price", "USD"));

    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    for (int i = 0; i < 3; i++) CHECK_EQ_INT(qtbus_token_dispose(tokens[i]), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&misuse), 0);
    ns_stop(&server);
}

int main(void)
{
    /* Each line as it is printed: a failed check ends the process with _Exit. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    bus_a = qtbus_bus_create();
    bus_b = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_trace_set(bus_a, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(bus_b, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);

    tls_cases();
    auth_cases();
    credentials_case();
    retry_case();
    retry_blocking_case();
    restart_case();
    undo_case();
    attach_case();

    CHECK_EQ_INT(qtbus_trace_set(bus_a, 0, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(bus_b, 0, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus_a), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus_b), QTBUS_OK);
    printf("test_nats_secure: passed\n");
    return 0;
}
