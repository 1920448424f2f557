/* SPDX-License-Identifier: MIT */
/* Links libqtbus through find_package(qtbus) and checks the version it reports. */
#include <qtbus.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    const char *version = qtbus_version();
    printf("qtbus_version() = %s, header %s\n", version ? version : "(null)", QTBUS_VERSION_STRING);
    return version && strcmp(version, QTBUS_VERSION_STRING) == 0 ? 0 : 1;
}
