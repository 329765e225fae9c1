#!/usr/bin/python3
"""The docs.doxygen test: builds the API reference and fails unless it is complete.

    check_reference.py DOXYGEN DOXYFILE OUTPUT_DIR HEADER...

Doxygen runs with the project's Doxyfile, which turns every warning into a failure
(WARN_IF_UNDOCUMENTED with WARN_AS_ERROR), so an undocumented member of a documented file
fails the run. Doxygen says nothing, though, about the members of a header that has no file
comment in its own form: it treats the whole file as undocumented. So this also checks, in
Doxygen's XML output, that each header has its file comment and that every function the
header exports (each `DINPUT_API` declaration) is there with a description, which also
catches a declaration Doxygen failed to parse.
"""

import re
import subprocess
import sys
import xml.etree.ElementTree as ET


def exported_functions(header):
    with open(header, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    names = []
    for decl in re.findall(r"\bDINPUT_API\b([^;]*);", text):
        m = re.search(r"\b(dinput_\w+)\s*\(", decl)
        if m:
            names.append(m.group(1))
    return names


def described(element):
    """True when a compound or member has a brief or detailed description."""
    return any("".join(element.find(tag).itertext()).strip()
               for tag in ("briefdescription", "detaileddescription") if element.find(tag) is not None)


def main(argv):
    if len(argv) < 5:
        sys.stderr.write(__doc__)
        return 2
    doxygen, doxyfile, output_dir, headers = argv[1], argv[2], argv[3], argv[4:]
    run = subprocess.run([doxygen, doxyfile], cwd=output_dir, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(run.stdout)
    if run.returncode != 0:
        print(f"FAIL: doxygen exited with status {run.returncode} (every warning above is an error)")
        return 1
    xml_dir = f"{output_dir}/xml"
    index = ET.parse(f"{xml_dir}/index.xml").getroot()
    files = {c.findtext("name"): c.get("refid") for c in index.findall("compound") if c.get("kind") == "file"}
    failures = []
    for header in headers:
        name = header.rsplit("/", 1)[-1]
        if name not in files:
            failures.append(f"{name} is not in the reference")
            continue
        compound = ET.parse(f"{xml_dir}/{files[name]}.xml").getroot().find("compounddef")
        if not described(compound):
            failures.append(f"{name} has no file comment in Doxygen's form (/** \\file {name} ... */), "
                            "so Doxygen leaves its declarations out and reports none of them")
            continue
        functions = {m.findtext("name"): m for m in compound.iter("memberdef") if m.get("kind") == "function"}
        for function in exported_functions(header):
            if function not in functions:
                failures.append(f"{name}: {function} is missing from the reference (not parsed)")
            elif not described(functions[function]):
                failures.append(f"{name}: {function} is not documented")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
