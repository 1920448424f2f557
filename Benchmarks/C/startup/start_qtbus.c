/* SPDX-License-Identifier: MIT */
/* Start-up with libqtbus linked (and so the Swift runtime it needs): calls qtbus_version(). */
#include <qtbus.h>
#include <string.h>

int main(void) { return strcmp(qtbus_version(), QTBUS_VERSION_STRING) == 0 ? 0 : 1; }
