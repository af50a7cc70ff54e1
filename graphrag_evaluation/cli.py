"""``graphrag-index`` (``graphrag_assets.cli``) running this code location's definitions."""

import sys

from graphrag_assets.cli import main as index

from .code_location import CODE_LOCATION


def main(argv: list[str] | None = None) -> int:
    """``graphrag-index``; ``argv`` None means the command line of this process."""
    return index(argv, CODE_LOCATION)


if __name__ == "__main__":
    sys.exit(main())
