"""Shared test fixtures: the book's root folder."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def root() -> Path:
    return ROOT


def pytest_collection_modifyitems(items):
    """Mark every test under tests/book as `book`, so `make booktests` can select them beside the slow unit tests."""
    book = ROOT / "tests" / "book"
    for item in items:
        if book in item.path.parents:
            item.add_marker(pytest.mark.book)
