#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Four habits of the source tree (DEVELOPERS.md), checked:

  1. every source file carries an SPDX licence line in its first lines;
  2. no measured figure sits in a code comment of the library's sources (Sources/,
     nats/, include/): comments say why and name the section of docs/perf-notes.md that
     holds the measurement, so that it is kept and corrected in one place;
  3. README.md stays a front page: at most README_MAX_LINES lines.  It regrew by 75
     lines in one round once, a section at a time; what goes past the budget belongs
     in a guide under docs/, linked from README's Guides;
  4. the symbolic links through which SwiftPM's CQtbusNATS target sees the bridge's
     sources and the public headers (LINKS) stay links: a tool that writes through one
     (a formatter did) leaves a copy that drifts from the original unseen.

    scripts/source-check.py          check all four; exit 1 and list what is wrong
    scripts/source-check.py --spdx   add the missing SPDX lines (after a shebang)
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SPDX = "SPDX-License-Identifier: MIT"
COMMENT = {".swift": "//", ".c": "//", ".h": "//", ".cpp": "//", ".hpp": "//",
           ".py": "#", ".sh": "#", ".cmake": "#"}
# A measurement: a profiler's name, a count of instructions, a time in ns, a ratio to raw.
README_MAX_LINES = 320
LINKS = {"Sources/CQtbusNATS/include/qtbus.h": "../../../include/qtbus.h",
         "Sources/CQtbusNATS/include/qtbus_nats.h": "../../../include/qtbus_nats.h",
         "Sources/CQtbusNATS/nats": "../../nats"}
FIGURE = re.compile(r"callgrind|perf stat|\d (more )?instructions|\d[\d.,]* ?ns\b|[\d.]+x raw|per million")


def tracked():
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True)
    return [ROOT / p for p in out.stdout.splitlines()]


def source_files():
    for path in tracked():
        rel = path.relative_to(ROOT)
        if path.suffix in COMMENT or path.name == "CMakeLists.txt":
            if rel.parts[0] in ("abi",) or not path.exists():
                continue
            yield path


def has_spdx(path):
    with open(path, errors="replace") as f:
        head = [next(f, "") for _ in range(3)]
    return any(SPDX in line for line in head)


def add_spdx(path):
    text = path.read_text()
    mark = COMMENT.get(path.suffix, "#")
    # C keeps to block comments (the headers compile as C89 too, where // is not C).
    line = f"/* {SPDX} */\n" if path.suffix in (".c", ".h") else f"{mark} {SPDX}\n"
    # A shebang, and a manifest's swift-tools-version, must stay the first line.
    if text.startswith("#!") or text.startswith("// swift-tools-version"):
        first, _, rest = text.partition("\n")
        path.write_text(first + "\n" + line + rest)
    else:
        path.write_text(line + text)


def figures():
    problems = []
    for path in tracked():
        rel = path.relative_to(ROOT)
        if rel.parts[0] not in ("Sources", "nats", "include") or path.suffix not in COMMENT:
            continue
        if ".docc" in str(rel) or not path.exists():
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            stripped = line.strip()
            is_comment = stripped.startswith(("//", "/*", "*", "#"))
            if is_comment and FIGURE.search(stripped):
                problems.append(f"{rel}:{n}: a measured figure in a comment (move it to "
                                f"docs/perf-notes.md and name the section): {stripped[:90]}")
    return problems


def readme_length():
    lines = len((ROOT / "README.md").read_text().splitlines())
    if lines <= README_MAX_LINES:
        return []
    return [f"README.md: {lines} lines, over its budget of {README_MAX_LINES} "
            f"(scripts/source-check.py, README_MAX_LINES): move a section into a guide under "
            f"docs/ and link it from README's Guides, rather than raise the budget"]


def links():
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-s", "--", *LINKS],
                         capture_output=True, text=True, check=True).stdout
    modes = {line.split("\t", 1)[1]: line.split()[0] for line in out.splitlines()}
    problems = []
    for path, target in LINKS.items():
        if modes.get(path) != "120000":
            problems.append(f"{path}: not a symbolic link in git (mode {modes.get(path, 'absent')}): "
                            f"make it one again, to {target}")
        elif (ROOT / path).is_symlink() and str((ROOT / path).readlink()) != target:
            problems.append(f"{path}: links to {(ROOT / path).readlink()}, not {target}")
    return problems


def main(argv):
    if "--spdx" in argv:
        added = [p for p in source_files() if not has_spdx(p)]
        for p in added:
            add_spdx(p)
        print(f"source-check: added the SPDX line to {len(added)} files")
        return 0
    sources = list(source_files())
    problems = [f"{p.relative_to(ROOT)}: no '{SPDX}' line in its first three lines"
                for p in sources if not has_spdx(p)]
    problems += figures()
    problems += readme_length()
    problems += links()
    for p in problems:
        print(p)
    if problems:
        print(f"source-check: {len(problems)} problem(s); `scripts/source-check.py --spdx` adds SPDX lines")
        return 1
    print(f"source-check: {len(sources)} source files carry the SPDX line; "
          f"no measured figure in the library's comments; README.md within {README_MAX_LINES} lines; "
          f"the {len(LINKS)} links of CQtbusNATS are links")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
