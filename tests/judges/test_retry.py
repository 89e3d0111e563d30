"""One retry policy over every provider's errors (docs/judge.md, "Retries and timeouts").

The exceptions are the providers' own classes, built as their SDKs raise them.
"""

from __future__ import annotations

import os
import socket

import httpx
import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from strands.types.exceptions import ModelThrottledException

from strands_robots.judges.retry import (
    ModelServerUnreachableError,
    RequestLimitError,
    ServerBreaker,
    TransientRetryStrategy,
    is_credentials_error,
    is_transient,
    is_unreachable,
)

REQUEST = httpx.Request("POST", "http://127.0.0.1:8000/v1/chat/completions")


def response(status: int) -> httpx.Response:
    return httpx.Response(status, request=REQUEST, json={"error": {"message": f"status {status}"}})


def chained(outer: BaseException, cause: BaseException) -> BaseException:
    outer.__cause__ = cause
    return outer


def openai_errors():
    import openai

    return {
        "500": (openai.InternalServerError("boom", response=response(500), body=None), True),
        "429": (openai.RateLimitError("slow down", response=response(429), body=None), True),
        "connection": (chained(openai.APIConnectionError(request=REQUEST), httpx.ConnectError("refused")), True),
        "timeout": (openai.APITimeoutError(request=REQUEST), True),
        "401": (openai.AuthenticationError("bad key", response=response(401), body=None), False),
        "400": (openai.BadRequestError("bad request", response=response(400), body=None), False),
        "missing key": (openai.OpenAIError("The api_key client option must be set either by passing api_key"), False),
    }


def ollama_errors():
    import ollama

    return {
        "500": (ollama.ResponseError("model crashed", 500), True),
        "429": (ollama.ResponseError("too many", 429), True),
        "503": (ollama.ResponseError("loading", 503), True),
        "dropped": (httpx.RemoteProtocolError("Server disconnected without sending a response."), True),
        "refused (stream)": (httpx.ConnectError("[Errno 111] Connection refused"), True),
        "refused (chat)": (ConnectionError("Failed to connect to Ollama. Please check that Ollama is running"), True),
        "read timeout": (httpx.ReadTimeout("timed out"), True),
        "404 model": (ollama.ResponseError("model 'llava' not found", 404), False),
        "400": (ollama.ResponseError("invalid request", 400), False),
    }


def litellm_errors():
    import litellm

    return {
        "429": (litellm.RateLimitError("slow down", "openai", "m"), True),
        "503": (litellm.ServiceUnavailableError("down", "openai", "m"), True),
        "500": (litellm.InternalServerError("boom", "openai", "m"), True),
        "connection": (litellm.APIConnectionError("Connection error.", "openai", "m"), True),
        "timeout": (litellm.Timeout("timed out", "m", "openai"), True),
        "401": (litellm.AuthenticationError("invalid api key", "openai", "m"), False),
        "missing credentials": (
            litellm.APIConnectionError(
                "Missing credentials. Please pass an `api_key`, or set the `OPENAI_API_KEY` environment variable.",
                "openai",
                "m",
            ),
            False,
        ),
        "400": (litellm.BadRequestError("bad", "m", "openai"), False),
    }


def bedrock_errors():
    from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError, ReadTimeoutError

    def client_error(code: str, status: int) -> ClientError:
        return ClientError(
            {"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}}, "ConverseStream"
        )

    return {
        "throttled": (ModelThrottledException("ThrottlingException"), True),
        "503": (client_error("ServiceUnavailableException", 503), True),
        "500": (client_error("InternalServerException", 500), True),
        "model not ready": (client_error("ModelNotReadyException", 429), True),
        "endpoint": (EndpointConnectionError(endpoint_url="https://bedrock.example"), True),
        "read timeout": (ReadTimeoutError(endpoint_url="https://bedrock.example"), True),
        "403": (client_error("AccessDeniedException", 403), False),
        "no credentials": (NoCredentialsError(), False),
        "400": (client_error("ValidationException", 400), False),
    }


def anthropic_errors():
    import anthropic

    return {
        "529": (anthropic.InternalServerError("overloaded", response=response(529), body=None), True),
        "429": (anthropic.RateLimitError("slow down", response=response(429), body=None), True),
        "connection": (anthropic.APIConnectionError(request=REQUEST), True),
        "401": (anthropic.AuthenticationError("bad key", response=response(401), body=None), False),
    }


def gemini_errors():
    from google.genai import errors

    return {
        "503": (errors.ServerError(503, {"error": {"message": "unavailable"}}), True),
        "429": (errors.ClientError(429, {"error": {"message": "RESOURCE_EXHAUSTED"}}), True),
        "403": (errors.ClientError(403, {"error": {"message": "PERMISSION_DENIED"}}), False),
        "400": (errors.ClientError(400, {"error": {"message": "INVALID_ARGUMENT"}}), False),
    }


def llamacpp_errors():
    return {
        "503": (httpx.HTTPStatusError("busy", request=REQUEST, response=response(503)), True),
        "dropped": (httpx.RemoteProtocolError("peer closed connection"), True),
        "400": (httpx.HTTPStatusError("bad", request=REQUEST, response=response(400)), False),
    }


CASES = [
    pytest.param(provider, name, make, id=f"{provider}-{name}")
    for provider, errors in {
        "openai": openai_errors,
        "ollama": ollama_errors,
        "litellm": litellm_errors,
        "bedrock": bedrock_errors,
        "anthropic": anthropic_errors,
        "gemini": gemini_errors,
        "llamacpp": llamacpp_errors,
    }.items()
    for name in errors()
    for make in [errors]
]


@pytest.mark.parametrize(("provider", "name", "errors"), CASES)
def test_each_providers_transient_errors_are_retried_and_no_other(provider, name, errors):
    exc, transient = errors()[name]
    assert is_transient(exc) is transient, (provider, name, type(exc).__mro__)
    assert TransientRetryStrategy().is_retryable(exc) is transient


@pytest.mark.parametrize(
    "exc",
    [
        *(
            e
            for e, _ in [
                openai_errors()["401"],
                openai_errors()["missing key"],
                litellm_errors()["missing credentials"],
            ]
        ),
        *(e for e, _ in [bedrock_errors()["403"], bedrock_errors()["no credentials"], anthropic_errors()["401"]]),
    ],
)
def test_a_credentials_error_is_never_retried(exc):
    assert is_credentials_error(exc) and not is_transient(exc)


def test_unreachable_servers_are_told_apart_from_other_connection_errors():
    assert is_unreachable(httpx.ConnectError("[Errno 111] Connection refused"))
    assert is_unreachable(chained(RuntimeError("wrapped"), ConnectionRefusedError(111, "Connection refused")))
    assert is_unreachable(socket.gaierror(-2, "Name or service not known"))
    assert is_unreachable(ConnectionError("Failed to connect to Ollama. Please check that Ollama is running"))
    assert is_unreachable(openai_errors()["connection"][0])  # its cause says refused
    assert not is_unreachable(httpx.RemoteProtocolError("Server disconnected without sending a response."))
    assert not is_unreachable(httpx.ReadTimeout("timed out"))


def test_the_breaker_opens_after_three_refusals_in_a_row_and_an_answer_resets_it():
    breaker = ServerBreaker("http://127.0.0.1:9/v1")
    refused = httpx.ConnectError("[Errno 111] Connection refused")
    assert breaker.failed(refused) and breaker.failed(refused)
    breaker.answered()
    assert not breaker.failed(httpx.ReadTimeout("slow")) and breaker.in_a_row == 0
    for _ in range(3):
        breaker.failed(refused)
    assert breaker.open
    strategy = TransientRetryStrategy(breaker=breaker)
    assert not strategy.is_retryable(refused)  # no more waiting: the run stops
    error = breaker.error()
    assert isinstance(error, ModelServerUnreachableError) and "http://127.0.0.1:9/v1" in str(error)
    with pytest.raises(ModelServerUnreachableError):
        breaker.check()


def test_the_runs_own_errors_are_not_retried():
    assert not is_transient(ModelServerUnreachableError("gone"))
    assert not is_transient(RequestLimitError("loop"))
    assert not is_transient(ValueError("x")) and is_transient(TimeoutError("x"))
