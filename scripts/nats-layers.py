#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The NATS bridge's layers (nats/), checked against the table in nats/bridge.h.

    scripts/nats-layers.py           check: every nats/*.c is in the table, and calls only
                                     files of the layers below its own; each function is
                                     declared in bridge.h's section of the file that defines
                                     it; exit 1 otherwise
    scripts/nats-layers.py --calls   also print who calls whom, top first
    scripts/nats-layers.py DIR       the same for another copy of nats/ (the check's own test)

The layers are the table in bridge.h's first comment (the one list), a row per file:
"<layer> <file>.c <what it holds>", the bottom layer 1.  A "call" is any use of a
function that another file defines (qn_* and qtbus_nats_*, not static), called or
passed as a callback alike.  Text, not a compiler: comments, strings and character
literals are skipped, and a definition is a name at the top level followed by its
parameters and a '{'.
"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import layers  # noqa: E402  (its code_of)

ROOT = pathlib.Path(__file__).resolve().parent.parent

ROW = re.compile(r"^\s*\*\s+(\d+)\s+(\w+\.c)\s+\S")
SECTION = re.compile(r"^/\* ---- (\S+) -+ \*/$", re.M)
NAME = re.compile(r"\b(?:qn|qtbus_nats)_\w+\b")
DECL = re.compile(r"\bQTBUS_NATS_INTERNAL\b[^;{]*?\b((?:qn|qtbus_nats)_\w+)\s*\(")


def code_of(text):
    """The text with comments, string and character literals blanked (lines kept)."""
    return layers.code_of(text, quotes="\"'")


def layer_table(header):
    """{file: layer} from the first comment of bridge.h (after its SPDX line)."""
    text = header.read_text()
    start = text.find("/*\n")
    end = text.find("*/", max(start, 0))
    table = {}
    for line in text[:end].splitlines():
        m = ROW.match(line)
        if m:
            table.setdefault(m.group(2), []).append(int(m.group(1)))
    return table


def definitions(code):
    """The functions a file defines and does not keep static: [(name, offset)]."""
    found, depth, i, n = [], 0, 0, len(code)
    last_end = 0  # after the last top-level ';' or '}': where a definition's head starts
    while i < n:
        c = code[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                last_end = i + 1
        elif c == ";" and depth == 0:
            last_end = i + 1
        elif depth == 0 and (c.isalpha() or c == "_") and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] == "_")):
            m = NAME.match(code, i)
            if m:
                j = m.end()
                while j < n and code[j].isspace():
                    j += 1
                if j < n and code[j] == "(":
                    level, k = 0, j
                    while k < n:
                        level += code[k] == "("
                        level -= code[k] == ")"
                        k += 1
                        if level == 0:
                            break
                    while k < n and code[k].isspace():
                        k += 1
                    head = code[last_end:i]
                    if k < n and code[k] == "{" and not re.search(r"\bstatic\b", head):
                        found.append((m.group(0), i))
                i = m.end()
                continue
            while i < n and (code[i].isalnum() or code[i] == "_"):
                i += 1
            continue
        i += 1
    return found


def check(nats):
    header = nats / "bridge.h"
    table = layer_table(header)
    files = sorted(p.name for p in nats.glob("*.c"))
    problems = []
    if not table:
        return {}, {}, [f"{header}: no layer table (rows '<layer> <file>.c <what it holds>') in its first comment"]
    for name, layers in sorted(table.items()):
        if len(layers) > 1:
            problems.append(f"bridge.h: {name} is in the layer table {len(layers)} times")
        if name not in files:
            problems.append(f"bridge.h: the layer table names {name}, which is not in nats/")
    for name in files:
        if name not in table:
            problems.append(f"{name}: not in bridge.h's layer table")
    rank = {name: layers[0] for name, layers in table.items()}

    codes = {name: code_of((nats / name).read_text()) for name in files}
    owner, defined_at = {}, {}
    for name, code in codes.items():
        for fn, at in definitions(code):
            if fn in owner:
                problems.append(f"{fn} is defined in both {owner[fn]} and {name}")
                continue
            owner[fn] = name
            defined_at[(name, fn)] = at

    calls = {}  # file -> {file it calls: [functions]}
    for name, code in codes.items():
        used = {}
        for m in NAME.finditer(code):
            fn = m.group(0)
            if fn in owner and owner[fn] != name:
                used.setdefault(owner[fn], set()).add(fn)
        calls[name] = {f: sorted(fns) for f, fns in used.items()}
        if name not in rank:
            continue
        for callee, fns in sorted(calls[name].items()):
            if callee not in rank or rank[callee] < rank[name]:
                continue
            where = "its own layer" if rank[callee] == rank[name] else "a layer above"
            problems.append(f"{name} (layer {rank[name]}) uses {', '.join(fns)} of {callee} "
                            f"(layer {rank[callee]}): {where}")

    # bridge.h: each file's functions in that file's section.
    text = header.read_text()
    marks = list(SECTION.finditer(text))
    sections = {m.group(1) for m in marks}
    for name in files:
        if name not in sections:
            problems.append(f"bridge.h: no section '/* ---- {name} ---- */' for {name}")
    declared = set()
    for k, m in enumerate(marks):
        body = code_of(text[m.end():marks[k + 1].start() if k + 1 < len(marks) else len(text)])
        for d in DECL.finditer(body):
            fn = d.group(1)
            declared.add(fn)
            if fn not in owner:
                problems.append(f"bridge.h: {fn} is declared (section {m.group(1)}) but no nats/*.c defines it")
            elif owner[fn] != m.group(1):
                problems.append(f"bridge.h: {fn} is declared in section {m.group(1)} but defined in {owner[fn]}")
    for fn, name in sorted(owner.items()):
        if fn.startswith("qn_") and fn not in declared:
            problems.append(f"{name}: {fn} is not static and not declared in bridge.h")
    return rank, calls, problems


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    nats = pathlib.Path(args[0]) if args else ROOT / "nats"
    rank, calls, problems = check(nats)
    if "--calls" in argv:
        for name in sorted(calls, key=lambda f: (-rank.get(f, 0), f)):
            print(f"{rank.get(name, '?')} {name}")
            for callee in sorted(calls[name], key=lambda f: (-rank.get(f, 0), f)):
                print(f"    -> {callee:<11} {', '.join(calls[name][callee])}")
    for p in problems:
        print(p)
    if problems:
        print(f"nats-layers.py: {len(problems)} problem(s) in {len(calls)} files")
        return 1
    by_layer = {}
    for name, layer in rank.items():
        by_layer.setdefault(layer, []).append(name)
    drawing = " < ".join(" ".join(sorted(by_layer[l])) for l in sorted(by_layer))
    edges = sum(len(c) for c in calls.values())
    print(f"nats-layers.py: {len(calls)} files in {len(by_layer)} layers ({drawing}); "
          f"all {edges} file-to-file uses go down")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
