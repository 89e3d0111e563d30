"""The pages write their sidecars only as regular files of the dataset root (docs/review.md,
"Security"): a symbolic link planted at a sidecar's name is refused by name (409 JSON) and the
link's target, outside the root, is neither created nor changed."""

from __future__ import annotations

import pytest

from tests.web.conftest import WRITE, client_for
from tests.web.test_segment_page import SEGMENTS

REVIEW = {
    "decision": "overrule_verdict",
    "reviewer": "ana",
    "note": "link test",
    "verdict_seen": None,
    "judge_seen": None,
}


@pytest.mark.parametrize("dangling", [True, False])
@pytest.mark.parametrize(
    ("sidecar", "path", "body"),
    [
        ("episode_labels.json", "/api/episodes/2/review", REVIEW),
        ("episode_segments.json", "/api/segment/episodes/0", {"segments": SEGMENTS}),
    ],
)
def test_a_link_at_a_sidecar_name_is_refused_and_its_target_untouched(
    labelled_toy, tmp_path, sidecar, path, body, dangling
):
    outside = tmp_path / "outside" / sidecar
    outside.parent.mkdir()
    if not dangling:
        outside.write_bytes(b'{"not": "yours"}')
    link = labelled_toy / sidecar
    if link.exists():  # the labels sidecar of the fixture: move its bytes outside, keep a link in its place
        outside.write_bytes(link.read_bytes()) if not dangling else None
        link.unlink()
    before = outside.read_bytes() if outside.exists() else None
    link.symlink_to(outside)
    with client_for(labelled_toy) as client:
        response = client.post(path, json=body, headers=WRITE)
    assert response.status_code == 409, response.text
    assert "symbolic link" in response.json()["error"]
    assert (outside.read_bytes() if outside.exists() else None) == before
    assert sorted(p.name for p in outside.parent.iterdir()) == ([] if before is None else [sidecar])
