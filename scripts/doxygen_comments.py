#!/usr/bin/python3
"""Converts the declaration comments of a C header to Doxygen's form, mechanically.

    /usr/bin/python3 scripts/doxygen_comments.py IN.h [OUT.h]     (OUT.h defaults to stdout)

The public headers document every declaration with a plain C comment right above it.
Doxygen reads only its own comment forms, so this rewrites, without changing any text:

  - the file comment (the first comment of the file) into `/** \\file NAME ... */`;
  - a comment block that ends on the line directly above a declaration (a function, a
    typedef, a struct, an enum or a macro; no blank line between) into `/** ... */`;
  - the trailing comment of an enum value (`DINPUT_X = 3 /* ... */`) into `/**< ... */`.

Other comments (section banners, which a blank line separates from what follows, and
comments inside preprocessor plumbing) are left alone. Inside converted comments, outside
`code spans`, the characters Doxygen would read as commands or HTML are escaped: a
backslash, `@`, and `<` before a letter. A comment that documents a run of declarations documents only the first
of them; Doxygen then reports the others as undocumented, which is the point: every public
declaration needs its own comment.
"""

import re
import sys

# A line that starts a declaration a comment may document.
DECLARATION = re.compile(
    r"^(DINPUT_API\b|typedef\b|struct\b|enum\b|#\s*define\s+DINPUT_\w+|\s+DINPUT_[A-Z0-9_]+\s*(=|,|$))")
# Macros that are plumbing, not API: the include guard.
GUARD = re.compile(r"^#\s*define\s+DINPUT(_CUDA)?_H\s*$")
ENUM_VALUE_TRAILING = re.compile(r"^(\s+DINPUT_[A-Z0-9_]+\s*=\s*[^/]*?)\s*/\*(?!\*)(.*?)\*/\s*$")


def escape_text(text):
    """Escapes what Doxygen would take for a command or an HTML tag."""
    text = text.replace("\\", "\\\\")
    text = text.replace("@", "\\@")
    return re.sub(r"<(?=[A-Za-z/])", r"\\<", text)


def escape_lines(lines):
    """escape_text outside `code spans`, which Doxygen shows verbatim (a span may cross
    lines, so the state carries from line to line)."""
    in_code = False
    out = []
    for line in lines:
        parts = line.split("`")
        for k, part in enumerate(parts):
            if k > 0:
                in_code = not in_code
            if not in_code:
                parts[k] = escape_text(part)
        out.append("`".join(parts))
    return out


def comment_blocks(lines):
    """Yields (first, last) line indexes of every comment that starts a line."""
    i = 0
    while i < len(lines):
        stripped = lines[i].lstrip()
        if stripped.startswith("/*") and not stripped.startswith("/**"):
            j = i
            while "*/" not in lines[j]:
                j += 1
            # Only comments that are alone on their lines (nothing after the closing */).
            if lines[j].split("*/", 1)[1].strip() == "":
                yield i, j
            i = j + 1
        else:
            i += 1


def convert_block(lines, first, last, file_name=None):
    block = lines[first:last + 1]
    body = escape_lines(block)
    indent = block[0][: len(block[0]) - len(block[0].lstrip())]
    body[0] = body[0].replace("/*", "/**", 1)
    if file_name is not None:
        # "/**\n * \file NAME\n * ..." keeps the file comment's own text below the command.
        if body[0].strip() == "/**":
            body.insert(1, indent + " * \\file " + file_name)
        else:
            text = body[0].split("/**", 1)[1]
            body[0:1] = [indent + "/**", indent + " * \\file " + file_name, indent + " *" + text]
    return body


def convert(text, file_name):
    lines = text.split("\n")
    replacements = {}
    blocks = list(comment_blocks(lines))
    if blocks and all(not lines[k].strip() for k in range(blocks[0][0])):
        first, last = blocks[0]
        replacements[first] = (last, convert_block(lines, first, last, file_name))
        blocks = blocks[1:]
    for first, last in blocks:
        following = lines[last + 1] if last + 1 < len(lines) else ""
        if DECLARATION.match(following) and not GUARD.match(following):
            replacements[first] = (last, convert_block(lines, first, last))
    out = []
    i = 0
    while i < len(lines):
        if i in replacements:
            last, body = replacements[i]
            out.extend(body)
            i = last + 1
            continue
        m = ENUM_VALUE_TRAILING.match(lines[i])
        if m:
            out.append(m.group(1) + " /**<" + escape_lines([m.group(2)])[0] + "*/")
        else:
            out.append(lines[i])
        i += 1
    return "\n".join(out)


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        text = f.read()
    result = convert(text, argv[1].rsplit("/", 1)[-1])
    if len(argv) == 3:
        with open(argv[2], "w", encoding="utf-8") as f:
            f.write(result)
    else:
        sys.stdout.write(result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
