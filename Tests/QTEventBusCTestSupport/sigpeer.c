/* SPDX-License-Identifier: MIT */
/* See include/sigpeer.h: the C half.  The log and the tokens are guarded by a mutex: a
 * handler may run on any thread. */
#include "sigpeer.h"
#include <qtbus.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define TOKENS 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[4096];
static qtbus_token tokens[TOKENS];

void sigpeer_record(const char *who, const char *text, int32_t number)
{
    char entry[512];
    snprintf(entry, sizeof entry, "%s(%s,%d)", who, text ? text : "NULL", (int)number);
    pthread_mutex_lock(&lock);
    size_t used = strlen(log_text);
    snprintf(log_text + used, sizeof log_text - used, "%s", entry);
    pthread_mutex_unlock(&lock);
}

size_t sigpeer_log(char *buffer, size_t size)
{
    pthread_mutex_lock(&lock);
    size_t n = strlen(log_text);
    if (size > 0) {
        size_t copied = n < size - 1 ? n : size - 1;
        memcpy(buffer, log_text, copied);
        buffer[copied] = 0;
    }
    pthread_mutex_unlock(&lock);
    return n;
}

static int keep(int status, qtbus_token token)
{
    if (status != QTBUS_OK) return status;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < TOKENS; i++) {
        if (tokens[i].id == 0) {
            tokens[i] = token;
            pthread_mutex_unlock(&lock);
            return QTBUS_OK;
        }
    }
    pthread_mutex_unlock(&lock);
    qtbus_token_dispose(token);
    return QTBUS_ENOMEM;
}

static void on_typed(const char *text, int32_t number, void *userdata)
{
    (void)userdata;
    sigpeer_record("c-typed", text, number);
}

int sigpeer_c_connect(const char *type)
{
    qtbus_token token = {0};
    int status = qtbus_signal_connect(qtbus_shared(), type, NULL, QTBUS_CALLBACK(on_typed), NULL, NULL, &token);
    return keep(status, token);
}

static void on_plain(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    qtbus_value args[QTBUS_SIGNAL_MAX_ARGS];
    size_t size = 0;
    const unsigned char *bytes = qtbus_event_data(event, &size);
    int n = qtbus_event_args(event, args, QTBUS_SIGNAL_MAX_ARGS);
    /* The kinds are bytes 8 and 9 (qtbus.h's layout): checked before reading a string. */
    if (n == 2 && bytes[8] == QTBUS_ARG_STRING && bytes[9] == QTBUS_ARG_INT32) {
        sigpeer_record("c-plain", args[0].str, args[1].i32);
    } else {
        char why[64];
        snprintf(why, sizeof why, "not a (string, int32) signal: %d", n);
        sigpeer_record("c-plain", why, 0);
    }
}

int sigpeer_c_listen_args(const char *type)
{
    qtbus_token token = {0};
    int status = qtbus_subscribe(qtbus_shared(), type, NULL, on_plain, NULL, NULL, &token);
    return keep(status, token);
}

int sigpeer_c_emit(const char *type, const char *subtype, const char *text, int32_t number)
{
    return qtbus_signal_emit(qtbus_shared(), type, subtype, text, number);
}

void sigpeer_stop(void)
{
    pthread_mutex_lock(&lock);
    qtbus_token kept[TOKENS];
    memcpy(kept, tokens, sizeof kept);
    memset(tokens, 0, sizeof tokens);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < TOKENS; i++)
        if (kept[i].id) qtbus_token_dispose(kept[i]);
    sigpeer_cxx_stop();
    pthread_mutex_lock(&lock);
    log_text[0] = 0;
    pthread_mutex_unlock(&lock);
}
