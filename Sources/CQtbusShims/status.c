/* SPDX-License-Identifier: MIT */
/* qtbus_strerror's table: the one X-macro list in qtbus.h yields the enum and the text. */
#include "qtbus_shims.h"

const char *qtshim_status_text(int status)
{
    switch (status) {
#define QTBUS__STATUS_CASE(name, value, text)                                                                          \
    case (value): return text;
        QTBUS_STATUS_MAP(QTBUS__STATUS_CASE)
#undef QTBUS__STATUS_CASE
    default: return "unknown qtbus status";
    }
}
