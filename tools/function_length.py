#!/usr/bin/env python3
"""Lists C++/CUDA functions longer than a limit (project style: never over 150 lines).

A function's length is counted from the first line of its signature to its closing brace, inclusive.
The scan is lexical, not a compiler: comments, string/char literals and raw strings are blanked, then braces
are matched. A brace block is a function body when the text that opens it (since the previous ';', '{' or '}'
at the same depth) holds a parameter list and is neither a type/namespace header nor an initializer; blocks of
namespaces, classes, structs, unions and `extern "C"` are searched for the functions inside them. Lambdas and
local classes count as part of the function that holds them.

Usage: function_length.py [--max LINES] PATH...   (folders are searched for *.cpp *.hpp *.h *.cu *.cuh)
Exit status: 0 when none is over the limit, 1 when some are (each printed as FILE:LINE: NAME: N lines), 2 on
bad usage.
"""
import os
import re
import sys

SUFFIXES = (".cpp", ".hpp", ".h", ".cu", ".cuh", ".cc")
CONTAINER = re.compile(r"^(template\s*<.*>\s*)?(inline\s+)?(namespace|class|struct|union|enum)\b|^extern\s*$",
                       re.S)


def blank_literals(text):
    """The source with comments and literals replaced by spaces (newlines kept, so line numbers hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\\s]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            close = ")" + m.group(1) + '"'
            j = text.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator: 1'000'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * max(0, j - i - 2) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_preprocessor(text):
    """Blanks preprocessor lines (and their continuations): `#define X {` must not open a block."""
    lines = text.split("\n")
    in_directive = False
    for k, line in enumerate(lines):
        if in_directive or line.lstrip().startswith("#"):
            in_directive = line.rstrip().endswith("\\")
            lines[k] = ""
    return "\n".join(lines)


def function_name(header):
    """The name before the parameter list of a function header (the last identifier before its '(')."""
    depth, k = 0, len(header) - 1
    # The parameter list is the last top-level (...) before any trailing qualifiers / member initializers.
    first_top_paren = None
    for m in range(len(header)):
        ch = header[m]
        if ch == "(":
            if depth == 0 and first_top_paren is None:
                first_top_paren = m
            depth += 1
        elif ch == ")":
            depth -= 1
    k = first_top_paren if first_top_paren is not None else len(header)
    m = re.search(r"([~\w:]+(?:\s*operator\s*[^\s(]+|<[^<>()]*>)?)\s*$", header[:k])
    return m.group(1) if m else header[:k].strip()[-40:]


def classify(header):
    """'container', 'function' or 'other' for the text that opens a brace block."""
    h = " ".join(header.split())
    if not h or CONTAINER.match(h) or h.endswith("extern \"\"") or h == 'extern ""':
        return "container"
    if "(" not in h:
        return "other"  # initializer, enum body, plain block
    before_paren = h.split("(", 1)[0]
    if re.search(r"(^|[^=!<>+\-*/%&|^])=($|[^=])", before_paren) and "operator" not in before_paren:
        return "other"  # `auto x = f(...) {` style initializers
    if re.search(r"\b(if|for|while|switch|catch|return)\s*$", before_paren):
        return "other"
    return "function"


def functions(text):
    """(first line, last line, name) of every function body, outermost only."""
    src = strip_preprocessor(blank_literals(text))
    found = []
    line = 1
    header_start = 0  # index where the current statement/header began
    stack = []  # per open brace: (kind, header_start_line, name)
    k, n = 0, len(src)
    while k < n:
        c = src[k]
        if c == "\n":
            line += 1
        elif c == "{":
            header = src[header_start:k]
            in_function = any(kind == "function" for kind, _, _ in stack)
            kind = "inner" if in_function else classify(header)
            lead = len(header) - len(header.lstrip())
            start_line = line - header.count("\n") + header[:lead].count("\n")
            stack.append((kind, start_line, function_name(header) if kind == "function" else ""))
            header_start = k + 1
        elif c == "}":
            if stack:
                kind, start_line, name = stack.pop()
                if kind == "function":
                    found.append((start_line, line, name))
            header_start = k + 1
        elif c == ";":
            header_start = k + 1
        elif c == ":" and re.fullmatch(r"\s*(public|private|protected)\s*", src[header_start:k]):
            header_start = k + 1  # an access specifier ends nothing but itself
        k += 1
    return found


def source_files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                for name in sorted(names):
                    if name.endswith(SUFFIXES):
                        yield os.path.join(root, name)
        else:
            yield p


def main(argv):
    limit, paths = 150, []
    args = iter(argv)
    for a in args:
        if a == "--max":
            try:
                limit = int(next(args))
            except (StopIteration, ValueError):
                print("error: --max needs a number of lines", file=sys.stderr)
                return 2
        else:
            paths.append(a)
    if not paths:
        print(__doc__.strip().split("\n\n")[-2], file=sys.stderr)
        return 2
    over = []
    for path in sorted(source_files(paths)):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for first, last, name in functions(text):
            length = last - first + 1
            if length > limit:
                over.append((path, first, name, length))
    for path, first, name, length in over:
        print(f"{path}:{first}: {name}: {length} lines (limit {limit})")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
