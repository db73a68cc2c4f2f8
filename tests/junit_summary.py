"""Prints one line with the pytest totals of every suite ctest ran
(the JUnit files the e2e, fault and deployment suites write), so a run's
log says how many tests passed, failed and were skipped, not only how many
ctest entries did.

    python3 tests/junit_summary.py BUILD_DIR/junit
"""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def main(directory: str) -> int:
    parts = []
    for path in sorted(Path(directory).glob("*.xml")):
        try:
            root = ET.parse(path).getroot()
        except (ET.ParseError, OSError) as e:
            parts.append(f"{path.stem} unreadable ({e})")
            continue
        suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
        n = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
        # pytest writes an expected failure as <skipped type="pytest.xfail">:
        # a known limit the test reports, not a test that did not run.
        xfailed = sum(1 for s in suites for case in s.iter("testcase")
                      for sk in case.findall("skipped") if sk.get("type") == "pytest.xfail")
        skipped = n["skipped"] - xfailed
        passed = n["tests"] - n["failures"] - n["errors"] - n["skipped"]
        part = (f"{path.stem} {passed} passed / {n['failures'] + n['errors']} failed / "
                f"{skipped} skipped")
        if xfailed:
            part += f" / {xfailed} expected failures"
        parts.append(part)
    print("pytest totals: " + ("; ".join(parts) if parts else f"no JUnit files in {directory}"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build-test/junit"))
