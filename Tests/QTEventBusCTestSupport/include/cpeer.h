/* SPDX-License-Identifier: MIT */
/*
 * The C peer: plain C the Swift tests call, a C "program" in the same process as Swift,
 * talking to qtbus_shared() through qtbus.h only.  Not part of any product.
 */
#ifndef QTBUS_CPEER_H
#define QTBUS_CPEER_H

#include <stddef.h>
#include <stdint.h>

/* Dispatches an event of `type`/`subtype` (nullable) with `text` (nullable) as its
 * NUL-terminated data on qtbus_shared().  Returns qtbus_dispatch's result. */
int cpeer_dispatch(const char *type, const char *subtype, const char *text);

/* Typed signals on qtbus_shared(): defines `type` as (string, int32) (the status of
 * qtbus_signal_define), and emits one with those arguments (qtbus_signal_emit's). */
int cpeer_signal_define_text_int(const char *type);
int cpeer_signal_emit_text_int(const char *type, const char *subtype, const char *text, int32_t number);

/* Dispatches JSON on qtbus_shared() (qtbus_dispatch_json). */
int cpeer_dispatch_json(const char *name, const char *json);

/* A C subscriber on qtbus_shared(): records every event it receives.  Returns a slot
 * (>= 0) or a negative qtbus status.  `subtype` nullable; `json` selects
 * QTBUS_SUB_JSON-style subscription (type QTJsonEvent, subtype = name). */
int cpeer_listen(const char *type, const char *subtype);
int cpeer_listen_json(const char *name);
/* As cpeer_listen, but the handler runs later on a serial qtbus_queue of its own, so it
 * reads the event after the dispatch returned (the engine's copy of it). */
int cpeer_listen_queued(const char *type, const char *subtype);

/* What slot `slot` received: how many events, and the last one's fields (copied into
 * the caller's buffers, NUL-terminated, truncated to their sizes). */
int cpeer_count(int slot);
size_t cpeer_last_data(int slot, char *buffer, size_t size);
void cpeer_last_subtype(int slot, char *buffer, size_t size);
void cpeer_last_type(int slot, char *buffer, size_t size);
/* Whether the last event's data was NUL-terminated right after its size (1/0). */
int cpeer_last_terminated(int slot);
/* Whether the last event carried a non-NULL object (1/0). */
int cpeer_last_had_object(int slot);

/* Disposes the slot's subscription (qtbus_token_dispose's result). */
int cpeer_stop(int slot);

/* Every event's data the slot received, each followed by '|' ("1|0|"). */
size_t cpeer_history(int slot, char *buffer, size_t size);

/* A C receiver of requests of `type` at `priority`: records each event as a listener
 * does, then answers it with qtbus_event_reply(`reply`, strlen).  Returns a slot. */
int cpeer_replier(const char *type, int32_t priority, const char *reply);

/* A C sender: qtbus_request on qtbus_shared() with `text` as data; its replies (each
 * followed by '|') and how many times its release (completion) ran are recorded, reset
 * by the next cpeer_request.  Returns qtbus_request's result. */
int cpeer_request(const char *type, const char *subtype, const char *text);
size_t cpeer_request_replies(char *buffer, size_t size);
int cpeer_request_completions(void);

/* Commands and sources made by Swift, driven from C by id (qtbus_command.id,
 * qtbus_source.id).  cpeer_command_execute passes `text` as the input's data (type
 * "CInput", no object), or no input when NULL. */
int cpeer_command_execute(uint64_t command, const char *text);
int cpeer_command_set_enabled(uint64_t command, int enabled);
int cpeer_command_is_executing(uint64_t command);
int cpeer_source_connect(uint64_t source);

/* Not the peer's: malloc_usable_size(pointer), which Swift's Glibc module does not
 * declare. */
size_t cpeer_malloc_usable_size(const void *pointer);

#endif
