"""The review command's tests use the web tests' labelled toy dataset."""

from tests.web.conftest import labelled_toy

__all__ = ["labelled_toy"]
