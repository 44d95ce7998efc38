"""House style of the source that no linter checks."""

import re
from pathlib import Path

import mathlearn

BANNER = re.compile(r"^\s*#.*(-{4,}|={4,}|#{4,})")


def test_no_banner_comments():
    # Sections of a module are its functions and classes (one idea per module); comment
    # banners (# ---- name ----) only grow stale.
    src = Path(mathlearn.__file__).parent
    found = [
        f"{path.relative_to(src.parent)}:{i}: {line.strip()}"
        for path in sorted(src.rglob("*.py"))
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if BANNER.match(line)
    ]
    assert not found, "banner comments:\n" + "\n".join(found)


def test_typed_package():
    assert (Path(mathlearn.__file__).parent / "py.typed").is_file()
