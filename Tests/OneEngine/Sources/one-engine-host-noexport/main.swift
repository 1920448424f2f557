// SPDX-License-Identifier: MIT
// The negative control: the same check, linked without the export list.  The plugin's
// qtbus_* bind to libqtbus.so's own engine, so the check must find two engines (exit 3).
import OneEngineCheck

oneEngineCheck(
    variant: "host without the export (negative control: expected to find two engines)",
    control: true)
