"""``--format junit``: JUnit XML for CI test-report views (GitLab, Jenkins, Azure, CircleCI).

``<testsuites>`` holds one ``<testsuite>`` per checked file. A file with findings has one
``<testcase>`` per diagnostic, each with a ``<failure type="CODE" message="...">``; a clean
file has a single passing ``<testcase>``. Text that XML 1.0 cannot carry (control characters)
is replaced, so the document always parses.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from dslint.diagnostics import Diagnostic
from dslint.report.common import ReportOptions, location

# Characters not allowed anywhere in an XML 1.0 document.
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else "\ufffd", text)


def _testcase(suite: ET.Element, name: str, classname: str, path: str, line: int | None = None) -> ET.Element:
    attrs = {"name": xml_text(name), "classname": xml_text(classname), "file": xml_text(path), "time": "0"}
    if line is not None:
        attrs["line"] = str(line)
    return ET.SubElement(suite, "testcase", attrs)


def _details(diagnostic: Diagnostic) -> str:
    line, column, _, _ = location(diagnostic)
    from dslint.report.text import context_lines

    head = f"{diagnostic.path}:{line}:{column}: {diagnostic.code} [{diagnostic.severity.label}] {diagnostic.message}"
    return "\n".join([head, *context_lines(diagnostic)])


def render(result, options: ReportOptions) -> str:
    by_path: dict[str, list[Diagnostic]] = {}
    for document in result.documents:
        by_path.setdefault(document.path, [])
    for diagnostic in result.diagnostics:
        by_path.setdefault(diagnostic.path, []).append(diagnostic)

    root = ET.Element("testsuites", {"name": "dslint"})
    total_tests = total_failures = 0
    for path, diagnostics in by_path.items():
        tests = max(1, len(diagnostics))
        suite = ET.SubElement(
            root,
            "testsuite",
            {"name": xml_text(path), "tests": str(tests), "failures": str(len(diagnostics)), "errors": "0", "skipped": "0", "time": "0"},
        )
        total_tests += tests
        total_failures += len(diagnostics)
        if not diagnostics:
            _testcase(suite, path, "dslint", path)
            continue
        for diagnostic in diagnostics:
            line, column, _, _ = location(diagnostic)
            case = _testcase(suite, f"{diagnostic.code} {diagnostic.name} at {path}:{line}:{column}", f"dslint.{diagnostic.code}", path, line)
            failure = ET.SubElement(
                case,
                "failure",
                {"type": diagnostic.code, "message": xml_text(diagnostic.message)},
            )
            failure.text = xml_text(_details(diagnostic))
    root.set("tests", str(total_tests))
    root.set("failures", str(total_failures))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
