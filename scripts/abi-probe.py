#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the C "ABI image" of qtbus.h: a translation unit that, compiled with -g into a
shared object, makes the header's ABI visible to libabigail (abidw, abidiff).

The library's own entry points are Swift @_cdecl functions: its DWARF (when it has any)
describes Swift, not the C types of qtbus.h.  The image instead defines every
QTBUS_API function of the header with the header's own prototype (bodies that are never
run), so its DWARF holds each function's parameter and return types, and through them
every public struct, union, enum and typedef.  Values that are #defines never reach
DWARF, and the status codes are enumerators that no function's signature names; so the
image gives every public integer constant of the header (each integer constant #define
QTBUS_* and each enumerator of its enums) an enumerator of `enum qtbus_abi_constants`,
the parameter type of a function qtbus_abi_constants(): a changed value is a changed
enumerator, a new constant an added one (which abidiff counts as harmless).
Names with two underscores (QTBUS__STATUS_LAST, the status enum's end marker) are not
API: they move whenever a code is added, so they are left out.  The enum has a
fixed 64-bit underlying type (its QTBUS_ABI__WIDTH member), so a new large flag
cannot change its size.
String #defines (the event type names) are pinned by CTests/test_abi.c.

usage: abi-probe.py HEADER OUT.c [CC]   (CC, default cc, tells which #defines are
                                         integer constant expressions)
       abi-probe.py --declared HEADER    prints the names of the QTBUS_API functions,
                                         one a line (scripts/check-exports.sh)
"""
import os
import re
import subprocess
import sys
import tempfile


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def declarations(text):
    """(prototype without the trailing ';', name) of every QTBUS_API function (QTBUS_NATS_API
    in qtbus_nats.h)."""
    # Join continued preprocessor lines away first: macros are not declarations.
    body = "\n".join(l for l in re.sub(r"\\\n", " ", text).split("\n")
                     if not l.lstrip().startswith("#"))
    out = []
    for m in re.finditer(r"QTBUS(?:_NATS)?_API\s+([^;{}]*?\b(qtbus_\w+)\s*\([^;{}]*?\))\s*;", body):
        out.append((" ".join(m.group(1).split()), m.group(2)))
    return out


def integer_defines(text, header, cc):
    """Names of the public object-like #define QTBUS_* whose value is an integer constant."""
    names = re.findall(r"^\s*#\s*define\s+(QTBUS_[A-Za-z0-9_]+)(?!\()\s+\S", text, flags=re.M)
    names = [n for n in dict.fromkeys(names) if public(n) and not n.startswith("QTBUS_VERSION_")]
    keep = []
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "t.c")
        # A header that does not compile would make every #define look like a string.
        with open(src, "w") as f:
            f.write(f'#include "{header}"\n')
        r = subprocess.run([cc, "-std=gnu11", "-fsyntax-only", src], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"abi-probe: {header} does not compile:\n{r.stderr}")
        for n in names:
            with open(src, "w") as f:
                f.write(f'#include "{header}"\nenum {{ probe = (long long)({n}) }};\n')
            r = subprocess.run([cc, "-std=gnu11", "-fsyntax-only", "-Werror", src],
                               capture_output=True)
            if r.returncode == 0:
                keep.append(n)
    return keep


def public(name):
    return not name.startswith("QTBUS__")


def enumerators(header, cc):
    """Names of the public enumerators of the header's enums, read after preprocessing
    (the status codes come from an X-macro table)."""
    r = subprocess.run([cc, "-E", "-P", header], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"abi-probe: cannot preprocess {header}:\n{r.stderr}")
    names = []
    for body in re.findall(r"\benum\s+qtbus_\w+\s*\{([^{}]*)\}", r.stdout):
        # One enumerator follows each comma outside parentheses.
        depth, start = 0, 0
        for i, ch in enumerate(body + ","):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if ch == "," and depth == 0:
                m = re.match(r"\s*(QTBUS_\w+)", body[start:i])
                if m and public(m.group(1)):
                    names.append(m.group(1))
                start = i + 1
    return list(dict.fromkeys(names))


def main():
    if sys.argv[1] == "--declared":
        for _, name in sorted(declarations(strip_comments(open(sys.argv[2]).read())), key=lambda d: d[1]):
            print(name)
        return
    header, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    cc = sys.argv[3] if len(sys.argv) > 3 else "cc"
    text = open(header).read()
    decls = declarations(strip_comments(text))
    if not decls:
        sys.exit(f"abi-probe: no QTBUS_API declarations in {header}")
    consts = integer_defines(strip_comments(text), header, cc) + enumerators(header, cc)
    lines = [
        "/* Generated by scripts/abi-probe.py from qtbus.h: the header's ABI for abidw. */",
        f'#include "{header}"',
        "",
        "enum qtbus_abi_constants {",
        "    QTBUS_ABI__WIDTH = -0x7fffffffffffffffLL - 1,",
    ]
    lines += [f"    QTBUS_ABI_{n[len('QTBUS_'):]} = (long long)({n})," for n in consts]
    lines += [
        "};",
        "__attribute__((visibility(\"default\"))) void qtbus_abi_constants(enum qtbus_abi_constants c) { __builtin_trap(); }",
        "",
    ]
    for proto, name in decls:
        # The name in parentheses: a function-like macro of the same name (qtbus.h,
        # STRUCTS THAT GROW) must not expand in the definition.
        proto = re.sub(rf"\b{name}\s*\(", f"({name})(", proto, count=1)
        lines.append(f"{proto} {{ __builtin_trap(); }}")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"abi-probe: {len(decls)} functions, {len(consts)} integer constants")


main()
