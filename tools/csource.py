"""csource.py - reading the C sources of src/ as text, for the core checks
(tools/check_loops.py, tools/check_fields.py): the files, and their text
with comments and string literals blanked so that a match is code."""
import os
import re


def blank(text):
    """Comments and string / char literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c if j - i >= 2 else text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sources(root):
    files = []
    for d, _, names in os.walk(os.path.join(root, "src")):
        for f in names:
            if f.endswith((".c", ".h")):
                files.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(files)
