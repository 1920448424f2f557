// SPDX-License-Identifier: MIT
// Start-up of a C++ program with libqtbus linked through qtbus.hpp (libstdc++ too):
// calls qtbus_version(), as start_qtbus.c does.
#include <qtbus.hpp>

#include <cstring>

int main() { return std::strcmp(qtbus_version(), QTBUS_VERSION_STRING) == 0 && qtbus::shared().c_bus() ? 0 : 1; }
