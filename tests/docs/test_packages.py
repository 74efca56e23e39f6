"""Installed packages' documentation as files (``costeer_lab.docs._packages``): the text, the
suffix picked from the content type, the version, and the folder layout ingestion reads.

The packages are real distributions found by :mod:`importlib.metadata` on ``sys.path``: pandas
from the environment, and small ``*.dist-info`` folders written per test for the cases no
installed package pins down (a legacy ``Description`` header, no long description at all).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from costeer_lab.docs._packages import package_readme, write_package_readmes
from costeer_lab.errors import NotFoundError

MD = "Description-Content-Type: text/markdown\n"
RST = "Description-Content-Type: text/x-rst\n"
BODY = "# Fake package\n\nIt does *one* thing: naïve café — ☕.\n"


def _write_dist(
    site: Path, name: str, *, version: str = "1.2.3", headers: str = "", body: str = BODY
) -> None:
    """Write an installed distribution ``name`` (its METADATA only) into ``site``."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{headers}\n{body}"
    (info / "METADATA").write_text(meta, encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh folder on ``sys.path`` that installed distributions can be written into."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def test_pandas_readme_is_its_markdown_long_description_at_the_installed_version() -> None:
    text, suffix, version = package_readme("pandas")
    assert (suffix, version) == (".md", pd.__version__)
    assert "pandas" in text and "DataFrame" in text


@pytest.mark.parametrize(
    ("content_type", "suffix"),
    [
        ("text/markdown", ".md"),
        ("Text/Markdown; charset=UTF-8; variant=GFM", ".md"),
        ("text/x-rst", ".rst"),
        ("TEXT/X-RST; charset=UTF-8", ".rst"),
        ("text/plain", ".txt"),
        (None, ".txt"),
    ],
)
def test_the_suffix_comes_from_the_content_type_in_any_case(
    site: Path, content_type: str | None, suffix: str
) -> None:
    headers = f"Description-Content-Type: {content_type}\n" if content_type else ""
    _write_dist(site, "costeer-fake-pkg", version="0.4.1", headers=headers)
    assert package_readme("costeer-fake-pkg") == (BODY, suffix, "0.4.1")


def test_a_legacy_description_header_is_the_text_when_the_body_is_empty(site: Path) -> None:
    legacy = "Description: An old-style description.\n"
    _write_dist(site, "costeer-legacy", headers=legacy, body="")
    assert package_readme("costeer-legacy") == ("An old-style description.", ".txt", "1.2.3")


def test_the_body_wins_over_a_description_header(site: Path) -> None:
    headers = "Description: the short header.\nDescription-Content-Type: text/markdown\n"
    _write_dist(site, "costeer-both", headers=headers)
    assert package_readme("costeer-both") == (BODY, ".md", "1.2.3")


@pytest.mark.parametrize("body", ["", " \n\t\n"])
def test_a_package_without_a_long_description_is_named(site: Path, body: str) -> None:
    _write_dist(site, "costeer-bare", headers=MD, body=body)
    with pytest.raises(
        NotFoundError, match=r"^package 'costeer-bare' has no long description in its metadata$"
    ):
        package_readme("costeer-bare")


def test_a_package_that_is_not_installed_is_named() -> None:
    with pytest.raises(
        NotFoundError, match=r"^package 'costeer-lab-no-such-pkg' is not installed$"
    ):
        package_readme("costeer-lab-no-such-pkg")


def test_readmes_are_written_per_package_under_a_new_root(site: Path, tmp_path: Path) -> None:
    _write_dist(site, "costeer-md", version="2.0", headers=MD)
    _write_dist(site, "costeer-rst", version="3.1", headers=RST)
    root = tmp_path / "not" / "yet" / "there"
    versions = write_package_readmes(["costeer-md", "costeer-rst", "pandas"], str(root))
    assert versions == {"costeer-md": "2.0", "costeer-rst": "3.1", "pandas": pd.__version__}
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert files == ["costeer-md/README.md", "costeer-rst/README.rst", "pandas/README.md"]
    assert (root / "costeer-md" / "README.md").read_bytes() == BODY.encode("utf-8")
    assert (root / "pandas" / "README.md").read_text(encoding="utf-8") == package_readme("pandas")[
        0
    ]


def test_writing_again_refreshes_the_files_in_place(site: Path, tmp_path: Path) -> None:
    _write_dist(site, "costeer-md", headers=MD)
    root = tmp_path / "corpus"
    assert write_package_readmes(["costeer-md"], root) == {"costeer-md": "1.2.3"}
    (root / "costeer-md" / "README.md").write_text("stale", encoding="utf-8")
    assert write_package_readmes(["costeer-md"], root) == {"costeer-md": "1.2.3"}
    assert (root / "costeer-md" / "README.md").read_text(encoding="utf-8") == BODY


def test_no_names_write_nothing(tmp_path: Path) -> None:
    assert write_package_readmes([], tmp_path / "empty") == {}
    assert not (tmp_path / "empty").exists()


def test_a_missing_package_stops_the_writing_with_its_name(site: Path, tmp_path: Path) -> None:
    _write_dist(site, "costeer-md", headers=MD)
    with pytest.raises(NotFoundError, match=r"^package 'costeer-gone' is not installed$"):
        write_package_readmes(["costeer-md", "costeer-gone"], tmp_path / "out")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["costeer-md"]
