"""Model judges from specs: providers, ``base_url``, the CLI option (no network, objects only)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must not fetch its price list

from strands_robots.model_spec import LOCAL_API_KEY, PROVIDERS, ModelSpecError, build_model, parse_model_spec
from strands_robots.tools.episode_judge import create_judge_agent


def test_the_parser_knows_gemini_and_litellm():
    assert parse_model_spec("GEMINI:gemini-2.5-flash").provider == "gemini"
    assert str(parse_model_spec("litellm:openai/gpt-4o-mini")) == "litellm:openai/gpt-4o-mini"
    assert {"gemini", "litellm", "openai", "bedrock", "anthropic", "ollama", "llamacpp"} <= set(PROVIDERS)
    with pytest.raises(ModelSpecError, match="gemini, litellm"):
        parse_model_spec("vertex:x")


def test_openai_spec_with_a_local_server(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = build_model("openai:Qwen/Qwen2.5-VL-7B-Instruct", base_url="http://localhost:8000/v1")
    assert type(model).__name__ == "OpenAIModel"
    assert model.get_config()["model_id"] == "Qwen/Qwen2.5-VL-7B-Instruct"
    assert model.client_args == {"base_url": "http://localhost:8000/v1", "api_key": LOCAL_API_KEY}
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    keyed = build_model("openai:gpt-4o", base_url="https://proxy.example/v1")
    assert keyed.client_args == {"base_url": "https://proxy.example/v1"}  # the SDK reads the key itself
    mine = build_model("openai:m", base_url="http://h:1/v1", client_args={"api_key": "k", "timeout": 5})
    assert mine.client_args == {"api_key": "k", "timeout": 5, "base_url": "http://h:1/v1"}


def test_gemini_and_litellm_models_are_built():
    gemini = build_model("gemini:gemini-2.5-flash", client_args={"api_key": "test"})
    assert type(gemini).__name__ == "GeminiModel" and gemini.get_config()["model_id"] == "gemini-2.5-flash"
    proxied = build_model("gemini:gemini-2.5-flash", base_url="http://localhost:9000", client_args={"api_key": "t"})
    assert proxied.client_args["http_options"] == {"base_url": "http://localhost:9000"}
    lite = build_model("litellm:ollama/llava", base_url="http://localhost:11434")
    assert type(lite).__name__ == "LiteLLMModel"
    assert lite.get_config()["model_id"] == "ollama/llava" and lite.client_args == {
        "api_base": "http://localhost:11434"
    }


def test_base_url_reaches_the_other_providers(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")  # bedrock needs credentials; nothing is called
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "example")
    llama = build_model("llamacpp:qwen", base_url="http://127.0.0.1:8080")
    assert llama.base_url == "http://127.0.0.1:8080"
    bedrock = build_model("bedrock:us.example.model-v1:0", base_url="https://bedrock.vpce.example")
    assert bedrock.client.meta.endpoint_url == "https://bedrock.vpce.example"


@pytest.mark.parametrize("bad", ["localhost:8000", "ftp://h/x", "http://", "", 8000])
def test_bad_base_urls_are_refused_with_an_example(bad):
    with pytest.raises(ModelSpecError, match="base_url"):
        build_model("openai:m", base_url=bad)


def test_base_url_needs_a_spec():
    from tests.judges.judge_fakes import ScriptedModel

    with pytest.raises(ModelSpecError, match="spec"):
        build_model(ScriptedModel([]), base_url="http://localhost:8000/v1")


def test_create_judge_agent_passes_base_url(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agent = create_judge_agent("openai:llava", base_url="http://localhost:11434/v1", callback_handler=None)
    assert agent.model.inner.client_args["base_url"] == "http://localhost:11434/v1"
    assert agent.judge_tools.config.judge_model == "openai:llava"


def test_run_judge_refuses_base_url_without_a_model(toy_with_verdicts):
    from strands_robots.judges import run_judge

    with pytest.raises(ModelSpecError, match="--model openai:MODEL --base-url URL"):
        run_judge(toy_with_verdicts, base_url="http://localhost:8000/v1")


def test_cli_base_url_option(toy_with_verdicts):
    from typer.testing import CliRunner

    from strands_robots.cli.main import app

    # run() turns these typed errors into exit status 2 with the message
    result = CliRunner().invoke(app, ["judge", str(toy_with_verdicts), "--base-url", "http://localhost:8000/v1"])
    assert isinstance(result.exception, ModelSpecError)
    assert "--model openai:MODEL --base-url URL" in str(result.exception)
    bad = CliRunner().invoke(app, ["judge", str(toy_with_verdicts), "--model", "openai:m", "--base-url", "nope"])
    assert isinstance(bad.exception, ModelSpecError) and "not an http(s) URL" in str(bad.exception)


def test_litellm_never_fetches_its_cost_map_and_needs_no_openai_key():
    """A fresh process without LITELLM_LOCAL_MODEL_COST_MAP or OPENAI_API_KEY: no fetch attempt, a placeholder key."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("LITELLM_LOCAL_MODEL_COST_MAP", "OPENAI_API_KEY")}
    code = (
        "from strands_robots.model_spec import build_model\n"
        "m = build_model('litellm:openai/m', base_url='http://127.0.0.1:9/v1')\n"
        "print(m.client_args['api_key'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == LOCAL_API_KEY
    assert "cost map" not in done.stderr.lower()
