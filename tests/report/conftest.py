"""The report tests use the web tests' labelled toy datasets."""

from tests.web.conftest import labelled_no_video, labelled_toy

__all__ = ["labelled_no_video", "labelled_toy"]
