"""Model judges over real HTTP: the real strands model classes against the loopback fake server.

Every test starts ``tests.fake_vlm.FakeVLM`` on 127.0.0.1 (a free port), points a judge at
it and reads the request bodies the server logged (docs/judge.md, "Model judges over the
wire").
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import asdict

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from strands_robots.episode_labels import read_labels, record_deterministic_verdicts
from strands_robots.judges import RetryPolicy, run_judge
from strands_robots.judges.retry import ModelServerUnreachableError
from strands_robots.judges.wire import NOT_REPEATED
from tests.fake_vlm import FakeVLM, Step
from tests.synth import make_v3_dataset

FAST = RetryPolicy(max_attempts=4, initial_delay=0.05, max_delay=0.1)
CAMERAS = ("observation.images.front", "observation.images.wrist")
LABEL = re.compile(r"^frame (\d+), camera (observation\.images\.\w+):$")

#: provider -> (spec, which URL of the server)
PROVIDERS = {
    "openai": ("openai:fake-vlm", "openai_url"),
    "ollama": ("ollama:fake-vlm", "url"),
    "litellm": ("litellm:openai/fake-vlm", "openai_url"),
}


@pytest.fixture
def cams(tmp_path):
    """Three 12-frame episodes with two cameras (32 x 24 H.264) and verdicts."""
    root = make_v3_dataset(tmp_path / "cams", [12, 12, 12], video=True, cameras=CAMERAS)
    record_deterministic_verdicts(root, [{"episode": e, "success": e != 2} for e in range(3)])
    return root


@pytest.fixture
def server():
    with FakeVLM() as s:
        yield s


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a local server needs none


def judge(server, provider, root, **kwargs):
    spec, which = PROVIDERS[provider]
    kwargs.setdefault("retry", FAST)
    kwargs.setdefault("frames", 2)
    return run_judge(root, model=spec, base_url=getattr(server, which), **kwargs)


def labelled_images(provider, body):
    """``[(label, image)]`` of a request body in order; a label is the text right before its image."""
    pairs = []
    if provider == "ollama":
        for message in body["messages"]:
            for image in message.get("images") or []:
                pairs.append((message.get("content", ""), image))
        return pairs
    for message in body["messages"]:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for before, part in zip([None, *content], content, strict=False):
            if part.get("type") == "image_url":
                label = before.get("text") if before and before.get("type") == "text" else None
                pairs.append((label, part["image_url"]["url"]))
    return pairs


def assert_cost_matches(report, server):
    cost = report.cost()
    totals = server.totals()
    assert asdict(cost) == totals, (cost, totals)


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_each_image_follows_its_label_and_is_sent_once(server, cams, provider):
    report = judge(server, provider, cams, episodes=[1])
    assert [r.ok for r in report.results] == [True], report.results
    with_images = [e for e in server.log if e.images]
    assert len(with_images) == 1  # the request answering sample_frames; none before, none after
    pairs = labelled_images(provider, with_images[0].body)
    labels = [LABEL.match(label or "") for label, _ in pairs]
    assert all(labels), [label for label, _ in pairs]
    assert [(int(m.group(1)), m.group(2)) for m in labels] == [
        (0, CAMERAS[0]),
        (0, CAMERAS[1]),
        (11, CAMERAS[0]),
        (11, CAMERAS[1]),
    ]
    assert sum(e.images for e in server.log) == 4  # 2 frames x 2 cameras, once in the whole conversation
    later = server.log[server.log.index(with_images[0]) + 1 :]
    assert later and all(e.images == 0 for e in later)
    assert any(NOT_REPEATED in str(e.body) for e in later)  # the history says where the images were
    assert_cost_matches(report, server)
    judge_block = read_labels(cams)["episodes"]["1"]["judge"]
    assert judge_block["quality"] == "medium"


def test_openai_without_streaming(server, cams):
    from strands_robots.tools.episode_judge import create_judge_agent

    agent = create_judge_agent("openai:fake-vlm", base_url=server.openai_url, callback_handler=None)
    agent.model.inner.update_config(stream=False)
    agent(f'Label episode 0 of the dataset at "{cams}". Sample 2 frames each, with images.')
    assert [e.body["stream"] for e in server.log] == [False] * len(server.log)
    (request,) = [e for e in server.log if e.images]
    assert [LABEL.match(label).group(1) for label, _ in labelled_images("openai", request.body)] == [
        "0",
        "0",
        "11",
        "11",
    ]
    assert asdict(agent.model.cost) == server.totals()


def test_the_same_frames_asked_again_are_not_sent_again(server, cams):
    ask = Step("tool", "sample_frames", {"root": str(cams), "episode": 0, "n_frames": 2, "include_images": True})
    server.push(Step(), ask, ask)  # verdict, then the same images three times
    report = judge(server, "openai", cams, episodes=[0])
    assert report.results[0].ok
    assert [e.images for e in server.log if e.images] == [4]
    assert report.cost().images == 4
    assert_cost_matches(report, server)


def test_no_images_means_none_whatever_the_model_asks(server, cams):
    ask = Step("tool", "sample_frames", {"root": str(cams), "episode": 0, "n_frames": 3, "include_images": True})
    server.push(Step(), ask)
    report = judge(server, "openai", cams, episodes=[0], images=False)
    assert report.results[0].ok
    assert server.totals()["images"] == 0 and report.cost().images == 0
    answers = [m for m in server.log[2].body["messages"] if m["role"] == "tool"]
    assert "Images are switched off for this run (--no-images)" in str(answers[-1])


def test_a_looping_model_is_stopped_at_the_request_limit(server, cams):
    again = Step("tool", "load_episode", {"root": str(cams), "episode": 0})
    server.push(*[again] * 20)
    report = judge(server, "openai", cams, episodes=[0], max_requests_per_episode=5)
    (result,) = report.results
    assert not result.ok and result.error.startswith("RequestLimitError: the conversation reached 5 model requests")
    assert len(server.log) == 5 and result.cost.requests == 5
    assert_cost_matches(report, server)


FAULTS = {
    "500": [Step("status", status=500)],
    "429": [Step("status", status=429, text="slow down")],
    "dropped connection": [Step("drop")],
    "malformed tool JSON": [Step("malformed", "read_predicate_verdict")],
    "unknown tool": [Step("tool", "no_such_tool", {"x": 1})],
    "invalid quality": [
        Step(),
        Step(),
        Step("tool", "write_label", {"root": "ROOT", "episode": 0, "quality": "great"}),
    ],
    "slow server": [Step(delay=4.0)],  # the client gives up after 2 s (timeout=2) and asks again
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_fault_table(server, cams, provider, fault):
    steps = [
        Step(
            s.kind,
            s.name,
            {k: str(cams) if v == "ROOT" else v for k, v in s.arguments.items()},
            s.text,
            s.status,
            s.delay,
        )
        for s in FAULTS[fault]
    ]
    server.push(*steps)
    report = judge(server, provider, cams, episodes=[0], frames=1, timeout=2.0 if fault == "slow server" else 30.0)
    (result,) = report.results
    assert result.ok, (provider, fault, result.error)
    assert "judge" in read_labels(cams)["episodes"]["0"]
    # verdict, frames, label, final text and one more: the retried request or the model's second try
    assert len(server.log) == 5, [(e.reply, e.status) for e in server.log]
    assert_cost_matches(report, server)


def test_a_credentials_error_is_not_retried(server, cams):
    server.push(Step("status", status=401, text="Incorrect API key provided"))
    report = judge(server, "openai", cams, episodes=[0])
    (result,) = report.results
    assert not result.ok and "401" in result.error
    assert len(server.log) == 1


def test_a_dead_server_stops_the_run_with_one_message(cams):
    with FakeVLM() as gone:
        url = gone.openai_url
    start = time.perf_counter()
    with pytest.raises(ModelServerUnreachableError, match=re.escape(url)) as caught:
        run_judge(cams, model="openai:fake-vlm", base_url=url, workers=2, retry=FAST)
    assert time.perf_counter() - start < 15
    in_a_row = int(re.search(r"(\d+) requests in a row were refused", str(caught.value)).group(1))
    assert 3 <= in_a_row <= 4  # two workers: one more may fail while the third failure stops the run
    assert "labels written so far are kept" in str(caught.value)
    assert all("judge" not in r for r in read_labels(cams)["episodes"].values())


def test_the_cli_prints_the_cost_and_takes_the_options(server, cams):
    from typer.testing import CliRunner

    from strands_robots.cli.main import app

    result = CliRunner().invoke(
        app,
        [
            "judge",
            str(cams),
            "--model",
            "openai:fake-vlm",
            "--base-url",
            server.openai_url,
            "--frames",
            "1",
            "--timeout",
            "30",
            "--max-requests-per-episode",
            "6",
            "--no-images",
        ],
    )
    assert result.exit_code == 0, result.output
    totals = server.totals()
    assert totals["requests"] == 12 and totals["images"] == 0  # 3 episodes x (verdict, frames, label, final text)
    run_row = next(line for line in result.output.splitlines() if line.strip("│ ").startswith("run"))
    numbers = [int(n.replace(",", "")) for n in re.findall(r"[\d,]+", run_row)]
    assert numbers == [totals["requests"], totals["request_bytes"], 0, totals["input_tokens"], totals["output_tokens"]]


def test_llamacpp_over_http_keeps_labels_and_works_across_episodes(server, cams):
    report = run_judge(cams, model="llamacpp:fake-vlm", base_url=server.url, episodes=[0, 1], frames=2, retry=FAST)
    assert [r.ok for r in report.results] == [True, True], report.results  # a new event loop per episode
    requests = [e for e in server.log if e.images]
    assert len(requests) == 2
    for request in requests:
        labels = [label for label, _ in labelled_images("openai", request.body)]
        assert [LABEL.match(label).group(1) for label in labels] == ["0", "0", "11", "11"]
    assert_cost_matches(report, server)


def _events(value, out):
    """Texts and images of a formatted request, in document order."""
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            out.append(("text", value["text"]))
        if "image" in value or value.get("type") == "image" or "inline_data" in value or "inlineData" in value:
            out.append(("image", None))
        for key, item in value.items():
            if key not in ("text", "image", "inline_data", "inlineData", "source"):
                _events(item, out)
    elif isinstance(value, list):
        for item in value:
            _events(item, out)
    return out


@pytest.mark.parametrize("provider", ["bedrock", "anthropic", "gemini"])
def test_the_request_of_every_other_provider_puts_each_label_before_its_image(cams, provider, monkeypatch):
    """bedrock, anthropic, gemini: their strands classes format the conversation a judge sends."""
    from strands_robots.judges.wire import shape_messages
    from strands_robots.model_spec import PROVIDERS, build_model
    from strands_robots.tools.episode_judge import make_judge_tools

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")  # nothing is called
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "example")
    tools = make_judge_tools(roots=[cams])
    result = tools.sample_frames(root=str(cams), episode=0, n_frames=2, include_images=True)
    messages = [
        {"role": "user", "content": [{"text": "Label episode 0."}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "sample_frames", "input": {}}}]},
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "t1", "status": "success", "content": result["content"]}}],
        },
    ]
    kwargs = {
        "bedrock": {},
        "anthropic": {"client_args": {"api_key": "test"}, "max_tokens": 100},
        "gemini": {"client_args": {"api_key": "test"}},
    }[provider]
    inner = build_model(f"{provider}:m", **kwargs)
    shaped = shape_messages(messages, PROVIDERS[provider].layout)
    request = inner._format_request(shaped, None, None, None) if provider == "gemini" else inner.format_request(shaped)
    events = _events(request, [])
    images = [i for i, (kind, _) in enumerate(events) if kind == "image"]
    assert len(images) == 4
    labels = [events[i - 1][1] for i in images]
    assert [LABEL.match(label).groups() for label in labels] == [
        ("0", CAMERAS[0]),
        ("0", CAMERAS[1]),
        ("11", CAMERAS[0]),
        ("11", CAMERAS[1]),
    ]


#: provider -> environment of a fake account (nothing leaves the machine: the clients talk to the fake server).
OTHER_PROVIDERS = {
    "bedrock": {
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "example-secret",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
    },
    "anthropic": {"ANTHROPIC_API_KEY": "test-key"},
    "gemini": {"GOOGLE_API_KEY": "test-key", "GEMINI_API_KEY": "test-key"},
}


def wire_events(provider, body):
    """Texts and images of a request body as the server received it, in document order."""
    return _events(body.get("contents") if provider == "gemini" else body.get("messages"), [])


@pytest.mark.parametrize("provider", sorted(OTHER_PROVIDERS))
def test_other_providers_over_http_send_each_image_after_its_label_once(server, cams, provider, monkeypatch):
    """bedrock (ConverseStream), anthropic (Messages, streaming), gemini (streamGenerateContent) over real HTTP."""
    for name, value in OTHER_PROVIDERS[provider].items():
        monkeypatch.setenv(name, value)
    report = run_judge(cams, model=f"{provider}:fake-vlm", base_url=server.url, episodes=[1], frames=2, retry=FAST)
    assert [r.ok for r in report.results] == [True], report.results
    paths = {e.path for e in server.log}
    assert (
        paths
        == {
            "bedrock": {"/model/fake-vlm/converse-stream"},
            "anthropic": {"/v1/messages"},
            "gemini": {"/v1beta/models/fake-vlm:streamGenerateContent"},
        }[provider]
    )
    assert len(server.log) == 4  # verdict, frames, label, final text
    with_images = [e for e in server.log if e.images]
    assert [server.log.index(e) for e in with_images] == [2]  # the request answering sample_frames, only
    events = wire_events(provider, with_images[0].body)
    images = [i for i, (kind, _) in enumerate(events) if kind == "image"]
    assert len(images) == 4  # 2 frames x 2 cameras
    assert [LABEL.match(events[i - 1][1]).groups() for i in images] == [
        ("0", CAMERAS[0]),
        ("0", CAMERAS[1]),
        ("11", CAMERAS[0]),
        ("11", CAMERAS[1]),
    ]
    assert sum(e.images for e in server.log) == 4  # each image once in the whole conversation
    assert NOT_REPEATED in json.dumps(server.log[3].body)  # the history says where the images were
    assert read_labels(cams)["episodes"]["1"]["judge"]["quality"] == "medium"
    cost, totals = asdict(report.cost()), server.totals()
    assert cost == totals, (cost, totals)


#: litellm routes of its own HTTP client (not the OpenAI SDK) -> environment of a fake account.
LITELLM_ROUTES = {
    "ollama_chat": {},
    "anthropic": {"ANTHROPIC_API_KEY": "test-key"},
    "gemini": {"GEMINI_API_KEY": "test-key"},
}


@pytest.mark.parametrize("route", sorted(LITELLM_ROUTES))
def test_litellm_routes_of_its_own_http_client_count_request_bytes(server, cams, route, monkeypatch):
    for name, value in LITELLM_ROUTES[route].items():
        monkeypatch.setenv(name, value)
    report = run_judge(cams, model=f"litellm:{route}/fake-vlm", base_url=server.url, episodes=[0], frames=2, retry=FAST)
    assert [r.ok for r in report.results] == [True], report.results
    totals = server.totals()
    assert totals["requests"] == 4 and totals["images"] == 4
    assert asdict(report.cost()) == totals  # request bytes included: the server's own count


def test_request_bytes_are_unknown_when_an_answered_request_bypassed_the_meter():
    import asyncio
    from types import SimpleNamespace

    from strands_robots.judges.wire import WireModel
    from tests.judges.judge_fakes import ScriptedModel

    untouched = SimpleNamespace(bytes=0, requests=0, url=None)  # a byte meter no request passes
    wire = WireModel(ScriptedModel([("text", "hi")]), meter=untouched)
    wire.start_episode()
    assert wire.cost.request_bytes == 0

    async def one_request():
        return [event async for event in wire.stream([{"role": "user", "content": [{"text": "hello"}]}])]

    asyncio.run(one_request())
    assert wire.cost.requests == 1
    assert wire.cost.request_bytes is None  # answered, yet no body passed the hook: not a made-up 0


def test_the_cli_stops_at_a_dead_server_with_one_message_and_status_2(cams):
    import subprocess
    import sys

    with FakeVLM() as gone:
        url = gone.openai_url
    command = [sys.executable, "-m", "strands_robots.cli.main", "judge", str(cams), "--model", "openai:m"]
    done = subprocess.run([*command, "--base-url", url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("no model server answers at") == 1 and url in done.stderr


def test_parallel_conversations_write_every_label(server, cams):
    report = judge(server, "openai", cams, workers=3)
    assert [r.ok for r in report.results] == [True, True, True], report.results
    assert all("judge" in r for r in read_labels(cams)["episodes"].values())
    assert report.cost().images == 3 * 2 * 2  # 3 episodes x 2 frames x 2 cameras, each once
    assert_cost_matches(report, server)
