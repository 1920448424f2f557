#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The engine's layers, checked and drawn from the tree.

    scripts/layers.py            check: every file of Sources/QTBusEngine is in a layer
                                 folder, and calls only its own layer and those below,
                                 but through the hooks named below; exit 1 otherwise
    scripts/layers.py --drawing  print the drawing docs/layout.md carries (from the folders)
    scripts/layers.py --check-drawing   check that docs/layout.md's drawing is the one printed

The layers, lowest first, are QTBUS_ENGINE_LAYERS in cmake/qtbus_library.cmake (the one
list; CMake builds the folders in that order).  A "call" is a use of a function or global that
another file declares at its top level (names declared private or fileprivate are the
file's own; an overload declared in several layers counts as the lowest one's).  Text, not a compiler: comments and string
literals are skipped, and a member called through a value (`x.foo()`) is not seen.
Types are checked too: a file names only the types of its own layer and those below,
but for the upward references named below (TYPES).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
ENGINE = ROOT / "Sources" / "QTBusEngine"
CMAKE = ROOT / "cmake" / "qtbus_library.cmake"
LAYOUT = ROOT / "docs" / "layout.md"

# Calls upward that the design has: each a hook that a registry change leaves for after
# the unlock (Store/Registry.swift's AfterUnlock), the name it calls and who may call it.
HOOKS = {
    "typeLivenessChanged": ("a type coming alive or going idle wakes its autoconnect sources",
                            {"Subscribe.swift", "Dispose.swift"}),
    "deliverReplay": ("a new REPLAY subscription's backlog is delivered", {"Subscribe.swift"}),
    "emitNotes": ("the trace records made under the lock are sent", {"Registry.swift"}),
}

# Types named upward that the design has: a lower layer's record that holds (or holds a
# pointer to) a higher layer's, the reason, and the files that may name it.  Erasing such a
# pointer to a raw one would hide the tie, not remove it: it is stated here instead.
TYPES = {
    "Command": ("the registry's tables of commands and executions", {"Registry.swift"}),
    "SharedSource": ("the registry's table of sources, and a type's autoconnect sources",
                     {"Registry.swift", "TypeEntry.swift"}),
    "MisuseHook": ("the registry's list of buses whose hook takes MISUSE records", {"Registry.swift"}),
    "TraceNote": ("the trace records a registry change makes under the lock", {"Registry.swift"}),
    "OwnerCheck": ("a Swift freeWith subscription's owner, in its extra record", {"Subscription.swift"}),
    "OwnedLink": ("a Swift freeWith subscription's link in its type's owned list", {"Subscription.swift"}),
    "Subscription": ("the subscription a queued delivery is for: a payload's, a bounded queue's slot's",
                     {"Payload.swift", "BoundedQueue.swift"}),
    "TypeEntry": ("the type a thread last dispatched by name, in its record", {"Reclamation.swift"}),
}

# What each layer holds, for the drawing (a folder's name says the rest).
TITLES = {
    "Boundary": "C boundary",
    "Features": "features",
    "Dispatch": "dispatch",
    "RegistryChanges": "registry changes",
    "Store": "store",
    "Events": "events, queues",
    "Primitives": "primitives",
}

# Functions and globals: what a file calls.  Types are declared by TYPE_DECL (a nested
# type, indented, is its enclosing type's and not counted).
DECL = re.compile(
    r"^(?:@[\w(), ]+\s+)*(?P<access>(?:private|fileprivate|internal|package|public)\s+)?"
    r"(?:nonisolated\(unsafe\)\s+)?"
    r"(?:func|let|var)\s+(?P<name>[A-Za-z_]\w*)")
TYPE_DECL = re.compile(
    r"^(?:@[\w(), ]+\s+)*(?P<access>(?:private|fileprivate|internal|package|public)\s+)?"
    r"(?:final\s+)?(?:struct|enum|class|protocol|typealias|actor)\s+(?P<name>[A-Za-z_]\w*)")
# A name not reached through a value or a type (`.name` is a member or an enum case).
IDENT = re.compile(r"(?<![.\w])[A-Za-z_]\w*")


def layers():
    m = re.search(r"set\(QTBUS_ENGINE_LAYERS([^)]*)\)", CMAKE.read_text())
    if not m:
        sys.exit(f"layers.py: no set(QTBUS_ENGINE_LAYERS ...) in {CMAKE}")
    return m.group(1).split()


def code_of(text, quotes='"'):
    """The text with comments and string literals blanked (line structure kept); a
    character in `quotes` opens a literal (C passes '"\'' for its character literals).
    Also used by scripts/nats-layers.py."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i) or text.startswith('"""', i):
            close = "*/" if text[i] == "/" else '"""'
            j = text.find(close, i + len(close))
            end = n if j < 0 else j + len(close)
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif text[i] in quotes:
            quote, j = text[i], i + 1
            while j < n and text[j] != quote and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(quote + quote)
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def files_by_layer(order):
    found, problems = {}, []
    for path in sorted(ENGINE.rglob("*.swift")):
        rel = path.relative_to(ENGINE)
        if len(rel.parts) != 2 or rel.parts[0] not in order:
            problems.append(f"{rel}: not in a layer folder ({', '.join(order)})")
            continue
        found.setdefault(rel.parts[0], []).append(path)
    names = [p.name for ps in found.values() for p in ps]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"{name}: two files of that name (the compile writes one object per file name)")
    return found, problems


def check(order):
    found, problems = files_by_layer(order)
    rank = {layer: i for i, layer in enumerate(order)}
    declared = {}  # name -> (layer, file)
    types = {}  # type name -> (layer, file)
    own_types = {}  # file -> the type names it declares, private ones too
    codes = {}
    for layer, paths in found.items():
        for path in paths:
            code = code_of(path.read_text())
            codes[path] = (layer, code)
            for line in code.splitlines():
                tm = re.match(r"\s*(?:@[\w(), ]+\s+)*(?:(?:private|fileprivate|internal|package|public|final)\s+)*"
                              r"(?:struct|enum|class|protocol|typealias|actor)\s+([A-Za-z_]\w*)", line)
                if tm:
                    own_types.setdefault(path, set()).add(tm.group(1))
                m = TYPE_DECL.match(line)
                if m and not (m.group("access") or "").strip() in ("private", "fileprivate"):
                    name = m.group("name")
                    if name not in types or rank[layer] < rank[types[name][0]]:
                        types[name] = (layer, path.name)
                m = DECL.match(line)
                if m and not (m.group("access") or "").strip() in ("private", "fileprivate"):
                    # Overloads in several layers: the lowest one counts (a call may be to it).
                    name = m.group("name")
                    if name not in declared or rank[layer] < rank[declared[name][0]]:
                        declared[name] = (layer, path.name)
    used_hooks = set()
    used_types = set()
    for path, (layer, code) in sorted(codes.items()):
        seen = set()
        for name in IDENT.findall(code):
            if name in seen:
                continue
            seen.add(name)
            if name in types and name not in own_types.get(path, ()):
                owner_layer, owner_file = types[name]
                if rank[owner_layer] > rank[layer]:
                    if name in TYPES and path.name in TYPES[name][1]:
                        used_types.add((path.name, name))
                    else:
                        problems.append(f"{layer}/{path.name} names the type {name} of "
                                        f"{owner_layer}/{owner_file}, a layer above (not in TYPES)")
                continue
            if name not in declared:
                continue
            owner_layer, owner_file = declared[name]
            if rank[owner_layer] <= rank[layer]:
                continue
            if name in HOOKS and path.name in HOOKS[name][1]:
                used_hooks.add((path.name, name))
                continue
            problems.append(f"{layer}/{path.name} uses {name} of {owner_layer}/{owner_file}, a layer above")
    for name, (_, users) in sorted(TYPES.items()):
        for user in sorted(users):
            if (user, name) not in used_types:
                problems.append(f"type {name} in {user} is listed but not named there: remove it from TYPES")
    for name, (_, callers) in sorted(HOOKS.items()):
        for caller in sorted(callers):
            if (caller, name) not in used_hooks:
                problems.append(f"hook {caller} -> {name} is listed but not used: remove it from HOOKS")
    return found, problems


def drawing(order, found, width=92):
    """One row per layer, top first: its title and folder, then its files (wrapped)."""
    titles = {l: f"{TITLES.get(l, l)} ({l}/)" for l in order}
    indent = max(len(t) for t in titles.values()) + 2
    lines = []
    for layer in reversed(order):
        line = f"{titles[layer]:<{indent}}"
        for i, name in enumerate(p.stem for p in found.get(layer, [])):
            piece = name if i == 0 else "   " + name
            if len(line) + len(piece) > width and i > 0:
                lines.append(line)
                line = " " * indent + name
            else:
                line += piece
        lines.append(line)
    return "\n".join(lines)


def layout_drawing():
    text = LAYOUT.read_text()
    m = re.search(r"<!-- layers: scripts/layers.py --drawing -->\n```\n(.*?)\n```", text, re.S)
    return m.group(1) if m else None


def main(argv):
    order = layers()
    found, problems = check(order)
    if "--drawing" in argv:
        print(drawing(order, found))
        return 0
    if "--check-drawing" in argv:
        have = layout_drawing()
        want = drawing(order, found)
        if have != want:
            print("docs/layout.md's layer drawing is not the tree's; put this under its marker "
                  "(<!-- layers: scripts/layers.py --drawing -->):\n" + want)
            return 1
        print("docs/layout.md draws the layers as the tree has them")
        return 0
    for p in problems:
        print(p)
    files = sum(len(v) for v in found.values())
    if problems:
        print(f"layers.py: {len(problems)} problem(s) in {files} files")
        return 1
    print(f"layers.py: {files} files in {len(order)} layers "
          f"({' < '.join(order)}); every call goes down or sideways, "
          f"but for {len(HOOKS)} hooks: " + "; ".join(d for d, _ in HOOKS.values())
          + f"; every type named is of its layer or below, but for {len(TYPES)} (TYPES): "
          + ", ".join(TYPES))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
