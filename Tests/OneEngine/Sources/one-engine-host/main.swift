// SPDX-License-Identifier: MIT
// Linked with --dynamic-list=qtbus-exports.list (Package.swift): expected to pass.
import OneEngineCheck

oneEngineCheck(variant: "host exporting qtbus_*")
