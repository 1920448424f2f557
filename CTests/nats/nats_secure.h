/* SPDX-License-Identifier: MIT */
/*
 * nats_secure.h -- what the tests of the bridge against secured servers, and of its
 * operations on them, share (test_nats_tls, _auth, _credentials, _retry,
 * _restart_stats, _attach and _undo, which were one test_nats_secure.c): two buses
 * with a MISUSE hook, the files made at run time (certificates with openssl; NKeys and
 * JWTs with PyPI's nkeys, which scripts/deps.sh installs into its virtual environment,
 * whose python3 CMake passes as PYTHON3), and connecting with nats.c's options.
 *
 * Every refusal: *out NULL, one MISUSE record, nothing left running (the process
 * has as many threads, /proc/self/task, right after the call as before it), and
 * qtbus_errmsg() in nats.c's words (printed): a refusal of the credentials is
 * QTBUS_EACCES, "a server of nats_options was reached and refused access"; a TLS
 * failure QTBUS_EIO, "no server of nats_options could be reached".
 */
#ifndef QTBUS_NATS_SECURE_H
#define QTBUS_NATS_SECURE_H

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

static inline void hook(const qtbus_trace_record *r, void *userdata)
{
    (void)userdata;
    if (r->kind == QTBUS_TRACE_MISUSE) atomic_fetch_add(&misuse, 1);
}

/* The threads of this process now. */
static inline int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The threads once none is starting or ending (the last threads of a connection
 * closed just before may take a moment to end): the same count for 100 ms. */
static inline int settled_thread_count(void)
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
#define INBOX                                                                                                          \
    {                                                                                                                  \
        .lock = PTHREAD_MUTEX_INITIALIZER                                                                              \
    }

static inline void deliver(const qtbus_event *e, void *userdata)
{
    inbox *box = userdata;
    size_t size = 0;
    const char *data = qtbus_event_data(e, &size);
    pthread_mutex_lock(&box->lock);
    snprintf(box->last, sizeof box->last, "%.*s", (int)size, data ? data : "");
    pthread_mutex_unlock(&box->lock);
    atomic_fetch_add(&box->count, 1);
}

static inline qtbus_token listen_on(qtbus_bus *bus, const char *type, inbox *box)
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
static inline int last_is(inbox *box, const char *text)
{
    pthread_mutex_lock(&box->lock);
    int same = strcmp(box->last, text) == 0;
    pthread_mutex_unlock(&box->lock);
    return same;
}

/* Dispatches `type` (and `subtype`, or NULL) with `text` as its bytes; returns
 * qtbus_dispatch's count. */
static inline int send_sub(qtbus_bus *bus, const char *type, const char *subtype, const char *text)
{
    qtbus_event_desc d = tu_event(type, subtype);
    d.data = text;
    d.size = strlen(text);
    return qtbus_dispatch(bus, &d);
}

static inline int send_text(qtbus_bus *bus, const char *type, const char *text)
{
    return send_sub(bus, type, NULL, text);
}

/* `what` and a colon, padded to a column. */
static inline const char *label(const char *what)
{
    static char out[64];
    snprintf(out, sizeof out, "%s:", what);
    return out;
}

/* ------------------------------------------------------------------------------------
 * Files made at run time
 * ---------------------------------------------------------------------------------- */

/* Runs a shell command (formatted) in `dir`, its output in dir/make.log, shown if it fails. */
static inline void sh(const char *dir, const char *format, ...)
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
static inline void read_line(const char *dir, const char *name, char *out, size_t size)
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
static inline void make_certificates(const char *dir)
{
    sh(dir, "printf '%%s\\n' '[req]' 'distinguished_name = dn' '[dn]' '[ca]' "
            "'basicConstraints = critical,CA:TRUE' 'keyUsage = critical,keyCertSign,cRLSign' > openssl.cnf && "
            "printf '%%s\\n' 'subjectAltName = IP:127.0.0.1,DNS:localhost' 'extendedKeyUsage = serverAuth' "
            "> server.ext && "
            "printf '%%s\\n' 'extendedKeyUsage = clientAuth' > client.ext");
    const char *key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    sh(dir,
       "openssl req -config openssl.cnf -x509 -extensions ca %s -days 2 -subj /CN=qtbus-test-ca "
       "-keyout ca-key.pem -out ca.pem",
       key);
    sh(dir,
       "openssl req -config openssl.cnf -x509 -extensions ca %s -days 2 -subj /CN=qtbus-other-ca "
       "-keyout other-ca-key.pem -out other-ca.pem",
       key);
    const struct {
        const char *name, *cn, *ca, *ext;
    } certs[] = {
        {"server", "127.0.0.1", "ca", "server.ext"},
        {"client", "qtbus-client", "ca", "client.ext"},
        {"other-client", "qtbus-other-client", "other-ca", "client.ext"},
    };
    for (size_t i = 0; i < sizeof certs / sizeof certs[0]; i++) {
        sh(dir,
           "openssl req -config openssl.cnf %s -subj /CN=%s -keyout %s-key.pem -out %s.csr && "
           "openssl x509 -req -in %s.csr -CA %s.pem -CAkey %s-key.pem -CAcreateserial -days 2 "
           "-extfile %s -out %s.pem",
           key, certs[i].cn, certs[i].name, certs[i].name, certs[i].name, certs[i].ca, certs[i].ca, certs[i].ext,
           certs[i].name);
    }
}

/* An NKey user in `dir`: <name>.nk holds its seed, `public_key` gets its public key
 * (56 characters, U...), made by PyPI's nkeys from 32 random bytes.  Run from / so that
 * no directory named nats or nkeys is taken for a package. */
static inline void make_nkey(const char *dir, const char *name, char *public_key, size_t size)
{
    sh(dir,
       "cd / && '%s' -c 'import os, sys, nkeys\n"
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
static inline void make_credentials(const char *dir)
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
        "    token = jwt(dict({\"iss\": account_pub, \"sub\": pub, \"name\": name, \"nats\": nats}, **extra), "
        "account)\n"
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
static inline char *read_file(const char *dir, const char *name)
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
static inline void server_says(const ns_server *s, const char *text, char *out, size_t size)
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

static const qtbus_nats_options defaults = {.url = NULL};

/* Options for the server at `url`: 10 s to connect (TLS under valgrind is slow; the
 * servers give the TLS handshake as long), retries 100 ms apart. */
static inline natsOptions *options_for(const char *url)
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
static inline void works(const char *what, natsOptions *oa, natsOptions *ob, const char *type)
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
static inline int64_t connect_fails(const char *what, natsOptions *o, int status, const char *head, const char *words)
{
    qtbus_nats *bridge = (qtbus_nats *)&bus_a; /* not NULL: the call must set it */
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
static inline int64_t refused(const char *what, natsOptions *o, const char *words)
{
    return connect_fails(what, o, QTBUS_EIO,
                         "qtbus_nats_connect_with: no server of nats_options could be reached: ", words);
}

/* A connect whose credentials the server refuses: QTBUS_EACCES, the server reached. */
static inline int64_t denied(const char *what, natsOptions *o)
{
    return connect_fails(what, o, QTBUS_EACCES,
                         "qtbus_nats_connect_with: a server of nats_options was reached and refused access: ",
                         "Authorization Violation");
}

/* qtbus_nats_connect() to `url` fails with `status`, qtbus_errmsg() starting with
 * `head` and holding `words` and none of `secret` (the url's password or token), one
 * MISUSE record, *out NULL. */
static inline void url_fails(const char *what, const char *url, int status, const char *head, const char *words,
                             const char *secret)
{
    qtbus_nats *bridge = (qtbus_nats *)&bus_a;
    qtbus_nats_options o = {.url = url};
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

/* Dispatches `type` on bus_a until `box` has one more (the receiving bridge's
 * subscription may reach a server that has just come up after the sender's first
 * publish), then `more` events, and waits until they are there; returns how many
 * were dispatched. */
static inline int cross_when_up(const char *type, inbox *box, int more)
{
    int before = atomic_load(&box->count), sent = 0;
    int64_t until = tu_now_ms() + TU_WAIT_MS;
    while (atomic_load(&box->count) == before) {
        CHECK(tu_now_ms() < until);
        CHECK_EQ_INT(send_text(bus_a, type, "probe"), 1);
        sent++;
        int64_t wait = tu_now_ms() + 200;
        while (atomic_load(&box->count) == before && tu_now_ms() < wait)
            tu_sleep_ms(1);
    }
    for (int i = 0; i < more; i++)
        CHECK_EQ_INT(send_text(bus_a, type, "after"), 1);
    CHECK_WAIT(atomic_load(&box->count) >= before + 1 + more, TU_WAIT_MS);
    return sent + more;
}

static inline void print_stats(const char *what, const qtbus_nats_stats *s)
{
    printf("%-34s published %llu, received %llu, dropped %llu, reconnects %llu, pending %llu\n", label(what),
           (unsigned long long)s->published, (unsigned long long)s->received, (unsigned long long)s->dropped,
           (unsigned long long)s->reconnects, (unsigned long long)s->pending);
}

/* The two buses, each with the MISUSE hook. */
static inline void secure_begin(void)
{
    /* Each line as it is printed: a failed check ends the process with _Exit. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    bus_a = qtbus_bus_create();
    bus_b = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_trace_set(bus_a, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(bus_b, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);
}

static inline void secure_end(const char *test)
{
    CHECK_EQ_INT(qtbus_trace_set(bus_a, 0, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(bus_b, 0, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus_a), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus_b), QTBUS_OK);
    printf("%s: passed\n", test);
}

#endif
